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
for bad in '"unclosed' '"a"b' 'a"b' 's.' '.t' 'a.b.c' ''; do
    run init -d "$DB" --table "$bad"
    eq "init --table '$bad': usage error" 2 $RC
done
finish
