#!/usr/bin/env bash
# A ledger entry holds only for the table it was written for (SPEC.md
# "Crash safety, reruns and concurrency"): after TRUNCATE, DROP and init,
# VACUUM FULL, or a ledger written before the table's identity was
# recorded, the same command loads the file again and says why (summary
# and --report "reload_reason"); an unchanged table is skipped as before;
# an interrupted load whose table was truncated starts over; a dry run
# writes nothing and says it would load.
#
# The interrupted loads are made deterministic with a lock, not a timer: a
# trigger on the ledger's chunk table waits for an advisory lock this test
# holds (chunk_hold in tests/lib.sh), so the import stops inside chunk 3
# with chunks 1 and 2 committed.
. "$(dirname "$0")/../lib.sh"
pg_use

# ---- helpers
# snap: checksum of the active rows, by business key (what a load decides).
snap() {
    q "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, (extract(epoch from received_at)*1000000)::bigint), ',' ORDER BY tenant_id, channel COLLATE \"C\", out_trade_no COLLATE \"C\", callback_type COLLATE \"C\")), '-') FROM payment_callback WHERE deleted_at IS NULL"
}
# wsnap: every row with its ctid and xmin: any row written changes it.
wsnap() {
    q "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', ctid, xmin, id, tenant_id, channel, out_trade_no, callback_type, status, payload::text, received_at, handled_at, deleted_at), ',' ORDER BY ctid)), '-') FROM payment_callback"
}
ledger_all() {
    q "SELECT md5(coalesce(string_agg(l::text, ',' ORDER BY l::text), '')) FROM idemload_ledger l"
    q "SELECT md5(coalesce(string_agg(c::text, ',' ORDER BY c::text), '')) FROM idemload_ledger_chunk c"
}
ledger_status() { q "SELECT status || ':' || chunks FROM idemload_ledger WHERE digest = '$1'"; }
digest() { sha256sum "$1" | cut -d' ' -f1; }
fstatus() { json "$1" "r['files'][${2:-0}]['status']"; }
reason() { json "$1" "r['files'][${2:-0}].get('reload_reason') or ''"; }
figs() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","inserted","updated","unchanged","stale","existing","chunks"))'; }
written() { json "$1" '"%d %d" % (r["totals"]["inserted"], r["totals"]["updated"])'; }
table_oid() { q "SELECT 'payment_callback'::regclass::oid"; }
ident_cols() { q "SELECT count(*) FROM pg_attribute WHERE attrelid = 'idemload_ledger'::regclass AND attname IN ('table_oid', 'table_storage') AND NOT attisdropped"; }
backends_gone() {
    for _ in $(seq 1 400); do
        [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'idemload'")" -eq 0 ] && return 0
        sleep 0.05
    done
    return 1
}

# The file and the table a clean load leaves (10 chunks of 2000 rows).
$GEN --rows 20000 --seed 1301 --dup-rate 0.2 --format csv --out f.csv --expected f.exp.csv --quiet
# The state of chunks 4-10 alone (records 6001-20000) loaded into an empty
# table, from the file by the model (what a TRUNCATE before chunk 4 leaves).
python3 - f.csv tail.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
w = csv.writer(open(sys.argv[2], "w", newline="", encoding="utf-8"), lineterminator="\n")
w.writerow(rows[0])
w.writerows(rows[1 + 6000:])
PY
$EXPECTED_MERGE --data tail.exp.csv tail.csv 2>tail.counts
eq "the model read chunks 4-10" 14000 "$(json tail.counts 'r["rows"]')"
F=$(digest f.csv)
new_db li_clean; run init -d "$DB"
run import -d "$DB" --chunk-rows 2000 --report clean.json f.csv
eq "clean load: exit 0" 0 $RC
expect_table "clean load: the generator's expected state" f.exp.csv
CLEAN_FIGS=$(figs clean.json)
check "clean load: rows inserted" jtrue clean.json 'r["totals"]["inserted"] > 10000'

# =====================================================================
# 1. Unchanged table: skipped as before, nothing written
# =====================================================================
new_db li_same; run init -d "$DB"
run import -d "$DB" --chunk-rows 2000 --report s1.json f.csv
eq "unchanged: first load = clean load (figures)" "$CLEAN_FIGS" "$(figs s1.json)"
expect_table "unchanged: first load: the file's expected state" f.exp.csv
eq "unchanged: ledger records oid and storage of the table" \
    "$(table_oid):$(q "SELECT pg_relation_filenode('payment_callback')")" \
    "$(q "SELECT table_oid || ':' || table_storage FROM idemload_ledger WHERE digest = '$F'")"
before=$(wsnap); lb=$(ledger_all)
run import -d "$DB" --chunk-rows 2000 --report s2.json f.csv
eq "unchanged: exit 0, skipped" "0 skipped" "$RC $(fstatus s2.json)"
eq "unchanged: no reload reason" "" "$(reason s2.json)"
check "unchanged: summary says skipped" contains "$ERR" "f.csv \[csv\] skipped"
check "unchanged: summary gives no ledger reason" sh -c "! grep -q 'ledger: ' '$ERR'"
eq "unchanged: no row written (ctid, xmin)" "$before" "$(wsnap)"
eq "unchanged: ledger untouched" "$lb" "$(ledger_all)"
# Plain DML does not replace storage: still skipped (DELETE is not in the
# contract; the ledger cannot see single rows).
q "UPDATE payment_callback SET handled_at = now() WHERE id = (SELECT min(id) FROM payment_callback)"
run import -d "$DB" --chunk-rows 2000 --report s3.json f.csv
eq "after an UPDATE: still skipped" "0 skipped" "$RC $(fstatus s3.json)"

# =====================================================================
# 2. TRUNCATE: the same command loads the file again, into the same table
# =====================================================================
new_db li_trunc; run init -d "$DB"
run import -d "$DB" --chunk-rows 2000 --report t1.json f.csv
oid_before=$(table_oid)
q "TRUNCATE payment_callback"
run import -d "$DB" --chunk-rows 2000 --report t2.json f.csv
eq "truncate: exit 0, loaded (ok)" "0 ok" "$RC $(fstatus t2.json)"
eq "truncate: same figures as the first load" "$(figs t1.json)" "$(figs t2.json)"
expect_table "truncate: the table is the file's expected state (a clean load's)" f.exp.csv
eq "truncate: same table (oid)" "$oid_before" "$(table_oid)"
check "truncate: report reload_reason says truncated" jtrue t2.json '"truncated or rewritten" in r["files"][0]["reload_reason"]'
check "truncate: summary says why (ledger: ... truncated)" grep -q "ledger: the ledger holds it as completed, but table public.payment_callback was truncated or rewritten" "$ERR"
check "truncate: report keeps its other fields" jtrue t2.json 'all(k in r["files"][0] for k in ("path","format","status","error","rows_read","inserted","chunks"))'
eq "truncate: ledger completed again, with the new storage" \
    "completed:10 $(q "SELECT pg_relation_filenode('payment_callback')")" \
    "$(ledger_status "$F") $(q "SELECT table_storage FROM idemload_ledger WHERE digest = '$F'")"
run import -d "$DB" --chunk-rows 2000 --report t3.json f.csv
eq "truncate: then skipped" "0 skipped" "$RC $(fstatus t3.json)"

# =====================================================================
# 3. DROP TABLE and init: loaded again
# =====================================================================
new_db li_drop; run init -d "$DB"
run import -d "$DB" --chunk-rows 2000 --report d1.json f.csv
old_oid=$(table_oid)
q "DROP TABLE payment_callback"
run init -d "$DB"
run import -d "$DB" --chunk-rows 2000 --report d2.json f.csv
eq "drop+init: exit 0, loaded (ok)" "0 ok" "$RC $(fstatus d2.json)"
eq "drop+init: same figures as the first load" "$(figs d1.json)" "$(figs d2.json)"
expect_table "drop+init: the table is the file's expected state (a clean load's)" f.exp.csv
check "drop+init: reason names the old and the new oid" sh -c "grep -q 'with oid $old_oid, but that table was dropped since (public.payment_callback now has oid $(table_oid))' '$ERR'"
check "drop+init: report carries the reason" jtrue d2.json '"dropped" in r["files"][0]["reload_reason"]'
run import -d "$DB" --chunk-rows 2000 --report d3.json f.csv
eq "drop+init: then skipped" "0 skipped" "$RC $(fstatus d3.json)"

# =====================================================================
# 4. VACUUM FULL: loaded again, nothing written
# =====================================================================
new_db li_vacuum; run init -d "$DB"
run import -d "$DB" --chunk-rows 2000 --report v1.json f.csv
q "VACUUM FULL payment_callback"
before=$(wsnap)
run import -d "$DB" --chunk-rows 2000 --report v2.json f.csv
eq "vacuum full: exit 0, loaded again (ok)" "0 ok" "$RC $(fstatus v2.json)"
eq "vacuum full: nothing inserted or updated" "0 0" "$(written v2.json)"
check "vacuum full: every merged row unchanged or stale" jtrue v2.json '(t := r["totals"]) and t["unchanged"] > 0 and t["unchanged"] + t["stale"] == t["rows_read"] - t["rows_rejected"] - t["rows_deduplicated"]'
eq "vacuum full: no row written (ctid, xmin)" "$before" "$(wsnap)"
check "vacuum full: the reason says rewritten" jtrue v2.json '"VACUUM FULL" in r["files"][0]["reload_reason"]'
run import -d "$DB" --chunk-rows 2000 --report v3.json f.csv
eq "vacuum full: then skipped" "0 skipped" "$RC $(fstatus v3.json)"

# =====================================================================
# 5. A dry run against a changed table says it would load, writes nothing
# =====================================================================
q "TRUNCATE payment_callback"
before=$(wsnap); lb=$(ledger_all)
run import -d "$DB" --dry-run --chunk-rows 2000 --report dr.json f.csv
eq "dry run, truncated table: exit 0, would load (ok)" "0 ok" "$RC $(fstatus dr.json)"
check "dry run: figures of a load into the empty table" jtrue dr.json 'r["dry_run"] is True and r["totals"]["inserted"] == '"$(json clean.json 'r["totals"]["inserted"]')"
check "dry run: reason says it would be loaded again" jtrue dr.json '"would be loaded again" in r["files"][0]["reload_reason"]'
check "dry run: summary says why" grep -q "ledger: .*truncated or rewritten.*would be loaded again" "$ERR"
eq "dry run: ledger untouched" "$lb" "$(ledger_all)"
eq "dry run: table untouched" "$before" "$(wsnap)"

# =====================================================================
# 6. Interrupted loads (kill -9 inside chunk 3)
# =====================================================================
# kill_in_chunk3 NAME: starts the import, waits until it waits in chunk 3,
# kill -9s it and waits for its sessions to end.
kill_in_chunk3() {
    "$IDEMLOAD" import -d "$DB" --chunk-rows 2000 --report "$1.json" f.csv >/dev/null 2>"$1.err" 7>&- &
    local pid=$! waiting=0
    chunk_wait 1313 $pid && waiting=1
    eq "$1: the import waits inside chunk 3" 1 $waiting
    kill -9 $pid; wait $pid 2>/dev/null
    chunk_unhold 1313
    backends_gone || fail "$1: the killed client's sessions did not end"
    eq "$1: the file is left loading with chunks 1 and 2" "loading 2" \
        "$(q "SELECT status FROM idemload_ledger WHERE digest = '$F'") $(q "SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk WHERE digest = '$F'")"
}
# (a) table unchanged: resumes after chunk 2
new_db li_resume; run init -d "$DB"
printf 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n9,wechat,LI1,pay,1,"{}",2026-11-28T10:00:00Z\n' >tiny.csv
run import -d "$DB" tiny.csv     # creates the ledger
chunk_hold 1313
kill_in_chunk3 res
run import -d "$DB" --chunk-rows 2000 --report res2.json f.csv
eq "resume, unchanged table: exit 0, ok" "0 ok" "$RC $(fstatus res2.json)"
check "resume, unchanged table: resumed after chunk 2" grep -q "resumed after chunk 2[^0-9]" "$ERR"
eq "resume, unchanged table: no reload reason" "" "$(reason res2.json)"
eq "resume, unchanged table: 8 chunks loaded in this run" "8" "$(json res2.json 'r["totals"]["chunks"] - 2')"
q "DELETE FROM payment_callback WHERE out_trade_no = 'LI1'"
expect_table "resume, unchanged table: the table is the file's expected state (a clean load's)" f.exp.csv
# (b) table truncated before the rerun: the file starts over
new_db li_restart; run init -d "$DB"
run import -d "$DB" tiny.csv
chunk_hold 1313
kill_in_chunk3 rst
q "TRUNCATE payment_callback"
run import -d "$DB" --chunk-rows 2000 --report rst2.json f.csv
eq "restart, truncated table: exit 0, ok" "0 ok" "$RC $(fstatus rst2.json)"
check "restart, truncated table: not resumed" sh -c "! grep -q 'resumed' '$ERR'"
check "restart: summary says it starts over and why" grep -q "ledger: an earlier run committed 2 chunks of it, but table public.payment_callback was truncated or rewritten since .*, so it is loaded from the start" "$ERR"
check "restart: report reason" jtrue rst2.json '"loaded from the start" in r["files"][0]["reload_reason"]'
eq "restart: the whole file loaded, figures of a clean load" "$CLEAN_FIGS" "$(figs rst2.json)"
expect_table "restart: the table is the file's expected state (a clean load's)" f.exp.csv
eq "restart: ledger completed, 10 chunks, each once" "completed:10 10 true" \
    "$(ledger_status "$F") $(q "SELECT count(DISTINCT chunk_no) || ' ' || (count(*) = count(DISTINCT (chunk_no, lane))) FROM idemload_ledger_chunk WHERE digest = '$F'")"

# (c) TRUNCATE while the file loads: queued behind chunk 3, it commits
# before chunk 4, so chunks 1-3 are gone.  The file fails (exit 4, never
# completed: SPEC.md "Crash safety"), and the next run loads it again.
new_db li_race; run init -d "$DB"
run import -d "$DB" tiny.csv
chunk_hold 1313
"$IDEMLOAD" import -d "$DB" --chunk-rows 2000 --report race1.json f.csv >/dev/null 2>race1.err 7>&- &
pid=$!
waiting=0
chunk_wait 1313 $pid && waiting=1
eq "race: the import waits inside chunk 3" 1 $waiting
psql -X -q -c "TRUNCATE payment_callback" >/dev/null 2>&1 7>&- &
tpid=$!
queued=0
for _ in $(seq 1 400); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'TRUNCATE payment_callback%' AND wait_event_type = 'Lock'")" -ge 1 ] && { queued=1; break; }
    sleep 0.05
done
eq "race: the TRUNCATE waits for chunk 3" 1 $queued
chunk_release
wait $pid; rc=$?
wait $tpid
q "DROP TRIGGER chunk_hold_1313 ON idemload_ledger_chunk"
eq "race: the load fails (exit 4)" 4 $rc
check "race: it says the table was truncated while the file loaded" grep -q "was truncated, rewritten or dropped by another session while this file loaded" race1.err
eq "race: the report says partial, not ok" partial "$(fstatus race1.json)"
eq "race: the ledger does not hold the file as completed" loading \
    "$(q "SELECT status FROM idemload_ledger WHERE digest = '$F'")"
eq "race: no chunk after the TRUNCATE committed (the table holds only chunk 3's rows or none)" \
    0 "$(q "SELECT count(*) FROM idemload_ledger_chunk WHERE digest = '$F' AND chunk_no > 3")"
check "race: rows of chunks 1-3 are gone (fewer rows than the file's keys)" \
    test "$(q "SELECT count(*) FROM payment_callback WHERE out_trade_no <> 'LI1'")" -lt "$(($(wc -l <f.exp.csv) - 1))"
run import -d "$DB" --chunk-rows 2000 --report race2.json f.csv
eq "race: the next run loads the file again" "0 ok" "$RC $(fstatus race2.json)"
check "race: and says why" jtrue race2.json '"truncated or rewritten" in r["files"][0]["reload_reason"]'
q "DELETE FROM payment_callback WHERE out_trade_no = 'LI1'"
expect_table "race: the table is the file's expected state (a clean load's)" f.exp.csv

# (d) DROP and CREATE while the file loads (another session replaces the
# table under the same name, queued behind chunk 3): the file fails (exit
# 4), and the next run loads it into the new table.
new_db li_race_drop; run init -d "$DB"
run import -d "$DB" tiny.csv
chunk_hold 1313
"$IDEMLOAD" import -d "$DB" --chunk-rows 2000 --report rd1.json f.csv >/dev/null 2>rd1.err 7>&- &
pid=$!
waiting=0
chunk_wait 1313 $pid && waiting=1
eq "race drop: the import waits inside chunk 3" 1 $waiting
old_oid=$(table_oid)
psql -X -q -v ON_ERROR_STOP=1 >/dev/null 2>rd_swap.err 7>&- <<'SQL' &
BEGIN;
ALTER TABLE payment_callback RENAME TO pc_old;
CREATE TABLE payment_callback (LIKE pc_old INCLUDING ALL);
DROP TABLE pc_old CASCADE;
COMMIT;
SQL
tpid=$!
queued=0
for _ in $(seq 1 400); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'ALTER TABLE payment_callback%' AND wait_event_type = 'Lock'")" -ge 1 ] && { queued=1; break; }
    sleep 0.05
done
eq "race drop: the swap waits for chunk 3" 1 $queued
chunk_release
wait $pid; rc=$?
wait $tpid; eq "race drop: the other session replaced the table" "0 1" "$? $(q "SELECT count(*) FROM pg_class WHERE relname = 'payment_callback' AND oid <> $old_oid")"
q "DROP TRIGGER chunk_hold_1313 ON idemload_ledger_chunk"
eq "race drop: the load fails (exit 4)" 4 $rc
check "race drop: it says why" grep -q "was truncated, rewritten or dropped by another session while this file loaded" rd1.err
eq "race drop: not completed" loading "$(q "SELECT status FROM idemload_ledger WHERE digest = '$F'")"
eq "race drop: nothing committed into the new table" 0 "$(q "SELECT count(*) FROM payment_callback")"

# =====================================================================
# 7. A ledger of the previous layout (no identity): a dry run reads it and
#    changes nothing; the real run migrates it and loads the files again
# =====================================================================
new_db li_old; run init -d "$DB"
run import -d "$DB" --chunk-rows 2000 --report o1.json f.csv
# Rebuild the ledger exactly as the previous version created it.
q "CREATE TABLE old_l AS SELECT target, digest, size_bytes, file_name, chunk_rows, lanes, status, chunks, started_at, updated_at, completed_at FROM idemload_ledger;
   CREATE TABLE old_c AS SELECT target, digest, chunk_no, lane, rows_read, rows_rejected, rows_deduplicated, inserted, updated, unchanged, stale, existing, committed_at FROM idemload_ledger_chunk;
   DROP TABLE idemload_ledger_chunk, idemload_ledger;
   CREATE TABLE idemload_ledger (
     target       text        NOT NULL,
     digest       text        NOT NULL,
     size_bytes   bigint      NOT NULL,
     file_name    text        NOT NULL,
     chunk_rows   integer     NOT NULL,
     lanes        integer     NOT NULL DEFAULT 1,
     status       text        NOT NULL CHECK (status IN ('loading', 'completed')),
     chunks       bigint      NOT NULL DEFAULT 0,
     started_at   timestamptz NOT NULL DEFAULT now(),
     updated_at   timestamptz NOT NULL DEFAULT now(),
     completed_at timestamptz,
     PRIMARY KEY (target, digest));
   CREATE TABLE idemload_ledger_chunk (
     target            text        NOT NULL,
     digest            text        NOT NULL,
     chunk_no          bigint      NOT NULL,
     lane              integer     NOT NULL DEFAULT 0,
     rows_read         bigint      NOT NULL,
     rows_rejected     bigint      NOT NULL,
     rows_deduplicated bigint      NOT NULL,
     inserted          bigint      NOT NULL,
     updated           bigint      NOT NULL,
     unchanged         bigint      NOT NULL,
     stale             bigint      NOT NULL,
     existing          bigint      NOT NULL,
     committed_at      timestamptz NOT NULL DEFAULT now(),
     CONSTRAINT idemload_ledger_chunk_pkey PRIMARY KEY (target, digest, chunk_no, lane),
     FOREIGN KEY (target, digest) REFERENCES idemload_ledger ON DELETE CASCADE);
   INSERT INTO idemload_ledger SELECT * FROM old_l;
   INSERT INTO idemload_ledger_chunk SELECT * FROM old_c;
   DROP TABLE old_l, old_c"
eq "old layout: no identity columns" 0 "$(ident_cols)"
before=$(wsnap); lb=$(ledger_all)
run import -d "$DB" --dry-run --chunk-rows 2000 --report o2.json f.csv
eq "old layout, dry run: exit 0, would load (ok)" "0 ok" "$RC $(fstatus o2.json)"
check "old layout, dry run: says the entry has no table identity" jtrue o2.json '"older ledger" in r["files"][0]["reload_reason"] and "would be loaded again" in r["files"][0]["reload_reason"]'
eq "old layout, dry run: ledger not migrated" 0 "$(ident_cols)"
eq "old layout, dry run: ledger rows untouched" "$lb" "$(ledger_all)"
eq "old layout, dry run: table untouched" "$before" "$(wsnap)"
run import -d "$DB" --chunk-rows 2000 --report o3.json f.csv
eq "old layout: exit 0, loaded again (ok)" "0 ok" "$RC $(fstatus o3.json)"
eq "old layout: migrated in place (identity columns added)" 2 "$(ident_cols)"
eq "old layout: migrated in place (the chunk rows' --changes column added)" 1 "$(q "SELECT count(*) FROM pg_attribute WHERE attrelid = 'idemload_ledger_chunk'::regclass AND attname = 'changes' AND NOT attisdropped")"
check "old layout: says it migrated the ledger" grep -q "now records the identity of the table" "$ERR"
check "old layout: summary says why the file is loaded again" grep -q "ledger: .*did not record which table it loaded (an older ledger)" "$ERR"
eq "old layout: nothing inserted or updated" "0 0" "$(written o3.json)"
eq "old layout: no row written (ctid, xmin)" "$before" "$(wsnap)"
eq "old layout: entry now records the table" "$(table_oid):$(q "SELECT pg_relation_filenode('payment_callback')")" \
    "$(q "SELECT table_oid || ':' || table_storage FROM idemload_ledger WHERE digest = '$F'")"
run import -d "$DB" --chunk-rows 2000 --report o4.json f.csv
eq "old layout: then skipped" "0 skipped" "$RC $(fstatus o4.json)"

# =====================================================================
# 8. A partitioned target: its leaf partitions play the part of storage.
#    (Only the ledger's decisions are checked here: whether the merge can
#    write into a partitioned table is not this test's subject.)
# =====================================================================
$GEN --rows 600 --seed 1302 --format csv --out p.csv --quiet
P=$(digest p.csv)
new_db li_part
q "CREATE TABLE payment_callback (
     id bigserial, tenant_id bigint NOT NULL, channel text NOT NULL,
     out_trade_no text NOT NULL, callback_type text NOT NULL,
     status smallint NOT NULL DEFAULT 0, payload jsonb NOT NULL,
     received_at timestamptz NOT NULL DEFAULT now(), handled_at timestamptz,
     deleted_at timestamptz) PARTITION BY HASH (tenant_id);
   CREATE TABLE pc_0 PARTITION OF payment_callback FOR VALUES WITH (MODULUS 2, REMAINDER 0);
   CREATE TABLE pc_1 PARTITION OF payment_callback FOR VALUES WITH (MODULUS 2, REMAINDER 1);
   CREATE UNIQUE INDEX uk_pc ON payment_callback (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL"
run import -d "$DB" --chunk-rows 300 --report p1.json p.csv
eq "partitioned: the file is completed in the ledger" "ok completed:2" "$(fstatus p1.json) $(ledger_status "$P")"
eq "partitioned: ledger storage lists both leaf partitions with their storage" \
    "partitions:$(q "SELECT string_agg(oid || '/' || pg_relation_filenode(oid), ',' ORDER BY oid) FROM pg_class WHERE relname IN ('pc_0', 'pc_1')")" \
    "$(q "SELECT table_storage FROM idemload_ledger WHERE digest = '$P'")"
run import -d "$DB" --chunk-rows 300 --report p2.json p.csv
eq "partitioned, unchanged: skipped" "0 skipped" "$RC $(fstatus p2.json)"
q "TRUNCATE pc_1"
run import -d "$DB" --chunk-rows 300 --report p3.json p.csv
eq "partitioned, one partition truncated: loaded again" ok "$(fstatus p3.json)"
check "partitioned: reason says its partitions changed" jtrue p3.json '"partitions changed" in r["files"][0]["reload_reason"]'
run import -d "$DB" --chunk-rows 300 --report p4.json p.csv
eq "partitioned: then skipped" "0 skipped" "$RC $(fstatus p4.json)"
q "CREATE TABLE pc_x (LIKE payment_callback)"
q "ALTER TABLE payment_callback DETACH PARTITION pc_1"
q "ALTER TABLE payment_callback ATTACH PARTITION pc_x FOR VALUES WITH (MODULUS 2, REMAINDER 1)"
run import -d "$DB" --chunk-rows 300 --report p5.json p.csv
eq "partitioned, a partition swapped: loaded again" ok "$(fstatus p5.json)"

# =====================================================================
# 9. A table in another schema, with a name that needs quoting: its
#    identity is read through the same name the merge writes into
# =====================================================================
new_db li_quoted
q 'CREATE SCHEMA "Stage 2"'
run init -d "$DB" --table '"Stage 2"."Pay CB"'
eq "quoted: init" 0 $RC
run import -d "$DB" --table '"Stage 2"."Pay CB"' --chunk-rows 2000 --report qn1.json f.csv
eq "quoted: loaded" "0 ok" "$RC $(fstatus qn1.json)"
eq "quoted: ledger in the table's schema records its identity" \
    "$(q "SELECT oid || ':' || pg_relation_filenode(oid) FROM pg_class WHERE relname = 'Pay CB'")" \
    "$(q "SELECT table_oid || ':' || table_storage FROM \"Stage 2\".idemload_ledger WHERE digest = '$F'")"
run import -d "$DB" --table '"Stage 2"."Pay CB"' --chunk-rows 2000 --report qn2.json f.csv
eq "quoted: unchanged, skipped" "0 skipped" "$RC $(fstatus qn2.json)"
q 'TRUNCATE "Stage 2"."Pay CB"'
run import -d "$DB" --table '"Stage 2"."Pay CB"' --chunk-rows 2000 --report qn3.json f.csv
eq "quoted: truncated, loaded again" "0 ok $(json clean.json 'r["totals"]["inserted"]')" "$RC $(fstatus qn3.json) $(json qn3.json 'r["totals"]["inserted"]')"

finish
