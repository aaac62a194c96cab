#!/usr/bin/env bash
# tests/expected_settle.py, the model tests/db/test_settle_model.sh compares
# `idemload settle` with, checked on its own: a small scenario worked out by
# hand from SPEC.md's "Settle" rules (each category once, its figures exact,
# a batch pending, a fee rounded half up on a tie), then tests/make_settle.py's
# scenarios: nothing planted finds nothing, each plant finds exactly its line
# (with its planted difference) on each channel it can be planted on, the
# many-to-one deposit and the open window find none, all plants together
# find one line each; and files whose own totals are wrong, or a camt.053
# with a DTD, are refused.
. "$(dirname "$0")/../lib.sh"
M="python3 $SRC/tests/expected_settle.py"
out=$($M --self-test 2>&1)
eq "the model's money rules (--self-test)" "expected_settle self-test ok" "$out"

# --- by hand ---------------------------------------------------------------
# Stripe, --fee-rate stripe=2.9%: S1 100.00 (fee 2.90, net 97.10) and S2
# 50.00 (1.45, 48.55) of 11-01 in po_A, which pays 144.65 (1.00 short of
# 145.65); S3 20.00 of 11-02 charged 0.59 (the rate says 0.58) in po_B
# (19.41, created 11-03, never credited; its window 11-03..11-06 closed at
# NOW 11-10); S4 10.00 of 11-08 in po_C (9.71, created 11-09: window open,
# pending).  The balance report lists the charges again (one record each)
# and the payouts.  The bank: 144.65 on 11-03 (po_A), 500.00 on 11-04 (no
# batch).  The table: S1..S4 and S9 30.00 of 11-01, which no file lists.
cat >payouts.csv <<'EOF'
automatic_payout_id,automatic_payout_effective_at_utc,balance_transaction_id,created_utc,available_on_utc,currency,gross,fee,net,reporting_category,source_id,description,payment_metadata[order_id]
po_A,2026-11-03 00:00:00,txn_S1,2026-11-01 09:00:00,2026-11-02 00:00:00,usd,100.00,2.90,97.10,charge,ch_S1,Order S1,S1
po_A,2026-11-03 00:00:00,txn_S2,2026-11-01 10:00:00,2026-11-02 00:00:00,usd,50.00,1.45,48.55,charge,ch_S2,Order S2,S2
po_B,2026-11-04 00:00:00,txn_S3,2026-11-02 10:00:00,2026-11-03 00:00:00,usd,20.00,0.59,19.41,charge,ch_S3,Order S3,S3
po_C,2026-11-10 00:00:00,txn_S4,2026-11-08 10:00:00,2026-11-09 00:00:00,usd,10.00,0.29,9.71,charge,ch_S4,Order S4,S4
EOF
cat >balance.csv <<'EOF'
balance_transaction_id,created_utc,available_on_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_intent_id,payment_metadata[order_id],description
txn_S1,2026-11-01 09:00:00,2026-11-02 00:00:00,usd,100.00,2.90,97.10,charge,ch_S1,ch_S1,pi_S1,S1,Order S1
txn_S2,2026-11-01 10:00:00,2026-11-02 00:00:00,usd,50.00,1.45,48.55,charge,ch_S2,ch_S2,pi_S2,S2,Order S2
txn_pA,2026-11-02 00:05:00,2026-11-02 00:05:00,usd,-144.65,0.00,-144.65,payout,po_A,,,,STRIPE PAYOUT
txn_S3,2026-11-02 10:00:00,2026-11-03 00:00:00,usd,20.00,0.59,19.41,charge,ch_S3,ch_S3,pi_S3,S3,Order S3
txn_pB,2026-11-03 00:05:00,2026-11-03 00:05:00,usd,-19.41,0.00,-19.41,payout,po_B,,,,STRIPE PAYOUT
txn_S4,2026-11-08 10:00:00,2026-11-09 00:00:00,usd,10.00,0.29,9.71,charge,ch_S4,ch_S4,pi_S4,S4,Order S4
txn_pC,2026-11-09 00:05:00,2026-11-09 00:05:00,usd,-9.71,0.00,-9.71,payout,po_C,,,,STRIPE PAYOUT
EOF
ntry() { printf '<Ntry><Amt Ccy="USD">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>%s</Dt></BookgDt><ValDt><Dt>%s</Dt></ValDt><AcctSvcrRef>%s</AcctSvcrRef></Ntry>\n' "$1" "$2" "$2" "$3"; }
bal() { printf '<Bal><Tp><CdOrPrtry><Cd>%s</Cd></CdOrPrtry></Tp><Amt Ccy="USD">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>%s</Dt></Dt></Bal>\n' "$@"; }
camt() {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>'
    echo '<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-11-10T06:00:00Z</CreDtTm></GrpHdr><Stmt><Id>S1</Id>'
    bal OPBD 1000.00 2026-11-01; bal CLBD "$1" 2026-11-09
    ntry 144.65 2026-11-03 REF-A; ntry 500.00 2026-11-04 REF-STRAY
    echo '</Stmt></BkToCstmrStmt></Document>'
}
camt 1644.65 >bank.xml
# WeChat, --fee-rate wechat=0.6%: W1 99.00 (0.594: fee 0.59) and W2 7.50
# (0.045, a tie: half up 0.05, where half even would say 0.04; charged
# 0.05) of 11-01; the 资金账单 of 11-01 lacks W2's fee row, so the 提现 of
# 105.86 leaves 1000.00 where 1105.91 - 105.86 = 1000.05 was due
# (balance_break on F5, -0.05); its summary counts the four rows left.
# The 提现 reaches the MT940 on 11-02.
WXH='交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注'
{ echo "$WXH"
  echo '`2026-11-01 10:00:00,`wx1,`1900000109,`0,`,`4201,`W1,`o1,`JSAPI,`SUCCESS,`OTHERS,`CNY,`99.00,`0.00,`0,`0,`0.00,`0.00,`,`,`item,`,`0.59000,`0.60%,`99.00,`0.00,`'
  echo '`2026-11-01 11:00:00,`wx1,`1900000109,`0,`,`4202,`W2,`o1,`JSAPI,`SUCCESS,`OTHERS,`CNY,`7.50,`0.00,`0,`0,`0.00,`0.00,`,`,`item,`,`0.05000,`0.60%,`7.50,`0.00,`'
  echo '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额'
  echo '`2,`106.50,`0.00,`0.00,`0.64000,`106.50,`0.00'
} >wx-trade.csv
fund() {
  echo '记账时间,微信支付业务单号,资金流水单号,业务名称,业务类型,收支类型,收支金额(元),账户结余(元),资金变更提交申请人,备注,业务凭证号'
  echo '`2026-11-01 10:00:00,`4201,`F1,`交易,`交易,`收入,`99.00,`1099.00,`system,`,`'
  echo '`2026-11-01 10:00:00,`4201,`F2,`扣除交易手续费,`扣除交易手续费,`支出,`0.59,`1098.41,`system,`,`'
  echo '`2026-11-01 11:00:00,`4202,`F3,`交易,`交易,`收入,`7.50,`1105.91,`system,`,`'
  echo '`2026-11-01 18:00:00,`WD1,`F5,`提现,`提现,`支出,`105.86,`1000.00,`api,`,`WD1'
  echo '资金流水总笔数,收入笔数,收入金额,支出笔数,支出金额'
  echo "$1"
}
fund '`4,`2,`106.50,`2,`106.45' >wx-fund.csv
printf ':20:ST1\r\n:25:6225880123456789\r\n:28C:1/1\r\n:60F:C261101CNY0,00\r\n:61:2611021102C105,86NTRFNONREF//B1\r\n:86:SETTLEMENT WD1\r\n:62F:C261102CNY105,86\r\n-\r\n' >bank.mt940
cat >table.csv <<'EOF'
tenant_id,channel,out_trade_no,callback_type,status,payload,received_at
1,stripe,S1,pay,1,"{""amount"": ""100.00"", ""currency"": ""USD""}",2026-11-01T09:00:00Z
1,stripe,S2,pay,1,"{""amount"": ""50.00"", ""currency"": ""USD""}",2026-11-01T10:00:00Z
1,stripe,S3,pay,1,"{""amount"": ""20.00"", ""currency"": ""USD""}",2026-11-02T10:00:00Z
1,stripe,S4,pay,1,"{""amount"": ""10.00"", ""currency"": ""USD""}",2026-11-08T10:00:00Z
1,stripe,S9,pay,1,"{""amount"": ""30.00"", ""currency"": ""USD""}",2026-11-01T11:00:00Z
1,wechat,W1,pay,1,"{""amount"": ""99.00"", ""currency"": ""CNY""}",2026-11-01T02:00:00Z
1,wechat,W2,pay,1,"{""amount"": ""7.50"", ""currency"": ""CNY""}",2026-11-01T03:00:00Z
EOF
ARGS=(--now 2026-11-10T00:00:00Z --fee-rate stripe=2.9% --fee-rate wechat=0.6% --table table.csv)
FILES=(payouts.csv balance.csv bank.xml wx-trade.csv wx-fund.csv bank.mt940)
proj() { python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if "pending" in d:
        print("pending", d["pending"], d["channel"], d["subject"], d["day"])
    else:
        print(*(d[k] if d[k] is not None else "null" for k in
                ("category", "channel", "day", "subject", "currency", "expected", "actual", "difference")))'; }
got=$($M "${ARGS[@]}" --pending "${FILES[@]}" 2>&1 | proj | sort)
want=$(sort <<'EOF'
fee_mismatch stripe 2026-11-02 txn_S3 USD 0.58 0.59 0.01
payout_mismatch stripe 2026-11-02 po_A USD 145.65 144.65 -1.00
payout_not_received stripe 2026-11-03 po_B USD 19.41 null null
unexpected_deposit bank 2026-11-04 REF-STRAY USD null 500.00 null
unsettled_payment stripe 2026-11-01 S9 USD 30.00 null null
balance_break wechat 2026-11-01 F5 CNY 1000.05 1000.00 -0.05
pending batch stripe po_C 2026-11-09
EOF
)
eq "by hand: each category once, its figures, po_C pending" "$want" "$got"
t=$($M "${ARGS[@]}" "${FILES[@]}" | python3 -c 'import json,sys; print(sorted({json.loads(l)["tenant"] for l in sys.stdin}))')
eq "by hand: every line names tenant 1" "['1']" "$t"
# A rate of its own: no line for a fee the rate agrees with; without a
# rate, fees are compared across files (none differ here).
got=$($M --now 2026-11-10T00:00:00Z --table table.csv "${FILES[@]}" | proj | grep -c fee_mismatch)
eq "by hand: no --fee-rate, no file disagreeing: no fee_mismatch" 0 "$got"
# Later, po_C's window has closed: not received.
got=$($M "${ARGS[@]/2026-11-10T00:00:00Z/2026-11-13T00:00:00Z}" "${FILES[@]}" | proj | grep po_C)
eq "by hand: po_C once its window closed (11-09 + 3d, NOW 11-13)" \
   "payout_not_received stripe 2026-11-09 po_C USD 9.71 null null" "$got"
# Files whose own statements disagree are refused (settle: exit 3).
camt 1644.66 >badbank.xml
check "by hand: a camt.053 whose closing balance disagrees is refused" \
    bash -c "! $M ${ARGS[*]} badbank.xml >/dev/null 2>&1"
fund '`4,`2,`106.50,`3,`106.45' >badfund.csv
check "by hand: a 资金账单 whose summary disagrees is refused" \
    bash -c "! $M ${ARGS[*]} badfund.csv >/dev/null 2>&1"
{ echo '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'; sed 1d bank.xml; } >dtd.xml
check "by hand: a camt.053 with a DTD is refused" bash -c "! $M ${ARGS[*]} dtd.xml >/dev/null 2>&1"

# A real Alipay 账务明细 export (2012-12-29, three 在线支付 rows quoted in a
# public settlement module, code search id 23331272793; channel-formats.md
# [A7]; the payers' names masked here), GBK, the newest row first.  Rows of
# the export are missing between them: 11875.06 + 393.00 = 12268.06 where
# 12261.39 is stated (-6.67), then 12261.39 + 2274.00 = 14535.39 where
# 14533.03 is stated (-2.36).
{ printf '#支付宝账务明细查询\r\n#账号：[20888011365400330156]\r\n'
  printf '#起始日期：[2012年12月29日 00:00:00]   终止日期：[2012年12月30日 00:00:00]\r\n'
  printf '#-----------------------------------------账务明细列表----------------------------------------\r\n'
  printf '账务流水号,业务流水号,商户订单号,商品名称,发生时间,对方账号,收入金额（+元）,支出金额（-元）,账户余额（元）,交易渠道,业务类型,备注\r\n'
  printf '54632446537371\t,2012122923922029\t,3226563\t,海航机票\t,2012-12-29 21:02:06,陈* (k***@126.com)\t,2274.00,0.00,14533.03,支付宝,在线支付,\r\n'
  printf '54629090595411\t,2012122948927762\t,3226533\t,海航机票\t,2012-12-29 20:31:32,张* (133****6888)\t,393.00,0.00,12261.39,支付宝,在线支付,\r\n'
  printf '54628332402591\t,2012122926087002\t,3226491\t,海航机票\t,2012-12-29 20:24:45,田** (7***@qq.com)\t,1111.00,0.00,11875.06,支付宝,在线支付,\r\n'
  printf '#----------------------------------------账务明细列表结束-------------------------------------\r\n'
  printf '#支出合计：0笔，共0.00元\r\n#收入合计：3笔，共3778.00元\r\n#导出时间：[2012年12月31日 13:19:01]\r\n'
} | iconv -f utf-8 -t gbk >ap-2012.csv
got=$($M --now 2013-01-10T00:00:00Z ap-2012.csv | proj | sort)
want=$(sort <<'EOF'
balance_break alipay 2012-12-29 54629090595411 CNY 12268.06 12261.39 -6.67
balance_break alipay 2012-12-29 54632446537371 CNY 14535.39 14533.03 -2.36
EOF
)
eq "a real 账务明细 export, newest first: its two breaks" "$want" "$got"

# --- generated scenarios -----------------------------------------------------
# One Python process for every seed and plant (a process each would cost
# minutes on a loaded machine): it prints "DESCRIPTION|WANT|GOT" lines.
python3 - "$SRC/tests" <<'PY' >gen.txt 2>&1
import glob, os, shutil, sys
sys.path.insert(0, sys.argv[1])
import expected_settle as m
import make_settle as g

RATES = ["--now", "2026-11-21T12:00:00Z", "--tenant", "1", "--fee-rate", "stripe=2.9%",
         "--fee-rate", "wechat=0.6%", "--fee-rate", "alipay=0.6%", "--settle-window", "0..3d"]


def model(plants, seed, more=()):
    shutil.rmtree("s", ignore_errors=True)
    args = [str(seed), "s"] + list(more)
    for p in plants:
        args += ["--plant", p]
    g.main(args)
    files = sorted(f for f in glob.glob("s/*") if not f.endswith(("table.csv", "scenario.json")))
    return m.run(RATES + ["--table", "s/table.csv"] + files)


def short(lines, pending):
    return " / ".join([" ".join((l["category"], l["channel"], str(l["difference"])))
                       for l in lines] + ["pending %s %s" % (p["pending"], p["channel"])
                                          for p in pending])


def trade_fee(ch, which=0):
    """The fee of 11-16's first (or last) payment in the trade bill: the row removed."""
    if ch == "wechat":
        rows = [l.split(",") for l in open("s/wechat-trade.csv", encoding="utf-8")
                if l.startswith("`2026-11-16")]
        return "%.2f" % float(rows[which][22].strip("`"))
    rows = [l.split(",") for l in open("s/alipay-trade.csv", encoding="gbk") if "2026-11-16" in l]
    return rows[which][22].lstrip("-")


CASES = [("fee_off:stripe", "fee_mismatch stripe 0.01"),
         ("fee_off:wechat", "fee_mismatch wechat 0.01"),
         ("fee_off:alipay", "fee_mismatch alipay 0.01"),
         ("batch_short:stripe", "payout_mismatch stripe -1.00"),
         ("never_credited:stripe", "payout_not_received stripe None"),
         ("never_credited:wechat", "payout_not_received wechat None"),
         ("never_credited:alipay", "payout_not_received alipay None"),
         ("stray_credit:stripe", "unexpected_deposit bank None"),
         ("stray_credit:wechat", "unexpected_deposit bank None"),
         ("table_only:stripe", "unsettled_payment stripe None"),
         ("table_only:wechat", "unsettled_payment wechat None"),
         ("table_only:alipay", "unsettled_payment alipay None"),
         ("two_in_one:stripe", ""), ("two_in_one:wechat", ""), ("two_in_one:alipay", ""),
         ("window_open:stripe", "pending batch stripe"),
         ("window_open:wechat", "pending batch wechat"),
         ("window_open:alipay", "pending batch alipay")]
ALL = ["fee_off", "batch_short", "row_removed:alipay", "never_credited:wechat", "stray_credit",
       "table_only:alipay", "two_in_one", "window_open:stripe"]
for seed in (3, 17, 40):
    print("seed %d: nothing planted, nothing found||%s" % (seed, short(*model([], seed))))
    for plant, want in CASES:
        print("seed %d: %s finds exactly its line|%s|%s" % (seed, plant, want,
                                                             short(*model([plant], seed))))
    for ch in ("wechat", "alipay"):
        got = short(*model(["row_removed:" + ch], seed))
        print("seed %d: row_removed:%s finds one balance_break of the fee removed|%s|%s"
              % (seed, ch, "balance_break %s -%s" % (ch, trade_fee(ch)), got))
        got = short(*model(["last_removed:" + ch], seed))
        print("seed %d: last_removed:%s finds it on the next day's first row|%s|%s"
              % (seed, ch, "balance_break %s -%s" % (ch, trade_fee(ch, -1)), got))
    lines, pending = model(ALL, seed)
    print("seed %d: the 账务明细 newest first, the same lines|%s|%s" % (
        seed, short(lines, pending), short(*model(ALL, seed, ["--newest-first"]))))
    got = sorted("%s %s" % (l["category"], l["channel"]) for l in lines) + \
        ["pending " + p["channel"] for p in pending]
    print("seed %d: every plant at once, one line each|%s|%s" % (seed, ", ".join(
        ["balance_break alipay", "fee_mismatch wechat", "payout_mismatch stripe",
         "payout_not_received wechat", "unexpected_deposit bank", "unsettled_payment alipay",
         "pending stripe"]), ", ".join(got)))
PY
[ "$(grep -vc '|' gen.txt)" = 0 ] || { fail "the generated scenarios' run:"; sed 's/^/#   /' gen.txt; }
check "the generated scenarios ran (3 seeds, 25 cases each)" [ "$(grep -c "|" gen.txt)" = 75 ]
while IFS='|' read -r d want got; do
    eq "$d" "$want" "$got"
done <gen.txt
# The generator's own files agree with their stated totals (the model reads
# them without refusing), and it refuses what it cannot plant.
check "make_settle refuses batch_short on wechat (no batch link there)" \
    bash -c "! python3 $SRC/tests/make_settle.py 1 x --plant batch_short:wechat 2>/dev/null"
check "make_settle refuses an unknown plant" \
    bash -c "! python3 $SRC/tests/make_settle.py 1 x --plant nonsense 2>/dev/null"
finish
