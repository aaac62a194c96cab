#!/usr/bin/env bash
# A failure of the load is not a failure of every row (SPEC.md, "A row's
# fault or the load's fault"): only SQLSTATE classes 22, 23, 54 and P0 are
# one row's refusal; anything else stops the load with exit 4, rejects
# nothing, leaves the file to the same command once the cause is fixed, and
# says the server's words and SQLSTATE.  Columns of the table idemload does
# not write keep their defaults or take a --set constant; a NOT NULL column
# nothing fills is a configuration error before any row is read.
. "$(dirname "$0")/../lib.sh"
pg_use

$GEN --rows 3000 --seed 5 --dup-rate 0 --format csv --out rows.csv --quiet
$GEN --rows 3000 --seed 5 --dup-rate 0 --format csv --expected rows.expected.csv --out /dev/null --quiet
NROWS=$(python3 -c 'import csv,sys; print(sum(1 for _ in csv.DictReader(open(sys.argv[1]))))' rows.expected.csv)
check "the generator wrote 3000 keys" test "$NROWS" -eq 3000
count() { q "SELECT count(*) FROM payment_callback"; }
rejects() { if [ -f rj.ndjson ]; then wc -l <rj.ndjson; else echo 0; fi; }
completed() {
    if [ "$(q "SELECT to_regclass('idemload_ledger') IS NULL")" = t ]; then echo none; return; fi
    q "SELECT count(*) FROM idemload_ledger WHERE status = 'completed'"
}

# A load-level failure, then the fix, then the same command.
# usage: load_failure NAME SQLSTATE MESSAGE SETUP_SQL FIX_SQL
load_failure() {
    local name=$1 state=$2 message=$3 setup=$4 fix=$5
    new_db lf_$name; run init -d "$DB"; eq "$name: init" 0 $RC
    q "CREATE SEQUENCE calls; $setup" >/dev/null || fail "$name: setup SQL"
    rm -f rj.ndjson
    run import -d "$DB" --rejects rj.ndjson --chunk-rows 1000 --report $name.json rows.csv
    eq "$name: exit 4" 4 $RC
    check "$name: stderr names the SQLSTATE" contains "$ERR" "SQLSTATE $state"
    check "$name: stderr holds the server's message" contains "$ERR" "$message"
    check "$name: stderr says it is the load, not a row" contains "$ERR" "the load failed, not a row"
    eq "$name: nothing rejected" 0 "$(rejects)"
    eq "$name: nothing in the table" 0 "$(count)"
    eq "$name: the file is not completed in the ledger" 0 "$(completed)"
    check "$name: the report says failed, no row rejected" \
        jtrue $name.json 'r["files"][0]["status"] == "failed" and r["totals"]["rows_rejected"] == 0'
    # A dry run meets the same failure: the same exit status, nothing rejected.
    run import -d "$DB" --dry-run --rejects rj.ndjson --chunk-rows 1000 rows.csv
    eq "$name: dry run exit 4" 4 $RC
    eq "$name: dry run rejects nothing" 0 "$(rejects)"
    # No isolation: the trigger ran a handful of times, not once per row
    # of a halving search (about 2 x 3000 calls).
    local calls
    calls=$(q "SELECT last_value FROM calls")
    check "$name: no row-by-row isolation ($calls trigger calls)" test "$calls" -le 20
    q "$fix" >/dev/null || fail "$name: fix SQL"
    run import -d "$DB" --rejects rj.ndjson --chunk-rows 1000 rows.csv
    eq "$name: fixed, the same command (no --force) loads it: exit 0" 0 $RC
    eq "$name: every row loaded" "$NROWS" "$(count)"
    eq "$name: completed in the ledger" 1 "$(completed)"
}

load_failure unsupported 0A000 "cannot perform a lateral outer join (simulated)" \
    "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN PERFORM nextval('calls'); RAISE EXCEPTION 'cannot perform a lateral outer join (simulated)' USING ERRCODE = '0A000'; END \$\$;
     CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON payment_callback FOR EACH ROW EXECUTE FUNCTION refuse();" \
    "DROP TRIGGER refuse ON payment_callback"
run import -d "$DB" --force --rejects rj.ndjson rows.csv   # (table already loaded: all unchanged)
eq "unsupported: a re-import after the fix exits 0" 0 $RC

load_failure dropped_function 42883 "function helper() does not exist" \
    "CREATE FUNCTION helper() RETURNS void LANGUAGE sql AS 'SELECT 1';
     CREATE FUNCTION calls_helper() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN PERFORM nextval('calls'); PERFORM helper(); RETURN NEW; END \$\$;
     CREATE TRIGGER calls_helper BEFORE INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION calls_helper();
     DROP FUNCTION helper();" \
    "CREATE FUNCTION helper() RETURNS void LANGUAGE sql AS 'SELECT 1'"

# The server's message reaches the user (it was lost on ROLLBACK once).
new_db lf_msg; run init -d "$DB"
q "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN RAISE EXCEPTION 'distributed subquery (simulated)' USING ERRCODE = '0A000'; END \$\$;
   CREATE TRIGGER refuse BEFORE INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION refuse();" >/dev/null
run import -d "$DB" -j 1 --rejects rj.ndjson rows.csv
eq "message: exit 4" 4 $RC
check "message: the server's words and SQLSTATE on stderr" contains "$ERR" "distributed subquery (simulated) (SQLSTATE 0A000)"
check "message: never an empty SQLSTATE" bash -c "! grep -q 'SQLSTATE )' '$ERR'"

# One row raised against by a trigger (P0001): that row only.
new_db lf_p0; run init -d "$DB"
q "CREATE FUNCTION one() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN IF NEW.out_trade_no = '$(python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[99]["out_trade_no"])' rows.expected.csv)' THEN RAISE EXCEPTION 'merchant blocked this order'; END IF; RETURN NEW; END \$\$;
   CREATE TRIGGER one BEFORE INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION one();" >/dev/null
rm -f rj.ndjson
run import -d "$DB" --rejects rj.ndjson rows.csv
eq "P0001 for one row: exit 1" 1 $RC
eq "P0001 for one row: one row rejected" 1 "$(rejects)"
check "P0001 for one row: with the trigger's message and SQLSTATE" \
    grep -q "merchant blocked this order (SQLSTATE P0001)" rj.ndjson
eq "P0001 for one row: the others loaded" $((NROWS - 1)) "$(count)"

# A CHECK constraint refusing one row (class 23): that row only.
new_db lf_check; run init -d "$DB"
bad=$(python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[199]["out_trade_no"])' rows.expected.csv)
q "ALTER TABLE payment_callback ADD CONSTRAINT no_bad CHECK (out_trade_no <> '$bad')" >/dev/null
rm -f rj.ndjson
run import -d "$DB" --rejects rj.ndjson rows.csv
eq "CHECK for one row: exit 1" 1 $RC
eq "CHECK for one row: one row rejected" 1 "$(rejects)"
check "CHECK for one row: rejected for the constraint (23514)" grep -q "no_bad.*SQLSTATE 23514" rj.ndjson
eq "CHECK for one row: the others loaded" $((NROWS - 1)) "$(count)"

# =====================================================================
# Columns idemload does not write
# =====================================================================
new_db lf_cols; run init -d "$DB"; eq "cols: init" 0 $RC
q "ALTER TABLE payment_callback ADD COLUMN merchant_id bigint NOT NULL, ADD COLUMN created_at timestamptz NOT NULL DEFAULT '2020-01-01Z', ADD COLUMN note text" >/dev/null
rm -f rj.ndjson
run import -d "$DB" --rejects rj.ndjson rows.csv
eq "NOT NULL column without default: exit 2" 2 $RC
check "NOT NULL column without default: named, with the --set that fills it" \
    contains "$ERR" "merchant_id (bigint).*--set merchant_id=VALUE"
check "NOT NULL column without default: the column with a default is not named" \
    bash -c "! grep -q created_at '$ERR'"
eq "NOT NULL column without default: nothing rejected" 0 "$(rejects)"
eq "NOT NULL column without default: no ledger written" "none" "$(completed)"
run import -d "$DB" --dry-run rows.csv
eq "NOT NULL column without default: dry run exit 2 too" 2 $RC
run validate --set merchant_id=7 --rejects rj.ndjson rows.csv
eq "validate accepts --set of a table column (it needs no table)" 0 $RC
for bad in "merchant_id=abc" "merchant_id=" "nosuch=1" "id=5" "deleted_at=2026-01-01Z"; do
    run import -d "$DB" --set "$bad" rows.csv
    eq "--set $bad: exit 2" 2 $RC
    eq "--set $bad: nothing loaded" 0 "$(count)"
done
run import -d "$DB" --set merchant_id=abc rows.csv
check "--set merchant_id=abc: says it is not a valid bigint" contains "$ERR" "not a valid bigint"
run import -d "$DB" --set nosuch=1 rows.csv
check "--set nosuch=1: says the column does not exist" contains "$ERR" "has no column nosuch"
run import -d "$DB" --set merchant_id=7 --set merchant_id=8 rows.csv
eq "--set twice for one column: exit 2" 2 $RC
run import -d "$DB" --set merchant_id=77 --set "note=it's \"quoted\"" --rejects rj.ndjson rows.csv
eq "--set merchant_id=77: exit 0" 0 $RC
eq "--set merchant_id=77: every row loaded with it, the default and the note" \
    "$NROWS|$NROWS|$NROWS" \
    "$(q "SELECT count(*) FILTER (WHERE merchant_id = 77) || '|' || count(*) FILTER (WHERE created_at = '2020-01-01Z') || '|' || count(*) FILTER (WHERE note = 'it''s \"quoted\"') FROM payment_callback")"
# An update leaves the other columns alone (they describe the row's
# creation): a newer version of every key with another --set.
sed 's/2026-/2027-/g' rows.csv >rows_newer.csv
run import -d "$DB" --set merchant_id=88 --report newer.json rows_newer.csv
eq "newer versions with another --set: exit 0" 0 $RC
check "newer versions: all updated" jtrue newer.json "r['totals']['updated'] == $NROWS"
eq "newer versions: merchant_id kept from the insert" "$NROWS" "$(q "SELECT count(*) FROM payment_callback WHERE merchant_id = 77")"
# With --on-conflict nothing the constants follow the merge's own parameters.
new_db lf_cols2; run init -d "$DB"
q "ALTER TABLE payment_callback ADD COLUMN merchant_id bigint NOT NULL" >/dev/null
run import -d "$DB" --on-conflict nothing --set merchant_id=5 rows.csv
eq "--on-conflict nothing with --set: exit 0" 0 $RC
eq "--on-conflict nothing with --set: the value in every row" "$NROWS" "$(q "SELECT count(*) FROM payment_callback WHERE merchant_id = 5")"

# A DEFERRABLE unique constraint on the key: INSERT ... ON CONFLICT takes
# every unique index on its columns as an arbiter and refuses a deferrable
# one (55000), whatever other index exists.  The table is refused before
# any row is read (the append would otherwise load the first chunks and
# stop at the first merge), and check says why and how to fix it.
new_db lf_deferrable
q "CREATE TABLE payment_callback (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL, channel text NOT NULL, out_trade_no text NOT NULL, callback_type text NOT NULL, status smallint NOT NULL, payload jsonb NOT NULL, received_at timestamptz NOT NULL, CONSTRAINT uk_key UNIQUE (tenant_id, channel, out_trade_no, callback_type) DEFERRABLE INITIALLY DEFERRED)" >/dev/null
run import -d "$DB" --chunk-rows 500 rows.csv
eq "a DEFERRABLE unique constraint: exit 2" 2 $RC
check "a DEFERRABLE unique constraint: named, with the fix" contains "$ERR" "DEFERRABLE unique constraint on the business key (uk_key)"
eq "a DEFERRABLE unique constraint: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback")"
q "CREATE UNIQUE INDEX uk_other ON payment_callback (tenant_id, channel, out_trade_no, callback_type)" >/dev/null
run import -d "$DB" --chunk-rows 500 rows.csv
eq "a DEFERRABLE constraint beside a usable index: still exit 2" 2 $RC
run check -d "$DB"
eq "check: not safe" 1 $RC
check "check: says the constraint is DEFERRABLE" contains "$OUT" "uk_key: DEFERRABLE"
check "check: the other index does not count while it exists" contains "$OUT" "uk_other: valid, but the DEFERRABLE uk_key"
check "check: the fix" contains "$OUT" "fix: drop the constraint uk_key and add it again NOT DEFERRABLE"
run check -d "$DB" --report check.json
check "check JSON: the constraint is marked deferrable" jtrue check.json '[i["deferrable"] for i in r["indexes"] if i["name"] == "uk_key"] == [True]'
q "ALTER TABLE payment_callback DROP CONSTRAINT uk_key, ADD CONSTRAINT uk_key UNIQUE (tenant_id, channel, out_trade_no, callback_type)" >/dev/null
run import -d "$DB" --chunk-rows 500 rows.csv
eq "the constraint made NOT DEFERRABLE: exit 0" 0 $RC
eq "the constraint made NOT DEFERRABLE: every row loaded" "$NROWS" "$(q "SELECT count(*) FROM payment_callback")"

# The columns idemload writes must be there, writable, and the payload a
# jsonb: the merge compares payloads with = and IS DISTINCT FROM, which a
# json column lacks (the load stopped at its first merge, exit 4, after
# check had called the table safe).  Refused before any row is read.
shape_table() {  # shape_table PAYLOAD_TYPE [EXTRA_COLUMN_DEFS]: a table of that shape
    q "DROP TABLE IF EXISTS payment_callback; CREATE TABLE payment_callback (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL, channel text NOT NULL, out_trade_no text NOT NULL, callback_type text NOT NULL, payload $1 NOT NULL, received_at timestamptz NOT NULL, deleted_at timestamptz${2:+, $2});
       CREATE UNIQUE INDEX uk ON payment_callback (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL" >/dev/null
}
new_db lf_shape
shape_table json "status smallint NOT NULL DEFAULT 0"
run import -d "$DB" --chunk-rows 500 --rejects rj.ndjson rows.csv
eq "payload json: exit 2" 2 $RC
check "payload json: says why, with the ALTER TABLE that fixes it" \
    contains "$ERR" "column payload is json; idemload compares payloads as jsonb.*ALTER COLUMN payload TYPE jsonb"
eq "payload json: nothing loaded" 0 "$(count)"
eq "payload json: no ledger written" none "$(completed)"
run check -d "$DB" --report shape.json
eq "payload json: check says not safe (exit 1)" 1 $RC
check "payload json: check names the column" contains "$OUT" "NOT safe for import: .*column payload is json"
check "payload json: check's JSON lists it as a problem" \
    jtrue shape.json 'r["safe"] is False and any("column payload is json" in p for p in r["problems"])'
q "CREATE DOMAIN payload_doc AS jsonb CHECK (jsonb_typeof(VALUE) <> 'null')" >/dev/null
shape_table payload_doc "status smallint NOT NULL DEFAULT 0"
run check -d "$DB"
eq "payload a domain over jsonb: check says safe" 0 $RC
run import -d "$DB" --chunk-rows 500 --rejects rj.ndjson rows.csv
eq "payload a domain over jsonb: exit 0" 0 $RC
eq "payload a domain over jsonb: every row" "$NROWS" "$(count)"
shape_table jsonb
run import -d "$DB" --chunk-rows 500 --rejects rj.ndjson rows.csv
eq "no status column: exit 2" 2 $RC
check "no status column: named" contains "$ERR" "has no status column, which idemload writes"
shape_table jsonb "status smallint GENERATED ALWAYS AS (2) STORED"
run import -d "$DB" --chunk-rows 500 --rejects rj.ndjson rows.csv
eq "a generated status column: exit 2" 2 $RC
check "a generated status column: named" contains "$ERR" "column status is generated"

# One lane fails (a trigger calls a function that does not exist: the load's
# failure, not a row's), the other commits: exit 4, and every output says
# the same thing as the table: the report's figures add up (rows read =
# merged + rejected), the changes file has a line per row inserted, and the
# page's groups count them; the same command then completes the file.
init_db lf_lanes
for i in $(seq 1 40); do
    printf '{"tenant_id":1,"channel":"c","out_trade_no":"T%d","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-01T00:00:00Z"}\n' "$i"
done >lanes.ndjson
q "CREATE FUNCTION lf_trig() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
     IF NEW.out_trade_no = 'T1' THEN PERFORM no_such_fn(); END IF; RETURN NEW; END \$\$;
   CREATE TRIGGER lf_trig BEFORE INSERT OR UPDATE ON payment_callback
     FOR EACH ROW EXECUTE FUNCTION lf_trig()" >/dev/null
run import -d "$DB" -j 2 --rejects rj.ndjson --report lanes.json --changes lanes.changes --html lanes.html lanes.ndjson
eq "one lane failed, one committed: exit 4" 4 "$RC"
in_table=$(q "SELECT count(*) FROM payment_callback")
check "some rows committed (the other lane)" test "$in_table" -gt 0
check "the report: partial, inserted as in the table, rows read = merged + rejected" jtrue lanes.json \
    "(f := r['files'][0])['status'] == 'partial' and f['inserted'] == $in_table and f['rows_read'] == f['inserted'] + f['updated'] + f['unchanged'] + f['stale'] + f['existing'] + f['rows_rejected'] + f['rows_deduplicated']"
eq "the changes file has a line per row inserted" "$in_table" "$(wc -l <lanes.changes | tr -d ' ')"
check "the page's groups count them" grep -q "<td class=\"num\">$in_table</td>" lanes.html
q "DROP TRIGGER lf_trig ON payment_callback" >/dev/null
run import -d "$DB" -j 2 --rejects rj.ndjson --report lanes2.json --changes lanes2.changes lanes.ndjson
eq "the same command once the cause is gone: exit 0" 0 "$RC"
eq "every row in the table" 40 "$(q "SELECT count(*) FROM payment_callback")"
eq "its changes file holds the whole file's 40 lines" 40 "$(wc -l <lanes2.changes | tr -d ' ')"

# A file whose rows all fall in one lane, and that lane fails for good
# (-j 2: the other lane has no rows).  The empty lane commits nothing (it
# committed an empty transaction with its ledger row once, and the file
# ended `partial` with every figure 0, `interrupted` in status): the file
# failed at its first chunk, so it is `failed` and leaves no ledger entry
# (README, "no ledger entry"); once the cause is gone the same command
# loads it once, with its figures.  Two one-row files, so that the row is
# in lane 1 in one and in lane 2 in the other (T1, T4 as the hash is now).
row() { printf '{"tenant_id":1,"channel":"c","out_trade_no":"%s","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-01T00:00:00Z"}\n' "$@"; }
ledger_rows() { q "SELECT (SELECT count(*) FROM idemload_ledger) || '|' || (SELECT count(*) FROM idemload_ledger_chunk)"; }
block() {  # block KEY: a trigger fails the load (0A000: not a row's fault) on KEY
    q "CREATE OR REPLACE FUNCTION lf_block() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
         IF NEW.out_trade_no = '$1' THEN RAISE EXCEPTION 'blocked (simulated)' USING ERRCODE = '0A000'; END IF;
         RETURN NEW; END \$\$;
       CREATE TRIGGER lf_block BEFORE INSERT OR UPDATE ON payment_callback
         FOR EACH ROW EXECUTE FUNCTION lf_block()" >/dev/null
}
for key in T1 T4; do
    n="one row $key"
    init_db lf_one_$key
    row "$key" >one_$key.ndjson
    block "$key"
    for attempt in 1 2; do
        run import -d "$DB" -j 2 --rejects rj.ndjson --report one.json one_$key.ndjson
        eq "$n ($attempt): exit 4 (the load's failure)" 4 "$RC"
        check "$n ($attempt): the report says failed, every figure 0" jtrue one.json \
            "(f := r['files'][0])['status'] == 'failed' and f['rows_read'] == 0 and f['inserted'] == 0 and f['chunks'] == 0"
        check "$n ($attempt): the summary says failed" contains "$ERR" "one_$key.ndjson \[ndjson\] failed"
        eq "$n ($attempt): no ledger entry, no chunk row" "0|0" "$(ledger_rows)"
        run status -d "$DB" --report st.json
        eq "$n ($attempt): status exit 0" 0 "$RC"
        check "$n ($attempt): status lists no file (not interrupted)" jtrue st.json "r['files'] == []"
        check "$n ($attempt): status text: nothing interrupted" contains "$OUT" "0 files in the ledger"
    done
    q "DROP TRIGGER lf_block ON payment_callback" >/dev/null
    run import -d "$DB" -j 2 --rejects rj.ndjson --report one.json one_$key.ndjson
    eq "$n, fixed: exit 0" 0 "$RC"
    check "$n, fixed: the report says ok, read 1, inserted 1, 1 chunk, not resumed" jtrue one.json \
        "(f := r['files'][0])['status'] == 'ok' and f['rows_read'] == 1 and f['inserted'] == 1 and f['chunks'] == 1"
    check "$n, fixed: not resumed" bash -c "! grep -q resumed '$ERR'"
    eq "$n, fixed: the row is in the table once" 1 "$(q "SELECT count(*) FROM payment_callback WHERE out_trade_no = '$key'")"
    eq "$n, fixed: completed in the ledger, one chunk row" "completed|1|1" \
        "$(q "SELECT status || '|' || chunks || '|' || (SELECT count(*) FROM idemload_ledger_chunk) FROM idemload_ledger")"
    run status -d "$DB" --report st.json
    check "$n, fixed: status says completed, 1 chunk, rows read 1, inserted 1" jtrue st.json \
        "len(r['files']) == 1 and (f := r['files'][0])['state'] == 'completed' and f['chunks'] == 1 and f['rows_read'] == 1 and f['inserted'] == 1"
    run import -d "$DB" -j 2 --rejects rj.ndjson --report one.json one_$key.ndjson
    check "$n, again: skipped, exit 0" jtrue one.json "r['files'][0]['status'] == 'skipped' and $RC == 0"
done

# The same over several chunks (--chunk-rows 1): the first chunk's only row
# fails, its other lane empty: failed, no ledger entry; the fix loads the
# three rows once.
init_db lf_one_multi
row T4 T1 T2 >multi.ndjson
block T4
run import -d "$DB" -j 2 --chunk-rows 1 --rejects rj.ndjson --report m.json multi.ndjson
eq "first chunk fails over several: exit 4" 4 "$RC"
check "first chunk fails over several: failed, figures 0" jtrue m.json \
    "(f := r['files'][0])['status'] == 'failed' and f['rows_read'] == 0 and f['chunks'] == 0"
eq "first chunk fails over several: no ledger entry" "0|0" "$(ledger_rows)"
q "DROP TRIGGER lf_block ON payment_callback" >/dev/null
run import -d "$DB" -j 2 --chunk-rows 1 --rejects rj.ndjson --report m.json multi.ndjson
check "first chunk fails over several, fixed: ok, 3 read, 3 inserted, 3 chunks" jtrue m.json \
    "(f := r['files'][0])['status'] == 'ok' and f['rows_read'] == 3 and f['inserted'] == 3 and f['chunks'] == 3 and $RC == 0"
eq "first chunk fails over several, fixed: 3 rows" 3 "$(q "SELECT count(*) FROM payment_callback")"

# A later chunk fails after chunks whose second lane had no rows: partial,
# and the resume, whose lanes' last ledger rows are chunks apart, completes
# exactly the rest, with the whole file's figures and --changes lines.
init_db lf_one_resume
row T1 T2 T3 T4 >resume.ndjson
block T4
run import -d "$DB" -j 2 --chunk-rows 1 --rejects rj.ndjson --report r1.json --changes r1.changes resume.ndjson
eq "a later chunk fails: exit 4" 4 "$RC"
check "a later chunk fails: partial, the chunks committed counted" jtrue r1.json \
    "(f := r['files'][0])['status'] == 'partial' and f['rows_read'] == 3 and f['inserted'] == 3 and f['chunks'] == 3"
run status -d "$DB" --report st.json
check "a later chunk fails: status says interrupted after the chunks a rerun takes as whole (2: chunk 3's other lane has no row)" jtrue st.json \
    "(f := r['files'][0])['state'] == 'interrupted' and f['chunks'] == 2 and f['rows_read'] == 2 and f['inserted'] == 2"
run status -d "$DB"
check "... and its text says chunk 3 has a lane committed, read again by the rerun" \
    grep -q 'resumes it after chunk 2 (chunk 3: 1 of its 2 lanes have a committed row' "$OUT"
q "DROP TRIGGER lf_block ON payment_callback" >/dev/null
run import -d "$DB" -j 2 --chunk-rows 1 --rejects rj.ndjson --report r2.json --changes r2.changes resume.ndjson
eq "a later chunk fails, fixed: exit 0" 0 "$RC"
check "a later chunk fails, fixed: ok, the whole file's figures" jtrue r2.json \
    "(f := r['files'][0])['status'] == 'ok' and f['rows_read'] == 4 and f['inserted'] == 4 and f['chunks'] == 4"
eq "a later chunk fails, fixed: each row once" "4|4" "$(q "SELECT count(*) || '|' || count(DISTINCT out_trade_no) FROM payment_callback")"
eq "a later chunk fails, fixed: a --changes line per row" 4 "$(wc -l <r2.changes | tr -d ' ')"
run status -d "$DB" --report st.json
check "a later chunk fails, fixed: status says completed, 4 chunks, 4 read, 4 inserted" jtrue st.json \
    "(f := r['files'][0])['state'] == 'completed' and f['chunks'] == 4 and f['rows_read'] == 4 and f['inserted'] == 4"

# A chunk one lane of which committed while the other failed: status says
# what the import said, and what a rerun does (the chunk is read again).
init_db lf_half_chunk
row T1 T4 >half.ndjson
block T4
run import -d "$DB" -j 2 --report h1.json half.ndjson
eq "half a chunk: exit 4" 4 "$RC"
run status -d "$DB" --report hs.json
check "half a chunk: status counts no chunk as whole, as the import did" jtrue hs.json \
    "(f := r['files'][0])['chunks'] == 0 and f['rows_read'] == 0 and f['inserted'] == 0"
run status -d "$DB"
check "half a chunk: its text says chunk 1 is read again" \
    grep -q 'resumes it after chunk 0 (chunk 1: 1 of its 2 lanes have a committed row' "$OUT"
q "DROP TRIGGER lf_block ON payment_callback" >/dev/null
run import -d "$DB" -j 2 --report h2.json half.ndjson
check "half a chunk, fixed: ok, both rows, 1 chunk" jtrue h2.json \
    "(f := r['files'][0])['status'] == 'ok' and f['rows_read'] == 2 and f['inserted'] + f['unchanged'] == 2 and f['chunks'] == 1"
eq "half a chunk, fixed: 2 rows" 2 "$(q "SELECT count(*) FROM payment_callback")"

finish
