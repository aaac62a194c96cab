#!/usr/bin/env bash
# Loading over several connections (--jobs): each chunk's keys are split by
# hash into lanes, one transaction per lane.  The table and every figure
# must not depend on the number of connections; a chunk of which only some
# lanes committed (a lane failed, or the process died between two commits)
# is completed by the rerun, without loading a committed lane again; a
# ledger written before lanes existed is read and upgraded.
. "$(dirname "$0")/../lib.sh"
pg_use

snap() {
    q "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, (extract(epoch from received_at)*1000000)::bigint), ',' ORDER BY tenant_id, channel COLLATE \"C\", out_trade_no COLLATE \"C\", callback_type COLLATE \"C\")), '-') FROM payment_callback WHERE deleted_at IS NULL"
}
totals() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_rejected","rows_deduplicated","inserted","updated","unchanged","stale","existing","chunks"))'; }
ledger_dump() {
    q "SELECT concat_ws(':', chunk_no, sum(rows_read), sum(rows_rejected), sum(rows_deduplicated), sum(inserted), sum(updated), sum(unchanged), sum(stale), sum(existing)) FROM idemload_ledger_chunk GROUP BY chunk_no ORDER BY chunk_no"
}
dups() { q "SELECT count(*) FROM (SELECT 1 FROM payment_callback WHERE deleted_at IS NULL GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1) d"; }

# Two overlapping files: many repeated keys, older versions arriving later,
# equal instants, and bad rows.
$GEN --rows 40000 --seed 61 --dup-rate 0.3 --out-of-order 0.3 --ties 0.2 --exact-dup-rate 0.2 --bad-rate 0.01 --format csv --out a.csv --expected a.exp.csv --quiet
$GEN --rows 20000 --seed 61 --dup-rate 0.5 --out-of-order 0.4 --format ndjson --out b.ndjson --expected b.exp.csv --quiet
# a then b by the merge rules, from the generator's states alone.
$EXPECTED_MERGE ab.exp.csv a.exp.csv b.exp.csv 2>ab.counts
check "the model: b updates keys of a and turns older versions away ($(cat ab.counts))" \
    jtrue ab.counts 'r["updated"] > 100 and r["stale"] > 100'

# =====================================================================
# 1. The same table and figures over 1, 2 and 5 connections
# =====================================================================
for j in 1 2 5; do
    init_db ln_j$j
    run import -d "$DB" -j $j --chunk-rows 4000 --report j$j.a.json a.csv
    eq "-j $j: first file exit 1 (bad rows rejected)" 1 $RC
    check "-j $j: says how many connections" contains "$ERR" "$j connection"
    expect_table "-j $j: first file: the generator's expected state" a.exp.csv
    run import -d "$DB" -j $j --chunk-rows 3000 --report j$j.b.json b.ndjson
    eq "-j $j: second file exit 0" 0 $RC
    expect_table "-j $j: a then b: the merge rules' expected state" ab.exp.csv
    eval "SNAP_$j=\$(snap)"
    ledger_dump >j$j.ledger
    eq "-j $j: the ledger has one row per chunk and lane" \
        "$j true" "$(q "SELECT max(l.lanes) || ' ' || (count(*) = count(DISTINCT (c.digest, chunk_no)) * $j AND min(lane) = 0 AND max(lane) = $j - 1) FROM idemload_ledger_chunk c JOIN idemload_ledger l USING (target, digest)")"
    eq "-j $j: no duplicate active key" 0 "$(dups)"
done
for j in 2 5; do
    eval "got=\$SNAP_$j"
    eq "-j $j: table equals -j 1's" "$SNAP_1" "$got"
    eq "-j $j: figures of the first file equal -j 1's" "$(totals j1.a.json)" "$(totals j$j.a.json)"
    eq "-j $j: figures of the second file equal -j 1's" "$(totals j1.b.json)" "$(totals j$j.b.json)"
    check "-j $j: per-chunk figures in the ledger equal -j 1's" cmp -s j1.ledger j$j.ledger
done
check "the second file met existing keys (updated and stale > 0)" jtrue j2.b.json 'r["totals"]["updated"] > 0 and r["totals"]["stale"] > 0 and r["totals"]["unchanged"] >= 0'
eq "rejects: the same rows whatever -j (count)" "$(json j1.a.json 'r["totals"]["rows_rejected"]')" "$(json j5.a.json 'r["totals"]["rows_rejected"]')"
# More connections than rows: most lanes are empty; they commit nothing and
# have no ledger row, and each chunk's reading figures are in one row.
for j in 1 16; do
    init_db ln_small$j
    run import -d "$DB" -j $j --report small$j.json "$SRC"/samples/statements-*
    eq "samples over $j connection(s): exit 3 (the unionpay file lacks channel)" 3 $RC
    eval "SMALL_$j=\$(snap)"
done
eq "samples over 16 connections: the figures of one" "$(totals small1.json)" "$(totals small16.json)"
eq "samples over 16 connections: the table of one" "$SMALL_1" "$SMALL_16"
eq "samples over 16 connections: no ledger row for a lane without rows" 0 \
    "$(q "SELECT count(*) FROM idemload_ledger_chunk WHERE rows_read = 0 AND rows_rejected + inserted + updated + unchanged + stale + existing = 0")"
check "samples over 16 connections: some chunk has fewer than 16 ledger rows" test \
    "$(q "SELECT count(*) FROM (SELECT 1 FROM idemload_ledger_chunk GROUP BY digest, chunk_no HAVING count(*) < 16) c")" -gt 0
eq "samples over 16 connections: each chunk's rows read in exactly one of its rows" 0 \
    "$(q "SELECT count(*) FROM (SELECT 1 FROM idemload_ledger_chunk GROUP BY digest, chunk_no HAVING count(*) FILTER (WHERE rows_read > 0) <> 1) c")"
# A dry run uses one connection and gives the figures of the real run.
init_db ln_dry
run import -d "$DB" -j 3 --dry-run --chunk-rows 4000 --report dry.json a.csv
eq "dry run -j 3: exit 1, figures of the real run" "1 $(totals j1.a.json)" "$RC $(totals dry.json)"
check "dry run: one connection" contains "$ERR" "1 connection"
eq "dry run: nothing written" 0 "$(q "SELECT count(*) FROM payment_callback")"
# Refused rows (a CHECK the server enforces) are isolated in their lane.
init_db ln_check
q "ALTER TABLE payment_callback ADD CONSTRAINT no_status_3 CHECK (status <> 3)"
run import -d "$DB" -j 3 --chunk-rows 4000 --rejects chk.rej --report chk.json a.csv
eq "CHECK over 3 connections: exit 1 (rejects)" 1 $RC
refused=$(grep -c 'no_status_3' chk.rej || true)
check "CHECK violations rejected per row over 3 connections ($refused)" test "$refused" -gt 0
eq "CHECK: the other rows load" "$(q "SELECT count(*) FROM payment_callback")" "$(json chk.json 'r["totals"]["inserted"]')"
eq "CHECK: rejected = read - merged - deduplicated" "$(json chk.json 'r["totals"]["rows_rejected"]')" \
    "$(json chk.json '(t := r["totals"]) and t["rows_read"] - t["rows_deduplicated"] - t["inserted"] - t["updated"] - t["unchanged"] - t["stale"] - t["existing"]')"

# An interrupt leaves whole chunks over several connections too: before a
# lane commits, every lane rolls back; once one has begun, all commit.
$GEN --rows 60000 --seed 63 --dup-rate 0 --format csv --out i.csv --quiet
for k in 1 2 3; do
    init_db ln_int$k
    "$IDEMLOAD" import -d "$DB" -j 3 --chunk-rows 1000 --report int$k.json i.csv >/dev/null 2>int$k.err &
    pid=$!
    for _ in $(seq 1 2400); do
        [ "$(q "SELECT count(*) FROM payment_callback")" -gt $((k * 3000)) ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
    done
    sleep "0.0$((RANDOM % 10))"
    check "SIGINT $k, -j 3: sent while the load runs" kill -INT $pid
    wait $pid; rc=$?
    n=$(q "SELECT count(*) FROM payment_callback")
    eq "SIGINT $k, -j 3: exit 130" 130 $rc
    check "SIGINT $k, -j 3: landed mid-load: more than $((k * 3000)) but not all 60000 rows ($n)" test "$n" -gt $((k * 3000)) -a "$n" -lt 60000
    check "SIGINT $k, -j 3: only whole chunks committed ($n rows)" test $((n % 1000)) -eq 0
    eq "SIGINT $k, -j 3: report counts match the table" "$n" "$(json int$k.json 'r["totals"]["inserted"]')"
    eq "SIGINT $k, -j 3: every chunk in the ledger has its 3 lanes" 0 \
        "$(q "SELECT count(*) FROM (SELECT chunk_no FROM idemload_ledger_chunk GROUP BY chunk_no HAVING count(*) <> 3) c")"
done

# A role allowed one connection: the import warns and loads over one.
init_db ln_limit
q "DROP ROLE IF EXISTS idemload_one; CREATE ROLE idemload_one LOGIN CONNECTION LIMIT 1"
q "GRANT ALL ON payment_callback, payment_callback_id_seq TO idemload_one; GRANT CREATE ON SCHEMA public TO idemload_one"
run import -d "postgresql:///ln_limit?host=$PGHOST&port=$PGPORT&user=idemload_one" -j 2 --chunk-rows 4000 --report lim.json a.csv
eq "one connection allowed: exit 1 (its bad rows), figures of -j 1" "1 $(totals j1.a.json)" "$RC $(totals lim.json)"
check "one connection allowed: warns and loads over one" grep -q "cannot open connection 2 of 2.*loading over 1" "$ERR"
eq "one connection allowed: table as -j 1 after its first file" "$(q "SELECT count(*) FROM payment_callback")" "$(json j1.a.json 'r["totals"]["inserted"]')"
q "DROP OWNED BY idemload_one; DROP ROLE idemload_one"

# =====================================================================
# 2. A lane fails while the other lane of its chunk commits
# =====================================================================
$GEN --rows 30000 --seed 62 --dup-rate 0.1 --ties 0.2 --exact-dup-rate 0.2 --format csv --out c.csv --expected c.exp.csv --quiet
init_db ln_clean
run import -d "$DB" -j 2 --chunk-rows 5000 --report clean.json c.csv
eq "clean load of c.csv: exit 0" 0 $RC
expect_table "clean load of c.csv: the generator's expected state" c.exp.csv
CLEAN_SNAP=$(snap); ledger_dump >clean.ledger
# A key of chunk 4 (records 15001-20000) that occurs once in the file.
BOOM=$(python3 - <<'EOF'
import csv, collections
rows = list(csv.DictReader(open("c.csv", newline="")))
n = collections.Counter(r["out_trade_no"] for r in rows)
print(next(r["out_trade_no"] for r in rows[15500:] if n[r["out_trade_no"]] == 1))
EOF
)
boom() {
    q "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN IF NEW.out_trade_no = '$BOOM' THEN RAISE EXCEPTION 'boom' USING ERRCODE = '42501'; END IF; RETURN NEW; END \$\$"
    q "CREATE TRIGGER boom BEFORE INSERT OR UPDATE ON payment_callback FOR EACH ROW EXECUTE FUNCTION boom()"
}
for rerun_j in 2 1 4; do
    init_db ln_fail$rerun_j; boom
    run import -d "$DB" -j 2 --chunk-rows 5000 --report f1.json c.csv
    eq "failing lane (rerun -j $rerun_j): exit 4" 4 $RC
    check "failing lane: the message names the chunk and lane" grep -q "chunk 4, lane [12] of 2" "$ERR"
    eq "failing lane: chunks 1-3 whole, one lane of chunk 4 committed" "3 6 1" \
        "$(q "SELECT count(DISTINCT chunk_no) FILTER (WHERE chunk_no < 4) || ' ' || count(*) FILTER (WHERE chunk_no < 4) || ' ' || count(*) FILTER (WHERE chunk_no = 4) FROM idemload_ledger_chunk")"
    eq "failing lane: the table holds what the ledger says" "$(q "SELECT sum(inserted) FROM idemload_ledger_chunk")" "$(q "SELECT count(*) FROM payment_callback")"
    q "DROP TRIGGER boom ON payment_callback"
    run import -d "$DB" -j $rerun_j --chunk-rows 5000 --report f2.json c.csv
    eq "rerun -j $rerun_j: exit 0" 0 $RC
    check "rerun -j $rerun_j: resumed after chunk 3 and the committed lane" grep -q "resumed after chunk 3 committed by an earlier run (and some lanes of the next chunk)" "$ERR"
    if [ "$rerun_j" -ne 2 ]; then
        check "rerun -j $rerun_j: keeps the earlier run's 2 lanes" grep -q "with the 2 lanes of the earlier run over $rerun_j connection" "$ERR"
    fi
    eq "rerun -j $rerun_j: table equals a clean load" "$CLEAN_SNAP" "$(snap)"
    expect_table "rerun -j $rerun_j: the generator's expected state" c.exp.csv
    eq "rerun -j $rerun_j: report totals (both runs) = clean load's" "$(totals clean.json)" "$(totals f2.json)"
    ledger_dump >f$rerun_j.ledger
    check "rerun -j $rerun_j: per-chunk ledger figures = clean load's (no lane loaded twice)" cmp -s clean.ledger f$rerun_j.ledger
    eq "rerun -j $rerun_j: completed, 6 chunks of 2 lanes" "completed:6 12" "$(q "SELECT status || ':' || chunks FROM idemload_ledger") $(q "SELECT count(*) FROM idemload_ledger_chunk")"
done

# =====================================================================
# 3. A ledger written before lanes existed
# =====================================================================
# Recreate the earlier layout: no lanes column, no lane column, the
# primary key on (target, digest, chunk_no); the file was killed after
# three chunks.  (The table holds the whole file, so the rerun finds
# chunks 4-6 unchanged; the ledger is what is under test here.)
init_db ln_old
run import -d "$DB" -j 1 --chunk-rows 5000 c.csv
eq "old ledger: the reference load exits 0" 0 $RC
q "ALTER TABLE idemload_ledger_chunk DROP CONSTRAINT idemload_ledger_chunk_pkey, DROP COLUMN lane, ADD CONSTRAINT idemload_ledger_chunk_pkey PRIMARY KEY (target, digest, chunk_no)"
q "ALTER TABLE idemload_ledger DROP COLUMN lanes"
q "UPDATE idemload_ledger SET status = 'loading', chunks = 3, completed_at = NULL"
q "DELETE FROM idemload_ledger_chunk WHERE chunk_no > 3"
run import -d "$DB" --dry-run --chunk-rows 5000 --report old_dry.json c.csv
eq "old ledger, dry run: exit 0" 0 $RC
check "old ledger, dry run: resumes after chunk 3" grep -q "resumed after chunk 3" "$ERR"
eq "old ledger, dry run: layout left as it was" "f" "$(q "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'idemload_ledger_chunk'::regclass AND attname = 'lane' AND NOT attisdropped)")"
run import -d "$DB" --chunk-rows 5000 --report old.json c.csv
eq "old ledger: exit 0" 0 $RC
check "old ledger: resumes after chunk 3" grep -q "resumed after chunk 3" "$ERR"
eq "old ledger: upgraded (lane columns, primary key with lane)" "true|true|true" \
    "$(q "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'idemload_ledger_chunk'::regclass AND attname = 'lane' AND NOT attisdropped) || '|' || EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'idemload_ledger'::regclass AND attname = 'lanes' AND NOT attisdropped) || '|' || (SELECT pg_get_constraintdef(oid) LIKE '%lane%' FROM pg_constraint WHERE conrelid = 'idemload_ledger_chunk'::regclass AND contype = 'p')")"
eq "old ledger: the earlier chunks kept as lane 0 of 1" "3 0 1" "$(q "SELECT count(*) FILTER (WHERE chunk_no <= 3) || ' ' || max(lane) FILTER (WHERE chunk_no <= 3) || ' ' || (SELECT lanes FROM idemload_ledger) FROM idemload_ledger_chunk")"
eq "old ledger: completed, 6 chunks" "completed:6" "$(q "SELECT status || ':' || chunks FROM idemload_ledger")"
eq "old ledger: table equals a clean load" "$CLEAN_SNAP" "$(snap)"
eq "old ledger: rows read over both runs = the file's" 30000 "$(json old.json 'r["totals"]["rows_read"]')"
run import -d "$DB" --chunk-rows 5000 --report old2.json c.csv
eq "old ledger: then skipped" "0 skipped" "$RC $(json old2.json 'r["files"][0]["status"]')"

finish
