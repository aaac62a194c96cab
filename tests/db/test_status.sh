#!/usr/bin/env bash
# idemload status (SPEC.md "Many importers, one backfill"): each file of the
# ledger with its state (completed; loading, with its loader; interrupted,
# when no live session holds the file's lock), chunks, figures and times,
# as text and as JSON (--report -); exit 0.
. "$(dirname "$0")/../lib.sh"

new_db status_db
run status -d "$DB"
eq "status with no table: exit 2" 2 "$RC"
run init -q -d "$DB"
eq "init: exit 0" 0 "$RC"
run status -d "$DB" --report -
eq "status with no ledger yet: exit 0" 0 "$RC"
check "no ledger: JSON with no files" jtrue "$OUT" "r == {'target': 'public.payment_callback', 'files': []}"
check "no ledger: said in words" contains "$ERR" "no ledger yet"

$GEN --rows 3000 --seed 21 --format ndjson --tenant-ids 1,2 --out a.ndjson --quiet
{
    head -n 1500 a.ndjson
    echo '{"tenant_id": 4242, "channel": "wechat", "out_trade_no": "HOLD", "callback_type": "pay", "status": 1, "payload": {"a": 1}, "received_at": "2026-11-01T00:00:00Z"}'
    tail -n +1501 a.ndjson
} >b.ndjson
$IDEMLOAD import -q -d "$DB" --chunk-rows 500 a.ndjson 2>a.err
eq "a.ndjson loads" 0 $?

q "CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS \$\$
   BEGIN
     IF NEW.tenant_id = 4242 THEN
       PERFORM pg_advisory_lock_shared(4242);
       PERFORM pg_advisory_unlock_shared(4242);
     END IF;
     RETURN NEW;
   END \$\$;
   CREATE TRIGGER hold BEFORE INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION hold()"
psql -X -q -c "SELECT pg_advisory_lock(4242)" -c "SELECT pg_sleep(600)" >hold.out 2>&1 &
HOLD=$!
held() { advisory_locks "$1" 4242; }
for _ in $(seq 1 600); do [ "$(held granted)" = 1 ] && break; sleep 0.1; done
"$IDEMLOAD" import -d "$DB" --chunk-rows 500 --jobs 1 b.ndjson >b.out 2>b.err &
LOADER_W=$! LOADER=$(real_pid $!)
for _ in $(seq 1 1200); do [ "$(held "NOT granted")" = 1 ] && break; sleep 0.1; done
eq "the loader waits in the middle of b.ndjson" 1 "$(held "NOT granted")"

run status -d "$DB" --report -
eq "status while loading: exit 0" 0 "$RC"
check "JSON members in the order of SPEC.md (and rows_deduplicated)" jtrue "$OUT" \
    "list(r) == ['target', 'files'] and all(list(f) == ['file_name', 'digest', 'size_bytes', 'state', 'host', 'pid', 'chunks', 'rows_read', 'rows_rejected', 'rows_deduplicated', 'inserted', 'updated', 'unchanged', 'stale', 'existing', 'started_at', 'updated_at', 'completed_at'] for f in r['files'])"
check "a.ndjson completed, with its figures" jtrue "$OUT" \
    "[(f['state'], f['chunks'], f['rows_read'], f['inserted'] + f['updated'] + f['unchanged'] + f['stale'] + f['existing'] + f['rows_rejected'] > 0, f['completed_at'] is not None) for f in r['files'] if f['file_name'] == 'a.ndjson'] == [('completed', 6, 3000, True, True)]"
check "b.ndjson loading, by this host and the loader's pid, 3 chunks" jtrue "$OUT" \
    "[(f['state'], f['host'], f['pid'], f['chunks'], f['rows_read'], f['completed_at']) for f in r['files'] if f['file_name'] == 'b.ndjson'] == [('loading', '$(hostname)', $LOADER, 3, 1500, None)]"
check "digest and size of b.ndjson" jtrue "$OUT" \
    "[(f['digest'], f['size_bytes']) for f in r['files'] if f['file_name'] == 'b.ndjson'] == [('$(sha256sum b.ndjson | cut -c1-64)', $(stat -c %s b.ndjson))]"
run status -d "$DB"
check "text: one completed, one loading" contains "$OUT" "2 files in the ledger: 1 completed, 1 loading, 0 interrupted"
check "text: the loader of b.ndjson" contains "$OUT" "loading by $(hostname), process $LOADER; last progress"

# kill -9: the ledger still says loading, but no session holds the lock.
kill -9 $LOADER
wait $LOADER_W 2>/dev/null
kill $HOLD 2>/dev/null
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND datname = current_database() AND pid <> pg_backend_pid()" >/dev/null
wait $HOLD 2>/dev/null
# The killed loader's session ends once its statement returns to nobody.
for _ in $(seq 1 600); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name <> 'psql' AND backend_type = 'client backend' AND pid <> pg_backend_pid()")" = 0 ] && break
    sleep 0.1
done
run status -d "$DB" --report -
check "after kill -9: b.ndjson interrupted, its loader recorded" jtrue "$OUT" \
    "[(f['state'], f['pid'], f['chunks']) for f in r['files'] if f['file_name'] == 'b.ndjson'] == [('interrupted', $LOADER, 3)]"
run status -d "$DB"
check "text: interrupted, resumed by the same command" contains "$OUT" "interrupted: its loader ($(hostname), process $LOADER) is gone; the same import command resumes it after chunk 3"

"$IDEMLOAD" import -d "$DB" --chunk-rows 500 --jobs 1 b.ndjson >b2.out 2>b2.err
eq "the same command resumes b.ndjson" 0 $?
check "it says it resumed" contains b2.err "resumed after chunk 3"
run status -d "$DB" --report -
check "b.ndjson completed by the resuming process, 7 chunks" jtrue "$OUT" \
    "[(f['state'], f['pid'] != $LOADER, f['chunks'], f['rows_read']) for f in r['files'] if f['file_name'] == 'b.ndjson'] == [('completed', True, 7, 3001)]"

# --table: the ledger holds files per table.
q "CREATE TABLE other (LIKE payment_callback INCLUDING ALL)"
run status -d "$DB" --table other --report -
check "another table of the same schema: no files" jtrue "$OUT" "r == {'target': 'public.other', 'files': []}"
finish
