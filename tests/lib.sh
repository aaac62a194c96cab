# Shared helpers of the command-line and database tests (bash).
# Each test file sources this, calls check/ok/fail, and ends with `finish`,
# which prints "N passed, M failed" and sets the exit status.
set -uo pipefail

IDEMLOAD=${IDEMLOAD:?IDEMLOAD (path of the binary) not set}
SRC=${IDEMLOAD_SRC:?IDEMLOAD_SRC not set}
GEN="python3 $SRC/scripts/gen_statements.py"
TEST_NAME=$(basename "$0" .sh)
# The layer is part of the work directory: tests/cli and tests/db both have a
# test_hostile.sh (and others), and ctest -j runs them at the same time.
WORK=${IDEMLOAD_TEST_TMP:-/tmp}/$(basename "$(dirname "$0")")-$TEST_NAME
rm -rf "$WORK" && mkdir -p "$WORK" && chmod 777 "$WORK"
cd "$WORK" || exit 1
PASSED=0
FAILED=0
# Every call of idemload goes through tests/idem_wrap.c (built beside it):
# a sanitizer's exit status (86, 87, 88) or a report in its stderr file,
# whatever the test does with them, is recorded in .run_failures, which
# `finish` fails on.  IDEMLOAD_REAL is the binary itself (its directory
# holds the generated docs); real_pid PID gives the idemload process of a
# wrapper started in the background (SIGSTOP cannot be passed on).
IDEMLOAD_REAL=$IDEMLOAD
if [ -n "${IDEMLOAD_WRAP:-}" ]; then
    [ -x "$IDEMLOAD_WRAP" ] || { echo "IDEMLOAD_WRAP: $IDEMLOAD_WRAP is not an executable"; exit 1; }
    export IDEMLOAD_WRAP_REAL=$IDEMLOAD IDEMLOAD_WRAP_LOG=$WORK/.run_failures
    IDEMLOAD=$IDEMLOAD_WRAP
fi
real_pid() {
    local c
    if [ "$IDEMLOAD" != "${IDEMLOAD_WRAP:-}" ]; then echo "$1"; return; fi
    for _ in $(seq 1 200); do
        c=$(cat "/proc/$1/task/$1/children" 2>/dev/null)
        [ -n "$c" ] && { echo "${c%% *}"; return; }
        kill -0 "$1" 2>/dev/null || break
        sleep 0.01
    done
    echo "$1"
}

ok() { PASSED=$((PASSED + 1)); echo "ok - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local d=$1; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }
# between N LO HI: N is an integer from LO to HI (a command for check, so
# that both bounds are inside it: `check d [ a ] && [ b ]` checks only a).
between() { [[ "$1" =~ ^-?[0-9]+$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
# eq DESCRIPTION EXPECTED ACTUAL
eq() {
    if [ "$2" == "$3" ]; then ok "$1"; else fail "$1: expected [$2], got [$3]"; fi
}
# A sanitizer report (ASan, LSan, UBSan) in a file: a finding fails the test
# whatever the exit status (a build with -DIDEMLOAD_SANITIZE=ON also exits
# 86/87 on one, never 1, which is idemload's "rows rejected").
SAN_RE='ERROR: (Address|Leak)Sanitizer|runtime error: |SUMMARY: (Address|Leak|UndefinedBehavior|Thread)Sanitizer|WARNING: ThreadSanitizer'
# san_check FILE WHAT: fails (and shows the report) when FILE holds one.
san_check() {
    if grep -aEq "$SAN_RE" "$1" 2>/dev/null; then
        fail "sanitizer report from $2:"
        grep -aE -A8 "$SAN_RE" "$1" | head -n 30 | sed 's/^/#   /'
        return 1
    fi
    return 0
}
# on_pty OUTFILE ARGS...: runs idemload ARGS with stderr on a pseudo-terminal
# (script(1) from util-linux) and stdout in stdout.txt;
# OUTFILE gets what the terminal showed, RC the exit status.
on_pty() {
    local out=$1
    shift
    script -qfec "$(printf '%q ' "$IDEMLOAD" "$@") >stdout.txt" /dev/null </dev/null >"$out" 2>&1
    RC=$?
    san_check "$out" "idemload $* on a terminal"
}
# run ARGS...: runs idemload; sets RC, OUT (stdout file), ERR (stderr file).
run() {
    OUT=$WORK/out.txt ERR=$WORK/err.txt
    # RUN_LIMIT=SECONDS: killed after that long (exit 124), for a run that
    # would hang rather than fail if it broke
    ${RUN_LIMIT:+timeout "$RUN_LIMIT"} "$IDEMLOAD" "$@" >"$OUT" 2>"$ERR"
    RC=$?
    san_check "$ERR" "idemload $*"
}
# idem_out ARGS...: idemload's standard output, for $(...) and pipes, where
# a failure could not be counted (a subshell): an exit status other than 0,
# or a sanitizer report in its stderr, is recorded for `finish` to fail the
# test, and its stderr is shown.
idem_out() {
    local o=$WORK/.io_out.$BASHPID e=$WORK/.io_err.$BASHPID rc
    "$IDEMLOAD" "$@" >"$o" 2>"$e"
    rc=$?
    if [ $rc -ne 0 ] || grep -aEq "$SAN_RE" "$e"; then
        { echo "idemload $*: exit $rc"; head -c 2000 "$e"; } >>"$WORK/.run_failures"
    fi
    cat "$o"
    rm -f "$o" "$e"
    return $rc
}
# san_file FILE WHAT: a file idemload's stderr went to by other means (a
# job's log): fails the test on a sanitizer report in it, passes otherwise.
san_file() {
    [ -f "$1" ] || { fail "$2: no log at $1"; return 1; }
    san_check "$1" "$2" && ok "$2: no sanitizer report"
}
# pin_yesterday: the day `date -d yesterday +%F` names from now on, for
# this test and what it starts, fixed at the test's first call (a `date`
# before the real one in PATH answers that one question, passing every
# other call through), so that a run across midnight cannot name two days.
pin_yesterday() {
    local real
    real=$(command -v date)
    PINNED_DAY=$("$real" -d yesterday +%F)
    mkdir -p "$WORK/.pin"
    cat >"$WORK/.pin/date" <<SH
#!/bin/sh
if [ "\$*" = "-d yesterday +%F" ]; then echo $PINNED_DAY; exit 0; fi
exec $real "\$@"
SH
    chmod +x "$WORK/.pin/date"
    export PATH=$WORK/.pin:$PATH
}
# jq-free JSON field reader: json FILE EXPR (python expression on `r`).
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
contains() { grep -q -- "$2" "$1"; }
finish() {
    local f
    # idemload started in the background writes its stderr to *.err files.
    for f in "$WORK"/*.err; do
        [ -f "$f" ] && san_check "$f" "a background run (${f##*/})"
    done
    if [ -s "$WORK/.run_failures" ]; then
        fail "idemload failed inside \$(...) (idem_out), or a sanitizer's exit or report (idem_wrap):"
        sed 's/^/#   /' "$WORK/.run_failures"
    fi
    if [ -s "$WORK/.q_failures" ]; then
        fail "psql failed $(wc -l <"$WORK/.q_failures") time(s):"
        sed 's/^/#   /' "$WORK/.q_failures"
    fi
    [ $((PASSED + FAILED)) -eq 0 ] && fail "$TEST_NAME ran no check at all"
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
    exit $?
}

# Database tests: connection to the fixture server and a fresh database.
pg_use() {
    local env=${IDEMLOAD_PGDIR:?}/env
    [ -f "$env" ] || { echo "no test server: $env missing (run via ctest)"; exit 1; }
    # shellcheck disable=SC1090
    . "$env"
}
# new_db NAME: (re)creates database NAME and exports PGDATABASE and DB (a URI).
new_db() {
    pg_use
    # --force: a backend of the previous step may still be on its way out
    # (a slow exit under the sanitizers), which a plain DROP refuses.
    dropdb --if-exists --force "$1" >/dev/null 2>&1
    createdb "$1" || { echo "createdb $1 failed"; exit 1; }
    export PGDATABASE=$1
    DB="postgresql:///$1?host=$PGHOST&port=$PGPORT&user=$PGUSER"
}
# q SQL / qd CONNINFO SQL: the result (unaligned, no headers).  A failure of
# psql never reads as an empty or zero result: it prints a line saying so
# (which no expected value matches), returns psql's status, and is recorded
# so that `finish` fails the test even when the caller ignored it.
qd() {
    local out rc errf=$WORK/.q_err.$BASHPID
    if [ -n "$1" ]; then
        out=$(psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$1" -c "$2" 2>"$errf")
    else
        out=$(psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$2" 2>"$errf")
    fi
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "exit $rc: ${2:0:200}: $(grep -v '^NOTICE' "$errf" | head -c 300 | tr '\n' ' ')" >>"$WORK/.q_failures"
        echo "<psql failed, exit $rc>"
        rm -f "$errf"
        return $rc
    fi
    grep -v '^NOTICE' "$errf" >&2
    rm -f "$errf"
    [ -z "$out" ] || printf '%s\n' "$out"
}
q() { qd "" "$1"; }
# init_db NAME: new_db NAME, then `idemload init` in it (a failure fails the test).
init_db() {
    new_db "$1"
    run init -d "$DB"
    [ "$RC" -eq 0 ] || fail "init in database $1: exit $RC: $(head -c 300 "$ERR")"
}
# expect_table DESCRIPTION EXPECTED_CSV [TABLE]: the active rows of TABLE
# (default payment_callback) are exactly the expected state (a
# gen_statements.py --expected file, or tests/expected_merge.py's output):
# the same keys, and for each its status, received_at (to the microsecond)
# and payload (as jsonb: the value, with numbers as written, 168.90).
EXPECTED_MERGE="python3 $SRC/tests/expected_merge.py"
expect_table() {
    local d=$1 exp=$2 t=${3:-payment_callback} out
    [ -s "$exp" ] || { fail "$d: no expected state in $exp"; return; }
    # Each side is read once and each difference computed once, hashed in
    # memory (work_mem): the checks run on 200k-row tables many times a suite.
    out=$(psql -X -q -t -A -v ON_ERROR_STOP=1 2>&1 <<SQL
SET work_mem = '256MB';
CREATE TEMP TABLE exp (tenant_id bigint, channel text, out_trade_no text, callback_type text,
                       status smallint, received_us bigint, payload jsonb);
\copy exp FROM '$exp' WITH (FORMAT csv, HEADER true)
CREATE TEMP TABLE want AS SELECT tenant_id, channel, out_trade_no, callback_type, status,
       received_us, payload::text AS payload FROM exp;
CREATE TEMP TABLE got AS SELECT tenant_id, channel, out_trade_no, callback_type, status,
       (extract(epoch FROM received_at) * 1000000)::bigint AS received_us, payload::text AS payload
  FROM $t WHERE deleted_at IS NULL;
CREATE TEMP TABLE only_want AS SELECT * FROM want EXCEPT ALL SELECT * FROM got;
CREATE TEMP TABLE only_got AS SELECT * FROM got EXCEPT ALL SELECT * FROM want;
SELECT (SELECT count(*) FROM want) || ' ' || (SELECT count(*) FROM only_want) || ' ' ||
       (SELECT count(*) FROM only_got);
SELECT 'expected: ' || w::text FROM (SELECT * FROM only_want ORDER BY 1, 2, 3, 4 LIMIT 3) w;
SELECT 'in table: ' || g::text FROM (SELECT * FROM only_got ORDER BY 1, 2, 3, 4 LIMIT 3) g;
SQL
)
    local first=${out%%$'\n'*}
    if [[ "$first" =~ ^[1-9][0-9]*\ 0\ 0$ ]]; then
        ok "$d (${first%% *} keys)"
    else
        fail "$d: expected keys, missing or different, unexpected: $first"
        printf '%s\n' "$out" | tail -n +2 | cut -c1-400 | sed 's/^/#   /'
    fi
}
# The server's log, for tests that check what was sent (they export
# PGOPTIONS='-c log_statement=all' for their own sessions):
# log_mark: remember where the log ends now;
# log_since: its lines since log_mark, of the current database only (the
# suite's tests run side by side on one server, and pg_local.sh prefixes
# each line with db=NAME).
log_mark() { LOG_START=$(stat -c %s "${IDEMLOAD_PGDIR:?}/server.log"); }
log_since() { tail -c +$((LOG_START + 1)) "${IDEMLOAD_PGDIR:?}/server.log" | grep -F " db=$PGDATABASE "; }
# golden_sql NAME: tests/golden/NAME as the server logs it, on one line (a
# golden file breaks its lines where the statement has a run of blanks:
# each line break stands for one blank; the final newline for none).
golden_sql() { sed -z -e 's/\n$//' -e 's/\n/ /g' "$SRC/tests/golden/$1"; }
# Proving that loads ran at once, not one after the other (a gate): every
# statement writing TABLE waits while the test holds advisory lock KEY, so
# loads started with distinct application names (PGAPPNAME=NAME idemload
# ...) are seen waiting together, each inside its first chunk, before the
# test lets them go.
# gate_close KEY [TABLE]: the trigger, and the lock held by a session of
# the test's (in the background) until gate_open.
gate_close() {
    local key=$1 t=${2:-payment_callback}
    q "CREATE OR REPLACE FUNCTION gate_$key() RETURNS trigger LANGUAGE plpgsql AS \$\$
       BEGIN PERFORM pg_advisory_lock_shared($key); PERFORM pg_advisory_unlock_shared($key); RETURN NULL; END \$\$;
       CREATE TRIGGER gate_$key BEFORE INSERT OR UPDATE ON $t FOR EACH STATEMENT EXECUTE FUNCTION gate_$key()" >/dev/null
    psql -X -q -c "SELECT pg_advisory_lock($key)" -c "SELECT pg_sleep(3600)" >/dev/null 2>&1 &
    GATE_HOLDER=$!
    for _ in $(seq 1 600); do
        [ "$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $key AND granted")" = 1 ] && return 0
        sleep 0.1
    done
    fail "gate $key: the test could not take its lock"
}
# gate_waiters KEY: the application names waiting at the gate, sorted; or
# waiting for another load's file lock (a load whose file another one is
# loading waits for it: it runs while the other is inside its load too).
gate_waiters() {
    q "SELECT coalesce(string_agg(DISTINCT a.application_name, ' ' ORDER BY a.application_name), '')
         FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database()
          AND (l.objid = $1 OR a.application_name <> 'idemload')"
}
# gate_wait KEY "NAME..." PID...: waits (up to 2 minutes) until every NAME
# waits at the gate at one moment, or one of the PIDs ended; then
# `eq` on what was seen.
gate_wait() {
    local key=$1 want=$2 p alive
    shift 2
    for _ in $(seq 1 1200); do
        [ "$(gate_waiters "$key")" = "$want" ] && break
        alive=1
        for p in "$@"; do kill -0 "$p" 2>/dev/null || alive=0; done
        [ $alive = 1 ] || break
        sleep 0.1
    done
    eq "all at once: $want seen waiting together, each inside its load" "$want" "$(gate_waiters "$key")"
}
# gate_open KEY [TABLE]: ends the test's session (the loads go on) and
# drops the trigger once they are through.
gate_open() {
    kill "$GATE_HOLDER" 2>/dev/null
    q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid() AND datname = current_database()" >/dev/null
    wait "$GATE_HOLDER" 2>/dev/null
}
gate_drop() { q "DROP TRIGGER gate_$1 ON ${2:-payment_callback}" >/dev/null; }
# Holding a load inside one chunk, with a lock, not a timer: the ledger
# row of chunk CHUNK waits for advisory lock KEY, which a psql session of the
# test holds through fd 7 (start idemload with 7>&-, so that it does not keep
# the pipe open), so the load stops inside that chunk with the chunks before
# it committed.
# chunk_hold KEY [CHUNK [CONDITION]]: from now on (default chunk 3;
# CONDITION: more SQL on NEW, e.g. "NEW.digest = '...'"), the trigger and
# the lock.
chunk_hold() {
    local key=$1 chunk=${2:-3} cond=${3:-true} fifo=$WORK/.hold_$1.fifo
    q "CREATE OR REPLACE FUNCTION chunk_hold_$key() RETURNS trigger LANGUAGE plpgsql AS
         \$\$BEGIN PERFORM pg_advisory_xact_lock_shared($key); RETURN NEW; END\$\$;
       CREATE TRIGGER chunk_hold_$key BEFORE INSERT ON idemload_ledger_chunk
         FOR EACH ROW WHEN (NEW.chunk_no = $chunk AND $cond) EXECUTE FUNCTION chunk_hold_$key()" >/dev/null
    rm -f "$fifo"; mkfifo "$fifo"
    psql -X -q -d "$PGDATABASE" <"$fifo" >/dev/null 2>&1 &
    HOLD_PSQL=$!
    exec 7>"$fifo"
    echo "SELECT pg_advisory_lock($key);" >&7
    for _ in $(seq 1 400); do
        [ "$(chunk_hold_locks "$key" granted)" -ge 1 ] && return 0
        sleep 0.05
    done
    fail "chunk_hold $key: the test could not take its lock"
}
# advisory_locks CONDITION [KEY]: how many advisory locks (of KEY, when
# given) of this database hold CONDITION ("granted": the test's; "NOT
# granted": the sessions waiting).  pg_locks shows the whole server's, where
# the suite's tests run side by side: never count them unscoped.
advisory_locks() {
    q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND ${2:+objid = $2 AND} $1
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
}
# chunk_hold_locks KEY CONDITION: advisory locks KEY of this database with
# CONDITION.
chunk_hold_locks() { advisory_locks "$2" "$1"; }
# chunk_wait KEY PID [N]: waits (up to 2 minutes) until N sessions (default
# 1) wait at the hold, or PID ended; succeeds when they wait.
chunk_wait() {
    local key=$1 pid=$2 n=${3:-1}
    for _ in $(seq 1 2400); do
        [ "$(chunk_hold_locks "$key" "NOT granted")" -ge "$n" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    [ "$(chunk_hold_locks "$key" "NOT granted")" -ge "$n" ]
}
# chunk_release: lets the held loads go on (the trigger stays);
# chunk_unhold KEY: that, and the trigger dropped.
chunk_release() { exec 7>&-; wait "$HOLD_PSQL" 2>/dev/null; }
chunk_unhold() { chunk_release; q "DROP TRIGGER chunk_hold_$1 ON idemload_ledger_chunk" >/dev/null; }
# table_exists NAME: whether the relation exists (never a psql failure).
table_exists() { [ "$(q "SELECT to_regclass('$1') IS NOT NULL")" = t ]; }
# jtrue FILE EXPR: succeeds when the python expression on `r` is true.
jtrue() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

# lock_waiters: how many idemload sessions of this database wait, not granted,
# in pg_advisory_lock (a second importer waiting for a file's lock).
lock_waiters() { q "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database() AND a.application_name = 'idemload' AND a.query LIKE 'SELECT pg_advisory_lock(%'"; }
# lock_wait PID: until one idemload session waits for an advisory lock, or
# process PID has ended (at most two minutes); the caller checks lock_waiters.
lock_wait() {
    local i
    for i in $(seq 1 1200); do
        [ "$(lock_waiters)" = 1 ] && return 0
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
