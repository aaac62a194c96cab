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
