#!/usr/bin/env bash
# A class-22 error raised by the server for one row (SPEC.md, "A row's
# fault or the load's fault"): a value idemload's own validation accepts
# but the target refuses (a tenant_id beyond the table's integer column,
# 22003; an out_trade_no longer than its varchar(32), 22001; a payload
# amount a CHECK constraint casts to numeric and cannot, 22P02) is that
# row's refusal: the row goes to the rejects file with its file, line, the
# server's reason and SQLSTATE and its raw text; the other rows of its
# chunk load; the exit status is 1 and the file is completed.  Covered: new
# keys (COPYed straight into the table) and a newer version of a key the
# table holds (merged), a dry run first (the same rejects, nothing written).
# The expected table is the merge rules' state of the files without the
# bad rows (tests/expected_merge.py).
. "$(dirname "$0")/../lib.sh"
pg_use

wsnap() {
    q "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', ctid, xmin, id), ',' ORDER BY ctid)), '-') FROM payment_callback"
}
H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
$GEN --rows 2000 --seed 2201 --tenant-ids 7,8,9 --quirk-rate 0 --format csv --out pre.csv --quiet
$GEN --rows 3000 --seed 2202 --tenant-ids 7,8,9 --quirk-rate 0 --format csv --out good.csv --quiet
# A key the table will hold (from pre.csv), for a newer version that the CHECK refuses.
read -r T C O K <<<"$(python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(r["tenant_id"], r["channel"], r["out_trade_no"], r["callback_type"])' pre.csv)"
BAD_TENANT='3000000000,wechat,SD-TENANT-1,pay,1,"{""amount"":1.00}",2026-11-28T10:00:00Z'
BAD_LONG='7,wechat,SD-0123456789-0123456789-0123456789,pay,1,"{""amount"":2.00}",2026-11-28T10:00:01Z'
BAD_NEW_AMOUNT='7,alipay,SD-AMOUNT-1,pay,1,"{""amount"":""n/a""}",2026-11-28T10:00:02Z'
BAD_UPD_AMOUNT="$T,$C,$O,$K,1,\"{\"\"amount\"\":\"\"12,50\"\"}\",2027-01-01T00:00:00Z"
# f.csv: good.csv with the four bad rows at lines 501, 1502, 2503 and 2904
# (chunks of 1000 records: chunks 1, 2, 3 and 3).
python3 - good.csv f.csv "$BAD_TENANT" "$BAD_LONG" "$BAD_NEW_AMOUNT" "$BAD_UPD_AMOUNT" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
bad = sys.argv[3:]
at = [501, 1502, 2503, 2904]
for line_no, row in zip(at, bad):
    lines.insert(line_no - 1, row)
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(lines) + "\n")
PY
eq "the bad rows are where the test put them" "$BAD_LONG|$BAD_UPD_AMOUNT" "$(sed -n 1502p f.csv)|$(sed -n 2904p f.csv)"
run validate --rejects v.ndjson f.csv
eq "idemload's own validation accepts every row of f.csv (exit 0)" 0 $RC

new_db server_data_errors
run init -d "$DB"
q "ALTER TABLE payment_callback ALTER COLUMN tenant_id TYPE integer,
     ALTER COLUMN out_trade_no TYPE varchar(32),
     ADD CONSTRAINT amount_is_a_number CHECK ((payload->>'amount') IS NULL OR (payload->>'amount')::numeric >= 0)"
run import -d "$DB" --rejects pre.rj --chunk-rows 1000 pre.csv
eq "pre.csv loads whole (exit 0)" 0 $RC

# The dry run meets the same refusals and writes nothing.
before=$(wsnap)
run import -d "$DB" --dry-run --rejects dry.rj --report dry.json --chunk-rows 1000 f.csv
eq "dry run: exit 1 (rows rejected), not 4" 1 $RC
eq "dry run: four rows rejected" "4 4" "$(json dry.json 'r["totals"]["rows_rejected"]') $(wc -l <dry.rj)"
eq "dry run: nothing written" "$before" "$(wsnap)"

run import -d "$DB" --rejects rj.ndjson --report rep.json --chunk-rows 1000 f.csv
eq "exit 1 (rows rejected), not 4 (the load's failure)" 1 $RC
check "the summary does not call it the load's failure" sh -c "! grep -q 'the load failed' '$ERR'"
eq "report: the file ok, four rows rejected" "ok 4" \
    "$(json rep.json 'r["files"][0]["status"]') $(json rep.json 'r["totals"]["rows_rejected"]')"
eq "ledger: the file completed" completed \
    "$(q "SELECT status FROM idemload_ledger WHERE file_name = 'f.csv'")"
eq "the rejects file holds the four rows, one line each" 4 "$(wc -l <rj.ndjson)"
# each reject: file, line, the server's reason with its SQLSTATE, the raw text
python3 - rj.ndjson "$BAD_TENANT" "$BAD_LONG" "$BAD_NEW_AMOUNT" "$BAD_UPD_AMOUNT" >rj.check <<'PY'
import json, sys
got = sorted((json.loads(l) for l in open(sys.argv[1], encoding="utf-8")), key=lambda r: r["line"])
want = [(501, sys.argv[2], "22003", "out of range"),
        (1502, sys.argv[3], "22001", "too long"),
        (2503, sys.argv[4], "22P02", "invalid input syntax"),
        (2904, sys.argv[5], "22P02", "invalid input syntax")]
for r, (line, raw, state, words) in zip(got, want):
    ok = (r["file"] == "f.csv" and r["line"] == line and r["raw"] == raw
          and ("SQLSTATE " + state) in r["reason"] and words in r["reason"])
    print(line, "ok" if ok else "WRONG: %r" % r)
PY
eq "each reject names its line, the server's reason and SQLSTATE, and keeps the raw row" \
    "501 ok|1502 ok|2503 ok|2904 ok" "$(paste -sd'|' rj.check)"
# The table: pre.csv then good.csv (f.csv without its bad rows), by the model.
$EXPECTED_MERGE --data want.csv pre.csv good.csv 2>want.counts
eq "the model read both files" 5000 "$(json want.counts 'r["rows"]')"
expect_table "every other row of the refused rows' chunks loaded: the merge rules' state" want.csv
# The same command again: skipped, nothing appended to the rejects file.
run import -d "$DB" --rejects rj.ndjson --report again.json --chunk-rows 1000 f.csv
eq "again: skipped (exit 0), the rejects file unchanged" "0 skipped 4" \
    "$RC $(json again.json 'r["files"][0]["status"]') $(wc -l <rj.ndjson)"
finish
