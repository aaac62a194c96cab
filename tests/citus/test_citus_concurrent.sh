#!/usr/bin/env bash
# A Citus-distributed target under the two things a backfill meets: a lost
# connection (the session on the coordinator terminated mid-load: the chunk
# is retried over a new session with a new staging table, the old one swept
# at exit) and several importers given the same files at once (each file
# loaded once, no error reaching the user); the final table equals a single
# server's load of the same files.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/citus_lib.sh"

new_db citus_conc_ref
REF=$DB
$IDEMLOAD init -q -d "$REF"
citus_new_db citus_conc
$IDEMLOAD init -q -d "$CDB" --distributed --shard-count 8
cq() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$CDB" -c "$1"; }
snapshot() {
    psql -X -q -t -A -d "$1" -c "SELECT tenant_id, channel, out_trade_no, callback_type, status, payload::text, received_at FROM payment_callback WHERE deleted_at IS NULL ORDER BY 1, 2 COLLATE \"C\", 3 COLLATE \"C\", 4 COLLATE \"C\"" |
        md5sum | cut -c1-32
}
stages() { cq "SELECT count(*) FROM pg_class WHERE relname ~ '^idemload_stage_[0-9]+\$'"; }

# ---- a lost connection: retried, resumed, nothing twice
$GEN --rows 40000 --seed 41 --tenants 8 --dup-rate 0.05 --out lost.csv --quiet
"$IDEMLOAD" import -d "$CDB" --jobs 2 --chunk-rows 500 --retries 5 lost.csv >lost.out 2>lost.err &
LOADER=$!
for _ in $(seq 1 600); do
    [ "$(cq "SELECT coalesce(max(chunks), 0) >= 3 FROM idemload_ledger")" = t ] && break
    sleep 0.1
done
eq "terminated idemload's sessions mid-load" t "$(cq "SELECT count(*) > 0 FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'citus_conc' AND application_name = 'idemload') k")"
wait $LOADER
eq "the load goes on over new sessions: exit 0" 0 $?
check "it said it retried" grep -Eq "retry 1 of 5|reconnect" lost.err
eq "no staging table left (the dead sessions' swept)" 0 "$(stages)"
$IDEMLOAD import -q -d "$REF" --jobs 2 --chunk-rows 500 lost.csv 2>/dev/null
eq "after a lost connection: the same table as a single server" "$(snapshot "$REF")" "$(snapshot "$CDB")"
eq "each chunk once in the ledger" 80 "$(cq "SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk")"

# ---- three importers, the same overlapping files
for i in 1 2 3 4; do
    $GEN --rows 6000 --seed $((50 + i)) --tenants 8 --dup-rate 0.1 --out f$i.csv --quiet
done
pids=()
for order in "f1.csv f2.csv f3.csv f4.csv" "f3.csv f4.csv f1.csv f2.csv" "f2.csv f1.csv f4.csv f3.csv"; do
    # shellcheck disable=SC2086
    "$IDEMLOAD" import -d "$CDB" --jobs 2 --chunk-rows 700 --report "r${#pids[@]}.json" $order \
        >"c${#pids[@]}.out" 2>"c${#pids[@]}.err" &
    pids+=($!)
done
for k in 0 1 2; do
    wait "${pids[$k]}"
    eq "importer $((k + 1)) exits 0" 0 $?
done
eq "each file loaded by exactly one importer" "4" "$(python3 -c "
import json
ok = [f['path'] for k in range(3) for f in json.load(open(f'r{k}.json'))['files'] if f['status'] == 'ok']
print(len(ok) if sorted(ok) == ['f1.csv', 'f2.csv', 'f3.csv', 'f4.csv'] else ok)")"
$IDEMLOAD import -q -d "$REF" --chunk-rows 700 f1.csv f2.csv f3.csv f4.csv 2>/dev/null
eq "three importers at once: the same table as a single server's sequential load" \
    "$(snapshot "$REF")" "$(snapshot "$CDB")"
eq "no staging table left" 0 "$(stages)"
finish
