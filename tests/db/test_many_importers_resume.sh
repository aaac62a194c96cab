#!/usr/bin/env bash
# Many importers, one backfill (SPEC.md): a process that finds a file being
# loaded by another goes on with the next file and comes back to it at the
# end; "then it is completed, and skipped, or its loader died and this
# process resumes it".  This is the second case, in the same run:
# process 1, given A and B, is held inside chunk 3 of A (chunk_hold, tests/lib.sh);
# process 2, given the same list, loads B, comes back to A and waits for it;
# process 1 is then killed (-9) mid-file; process 2 resumes A after its
# committed chunks, completes it and exits 0.  The table equals the merge
# rules' state of A and B (tests/expected_merge.py, from the files alone).
. "$(dirname "$0")/../lib.sh"

init_db many_importers_resume
printf 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n9,wechat,MR1,pay,1,"{}",2026-11-28T10:00:00Z\n' >tiny.csv
run import -d "$DB" --rejects tiny.rj tiny.csv     # creates the ledger
q "DELETE FROM payment_callback"
$GEN --rows 4000 --seed 2851 --tenant-ids 1,2,3 --dup-rate 0.1 --format csv --out a.csv --quiet
$GEN --rows 3000 --seed 2852 --tenant-ids 7,8,9 --dup-rate 0.1 --format csv --out b.csv --quiet
A=$(sha256sum a.csv | cut -d' ' -f1)
chunk_hold 2850 3 "NEW.digest = '$A'"     # chunk 3 of A only

"$IDEMLOAD" import -d "$DB" --chunk-rows 500 --jobs 2 --rejects p1.rj --report p1.json a.csv b.csv \
    >p1.out 2>p1.err 7>&- &
W1=$! P1=$(real_pid $!)
chunk_wait 2850 $P1
eq "process 1 waits inside chunk 3 of A" 0 $?
eq "process 1 is mid-file: A loading, 2 of its 8 chunks committed" "loading 2 $P1" \
    "$(q "SELECT l.status || ' ' || (SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk c WHERE c.digest = l.digest) || ' ' || l.loader_pid FROM idemload_ledger l WHERE l.digest = '$A'")"

"$IDEMLOAD" import -d "$DB" --chunk-rows 500 --jobs 2 --rejects p2.rj --report p2.json a.csv b.csv \
    >p2.out 2>p2.err 7>&- &
W2=$! P2=$(real_pid $!)
# Process 2 goes past A, completes B, comes back to A and waits for its lock.
lock_wait $W2
eq "process 2 waits on the server for A's lock, which process 1 holds" 1 "$(lock_waiters)"
eq "process 2 completed B meanwhile" completed "$(q "SELECT status FROM idemload_ledger WHERE file_name = 'b.csv'")"
check "process 2 went on past A first" contains p2.err "a.csv: another idemload process (host $(hostname), process $P1, as the ledger says) is loading this file into public.payment_callback; going on with the next file"
check "process 2 came back to A and waits for it" contains p2.err "a.csv: another idemload process.*waiting for it"
check "process 1 still runs, A still mid-file" kill -0 $P1
eq "A still 2 chunks" 2 "$(q "SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk WHERE digest = '$A'")"

kill -9 $P1
wait $W1
eq "process 1 killed (-9)" 137 $?
chunk_unhold 2850        # its sessions end on the server
wait $W2
eq "process 2 exits 0" 0 $?
check "process 2 resumed A after chunk 2" grep -q "a.csv.*resumed after chunk 2[^0-9]" p2.err
check "process 2 reports A and B ok" jtrue p2.json "[f['status'] for f in r['files']] == ['ok', 'ok']"
eq "process 2's figures for A are the whole file's (rows read)" 4000 "$(json p2.json 'r["files"][0]["rows_read"]')"
eq "A completed by process 2" "completed $P2" \
    "$(q "SELECT status || ' ' || loader_pid FROM idemload_ledger WHERE digest = '$A'")"
eq "A's 8 chunks each committed once (per lane)" "8 true" \
    "$(q "SELECT count(DISTINCT chunk_no) || ' ' || (count(*) = count(DISTINCT (chunk_no, lane))) FROM idemload_ledger_chunk WHERE digest = '$A'")"
$EXPECTED_MERGE --data ab.exp.csv a.csv b.csv 2>ab.counts
eq "the model read both files" 7000 "$(json ab.counts 'r["rows"]')"
expect_table "the table is the merge rules' state of A and B (no shared key: the order is immaterial)" ab.exp.csv
finish
