#!/usr/bin/env bash
# Inputs that can be read only once: standard input, a pipe (`<(zcat f.gz)`),
# a FIFO.  They are read once, whole: not hashed first (the digest's read
# consumed the pipe and the load found 0 rows, exit 0), and a profile whose
# count needs two passes refuses them (tests/db/test_import.sh loads one).
# SIGINT and SIGTERM stop a run within seconds with exit 130 (SPEC.md "Exit
# status") even while its input sends nothing: a pipe whose producer stalls
# (stdin, a FIFO with a writer that writes nothing) and a FIFO no writer has
# opened yet.  The reads waited for input and retried the interrupted
# read(): the run ended only when the producer did (18 s after the signal),
# and an interrupted open of a FIFO was exit 3 "cannot open".
. "$(dirname "$0")/../lib.sh"

# stopped_within PID SECONDS: PID has ended within SECONDS.
stopped_within() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.05
    done
    return 1
}

# interrupt SIGNAL NAME ARGS...: starts idemload ARGS in the background,
# sends SIGNAL after a second, and checks that it stops within 5 seconds
# with exit 130 and says it was interrupted.
interrupt() {
    local sig=$1 name=$2 pid rc
    shift 2
    # (a job in the background reads /dev/null unless told otherwise)
    "$IDEMLOAD" "$@" <"${STDIN_FROM:-/dev/null}" >"$name.out" 2>"$name.err" &
    pid=$!
    sleep 1
    kill -"$sig" "$pid"
    if stopped_within "$pid" 5; then
        ok "$name: SIG$sig stops it within 5 s"
    else
        fail "$name: SIG$sig stops it within 5 s"
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid"
    rc=$?
    eq "$name: exit 130" 130 "$rc"
    check "$name: the summary says the input was interrupted" grep -q "interrupted" "$name.err"
}

# A pipe from process substitution, and a FIFO with data: every row read,
# no digest (the report says null).
printf '%s\n' '{"tenant_id":1,"channel":"c","out_trade_no":"A1","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-01T00:00:00Z"}' \
    '{"tenant_id":1,"channel":"c","out_trade_no":"A2","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-01T00:00:00Z"}' >two.ndjson
run validate --format ndjson --rejects rj.ndjson --report ps.json <(cat two.ndjson)
eq "validate <(cat FILE): exit 0" 0 "$RC"
check "validate <(cat FILE): both rows read, no digest" jtrue ps.json \
    "r['totals']['rows_read'] == 2 and r['files'][0]['digest'] is None"
mkfifo withdata
cat two.ndjson >withdata &
run validate --format ndjson --rejects rj.ndjson --report fifo.json withdata
wait
check "validate FIFO: both rows read" jtrue fifo.json "r['totals']['rows_read'] == 2"

# A FIFO with a writer that writes nothing: validate, and import's reading
# (the database is never reached: the signal comes first, and the stage
# that waits is the same in every command).
mkfifo stalled
exec 3<>stalled
interrupt TERM stalled-validate validate --format ndjson --rejects rj.ndjson stalled
interrupt INT stalled-validate-int validate --format csv --rejects rj.ndjson stalled
exec 3>&-

# Standard input from a producer that stalls.
mkfifo feed
exec 4<>feed
STDIN_FROM=feed interrupt TERM stdin validate --format ndjson --rejects rj.ndjson -
exec 4>&-

# A FIFO no writer has opened: the open itself is interrupted.
mkfifo nowriter
interrupt INT nowriter validate --format ndjson --rejects rj.ndjson nowriter
check "nowriter: not reported as unreadable" test "$(grep -c 'cannot open' nowriter.err)" -eq 0

finish
