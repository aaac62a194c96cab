#!/usr/bin/env bash
# The retry path (SPEC.md "Crash safety, reruns and concurrency"): a deadlock
# (40P01) or a serialization failure (40001) redoes the lane's transaction,
# up to --retries times, and is never taken for a refused row.  The errors
# are forced deterministically: a trigger raises the SQLSTATE while a
# sequence (which a rollback does not undo) is below a threshold, so the
# sequence also tells how many attempts reached the row.
. "$(dirname "$0")/../lib.sh"

$GEN --rows 6000 --seed 71 --dup-rate 0.2 --ties 0.2 --exact-dup-rate 0.2 --format csv --out r.csv --expected r.exp.csv --quiet
# The key the trigger fails on: one that occurs once, in the third chunk.
KEY=$(python3 - <<'EOF'
import csv, collections
rows = list(csv.DictReader(open("r.csv", newline="")))
n = collections.Counter(r["out_trade_no"] for r in rows)
print(next(r["out_trade_no"] for r in rows[4100:] if n[r["out_trade_no"]] == 1))
EOF
)

# fail_times SQLSTATE N: the next N attempts to write KEY raise SQLSTATE.
fail_times() {
    q "DROP TRIGGER IF EXISTS flaky ON payment_callback; DROP SEQUENCE IF EXISTS attempts"
    q "CREATE SEQUENCE attempts"
    q "CREATE OR REPLACE FUNCTION flaky() RETURNS trigger LANGUAGE plpgsql AS \$\$
       BEGIN
         IF NEW.out_trade_no = '$KEY' AND nextval('attempts') <= $2 THEN
           RAISE EXCEPTION 'forced %', '$1' USING ERRCODE = '$1';
         END IF;
         RETURN NEW;
       END \$\$"
    q "CREATE TRIGGER flaky BEFORE INSERT OR UPDATE ON payment_callback FOR EACH ROW EXECUTE FUNCTION flaky()"
}
attempts() { q "SELECT last_value FROM attempts"; }
totals() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_rejected","rows_deduplicated","inserted","updated","unchanged","stale","existing","chunks"))'; }

init_db rt_clean
run import -d "$DB" --chunk-rows 2000 --report clean.json r.csv
eq "clean load: exit 0" 0 $RC
expect_table "clean load: the generator's expected state" r.exp.csv

for code in 40P01 40001; do
    for j in 1 2; do
        init_db "rt_$code$j"
        fail_times $code 2
        rm -f rj_$code$j.ndjson
        run import -d "$DB" -j $j --chunk-rows 2000 --rejects rj_$code$j.ndjson --report $code$j.json r.csv
        eq "$code twice, -j $j: exit 0 after retries" 0 $RC
        check "$code twice, -j $j: warned of retry 1 and retry 2" \
            sh -c "grep -q 'SQLSTATE $code); retry 1 of 5' '$ERR' && grep -q 'SQLSTATE $code); retry 2 of 5' '$ERR'"
        eq "$code twice, -j $j: the key was written on the third attempt" 3 "$(attempts)"
        eq "$code twice, -j $j: figures of the clean load (nothing rejected)" "$(totals clean.json)" "$(totals $code$j.json)"
        check "$code twice, -j $j: not taken for a refused row (no rejects file)" test ! -e rj_$code$j.ndjson
        expect_table "$code twice, -j $j: the generator's expected state" r.exp.csv
        eq "$code twice, -j $j: ledger completed, 3 chunks" "completed:3" "$(q "SELECT status || ':' || chunks FROM idemload_ledger")"
    done
done

# More failures than --retries: exit 4, the chunks before stay (over one
# connection, the chunk in flight is one transaction: none of it), and the
# same command then completes the file.
init_db rt_giveup
fail_times 40P01 3
run import -d "$DB" -j 1 --chunk-rows 2000 --retries 2 --report give1.json r.csv
eq "40P01 three times, --retries 2: exit 4" 4 $RC
check "--retries 2: says it failed after 2 retries" grep -q "failed after 2 retries.*SQLSTATE 40P01" "$ERR"
check "--retries 2: names the last committed chunk" grep -q "last committed chunk: 2" "$ERR"
eq "--retries 2: three attempts" 3 "$(attempts)"
eq "--retries 2: the file is partial" partial "$(json give1.json 'r["files"][0]["status"]')"
eq "--retries 2: chunks 1 and 2 stay, nothing of chunk 3" "1,2 $(q "SELECT sum(inserted) FROM idemload_ledger_chunk")" \
    "$(q "SELECT string_agg(chunk_no::text, ',' ORDER BY chunk_no) FROM idemload_ledger_chunk") $(q "SELECT count(*) FROM payment_callback")"
run import -d "$DB" -j 1 --chunk-rows 2000 --retries 2 --report give2.json r.csv
eq "--retries 2: the rerun exits 0" 0 $RC
check "--retries 2: the rerun resumed after chunk 2" grep -q "resumed after chunk 2" "$ERR"
eq "--retries 2: the rerun wrote the key once more (4 attempts in all)" 4 "$(attempts)"
expect_table "--retries 2, then the rerun: the generator's expected state" r.exp.csv

# A dry run is one transaction: a deadlock redoes it, figures unchanged.
init_db rt_dry
fail_times 40P01 1
run import -d "$DB" --dry-run --chunk-rows 2000 --report dry.json r.csv
eq "dry run with a deadlock: exit 0" 0 $RC
check "dry run with a deadlock: retried" grep -q "SQLSTATE 40P01); retry 1 of 5" "$ERR"
eq "dry run with a deadlock: figures of the clean load" "$(totals clean.json)" "$(totals dry.json)"
eq "dry run with a deadlock: nothing written" 0 "$(q "SELECT count(*) FROM payment_callback")"

finish
