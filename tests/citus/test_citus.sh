#!/usr/bin/env bash
# A Citus-distributed target (SPEC.md "A distributed target: Citus"), on
# the local cluster of the fixture (a coordinator and two workers): init
# --distributed; the database suite's merge, dry-run, resume and tools cases
# against the distributed table, each compared with the same command on a
# single server (the pg fixture): the same figures and the same final
# table; staging tables removed at exit and swept after kill -9; EXPLAIN of
# each merge statement idemload sent shows it pushed down to the shards.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/citus_lib.sh"

new_db citus_ref
REF=$DB
run init -q -d "$REF"
eq "init of the single-server reference: exit 0" 0 "$RC"
citus_new_db citus_load
psql -X -q -c "ALTER DATABASE citus_load SET log_statement = 'all'"
# The coordinator's log (kept across runs): this run's part starts here.
LOG_FROM=$(stat -c %s "$IDEMLOAD_CITUSDIR/coordinator.log")
cq() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$CDB" -c "$1"; }
rq() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$REF" -c "$1"; }
# The active rows (and the soft-deleted count), ordered by the key.
# (lib.sh's qd: a failing query never reads as a result, and fails the test.)
snapshot() {
    qd "$1" "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, received_at), ',' ORDER BY tenant_id, channel COLLATE \"C\", out_trade_no COLLATE \"C\", callback_type COLLATE \"C\")), '-') FROM ${2:-payment_callback} WHERE deleted_at IS NULL"
}
same_table() {
    local a b
    a=$(snapshot "$CDB" "${2:-}")
    b=$(snapshot "$REF" "${2:-}")
    if [ "$a" = "$b" ] && [ -n "$(psql -X -q -t -A -d "$REF" -c "SELECT 1 FROM ${2:-payment_callback} LIMIT 1")" ]; then
        ok "$1: the distributed table equals the single server's"
    else
        fail "$1: the distributed table differs from the single server's ($a vs $b)"
    fi
}
# both NAME ARGS...: the same import on both targets; exit statuses and
# every figure of the two reports must agree.
both() {
    local name=$1
    shift
    "$IDEMLOAD" import -d "$CDB" --report "$name.citus.json" --rejects "$name.citus.rej" "$@" \
        >"$name.citus.out" 2>"$name.citus.err"
    CRC=$?
    "$IDEMLOAD" import -d "$REF" --report "$name.ref.json" --rejects "$name.ref.rej" "$@" \
        >"$name.ref.out" 2>"$name.ref.err"
    RRC=$?
    eq "$name: the same exit status" "$RRC" "$CRC"
    python3 - "$name.citus.json" "$name.ref.json" <<'PY'
import json, sys
c, r = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["status", "rows_read", "rows_rejected", "rows_deduplicated", "inserted", "updated",
        "unchanged", "stale", "existing", "chunks"]
cf = [[f.get(k) for k in keys] for f in c["files"]]
rf = [[f.get(k) for k in keys] for f in r["files"]]
if cf != rf or c["totals"] != r["totals"]:
    print("citus", cf, c["totals"]); print("single", rf, r["totals"]); sys.exit(1)
PY
    if [ $? -eq 0 ]; then ok "$name: the same figures"; else fail "$name: the figures differ"; fi
}
stages() { cq "SELECT count(*) FROM pg_class WHERE relname ~ '^idemload_stage_[0-9]+\$'"; }

# ---- init --distributed
run init -d "$CDB" --distributed --shard-count 8
eq "init --distributed: exit 0" 0 "$RC"
eq "distributed by tenant_id" "distributed tenant_id" "$(cq "SELECT citus_table_type || ' ' || distribution_column FROM citus_tables WHERE table_name = 'payment_callback'::regclass")"
eq "8 shards" 8 "$(cq "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'payment_callback'::regclass")"
eq "primary key (tenant_id, id)" "tenant_id,id" "$(cq "SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, n), pg_attribute a WHERE i.indrelid = 'payment_callback'::regclass AND i.indisprimary AND a.attrelid = i.indrelid AND a.attnum = k.attnum")"
eq "the partial unique index" 1 "$(cq "SELECT count(*) FROM pg_indexes WHERE indexname = 'uk_payment_callback_biz_active' AND indexdef LIKE '%WHERE (deleted_at IS NULL)%'")"
run init -d "$CDB" --distributed --shard-count 8
eq "init --distributed again: exit 0" 0 "$RC"
run init -d "$REF" --distributed
eq "init --distributed without Citus: exit 2" 2 "$RC"
check "... saying it needs a Citus coordinator" contains "$ERR" "needs a Citus coordinator"
run init -d "$REF" --shard-count 4
eq "--shard-count alone: exit 2" 2 "$RC"

# ---- the files
$GEN --rows 4000 --seed 31 --tenants 6 --dup-rate 0.15 --out-of-order 0.3 --out a.csv.gz --quiet
$GEN --rows 3000 --seed 32 --tenants 6 --dup-rate 0.1 --format ndjson --out b.ndjson --quiet
$GEN --rows 1500 --seed 33 --tenants 6 --bad-rate 0.03 --out bad.csv --quiet
# A key too long for the unique index: only the server refuses it (54000),
# on a worker; the rest of its chunk loads.
long=$(python3 -c "import random; random.seed(5); print(''.join(random.choice('abcdefghijklmnopqrstuvwxyz0123456789') for _ in range(3000)))")
printf 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n1,wechat,%s,pay,1,"{""a"": 1}",2026-11-01T00:00:00Z\n1,wechat,SHORT,pay,1,"{""a"": 2}",2026-11-01T00:00:00Z\n' "$long" >long.csv

# ---- dry run: the figures, then nothing written
both dry --dry-run --chunk-rows 700 a.csv.gz b.ndjson
eq "dry run: no row in the distributed table" 0 "$(cq "SELECT count(*) FROM payment_callback")"
eq "dry run: no ledger" "" "$(cq "SELECT to_regclass('idemload_ledger')")"
eq "dry run: its staging table removed at exit" 0 "$(stages)"

# ---- loads: lanes, chunks, skip, rejects, a row only the server refuses
both first --jobs 2 --chunk-rows 700 a.csv.gz
same_table "first load"
both second --jobs 3 --chunk-rows 700 a.csv.gz b.ndjson bad.csv long.csv
same_table "second load (a skipped, b, bad rows, a refused key)"
check "a skipped by the ledger" jtrue second.citus.json "r['files'][0]['status'] == 'skipped'"
check "the refused key is rejected with the server's message" grep -q '54000' second.citus.rej
eq "the same rejected rows" "$(wc -l <second.ref.rej)" "$(wc -l <second.citus.rej)"
both force --force --jobs 1 --chunk-rows 500 a.csv.gz b.ndjson
same_table "reload with --force"
check "a reload changes nothing" jtrue force.citus.json "r['totals']['unchanged'] > 0 and r['totals']['inserted'] == 0 and r['totals']['updated'] == 0"
$GEN --rows 2000 --seed 34 --tenants 6 --dup-rate 0.2 --out c.csv --quiet
both nothing --on-conflict nothing --jobs 2 --chunk-rows 400 c.csv
same_table "--on-conflict nothing"
eq "no staging table left after the loads" 0 "$(stages)"

# ---- status on the coordinator
run status -d "$CDB" --report -
eq "status: exit 0" 0 "$RC"
check "status: every file completed, as on the single server" jtrue "$OUT" \
    "sorted((f['file_name'], f['state'], f['chunks'], f['rows_read']) for f in r['files']) == sorted($(python3 -c "
import json,subprocess,sys
out=subprocess.run([sys.argv[1],'status','-d',sys.argv[2],'--report','-'],capture_output=True,text=True).stdout
print(sorted((f['file_name'],f['state'],f['chunks'],f['rows_read']) for f in json.loads(out)['files']))" "$IDEMLOAD" "$REF"))"

# ---- kill -9, leftover staging tables, resume
$GEN --rows 30000 --seed 35 --tenants 6 --dup-rate 0.05 --out big.csv --quiet
"$IDEMLOAD" import -q -d "$CDB" --jobs 2 --chunk-rows 1000 big.csv >kill.out 2>kill.err &
LOADER=$!
for _ in $(seq 1 600); do
    [ "$(cq "SELECT coalesce(max(chunks), 0) >= 3 FROM idemload_ledger WHERE file_name = 'big.csv'")" = t ] && break
    sleep 0.1
done
kill -9 $LOADER
wait $LOADER 2>/dev/null
eq "killed in the middle of big.csv" loading "$(cq "SELECT status FROM idemload_ledger WHERE file_name = 'big.csv'")"
check "kill -9 left its staging tables" test "$(stages)" -gt 0
for _ in $(seq 1 100); do
    [ "$(cq "SELECT count(*) FROM pg_stat_activity WHERE datname = 'citus_load' AND application_name = 'idemload'")" = 0 ] && break
    sleep 0.1
done
"$IDEMLOAD" import -d "$CDB" --jobs 2 --chunk-rows 1000 --report resume.json big.csv >resume.out 2>resume.err
eq "the same command resumes: exit 0" 0 $?
check "it resumed after the committed chunks" contains resume.err "resumed after chunk"
check "it swept the killed loader's staging tables" contains resume.err "the staging table of a loader that is gone"
eq "no staging table left" 0 "$(stages)"
run import -q -d "$REF" --jobs 2 --chunk-rows 1000 big.csv
eq "the single server's reference load: exit 0" 0 "$RC"
same_table "after kill -9 and resume"
eq "big.csv: every chunk once in the ledger" 30 "$(cq "SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk c JOIN idemload_ledger l USING (target, digest) WHERE l.file_name = 'big.csv'")"

# ---- check on the distributed table
run check -d "$CDB" --report -
eq "check: the distributed table is safe (exit 0)" 0 "$RC"

# ---- dedupe and create-index on a distributed table with duplicates,
# next to the same table on the single server
DDL="CREATE TABLE dupt (id bigserial, tenant_id bigint NOT NULL, channel text NOT NULL, out_trade_no text NOT NULL, callback_type text NOT NULL, status smallint NOT NULL DEFAULT 0, payload jsonb NOT NULL, received_at timestamptz NOT NULL, handled_at timestamptz, deleted_at timestamptz, PRIMARY KEY (tenant_id, id))"
FILL="INSERT INTO dupt (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) SELECT g % 5, 'wechat', 'o' || (g % 50), 'pay', CASE WHEN g % 7 = 0 THEN 2 ELSE 1 END, jsonb_build_object('g', g), timestamptz '2026-11-01' - (g % 13) * interval '1 min' FROM generate_series(1, 400) g ORDER BY g"
cq "$DDL; SELECT create_distributed_table('dupt', 'tenant_id', shard_count => 8); $FILL" >/dev/null
rq "$DDL; $FILL" >/dev/null
tools_both() {
    local name=$1
    shift
    "$IDEMLOAD" "$@" -d "$CDB" --table dupt >"$name.citus.out" 2>"$name.citus.err"
    CRC=$?
    "$IDEMLOAD" "$@" -d "$REF" --table dupt >"$name.ref.out" 2>"$name.ref.err"
    RRC=$?
    eq "$name: the same exit status" "$RRC" "$CRC"
    # The commands a report advises name the run's own -d (test_tools.sh
    # checks them): DB in both, so that the rest compares.
    local f t
    for f in "$name.citus.out" "$name.ref.out"; do
        t=$(<"$f")
        t=${t//"$CDB"/DB}
        printf '%s\n' "${t//"$REF"/DB}" >"$f"
    done
}
deleted() { psql -X -q -t -A -d "$1" -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM dupt WHERE deleted_at IS NOT NULL"; }
tools_both check check --report check.json
eq "check finds the duplicates: exit 1" 1 "$CRC"
check "check: the same listing" diff -q check.citus.out check.ref.out
check "check: its fix names the distributed table's database and the table" contains check.citus.out \
    "fix: 'idemload dedupe --apply -d 'DB' --table dupt'"
# A failed CREATE INDEX CONCURRENTLY leaves an INVALID index (on every shard).
cq "CREATE UNIQUE INDEX CONCURRENTLY uk_dupt_biz_active ON dupt (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL" >/dev/null 2>&1
eq "an INVALID index left on the distributed table" f "$(cq "SELECT indisvalid FROM pg_index WHERE indexrelid = 'uk_dupt_biz_active'::regclass")"
rq "CREATE UNIQUE INDEX CONCURRENTLY uk_dupt_biz_active ON dupt (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL" >/dev/null 2>&1
tools_both refuse create-index
check "create-index refuses while duplicates remain" test "$CRC" -ne 0
tools_both list dedupe --limit 0
check "dedupe: the same listing" diff -q list.citus.out list.ref.out
tools_both apply dedupe --apply --batch-size 7
eq "dedupe --apply: exit 1 (keys holding a final status refused)" 1 "$CRC"
check "dedupe --apply: the same output" diff -q apply.citus.out apply.ref.out
eq "dedupe --apply: the same rows soft-deleted" "$(deleted "$REF")" "$(deleted "$CDB")"
tools_both apply2 dedupe --apply --include-final --batch-size 7
eq "dedupe --apply --include-final: exit 0" 0 "$CRC"
eq "... the same rows soft-deleted" "$(deleted "$REF")" "$(deleted "$CDB")"
check "... some rows" test -n "$(deleted "$CDB")"
"$IDEMLOAD" create-index -d "$CDB" --table dupt >index.out 2>index.err
eq "create-index: exit 0" 0 $?
check "it dropped the INVALID index first" contains index.err "dropping the INVALID index public.uk_dupt_biz_active"
eq "the index is valid" t "$(cq "SELECT indisvalid FROM pg_index WHERE indexrelid = 'uk_dupt_biz_active'::regclass")"
eq "... on every shard" 8 "$(cq "SELECT sum(result::int) FROM run_command_on_shards('dupt', \$\$SELECT count(*) FROM pg_index WHERE indrelid = '%s'::regclass AND indisvalid AND indisunique AND indpred IS NOT NULL\$\$)")"
# create-index with a writer open on a shard: the build waits for it on the
# workers, and the progress says so (read from the workers, where the shards
# are built; the coordinator holds only the empty shell table).
# (The writer works on a shard, on its worker: a writer through the
# coordinator would make the CREATE wait there, for the shell table's lock.)
cq "DROP INDEX uk_dupt_biz_active"
read -r SHARD SHARD_PORT <<<"$(cq "SELECT shard_name('dupt'::regclass, shardid), nodeport FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('dupt', 1)" | tr '|' ' ')"
psql -X -q -p "$SHARD_PORT" -d citus_load -c "BEGIN" -c "UPDATE $SHARD SET handled_at = now() WHERE id = (SELECT min(id) FROM $SHARD)" -c "SELECT pg_sleep(600)" >writer.out 2>&1 &
WRITER=$!
wq() { psql -X -q -t -A -p "$SHARD_PORT" -d citus_load -c "$1"; }
for _ in $(seq 1 100); do
    [ "$(wq "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()")" = 1 ] && break
    sleep 0.1
done
"$IDEMLOAD" create-index -d "$CDB" --table dupt >index2.out 2>index2.err &
BUILDER=$!
for _ in $(seq 1 300); do grep -q "waiting for writers" index2.err && break; sleep 0.1; done
check "create-index shows the workers' progress (waiting for the writer)" grep -q "create-index public.uk_dupt_biz_active: waiting for writers before build.*transactions waited for" index2.err
check "... while the writer still holds its shard" kill -0 $WRITER
wq "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()" >/dev/null
wait $WRITER 2>/dev/null
wait $BUILDER
eq "create-index after the writer: exit 0" 0 $?
eq "... the index valid on every shard" 8 "$(cq "SELECT sum(result::int) FROM run_command_on_shards('dupt', \$\$SELECT count(*) FROM pg_index WHERE indrelid = '%s'::regclass AND indisvalid AND indisunique AND indpred IS NOT NULL\$\$)")"
run create-index -q -d "$REF" --table dupt
eq "the single server's reference create-index: exit 0" 0 "$RC"
tools_both safe check
eq "check: safe now (exit 0)" 0 "$CRC"
check "check: the same verdict" diff -q safe.citus.out safe.ref.out
same_table "after dedupe" dupt

# ---- EXPLAIN of each merge statement idemload sent: pushed down whole
python3 - "$IDEMLOAD_CITUSDIR/coordinator.log" "$LOG_FROM" >merges.sql <<'PY'
import re, sys
seen = {}
log = open(sys.argv[1], errors="replace")
log.seek(int(sys.argv[2]))
for line in log:
    m = re.search(r"LOG:  (?:execute [^:]*|statement): (.*)$", line)
    if not m or "idemload_stage_" not in m.group(1) or "pg_class" in m.group(1):
        continue
    sql = m.group(1)
    kind = sql.split()[0]
    if kind not in ("INSERT", "UPDATE", "SELECT") or "create_distributed_table" in sql:
        continue
    sql = re.sub(r'"?public"?\."?idemload_stage_[0-9]+"?', "idemload_stage_explain", sql)
    sql = re.sub(r"\$1\b", "1", sql)
    sql = re.sub(r"\$2\b", "100000", sql)
    sql = re.sub(r"\$3\b", "'{2}'", sql) if "verdict =" in sql or "ON CONFLICT" in sql or "bigint[]" not in sql else re.sub(r"\$3\b", "'{1,2}'", sql)
    key = re.sub(r"\s+", " ", sql)
    seen.setdefault(key, sql)
for sql in seen.values():
    print(sql + ";")
PY
# The staging table the EXPLAINs run on is made by idemload's own statement
# (from the same log, renamed), distributed as idemload distributed its
# own (the colocate_with it sent): not a table the test describes.
python3 - "$IDEMLOAD_CITUSDIR/coordinator.log" "$LOG_FROM" >stage.sql <<'PY'
import re, sys
log = open(sys.argv[1], errors="replace")
log.seek(int(sys.argv[2]))
create = colocate = None
for line in log:
    m = re.search(r"LOG:  (?:execute [^:]*|statement): (CREATE UNLOGGED TABLE IF NOT EXISTS \S*idemload_stage_[0-9]+\S* .*)$", line)
    if m and create is None:
        create = re.sub(r'"?public"?\."?idemload_stage_[0-9]+"?', "idemload_stage_explain", m.group(1))
    m = re.search(r"DETAIL:  parameters: \$1 = '\"public\"\.\"idemload_stage_[0-9]+\"', \$2 = '(.*)'$", line)
    if m and colocate is None:
        colocate = m.group(1)
if create and colocate:
    print(create + ";")
    print("SELECT create_distributed_table('idemload_stage_explain', 'tenant_id', colocate_with => '%s');" % colocate.replace("'", "''"))
PY
eq "idemload's staging DDL and its distribution were found in the log" 2 "$(grep -c . stage.sql)"
eq "the merge statements were found in the coordinator's log: verdict, counts, merge (two conflict actions), stale" \
    "1 1 2 1" "$(grep -c '^UPDATE' merges.sql) $(grep -c '^SELECT count(\*) FILTER' merges.sql) $(grep -c '^INSERT' merges.sql) $(grep -c '^SELECT count(\*) FROM idemload_stage_explain s JOIN' merges.sql)"
psql -X -q -v ON_ERROR_STOP=1 -d "$CDB" -f stage.sql >/dev/null
eq "the staging table (idemload's DDL) is colocated with the target" t \
    "$(cq "SELECT (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'idemload_stage_explain'::regclass) = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'payment_callback'::regclass)")"
n=0
while IFS= read -r sql; do
    n=$((n + 1))
    psql -X -q -t -A -d "$CDB" -c "EXPLAIN (COSTS OFF) ${sql%;}" >plan$n.txt 2>&1
    if grep -q "Custom Scan (Citus Adaptive)" plan$n.txt && grep -q "Task Count: 8" plan$n.txt &&
        ! grep -Eqi "pull to coordinator|repartition|intermediate|subplan|Citus INSERT ... SELECT|ERROR" plan$n.txt; then
        ok "EXPLAIN $n (${sql:0:40}...): pushed down to the 8 shards"
    else
        fail "EXPLAIN $n (${sql:0:60}...) is not pushed down: $(tr '\n' ' ' <plan$n.txt | cut -c1-400)"
    fi
done <merges.sql
cq "DROP TABLE idemload_stage_explain"
finish
