#!/usr/bin/env bash
# SIGINT/SIGTERM end an import within --cancel-wait even on a hung server
# (SPEC.md, "Crash safety, reruns and concurrency", the SIGTERM paragraph):
# a cancel request, then the connections closed after the bounded wait (for
# all connections together); exit 130; the chunk in flight rolled back, the
# committed ones kept, and the same command resumes.
#
# The hang is real: the import is held inside chunk 3 by a trigger on the
# ledger's chunk table that waits for an advisory lock this test holds
# (chunk_hold in tests/lib.sh); then
# its backends are stopped with kill -STOP, so they answer neither the
# query nor the cancel.  They are resumed (kill -CONT) afterwards, and on
# any exit of this script.
. "$(dirname "$0")/../lib.sh"
pg_use

STOPPED=""
resume_backends() { [ -n "$STOPPED" ] && kill -CONT $STOPPED 2>/dev/null; STOPPED=""; }
trap resume_backends EXIT

snap() {
    q "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, (extract(epoch from received_at)*1000000)::bigint), ',' ORDER BY tenant_id, channel COLLATE \"C\", out_trade_no COLLATE \"C\", callback_type COLLATE \"C\")), '-') FROM payment_callback WHERE deleted_at IS NULL"
}
backends_gone() {
    for _ in $(seq 1 400); do
        [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'idemload'")" -eq 0 ] && return 0
        sleep 0.05
    done
    return 1
}
now_ms() { date +%s%3N; }

$GEN --rows 20000 --seed 2612 --dup-rate 0.1 --format csv --out f.csv --quiet
init_db cw_clean
run import -d "$DB" --chunk-rows 2000 f.csv
eq "clean load: exit 0" 0 $RC
CLEAN=$(snap)

# hung_term NAME WAIT_S JOBS SIGNALS [OPTIONS...]: starts the import, waits
# until its JOBS sessions wait inside chunk 3, stops their backends, sends
# SIGNALS SIGTERMs (one a second apart), and checks it ends with 130 within
# the wait (plus slack for a busy machine) though the backends never answer.
hung_term() {
    local name=$1 wait_s=$2 jobs=$3 signals=$4
    shift 4
    init_db "cw_$name"
    printf 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n9,wechat,CW1,pay,1,"{}",2026-11-28T10:00:00Z\n' >tiny.csv
    run import -d "$DB" tiny.csv        # creates the ledger
    q "DELETE FROM payment_callback"
    chunk_hold 2626
    "$IDEMLOAD" import -d "$DB" --chunk-rows 2000 --jobs "$jobs" "$@" --report "$name.json" f.csv \
        >/dev/null 2>"$name.err" 7>&- &
    local pid=$! waiting=0
    chunk_wait 2626 $pid "$jobs" && waiting=1
    eq "$name: the import's $jobs session(s) wait inside chunk 3" 1 $waiting
    STOPPED=$(q "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'idemload'")
    # shellcheck disable=SC2086
    kill -STOP $STOPPED
    local t0 t1 rc
    t0=$(now_ms)
    kill -TERM $pid
    for _ in $(seq 2 "$signals"); do sleep 1; kill -TERM $pid 2>/dev/null; done
    # Wait for it, but never for ever: a watchdog kills it past the bound.
    local limit=$((wait_s + 8))
    ( sleep "$limit"; kill -9 $pid 2>/dev/null ) &
    local dog=$!
    wait $pid; rc=$?
    t1=$(now_ms)
    kill $dog 2>/dev/null; wait $dog 2>/dev/null
    eq "$name: exit 130" 130 $rc
    check "$name: ended within --cancel-wait ${wait_s}s (+ slack): $((t1 - t0)) ms" \
        test $((t1 - t0)) -le $(((wait_s + 5) * 1000))
    check "$name: it did wait for the cancel first (>= ${wait_s}s): $((t1 - t0)) ms" \
        test $((t1 - t0)) -ge $((wait_s * 1000 - 200))
    check "$name: says it closed the connections" grep -q "closing the connections" "$name.err"
    resume_backends
    chunk_unhold 2626
    backends_gone || fail "$name: the stopped backends did not end after resuming"
    eq "$name: chunks 1 and 2 committed, chunk 3 rolled back" "loading 2" \
        "$(q "SELECT status FROM idemload_ledger WHERE file_name = 'f.csv'") $(q "SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk c JOIN idemload_ledger l USING (target, digest) WHERE l.file_name = 'f.csv'")"
    run import -d "$DB" --chunk-rows 2000 --jobs "$jobs" f.csv
    eq "$name: the same command resumes and completes" 0 $RC
    check "$name: resumed after chunk 2" grep -q "resumed after chunk 2[^0-9]" "$ERR"
    eq "$name: table equals a clean load" "$CLEAN" "$(snap)"
}

hung_term wait2 2 1 1 --cancel-wait 2
hung_term jobs2_three_signals 3 2 3 --cancel-wait 3
hung_term default_wait 10 1 1

# The option is checked like the others.
run import --cancel-wait -1 f.csv
eq "--cancel-wait -1: usage error" 2 $RC
finish
