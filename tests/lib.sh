# Shared helpers of the command-line and database tests (bash).
# Each test file sources this, calls check/ok/fail, and ends with `finish`,
# which prints "N passed, M failed" and sets the exit status.
set -uo pipefail

IDEMLOAD=${IDEMLOAD:?IDEMLOAD (path of the binary) not set}
SRC=${IDEMLOAD_SRC:?IDEMLOAD_SRC not set}
GEN="python3 $SRC/scripts/gen_statements.py"
TEST_NAME=$(basename "$0" .sh)
WORK=${IDEMLOAD_TEST_TMP:-/tmp}/$TEST_NAME
rm -rf "$WORK" && mkdir -p "$WORK" && chmod 777 "$WORK"
cd "$WORK" || exit 1
PASSED=0
FAILED=0

ok() { PASSED=$((PASSED + 1)); echo "ok - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local d=$1; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }
# eq DESCRIPTION EXPECTED ACTUAL
eq() {
    if [ "$2" == "$3" ]; then ok "$1"; else fail "$1: expected [$2], got [$3]"; fi
}
# run ARGS...: runs idemload; sets RC, OUT (stdout file), ERR (stderr file).
run() {
    OUT=$WORK/out.txt ERR=$WORK/err.txt
    "$IDEMLOAD" "$@" >"$OUT" 2>"$ERR"
    RC=$?
}
# jq-free JSON field reader: json FILE EXPR (python expression on `r`).
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
contains() { grep -q -- "$2" "$1"; }
finish() {
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
    dropdb --if-exists "$1" >/dev/null 2>&1
    createdb "$1" || { echo "createdb $1 failed"; exit 1; }
    export PGDATABASE=$1
    DB="postgresql:///$1?host=$PGHOST&port=$PGPORT&user=$PGUSER"
}
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"; }
# jtrue FILE EXPR: succeeds when the python expression on `r` is true.
jtrue() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
