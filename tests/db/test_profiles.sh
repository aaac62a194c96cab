#!/usr/bin/env bash
# Channel bills imported by their profiles (issue 16; SPEC.md "Channel
# exports: profiles"): the rows each bill leaves in the table (keys, refunds
# as their own keys, received_at with the channel's offset, status 2, the
# payload as strings exactly as written), the figures with rows_skipped,
# the bill's own row count checked before anything is committed, a header
# of the wrong channel, the dry run, and reloading.
. "$(dirname "$0")/../lib.sh"

python3 "$SRC/tests/make_bills.py" . || { echo "make_bills.py failed"; exit 1; }
new_db profiles
run init -d "$DB"; eq "init" 0 $RC

figs() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_rejected","rows_skipped","rows_deduplicated","inserted","updated","unchanged"))'; }
# imp PROFILE FILE [ARGS]: import with tenant 7, report i.json
imp() {
    local p=$1 f=$2; shift 2
    rm -f rj.ndjson i.json
    run import -d "$DB" --profile "$p" --set tenant_id=7 --rejects rj.ndjson --report i.json "$@" "$f"
}
# rows CHANNEL: "out_trade_no callback_type received_at(UTC) status" per row
rows() {
    q "SET timezone = 'UTC'; SELECT string_agg(format('%s %s %s %s %s', tenant_id, out_trade_no, callback_type,
         to_char(received_at, 'YYYY-MM-DD\"T\"HH24:MI:SS'), status), E'\n' ORDER BY out_trade_no, callback_type)
       FROM payment_callback WHERE channel = '$1' AND deleted_at IS NULL"
}

# --- WeChat ALL: a payment, two partial refunds of it, a revoked order
imp wechat-trade wechat-all.csv
eq "wechat ALL: exit 0" 0 $RC
eq "wechat ALL: 4 read, 4 inserted" "4 0 0 0 4 0 0" "$(figs i.json)"
eq "wechat ALL: the rows (two refunds two keys; +08:00 applied; status 2)" \
"7 ORD1 pay 2024-05-01T02:15:02 2
7 ORD1 refund:RF1 2024-05-01T10:40:11 2
7 ORD1 refund:RF2 2024-05-01T11:02:45 2
7 ORD2 revoked 2024-05-01T03:00:00 2" "$(rows wechat)"
eq "wechat: the payload keeps amounts as the bill writes them, as strings" \
    "0.59000|0.60%|99.00|string|4200000001" \
    "$(q "SELECT payload->>'手续费', payload->>'费率', payload->>'应结订单金额', jsonb_typeof(payload->'应结订单金额'), payload->>'微信订单号' FROM payment_callback WHERE out_trade_no = 'ORD1' AND callback_type = 'pay'")"
eq "wechat: the payload has every column by its header name (27), backticks gone" \
    "27|0|Test item" \
    "$(q "SELECT count(*), count(*) FILTER (WHERE value LIKE '%\`%'), max(value) FILTER (WHERE key = '商品名称') FROM payment_callback, jsonb_each_text(payload) WHERE out_trade_no = 'ORD1' AND callback_type = 'pay'")"
eq "wechat: a quote inside an unquoted field stays" 'A "quoted" item' \
    "$(q "SELECT payload->>'商品名称' FROM payment_callback WHERE out_trade_no = 'ORD2'")"
imp wechat-trade wechat-all.csv.gz
eq "wechat ALL gzip (other bytes, same rows): all 4 unchanged" \
    "0 4 0 0 0 0 0 4" "$RC $(figs i.json)"

# SUCCESS (20 columns; a 25-digit amount stays whole), REFUND (29 columns:
# 退款成功时间 is the refund's time), the older 24-column layout
imp wechat-trade wechat-success.csv
eq "wechat SUCCESS: 2 inserted" "0 2 0 0 0 2 0 0" "$RC $(figs i.json)"
eq "wechat SUCCESS: a 25-digit amount whole, as text" "1234567890123456789012.10" \
    "$(q "SELECT payload->>'订单金额' FROM payment_callback WHERE out_trade_no = 'ORD4'")"
imp wechat-trade wechat-refund.csv
eq "wechat REFUND bill: RF1 updated to its success time (退款成功时间)" "0 1 0 0 0 0 1 0" "$RC $(figs i.json)"
eq "wechat REFUND bill: RF1 received_at is 退款成功时间 +08:00" "2024-05-01 10:41:00+00" \
    "$(q "SET timezone='UTC'; SELECT received_at FROM payment_callback WHERE callback_type = 'refund:RF1'")"
imp wechat-trade wechat-old.csv
eq "wechat older layout: 2 inserted" "0 2 0 0 0 2 0 0" "$RC $(figs i.json)"
eq "wechat older layout: its rows" "7 OLD1 pay 2017-03-01T00:00:00 2
7 OLD1 refund:OLDRF1 2017-03-01T01:00:00 2" "$(q "SET timezone = 'UTC'; SELECT string_agg(format('%s %s %s %s %s', tenant_id, out_trade_no, callback_type, to_char(received_at, 'YYYY-MM-DD\"T\"HH24:MI:SS'), status), E'\n' ORDER BY callback_type) FROM payment_callback WHERE out_trade_no = 'OLD1'")"
eq "wechat older layout: its own column names in the payload" "8.00" \
    "$(q "SELECT payload->>'总金额' FROM payment_callback WHERE out_trade_no = 'OLD1' AND callback_type = 'pay'")"

# --- the bill's own count: a wrong one loads nothing, exit 3
before=$(q "SELECT count(*) FROM payment_callback")
sed 's/ORD1/ORD9/g' wechat-badcount.csv >wechat-badcount-new.csv
imp wechat-trade wechat-badcount-new.csv --chunk-rows 1
eq "wechat count 5 for 4 rows (chunks of 1): exit 3" 3 $RC
eq "wechat bad count: not a row of it loaded" "$before 0" \
    "$(q "SELECT count(*) FROM payment_callback") $(q "SELECT count(*) FROM payment_callback WHERE out_trade_no = 'ORD9'")"
eq "wechat bad count: failed, nothing counted" "failed 0" \
    "$(json i.json 'r["files"][0]["status"]') $(json i.json 'r["totals"]["inserted"]')"
run import -d "$DB" --profile wechat-trade --set tenant_id=7 - <wechat-all.csv
eq "a count-checking profile on standard input: exit 2 (it is read twice)" 2 $RC
check "standard input: says why and what to do" grep -q "give the file's path" "$ERR"

# --- Alipay: the zip as downloaded; refunds keyed by 退款批次号/请求号
imp alipay-trade alipay-bill.zip
eq "alipay zip: 4 inserted" "0 4 0 0 0 4 0 0" "$RC $(figs i.json)"
eq "alipay: the rows (two partial refunds; 完成时间 +08:00)" \
"7 AORD1 pay 2024-05-01T02:15:09 2
7 AORD1 refund:ARF1 2024-05-01T10:40:11 2
7 AORD1 refund:ARF2 2024-05-01T11:00:00 2
7 AORD2 pay 2024-05-01T04:00:05 2" "$(rows alipay)"
eq "alipay: GBK converted, TABs stripped, negative amounts as text" \
    "2024050122001419931400000001|退款|-30.00|**明(138******00)" \
    "$(q "SELECT payload->>'支付宝交易号', payload->>'业务类型', payload->>'订单金额（元）', payload->>'对方账户' FROM payment_callback WHERE callback_type = 'refund:ARF1'")"
imp alipay-trade alipay-badcount.csv
eq "alipay bad count: exit 3, nothing loaded" "3 0" "$RC $(json i.json 'r["totals"]["inserted"] + r["totals"]["updated"] + r["totals"]["unchanged"]')"
imp alipay-trade alipay-badgbk.csv --timezone Asia/Shanghai
eq "alipay invalid GBK: exit 1, 1 rejected, the others unchanged" "1 4 1 0 0 0 0 3" "$RC $(figs i.json)"

# --- Stripe: charges and refunds; payout and fee skipped and counted
imp stripe-balance stripe-balance.csv
eq "stripe: 6 read, 2 skipped, 4 inserted" "0 6 0 2 0 4 0 0" "$RC $(figs i.json)"
eq "stripe: rows (order id, else the charge; refund:<re_>; UTC)" \
"7 SORD1 pay 2024-05-01T10:00:00 2
7 SORD1 refund:re_1 2024-05-01T11:00:00 2
7 SORD1 refund:re_2 2024-05-01T12:00:00 2
7 ch_2 pay 2024-05-02T02:00:00 2" "$(rows stripe)"
eq "stripe: a quoted description with a comma, quotes and a line break" \
    'Order SORD1, "gift"
second line' "$(q "SELECT payload->>'description' FROM payment_callback WHERE out_trade_no = 'SORD1' AND callback_type = 'pay'")"
check "stripe: the report's files carry rows_skipped" jtrue i.json 'r["files"][0]["rows_skipped"] == 2'
check "stripe: read = rejected + skipped + deduplicated + merged" jtrue i.json \
    'all(t["rows_read"] == t["rows_rejected"] + t["rows_skipped"] + t["rows_deduplicated"] + t["inserted"] + t["updated"] + t["unchanged"] + t["stale"] + t["existing"] for t in [r["totals"]] + r["files"])'

# --timezone with an IANA zone (PDT in May, PST in the 2024-12-01 copy) on
# a report whose time is `created` (the report's zone), and --set channel
# taking the place of the profile's; created_utc is never shifted (issue 29)
sed 's/2024-05-02 02:00:00/2024-12-01 02:00:00/' stripe-balance.csv >stripe-la.csv
sed '1s/created_utc/created/' stripe-la.csv >stripe-la-local.csv
imp stripe-balance stripe-la-local.csv --timezone America/Los_Angeles --set channel=stripe_la
eq "stripe --timezone America/Los_Angeles --set channel=stripe_la: 4 inserted" "0 6 0 2 0 4 0 0" "$RC $(figs i.json)"
eq "stripe created in Los Angeles time: -07:00 in May, -08:00 in December" \
"7 SORD1 pay 2024-05-01T17:00:00 2
7 SORD1 refund:re_1 2024-05-01T18:00:00 2
7 SORD1 refund:re_2 2024-05-01T19:00:00 2
7 ch_2 pay 2024-12-01T10:00:00 2" "$(rows stripe_la)"
imp stripe-balance stripe-la.csv --timezone America/Los_Angeles --set channel=stripe_utc
eq "stripe created_utc with --timezone: 4 inserted" "0 6 0 2 0 4 0 0" "$RC $(figs i.json)"
eq "stripe created_utc is UTC whatever --timezone says" \
"7 SORD1 pay 2024-05-01T10:00:00 2
7 SORD1 refund:re_1 2024-05-01T11:00:00 2
7 SORD1 refund:re_2 2024-05-01T12:00:00 2
7 ch_2 pay 2024-12-01T02:00:00 2" "$(rows stripe_utc)"

# --- PayPal: SB rows; its own offsets
imp paypal-stl paypal-stl.csv
eq "paypal: 4 read, T0400 skipped, 3 inserted" "0 4 0 1 0 3 0 0" "$RC $(figs i.json)"
eq "paypal: rows (Invoice ID, else Custom Field; -0700 kept)" \
"7 PCUST2 pay 2024-08-20T14:00:00 2
7 PINV1 pay 2024-08-20T07:01:17 2
7 PINV1 refund:2AB23456CD789012F 2024-08-20T12:00:00 2" "$(rows paypal)"

# --- a header of the wrong channel: nothing loaded, the message names both
n=$(q "SELECT count(*) FROM payment_callback")
imp wechat-trade stripe-balance.csv
eq "stripe report as wechat-trade: exit 3, nothing loaded" "3 $n" "$RC $(q "SELECT count(*) FROM payment_callback")"
check "wrong channel: expected and found named" \
    grep -q "the profile expects the columns 商户订单号, 交易状态, 退款状态 or 交易状态, 退款成功时间 or 交易时间; the file has: balance_transaction_id" "$ERR"

# --- a resumed load keeps rows_skipped (the ledger holds no such figure: it
# comes from the others).  Chunks of 2: chunk 1 (a charge, a payout) commits,
# chunk 2 stops at a bad date (--max-rejects 0); the rerun resumes after it.
{ head -1 stripe-balance.csv
  printf '%s\n' "t1,2024-06-01 10:00:00,,usd,1.00,0,1.00,charge,ch_r1,ch_r1,pi,RORD1,a" \
                 "t2,2024-06-01 10:01:00,,usd,-9.00,0,-9.00,payout,po_r,,,,p" \
                 "t3,2024-06-01 10:02:00,,usd,2.00,0,2.00,charge,ch_r2,ch_r2,pi,RORD2,b" \
                 "t4,not a date,,usd,3.00,0,3.00,charge,ch_r3,ch_r3,pi,RORD3,c" \
                 "t5,2024-06-01 10:04:00,,usd,-1.00,0,-1.00,fee,fee_r,,,,f" \
                 "t6,2024-06-01 10:05:00,,usd,4.00,0,4.00,charge,ch_r4,ch_r4,pi,RORD4,d"
} >stripe-resume.csv
imp stripe-balance stripe-resume.csv --chunk-rows 2 --max-rejects 0
eq "stripe resume: the first run stops at the bad row after chunk 1" "3 1" "$RC $(q "SELECT count(*) FROM payment_callback WHERE out_trade_no LIKE 'RORD%'")"
imp stripe-balance stripe-resume.csv --chunk-rows 2
eq "stripe resume: the rerun resumes and ends with 1 rejected" "1 3" "$RC $(q "SELECT count(*) FROM payment_callback WHERE out_trade_no LIKE 'RORD%'")"
check "stripe resume: the report says it resumed" jtrue i.json '"resumed" in (r["files"][0].get("note") or "")'
eq "stripe resume: the file's figures count both skipped rows, the committed chunk's too" \
    "6 1 2 0 3 0 0" "$(json i.json '" ".join(str(r["files"][0][k]) for k in ("rows_read","rows_rejected","rows_skipped","rows_deduplicated","inserted","updated","unchanged"))')"

# --- the dry run: figures, nothing written; then reloading is unchanged
new_db profiles_dry
run init -d "$DB"
imp stripe-balance stripe-balance.csv --dry-run
eq "stripe dry run: exit 0, would insert 4, skipped 2" "0 6 0 2 0 4 0 0" "$RC $(figs i.json)"
eq "stripe dry run: the table stays empty" 0 "$(q "SELECT count(*) FROM payment_callback")"
imp alipay-trade alipay-bill.zip --dry-run
eq "alipay zip dry run: would insert 4" "0 4 0 0 0 4 0 0" "$RC $(figs i.json)"
imp alipay-trade alipay-bill.zip
imp alipay-trade alipay-bill.zip
eq "alipay zip again: skipped by the ledger" "skipped" "$(json i.json 'r["files"][0]["status"]')"
imp alipay-trade alipay-detail.csv
eq "alipay detail CSV after the zip: all unchanged" "0 4 0 0 0 0 0 4" "$RC $(figs i.json)"

finish
