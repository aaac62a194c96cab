#!/usr/bin/env bash
# The custom-profile example the package installs (SPEC.md "Installing it":
# share/doc/idemload/ holds "examples: a systemd service and timer, a
# crontab line, a custom profile"), used as installed: `cmake --install`
# into a scratch root (DESTDIR, prefix /usr, as a package build does), then
# the installed idemload imports a WeChat fund-flow bill (资金账单) with the
# installed profile-wechat-fundflow.json.  The rows it must leave are
# written out by hand from the bill: out_trade_no the 业务凭证号 (else the
# 微信支付业务单号), callback_type fund-in:/fund-out: plus the 资金流水单号,
# 记账时间 in Asia/Shanghai, status 2; a movement of a kind the profile does
# not map is rejected; a bill whose count line disagrees loads nothing.
. "$(dirname "$0")/../lib.sh"
BUILD=${IDEMLOAD_BUILD:-$(dirname "$IDEMLOAD_REAL")}

DESTDIR=$WORK/root cmake --install "$BUILD" --prefix /usr >install.log 2>&1
eq "cmake --install into a scratch root exits 0" 0 $?
P=$WORK/root/usr
PROFILE=$P/share/doc/idemload/examples/profile-wechat-fundflow.json
check "the example profile is installed" test -s "$PROFILE"
check "the installed idemload runs" test -x "$P/bin/idemload"
# run (tests/lib.sh) uses the installed binary from here on (through
# the wrapper when there is one)
if [ "$IDEMLOAD" = "${IDEMLOAD_WRAP:-}" ]; then export IDEMLOAD_WRAP_REAL=$P/bin/idemload; else IDEMLOAD=$P/bin/idemload; fi

bill() {  # bill FILE COUNT ROW...: a fund-flow bill, CRLF, with its count line
    local f=$1 n=$2; shift 2
    {
        printf '%s\r\n' '记账时间,微信支付业务单号,资金流水单号,业务名称,业务类型,收支类型,收支金额(元),账户结余(元),资金变更提交申请人,备注,业务凭证号'
        printf '%s\r\n' "$@"
        printf '%s\r\n' '资金流水总笔数,收入笔数,收入金额,支出笔数,支出金额' "\`$n,\`2,\`111.00,\`2,\`31.00"
    } >"$f"
}
ROWS=('`2024-05-01 09:00:00,`4200000001,`F0,`交易,`交易,`收入,`99.00,`99.00,`system,`,`ORD1'
      '`2024-05-01 10:15:02,`4200000001,`F1,`退款,`退款,`支出,`30.00,`69.00,`system,`,`ORD1'
      '`2024-05-01 23:30:00,`4200000002,`F2,`交易,`交易,`收入,`12.00,`81.00,`system,`,`'
      '`2024-05-01 23:59:00,`4200000003,`F3,`冻结,`冻结,`冻结,`1.00,`80.00,`system,`,`ORD3')
bill fundflow.csv 4 "${ROWS[@]}"
bill fundflow-badcount.csv 5 "${ROWS[@]}"

init_db installed_profile
rows() {
    q "SET timezone = 'UTC'; SELECT string_agg(format('%s %s %s %s %s %s', tenant_id, channel, out_trade_no, callback_type,
         to_char(received_at, 'YYYY-MM-DD\"T\"HH24:MI:SS'), status), E'\n' ORDER BY out_trade_no, callback_type)
       FROM payment_callback WHERE deleted_at IS NULL"
}
run import -d "$DB" --profile "$PROFILE" --set tenant_id=5 --rejects bad.rj --report bad.json fundflow-badcount.csv
eq "count line 5 for 4 rows: exit 3" 3 $RC
eq "count line wrong: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback")"
run import -d "$DB" --profile "$PROFILE" --set tenant_id=5 --rejects rj.ndjson --report rep.json fundflow.csv
eq "the installed profile imports its bill: exit 1 (one movement rejected)" 1 $RC
eq "4 read, 1 rejected, 3 inserted" "4 1 3" \
    "$(json rep.json '" ".join(str(r["totals"][k]) for k in ("rows_read", "rows_rejected", "inserted"))')"
eq "the rows the bill gives by the example's rules" \
"5 wechat 4200000002 fund-in:F2 2024-05-01T15:30:00 2
5 wechat ORD1 fund-in:F0 2024-05-01T01:00:00 2
5 wechat ORD1 fund-out:F1 2024-05-01T02:15:02 2" "$(rows)"
eq "the payload keeps the bill's columns as text, backticks gone" "30.00|F1|支出" \
    "$(q "SELECT payload->>'收支金额(元)' || '|' || (payload->>'资金流水单号') || '|' || (payload->>'收支类型') FROM payment_callback WHERE callback_type = 'fund-out:F1'")"
check "the unmapped movement rejected, naming its value" grep -q '收支类型 \\"冻结\\"' rj.ndjson
run import -d "$DB" --profile "$PROFILE" --set tenant_id=5 --rejects rj2.ndjson --report again.json fundflow.csv
eq "the same command again: skipped" "0 skipped" "$RC $(json again.json 'r["files"][0]["status"]')"
finish
