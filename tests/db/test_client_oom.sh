#!/usr/bin/env bash
# The client out of memory inside a chunk (issue 47, point 4; SPEC.md
# "Exit status": 3): injected (IDEMLOAD_FAULT, util/fault.h) where a
# lane's COPY buffer grows and where a chunk's --changes lines are
# rendered.  Each run exits 3, says the client ran out of memory, neither
# hints at the server (no statement_timeout) nor prints an empty
# "(SQLSTATE )", loads nothing and leaves the file unfinished: the same
# command without the fault then loads it whole.
. "$(dirname "$0")/../lib.sh"
init_db client_oom
$GEN --rows 3000 --seed 47 --out a.csv --quiet

for fault in copy-oom changes-oom; do
    q "TRUNCATE payment_callback" >/dev/null
    q "DROP TABLE IF EXISTS idemload_ledger_chunk, idemload_ledger" >/dev/null
    OUT=$WORK/out.txt ERR=$WORK/err.txt
    IDEMLOAD_FAULT=$fault "$IDEMLOAD" import -d "$DB" --chunk-rows 1000 --changes ch.ndjson \
        --rejects rj.ndjson a.csv >"$OUT" 2>"$ERR"
    RC=$?
    san_check "$ERR" "import with $fault"
    eq "$fault: exit 3 (the client out of memory)" 3 "$RC"
    check "$fault: the message says the client ran out of memory" grep -q "out of memory (client)" "$ERR"
    check "$fault: no hint about the server's statement_timeout" bash -c '! grep -q statement_timeout "$1"' _ "$ERR"
    check "$fault: no empty (SQLSTATE )" bash -c '! grep -qF "(SQLSTATE )" "$1"' _ "$ERR"
    eq "$fault: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback")"
    run import -d "$DB" --chunk-rows 1000 --changes ch2.ndjson --rejects rj.ndjson a.csv
    eq "$fault: the same command without the fault: exit 0" 0 "$RC"
    check "$fault: ... and loads the file (not skipped as completed)" \
        test "$(q "SELECT count(*) FROM payment_callback")" -gt 0
done
finish
