#!/usr/bin/env bash
# Channel bills read by their profiles, without a database (issue 16;
# SPEC.md "Channel exports: profiles"): every built-in profile and layout
# variant through `validate`, its figures (rows_skipped included) and its
# rejects; the file's own row count; encodings; zip; a header of the wrong
# channel; time zones; `idemload profiles` and custom profile files.
. "$(dirname "$0")/../lib.sh"

python3 "$SRC/tests/make_bills.py" . || { echo "make_bills.py failed"; exit 1; }

# figs REPORT: "read rejected skipped deduplicated" of the totals
figs() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_rejected","rows_skipped","rows_deduplicated"))'; }
# v PROFILE FILE [ARGS]: validate with tenant 7, report v.json, rejects rj.ndjson
v() {
    local p=$1 f=$2; shift 2
    rm -f rj.ndjson v.json
    run validate --profile "$p" --set tenant_id=7 --rejects rj.ndjson --report v.json "$@" "$f"
}
# (the rows themselves are checked in tests/db/test_profiles.sh)

# --- WeChat: ALL (two partial refunds, a revoked order), gzip, SUCCESS,
# REFUND, the older 24-column layout
for f in wechat-all.csv wechat-all.csv.gz; do
    v wechat-trade $f
    eq "wechat $f: exit 0" 0 $RC
    eq "wechat $f: 4 rows read, none rejected, skipped or deduplicated (two refunds are two keys)" \
        "4 0 0 0" "$(figs v.json)"
    eq "wechat $f: the report names the profile" wechat-trade "$(json v.json 'r["files"][0]["format"]')"
done
v wechat-trade wechat-success.csv; eq "wechat SUCCESS (20 columns, LF): 2 rows" "0 2 0 0 0" "$RC $(figs v.json)"
v wechat-trade wechat-refund.csv; eq "wechat REFUND (29 columns): 1 row" "0 1 0 0 0" "$RC $(figs v.json)"
v wechat-trade wechat-old.csv; eq "wechat older 24 columns: 2 rows" "0 2 0 0 0" "$RC $(figs v.json)"

# REVOKED rows count in the summary's money totals like every other row
# (SPEC "Money facts"): one shaped like a refund (its money in 退款金额),
# one keeping its 应结订单金额
v wechat-trade wechat-revoked.csv
eq "wechat: REVOKED rows summed in 应结订单总金额 and 退款总金额: 3 rows, exit 0" \
    "0 3 0 0 0" "$RC $(figs v.json)"
check "wechat: ... no totals message" bash -c '! grep -q "add up to" "$1"' _ "$ERR"

# --- the bill's own row count
v wechat-trade wechat-badcount.csv
eq "wechat: 总交易单数 5 for 4 rows: exit 3" 3 $RC
check "wechat: the message says what the bill states and holds" \
    grep -q "states 5 rows (总交易单数) but holds 4" "$ERR"
eq "wechat: a bad count validates nothing" "0 0 0 0" "$(figs v.json)"
eq "wechat: the file is failed in the report" failed "$(json v.json 'r["files"][0]["status"]')"
v wechat-trade wechat-nosummary.csv
eq "wechat cut before its summary: exit 3" 3 $RC
check "wechat cut before its summary: says the count is missing" grep -q "without stating its row count" "$ERR"

# --- Alipay: the GBK detail CSV alone, the zip (summary member first; and
# written by a streaming writer, with data descriptors), from a pipe
v alipay-trade alipay-detail.csv
eq "alipay detail CSV: 4 rows (2 trades, 2 partial refunds)" "0 4 0 0 0" "$RC $(figs v.json)"
for z in alipay-bill.zip alipay-bill-descriptor.zip; do
    v alipay-trade $z
    eq "alipay $z: the detail member read, the 汇总 member skipped" "0 4 0 0 0" "$RC $(figs v.json)"
done
rm -f rj.ndjson
"$IDEMLOAD" validate --profile alipay-trade --set tenant_id=7 --report v.json - <alipay-bill.zip 2>"$WORK/err.txt"
eq "alipay zip from standard input (validate: one pass)" "0 4 0 0 0" "$? $(figs v.json)"
v alipay-trade alipay-bill-truncated.zip
eq "alipay zip cut short: exit 3" 3 $RC
check "alipay zip cut short: names the member (GBK name shown in UTF-8)" \
    grep -q "truncated zip: the input ends inside member \"20881234567890120156_20240501_业务明细.csv\"" "$ERR"
v alipay-trade alipay-bill-summaryonly.zip
eq "alipay zip without a detail member: exit 3" 3 $RC
check "alipay zip without a detail member: says so" grep -q "no detail member" "$ERR"
v alipay-trade alipay-badcount.csv
eq "alipay #交易合计 3 + #退款合计 2 for 4 rows: exit 3" 3 $RC
check "alipay bad count: message" grep -q "states 5 rows (#交易合计 + #退款合计) but holds 4" "$ERR"

# GBK with a byte sequence invalid in GBK: that row rejected, its bytes kept
v alipay-trade alipay-badgbk.csv
eq "alipay invalid GBK: exit 1, 4 read, 1 rejected" "1 4 1 0 0" "$RC $(figs v.json)"
eq "alipay invalid GBK: the reject names line 9 and the byte" \
    "9:a byte sequence invalid in GBK at byte 48 of the record" \
    "$(python3 -c 'import json,sys; [print("%d:%s" % (r["line"], r["reason"])) for r in map(json.loads, open(sys.argv[1]))]' rj.ndjson)"
check "alipay invalid GBK: raw_base64 holds the row's exact bytes" python3 -c '
import base64, json, sys
r = json.loads(open("rj.ndjson").readline())
row = open("alipay-badgbk.csv", "rb").read().split(b"\r\n")[8]
sys.exit(0 if base64.b64decode(r["raw_base64"]) == row and b"\x81\x20" in row else 1)'
check "alipay invalid GBK: raw shows the row's Chinese, the bad byte alone as U+FFFD" python3 -c '
import json, sys
r = json.loads(open("rj.ndjson").readline())
sys.exit(0 if "交易" in r["raw"] and "Bad \ufffd  item" in r["raw"] and "\ufffd" not in r["raw"].replace("Bad \ufffd", "") else 1)'
# A valid GBK row rejected (its key empty): raw in UTF-8, and its GBK bytes
# in raw_base64, so it can be fixed and loaded again in the bill's encoding
python3 -c '
d = open("alipay-detail.csv", "rb").read()
open("alipay-nokey.csv", "wb").write(d.replace(b",AORD2\t,", b",\t,", 1))'
v alipay-trade alipay-nokey.csv
eq "alipay row without its key: exit 1, 1 rejected" "1 4 1 0 0" "$RC $(figs v.json)"
check "alipay rejected GBK row: raw is its text, raw_base64 its GBK bytes" python3 -c '
import base64, json, sys
r = json.loads(open("rj.ndjson").readline())
row = open("alipay-nokey.csv", "rb").read().split(b"\r\n")[8]
sys.exit(0 if r["raw"] == row.decode("gbk") and "商品" in r["raw"] and base64.b64decode(r["raw_base64"]) == row else 1)'
# A refund row without its refund number is rejected (its key), and the
# bill is not refused: its money belongs to no kind's total (it was left
# out of the refunds' sum, and the genuine bill called truncated, exit 3)
sed 's/`5030002,`RF2,/`5030002,`,/' "$SRC/samples/bill-wechat-trade-2024-05-01.csv" >wx-blank-refund.csv
v wechat-trade wx-blank-refund.csv
eq "wechat refund without its number: exit 1, 1 rejected, the rest validated" "1 4 1 0 0" "$RC $(figs v.json)"
check "its reject says why" grep -q '商户退款单号 is empty' rj.ndjson
check "the run says the bill's money totals were not checked" \
    contains "$ERR" "wx-blank-refund.csv: the bill's money totals were not checked: 1 row"
check "and the report's file says so" jtrue v.json "'money totals were not checked' in r['files'][0]['note']"
# --encoding utf-8 on the GBK bill: its header is not UTF-8
v alipay-trade alipay-detail.csv --encoding utf-8
eq "alipay bill read as UTF-8: exit 3" 3 $RC
check "alipay bill read as UTF-8: says to try gbk" grep -q "not a UTF-8 file (try --encoding gbk" "$ERR"

# --- Stripe: categories other than charge and refund skipped and counted
v stripe-balance stripe-balance.csv
eq "stripe: 6 read, 2 skipped (payout, fee), 4 to merge" "0 6 0 2 0" "$RC $(figs v.json)"
check "stripe: the summary shows skipped" grep -q "skipped 2" "$ERR"
check "stripe: skipped rows are not rejects" test ! -e rj.ndjson

# --- PayPal: RH/FH/SH/CH/SB/SF/... row types, BOM, CRLF
v paypal-stl paypal-stl.csv
eq "paypal: 4 SB rows, the T0400 withdrawal skipped" "0 4 0 1 0" "$RC $(figs v.json)"

# --- a header of the wrong channel: fails naming expected and found
v wechat-trade stripe-balance.csv
eq "a Stripe report read as wechat-trade: exit 3" 3 $RC
check "wrong channel: names what the profile expects" grep -q "the profile expects the columns 商户订单号, 交易状态, 退款状态 or 交易状态, 退款成功时间 or 交易时间" "$ERR"
check "wrong channel: names what the file has" grep -q "the file has: balance_transaction_id, created_utc" "$ERR"
v stripe-balance paypal-stl.csv
eq "a PayPal report read as stripe-balance: exit 3" 3 $RC
check "wrong channel (stripe): missing columns named" grep -q "missing: payment_metadata\[order_id\] or payment_metadata\[external_identifier\] or charge_id or source_id or balance_transaction_id, reporting_category, created_utc or created" "$ERR"
v alipay-trade wechat-all.csv
eq "a WeChat bill read as alipay-trade: exit 3" 3 $RC
check "WeChat bill as alipay: says it is not GBK and what is expected" \
    grep -q "not a GBK file.*profile alipay-trade expects the columns 商户订单号, 业务类型, 完成时间" "$ERR"

# --- usage errors
run validate --profile wechat-trade wechat-all.csv
eq "no tenant_id: exit 2" 2 $RC
check "no tenant_id: says --set tenant_id" grep -q "add --set tenant_id=N" "$ERR"
run validate --profile no-such --set tenant_id=1 wechat-all.csv
eq "unknown profile: exit 2" 2 $RC
check "unknown profile: lists the built-ins" grep -q "wechat-trade alipay-trade stripe-balance paypal-stl" "$ERR"
run validate --encoding gbk wechat-all.csv
eq "--encoding without --profile: exit 2" 2 $RC
run validate --profile wechat-trade --set tenant_id=1 --timezone Mars/Olympus wechat-all.csv
eq "unknown IANA zone: exit 2" 2 $RC
check "unknown IANA zone: named" grep -q "time zone 'Mars/Olympus' is not in the tz database" "$ERR"
run validate --profile wechat-trade --set tenant_id=1 --timezone +25:00 wechat-all.csv
eq "bad offset: exit 2" 2 $RC

# --- profiles: the list, one printed, and printed profiles load back
run profiles
eq "profiles: exit 0" 0 $RC
eq "profiles lists the built-ins" \
    "wechat-trade alipay-trade stripe-balance paypal-stl stripe-payout wechat-fund alipay-account" \
    "$(awk 'NF && $1 ~ /-/ && !/idemload/ {printf "%s%s", sep, $1; sep=" "}' "$OUT")"
for p in wechat-trade alipay-trade stripe-balance paypal-stl stripe-payout wechat-fund \
         alipay-account; do
    run profiles $p
    eq "profiles $p: exit 0" 0 $RC
    cp "$OUT" "$p.json"
    check "profiles $p: valid JSON naming it" jtrue "$p.json" "r['name'] == '$p'"
    # round trip: the printed file, loaded back, prints the same
    cp "$p.json" "custom-$p.json"
    run profiles "./custom-$p.json"
    check "profiles $p: printed, loaded back, printed again: identical" cmp -s "$OUT" "$p.json"
done
run profiles nope; eq "profiles nope: exit 2" 2 $RC
# The printed profile is the built-in itself: a bill read through the
# printed file and through the name gives the same exit status, figures and
# rejects, for every built-in (pub-paypal-stl.csv's SF and RF hold money,
# as PayPal's published reports do: a printed paypal-stl that dropped their
# "optional" flag refused it)
# outcome PROFILE FILE: exit status, the file's figures and its rejects
outcome() {
    rm -f rj.ndjson v.json
    run validate --profile "$1" --set tenant_id=7 --rejects rj.ndjson --report v.json "$2"
    echo "exit $RC"
    json v.json 'sorted((k, v) for k, v in r["files"][0].items() if k not in ("path", "elapsed_s"))'
    cat rj.ndjson 2>/dev/null
}
for pf in wechat-trade:wechat-all.csv alipay-trade:alipay-bill.zip \
          stripe-balance:stripe-balance.csv paypal-stl:pub-paypal-stl.csv; do
    p=${pf%%:*} f=${pf#*:}
    by_name=$(outcome "$p" "$f")
    by_file=$(outcome "./$p.json" "$f")
    eq "profiles $p: $f read through the printed file as through the name" "$by_name" "$by_file"
    case $by_name in "exit 0"*) ok "profiles $p: $f reads (exit 0)" ;;
                     *) fail "profiles $p: $f: $by_name" ;; esac
done

# a custom profile (the printed one) reads the bill the same as the built-in
v ./custom-wechat-trade.json wechat-all.csv
eq "custom profile file = built-in: same figures" "0 4 0 0 0" "$RC $(figs v.json)"
# ... and a custom one that maps REVOKED to a skip
python3 - <<'EOF'
import json
p = json.load(open("wechat-trade.json"))
p["name"] = "wechat-no-revoked"
del p["columns"]["callback_type"]["map"]["REVOKED"]
p["columns"]["callback_type"]["unmapped"] = "skip"
json.dump(p, open("norevoked.json", "w"), ensure_ascii=False)
EOF
v norevoked.json wechat-all.csv
eq "custom profile: REVOKED unmapped and skipped" "0 4 0 1 0" "$RC $(figs v.json)"
# ... and one that rejects it
python3 - <<'EOF'
import json
p = json.load(open("wechat-trade.json"))
del p["columns"]["callback_type"]["map"]["REVOKED"]
json.dump(p, open("rejrevoked.json", "w"), ensure_ascii=False)
EOF
v rejrevoked.json wechat-all.csv
eq "custom profile: REVOKED unmapped and rejected" "1 4 1 0 0" "$RC $(figs v.json)"
check "custom profile: the reject names the value" grep -q 'callback_type: 交易状态 \\"REVOKED\\" is not a value profile wechat-trade maps' rj.ndjson

# ... and one that names a column twice ("channel", "Channel"): refused,
# exit 2, where the second rule replaced the first unseen (and leaked it)
python3 - <<'EOF'
p = open("wechat-trade.json", encoding="utf-8").read()
p = p.replace('"columns": {', '"columns": {"Channel": {"value": "other"}, ', 1)
open("twice.json", "w", encoding="utf-8").write(p)
EOF
v twice.json wechat-all.csv
eq "custom profile naming a column twice: exit 2" 2 "$RC"
check "it says which" contains "$ERR" "names a column already given a rule"

# the example shipped in share/doc/idemload/examples: a fund-flow bill
printf '%s\r\n' '记账时间,微信支付业务单号,资金流水单号,业务名称,业务类型,收支类型,收支金额(元),账户结余(元),资金变更提交申请人,备注,业务凭证号' \
    '`2024-05-01 10:15:02,`4200000001,`F1,`退款,`退款,`支出,`30.00,`69.00,`system,`,`ORD1' \
    '`2024-05-01 09:00:00,`4200000001,`F0,`交易,`交易,`收入,`99.00,`99.00,`system,`,`ORD1' \
    '资金流水总笔数,收入笔数,收入金额,支出笔数,支出金额' '`2,`1,`99.00,`1,`30.00' >fundflow.csv
v "$SRC/doc/examples/profile-wechat-fundflow.json" fundflow.csv
eq "the example fund-flow profile reads its bill: 2 rows" "0 2 0 0 0" "$RC $(figs v.json)"

# invalid profile files: exit 2 naming the bad member
bad_profile() { # DESCRIPTION PYTHON-EDIT EXPECTED-MESSAGE
    python3 -c "
import json
p = json.load(open('wechat-trade.json'))
$2
json.dump(p, open('bad.json', 'w'), ensure_ascii=False)"
    run validate --profile ./bad.json --set tenant_id=1 wechat-all.csv
    eq "invalid profile ($1): exit 2" 2 $RC
    check "invalid profile ($1): names the member" grep -qF "$3" "$ERR"
}
bad_profile "unknown member" 'p["framing"]["end_prefx"] = "x"' 'member "framing.end_prefx" is not a member'
bad_profile "from not strings" 'p["columns"]["out_trade_no"]["from"] = [1]' 'member "columns.out_trade_no.from" must hold only non-empty strings'
bad_profile "no received_at" 'del p["columns"]["received_at"]' 'member "columns.received_at" is required'
bad_profile "bad encoding" 'p["encoding"] = "latin1"' 'member "encoding" must be "utf-8" or "gbk"'
bad_profile "bad unmapped" 'p["columns"]["callback_type"]["unmapped"] = "drop"' 'member "columns.callback_type.unmapped" must be "reject" or "skip"'
bad_profile "bad template" 'p["columns"]["callback_type"]["map"]["REFUND"] = "refund:{商户退款单号"' 'member "columns.callback_type.map.REFUND" has a '"'"'{'"'"' without'
bad_profile "bad timezone" 'p["timezone"] = "Nowhere/Land"' 'member "timezone"'
bad_profile "payload mapped" 'p["columns"]["payload"] = {"value": "x"}' 'member "columns.payload" cannot be mapped'
# the kinds a file covers (SPEC.md, "Reconcile for finance"): printed with
# the profile, and checked like every member
check "profiles wechat-trade: covers says SUCCESS lists pay, REFUND refund, ALL all three" jtrue \
    wechat-trade.json "r['covers'] == [{'header_has': ['退款申请时间'], 'kinds': ['refund']}, {'header_has': ['微信退款单号'], 'kinds': ['pay', 'refund', 'revoked']}, {'kinds': ['pay']}]"
for b in alipay-trade stripe-balance paypal-stl; do
    check "profiles $b: covers pay and refund" jtrue $b.json "r['covers'] == [{'kinds': ['pay', 'refund']}]"
done
bad_profile "covers not an array" 'p["covers"] = {"kinds": ["pay"]}' 'member "covers" must be a non-empty array'
bad_profile "covers without kinds" 'p["covers"][0] = {"header_has": ["退款申请时间"]}' 'member "covers[0].kinds" is required'
bad_profile "covers kinds not strings" 'p["covers"][1]["kinds"] = [2]' 'member "covers[1].kinds" must hold only non-empty strings'
bad_profile "covers kind with a colon" 'p["covers"][2]["kinds"] = ["refund:x"]' 'member "covers[2].kinds" holds kinds without'
bad_profile "covers catch-all not last" 'p["covers"].insert(0, {"kinds": ["pay"]})' 'member "covers[0]" matches every header'
bad_profile "covers unknown member" 'p["covers"][0]["header"] = ["x"]' 'member "covers[0].header" is not a member'
# a profile only settle reads (a fund bill, an account ledger, a payout
# report: no out_trade_no in the file) is refused by the commands that
# load or compare payments: exit 2, saying so
cp "$SRC/tests/fixtures/settle/wechat-fund-2021-02-01.csv" fund.csv
for c in import validate reconcile; do
    run $c --profile wechat-fund --set tenant_id=1 fund.csv
    eq "$c --profile wechat-fund: exit 2" 2 $RC
    check "$c --profile wechat-fund: says it is read by settle only" \
        grep -q "profile wechat-fund is read by settle only.*$c cannot" "$ERR"
done
run validate --profile ./wechat-fund.json --set tenant_id=1 fund.csv
eq "validate --profile (printed wechat-fund): exit 2" 2 $RC
check "profiles wechat-fund: prints its settle member" jtrue wechat-fund.json \
    "r['settle']['side'] == 'channel' and r['settle']['kind']['map']['提现'] == 'payout'"
check "profiles paypal-stl: its settle amounts are in minor units" jtrue paypal-stl.json \
    "r['settle']['unit'] == 'minor' and r['settle']['fee']['sign']['column'] == 'Fee Debit or Credit'"

printf '{"name": "x",' >broken.json
run validate --profile ./broken.json --set tenant_id=1 wechat-all.csv
eq "a profile that is not JSON: exit 2" 2 $RC
check "a profile that is not JSON: says where" grep -q "broken.json: not a valid profile file: line 1" "$ERR"

finish
