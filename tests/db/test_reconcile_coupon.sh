#!/usr/bin/env bash
# reconcile, a WeChat bill paid partly with 免充值 coupons against the
# callbacks WeChat Pay v3 sends (SPEC.md, "Reconcile for finance"; issue
# 45, point 3): the money compared is the money the callbacks carry, the
# bill's 订单金额 (amount.total) and 申请退款金额 (amount.refund), not the
# settled 应结订单金额 / 退款金额, which differ by the coupon; the bill
# reconciles balanced.  The settlement facts stay in the profile.  The
# bill and its callbacks: tests/db/wechat_coupon_bill.py (its sources are
# named there: WeChat's 免充值 acceptance cases and published layouts).
. "$(dirname "$0")/../lib.sh"
pg_use
export PGTZ=UTC

init_db recon_coupon
python3 "$SRC/tests/db/wechat_coupon_bill.py" coupon.csv callbacks.csv 77 60 || fail "the bill generator failed"
cat >facts.json <<'JSON'
{"channels": {"wechat": {"amount": {"path": "amount.total", "unit": "minor"},
                         "currency": {"path": "amount.currency"},
                         "time": {"path": "success_time"},
                         "kinds": {"refund": {"amount": {"path": "amount.refund", "unit": "minor"},
                                              "currency": {"value": "CNY"}}}}}}
JSON
run import -q -d "$DB" callbacks.csv
eq "the callbacks load" 0 "$RC"
coupons=$(grep -c '`0\.01,`0,`0,' coupon.csv)
check "the bill holds payments with a coupon (应结订单金额 below 订单金额)" [ "$coupons" -ge 10 ]

run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=77 --facts facts.json \
    --report r.json --discrepancies d.ndjson coupon.csv
eq "the coupon bill against its callbacks: balanced (exit 0)" 0 "$RC"
eq "no discrepancy line" 0 "$(wc -l <d.ndjson)"
check "every row matched (60 payments, 15 refunds), none unverified" jtrue r.json \
    "(x := r['reconciliation'])['matched'] == 75 and x['unverified'] == 0 and x['verdict'] == 'balanced'"
check "the statement's payments add up to the orders' totals (订单总金额 of the bill)" jtrue r.json \
    "r['reconciliation']['days'][0]['statement']['kinds']['pay']['amounts'] == {'CNY': '330.90'}"

# A callback whose order total differs from the bill's 订单金额 is still
# found, with the order total on both sides.
q "UPDATE payment_callback SET payload = jsonb_set(payload, '{amount,total}', '550')
    WHERE out_trade_no = 'sandbox00003' AND callback_type = 'pay'" >/dev/null
run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=77 --facts facts.json \
    --discrepancies d2.ndjson coupon.csv
eq "a callback of 5.50 for an order of 5.51: exit 5" 5 "$RC"
eq "one amount_mismatch: 5.51 - 5.50" "amount_mismatch sandbox00003 5.51 5.50 0.01" "$(python3 -c "
import json
for l in open('d2.ndjson'):
    o = json.loads(l); print(o['category'], o['out_trade_no'], o['statement']['amount'], o['table']['amount'], o['difference'])")"

# The settlement facts are declared beside them, for settle.
"$IDEMLOAD" profiles wechat-trade >wx.json
check "profiles wechat-trade: pay compares 订单金额 (总金额 in the older layout), settles 应结订单金额 and 手续费" jtrue wx.json \
    "(m := {k['kind']: k for k in r['money']})['pay']['amount'] == {'column': ['订单金额', '总金额']} and m['pay']['settlement'] == {'amount': {'column': ['应结订单金额', '总金额']}, 'fee': {'column': '手续费'}} and 'fee' not in m['pay']"
check "profiles wechat-trade: refund compares 申请退款金额 (退款金额 in the older layout), settles 退款金额" jtrue wx.json \
    "(m := {k['kind']: k for k in r['money']})['refund']['amount'] == {'column': ['申请退款金额', '退款金额']} and m['refund']['settlement']['amount'] == {'column': '退款金额'}"
finish
