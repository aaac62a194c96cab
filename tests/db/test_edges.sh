#!/usr/bin/env bash
# `idemload import` at the edges no other test reaches: SIGTERM, .jsonl
# names, NDJSON on standard input, multi-member gzip, a dry run over existing
# keys (both conflict modes), an equal received_at with only the status
# different, --max-rejects keeping committed chunks, and several files of
# which the middle one fails.  Expectations come from the generator or are
# worked out by hand, never from another idemload run alone.
. "$(dirname "$0")/../lib.sh"

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
counts() { json "$1" '" ".join(str(r["totals"][k]) for k in ("inserted","updated","unchanged","stale","existing"))'; }
fstatus() { json "$1" "r['files'][${2:-0}]['status']"; }
# wsnap: every row with its id, xmin and ctid: any write changes it.
wsnap() { q "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', id, xmin, ctid, p::text), ',' ORDER BY id)), '-') FROM payment_callback p"; }

# =====================================================================
# SIGTERM mid-load: exit 130, whole chunks, the file partial
# =====================================================================
init_db ed_term
$GEN --rows 150000 --seed 91 --dup-rate 0 --format csv --out term.csv --quiet
"$IDEMLOAD" import -d "$DB" --chunk-rows 1000 --report term.json term.csv >/dev/null 2>term.err &
pid=$!
for _ in $(seq 1 1200); do
    [ "$(q "SELECT count(*) FROM payment_callback")" -gt 3000 ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
done
check "SIGTERM: sent while the load runs" kill -TERM $pid
wait $pid; rc=$?
n=$(q "SELECT count(*) FROM payment_callback")
eq "SIGTERM: exit 130" 130 $rc
check "SIGTERM landed mid-load: some but not all of 150000 rows ($n)" test "$n" -gt 3000 -a "$n" -lt 150000
check "SIGTERM: only whole chunks committed ($n rows)" test $((n % 1000)) -eq 0
eq "SIGTERM: the file is partial" partial "$(fstatus term.json)"
eq "SIGTERM: report counts match the table" "$n" "$(json term.json 'r["totals"]["inserted"]')"
run import -d "$DB" --chunk-rows 1000 --report term2.json term.csv
eq "after SIGTERM: the same command completes the file" "0 ok" "$RC $(fstatus term2.json)"
check "after SIGTERM: resumed after the committed chunks" grep -q "resumed after chunk $((n / 1000))[^0-9]" "$ERR"
eq "after SIGTERM: all 150000 rows" 150000 "$(q "SELECT count(*) FROM payment_callback")"

# =====================================================================
# .jsonl names, NDJSON on standard input, multi-member gzip
# =====================================================================
$GEN --rows 12000 --seed 92 --dup-rate 0.3 --ties 0.2 --exact-dup-rate 0.2 --format ndjson --out j.jsonl --expected j.exp.csv --quiet
gzip -c j.jsonl >j.jsonl.gz
init_db ed_jsonl
run import -d "$DB" --chunk-rows 2500 --report jl.json j.jsonl
eq ".jsonl: exit 0" 0 $RC
eq ".jsonl: read as ndjson" ndjson "$(json jl.json 'r["files"][0]["format"]')"
expect_table ".jsonl: the generator's expected state" j.exp.csv
init_db ed_jsonlgz
run import -d "$DB" --chunk-rows 2500 --report jlgz.json j.jsonl.gz
eq ".jsonl.gz: exit 0, ndjson" "0 ndjson" "$RC $(json jlgz.json 'r["files"][0]["format"]')"
expect_table ".jsonl.gz: the generator's expected state" j.exp.csv
init_db ed_stdin
run import -d "$DB" --format ndjson --chunk-rows 2500 --report st.json - <j.jsonl
eq "NDJSON on stdin: exit 0" 0 $RC
eq "NDJSON on stdin: every record read" 12000 "$(json st.json 'r["totals"]["rows_read"]')"
expect_table "NDJSON on stdin: the generator's expected state" j.exp.csv
# A gzip of several members (a new member every 700 rows, and two files
# joined with cat), CSV and NDJSON.
$GEN --rows 9000 --seed 93 --dup-rate 0.3 --ties 0.2 --exact-dup-rate 0.2 --format csv --gzip-member-rows 700 --out mm.csv.gz --expected mm.exp.csv --quiet
check "the generator wrote several gzip members" python3 -c '
import sys, zlib
data = open("mm.csv.gz", "rb").read(); n = 0
while data:
    d = zlib.decompressobj(31); d.decompress(data); data = d.unused_data; n += 1
sys.exit(0 if n > 5 else 1)'
init_db ed_multi
run import -d "$DB" --chunk-rows 2000 --report mm.json mm.csv.gz
eq "multi-member gzip: exit 0" 0 $RC
eq "multi-member gzip: every record read" 9000 "$(json mm.json 'r["totals"]["rows_read"]')"
expect_table "multi-member gzip: the generator's expected state" mm.exp.csv
head -n 6001 j.jsonl | gzip -c >cat.ndjson.gz
tail -n +6002 j.jsonl | gzip -c >>cat.ndjson.gz
init_db ed_cat
run import -d "$DB" --chunk-rows 2500 --report cat.json cat.ndjson.gz
eq "two gzip files joined with cat: exit 0, every record" "0 12000" "$RC $(json cat.json 'r["totals"]["rows_read"]')"
expect_table "two gzip files joined with cat: the generator's expected state" j.exp.csv

# =====================================================================
# A dry run over existing keys gives the real run's figures, writes nothing
# =====================================================================
# base.csv loaded first; over.csv meets every case: K1 newer (updated), K2
# the same version (unchanged), K3 older and not final (stale; an older final
# status would count as updated, see test_final_status), K4 new (inserted); and with
# --on-conflict nothing, K1-K3 are existing.
cat >base.csv <<CSV
$H
5,wechat,K1,pay,0,"{""v"":1}",2026-11-28T10:00:00Z
5,wechat,K2,pay,1,"{""v"":2,""amount"":1.50}",2026-11-28T10:00:00Z
5,wechat,K3,pay,1,"{""v"":3}",2026-11-28T10:00:00Z
CSV
cat >over.csv <<CSV
$H
5,wechat,K1,pay,1,"{""v"":""new""}",2026-11-28T11:00:00Z
5,wechat,K2,pay,1,"{""amount"":1.50,""v"":2}",2026-11-28T18:00:00+08:00
5,wechat,K3,pay,0,"{""v"":""old""}",2026-11-28T09:00:00Z
5,wechat,K4,pay,0,"{""v"":4}",2026-11-28T10:00:00Z
CSV
for mode in update nothing; do
    init_db ed_dry_$mode
    run import -d "$DB" --report base_$mode.json base.csv
    eq "dry run ($mode): base loaded" "0 3" "$RC $(json base_$mode.json 'r["totals"]["inserted"]')"
    before=$(wsnap)
    run import -d "$DB" --dry-run --on-conflict $mode --report dry_$mode.json over.csv
    eq "dry run ($mode): exit 0" 0 $RC
    eq "dry run ($mode): nothing written (ids, xmin, ctid, every column)" "$before" "$(wsnap)"
    eq "dry run ($mode): no ledger row" 0 "$(q "SELECT count(*) FROM idemload_ledger WHERE file_name LIKE '%over.csv'")"
    run import -d "$DB" --on-conflict $mode --report real_$mode.json over.csv
    eq "real run ($mode): exit 0" 0 $RC
    eq "dry run ($mode): the real run's figures" "$(counts real_$mode.json)" "$(counts dry_$mode.json)"
done
eq "dry run (update): inserted updated unchanged stale existing, as worked out" "1 1 1 1 0" "$(counts dry_update.json)"
eq "dry run (nothing): inserted updated unchanged stale existing, as worked out" "1 0 0 0 3" "$(counts dry_nothing.json)"

# =====================================================================
# An equal received_at with only the status different updates
# =====================================================================
init_db ed_tie
cat >tie1.csv <<CSV
$H
6,wechat,T1,pay,0,"{""v"":1}",2026-11-28T10:00:00Z
6,wechat,T2,pay,2,"{""v"":2}",2026-11-28T10:00:00Z
CSV
cat >tie2.csv <<CSV
$H
6,wechat,T1,pay,1,"{""v"":1}",2026-11-28T18:00:00+08:00
6,wechat,T2,pay,1,"{""v"":2}",2026-11-28T10:00:00Z
CSV
run import -d "$DB" tie1.csv; eq "tie: first file exit 0" 0 $RC
t2=$(q "SELECT xmin || ':' || ctid FROM payment_callback WHERE out_trade_no = 'T2'")
run import -d "$DB" --report tie2.json tie2.csv
eq "tie: second file exit 0" 0 $RC
eq "tie, only the status differs: updated (T1); a final status kept: unchanged (T2)" "0 1 1 0 0" "$(counts tie2.json)"
eq "tie: T1 took the new status" 1 "$(q "SELECT status FROM payment_callback WHERE out_trade_no = 'T1' AND deleted_at IS NULL")"
eq "tie: T2 keeps its final status, row not written" "2 $t2" "$(q "SELECT status || ' ' || xmin || ':' || ctid FROM payment_callback WHERE out_trade_no = 'T2'")"

# =====================================================================
# --max-rejects on import: the chunks committed before stay
# =====================================================================
$GEN --rows 5000 --seed 94 --dup-rate 0 --format csv --out mr_good.csv --quiet
{ cat mr_good.csv; for i in 1 2 3; do echo "7,wechat,BAD$i,pay,1,\"{}\",2026-11-28T10:00:00"; done; } >mr.csv
init_db ed_maxrej
run import -d "$DB" --chunk-rows 1000 --max-rejects 2 --rejects mr.rej --report mr.json mr.csv
eq "--max-rejects 2 on import: exit 3" 3 $RC
check "--max-rejects: says the committed chunks stay" grep -q "more than 2 rows rejected (--max-rejects); the chunks committed before stay" "$ERR"
check "--max-rejects: says why the rejects file holds more than the figures" grep -q "the chunks committed before stay; the rejects of the chunk it stopped in are in the rejects file, not in the file's figures" "$ERR"
eq "--max-rejects: the figures count the committed chunks' rejects, the file the stopped chunk's too" "0 3" \
    "$(python3 -c "import json; print(json.load(open('mr.json'))['files'][0]['rows_rejected'])") $(wc -l <mr.rej)"
eq "--max-rejects: the file is partial" partial "$(fstatus mr.json)"
eq "--max-rejects: the 5 whole chunks before stay" "5000 5" "$(q "SELECT count(*) FROM payment_callback") $(q "SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk")"
eq "--max-rejects: the file stays loading in the ledger" loading "$(q "SELECT status FROM idemload_ledger")"
eq "--max-rejects: 3 rejects written" 3 "$(wc -l <mr.rej)"

# =====================================================================
# Several files, the middle one fails: the others load, exit 3
# =====================================================================
$GEN --rows 3000 --seed 95 --format csv --out f1.csv --expected f1.exp.csv --quiet
$GEN --rows 3000 --seed 96 --format csv --out f2.csv.gz --quiet
$GEN --rows 3000 --seed 97 --tenant-ids 424242 --format csv --out f3.csv --expected f3.exp.csv --quiet
size=$(stat -c %s f2.csv.gz); head -c $((size / 2)) f2.csv.gz >f2trunc.csv.gz
init_db ed_middle
run import -d "$DB" --chunk-rows 5000 --report mid.json f1.csv f2trunc.csv.gz f3.csv
eq "middle file truncated: exit 3" 3 $RC
eq "middle file truncated: statuses ok, failed, ok" "ok failed ok" "$(fstatus mid.json 0) $(fstatus mid.json 1) $(fstatus mid.json 2)"
check "middle file truncated: the message names it" grep -q "f2trunc.csv.gz.*truncated" "$ERR"
$EXPECTED_MERGE f13.exp.csv f1.exp.csv f3.exp.csv 2>f13.counts
eq "the model: f1 and f3 share no key (tenant 424242 is f3's alone)" "0 0 0" \
    "$(json f13.counts '"%d %d %d" % (r["updated"], r["stale"], r["unchanged"])')"
expect_table "middle file truncated: the first and the last file loaded whole" f13.exp.csv
eq "middle file truncated: ledger: f1 and f3 completed, f2 not" "completed completed" \
    "$(q "SELECT string_agg(status, ' ' ORDER BY file_name) FROM idemload_ledger WHERE status = 'completed'")"
eq "middle file truncated: f2 has no completed ledger row" 0 "$(q "SELECT count(*) FROM idemload_ledger WHERE file_name LIKE '%f2trunc%' AND status = 'completed'")"

finish
