#!/usr/bin/env bash
# reconcile, the rows `--repair missing` inserted, the next night (SPEC.md,
# "Reconcile for finance"; issue 45, point 6): their payload is the bill's
# row, kept exactly as the bill wrote it, so the --facts paths of the
# callbacks (amount.total, amount.refund) find nothing in it; such a row is
# read as the statement's rows are, by the profile's columns, and is
# matched when its day is reconciled again, not unverified for ever; a
# repaired row that no longer agrees with the bill is still a discrepancy.
# The bill and the callbacks: tests/db/wechat_coupon_bill.py (WeChat's
# published layout and v3 callbacks; sources named there).
. "$(dirname "$0")/../lib.sh"
pg_use
export PGTZ=UTC

init_db recon_repaired
python3 "$SRC/tests/db/wechat_coupon_bill.py" bill.csv callbacks.csv 77 8 --no-coupons ||
    fail "the bill generator failed"
cat >facts.json <<'JSON'
{"channels": {"wechat": {"amount": {"path": "amount.total", "unit": "minor"},
                         "currency": {"path": "amount.currency"},
                         "kinds": {"refund": {"amount": {"path": "amount.refund", "unit": "minor"},
                                              "currency": {"value": "CNY"}}}}}}
JSON
# The callbacks of one payment and one refund never came.
grep -v -e ',sandbox00002,pay,' -e ',refund:refund00004,' callbacks.csv >came.csv
run import -q -d "$DB" came.csv
eq "the callbacks that came load" 0 "$RC"
W=(--profile wechat-trade --set tenant_id=77 --facts facts.json)

run reconcile -d "$DB" "${W[@]}" --repair missing --report n1.json --discrepancies n1.ndjson bill.csv
eq "night 1: two callbacks missing, repaired: exit 5" 5 "$RC"
eq "night 1: both missing_in_table" "missing_in_table pay missing_in_table refund:refund00004" \
    "$(python3 -c "
import json
print(' '.join(o['category'] + ' ' + o['callback_type'] for o in map(json.loads, open('n1.ndjson'))))")"
eq "the repair inserted both" 2 "$(q "SELECT count(*) FROM payment_callback
    WHERE out_trade_no IN ('sandbox00002', 'sandbox00004') AND (callback_type = 'pay' AND out_trade_no = 'sandbox00002'
          OR callback_type = 'refund:refund00004')")"
eq "a repaired row's payload is the bill's row as written (订单金额 text, no amount.total)" "5.52|" \
    "$(q "SELECT payload ->> '订单金额', payload #>> '{amount,total}' FROM payment_callback
          WHERE out_trade_no = 'sandbox00002' AND callback_type = 'pay'")"

run reconcile -d "$DB" "${W[@]}" --report n2.json --discrepancies n2.ndjson bill.csv
eq "night 2, the day reconciled again: balanced (exit 0)" 0 "$RC"
check "the repaired rows are matched, not unverified (8 payments, 2 refunds)" jtrue n2.json \
    "(x := r['reconciliation'])['matched'] == 10 and x['unverified'] == 0"
check "the table side's money counts them (payments CNY 44.12)" jtrue n2.json \
    "r['reconciliation']['days'][0]['table']['kinds']['pay']['amounts'] == {'CNY': '44.12'}"

# Read, not assumed: a repaired row edited away from the bill differs.
q "UPDATE payment_callback SET payload = jsonb_set(payload, '{订单金额}', '\"5.62\"')
    WHERE out_trade_no = 'sandbox00002' AND callback_type = 'pay'" >/dev/null
run reconcile -d "$DB" "${W[@]}" --dry-run --discrepancies n3.ndjson bill.csv
eq "a repaired row that no longer agrees: amount_mismatch 5.52 - 5.62" "5 amount_mismatch 5.52 5.62 -0.10" \
    "$RC $(python3 -c "
import json
for l in open('n3.ndjson'):
    o = json.loads(l); print(o['category'], o['statement']['amount'], o['table']['amount'], o['difference'])")"
finish
