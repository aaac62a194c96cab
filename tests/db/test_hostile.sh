#!/usr/bin/env bash
# Hostile input against a real PostgreSQL (SPEC.md "Hostile input"): a
# --table that tries to be SQL, a password in a conninfo libpq cannot parse,
# a zip member longer than it says, a file name that is not UTF-8, local
# times in a daylight-saving gap or overlap compared with the server's own
# reading.
. "$(dirname "$0")/../lib.sh"
new_db hostile

# --- 1. --table is parsed into schema and name and quoted, never pasted
q "CREATE TABLE rt_victim (x int)"
run init -d "$DB" --table '"rt_t2"(id int); DROP TABLE rt_victim; COMMIT; --'
eq "init --table with SQL after a quoted name: usage error" 2 $RC
check "init: the victim table is still there" table_exists rt_victim
eq "init: no table made of the injected text" 0 "$(q "SELECT count(*) FROM pg_class WHERE relname LIKE 'rt_t2%'")"
for cmd in check status; do
    run "$cmd" -d "$DB" --table '"x"; DROP TABLE rt_victim; --'
    check "$cmd --table with SQL after a quoted name: refused (exit $RC)" [ "$RC" -ne 0 ]
    check "$cmd: the victim table is still there" table_exists rt_victim
done
q "CREATE SCHEMA s"
run init -d "$DB" --table 's."T"'
eq 'init --table s."T": exit 0' 0 $RC
eq 's."T" is the table T in schema s' "s.T" "$(q "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname IN ('T', '\"T\"') AND c.relkind = 'r'")"
eq 'its index is named after T' 1 "$(q "SELECT count(*) FROM pg_class WHERE relname = 'uk_T_biz_active'")"
run init -d "$DB" --table '"we""ird.na me"'
eq 'init --table "we""ird.na me": exit 0' 0 $RC
eq 'a quoted name keeps its dot, space and doubled quote' 1 "$(q "SELECT count(*) FROM pg_class WHERE relname = 'we\"ird.na me' AND relkind = 'r'")"
printf 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n1,wechat,K1,pay,0,{},2026-01-01T00:00:00Z\n' >one.csv
run import -d "$DB" --table 's."T"' one.csv
eq 'import --table s."T": exit 0' 0 $RC
eq 'the row is in s."T"' 1 "$(q 'SELECT count(*) FROM s."T"')"
# A table of that name without its index: the SQL the refusal advises is
# SQL (each name quoted where it must be), and pasted into psql it mends it.
q 'CREATE TABLE "we""ird.na me2" (LIKE "we""ird.na me" INCLUDING DEFAULTS)' >/dev/null
run import -d "$DB" --table '"we""ird.na me2"' one.csv
check 'import into it without the index: refused' [ "$RC" -ne 0 ]
hint=$(grep -o 'CREATE UNIQUE INDEX CONCURRENTLY [^;]*' "$ERR" | head -n 1)
eq 'the advised SQL names the index and the table quoted' \
    'CREATE UNIQUE INDEX CONCURRENTLY "uk_we""ird.na me2_biz_active" ON public."we""ird.na me2" (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL' "$hint"
check 'pasted into psql, the advised SQL builds the index' psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "$hint"
run import -d "$DB" --table '"we""ird.na me2"' one.csv
eq 'then the import loads: exit 0' 0 $RC
for bad in '"unclosed' '"a"b' 'a"b' 's.' '.t' 'a.b.c' ''; do
    run init -d "$DB" --table "$bad"
    eq "init --table '$bad': usage error" 2 $RC
done
run init -d "$DB"
eq "init of the default table: exit 0" 0 $RC

# --- 8. a zip member is held to its declared size before a row is committed
python3 - <<'PY'
import struct, zipfile
rows = "tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n" + \
    "".join("1,wechat,Z%d,pay,0,{},2026-01-01T00:00:00Z\n" % i for i in range(20000))
with zipfile.ZipFile("liar.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("liar.csv", rows)
b = bytearray(open("liar.zip", "rb").read())
assert b[:4] == b"PK\x03\x04"
struct.pack_into("<I", b, 22, 100)  # the local header's uncompressed size: 100 bytes
open("liar.zip", "wb").write(b)
PY
run import -d "$DB" --format csv --chunk-rows 1000 --report liar.json liar.zip
eq "zip member inflating past its declared 100 bytes: exit 3" 3 $RC
check "zip member: says it inflates past its declared size" grep -q 'member "liar.csv" inflates past its declared size of 100 bytes' "$ERR"
eq "zip member: no row of it committed" 0 "$(q "SELECT count(*) FROM payment_callback WHERE out_trade_no LIKE 'Z%'")"

# --- 9. a file name that is not UTF-8: in the ledger and the report, escaped
name=$(printf 'bill-\xb6\xd4\033.csv')
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '1,wechat,G1,pay,0,{},2026-01-01T00:00:00Z' >"$name"
run import -d "$DB" --report gbk.json "$name"
eq "a GBK file name: imported (exit 0)" 0 $RC
eq "a GBK file name: the row is in" 1 "$(q "SELECT count(*) FROM payment_callback WHERE out_trade_no = 'G1'")"
eq "a GBK file name: in the ledger escaped" 'bill-\xB6\xD4\u001B.csv' "$(q "SELECT file_name FROM idemload_ledger WHERE file_name LIKE 'bill-%'")"
check "a GBK file name: the report's path escaped" jtrue gbk.json 'r["files"][0]["path"] == "bill-\\xB6\\xD4\x1b.csv"'
eq "a GBK file name: its bytes in path_base64" "$(printf '%s' "$name" | base64)" "$(json gbk.json 'r["files"][0]["path_base64"]')"
# the rejects and the changes file name it the same way, with its bytes
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '1,wechat,G2,pay,0,{},2026-01-01T00:00:00Z' '1,wechat,,pay,0,{},2026-01-01T00:00:00Z' >"r-$name"
run import -d "$DB" --rejects gbk-rej.ndjson --changes gbk-chg.ndjson "r-$name"
eq "a GBK file name with a rejected row: exit 1" 1 $RC
for side in rej chg; do
    check "a GBK file name: the $side file's line escaped, its bytes in file_base64" python3 -c '
import base64, json, sys
o = json.loads(open(sys.argv[1]).readline())
assert o["file"] == "r-bill-\\xB6\\xD4\x1b.csv", o["file"]
assert base64.b64decode(o["file_base64"]) == sys.argv[2].encode("utf-8", "surrogateescape"), o
' "gbk-$side.ndjson" "r-$name"
done
run import -d "$DB" --report gbk2.json "$name"
eq "a GBK file name, again: skipped (exit 0)" "0 skipped" "$RC $(json gbk2.json 'r["files"][0]["status"]')"
printf 'tenant_id,channel\n1,x\n' >"$name"
run validate --report gbkv.json "$name"
eq "validate, a GBK-named file missing columns: exit 3" 3 $RC
check "validate: the report entry is complete (error, path, path_base64)" jtrue gbkv.json \
    '"no out_trade_no column" in r["files"][0]["error"] and r["files"][0]["path"].startswith("bill-\\xB6") and r["files"][0]["path_base64"]'

# --- 10. local times in a DST gap or overlap resolve as PostgreSQL does
for zone in America/New_York Europe/Berlin Australia/Lord_Howe; do
    cat >dst.json <<JSON
{"name": "dst", "encoding": "utf-8", "timezone": "$zone", "delimiter": ",",
 "columns": {"channel": {"value": "dst"}, "out_trade_no": {"from": ["local"]},
             "callback_type": {"value": "pay"}, "status": {"value": "0"},
             "received_at": {"from": ["local"]}, "tenant_id": {"value": "9"}}}
JSON
    # local times every 10 minutes from 3 h before to 3 h after each change
    # of 2026 (the gap, the overlap)
    python3 - "$zone" <<'PY'
import sys, datetime, zoneinfo
z = zoneinfo.ZoneInfo(sys.argv[1])
out = ["local"]
t = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
prev = t.astimezone(z).utcoffset()
while t.year == 2026:
    o = t.astimezone(z).utcoffset()
    if o != prev:  # a change: local times from 3 h before to 3 h after it
        loc = t.astimezone(z).replace(tzinfo=None)
        s = loc - datetime.timedelta(hours=3)
        while s <= loc + datetime.timedelta(hours=3):
            out.append(s.strftime("%Y-%m-%d %H:%M:%S"))
            s += datetime.timedelta(minutes=10)
        prev = o
    t += datetime.timedelta(minutes=10)
open("dst.csv", "w").write("\n".join(sorted(set(out), key=lambda v: (v != "local", v))) + "\n")
PY
    run import -d "$DB" --profile ./dst.json dst.csv
    eq "$zone: the bill imported (exit 0)" 0 $RC
    n=$(q "SELECT count(*) FROM payment_callback WHERE tenant_id = 9")
    check "$zone: $n local times around the changes loaded" [ "$n" -ge 60 ]
    eq "$zone: each as '...'::timestamp AT TIME ZONE resolves it" 0 \
        "$(q "SELECT count(*) FROM payment_callback WHERE tenant_id = 9 AND received_at <> out_trade_no::timestamp AT TIME ZONE '$zone'")"
    eq "$zone: each as '...'::timestamptz under TimeZone resolves it" 0 \
        "$(qd "$DB&options=-c%20TimeZone%3D${zone//\//%2F}" "SELECT count(*) FROM payment_callback WHERE tenant_id = 9 AND received_at <> out_trade_no::timestamptz")"
    q "DELETE FROM payment_callback WHERE tenant_id = 9; DELETE FROM idemload_ledger WHERE file_name = 'dst.csv'" >/dev/null
done
# the two cases of the issue, by value
eq "2026-03-08 02:30 New York (in the gap) is 07:30Z, as PostgreSQL says" \
    "$(q "SELECT to_char(timestamp '2026-03-08 02:30' AT TIME ZONE 'America/New_York' AT TIME ZONE 'UTC', 'HH24:MI')")" 07:30

# --- 5. the per-channel summary of an import: a channel's control
# characters as codes (the issue's channel clears the screen and retitles
# the terminal), and the property test's generated rows through it
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    "3,$(printf 'x\033[2J\033]0;TITLE\007'),E1,pay,0,{},2026-01-01T00:00:00Z" \
    "3,$(printf '\302\233'31m),E2,pay,0,{},2026-01-01T00:00:00Z" >esc.csv
run import -d "$DB" esc.csv
eq "a channel with ESC and BEL: imported (exit 0)" 0 $RC
check "the summary has a line per channel" grep -q 'x\\u001B\[2J\\u001B\]0;TITLE\\u0007 pay: rows 1' "$ERR"
check "no ESC, BEL or C1 CSI reaches stderr" python3 "$SRC/tests/hostile_gen.py" check-text "$ERR" ''
GENH="python3 $SRC/tests/hostile_gen.py"
bad=0
for seed in 101 102 103 104 105 106 107 108; do
    $GENH case "$seed" "case$seed"
    (cd "case$seed" && "$IDEMLOAD" import -d "$DB" --html page.html --rejects rj.ndjson -- bill-* \
        >out.txt 2>err.txt; echo $? >rc)
    rc=$(cat "case$seed/rc")
    [ "$rc" -le 1 ] || { fail "import of generated case $seed: exit $rc: $(head -c 300 "case$seed/err.txt")"; bad=1; }
    why=$($GENH check-text "case$seed/err.txt" '') || { fail "import, seed $seed: $why"; bad=1; }
    why=$($GENH check-page "case$seed/page.html" '') || { fail "import, seed $seed: $why"; bad=1; }
done
[ "$bad" -eq 0 ] && ok "import of 8 generated cases: no markup or control character in the summary or the page"
check "the generated files' names are in the ledger, escaped" \
    [ "$(q "SELECT count(*) FROM idemload_ledger WHERE file_name LIKE 'bill-%' AND file_name !~ '[\x01-\x1f\x7f]'")" -ge 9 ]

# --- deep nesting: what jsonb takes by default (12,000 levels) is loaded up
# to 10,000 levels; deeper is a rejected row with its reason, nothing lost
init_db hostile_deep
python3 -c "
print('tenant_id,channel,out_trade_no,callback_type,status,payload,received_at')
for n in (9999, 10001):
    p = '{\"a\":' * n + '1' + '}' * n
    print('1,wx,D%d,pay,1,\"%s\",2026-11-20T10:00:00Z' % (n, p.replace('\"', '\"\"')))
" >deep.csv
run import -d "$DB" --rejects deep_rj.ndjson deep.csv
eq "a payload 9,999 levels deep loads, one 10,001 deep is rejected: exit 1" 1 "$RC"
eq "the deep payload is in the table, whole" "D9999|9999" \
    "$(q "SELECT out_trade_no, length(payload::text) - length(replace(payload::text, '{', '')) FROM payment_callback")"
check "the deeper one's reject says why" grep -q 'nesting too deep' deep_rj.ndjson

finish
