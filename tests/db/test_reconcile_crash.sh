#!/usr/bin/env bash
# reconcile interrupted or failing where test_reconcile_interrupted.sh does
# not reach (SPEC.md, "Reconcile": the register, the discrepancies file
# written whole, the exit status; README, "Reconciling"):
# - SIGINT while the client writes the lines (no statement on the server for
#   the cancel request to stop): exit 130, the register and PATH as they
#   were, where the run went on and committed as if never interrupted;
# - a file-size limit (`ulimit -f`) reached by the discrepancies file: exit 3
#   with a message, where SIGXFSZ killed the process (exit 153, no word);
# - a run whose register rolled back (the file not writable) says so in its
#   summary and report: no run number, nothing appeared or resolved;
# - a target never analyzed (read right after an import, before autovacuum
#   came by, as the nightly job does): compared in seconds, where the planner
#   compared every row of the day with every key (minutes; days at scale);
# - two runs of the same day at once: two run numbers, as one after the
#   other (both were the same number);
# - --repair missing: the items of the rows it inserted resolved, not
#   carried over into later runs as open discrepancies.
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
N=200000
[ -n "${IDEMLOAD_INSTRUMENTED:-}" ] && N=60000
{ echo "$header"; gen 1 $N M; } >s.csv

init_db recon_crash
# A register to keep: an earlier statement of the day, reconciled whole.
{ echo "$header"; gen 1 100 M; } >s0.csv
run reconcile -d "$DB" --period 2026-11-20 s0.csv
eq "the earlier statement: exit 5" 5 "$RC"
printf 'the list of an earlier run\n' >d.ndjson
cp d.ndjson before.ndjson
before_reg=$(register)

# SIGINT while the lines are being written: the process held still once its
# temporary file holds lines (the server idle, its answers read), the
# signal sent, then let go on.
held_while_writing r1.err reconcile -d "$DB" --period 2026-11-20 --discrepancies d.ndjson s.csv
check "the run was caught while writing its discrepancies" test $caught = 1
kill -INT $pid
kill -CONT $held
wait $pid; rc=$?
eq "SIGINT while the lines are written: exit 130" 130 $rc
check "the error says it was interrupted" grep -qi "interrupted" r1.err
check "PATH holds what it held" cmp -s before.ndjson d.ndjson
eq "no temporary file is left beside it" 0 "$(leftovers)"
eq "the register is as it was (rolled back)" "$before_reg" "$(register)"
check "the summary names no run of the register" sh -c '! grep -q "register: run" r1.err'

# A file-size limit the discrepancies file reaches: not writable, exit 3.
# (Each part starts from what the one before left.)
cp d.ndjson before.ndjson
before_reg=$(register)
( ulimit -f 64; exec "$IDEMLOAD" reconcile -d "$DB" --period 2026-11-20 \
    --discrepancies d.ndjson s.csv >/dev/null 2>r2.err )
rc=$?
eq "past the file-size limit: exit 3 (not killed by SIGXFSZ)" 3 $rc
check "the error names the file" grep -q "d.ndjson" r2.err
check "PATH holds what it held" cmp -s before.ndjson d.ndjson
eq "no temporary file is left beside it" 0 "$(leftovers)"
eq "the register is as it was" "$before_reg" "$(register)"

# A file that cannot be written (a full device): the register rolls back,
# and the report and summary do not claim a run of it.
before_reg=$(register)
run reconcile -d "$DB" --period 2026-11-20 --discrepancies /dev/full --report r3.json s.csv
eq "a full device: exit 3" 3 "$RC"
eq "the register is as it was" "$before_reg" "$(register)"
eq "the report: not registered, no run, nothing appeared or resolved" "False None 0 0 0 0" \
    "$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["reconciliation"]
print(r["registered"], r["run"], r["appeared"], r["resolved"], len(r["appeared_items"]), len(r["resolved_items"]))' r3.json)"
check "the summary says the register was not written" grep -q "register was not written" "$ERR"
check "and names no run of it" sh -c '! grep -q "register: run" "$1"' _ "$ERR"

# The same command, uninterrupted: the whole list, the register written.
run reconcile -d "$DB" --period 2026-11-20 --discrepancies d.ndjson s.csv
eq "the same command again: exit 5" 5 "$RC"
eq "the file holds every line" $N "$(wc -l <d.ndjson)"
eq "the register holds the day's items, the earlier runs superseded" "$N $(( ${before_reg#* } + 1 ))" "$(register)"

# Two runs of the same day at once: each its own run number, as one after
# the other.  Both compared, then waiting for the register's lock (held
# here); its number was read with the snapshot taken before the wait, so
# both were the same run, the second superseding it by itself and
# reporting the first's items as its own.
PGAPPNAME=holder psql -X -q -c "SELECT pg_advisory_lock(7350323339418284034), pg_sleep(120)" >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 500); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'holder' AND wait_event = 'PgSleep'")" = 1 ] && break
    sleep 0.1
done
runs_before=$(q "SELECT max(run) FROM idemload_recon_run")
"$IDEMLOAD" reconcile -d "$DB" --period 2026-11-20 s0.csv >/dev/null 2>c1.err &
c1=$!
"$IDEMLOAD" reconcile -d "$DB" --period 2026-11-20 s0.csv >/dev/null 2>c2.err &
c2=$!
for _ in $(seq 1 600); do
    [ "$(advisory_locks "NOT granted")" = 2 ] && break
    sleep 0.1
done
eq "both runs wait for the register's lock" 2 \
    "$(advisory_locks "NOT granted")"
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'holder' AND datname = current_database()" >/dev/null
wait $holder
wait $c1; rc1=$?
wait $c2; rc2=$?
eq "both: exit 5" "5 5" "$rc1 $rc2"
eq "two runs, two numbers" "$((runs_before + 1)) $((runs_before + 2))" \
    "$(q "SELECT string_agg(DISTINCT run::text, ' ') FROM idemload_recon_run WHERE run > $runs_before")"
eq "the first superseded by the second, the second standing" "$((runs_before + 2)) " \
    "$(q "SELECT string_agg(coalesce(superseded_by::text, ''), ' ' ORDER BY run) FROM (SELECT DISTINCT run, superseded_by FROM idemload_recon_run WHERE run > $runs_before) r")"
eq "the first resolved what the day held before, the second nothing more" \
    "$(( ${N} - 100 )) resolved, 0 resolved" \
    "$(cat c1.err c2.err | grep -o '[0-9]* resolved$' | sort -rn | paste -sd, | sed 's/,/, /')"

# A target never analyzed: the nightly import, then its reconcile at once.
init_db recon_fresh
q "ALTER TABLE payment_callback SET (autovacuum_enabled = false)" >/dev/null
M=40000
[ -n "${IDEMLOAD_INSTRUMENTED:-}" ] && M=20000
{ echo "$header"; gen 1 $M T; } >t.csv
{ echo "$header"; gen 1 $M T; gen 1 $((M / 4)) N; } >s2.csv
t0=$(date +%s)
run import -d "$DB" t.csv
import_secs=$(($(date +%s) - t0))
eq "the import: exit 0" 0 "$RC"
eq "the table has no statistics yet" "-1" "$(q "SELECT reltuples::bigint FROM pg_class WHERE oid = 'payment_callback'::regclass")"
# Its bound is the import's time on this machine, now (20 times it, plus
# two minutes), not a fixed one a loaded machine could pass: the planner
# taking the table for empty made it minutes where the import took seconds.
t0=$(date +%s)
timeout $((20 * import_secs + 120)) "$IDEMLOAD" reconcile -d "$DB" --period 2026-11-20 --report r4.json s2.csv >/dev/null 2>r4.err
rc=$?
secs=$(($(date +%s) - t0))
echo "# the reconcile of a table never analyzed: ${secs}s (the import: ${import_secs}s)"
eq "it finishes in seconds (not minutes): exit 5" 5 $rc
eq "matched and missing_in_table as they are" "$M $((M / 4))" \
    "$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["reconciliation"]
print(r["matched"], r["categories"]["missing_in_table"])' r4.json 2>/dev/null)"
# --repair missing: the rows it inserted are no longer discrepancies, so
# the register does not hold them open (carried over into every later run
# of the pair, where they had been: "40000 open discrepancies of earlier
# days" the night after they were repaired).
init_db recon_repair
{ echo "$header"; gen 1 100 T; } >t.csv
{ echo "$header"; gen 1 100 T; gen 1 50 N; } >s3.csv
run import -d "$DB" t.csv
eq "the table's rows: exit 0" 0 "$RC"
run reconcile -d "$DB" --period 2026-11-20 --repair missing --report r5.json s3.csv
eq "--repair missing: exit 5 (the comparison before it found 50 missing)" 5 "$RC"
eq "it inserted the 50 rows" 150 "$(q "SELECT count(*) FROM payment_callback")"
eq "their items are resolved, none left open" "0 50" \
    "$(q "SELECT count(*) FILTER (WHERE state <> 'resolved') || ' ' || count(*) FILTER (WHERE resolution = 'inserted by --repair') FROM idemload_recon_item WHERE category = 'missing_in_table'")"
check "the summary says so" grep -q "50 missing_in_table items resolved" "$ERR"
# The next day of the pair: nothing of the repaired day carried over.
{ echo "$header"; echo '1,wechat,X0000001,pay,1,"{""amount"": ""1.00"", ""currency"": ""CNY""}",2026-11-21T10:00:00Z'; } >s4.csv
run reconcile -d "$DB" --period 2026-11-21 --report r6.json s4.csv
eq "the next day: exit 5 (its own missing row)" 5 "$RC"
eq "the repaired rows are not carried over" 0 \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["reconciliation"]["carried_over"])' r6.json)"
# The repair again: nothing left to insert, the register as it was.
reg=$(q "SELECT string_agg(category || ' ' || state || ' ' || n, ', ' ORDER BY category, state) FROM (SELECT category, state, count(*) AS n FROM idemload_recon_item GROUP BY 1, 2) g")
run reconcile -d "$DB" --period 2026-11-20 --repair missing s3.csv
eq "the repair again: exit 0 (balanced now)" 0 "$RC"
eq "the table as it was" 150 "$(q "SELECT count(*) FROM payment_callback")"
eq "the register's items as they were" "$reg" \
    "$(q "SELECT string_agg(category || ' ' || state || ' ' || n, ', ' ORDER BY category, state) FROM (SELECT category, state, count(*) AS n FROM idemload_recon_item GROUP BY 1, 2) g")"
finish
