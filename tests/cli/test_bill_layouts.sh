#!/usr/bin/env bash
# Channel bills as the channels really publish them (issue 29; SPEC.md
# "Channel exports: profiles"; channel-formats.md "Layouts seen in real
# published files"), without a database: every real layout loads or is
# refused saying why; a state the profile's status map does not know
# rejects its row; PayPal's direction; Stripe's `created` and Dashboard
# layouts; --delimiter over the profile; reject reasons quoting the cell;
# PayPal footer counts; --tenant-map; --kind; money facts in `profiles` and
# custom profiles; the bill's money totals.  The rows the bills leave in a
# table are checked in tests/db/test_bill_layouts.sh.
. "$(dirname "$0")/../lib.sh"

python3 "$SRC/tests/make_bills.py" . || { echo "make_bills.py failed"; exit 1; }

figs() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_rejected","rows_skipped"))'; }
reasons() { python3 -c 'import json,sys; [print(json.loads(l)["reason"]) for l in open(sys.argv[1])]' rj.ndjson 2>/dev/null; }
# v PROFILE FILE [ARGS]: validate, report v.json, rejects rj.ndjson
v() {
    local p=$1 f=$2; shift 2
    rm -f rj.ndjson v.json
    run validate --profile "$p" --rejects rj.ndjson --report v.json "$@" "$f"
}

# --- 1. status from the bill's own state
v wechat-trade real-wechat-states.csv --set tenant_id=7
eq "wechat, BOM, refunds SUCCESS/PROCESSING/CHANGE/REFUNDCLOSE: all 5 rows valid" "0 5 0 0" "$RC $(figs v.json)"
v wechat-trade real-wechat-unknown-state.csv --set tenant_id=7
eq "wechat: a 退款状态 the map does not know rejects its row" "1 3 1 0" "$RC $(figs v.json)"
eq "wechat: the reject names the state" 'status: 退款状态 "WHATEVER" is not a value profile wechat-trade maps' "$(reasons)"

# --- the older layouts, the sandbox's table
v wechat-trade real-wechat-old-all.csv --set tenant_id=7
eq "wechat old 24 columns with BOM, 子商户号, zeros as \`0, old summary: 2 rows" "0 2 0 0" "$RC $(figs v.json)"
v wechat-trade real-wechat-old-refund.csv --set tenant_id=7
eq "wechat old 26-column REFUND, negative fee total: 1 row" "0 1 0 0" "$RC $(figs v.json)"
v wechat-trade real-wechat-sandbox.csv --set tenant_id=7
eq "wechat sandbox TAB table: refused (exit 3)" 3 $RC
check "wechat sandbox TAB table: the message says it is TAB-separated, not a bill" \
    grep -q "separated by TABs, not ',': a table saved by a spreadsheet or a sandbox's export" "$ERR"

# --- 2. kinds by direction: PayPal's outgoing T0000 (DR) is skipped
v paypal-stl real-paypal-sh.csv --set tenant_id=7
eq "paypal from SH, BOM, mixed CH quoting, two sections: 4 read, the DR T0000 skipped" "0 4 0 1" "$RC $(figs v.json)"
v paypal-stl real-paypal-57.csv --set tenant_id=7
eq "paypal older 57-column CH (Transaction  Debit or Credit): 3 read, the DR T0000 skipped" "0 3 0 1" "$RC $(figs v.json)"

# --- 3. Stripe layouts: created, [external_identifier], the Dashboard's
v stripe-balance real-stripe-created.csv --set tenant_id=7
eq "stripe with created (no created_utc), amounts 25/-0.5/3.35: 4 read, the payout skipped" "0 4 0 1" "$RC $(figs v.json)"
v stripe-balance real-stripe-dashboard.csv --set tenant_id=7
eq "stripe Dashboard default (no charge_id, no source_id): 3 read, the payout skipped" "0 3 0 1" "$RC $(figs v.json)"

# --- 4. --delimiter overrides the profile's
sed 's/,/;/g' wechat-all.csv >wechat-semicolon.csv
v wechat-trade wechat-semicolon.csv --set tenant_id=7 --delimiter ';'
eq "--delimiter ';' over wechat-trade's ',': 4 rows" "0 4 0 0" "$RC $(figs v.json)"

# --- 5. a reject reason quotes the cell as written, not with the zone added
sed 's/`2024-05-01 11:00:00/`2014-11-1016：33：45/' wechat-all.csv >wechat-badtime.csv
v wechat-trade wechat-badtime.csv --set tenant_id=7
eq "a bad 交易时间: rejected" "1 4 1 0" "$RC $(figs v.json)"
eq "the reason quotes the cell as the file holds it" \
    'received_at: expected a date as YYYY-MM-DD: "2014-11-1016：33：45"' "$(reasons)"
sed 's|"2024/08/20 05:00:00 -0700"|"2024/08/20 25:00:00"|g' paypal-stl.csv >paypal-badtime.csv
v paypal-stl paypal-badtime.csv --set tenant_id=7
check "paypal: a bad time is quoted with its slashes, as written" \
    grep -q '2024/08/20 25:00:00\\"' rj.ndjson

# --- 6. PayPal footer counts
v paypal-stl real-paypal-badsf.csv --set tenant_id=7
eq "paypal SC stating 2 for a section of 3: exit 3, nothing validated" "3 0 0 0" "$RC $(figs v.json)"
check "paypal bad SC: the message names both counts" \
    grep -q "the SC footer states 2 records but its section holds 3" "$ERR"
# SPEC.md's layout of the same footers: SF and RF stating the section's
# and the report's counts, with no SC or RC (the sample's, less them).
grep -v '^"[SR]C"' "$SRC/samples/bill-paypal-stl-2024-08-20.csv" >spec-stl.csv
v paypal-stl spec-stl.csv --set tenant_id=7
eq "paypal SF and RF holding counts (SPEC's layout), no SC or RC: exit 0" 0 $RC
sed 's/^"SF","4"/"SF","5"/' spec-stl.csv >spec-stl-badsf.csv
v paypal-stl spec-stl-badsf.csv --set tenant_id=7
eq "paypal SF stating 5 for a section of 4 (SPEC's layout): exit 3, nothing validated" "3 0 0 0" "$RC $(figs v.json)"
check "paypal bad SF count: the message names both counts" \
    grep -q "the SF footer states 5 records but its section holds 4" "$ERR"
v paypal-stl real-paypal-badff.csv --set tenant_id=7
eq "paypal FF stating 5 for 4: exit 3" 3 $RC
check "paypal bad FF: the message names both counts" grep -q "the FF footer states 5 records but the file holds 4" "$ERR"
v paypal-stl real-paypal-split-02.csv --set tenant_id=7
eq "paypal second file of a split report (FH 02): checked against its own FF only" "0 1 0 0" "$RC $(figs v.json)"
grep -v '^"SF"\|^"SC"\|^"RF"\|^"RC"\|^"FF"' real-paypal-sh.csv >paypal-nofooter.csv
v paypal-stl paypal-nofooter.csv --set tenant_id=7
eq "paypal without any footer: exit 3" 3 $RC
check "paypal without footers: says so" grep -q "ends without a footer stating its record count" "$ERR"
# Cut after an inner footer: the file opened by RH and FH (the published
# STL of make_bills.py, pub-paypal-stl.csv) ends after its SC, or after its
# RC, so its FF never came; a report opened by RH alone ends after SC (no
# RC); a file from SH ends inside its second section.  Each was accepted,
# the rest of the report lost.
sed '/^"RF"/,$d' pub-paypal-stl.csv >paypal-cut-sc.csv
sed '/^"FF"/,$d' pub-paypal-stl.csv >paypal-cut-rc.csv
sed '/^"FH"/d; /^"RF"/,$d' pub-paypal-stl.csv >paypal-rh-cut-sc.csv
sed '/^"SF"/,$d' real-paypal-sh.csv >paypal-sh-cut.csv
awk '/^"SF"/ { n++ } n < 2' real-paypal-sh.csv >paypal-sh-cut2.csv
for c in "cut-sc FH FF" "cut-rc FH FF" "rh-cut-sc RH RC" "sh-cut2 SH SC"; do
    set -- $c
    v paypal-stl "paypal-$1.csv" --set tenant_id=7
    eq "paypal $1: opened by $2, its $3 never came: exit 3, nothing validated" "3 0 0 0" "$RC $(figs v.json)"
    check "paypal $1: says which footer is missing" \
        grep -q "ends after a $2 row without its $3 footer: truncated?" "$ERR"
done
v paypal-stl paypal-sh-cut.csv --set tenant_id=7
eq "paypal from SH cut before its first footer: exit 3" 3 $RC
# The whole file still validates (a split report's later file, which closes
# only its FF, is above).
v paypal-stl pub-paypal-stl.csv --set tenant_id=7
eq "the whole published STL: exit 0" 0 $RC

# --- 7. --tenant-map and the merchant column
v wechat-trade real-wechat-sp.csv --tenant-map tenants.csv
eq "service-provider bill with --tenant-map: 4 read, 1 rejected" "1 4 1 0" "$RC $(figs v.json)"
eq "the merchant the map lacks is named" \
    "tenant_id: merchant 1900000299 (特约商户号) is not in the tenant map tenants.csv" "$(reasons)"
v wechat-trade real-wechat-sp.csv --tenant-map tenants.csv --set tenant_id=7
eq "--tenant-map with --set tenant_id: exit 2" 2 $RC
v stripe-balance real-stripe-created.csv --tenant-map tenants.csv
eq "--tenant-map with a profile without a merchant column: exit 2" 2 $RC
check "--tenant-map without a merchant column: says so" grep -q "names no merchant column" "$ERR"
printf 'merchant,tenant\n1,2\n' >badmap.csv
v wechat-trade real-wechat-sp.csv --tenant-map badmap.csv
eq "--tenant-map with a wrong header: exit 2" 2 $RC
check "--tenant-map wrong header: names the header wanted" grep -q "header must be merchant,tenant_id" "$ERR"
printf 'merchant,tenant_id\n1900000201,eleven\n' >badmap.csv
v wechat-trade real-wechat-sp.csv --tenant-map badmap.csv
eq "--tenant-map with a tenant that is not an integer: exit 2" 2 $RC
check "--tenant-map bad tenant: names the line" grep -q "badmap.csv: line 2" "$ERR"
run validate --tenant-map tenants.csv --set tenant_id=7 wechat-all.csv
eq "--tenant-map without --profile: exit 2" 2 $RC

# --- 8. --kind
v wechat-trade wechat-all.csv --set tenant_id=7 --kind pay=pay_success --kind refund=refund_done
eq "--kind renames: the bill still validates" "0 4 0 0" "$RC $(figs v.json)"
for bad in "pay" "=x" "pay=" "refund:RF1=x"; do
    v wechat-trade wechat-all.csv --set tenant_id=7 --kind "$bad"
    eq "--kind '$bad': exit 2" 2 $RC
done
v wechat-trade wechat-all.csv --set tenant_id=7 --kind pay=a --kind pay=b
eq "--kind pay twice: exit 2" 2 $RC
run validate --kind pay=pay_success --set tenant_id=7 wechat-all.csv
eq "--kind without --profile: exit 2" 2 $RC

# --- 9. money facts: printed, loaded back, declared in a custom profile
for p in wechat-trade alipay-trade stripe-balance paypal-stl; do
    run profiles $p
    cp "$OUT" "$p.json"
    eq "profiles $p: exit 0" 0 $RC
    # (a fee compared, or a settlement fact: WeChat's 手续费 is settled
    # money, not what a callback carries)
    check "profiles $p: money facts for pay and refund (amount, currency, fee)" python3 -c '
import json, sys
m = {k["kind"]: k for k in json.load(open(sys.argv[1]))["money"]}
sys.exit(0 if all(m[k]["amount"] and m[k]["currency"]
                  and (m[k].get("fee") or m[k].get("settlement", {}).get("fee"))
                  for k in ("pay", "refund")) else 1)' "$p.json"
    run profiles "./$p.json"
    eq "profiles ./$p.json: a printed profile loads back and prints the same" "$(cat "$p.json")" "$(cat "$OUT")"
done
# The amount a callback carries (订单金额, 申请退款金额; 总金额 and 退款金额 in
# the older layout), then the settlement facts (应结订单金额, 退款金额, 手续费).
eq "wechat-trade money: the columns of the bill (a payment's amount 总金额 in the older layout)" \
    "pay 订单金额/总金额 货币种类 应结订单金额/总金额 手续费 | refund 申请退款金额/退款金额 货币种类 退款金额 手续费" \
    "$(json wechat-trade.json '" | ".join(" ".join([k["kind"]] + ["/".join(c) if isinstance(c, list) else c for c in (k["amount"]["column"], k["currency"]["column"], k["settlement"]["amount"]["column"], k["settlement"]["fee"]["column"])]) for k in r["money"])')"
eq "alipay-trade money: CNY stated by the profile, refunds negative (magnitude)" \
    "CNY True 订单金额（元） 服务费（元）" \
    "$(json alipay-trade.json '" ".join([r["money"][1]["currency"]["value"], str(r["money"][1]["amount"]["magnitude"]), r["money"][1]["amount"]["column"], r["money"][1]["fee"]["column"]])')"
eq "stripe-balance money: gross, fee, currency; refunds negative" "gross fee currency True" \
    "$(json stripe-balance.json '" ".join([r["money"][1]["amount"]["column"], r["money"][1]["fee"]["column"], r["money"][1]["currency"]["column"], str(r["money"][1]["amount"]["magnitude"])])')"
eq "paypal-stl money: minor units, its currency" "Gross Transaction Amount minor Gross Transaction Currency" \
    "$(json paypal-stl.json '" ".join([r["money"][0]["amount"]["column"], r["money"][0]["amount"]["unit"], r["money"][0]["currency"]["column"]])')"
bad_money() {  # bad_money NAME PYTHON-EDIT MEMBER
    python3 -c "import json,sys; r=json.load(open('wechat-trade.json')); $2; json.dump(r, open('$1.json','w'), ensure_ascii=False)"
    v "./$1.json" wechat-all.csv --set tenant_id=7
    eq "custom profile $1: exit 2" 2 $RC
    check "custom profile $1: names $3" grep -qF "member \"$3\"" "$ERR"
}
bad_money unit 'r["money"][0]["amount"]["unit"]="cents"' 'money[0].amount.unit'
bad_money both 'r["money"][0]["amount"]["value"]="1"' 'money[0].amount'
bad_money magnitude 'r["money"][1]["amount"]["magnitude"]="yes"' 'money[1].amount.magnitude'
bad_money member 'r["money"][0]["amount"]["col"]="x"' 'money[0].amount.col'
bad_money twice 'r["money"][1]["kind"]="pay"' 'money[1].kind'
bad_money record 'r["money"][0]["record"]={"value": "x"}' 'money[0]'
# The row's own transaction id per kind (two rows of one key with two ids
# are two records: reconcile's duplicate_in_statement).
eq "each built-in profile names its rows' transaction ids" \
    "wechat-trade pay 微信订单号 refund 微信退款单号 alipay-trade pay 支付宝交易号 refund 支付宝交易号 stripe-balance pay balance_transaction_id refund balance_transaction_id paypal-stl pay Transaction ID refund Transaction ID" \
    "$(for p in wechat-trade alipay-trade stripe-balance paypal-stl; do
         json $p.json '" ".join(["'$p'"] + [x for k in r["money"] for x in (k["kind"], k["record"]["column"])])'
       done | tr '\n' ' ' | sed 's/ $//')"
bad_money total 'r["trailer"]["totals"][0].pop("sum")' 'trailer.totals[0].sum'

# --- the bill's money totals, exact
for col in 应结订单总金额 退款总金额 手续费总金额; do
    v wechat-trade "real-wechat-badtotal-$col.csv" --set tenant_id=7
    eq "wechat $col off by 0.01: exit 3, nothing validated" "3 0 0 0" "$RC $(figs v.json)"
    [ $col = 应结订单总金额 ] && check "wechat 应结订单总金额: names both figures" \
        grep -q "states 应结订单总金额 100.01 but its rows' 应结订单金额 add up to 100.00" "$ERR"
done
v wechat-trade real-wechat-badtotal-手续费总金额.csv --set tenant_id=7
check "wechat 手续费总金额 (5 decimals, refunds' negative fees): names both figures" \
    grep -q "states 手续费总金额 0.00980 but its rows' 手续费 add up to -0.00020" "$ERR"
v alipay-trade real-alipay.csv --set tenant_id=7
eq "alipay as found (合计 lines without a colon): 3 rows" "0 3 0 0" "$RC $(figs v.json)"
v alipay-trade real-alipay-badtotal.csv --set tenant_id=7
eq "alipay #交易合计 amount off by 0.01: exit 3" "3 0 0 0" "$RC $(figs v.json)"
check "alipay bad total: names both figures" \
    grep -q "states 商家实收共 12.36 but its pay rows' 商家实收（元） add up to 12.35" "$ERR"
# the older 合计 wording: 交易金额共 / 交易退款金额共, the amounts checked too
v alipay-trade real-alipay-older.csv --set tenant_id=7
eq "alipay, older 合计 wording (交易金额共): 3 rows" "0 3 0 0" "$RC $(figs v.json)"
v alipay-trade real-alipay-older-badpay.csv --set tenant_id=7
eq "alipay, older wording, 交易金额共 off by 0.01: exit 3" "3 0 0 0" "$RC $(figs v.json)"
check "... naming both figures" \
    grep -q "states 交易金额共 12.36 but its pay rows' 订单金额（元） add up to 12.35" "$ERR"
v alipay-trade real-alipay-older-badrefund.csv --set tenant_id=7
eq "alipay, older wording, 交易退款金额共 off by 0.01: exit 3" "3 0 0 0" "$RC $(figs v.json)"
check "... naming both figures" \
    grep -q "states 交易退款金额共 -0.02 but its refund rows' 订单金额（元） add up to -0.01" "$ERR"

# --- a time with two spaces between date and time, as WeChat's sandbox
# bill writes it (the first two REFUND rows of the sandbox bill printed in
# a public WeChat Pay acceptance walkthrough, code search id 11873948126;
# its summary line cut to these two rows): PostgreSQL reads
# "2016-05-04  02:18:18", and so does idemload (each row was rejected:
# "expected a time as HH:MM or HH:MM:SS").
cat >wechat-sandbox-2sp.csv <<'CSV'
交易时间,公众账号ID,商户号,子商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注
`2016-05-04  02:18:18,`wxf7c30a8258df4208,`10014843,`0,`harryma007,`4.00123E+27,`autotest_20160501030456_45023,`oT2kauIMXH398DZBeJ4m22CuSDQ0,`NATIVE,`REFUND,`PAB_DEBIT,`CNY,`0,`0,`2.00123E+27,`REF4001232001201605015390231647,`0.01,`0,`ORIGINAL,`PROCESSING,`body中文测试,`attach中文测试,`0,`0.60%,`0,`0.01,`
`2016-05-04  02:18:18,`wxf7c30a8258df4208,`10014843,`0,`harryma007,`4.00123E+27,`autotest_20160501060418_79156,`oT2kauIMXH398DZBeJ4m22CuSDQ0,`NATIVE,`REFUND,`PAB_DEBIT,`CNY,`0,`0,`2.00123E+27,`REF4001232001201605015391766944,`0.01,`0,`ORIGINAL,`PROCESSING,`body中文测试,`attach中文测试,`0,`0.60%,`0,`0.01,`
总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额
2,`0.00,`0.02,`0.00,`0,`0.00,`0.02
CSV
v wechat-trade wechat-sandbox-2sp.csv --set tenant_id=7
eq "wechat sandbox rows timed \"2016-05-04  02:18:18\": both valid" "0 2 0 0" "$RC $(figs v.json)"

finish
