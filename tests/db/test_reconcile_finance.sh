#!/usr/bin/env bash
# What finance reads of `idemload reconcile` (SPEC.md, "Reconcile for
# finance", "What finance reads"), in the summary, the report, the
# discrepancies file (NDJSON and CSV) and the page as headless Chromium
# renders it:
# - a category's money as the sum of the absolute differences beside the
#   net (-0.01 and +0.01 are 0.02 of errors, not "CNY 0.00");
# - a currency mismatch with both amounts, not "1 without an amount";
# - statuses in the channel's words (the profile's map read backwards)
#   beside the number;
# - the sign of difference stated: statement minus table;
# - times in the day's zone, without fractions of a second the source did
#   not have (09:15:36 in Beijing, not 01:15:36.000000Z);
# - a day's money differences with each key once (an amount_mismatch and a
#   duplicate_in_statement of one key are one difference);
# - a side's amounts net of refunds, each kind apart (a payment of 99.00
#   and refunds of 50.00 are not "149.00");
# - the bill's own stated totals beside the sums of its rows and the
#   statement's compared amounts, marked where they differ;
# - an item resolved because the table was corrected says so.
. "$(dirname "$0")/../lib.sh"
CHECK="python3 $SRC/tests/cli/html_check.py"
init_db recon_finance
export PGTZ=UTC

# The bill: WeChat Pay's SUCCESS bill of 2019-11-04 as a merchant logged the
# API's answer (code search id 36922938523, gka.thread.dzxc.DzxcThread; the
# same rows as tests/make_bills.py's pub-wechat-success.csv): five payments
# of 0.01, 20 columns.  Derived: the last order listed a second time, by
# another payment (another 微信订单号) of 0.02 at 19:30:00, and the summary's
# count and totals made to add up (6 rows, 0.07).
python3 - <<'PY'
cols = ("交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,"
        "付款银行,货币种类,应结订单金额,代金券金额,商品名称,商户数据包,手续费,费率,订单金额,费率备注")
rows = [("2019-11-04 18:52:59", "4200000422201911044383886395", "1572864513058gxaivpd",
         "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT", "0.01"),
        ("2019-11-04 19:57:05", "4200000423201911046892119860", "1572868323023nkfdudu",
         "o1gswuJ_mUWc0bQ8eLkBYPBtHpR8", "GDB_CREDIT", "0.01"),
        ("2019-11-04 19:10:42", "4200000428201911047831786620", "1572865579667loevqgw",
         "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT", "0.01"),
        ("2019-11-04 19:15:51", "4200000438201911041032765762", "1572865890364jryczgn",
         "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT", "0.01"),
        ("2019-11-04 19:24:03", "4200000447201911041288502636", "1572866378743unbkuor",
         "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT", "0.01"),
        ("2019-11-04 19:30:00", "4200000447201911049999999999", "1572866378743unbkuor",
         "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT", "0.02")]
lines = [cols] + ["`%s,`wxdf9968af00e458e0,`1393091302,`0,`,`%s,`%s,`%s,`NATIVE,`SUCCESS,`%s,`CNY,"
                  "`%s,`0.00,`长春工业大学收费,`,`0.00000,`0.60%%,`%s,`" % (r + (r[5],)) for r in rows]
lines += ["总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额",
          "`6,`0.07,`0.00,`0.00,`0.00000,`0.07,`0.00"]
open("fin.csv", "wb").write(("\ufeff" + "\r\n".join(lines)).encode())
PY
# The callbacks, as WeChat Pay v3 sends them (amount.total in fen,
# success_time with its offset), arriving 5 s after the payment:
# R1 0.02 (-0.01), R2 0.00 (+0.01), R3 in USD, R4 still PROCESSING (1),
# R5 0.01 (the bill's latest listing says 0.02: +0.01, and a duplicate).
cb() {  # KEY FEN CURRENCY STATUS TIME
    printf "(31, 'wechat', '%s', 'pay', %s, '{\"amount\": {\"total\": %s, \"currency\": \"%s\"}, \"success_time\": \"%s+08:00\"}', '%s+08:00'::timestamptz + interval '5 seconds')" \
        "$1" "$4" "$2" "$3" "$5" "$5"
}
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES
 $(cb 1572864513058gxaivpd 2 CNY 2 2019-11-04T18:52:59),
 $(cb 1572868323023nkfdudu 0 CNY 2 2019-11-04T19:57:05),
 $(cb 1572865579667loevqgw 1 USD 2 2019-11-04T19:10:42),
 $(cb 1572865890364jryczgn 1 CNY 1 2019-11-04T19:15:51),
 $(cb 1572866378743unbkuor 1 CNY 2 2019-11-04T19:24:03)" >/dev/null
cat >facts.json <<'JSON'
{"channels": {"wechat": {"amount": {"path": "amount.total", "unit": "minor"},
  "currency": {"path": "amount.currency"}, "time": {"path": "success_time"}}}}
JSON
R1=1572864513058gxaivpd R3=1572865579667loevqgw R4=1572865890364jryczgn R5=1572866378743unbkuor

run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=31 --facts facts.json \
    --report r.json --html r.html --discrepancies d.ndjson fin.csv
eq "the derived bill against the callbacks: exit 5" 5 "$RC"
cp "$ERR" summary.txt
run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=31 --facts facts.json \
    --discrepancies d.csv fin.csv
eq "the same to CSV: exit 5" 5 "$RC"

day() { json r.json "[d for d in r['reconciliation']['days'] if d['tenant_id'] == 31][0]$1"; }
# -0.01 (R1), +0.01 (R2), +0.01 (R5): 0.03 of errors, net 0.01.
eq "amount_mismatch: the absolute differences summed beside the net" \
    "3 {'CNY': '0.03'} {'CNY': '0.01'}" \
    "$(day "['categories']['amount_mismatch']['count']") $(day "['categories']['amount_mismatch']['absolute']") $(day "['categories']['amount_mismatch']['amounts']")"
check "the summary shows both" grep -qF 'amount_mismatch 3 (absolute CNY 0.03, net CNY 0.01)' summary.txt
check "a status_mismatch with no money difference shows no money" grep -qF ', status_mismatch 1, duplicate_in_statement 1 (absolute' summary.txt
eq "currency_mismatch: both amounts, none 'without an amount'" \
    "statement CNY 0.01; table USD 0.01 0" \
    "$(day "['categories']['currency_mismatch']['sides']") $(day "['categories']['currency_mismatch']['without_amount']")"
check "the summary shows both amounts" grep -qF 'currency_mismatch 1 (statement CNY 0.01; table USD 0.01)' summary.txt
check "and never 'without an amount' for them" test "$(grep -c 'without an amount' summary.txt)" = 0
# R5 is an amount_mismatch (+0.01) and a duplicate_in_statement (+0.01):
# one difference of the day, not two.
eq "the day's money differences, each key once" "{'CNY': '0.01'} {'CNY': '0.03'} 3" \
    "$(day "['differences']['net']") $(day "['differences']['absolute']") $(day "['differences']['keys']")"
check "the summary's day line says so" \
    grep -qF 'money differences, each key once: absolute CNY 0.03, net CNY 0.01 (3 keys)' summary.txt
check "the sign of difference is stated in the report and the summary" jtrue r.json \
    "r['reconciliation']['difference_is'].startswith('statement minus table')"
check "the summary states it" grep -qF 'difference: statement minus table (the channel minus our records)' summary.txt

line() { python3 -c "
import json, sys
ls = [json.loads(l) for l in open('d.ndjson', encoding='utf-8')]
l = [l for l in ls if l['out_trade_no'] == sys.argv[1] and l['category'] == sys.argv[2]][0]
print($3)" "$1" "$2"; }
eq "status in the channel's words beside the number" "SUCCESS/REVOKED 2 PROCESSING/CHANGE 1" \
    "$(line $R4 status_mismatch "l['statement']['status_word'], l['statement']['status'], l['table']['status_word'], l['table']['status']" | tr -d "(),'")"
eq "times in the day's zone (+08:00), no fraction the bill did not have" \
    "2019-11-04T18:52:59+08:00 2019-11-04T18:52:59+08:00" \
    "$(line $R1 amount_mismatch "l['statement']['time'], l['table']['time']" | tr -d "(),'")"
check "a duplicate's listings name the status in the channel's words" \
    test "$(line $R5 duplicate_in_statement "l['listed'][0]['status_word']")" = SUCCESS/REVOKED
check "the CSV: status words, the sign of difference" python3 -c '
import csv, sys
rows = list(csv.DictReader(open("d.csv", encoding="utf-8-sig")))
r = [r for r in rows if r["out_trade_no"] == sys.argv[1] and r["category"] == "status_mismatch"][0]
assert (r["statement_status"], r["statement_status_word"], r["table_status"], r["table_status_word"]) \
    == ("2", "SUCCESS/REVOKED", "1", "PROCESSING/CHANGE"), r
assert all(x["difference_is"].startswith("statement minus table") for x in rows), rows[0]
assert r["statement_time"] == "2019-11-04T19:15:51+08:00", r
' $R4

# The bill's own stated totals beside the sums of its rows and the
# statement's compared amounts, marked where they differ (the statement's
# totals are what the comparison holds: a repeated key's rows deduplicated
# as the comparison does).
check "the bill's stated totals in the report, beside its rows' sums" jtrue r.json \
    "[(t['label'], t['column'], t['kind'], t['stated'], t['rows_sum']) for t in r['reconciliation']['stated_totals']] == [('应结订单总金额', '应结订单金额', None, '0.07', '0.07'), ('退款总金额', '退款金额', None, '0.00', '0.00'), ('手续费总金额', '手续费', None, '0.00000', '0.00000')]"
# WeChat's totals add their column over every row, whatever its state
# (SPEC "Money facts"), and its 应结订单金额 is a settlement fact, not the
# amount compared (订单金额): nothing of the comparison stands beside them.
check "a total of every row is not set against the compared amounts" jtrue r.json \
    "all(t['compared'] is None and t['differs'] is None for t in r['reconciliation']['stated_totals'])"
check "the summary states them" grep -qF "the bill fin.csv states 应结订单总金额 0.07 (its rows' 应结订单金额: 0.07)" summary.txt

# The page as Chromium renders it.
if $CHECK render r.html r.png r.dom; then
    $CHECK dom r.dom >r.page.json
    check "the page (Chromium): every figure finance reads" python3 - r.page.json <<'PY'
import json, sys
page = json.load(open(sys.argv[1], encoding="utf-8"))
text, tables = page["text"], page["tables"]
days = [" ".join(c.strip() for c in row) for row in tables["recon-days"][1:]]
want_days = ["amount_mismatch 3 (absolute CNY 0.03, net CNY 0.01)",
             "currency_mismatch 1 (statement CNY 0.01; table USD 0.01)",
             "money differences, each key once: absolute CNY 0.03, net CNY 0.01 (3 keys)"]
status = " ".join(" ".join(r) for r in tables["recon-status_mismatch"][1:])
amount = " ".join(" ".join(r) for r in tables["recon-amount_mismatch"][1:])
bad = [w for w in want_days if not any(w in d for d in days)]
bad += [w for w in ("SUCCESS/REVOKED (2)", "PROCESSING/CHANGE (1)") if w not in status]
bad += [w for w in ("2019-11-04T18:52:59+08:00",) if w not in amount]
bad += [w for w in ("statement minus table (the channel minus our records)",) if w not in text]
bad += [w for w in (".000000Z", "without an amount") if w in text]
stated = [[c.strip() for c in r] for r in tables.get("recon-stated", [])[1:]]
pay = [r for r in stated if r[1] == "应结订单总金额 (应结订单金额)"]
if not pay or pay[0][2:5] != ["0.07", "0.07", "every row"]:
    bad.append("the bill's stated totals: %s" % stated)
if bad:
    print("page lacks or shows:", bad); sys.exit(1)
PY
else
    fail "chromium rendered the reconcile page"
fi

# --- a side's amounts net of refunds, each kind apart: the repository's
# WeChat ALL bill (samples/, made by tests/make_bills.py) pays 99.00 and
# refunds 30.00 + 20.00; its REVOKED order is left apart.
run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=32 --report k.json \
    --html k.html "$SRC/samples/bill-wechat-trade-2024-05-01.csv"
eq "the ALL bill against no callbacks: exit 5" 5 "$RC"
cp "$ERR" k.txt
check "the statement's amounts are net (99.00 - 50.00), each kind apart, never 149.00" jtrue k.json \
    "(s := r['reconciliation']['days'][0]['statement'])['amounts'] == {'CNY': '49.00'} and s['kinds']['pay']['amounts'] == {'CNY': '99.00'} and s['kinds']['refund']['amounts'] == {'CNY': '50.00'} and r['reconciliation']['totals']['statement']['amounts'] == {'CNY': '49.00'}"
check "the summary shows the net beside the kinds" \
    grep -qE 'statement 4 rows \[pay 1 \(CNY 99\.00\), refund 2 \(CNY 50\.00\), revoked 1 \([^)]*\)\] \(net CNY 49\.00\),' k.txt
check "the page shows the net beside the kinds" grep -qF '<span class="net">net CNY 49.00</span>' k.html

# --- the register: the table corrected, the day reconciled again.
run reconcile -d "$DB" --profile wechat-trade --set tenant_id=31 --facts facts.json fin.csv
eq "registered: exit 5" 5 "$RC"
q "UPDATE payment_callback SET payload = jsonb_set(payload, '{amount,total}', '1')
   WHERE tenant_id = 31 AND out_trade_no = '$R1'" >/dev/null
run reconcile -d "$DB" --profile wechat-trade --set tenant_id=31 --facts facts.json \
    --report again.json --html again.html fin.csv
eq "reconciled again: exit 5 (the others remain)" 5 "$RC"
check "the corrected amount's item: resolved, the table now agrees" jtrue again.json \
    "[(i['out_trade_no'], i['category'], i['resolution']) for i in r['reconciliation']['resolved_items']] == [('$R1', 'amount_mismatch', 'the table now agrees with the statement')]"
check "the page says so" grep -qF 'the table now agrees with the statement' again.html

# --- a stated total of another column than the one compared is shown, not
# set against the compared amounts: the repository's Alipay bill (samples/),
# loaded, then reconciled, agrees with its table, and its 商家实收共 (what the
# merchant received), 商家优惠共 and the refunds' totals are not "DIFFERS".
run import -d "$DB" --profile alipay-trade --set tenant_id=33 "$SRC/samples/bill-alipay-trade-2024-05-01.zip"
eq "the Alipay sample loads" 0 "$RC"
run reconcile -d "$DB" --dry-run --profile alipay-trade --set tenant_id=33 --report a.json \
    "$SRC/samples/bill-alipay-trade-2024-05-01.zip"
eq "the Alipay sample against its own rows: balanced (exit 0)" 0 "$RC"
check "its stated totals are shown" jtrue a.json "len(r['reconciliation']['stated_totals']) >= 2"
check "none of them marked as differing from the compared amounts" jtrue a.json \
    "all(t['differs'] is not True for t in r['reconciliation']['stated_totals'])"
check "nor in the summary" bash -c "! grep -q DIFFERS '$ERR'"

finish
