#!/usr/bin/env bash
# A Stripe refund takes the key of the charge it refunds (SPEC.md,
# "Profiles", stripe-balance: "a refund takes the key of the charge it
# refunds (its charge_id's row in the files read), else that rule").  In
# Stripe's itemized balance change report a refund row names its charge in
# charge_id; its payment_metadata may be empty (a refund created in the
# Dashboard carries no order metadata).  Keyed by the first present of
# payment_metadata[order_id], charge_id, ..., the charge was 24315.1 and
# its refund ch_123: one order's payment and refund under two keys, so
# reconcile reported both missing, once each way.
. "$(dirname "$0")/../lib.sh"
init_db refund_key
H='balance_transaction_id,created_utc,available_on_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_intent_id,payment_metadata[order_id],description'
# charge ch_123 of order 24315.1; its refund re_9 without the metadata;
# the refund re_8 of a charge (ch_777) no file read lists.
{ echo "$H"
  echo 'txn_1,2026-11-20 10:00:00,2026-11-22 00:00:00,usd,35.00,1.32,33.68,charge,ch_123,ch_123,pi_1,24315.1,order 24315.1'
  echo 'txn_2,2026-11-20 12:00:00,2026-11-22 00:00:00,usd,-10.00,0.00,-10.00,refund,re_9,ch_123,pi_1,,refund from the Dashboard'
  echo 'txn_3,2026-11-20 13:00:00,2026-11-22 00:00:00,usd,-5.00,0.00,-5.00,refund,re_8,ch_777,pi_7,,refund of a charge not in the file'
} >day.csv
keys() { q "SELECT string_agg(out_trade_no || ' ' || callback_type, ', ' ORDER BY received_at) FROM payment_callback WHERE channel = 'stripe'"; }

run import -d "$DB" --profile stripe-balance --set tenant_id=7 day.csv
eq "one file: loaded, exit 0" 0 "$RC"
eq "the refund re_9 has its charge's key; re_8 (its charge unread) the rule's" \
    "24315.1 pay, 24315.1 refund:re_9, ch_777 refund:re_8" "$(keys)"

# The charge in one file, its refund in the next, one command: the same.
init_db refund_key_files
head -n 2 day.csv >a.csv
{ echo "$H"; sed -n 3p day.csv; } >b.csv
run import -d "$DB" --profile stripe-balance --set tenant_id=7 a.csv b.csv
eq "two files of one command: exit 0" 0 "$RC"
eq "the refund in the second file takes the charge's key from the first" \
    "24315.1 pay, 24315.1 refund:re_9" "$(keys)"

# validate reads the same way: its rows file shows the keys import uses.
run validate --profile stripe-balance --set tenant_id=7 --report v.json a.csv b.csv
eq "validate: exit 0" 0 "$RC"

# The order's callbacks (a charge.refunded webhook carries the order's
# metadata): reconcile matches both, nothing missing either way.
init_db refund_key_recon
cb() { printf '{"tenant_id":7,"channel":"stripe","out_trade_no":"%s","callback_type":"%s","status":2,"payload":{"amount":"%s","currency":"USD"},"received_at":"%s"}\n' "$@"; }
{ cb 24315.1 pay 35.00 2026-11-20T10:00:00Z; cb 24315.1 refund:re_9 10.00 2026-11-20T12:00:00Z
  cb ch_777 refund:re_8 5.00 2026-11-20T13:00:00Z; } >cb.ndjson
run import -d "$DB" cb.ndjson
eq "the callbacks loaded" 0 "$RC"
run reconcile -d "$DB" --profile stripe-balance --set tenant_id=7 --report r.json \
    --discrepancies d.ndjson day.csv
eq "reconcile: balanced, exit 0" 0 "$RC"
check "three matched, no line" jtrue r.json \
    "(x := r['reconciliation'])['matched'] == 3 and x['verdict'] == 'balanced'"
check "and no discrepancy line" test ! -s d.ndjson

# The profile as printed carries the rule: used as a file, it links too.
"$IDEMLOAD" profiles stripe-balance >stripe.json
check "the printed profile names refund_of" grep -q '"refund_of": "charge_id"' stripe.json
init_db refund_key_custom
run import -d "$DB" --profile stripe.json --set tenant_id=7 day.csv
eq "the printed profile as --profile: the same keys" \
    "0 24315.1 pay, 24315.1 refund:re_9, ch_777 refund:re_8" "$RC $(keys)"
# A custom profile without the rule: the refund keeps its own rule's key.
python3 -c 'import json,sys; p=json.load(open("stripe.json")); del p["refund_of"]; json.dump(p, open("plain.json","w"))'
init_db refund_key_plain
run import -d "$DB" --profile plain.json --set tenant_id=7 day.csv
eq "without refund_of: the refund keyed by its charge id" \
    "0 24315.1 pay, ch_123 refund:re_9, ch_777 refund:re_8" "$RC $(keys)"
# A refund_of that is not a string is refused, naming the member.
python3 -c 'import json,sys; p=json.load(open("stripe.json")); p["refund_of"]=3; json.dump(p, open("bad.json","w"))'
run validate --profile bad.json --set tenant_id=7 day.csv
check "refund_of: 3 refused, exit 2, naming it" test "$RC" = 2 -a -n "$(grep refund_of "$ERR")"
finish
