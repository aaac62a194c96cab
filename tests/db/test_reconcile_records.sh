#!/usr/bin/env bash
# Reconcile on real bills, what a statement's records are (issue 45): two
# rows of one key are one record listed twice only when they are the same
# record (the same transaction id, else the same payload); two charges of
# one order with the same amount are duplicate_in_statement, never
# collapsed, and both count in the statement's totals (Stripe's
# balance_transaction_id, PayPal's Transaction ID under one Invoice ID);
# a PayPal STL's days are cut in the zone of its own SH window when
# --timezone is not given (every STL time carries its offset), not in UTC.
. "$(dirname "$0")/../lib.sh"
init_db recon_records
python3 "$SRC/tests/make_bills.py" . || { echo "make_bills.py failed"; exit 1; }

# recon ARGS...: reconcile with a report r.json and discrepancies d.ndjson.
recon() {
    rm -f r.json d.ndjson
    run reconcile -d "$DB" --report r.json --discrepancies d.ndjson "$@"
}
days() { json r.json "' '.join([r['reconciliation']['zone']] + ['%s:%s' % (d['day'], d['statement']['rows']) for d in r['reconciliation']['days']])"; }

# --- two charges of one order (Stripe)
# make_bills.py's Stripe itemized balance change report (the columns of
# Stripe's balance_change_from_activity.itemized report, docs.stripe.com/
# reports/report-types/balance): order SORD1 charged 10.00 (txn_1), refunded
# 4.00 and 3.00, charge ch_2 25.50; plus a second charge of SORD1, the same
# 10.00, its own charge ch_3 and balance_transaction_id txn_7.  The
# callbacks received: SORD1 paid once, its two refunds, ch_2.
cp stripe-balance.csv stripe-twice.csv
echo 'txn_7,2024-05-01 14:00:00,2024-05-03 00:00:00,usd,10.00,0.59,9.41,charge,ch_3,ch_3,pi_3,SORD1,second charge' \
    >>stripe-twice.csv
cb() { printf '{"tenant_id":%s,"channel":"%s","out_trade_no":"%s","callback_type":"%s","status":2,"payload":{"amount":"%s","currency":"USD"},"received_at":"%s"}\n' "$@"; }
{ cb 40 stripe SORD1 pay 10.00 2024-05-01T10:00:00Z; cb 40 stripe SORD1 refund:re_1 4.00 2024-05-01T11:00:00Z
  cb 40 stripe SORD1 refund:re_2 3.00 2024-05-01T12:00:00Z; cb 40 stripe ch_2 pay 25.50 2024-05-02T02:00:00Z
  cb 31 paypal INV-77 pay 19.99 2024-08-20T08:02:05Z; } >callbacks.ndjson
run import -d "$DB" --rejects cb-rejects.ndjson callbacks.ndjson
eq "the callbacks loaded" 0 $RC
cats() { json r.json "' '.join('%s=%s' % kv for kv in sorted(r['reconciliation']['categories'].items()) if kv[1])"; }
lines() { python3 -c 'import json,sys; [print(o["category"], o["out_trade_no"], o["callback_type"], o["listed_rows"] if "listed_rows" in o else "") for o in map(json.loads, open(sys.argv[1]))]' d.ndjson; }
kind_total() { json r.json "r['reconciliation']['totals']['statement']['kinds']['$1']['rows'], r['reconciliation']['totals']['statement']['kinds']['$1']['amounts']"; }

recon --profile stripe-balance --set tenant_id=40 --dry-run stripe-balance.csv
eq "stripe, one charge per order: balanced (exit 0)" 0 $RC
recon --profile stripe-balance --set tenant_id=40 --dry-run stripe-twice.csv
eq "stripe, a second charge of SORD1: exit 5" 5 $RC
eq "stripe, a second charge: duplicate_in_statement, nothing else" "duplicate_in_statement=1" "$(cats)"
eq "its line lists both charges" "duplicate_in_statement SORD1 pay 2" "$(lines)"
eq "the statement's charges: 3 rows, USD 45.50, the file's (10.00 + 25.50 + 10.00)" \
    "3 {'USD': '45.50'}" "$(kind_total pay)"
# (a side's amounts are net: both charges of SORD1, less its two refunds)
eq "the day's statement rows: every row of the 1st, net 10.00 + 10.00 - 4.00 - 3.00" \
    "4 {'USD': '13.00'}" \
    "$(json r.json "' '.join(str(x) for x in [[d for d in r['reconciliation']['days'] if d['day'] == '2024-05-01'][0]['statement'][k] for k in ('rows', 'amounts')])")"
# The same charge listed twice (the report downloaded twice): one record,
# deduplicated, not a discrepancy.
tail -n 1 stripe-balance.csv >>stripe-again.csv
cat stripe-balance.csv stripe-again.csv >stripe-repeat.csv
rm stripe-again.csv
recon --profile stripe-balance --set tenant_id=40 --dry-run stripe-repeat.csv
eq "stripe, one charge listed twice (its txn_6 row again): balanced" 0 $RC

# --- two payments under one Invoice ID (PayPal)
# The published STL of make_bills.py (pub-paypal-stl.csv): INV-77 paid
# 1999 cents; a second T0006 payment of the same invoice and amount, its
# own Transaction ID, the SC/RC/FF counts raised to 3.
python3 - <<'PY'
t = open("pub-paypal-stl.csv", encoding="utf-8-sig", newline="").read()
second = ('"SB","3AB23456CD789012G","INV-77","","","T0006",2024/08/20 03:04:05 -0700,'
          '2024/08/20 03:04:07 -0700,"CR",1999,"USD","DR",88,"USD","","","","","",,,')
t = t.replace('\r\n"SF"', "\r\n" + second + '\r\n"SF"')
for ft in ("SC", "RC", "FF"):
    t = t.replace('"%s",2' % ft, '"%s",3' % ft)
open("paypal-twice.csv", "w", encoding="utf-8-sig", newline="").write(t)
PY
recon --profile paypal-stl --set tenant_id=31 --dry-run --timezone Z pub-paypal-stl.csv
eq "paypal, one payment per invoice: balanced (exit 0)" 0 $RC
recon --profile paypal-stl --set tenant_id=31 --dry-run --timezone Z paypal-twice.csv
eq "paypal, a second payment of INV-77: exit 5" 5 $RC
eq "paypal, a second payment: duplicate_in_statement, nothing else" "duplicate_in_statement=1" "$(cats)"
eq "paypal, the statement's payments: 2 rows, USD 39.98" "2 {'USD': '39.98'}" "$(kind_total pay)"

# --- a PayPal day in the zone of the report's SH window
# The published STL of make_bills.py (pub-paypal-stl.csv: SH window
# 2024/08/20 00:00:00 -0700 to 23:59:59 -0700), its payment completed at
# 20:02:05 -0700 instead of 01:02:05: 03:02:05 the next day in UTC, inside
# the window PayPal reports it in.
sed 's|2024/08/20 01:02:05 -0700|2024/08/20 20:02:05 -0700|' pub-paypal-stl.csv >paypal-late.csv
recon --profile paypal-stl --set tenant_id=30 --dry-run paypal-late.csv
eq "paypal without --timezone: exit 5 (the table lacks the payment)" 5 $RC
eq "paypal without --timezone: the SH window's -07:00 cuts the day, the payment on the 20th" \
    "-07:00 2024-08-20:1" "$(days)"
check "the period is the window's day" jtrue r.json \
    "r['reconciliation']['period'] == {'from': '2024-08-20', 'to': '2024-08-20'}"
recon --profile paypal-stl --set tenant_id=30 --dry-run --timezone Z paypal-late.csv
eq "paypal with --timezone Z: UTC's day, the 21st" "Z 2024-08-21:1" "$(days)"

finish
