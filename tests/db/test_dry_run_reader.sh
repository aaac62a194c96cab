#!/usr/bin/env bash
# A data team dry-runs a file with a role that may read the table but not
# write it: the dry run merges into a temporary copy of the rows the file's
# keys touch, and reports what the real merge would do (the figures, the
# groups, --changes) exactly as a dry run by a role that may write; it says
# that the table's triggers and constraints were not exercised, writes
# nothing, and leaves nothing behind.  A role that may not even read the
# table is told which GRANT it needs.
. "$(dirname "$0")/../lib.sh"
pg_use

$GEN --rows 6000 --seed 4 --format csv --out first.csv --quiet
# Overlapping keys, newer and older versions, repeats across chunks.
$GEN --rows 12000 --seed 4 --dup-rate 0.2 --format csv --out next.csv --quiet

init_db dr_reader
run import -d "$DB" --rejects rj.ndjson first.csv
check "the owner's load: exit 0 or 1" test $RC -le 1
q "DROP ROLE IF EXISTS idem_reader; CREATE ROLE idem_reader LOGIN;
   GRANT SELECT ON ALL TABLES IN SCHEMA public TO idem_reader" >/dev/null
READER="dbname=$PGDATABASE user=idem_reader"
versions() { q "SELECT md5(string_agg(id || ':' || xmin::text, ',' ORDER BY id)) FROM payment_callback"; }
before=$(versions)

for opts in "" "--on-conflict nothing" "--final-status 1,2"; do
    what="dry run${opts:+ $opts}"
    # shellcheck disable=SC2086
    run import -d "$DB" --dry-run --chunk-rows 700 $opts --rejects rj.ndjson \
        --report owner.json --changes owner.changes next.csv
    owner_rc=$RC
    # shellcheck disable=SC2086
    run import -d "$READER" --dry-run --chunk-rows 700 $opts --rejects rj.ndjson \
        --report reader.json --changes reader.changes next.csv
    eq "$what: the reader's exit status is the owner's" "$owner_rc" "$RC"
    check "$what: the reader is told it merges into a copy" contains "$ERR" "this dry run merges into a temporary copy"
    check "$what: and that triggers and constraints are not exercised" contains "$ERR" "triggers and constraints are not exercised"
    check "$what: the same totals" jtrue reader.json \
        "r['totals'] == __import__('json').load(open('owner.json'))['totals'] and r['totals']['inserted'] > 0"
    check "$what: the same groups" jtrue reader.json \
        "r['groups'] == __import__('json').load(open('owner.json'))['groups']"
    check "$what: the same --changes lines" cmp -s owner.changes reader.changes
    check "$what: --changes has lines" test -s reader.changes
done

# The copy sees earlier chunks of the run: keys the table does not have,
# each first in chunk 1 (10:00) and again in chunk 2, half newer (11:00,
# updated) and half older (09:00, stale).  The figures follow from the file
# alone: a copy that forgot chunk 1 would insert chunk 2's keys again.
{
    echo "tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"
    for i in $(seq -w 1 700); do echo "9090,alipay,X$i,pay,1,\"{\"\"v\"\":1}\",2026-11-01T10:00:00Z"; done
    for i in $(seq -w 1 350); do echo "9090,alipay,X$i,pay,1,\"{\"\"v\"\":2}\",2026-11-01T11:00:00Z"; done
    for i in $(seq -w 351 700); do echo "9090,alipay,X$i,pay,1,\"{\"\"v\"\":0}\",2026-11-01T09:00:00Z"; done
} >chunks.csv
eq "no key of chunks.csv is in the table" 0 "$(q "SELECT count(*) FROM payment_callback WHERE tenant_id = 9090")"
for who in owner reader; do
    conn=$DB; [ $who = reader ] && conn=$READER
    run import -d "$conn" --dry-run --chunk-rows 700 --report chunks.$who.json chunks.csv
    eq "$who: dry run of keys repeated across chunks: exit 0" 0 $RC
    eq "$who: 700 inserted, then 350 updated and 350 stale against chunk 1 (the file's own figures)" \
        "1400 700 350 350 0 2" \
        "$(json chunks.$who.json '" ".join(str(r["totals"][k]) for k in ("rows_read", "inserted", "updated", "stale", "unchanged", "chunks"))')"
done
eq "nothing written by any dry run (ids and row versions)" "$before" "$(versions)"
eq "no ledger row for a dry run" 1 "$(q "SELECT count(*) FROM idemload_ledger")"
eq "no temporary table left behind" 0 "$(q "SELECT count(*) FROM pg_class WHERE relname IN ('idemload_shadow', 'idemload_stage')")"

# Not a dry run: the reader may not load, and nothing is loaded.
run import -d "$READER" --rejects rj.ndjson next.csv
eq "the reader's import: exit 4" 4 $RC
check "the reader's import: says which GRANT it needs" contains "$ERR" "GRANT INSERT"
eq "the reader's import: nothing written" "$before" "$(versions)"

# The copy takes every column: a role that may read only some of them is
# told which others it needs.
q "DROP ROLE IF EXISTS idem_some; CREATE ROLE idem_some LOGIN;
   GRANT SELECT (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at, deleted_at) ON payment_callback TO idem_some;
   GRANT SELECT ON idemload_ledger, idemload_ledger_chunk TO idem_some" >/dev/null
run import -d "dbname=$PGDATABASE user=idem_some" --dry-run --rejects rj.ndjson next.csv
eq "SELECT on some columns only: the dry run exits 4" 4 $RC
check "SELECT on some columns only: names the others" contains "$ERR" "SELECT (id, handled_at)"

# A role that may read the table but not the ledger (SELECT on the target
# only, the data team's grant): once a load has made the ledger, its dry
# run still works, says it cannot tell a skip, and gives the figures of
# loading the file into the table as it is (the owner's, for a file the
# ledger does not hold).
q "DROP ROLE IF EXISTS idem_tableonly; CREATE ROLE idem_tableonly LOGIN;
   GRANT SELECT ON payment_callback TO idem_tableonly" >/dev/null
run import -d "$DB" --dry-run --rejects rj.ndjson --report owner_next.json next.csv
before=$(versions)
run import -d "dbname=$PGDATABASE user=idem_tableonly" --dry-run --rejects rj.ndjson \
    --report tableonly.json next.csv
check "SELECT on the table alone, a ledger present: the dry run exits 0 or 1" test $RC -le 1
check "it says this role may not read the ledger" contains "$ERR" "this role may not read the ledger"
check "the report's file says whether a skip is known" jtrue tableonly.json \
    "'may not read the ledger' in r['files'][0]['note'] and r['files'][0]['status'] == 'ok'"
eq "its figures are the owner's dry run's" \
    "$(json owner_next.json 'sorted(r["totals"].items())')" "$(json tableonly.json 'sorted(r["totals"].items())')"
eq "and it wrote nothing" "$before" "$(versions)"

# A role that may not read the table: the dry run says what it needs.
q "DROP ROLE IF EXISTS idem_nobody; CREATE ROLE idem_nobody LOGIN" >/dev/null
run import -d "dbname=$PGDATABASE user=idem_nobody" --dry-run --rejects rj.ndjson next.csv
eq "no SELECT: the dry run exits 4" 4 $RC
check "no SELECT: says which GRANT it needs" contains "$ERR" "GRANT SELECT"

finish
