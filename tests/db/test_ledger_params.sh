#!/usr/bin/env bash
# A ledger entry holds only for the parameters that shaped its rows (SPEC.md
# "Crash safety, reruns and concurrency"): the same file loaded with another
# --set, --timezone, --on-conflict, --final-status, --delimiter or profile
# content is loaded again (never skipped), and the summary names what
# changed; the same parameters in another order are the same; an
# unfinished entry of other parameters is not resumed; a ledger written
# before the parameters were recorded is migrated, and its files are loaded
# once more (saying why), then skipped.  Expectations from psql.
. "$(dirname "$0")/../lib.sh"
pg_use

python3 "$SRC/tests/make_bills.py" . || { echo "make_bills.py failed"; exit 1; }
fstatus() { json "$1" "r['files'][${2:-0}]['status']"; }
reason() { json "$1" "r['files'][${2:-0}].get('reload_reason') or ''"; }
count() { q "SELECT count(*) FROM payment_callback WHERE deleted_at IS NULL AND $1"; }

# A plain CSV without tenant_id: --set supplies it.
cat >nt.csv <<'CSV'
channel,out_trade_no,callback_type,status,payload,received_at
wechat,P1,pay,1,"{""a"":1}",2026-11-28T10:00:00Z
wechat,P2,pay,1,"{""a"":2}",2026-11-28T10:00:01Z
wechat,P3,pay,2,"{""a"":3}",2026-11-28T10:00:02Z
CSV

# =====================================================================
# 1. --set tenant_id=8, then tenant_id=9: the second is loaded for tenant 9
# =====================================================================
init_db lp_set
run import -d "$DB" --set tenant_id=8 --report s1.json nt.csv
eq "set 8: exit 0, ok" "0 ok" "$RC $(fstatus s1.json)"
run import -d "$DB" --set tenant_id=9 --report s2.json nt.csv
eq "set 9: exit 0, loaded (not skipped)" "0 ok" "$RC $(fstatus s2.json)"
eq "set 9: tenant 9 has the file's 3 keys" 3 "$(count "tenant_id = 9")"
eq "set 9: tenant 8 keeps its 3" 3 "$(count "tenant_id = 8")"
check "set 9: the summary names what changed" grep -q "with other parameters that shape its rows: --set (was 'tenant_id=8', now 'tenant_id=9')" "$ERR"
check "set 9: the report says why" jtrue s2.json '"--set" in r["files"][0]["reload_reason"]'
run import -d "$DB" --set tenant_id=9 --report s3.json nt.csv
eq "set 9 again: skipped" "0 skipped" "$RC $(fstatus s3.json)"
eq "set 9 again: no reason" "" "$(reason s3.json)"
check "the ledger records the parameters" test -n "$(q "SELECT params FROM idemload_ledger WHERE file_name = 'nt.csv' AND params LIKE '%set=tenant_id=9%'")"

# =====================================================================
# 2. --on-conflict, --final-status: loaded again; the same list in another
#    order is the same parameters
# =====================================================================
run import -d "$DB" --set tenant_id=9 --on-conflict nothing --report c1.json nt.csv
eq "--on-conflict nothing: loaded again" "0 ok" "$RC $(fstatus c1.json)"
check "--on-conflict: named" grep -q -- "--on-conflict (was 'update', now 'nothing')" "$ERR"
run import -d "$DB" --set tenant_id=9 --on-conflict nothing --final-status 3,2 --report f1.json nt.csv
eq "--final-status 3,2: loaded again" "0 ok" "$RC $(fstatus f1.json)"
check "--final-status: named" grep -q -- "--final-status (was '2', now '2,3')" "$ERR"
run import -d "$DB" --set tenant_id=9 --on-conflict nothing --final-status 2,3,2 --report f2.json nt.csv
eq "--final-status 2,3,2: the same parameters: skipped" "0 skipped" "$RC $(fstatus f2.json)"

# =====================================================================
# 3. --delimiter: another reading of the same bytes
# =====================================================================
init_db lp_delim
run import -d "$DB" --set tenant_id=8 --report d1.json nt.csv
run import -d "$DB" --set tenant_id=8 --delimiter ';' --report d2.json nt.csv
eq "--delimiter ';': not skipped: read again (and its header is then refused: exit 3)" \
    "3 failed" "$RC $(fstatus d2.json)"

# =====================================================================
# 4. --timezone of a bill: wrong, then right: loaded again, named
# =====================================================================
init_db lp_tz
run import -d "$DB" --profile wechat-trade --set tenant_id=7 --timezone Z --report t1.json wechat-all.csv
eq "wrong --timezone Z: exit 0" 0 $RC
wrong=$(q "SELECT to_char(received_at AT TIME ZONE 'UTC', 'HH24:MI') FROM payment_callback WHERE out_trade_no = 'ORD1' AND callback_type = 'pay'")
eq "wrong --timezone: the wall time taken as UTC" "10:15" "$wrong"
run import -d "$DB" --profile wechat-trade --set tenant_id=7 --timezone +08:00 --report t2.json wechat-all.csv
eq "right --timezone: loaded again, not skipped" "0 ok" "$RC $(fstatus t2.json)"
check "right --timezone: named" grep -q -- "--timezone (was 'Z', now '+08:00')" "$ERR"
eq "right --timezone: its rows are older than the wrong load's: all stale" 4 "$(json t2.json 'r["totals"]["stale"]')"

# =====================================================================
# 5. A profile file whose content changed: loaded again
# =====================================================================
init_db lp_profile
run profiles wechat-trade
cp "$OUT" my.json
run import -d "$DB" --profile ./my.json --set tenant_id=7 --report p1.json wechat-all.csv
eq "profile file: exit 0" 0 $RC
# the same content, reformatted: the same profile
python3 -c "import json; d=json.load(open('my.json')); json.dump(d, open('my2.json','w'), indent=1, ensure_ascii=False)"
run import -d "$DB" --profile ./my2.json --set tenant_id=7 --report p2.json wechat-all.csv
eq "the same profile content in another file: skipped" "0 skipped" "$RC $(fstatus p2.json)"
python3 -c "import json; d=json.load(open('my.json')); d['timezone']='+09:00'; json.dump(d, open('my3.json','w'), ensure_ascii=False)"
run import -d "$DB" --profile ./my3.json --set tenant_id=7 --report p3.json wechat-all.csv
eq "changed profile content: loaded again" "0 ok" "$RC $(fstatus p3.json)"
check "changed profile: named" grep -q -- "--profile (its content)" "$ERR"

# =====================================================================
# 6. An unfinished entry with other parameters is not resumed
# =====================================================================
init_db lp_resume
$GEN --rows 3000 --seed 2609 --format csv --out g.csv --quiet
run import -d "$DB" --chunk-rows 500 g.csv
# Make it look interrupted after 2 chunks (as a kill would leave it).
q "UPDATE idemload_ledger SET status = 'loading', chunks = 2 WHERE file_name = 'g.csv';
   DELETE FROM idemload_ledger_chunk c USING idemload_ledger l WHERE c.digest = l.digest AND l.file_name = 'g.csv' AND c.chunk_no > 2"
run import -d "$DB" --chunk-rows 500 --on-conflict nothing --report r1.json g.csv
eq "other parameters: exit 0" 0 $RC
check "other parameters: not resumed" sh -c "! grep -q 'resumed' '$ERR'"
check "other parameters: loaded from the start, and says why" grep -q "an earlier run committed 2 chunks of it, but with other parameters .*--on-conflict.*loaded from the start" "$ERR"
eq "other parameters: every chunk loaded in this run" 6 "$(json r1.json 'r["totals"]["chunks"]')"

# =====================================================================
# 7. A ledger from before the parameters were recorded: migrated, its
#    files loaded once more (saying why, writing nothing), then skipped
# =====================================================================
init_db lp_old
run import -d "$DB" --set tenant_id=8 nt.csv
q "ALTER TABLE idemload_ledger DROP COLUMN params"
before=$(q "SELECT md5(string_agg(concat_ws('|', ctid, xmin), ',' ORDER BY ctid)) FROM payment_callback")
run import -d "$DB" --set tenant_id=8 --report o1.json nt.csv
eq "old ledger: loaded once more" "0 ok" "$RC $(fstatus o1.json)"
check "old ledger: the summary says why" grep -q "does not record the parameters that shaped its rows" "$ERR"
eq "old ledger: nothing written (ctid, xmin)" "$before" "$(q "SELECT md5(string_agg(concat_ws('|', ctid, xmin), ',' ORDER BY ctid)) FROM payment_callback")"
eq "old ledger: the column is back" 1 "$(q "SELECT count(*) FROM pg_attribute WHERE attrelid = 'idemload_ledger'::regclass AND attname = 'params' AND NOT attisdropped")"
run import -d "$DB" --set tenant_id=8 --report o2.json nt.csv
eq "old ledger: then skipped" "0 skipped" "$RC $(fstatus o2.json)"
finish
