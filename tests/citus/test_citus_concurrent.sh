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
run init -q -d "$REF"
eq "init of the single-server reference: exit 0" 0 "$RC"
citus_new_db citus_conc
run init -q -d "$CDB" --distributed --shard-count 8
eq "init --distributed: exit 0" 0 "$RC"
cq() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$CDB" -c "$1"; }
# (lib.sh's qd: a failing query never reads as a result, and fails the test.)
snapshot() {
    qd "$1" "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, received_at), ',' ORDER BY tenant_id, channel COLLATE \"C\", out_trade_no COLLATE \"C\", callback_type COLLATE \"C\")), '-') FROM payment_callback WHERE deleted_at IS NULL"
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
run import -q -d "$REF" --jobs 2 --chunk-rows 500 lost.csv
eq "the single server's reference load: exit 0" 0 "$RC"
eq "after a lost connection: the same table as a single server" "$(snapshot "$REF")" "$(snapshot "$CDB")"
eq "each chunk once in the ledger" 80 "$(cq "SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk")"

# ---- three importers, the same overlapping files
for i in 1 2 3 4; do
    $GEN --rows 6000 --seed $((50 + i)) --tenants 8 --dup-rate 0.1 --out f$i.csv --quiet
done
# All three proven at once: each waits at a gate on its first ledger write
# (the ledger is the coordinator's own table, where a statement trigger
# may run), seen there together, then let go at once.
gate_close 2828 idemload_ledger
pids=()
for order in "f1.csv f2.csv f3.csv f4.csv" "f3.csv f4.csv f1.csv f2.csv" "f2.csv f1.csv f4.csv f3.csv"; do
    # shellcheck disable=SC2086
    PGAPPNAME=imp${#pids[@]} "$IDEMLOAD" import -d "$CDB" --jobs 2 --chunk-rows 700 --report "r${#pids[@]}.json" $order \
        >"c${#pids[@]}.out" 2>"c${#pids[@]}.err" &
    pids+=($!)
done
gate_wait 2828 "imp0 imp1 imp2" "${pids[@]}"
gate_open 2828
for k in 0 1 2; do
    wait "${pids[$k]}"
    eq "importer $((k + 1)) exits 0" 0 $?
done
eq "each file loaded by exactly one importer" "4" "$(python3 -c "
import json
ok = [f['path'] for k in range(3) for f in json.load(open(f'r{k}.json'))['files'] if f['status'] == 'ok']
print(len(ok) if sorted(ok) == ['f1.csv', 'f2.csv', 'f3.csv', 'f4.csv'] else ok)")"
run import -q -d "$REF" --chunk-rows 700 f1.csv f2.csv f3.csv f4.csv
eq "the single server's reference load of the four files: exit 0" 0 "$RC"
eq "three importers at once: the same table as a single server's sequential load" \
    "$(snapshot "$REF")" "$(snapshot "$CDB")"
eq "no staging table left" 0 "$(stages)"
finish
