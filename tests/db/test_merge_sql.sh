#!/usr/bin/env bash
# The golden merge statements (tests/golden/, compared with the rendering by
# tests/unit/test_merge_sql.c) are the SQL an import really sends: imports
# into the default table of `idemload init` run with log_statement = all on
# their own sessions, and each golden statement must appear in the server's
# log, whole and byte for byte, among the lines those imports wrote.
. "$(dirname "$0")/../lib.sh"
pg_use
GOLDEN=$SRC/tests/golden

# Everything a run below sends is logged (only its own sessions).
export PGOPTIONS='-c log_statement=all'
# sent NAME: the golden statement NAME was logged since log_mark.
# (grep -c reads to the end: grep -q would stop at the first match, and the
# writer before it, killed by SIGPIPE, fails the pipeline under pipefail.)
sent() { [ "$(log_since | grep -cF -- "$(golden_sql "$1")")" -gt 0 ]; }

# 5% repeated keys, a fifth of them older: a first load appends the keys
# it meets for the first time (append.sql) and merges the others, probing
# at first, then direct, which turns the older ones away (the stale count).
$GEN --rows 4000 --seed 31 --dup-rate 0.05 --format csv --out f.csv.gz 2>/dev/null
check "the file was generated" [ -s f.csv.gz ]

new_db merge_sql_update
run init -d "$DB"
eq "init" 0 "$RC"
log_mark
run import -d "$DB" --jobs 1 --chunk-rows 500 --rejects r1.ndjson f.csv.gz
[ "$RC" -le 1 ] || cat "$ERR"
check "first load ran (status $RC)" [ "$RC" -le 1 ]
check "its first chunk appends its new keys with append.sql" sent append.sql
check "its first merge (of keys an earlier chunk had) runs merge_probe_update.sql" sent merge_probe_update.sql
check "its later chunks run merge_direct_update.sql" sent merge_direct_update.sql
check "the rows they turn away are counted by count_stale.sql" sent count_stale.sql

# The merges tell updated rows from inserted ones by asking whether a
# staged key is among the written rows (KEY_IN_MERGED in src/db/sql.c): the
# planner must hash the written rows once, not compare every staged row
# with every written one.  As a join it took a nested loop whenever the
# unanalyzed staging table looked small (1,219 updates: 1.5M key pairs
# compared, 200 ms of a 220 ms merge; from about 1,500 rows on it chose a
# hash join).  300 and 1,000 staged newer versions of keys the table holds
# (for --on-conflict nothing with --changes: as many new keys), each
# golden merge run on them under EXPLAIN.
# plan_of GOLDEN N SUFFIX ARGS: the plan, as the import's session would run
# it, of N staged rows whose out_trade_no ends in SUFFIX.
plan_of() {
    psql -X -q -d "$DB" -v ON_ERROR_STOP=1 2>&1 <<SQL
SET enable_seqscan = off; SET jit = off; SET work_mem = '64MB';
CREATE TEMP TABLE idemload_stage (ord integer NOT NULL, tenant_id bigint NOT NULL,
  channel text NOT NULL, out_trade_no text NOT NULL, callback_type text NOT NULL,
  status smallint NOT NULL, payload text NOT NULL, received_at timestamptz NOT NULL);
BEGIN;
TRUNCATE idemload_stage;
SET LOCAL enable_seqscan = on;
INSERT INTO idemload_stage
SELECT row_number() OVER (ORDER BY tenant_id, channel, out_trade_no, callback_type), tenant_id,
       channel, out_trade_no || '$3', callback_type, 1, payload::text, received_at + interval '1 day'
  FROM payment_callback WHERE deleted_at IS NULL LIMIT $2;
SET LOCAL enable_seqscan = off;
PREPARE m AS $(golden_sql "$1");
EXPLAIN (ANALYZE, COSTS off, TIMING off) EXECUTE m($4);
ROLLBACK;
SQL
}
for g in merge_direct_update.sql merge_probe_update.sql merge_detail_nothing.sql; do
  for n in 300 1000; do
    if [ "$g" = merge_detail_nothing.sql ]; then
        plan_of "$g" "$n" -new "1, $n" >plan.txt
        written="Tuples Inserted: $n"
    else
        plan_of "$g" "$n" "" "1, $n, '{2}'" >plan.txt
        written="Conflicting Tuples: $n"
    fi
    check "$g, $n rows: the staged rows were written ($(grep -o -E '(Conflicting Tuples|Tuples Inserted): [0-9]*' plan.txt | head -n 2 | tr '\n' ' '))" \
        grep -q "$written\$" plan.txt
    check "$g, $n rows: the written rows are read once (every scan of merged ran once: $(grep -o 'CTE Scan on merged.*' plan.txt | grep -o 'loops=[0-9]*' | sort | uniq -c | tr -s ' \n' ' '))" \
        test "$(grep 'CTE Scan on merged' plan.txt | grep -v 'never executed' | grep -c -v 'loops=1)')" -eq 0
    check "$g, $n rows: no join compares staged keys with written ones pair by pair" \
        test "$(grep -c 'Join Filter' plan.txt)" -eq 0
  done
done

new_db merge_sql_nothing
run init -d "$DB"
log_mark
run import -d "$DB" --jobs 1 --chunk-rows 500 --on-conflict nothing --rejects r2.ndjson f.csv.gz
check "--on-conflict nothing ran (status $RC)" [ "$RC" -le 1 ]
check "it runs merge_direct_nothing.sql" sent merge_direct_nothing.sql

new_db merge_sql_set
run init -d "$DB"
q "ALTER TABLE payment_callback ADD COLUMN merchant_id bigint NOT NULL"
log_mark
run import -d "$DB" --jobs 1 --chunk-rows 500 --set merchant_id=42 --rejects r3.ndjson f.csv.gz
check "--set merchant_id=42 ran (status $RC)" [ "$RC" -le 1 ]
check "it runs merge_probe_update_set.sql" sent merge_probe_update_set.sql
check "and merge_direct_update_set.sql" sent merge_direct_update_set.sql
eq "every row has the --set value" 0 "$(q "SELECT count(*) FROM payment_callback WHERE merchant_id <> 42")"

finish
