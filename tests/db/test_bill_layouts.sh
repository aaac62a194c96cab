#!/usr/bin/env bash
# The rows real bill layouts leave in the table (issue 29; SPEC.md "Channel
# exports: profiles"): status from the bill's own state (a refund still
# PROCESSING is not final, and becomes final when a later bill lists it
# SUCCESS), PayPal's direction and its payload without the framing column,
# Stripe's `created` in the report's zone and the Dashboard's keys, each
# merchant's tenant through --tenant-map, --kind, and a bill whose money
# totals disagree loading nothing.
. "$(dirname "$0")/../lib.sh"

python3 "$SRC/tests/make_bills.py" . || { echo "make_bills.py failed"; exit 1; }
new_db bill_layouts
run init -d "$DB"; eq "init" 0 $RC

imp() {
    local p=$1 f=$2; shift 2
    rm -f rj.ndjson i.json
    run import -d "$DB" --profile "$p" --rejects rj.ndjson --report i.json "$@" "$f"
}
# refused WHAT MESSAGE PROFILE FILE [ARGS]: the import of a bill it must
# refuse: exit 3, the table as it was, the reason on stderr
refused() {
    local what=$1 msg=$2 before; shift 2
    before=$(q "SELECT count(*) FROM payment_callback")
    imp "$@"
    eq "$what: exit 3, nothing committed" "3 $before" "$RC $(q "SELECT count(*) FROM payment_callback")"
    check "$what: says why" grep -q "$msg" "$ERR"
}
# rows CHANNEL: "tenant out_trade_no callback_type received_at(UTC) status"
rows() {
    q "SET timezone = 'UTC'; SELECT string_agg(format('%s %s %s %s %s', tenant_id, out_trade_no, callback_type,
         to_char(received_at, 'YYYY-MM-DD\"T\"HH24:MI:SS'), status), E'\n' ORDER BY tenant_id, out_trade_no, callback_type)
       FROM payment_callback WHERE channel = '$1' AND deleted_at IS NULL"
}

# --- status from 退款状态 (and 交易状态 for payments)
imp wechat-trade real-wechat-states.csv --set tenant_id=7
eq "wechat states: exit 0" 0 $RC
eq "wechat: SUCCESS 2, PROCESSING 1, CHANGE 1, REFUNDCLOSE 3" \
"7 WORD1 pay 2024-06-01T02:00:00 2
7 WORD1 refund:WRF1 2024-06-01T03:00:00 2
7 WORD1 refund:WRF2 2024-06-01T03:05:00 1
7 WORD1 refund:WRF3 2024-06-01T03:10:00 1
7 WORD1 refund:WRF4 2024-06-01T03:15:00 3" "$(rows wechat)"
# a later bill lists WRF2 as SUCCESS: the refund in flight becomes final
python3 - <<'PY'
import sys
sys.path.insert(0, __import__("os").environ["IDEMLOAD_SRC"] + "/tests")
import make_bills as m
r = m.wx_refund("2024-06-01 11:05:00", "WORD1", "WRF2", "20.00", "SUCCESS")
r["退款成功时间"] = "2024-06-02 09:00:00"
open("later.csv", "wb").write(m.wx_current_bill([r]))
PY
imp wechat-trade later.csv --set tenant_id=7
eq "wechat: WRF2 listed SUCCESS later: updated to status 2" "0 2" \
    "$RC $(q "SELECT status FROM payment_callback WHERE callback_type = 'refund:WRF2'")"
imp wechat-trade real-wechat-old-refund.csv --set tenant_id=8
eq "wechat old 26-column REFUND PROCESSING: status 1, its 退款成功时间" \
    "8 OLDB refund:OLDRFB 2016-05-05T00:05:00 1" "$(rows wechat | grep '^8 ')"

# --- PayPal: only CR T00xx are payments; no CH/SB in the payload
imp paypal-stl real-paypal-sh.csv --set tenant_id=7
eq "paypal from SH: 4 read, 1 skipped, 3 inserted" "0 4 1 3" \
    "$RC $(json i.json '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_skipped","inserted"))')"
eq "paypal: the DR T0000 (Custom Field S) is not a payment" \
"7 INV1 pay 2024-08-20T07:01:17 2
7 INV1 refund:T3 2024-08-20T07:01:17 2
7 INV2 pay 2024-08-21T16:00:00 2" "$(rows paypal)"
eq "paypal: the payload is the CH columns without the framing one" "21|0|0" \
    "$(q "SELECT count(*), count(*) FILTER (WHERE key = 'CH'), count(*) FILTER (WHERE value = 'SB') FROM payment_callback, jsonb_each_text(payload) WHERE channel = 'paypal' AND out_trade_no = 'INV2'")"
imp paypal-stl real-paypal-57.csv --set tenant_id=9
eq "paypal 57 columns: Transactional Status S is 2, P is 1" \
"9 OINV1 pay 2012-01-02T18:00:05 2
9 OINV2 pay 2012-01-02T18:00:05 1" "$(rows paypal | grep '^9 ')"

# --- Stripe: created in the report's zone (UTC when not given); the Dashboard's keys
imp stripe-balance real-stripe-created.csv --set tenant_id=7
eq "stripe created: 3 rows; [external_identifier], else charge_id; created as UTC" \
"7 EXT1 pay 2024-06-01T12:00:00 2
7 EXT1 refund:re_b 2024-06-01T13:00:00 2
7 ch_c pay 2024-06-01T14:00:00 2" "$(rows stripe)"
imp stripe-balance real-stripe-created.csv --set tenant_id=8 --timezone America/New_York --force
eq "stripe created with --timezone America/New_York: EDT" \
"8 EXT1 pay 2024-06-01T16:00:00 2
8 EXT1 refund:re_b 2024-06-01T17:00:00 2
8 ch_c pay 2024-06-01T18:00:00 2" "$(rows stripe | grep '^8 ')"
eq "stripe: an amount as written (not always two decimals)" "25|-0.5" \
    "$(q "SELECT string_agg(payload->>'gross', '|' ORDER BY callback_type) FROM payment_callback WHERE tenant_id = 7 AND out_trade_no = 'EXT1'")"
imp stripe-balance real-stripe-dashboard.csv --set tenant_id=9
eq "stripe Dashboard: keyed by balance_transaction_id" \
"9 txn_e pay 2024-06-01T12:00:00 2
9 txn_f refund:txn_f 2024-06-01T13:00:00 2" "$(rows stripe | grep '^9 ')"

# --- --tenant-map: each sub-merchant its tenant
imp wechat-trade real-wechat-sp.csv --tenant-map tenants.csv
eq "service-provider bill: exit 1 (one merchant not in the map)" 1 $RC
eq "each merchant's rows in its tenant; equal order numbers stay apart" \
"10 OWN1 pay 2024-06-02T01:02:00 2
11 SAME1 pay 2024-06-02T01:00:00 2
12 SAME1 pay 2024-06-02T01:01:00 2" "$(rows wechat | grep -E '^1[0-2] ')"

# --- --kind
imp wechat-trade wechat-all.csv --set tenant_id=20 --kind pay=pay_success --kind refund=refund_done
eq "--kind: exit 0" 0 $RC
eq "--kind pay=pay_success refund=refund_done: the part before ':' renamed" \
"20 ORD1 pay_success 2024-05-01T02:15:02 2
20 ORD1 refund_done:RF1 2024-05-01T10:40:11 2
20 ORD1 refund_done:RF2 2024-05-01T11:02:45 2
20 ORD2 revoked 2024-05-01T03:00:00 2" "$(rows wechat | grep '^20 ')"

# --- totals that disagree: nothing of the file committed
n=$(q "SELECT count(*) FROM payment_callback")
imp wechat-trade real-wechat-badtotal-退款总金额.csv --set tenant_id=21 --chunk-rows 1
eq "wechat 退款总金额 off: exit 3, nothing committed" "3 $n" "$RC $(q "SELECT count(*) FROM payment_callback")"
check "wechat 退款总金额 off: names both figures" grep -q "states 退款总金额 65.51 but its rows' 退款金额 add up to 65.50" "$ERR"
imp alipay-trade real-alipay-badtotal.csv --set tenant_id=21 --chunk-rows 1
eq "alipay total off: exit 3, nothing committed" "3 $n" "$RC $(q "SELECT count(*) FROM payment_callback")"
imp paypal-stl real-paypal-badsf.csv --set tenant_id=21 --chunk-rows 1
eq "paypal SC off: exit 3, nothing committed" "3 $n" "$RC $(q "SELECT count(*) FROM payment_callback")"
# The older 24-column WeChat bill (总金额 where later bills have
# 应结订单金额): its payments' amounts are compared, not left unverified
# (a bill 991.99 off reconciled as balanced).
imp wechat-trade wechat-old.csv --set tenant_id=22
eq "wechat old layout loaded: exit 0" 0 "$RC"
cat >old-facts.json <<'EOF'
{"channels": {"wechat": {"amount": {"path": "总金额", "unit": "major"}, "currency": {"path": "货币种类"},
  "kinds": {"refund": {"amount": {"path": "退款金额", "unit": "major"}}}}}}
EOF
run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=22 --facts old-facts.json \
    --report old0.json wechat-old.csv
eq "the old layout reconciled against its own load: balanced, exit 0" 0 "$RC"
check "every row matched, none unverified" jtrue old0.json \
    "(x := r['reconciliation'])['matched'] == 2 and x['unverified'] == 0"
q "UPDATE payment_callback SET payload = jsonb_set(payload, '{总金额}', '\"999.99\"')
   WHERE tenant_id = 22 AND callback_type = 'pay'" >/dev/null
run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=22 --facts old-facts.json \
    --report old1.json --discrepancies old1.ndjson wechat-old.csv
eq "a payment the table holds at 999.99: exit 5" 5 "$RC"
check "an amount_mismatch of -991.99 (the bill's 8.00 against 999.99)" python3 -c "
import json, sys
ls = [json.loads(l) for l in open('old1.ndjson')]
sys.exit(0 if [(l['category'], l['difference']) for l in ls] == [('amount_mismatch', '-991.99')] else 1)"

# reconcile of a bill its own totals refuse: exit 3, nothing compared, and
# its figures say so (it said 'rows read 5, compared 5' beside exit 3)
run reconcile -d "$DB" --dry-run --profile wechat-trade --set tenant_id=21 --rejects rj_rec.ndjson \
    --report badrec.json "$WORK/real-wechat-badtotal-退款总金额.csv"
eq "reconcile of a bill whose totals are off: exit 3" 3 "$RC"
check "its figures are nothing read, nothing compared" jtrue badrec.json \
    "(f := r['files'][0])['status'] == 'failed' and f['rows_read'] == 0 and f['would_merge'] == 0"

# --- bills as published (make_bills.py published(): each reproduced from a
# public file, its source named there)
# A WeChat SUCCESS bill: 20 columns under the ALL bill's 7-column summary,
# 退款总金额 `0.00 and no 退款金额 column; it was refused (exit 3, "the bill
# states 退款总金额 0.00 but its rows have no 退款金额 column").
imp wechat-trade pub-wechat-success.csv --set tenant_id=30
eq "published WeChat SUCCESS bill: exit 0, 5 read, 5 inserted" "0 5 5" \
    "$RC $(json i.json '" ".join(str(r["totals"][k]) for k in ("rows_read","inserted"))')"
eq "its 5 payments, 交易时间 in +08:00" \
"30 1572864513058gxaivpd pay 2019-11-04T10:52:59 2
30 1572865579667loevqgw pay 2019-11-04T11:10:42 2
30 1572865890364jryczgn pay 2019-11-04T11:15:51 2
30 1572866378743unbkuor pay 2019-11-04T11:24:03 2
30 1572868323023nkfdudu pay 2019-11-04T11:57:05 2" "$(rows wechat | grep '^30 ')"
refused "a SUCCESS bill stating refunds it cannot hold" "states 退款总金额 0.01 but its rows have no 退款金额 column" \
    wechat-trade pub-wechat-success-refundtotal.csv --set tenant_id=31
# The older 18-column SUCCESS bill, its 5-column summary stating 总退款金额 `0.00
imp wechat-trade pub-wechat-old-success.csv --set tenant_id=32
eq "published older SUCCESS bill: exit 0, its payment" "0
32 BV1R180418170252DS pay 2018-04-18T09:08:23 2" "$RC
$(rows wechat | grep '^32 ')"
# A PayPal STL whose SF and RF hold the money per currency ("SF","USD",...):
# refused as "the SF footer holds no record count: "USD"".  The counts are
# SC's (the section's) and RC's (the report's).
imp paypal-stl pub-paypal-stl.csv --set tenant_id=30
eq "published PayPal STL: exit 0, 2 read, 1 skipped (T0000 DR), 1 inserted" "0 2 1 1" \
    "$RC $(json i.json '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_skipped","inserted"))')"
eq "its payment: Invoice ID, completion time with its own offset" \
    "30 INV-77 pay 2024-08-20T08:02:05 2" "$(rows paypal | grep '^30 ')"
eq "its money as written: gross 1999, fee 88 (minor units)" "1999 88" \
    "$(q "SELECT payload->>'Gross Transaction Amount' || ' ' || (payload->>'Fee Amount') FROM payment_callback WHERE tenant_id = 30 AND channel = 'paypal'")"
refused "its SC stating 3 for a section of 2" "the SC footer states 3 records but its section holds 2" \
    paypal-stl pub-paypal-stl-badsc.csv --set tenant_id=31
# The same report cut after its RC (RF, RC there, FF never came): it was
# loaded, the rest of the report lost.
sed '/^"FF"/,$d' pub-paypal-stl.csv >pub-paypal-stl-cut.csv
refused "the STL opened by FH cut before its FF" "ends after a FH row without its FF footer" \
    paypal-stl pub-paypal-stl-cut.csv --set tenant_id=31
# The same report in UTF-16, as PayPal wrote older ones: it was refused
# advising --encoding gbk; it is refused naming UTF-16 and the conversion.
refused "the STL in UTF-16" "a UTF-16 file (its byte-order mark is FF FE): .*iconv -f UTF-16 -t UTF-8" \
    paypal-stl pub-paypal-stl-utf16.csv --set tenant_id=31

finish
