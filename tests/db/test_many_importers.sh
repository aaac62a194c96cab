#!/usr/bin/env bash
# Many importers, one backfill (SPEC.md): two processes given the same
# files load each file once; the one that finds a file being loaded goes on
# with its next file and comes back to it at the end.
# Process 1 is held in the middle of file A (a trigger waits on an advisory
# lock the test holds, then process 1 is SIGSTOPped); process 2, given A and
# B, completes B meanwhile, and does not end while A is unfinished; when
# process 1 continues, both finish (exit 0), A is loaded once, and the table
# equals the merge rules' state of A and B
# (tests/expected_merge.py, from the files alone).
. "$(dirname "$0")/../lib.sh"

init_db many_importers

# A: 4000 NDJSON records (one a line), and in its middle a record of tenant
# 4242 that the trigger holds; B: other tenants, so the two share no key.
$GEN --rows 4000 --seed 11 --tenant-ids 1,2,3 --format ndjson --out a0.ndjson --quiet
{
    head -n 2000 a0.ndjson
    echo '{"tenant_id": 4242, "channel": "wechat", "out_trade_no": "HOLD", "callback_type": "pay", "status": 1, "payload": {"a": 1}, "received_at": "2026-11-01T00:00:00Z"}'
    tail -n +2001 a0.ndjson
} >a.ndjson
$GEN --rows 3000 --seed 12 --tenant-ids 7,8,9 --format ndjson --out b.ndjson --quiet

q "CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS \$\$
   BEGIN
     IF NEW.tenant_id = 4242 THEN
       PERFORM pg_advisory_lock_shared(4242);
       PERFORM pg_advisory_unlock_shared(4242);
     END IF;
     RETURN NEW;
   END \$\$;
   CREATE TRIGGER hold BEFORE INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION hold()"

# The test's hold: a session keeping advisory lock 4242 until we end it.
psql -X -q -c "SELECT pg_advisory_lock(4242), 'held'" -c "SELECT pg_sleep(600)" >hold.out 2>&1 &
HOLD=$!
for _ in $(seq 1 600); do
    [ "$(advisory_locks granted 4242)" = 1 ] && break
    sleep 0.1
done
eq "the test holds lock 4242" 1 "$(advisory_locks "mode = 'ExclusiveLock' AND granted" 4242)"

"$IDEMLOAD" import -d "$DB" --chunk-rows 500 --jobs 1 a.ndjson >p1.out 2>p1.err &
W1=$! P1=$(real_pid $!)
# Process 1 is in the middle of A once the trigger waits on the lock.
for _ in $(seq 1 1200); do
    [ "$(advisory_locks "NOT granted" 4242)" = 1 ] && break
    sleep 0.1
done
eq "process 1 waits in the middle of A" 1 "$(advisory_locks "NOT granted" 4242)"
eq "A has committed chunks, not all" "4 loading" "$(q "SELECT chunks || ' ' || status FROM idemload_ledger WHERE file_name = 'a.ndjson'")"
kill -STOP $P1
# Let the trigger go: process 1's statement ends on the server, but the
# process itself stays stopped, holding A.
kill $HOLD 2>/dev/null
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND datname = current_database() AND pid <> pg_backend_pid()" >/dev/null
wait $HOLD 2>/dev/null

"$IDEMLOAD" import -d "$DB" --chunk-rows 500 --jobs 2 a.ndjson b.ndjson --report p2.json >p2.out 2>p2.err &
W2=$! P2=$(real_pid $!)
# Process 2 completes B while A is held.
for _ in $(seq 1 1200); do
    [ "$(q "SELECT status FROM idemload_ledger WHERE file_name = 'b.ndjson'")" = completed ] && break
    sleep 0.1
done
eq "process 2 completed B while process 1 holds A" completed \
    "$(q "SELECT status FROM idemload_ledger WHERE file_name = 'b.ndjson'")"
check "process 2 said it goes on past A" contains p2.err "a.ndjson: another idemload process (host $(hostname), process $P1, as the ledger says) is loading this file into public.payment_callback; going on with the next file"
run status -d "$DB" --report status.json
eq "status: exit 0" 0 "$RC"
check "status: A loading by process 1" jtrue status.json \
    "[f['state'] + ' ' + str(f['pid']) for f in r['files'] if f['file_name'] == 'a.ndjson'] == ['loading $P1']"
check "status: B completed by process 2" jtrue status.json \
    "[f['state'] + ' ' + str(f['pid']) for f in r['files'] if f['file_name'] == 'b.ndjson'] == ['completed $P2']"
# Process 2 has nothing left but A, which is not done: it does not end,
# it waits on A's lock, which process 1 (stopped) holds: seen on the server
# as an advisory lock of an idemload session not granted.
lock_wait $W2
eq "process 2 waits on the server for A's lock, which process 1 holds" 1 "$(lock_waiters)"
check "process 2 still runs while A is unfinished" kill -0 $P2
check "process 2 waits for A at the end" contains p2.err "a.ndjson: another idemload process.*waiting for it"

kill -CONT $P1
wait $W1
eq "process 1 exits 0" 0 $?
wait $W2
eq "process 2 exits 0" 0 $?
check "process 2 reports A skipped, B ok" jtrue p2.json \
    "[f['status'] for f in r['files']] == ['skipped', 'ok']"
check "process 1 loaded A" contains p1.err "a.ndjson \[ndjson\] ok"
eq "A completed once, by process 1" "completed $P1" \
    "$(q "SELECT status || ' ' || loader_pid FROM idemload_ledger WHERE file_name = 'a.ndjson'")"
eq "A's chunks each committed once" 9 "$(q "SELECT count(*) FROM idemload_ledger_chunk c JOIN idemload_ledger l USING (target, digest) WHERE l.file_name = 'a.ndjson'")"

# The table is what the merge rules give for A then B (A and B share no
# key, so the order is immaterial), worked out from the files alone.
$EXPECTED_MERGE --data ab.exp.csv a.ndjson b.ndjson 2>ab.counts
eq "the model read both files" 7001 "$(json ab.counts 'r["rows"]')"
expect_table "the table is the merge rules' state of A and B" ab.exp.csv
finish
