#!/usr/bin/env bash
# reconcile, a bill compares only the kinds it can list (SPEC.md,
# "Reconcile for finance"; issue 45, point 2): a WeChat SUCCESS bill lists
# payments, a REFUND bill (退款申请时间) refunds, an ALL bill both.  The
# table's rows of the other kinds are neither missing_in_statement nor
# pending for such a bill, nor in its table-side totals; a SUCCESS and a
# REFUND bill of one pair, read together, cover both; a day reconciled
# again with a SUCCESS bill leaves a refund's open item alone.
#
# The bills follow WeChat Pay's published layouts: the SUCCESS bill's 20
# columns as in WxJava's WxPayBillResultTest (weixin-java-pay,
# PAY_BILL_RESULT_SUCCESS_CONTENT) and pay.weixin.qq.com's trade-bill
# format page (channel-formats.md [W1], [W5]); the REFUND bill's 29 columns
# per [W1] (ALL plus 退款申请时间, 退款成功时间 after 代金券金额).  The
# callbacks are shaped as WeChat Pay v3 notifications are once decrypted
# (pay.weixin.qq.com "支付通知" / "退款结果通知": amount.total and
# amount.currency in fen; a refund's amount.refund, without a currency).
. "$(dirname "$0")/../lib.sh"
pg_use
export PGTZ=UTC

init_db recon_kinds

SUCCESS_HDR='交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,商品名称,商户数据包,手续费,费率,订单金额,费率备注'
REFUND_HDR='交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,退款申请时间,退款成功时间,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注'
# spay TIME ORDER TXN AMOUNT FEE: a SUCCESS bill's row
spay() { printf '`%s,`wx2421b1c4370ec43b,`10000100,`,`,`%s,`%s,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`JSAPI,`SUCCESS,`CFT,`CNY,`%s,`0.00,`测试商品,`,`%s,`0.60%%,`%s,`\n' \
    "$1" "$3" "$2" "$4" "$5" "$4"; }
# rref TIME ORDER TXN REFUND_ID OUT_REFUND AMOUNT: a REFUND bill's row
rref() { printf '`%s,`wx2421b1c4370ec43b,`10000100,`,`,`%s,`%s,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`JSAPI,`REFUND,`CFT,`CNY,`0.00,`0.00,`%s,`%s,`%s,`%s,`%s,`0.00,`ORIGINAL,`SUCCESS,`测试商品,`,`0.00000,`0.60%%,`0.00,`%s,`\n' \
    "$1" "$3" "$2" "$1" "$1" "$4" "$5" "$6" "$6"; }
{
    echo "$SUCCESS_HDR"
    spay "2024-05-01 10:15:02" ORD1 4200000001 99.00 0.59000
    spay "2024-05-01 12:00:00" ORD3 4200000003 5.00 0.03000
    echo '总交易单数,应结订单总金额,手续费总金额,订单总金额'
    echo '`2,`104.00,`0.62000,`104.00'
} >success.csv
{
    echo "$REFUND_HDR"
    rref "2024-05-01 18:40:11" ORD1 4200000001 5030001 RF1 30.00
    echo '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额'
    echo '`1,`0.00,`30.00,`0.00,`0.00000,`0.00,`30.00'
} >refund.csv
cat >facts.json <<'JSON'
{"channels": {"wechat": {"amount": {"path": "amount.total", "unit": "minor"},
                         "currency": {"path": "amount.currency"},
                         "kinds": {"refund": {"amount": {"path": "amount.refund", "unit": "minor"},
                                              "currency": {"value": "CNY"}}}}}}
JSON
# cb ORDER KIND AMOUNT_FEN TIME: a callback of tenant 77 (a payment's or a refund's)
cb() {
    local payload
    if [ "$2" = pay ]; then
        payload="{\"mchid\": \"10000100\", \"out_trade_no\": \"$1\", \"trade_state\": \"SUCCESS\", \"success_time\": \"$4\", \"amount\": {\"total\": $3, \"payer_total\": $3, \"currency\": \"CNY\", \"payer_currency\": \"CNY\"}}"
    else
        payload="{\"mchid\": \"10000100\", \"out_trade_no\": \"$1\", \"out_refund_no\": \"${2#refund:}\", \"refund_status\": \"SUCCESS\", \"success_time\": \"$4\", \"amount\": {\"total\": 9900, \"refund\": $3, \"payer_total\": 9900, \"payer_refund\": $3}}"
    fi
    q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
       VALUES (77, 'wechat', '$1', '$2', 2, '$payload', '$4')" >/dev/null
}
cb ORD1 pay 9900 2024-05-01T10:15:05+08:00
cb ORD3 pay 500 2024-05-01T12:00:03+08:00
cb ORD1 refund:RF1 3000 2024-05-01T18:40:15+08:00
W=(--profile wechat-trade --set tenant_id=77 --facts facts.json)
# cats FILE: "category callback_type" of each discrepancy line, sorted
cats() { python3 -c "
import json,sys
print(' '.join(sorted(o['category'] + '/' + o['callback_type'] for o in map(json.loads, open(sys.argv[1])))) or '-')" "$1"; }

run reconcile -d "$DB" --dry-run "${W[@]}" --report s.json --discrepancies s.ndjson success.csv
eq "a SUCCESS bill against payments and a refund: balanced (exit 0)" 0 "$RC"
eq "the refund is no discrepancy of the SUCCESS bill" "-" "$(cats s.ndjson)"
check "both payments matched; the table side counts the payments only (2 rows, CNY 104.00)" jtrue s.json \
    "(d := r['reconciliation']['days'][0])['matched'] == 2 and d['pending'] == 0 and d['table']['rows'] == 2 and d['table']['amounts'] == {'CNY': '104.00'}"

run reconcile -d "$DB" --dry-run "${W[@]}" --report r.json --discrepancies r.ndjson refund.csv
eq "a REFUND bill against payments and a refund: balanced (exit 0)" 0 "$RC"
eq "the payments are no discrepancy of the REFUND bill" "-" "$(cats r.ndjson)"
check "the refund matched; the table side counts the refund only" jtrue r.json \
    "(d := r['reconciliation']['days'][0])['matched'] == 1 and d['table']['rows'] == 1"

# The pending rows: within the grace a row of a kind the bill cannot list
# is not pending either.
run reconcile -d "$DB" --dry-run "${W[@]}" --grace 100000d --report sp.json success.csv
check "within the grace: the refund is not pending for the SUCCESS bill" jtrue sp.json \
    "r['reconciliation']['pending'] == 0"

# Both bills of the pair in one run cover both kinds: a refund callback that
# neither lists is missing_in_statement.
cb ORD3 refund:RF9 200 2024-05-01T20:00:00+08:00
run reconcile -d "$DB" "${W[@]}" --report b.json --discrepancies b.ndjson success.csv refund.csv
eq "SUCCESS and REFUND together, a refund neither lists: exit 5" 5 "$RC"
eq "the unlisted refund is missing_in_statement, nothing else" "missing_in_statement/refund:RF9" "$(cats b.ndjson)"
check "three matched, four table rows" jtrue b.json \
    "(d := r['reconciliation']['days'][0])['matched'] == 3 and d['table']['rows'] == 4"
open_rf9() { q "SELECT count(*) FROM idemload_recon_item WHERE out_trade_no = 'ORD3' AND callback_type = 'refund:RF9' AND state = 'open'"; }
eq "the register holds it open" 1 "$(open_rf9)"
run reconcile -d "$DB" "${W[@]}" --discrepancies s2.ndjson success.csv
eq "the day reconciled again with the SUCCESS bill alone: balanced" "0 -" "$RC $(cats s2.ndjson)"
eq "and the refund's item stays open (a SUCCESS bill says nothing of refunds)" 1 "$(open_rf9)"
run reconcile -d "$DB" "${W[@]}" --discrepancies r2.ndjson refund.csv
eq "the REFUND bill alone still finds it" "5 missing_in_statement/refund:RF9" "$RC $(cats r2.ndjson)"

# A kind renamed with --kind: the covered kinds follow the rename.
q "UPDATE payment_callback SET callback_type = 'pay_success' WHERE callback_type = 'pay'" >/dev/null
run reconcile -d "$DB" --dry-run "${W[@]}" --kind pay=pay_success --discrepancies k.ndjson success.csv
eq "--kind pay=pay_success: the SUCCESS bill covers pay_success, not refunds" "0 -" "$RC $(cats k.ndjson)"
q "UPDATE payment_callback SET callback_type = 'pay' WHERE callback_type = 'pay_success'" >/dev/null

# A SUCCESS bill as WeChat published it (make_bills.py published(): a
# merchant's logged v2 downloadbill answer, its source named there): its
# five payments matched, a refund callback of one of its orders not
# compared.
python3 "$SRC/tests/make_bills.py" . >/dev/null || fail "make_bills.py failed"
python3 - <<'PY' >pub-callbacks.csv
import json
print("tenant_id,channel,out_trade_no,callback_type,status,payload,received_at")
lines = open("pub-wechat-success.csv", encoding="utf-8-sig").read().splitlines()
for l in lines[1:-2]:
    f = [v.lstrip("`") for v in l.split(",")]
    t = f[0].replace(" ", "T") + "+08:00"
    pay = {"out_trade_no": f[6], "transaction_id": f[5], "trade_state": "SUCCESS",
           "amount": {"total": round(float(f[18]) * 100), "currency": f[11]}}
    print('30,wechat,%s,pay,2,"%s",%s' % (f[6], json.dumps(pay).replace('"', '""'), t))
ref = {"out_trade_no": f[6], "out_refund_no": "R1", "amount": {"total": 1, "refund": 1}}
print('30,wechat,%s,refund:R1,2,"%s",%s' % (f[6], json.dumps(ref).replace('"', '""'), t))
PY
run import -q -d "$DB" pub-callbacks.csv
eq "the published bill's callbacks load" 0 "$RC"
run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=30 --facts facts.json \
    --report pub.json --discrepancies pub.ndjson pub-wechat-success.csv
eq "the published SUCCESS bill: balanced, its refund callback not compared" "0 -" "$RC $(cats pub.ndjson)"
check "its five payments matched" jtrue pub.json "r['reconciliation']['matched'] == 5"

# A canonical file can list any kind: every kind of its pair is compared.
cat >canon.csv <<'EOF2'
tenant_id,channel,out_trade_no,callback_type,status,payload,received_at
77,wechat,ORD1,pay,2,"{""amount"": ""99.00"", ""currency"": ""CNY""}",2024-05-01T10:15:05+08:00
EOF2
run reconcile -d "$DB" --dry-run --timezone +08:00 --discrepancies c.ndjson canon.csv
check "a canonical file: the table's other rows are still compared (missing_in_statement)" \
    [ "$(python3 -c "import json; print(sum(1 for l in open('c.ndjson') if json.loads(l)['category'] == 'missing_in_statement'))")" = 3 ]

# A custom profile declares the same: covers without a match lists every
# kind; a bad declaration is a usage error naming the member.
"$IDEMLOAD" profiles wechat-trade >wx.json
python3 - <<'PY'
import json
p = json.load(open('wx.json'))
p['name'] = 'wx-everything'
del p['covers']
json.dump(p, open('wx-all.json', 'w'), ensure_ascii=False)
p['covers'] = [{'header_has': ['退款申请时间'], 'kinds': ['refund']}]
json.dump(p, open('wx-refund-only.json', 'w'), ensure_ascii=False)
PY
run reconcile -d "$DB" --dry-run --profile ./wx-all.json --set tenant_id=77 --facts facts.json \
    --discrepancies ca.ndjson success.csv
eq "a custom profile without covers: every kind compared (the refunds missing)" \
    "5 missing_in_statement/refund:RF1 missing_in_statement/refund:RF9" "$RC $(cats ca.ndjson)"
run reconcile -d "$DB" --dry-run --profile ./wx-refund-only.json --set tenant_id=77 --facts facts.json \
    --discrepancies cr.ndjson refund.csv
eq "a custom profile's covers rule: the REFUND bill compares refunds only" \
    "5 missing_in_statement/refund:RF9" "$RC $(cats cr.ndjson)"
finish
