#!/usr/bin/env bash
# `idemload check` on a half-built index (SPEC.md "Table safety tools":
# "a valid unique index (not INVALID, not half-built)"; exit 0 when safe, 1
# when not).  A CREATE UNIQUE INDEX CONCURRENTLY of exactly the business
# key is held at two points of its build, then cancelled:
#   1. waiting for writers before the build: the index is in the catalog,
#      neither ready nor valid;
#   2. waiting for old snapshots after its validation: ready (writes
#      maintain it) but not yet valid;
#   3. cancelled there: the INVALID index it leaves behind.
# At each point check says not safe (exit 1), names the index as INVALID and
# says no valid unique index covers the key; an import is refused (exit 2).
# The holds are sessions of the test (a writer's open transaction, a
# REPEATABLE READ snapshot), not timers.  Then create-index rebuilds it and
# check says safe (exit 0): the same table, only the index differs.
. "$(dirname "$0")/../lib.sh"

init_db check_half_built
$GEN --rows 500 --seed 2801 --format csv --out f.csv --quiet
run import -d "$DB" --chunk-rows 250 f.csv
eq "loaded with the index" 0 $RC
q "DROP INDEX uk_payment_callback_biz_active"
IX=uk_payment_callback_biz_active
ixstate() { q "SELECT coalesce((SELECT i.indisready || ' ' || i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = '$IX'), 'none')"; }
phase() { q "SELECT coalesce((SELECT phase FROM pg_stat_progress_create_index WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database())), 'none')"; }
# wait_for WHAT COMMAND...: polls (up to 2 minutes) until COMMAND succeeds
# (a function: its queries run again at each poll).
wait_for() {
    local what=$1; shift
    for _ in $(seq 1 1200); do "$@" && return 0; sleep 0.1; done
    fail "timed out waiting for $what"; return 1
}
in_phase() { [ "$(phase)" = "$1" ]; }
# unsafe POINT STATE-WORDS: check says not safe for this reason, import refused.
unsafe() {
    run check -d "$DB" --report "$1.json"
    eq "$1: check says not safe (exit 1)" 1 $RC
    check "$1: check names the index INVALID$2" contains "$OUT" "$IX: INVALID$2"
    check "$1: check says no valid unique index covers the key" contains "$OUT" "no valid unique index covers exactly"
    check "$1: check JSON: no usable index, this one not valid and not counted" jtrue "$1.json" \
        "r['safe'] is False and r['unique_index'] is None and [(i['valid'], i['counts']) for i in r['indexes'] if i['name'] == '$IX'] == [(False, False)]"
    run import -d "$DB" --rejects "$1.rj" f.csv --force
    eq "$1: an import is refused (exit 2)" 2 $RC
}

# 1. A writer's transaction holds the build before it starts.
psql -X -q -c "BEGIN" -c "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, payload) VALUES (1, 'w', 'HB-WRITER', 'pay', '{}')" \
    -c "SELECT pg_sleep(3600)" >writer.out 2>&1 &
WRITER=$!
writer_in() { [ "$(q "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.query = 'SELECT pg_sleep(3600)' AND a.datname = current_database() AND l.relation = 'payment_callback'::regclass")" -ge 1 ]; }
wait_for "the writer's insert" writer_in
psql -X -q -c "CREATE UNIQUE INDEX CONCURRENTLY $IX ON payment_callback (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL" >cic.out 2>&1 &
CIC=$!
wait_for "the build to wait for writers" in_phase "waiting for writers before build"
eq "1: the index is in the catalog, not ready, not valid" "false false" "$(ixstate)"
unsafe built_not_ready " and not ready"

# 2. An old snapshot holds it after its validation: ready, not valid.
psql -X -q -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT count(*) FROM pg_class" -c "SELECT pg_sleep(3601)" >snap.out 2>&1 &
SNAP=$!
snap_in() { [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3601)' AND datname = current_database() AND backend_xmin IS NOT NULL")" -ge 1 ]; }
wait_for "the snapshot" snap_in
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3600)%' AND datname = current_database() AND pid <> pg_backend_pid()" >/dev/null
wait $WRITER 2>/dev/null
wait_for "the build to wait for old snapshots" in_phase "waiting for old snapshots"
eq "2: the index is ready, not valid" "true false" "$(ixstate)"
unsafe ready_not_valid ": left by a failed CREATE INDEX CONCURRENTLY, or one still running; does not count, yet writes still maintain it"

# 3. The build cancelled there: its INVALID leftover.
q "SELECT pg_cancel_backend(pid) FROM pg_stat_progress_create_index WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database())" >/dev/null
wait $CIC
eq "3: the build was cancelled (psql exit 1)" 1 $?
check "3: psql says so" contains cic.out "canceling statement due to user request"
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3601)%' AND datname = current_database() AND pid <> pg_backend_pid()" >/dev/null
wait $SNAP 2>/dev/null
eq "3: the cancelled build left its index, not valid" "true false" "$(ixstate)"
unsafe cancelled ": left by a failed CREATE INDEX CONCURRENTLY"

# The same table with the index rebuilt: safe.
run create-index -d "$DB"
eq "create-index drops the leftover and builds it: exit 0" 0 $RC
eq "the index valid now" "true true" "$(ixstate)"
run check -d "$DB"
eq "check with the built index: safe (exit 0)" 0 $RC
finish
