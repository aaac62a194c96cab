#!/usr/bin/env bash
# reconcile's discrepancies file when the run fails half-way (SPEC.md,
# "Reconcile", "The discrepancies file" and "Writes"): the connection lost
# while the lines are being fetched leaves --discrepancies PATH as it was (no
# list cut short that a script would take for the day's), no temporary file
# beside it, and the register as it was; the same command then writes the
# whole list.  A path that is not a regular file (a pipe, /dev/null) is
# written as it is, never replaced.
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
N=200000
# Under a sanitizer the client is several times slower: 60,000 lines still
# leave the kill its window, and a rescan per item (the bug the corrected
# statement checks) would still take minutes, not seconds.
[ -n "${IDEMLOAD_INSTRUMENTED:-}" ] && N=60000
# N statement rows, none in the table: N missing_in_table lines.
{ echo "$header"; gen 1 $N M; } >s.csv
lines_ok() {   # lines_ok FILE N: N lines, each one JSON object, all missing_in_table
    python3 - "$1" "$2" <<'PY'
import json, sys
n = 0
for l in open(sys.argv[1], encoding='utf-8'):
    o = json.loads(l)
    assert o['category'] == 'missing_in_table', o
    n += 1
sys.exit(0 if n == int(sys.argv[2]) else 1)
PY
}

init_db recon_int
printf 'the list of an earlier day\n' >d.ndjson
cp d.ndjson before.ndjson
before_reg=$(register)

# The run killed mid-stream: stopped once the temporary file holds lines,
# its backend terminated, then let go on.
held_while_writing r1.err reconcile -d "$DB" --period 2026-11-20 --discrepancies d.ndjson --report r1.json s.csv
check "the run was caught while writing its discrepancies (a temporary file beside PATH)" test $caught = 1
q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
   WHERE datname = current_database() AND pid <> pg_backend_pid()" >/dev/null
kill -CONT $held
wait $pid; rc=$?
eq "the connection lost mid-stream: exit 4" 4 $rc
check "the error says the database failed" grep -qi "server\|connection\|terminat" r1.err
check "PATH still holds what was there (no list cut short)" cmp -s before.ndjson d.ndjson
eq "no temporary file is left beside it" 0 "$(leftovers)"
eq "the register is as it was (rolled back)" "$before_reg" "$(register)"
eq "the target is unchanged" 0 "$(q "SELECT count(*) FROM payment_callback")"

# The same command again: the whole list, in place, with the mode the file had.
chmod 640 d.ndjson
t0=$(date +%s)
run reconcile -d "$DB" --period 2026-11-20 --discrepancies d.ndjson --report r2.json s.csv
full_secs=$(($(date +%s) - t0))
eq "the same command again: exit 5 (discrepancies)" 5 "$RC"
check "the file holds every line, each one JSON object" lines_ok d.ndjson $N
eq "no temporary file left after a run that succeeded" 0 "$(leftovers)"
eq "the register holds the day's items" "$N 1" "$(register)"

# A corrected statement of the same day minutes later (before autovacuum has
# analyzed the register the last run wrote): a quarter of the rows gone.  It
# supersedes the first run's items in seconds (with no statistics the planner
# took the items for none and rescanned every line per item: hours).
head -n $((N * 3 / 4 + 1)) s.csv >s2.csv
t0=$(date +%s)
# Bounded by the full statement's run on this machine, now (20 times it,
# plus two minutes), not by a fixed time a loaded machine could pass.
run_timeout() { timeout $((20 * full_secs + 120)) "$IDEMLOAD" "$@" >"$OUT" 2>"$ERR"; RC=$?; }
run_timeout reconcile -d "$DB" --period 2026-11-20 --discrepancies d2.ndjson --report r3.json s2.csv
secs=$(($(date +%s) - t0))
echo "# the corrected statement's run: ${secs}s (the full one: ${full_secs}s)"
eq "the corrected statement: exit 5" 5 "$RC"
eq "the items it no longer lists are resolved as superseded" $((N / 4)) \
    "$(q "SELECT count(*) FROM idemload_recon_item WHERE resolution = 'not found again when the day was reconciled again'")"
eq "the rest stay open" $((N * 3 / 4)) "$(q "SELECT count(*) FROM idemload_recon_item WHERE state = 'open'")"
eq "the first run's record of the day is superseded by this one" "1 1" \
    "$(q "SELECT count(*) FILTER (WHERE superseded_by IS NOT NULL) || ' ' || count(*) FILTER (WHERE superseded_by IS NULL) FROM idemload_recon_run")"
check "its file holds its lines" lines_ok d2.ndjson $((N * 3 / 4))

eq "the file keeps the mode it had" 640 "$(stat -c %a d.ndjson)"
# A new file gets the mode a plain file gets (the umask), not mkstemp's 0600.
run reconcile -d "$DB" --dry-run --period 2026-11-20 --discrepancies n.ndjson s.csv
eq "a new file: exit 5" 5 "$RC"
touch m.probe
eq "a new file's mode follows the umask" "$(stat -c %a m.probe)" "$(stat -c %a n.ndjson)"
# A symbolic link is followed, as a plain open would: the link stays.
printf 'old\n' >real.ndjson
ln -s real.ndjson link.ndjson
run reconcile -d "$DB" --dry-run --period 2026-11-20 --discrepancies link.ndjson s.csv
eq "through a symbolic link: exit 5" 5 "$RC"
check "the link is still a link" test -L link.ndjson
check "and its target holds every line" lines_ok real.ndjson $N

# A pipe and /dev/null: written as they are, never replaced by a file.
mkfifo d.fifo
wc -l <d.fifo >fifo.count &
reader=$!
run reconcile -d "$DB" --dry-run --period 2026-11-20 --discrepancies d.fifo s.csv
wait $reader
eq "into a pipe: exit 5" 5 "$RC"
eq "the pipe's reader got every line" $N "$(tr -d ' ' <fifo.count)"
check "the pipe is still a pipe" test -p d.fifo
run reconcile -d "$DB" --dry-run --period 2026-11-20 --discrepancies /dev/null s.csv
eq "into /dev/null: exit 5" 5 "$RC"
check "/dev/null is still a character device" test -c /dev/null
eq "no temporary file in /dev" 0 "$(find /dev -maxdepth 1 -name '.null.idemload-*' | wc -l)"

# A directory that cannot take the file: exit 3, the register as it was.
if [ "$(id -u)" != 0 ]; then
    mkdir ro && chmod 555 ro
    reg=$(register)
    run reconcile -d "$DB" --period 2026-11-20 --discrepancies ro/d.ndjson s.csv
    eq "a directory that cannot take the file: exit 3" 3 "$RC"
    check "the error names the file" grep -q "ro/d.ndjson" "$ERR"
    eq "and the register is as it was" "$reg" "$(register)"
    chmod 755 ro
fi
finish
