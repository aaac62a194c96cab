#!/usr/bin/env bash
# One rule for exit statuses (SPEC.md "Exit status"): the same cause gives
# the same status in every command.  An unreachable server is 4 in import,
# init, check, dedupe, create-index and status; a --table that does not
# exist is 2 wherever a table must exist; a role the server refuses (no
# privilege: import and dedupe read the table; check reads only the
# catalog) is 4; an unwritable --report is 3.
. "$(dirname "$0")/../lib.sh"
pg_use
init_db ex_rule
printf 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n9,wechat,EX1,pay,1,"{}",2026-11-28T10:00:00Z\n' >t.csv
UNREACHABLE="host=$WORK/no-such-socket-dir port=1 connect_timeout=2"

for cmd in "import t.csv" init check dedupe create-index status "reconcile t.csv"; do
    # shellcheck disable=SC2086
    run $cmd -d "$UNREACHABLE" -q
    eq "$cmd, unreachable server: exit 4" 4 $RC
done
# The client out of memory while connecting (injected, util/fault.h): 3,
# as anywhere else (SPEC.md "Exit status"), not the database's 4.
for cmd in "import t.csv" init check dedupe create-index status "reconcile t.csv"; do
    # shellcheck disable=SC2086
    IDEMLOAD_FAULT=connect-oom "$IDEMLOAD" $cmd -d "$DB" -q >"$WORK/out.txt" 2>"$WORK/err.txt"
    RC=$? ERR=$WORK/err.txt
    san_check "$ERR" "$cmd with connect-oom"
    eq "$cmd, out of memory connecting: exit 3" 3 $RC
    check "$cmd, out of memory connecting: says so" grep -q "out of memory (client)" "$ERR"
done
# Reconcile out of memory after connecting, before it stages (its zone and
# kind names): 3 with the cause said, not an unlogged 4.
IDEMLOAD_FAULT=recon-oom "$IDEMLOAD" reconcile t.csv -d "$DB" -q >"$WORK/out.txt" 2>"$WORK/err.txt"
RC=$?
san_check "$WORK/err.txt" "reconcile with recon-oom"
eq "reconcile, out of memory before staging: exit 3" 3 $RC
check "reconcile, out of memory before staging: says so" grep -q "reconcile: out of memory" "$WORK/err.txt"
for cmd in "import t.csv" check dedupe create-index status; do
    # shellcheck disable=SC2086
    run $cmd -d "$DB" --table no_such_table -q
    eq "$cmd, --table that does not exist: exit 2" 2 $RC
    # shellcheck disable=SC2086
    run $cmd -d "$DB" --table no_such_schema.t -q
    eq "$cmd, --table in a schema that does not exist: exit 2" 2 $RC
done

# A role the server refuses: the same database error everywhere.
q "DROP ROLE IF EXISTS ex_nopriv; CREATE ROLE ex_nopriv LOGIN; REVOKE ALL ON payment_callback FROM PUBLIC" >/dev/null
NOPRIV="postgresql:///ex_rule?host=$PGHOST&port=$PGPORT&user=ex_nopriv"
for cmd in "import t.csv" dedupe; do
    # shellcheck disable=SC2086
    run $cmd -d "$NOPRIV" -q
    eq "$cmd, no privilege on the table: exit 4" 4 $RC
done

# An unwritable report: 3 in every command that writes one.
for cmd in "import t.csv" check dedupe status; do
    # shellcheck disable=SC2086
    run $cmd -d "$DB" --report /dev/full -q
    eq "$cmd, --report /dev/full: exit 3" 3 $RC
done
q "DROP OWNED BY ex_nopriv; DROP ROLE ex_nopriv" >/dev/null
finish
