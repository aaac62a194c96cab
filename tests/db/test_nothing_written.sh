#!/usr/bin/env bash
# "Nothing written means nothing written" (SPEC.md, "Crash safety, reruns
# and concurrency"): a re-import of rows the table already holds leaves the
# target's n_tup_ins, n_tup_upd, n_tup_del and n_dead_tup as they were, not
# even from a statement that fails and is rolled back (the append's COPY
# used to write its batch of heap tuples before the unique index stopped it
# at the first present key).  And a file of present and new keys writes
# exactly its new keys: n_tup_ins rises by their number (counted here by
# python from the files, not from idemload's figures), no dead tuple, while
# the new keys are still appended (the server's log shows the COPY).
# Counters from pg_stat_user_tables, after the importing backends have
# exited (a backend flushes its statistics when it ends) and
# pg_stat_clear_snapshot().
. "$(dirname "$0")/../lib.sh"
pg_use
export PGOPTIONS='-c log_statement=all'
appends() { log_since | grep -c 'LOG:  statement: COPY "public"."payment_callback" (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) FROM STDIN'; }
backends_gone() {
    for _ in $(seq 1 400); do
        [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'idemload'")" -eq 0 ] && return 0
        sleep 0.05
    done
    return 1
}
# stats: "ins upd del dead" of the target, once every backend of the last
# import has flushed its counters.
stats() {
    backends_gone || echo "backends still there"
    sleep 0.3
    q "SELECT pg_stat_force_next_flush()" >/dev/null
    psql -X -q -t -A -c "SELECT pg_stat_clear_snapshot()" -c "SELECT n_tup_ins || ' ' || n_tup_upd || ' ' || n_tup_del || ' ' || n_dead_tup FROM pg_stat_user_tables WHERE relname = 'payment_callback'" | tail -1
}
# keys FILE...: distinct business keys of the CSV files, as lines.
new_keys() {
    python3 - "$@" <<'PY'
import csv, sys
def keys(p):
    with open(p, newline='') as f:
        return {(r['tenant_id'], r['channel'], r['out_trade_no'], r['callback_type']) for r in csv.DictReader(f)}
old = keys(sys.argv[1]); new = keys(sys.argv[2])
print(len(new - old))
PY
}

$GEN --rows 500 --seed 2610 --dup-rate 0 --format csv --out a.csv --quiet
$GEN --rows 3000 --seed 2611 --dup-rate 0 --format csv --out b_extra.csv --quiet
# b: every row of a (same versions) and rows of new keys, interleaved by key
# order in each chunk (the chunk sorts by key).
python3 - <<'PY'
import csv
a = list(csv.DictReader(open('a.csv', newline='')))
x = list(csv.DictReader(open('b_extra.csv', newline='')))
keys = {(r['tenant_id'], r['channel'], r['out_trade_no'], r['callback_type']) for r in a}
x = [r for r in x if (r['tenant_id'], r['channel'], r['out_trade_no'], r['callback_type']) not in keys]
rows = []
for i, r in enumerate(x):
    rows.append(r)
    if i < len(a):
        rows.append(a[i])
rows += a[len(x):]
with open('b.csv', 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=list(a[0].keys()))
    w.writeheader(); w.writerows(rows)
PY
NEW_B=$(new_keys a.csv b.csv)
check "b has new keys ($NEW_B) and every row of a" [ "$NEW_B" -gt 1000 ]

for j in 1 2; do
    init_db nw_$j
    run import -d "$DB" -j $j a.csv
    eq "-j $j: first load exit 0" 0 $RC
    before=$(stats)
    eq "-j $j: the first load inserted a's 500 keys, wrote nothing else" "500 0 0 0" "$before"

    # 1. --force re-import of the same file: nothing at all.
    run import -d "$DB" -j $j --force a.csv
    eq "-j $j: --force re-import exit 0" 0 $RC
    eq "-j $j: --force re-import: n_tup_ins, n_tup_upd, n_tup_del, n_dead_tup unchanged" "$before" "$(stats)"

    # 2. The same rows in small chunks, from a file the ledger does not know.
    { head -1 a.csv; tail -n +2 a.csv | tac; } >a2.csv
    run import -d "$DB" -j $j --chunk-rows 50 a2.csv
    eq "-j $j: the same rows in chunks of 50: exit 0" 0 $RC
    eq "-j $j: ... still nothing written" "$before" "$(stats)"

    # 3. Present and new keys mixed: only the new keys are written, and
    #    still by the append.
    log_mark
    run import -d "$DB" -j $j --chunk-rows 1000 b.csv
    eq "-j $j: mixed file exit 0" 0 $RC
    eq "-j $j: mixed file: n_tup_ins rose by its $NEW_B new keys, nothing updated, deleted or dead" \
        "$((500 + NEW_B)) 0 0 0" "$(stats)"
    check "-j $j: mixed file: its new keys were appended (COPY into the table: $(appends))" [ "$(appends)" -ge 1 ]
    eq "-j $j: the table holds a's and b's keys" "$((500 + NEW_B))" "$(q "SELECT count(*) FROM payment_callback")"
done

# --on-conflict nothing: a re-import writes nothing either.
init_db nw_nothing
run import -d "$DB" --on-conflict nothing a.csv
before=$(stats)
run import -d "$DB" --on-conflict nothing --force a.csv
eq "--on-conflict nothing: --force re-import exit 0" 0 $RC
eq "--on-conflict nothing: nothing written" "$before" "$(stats)"
finish
