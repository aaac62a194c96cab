#!/usr/bin/env bash
# The server's own limits on a session, as a DBA sets them for a role or a
# database: a statement_timeout that cancels a chunk's statement is the
# load's failure (exit 4, the server's words, SQLSTATE 57014 and what to
# change), never "interrupted" (exit 130: nobody pressed Ctrl-C); a
# lock_timeout that gives up on another session's lock is retried with
# backoff like a deadlock (--retries), so a short-lived lock does not fail
# the nightly load.
. "$(dirname "$0")/../lib.sh"
pg_use

$GEN --rows 3000 --seed 11 --dup-rate 0 --format csv --out rows.csv --quiet
count() { q "SELECT count(*) FROM payment_callback"; }
completed() {
    if [ "$(q "SELECT to_regclass('idemload_ledger') IS NULL")" = t ]; then echo none; return; fi
    q "SELECT count(*) FROM idemload_ledger WHERE status = 'completed'"
}
lacks() { ! grep -q -- "$2" "$1"; }

# --- statement_timeout: a statement trigger slower than the timeout -----
init_db sl_timeout
q "CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN PERFORM pg_sleep(0.4); RETURN NULL; END \$\$;
   CREATE TRIGGER slow BEFORE INSERT ON payment_callback FOR EACH STATEMENT EXECUTE FUNCTION slow();" >/dev/null
for mode in append merge dry; do
    case $mode in
    append) extra=() ;;
    merge) extra=(--no-append) ;;
    dry) extra=(--dry-run) ;;
    esac
    rm -f rj.ndjson
    PGOPTIONS="-c statement_timeout=150" run import -d "$DB" "${extra[@]}" --rejects rj.ndjson \
        --report t_$mode.json rows.csv
    eq "statement_timeout ($mode): exit 4, not 130" 4 $RC
    check "statement_timeout ($mode): stderr names SQLSTATE 57014" contains "$ERR" "(SQLSTATE 57014)"
    check "statement_timeout ($mode): stderr names statement_timeout as the likely cause" \
        contains "$ERR" "a statement_timeout (the role's or the database's)"
    check "statement_timeout ($mode): stderr does not say interrupted" lacks "$ERR" "interrupted"
    check "statement_timeout ($mode): the load failed, not a row" contains "$ERR" "the load failed, not a row"
    check "statement_timeout ($mode): the report's error holds the server's words" \
        jtrue t_$mode.json '"57014" in r["files"][0]["error"] and r["files"][0]["status"] == "failed"'
    check "statement_timeout ($mode): nothing rejected" test ! -s rj.ndjson
    eq "statement_timeout ($mode): nothing in the table" 0 "$(count)"
done
eq "statement_timeout: the file is not completed in the ledger" 0 "$(completed)"
# Without the timeout, the same command loads the file.
run import -d "$DB" --rejects rj.ndjson rows.csv
eq "no statement_timeout: the same command loads it, exit 0" 0 $RC
eq "no statement_timeout: every row" 3000 "$(count)"
eq "no statement_timeout: completed in the ledger" 1 "$(completed)"

# --- a default isolation level other than read committed ----------------
# The merge is written for read committed; a role's or database's default
# of serializable or repeatable read must not reach the load's
# transactions.  A statement trigger refuses any other level (as the load's
# failure, 0A000), so a transaction at another level fails the import.
init_db sl_iso
q "CREATE FUNCTION iso_guard() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
     IF current_setting('transaction_isolation') <> 'read committed' THEN
       RAISE EXCEPTION 'the load ran at %', current_setting('transaction_isolation') USING ERRCODE = '0A000';
     END IF; RETURN NULL; END \$\$;
   CREATE TRIGGER iso_guard BEFORE INSERT OR UPDATE ON payment_callback FOR EACH STATEMENT EXECUTE FUNCTION iso_guard();" >/dev/null
for iso in serializable 'repeatable read'; do
    q "ALTER DATABASE sl_iso SET default_transaction_isolation = '$iso'" >/dev/null
    run import -d "$DB" --dry-run --chunk-rows 500 --rejects rj.ndjson rows.csv
    eq "database default $iso: a dry run's transaction is read committed (exit 0)" 0 $RC
    check "database default $iso: dry run, no retry" lacks "$ERR" "retry"
    run import -d "$DB" --force --chunk-rows 500 --rejects rj.ndjson rows.csv
    eq "database default $iso: the import's transactions are read committed (exit 0)" 0 $RC
    check "database default $iso: the lanes never failed each other (no retry)" lacks "$ERR" "retry"
    eq "database default $iso: every row" 3000 "$(count)"
done

# --- lock_timeout: another session holds a lock the load needs ----------
# hold: a session holds SHARE on the table (it blocks INSERT and UPDATE,
# not SELECT) until release; returns once the lock is granted.  No timer:
# the test lets go when it has seen what it waits for, however slow the
# build (a sanitizer's) is.
hold() {
    psql -X -q -c "BEGIN; LOCK TABLE payment_callback IN SHARE MODE; SELECT pg_sleep(3600); COMMIT;" \
        >/dev/null 2>&1 &
    HOLDER=$!
    local i
    for i in $(seq 600); do
        [ "$(q "SELECT count(*) FROM pg_locks WHERE relation = 'payment_callback'::regclass
                AND mode = 'ShareLock' AND granted")" = 1 ] && return 0
        sleep 0.05
    done
    fail "the lock holder never got its lock"
}
release() {
    kill "$HOLDER" 2>/dev/null
    q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid() AND datname = current_database()" >/dev/null
    wait "$HOLDER" 2>/dev/null
}
# bg_import ARGS...: idemload import in the background (PID, ERR = bg.err).
bg_import() {
    ERR=$WORK/bg.err
    "$IDEMLOAD" import "$@" >/dev/null 2>"$ERR" &
    PID=$!
}

init_db sl_lock
hold
PGOPTIONS="-c lock_timeout=200" bg_import -d "$DB" --retries 6 --rejects rj.ndjson rows.csv
for _ in $(seq 1 1200); do
    grep -q "retry 1 of 6" "$ERR" 2>/dev/null && break
    kill -0 $PID 2>/dev/null || break
    sleep 0.05
done
release
wait $PID; RC=$?
san_check "$ERR" "idemload import (lock_timeout)"
eq "lock_timeout, lock released after the first retry: retried, then loaded: exit 0" 0 $RC
check "lock_timeout: the retry is said, with SQLSTATE 55P03" contains "$ERR" "(SQLSTATE 55P03); retry 1 of 6"
eq "lock_timeout: every row" 3000 "$(count)"
eq "lock_timeout: completed in the ledger" 1 "$(completed)"

init_db sl_lock0
hold
PGOPTIONS="-c lock_timeout=200" run import -d "$DB" --retries 1 --rejects rj.ndjson rows.csv
release
eq "lock_timeout outlasting --retries 1: exit 4" 4 $RC
check "lock_timeout outlasting the retries: says so, with SQLSTATE 55P03" \
    contains "$ERR" "failed after 1 retry: canceling statement due to lock timeout (SQLSTATE 55P03)"
eq "lock_timeout outlasting the retries: nothing in the table" 0 "$(count)"
run import -d "$DB" --rejects rj.ndjson rows.csv
eq "lock released: the same command loads it, exit 0" 0 $RC
eq "lock released: every row" 3000 "$(count)"

finish
