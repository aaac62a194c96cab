#!/usr/bin/env bash
# `idemload validate` end to end: exit status, report, rejects file, on
# hand-made hostile inputs and on generated files.
. "$(dirname "$0")/../lib.sh"

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'

# --- help, version, usage errors
run --help; eq "--help exits 0" 0 $RC; check "--help lists commands" contains "$OUT" "create-index"
run validate --help; eq "validate --help exits 0" 0 $RC; check "validate --help lists --max-rejects" contains "$OUT" "max-rejects"
run --version; eq "--version exits 0" 0 $RC; check "--version prints a version" grep -qE 'idemload [0-9]' "$OUT"
run validate --bogus x.csv; eq "unknown option is exit 2" 2 $RC
eq "unknown option: one line of hint" 1 "$(wc -l <"$ERR")"
check "unknown option hint names --help" contains "$ERR" "--help"
run frobnicate; eq "unknown command is exit 2" 2 $RC
run validate; eq "validate without files is exit 2" 2 $RC
printf '%s\n' "$H" >noext.txt
run validate noext.txt; eq "unknown format is exit 2" 2 $RC; check "asks for --format" contains "$ERR" "--format"
run validate --format csv noext.txt; eq "--format csv reads it" 0 $RC
run validate --chunk-rows 0 noext.txt; eq "--chunk-rows 0 is a usage error" 2 $RC
# (Every option's refused values and errors: tests/cli/test_options.sh.)
# A column beyond idemload's own is the table's business (checked by import
# against the catalog); validate has no table, so it takes it.
run validate --set merchant_id=1 --format csv noext.txt; check "--set another column: not a usage error" test $RC -ne 2
run validate --set =1 --format csv noext.txt; eq "--set without a column name is exit 2" 2 $RC
run validate --set nosuch --format csv noext.txt; eq "--set without '=' is exit 2" 2 $RC
run validate --set tenant_id=abc --format csv noext.txt; eq "--set bad value is exit 2" 2 $RC

# --- a clean CSV: exit 0, figures, no rejects file
cat >clean.csv <<CSV
$H
42,wechat,WX1,pay,1,"{""amount"":168.90}",2026-11-28T10:00:00+08:00
42,wechat,WX1,pay,2,"{""amount"":168.90,""state"":""SUCCESS""}",2026-11-28T03:00:00Z
42,wechat,WX2,pay,0,"[1,2]",2026-11-28 04:00:00.5+0800
43,alipay,AL1,refund,,"{""a"":""x,y""}",2026-11-28T04:00:00+08
CSV
run validate --rejects rj.ndjson --report rep.json clean.csv
eq "clean csv exit 0" 0 $RC
eq "rows_read" 4 "$(json rep.json 'r["files"][0]["rows_read"]')"
eq "rows_deduplicated (10:00+08:00 is before 03:00Z)" 1 "$(json rep.json 'r["files"][0]["rows_deduplicated"]')"
eq "rows_rejected" 0 "$(json rep.json 'r["totals"]["rows_rejected"]')"
eq "status ok" ok "$(json rep.json 'r["files"][0]["status"]')"
eq "format csv" csv "$(json rep.json 'r["files"][0]["format"]')"
eq "report keys" "chunks,digest,error,existing,format,inserted,path,rows_deduplicated,rows_read,rows_rejected,rows_skipped,stale,status,unchanged,updated,would_merge" \
    "$(json rep.json '",".join(sorted(r["files"][0].keys()))')"
check "dry_run and elapsed_s present" jtrue rep.json '"dry_run" in r and "elapsed_s" in r and "totals" in r'
check "no rejects file for a clean run" test ! -e rj.ndjson
check "summary on stderr" contains "$ERR" "rows read 4"

# --- hostile CSV: BOM, CRLF, columns in any order, quoted newline, bad rows
printf '\xef\xbb\xbfpayload,received_at,extra,callback_type,out_trade_no,channel,tenant_id\r\n' >hostile.csv
printf '"{""memo"":""a,b"",\r\n""q"":""say \\""hi\\""""}",2026-11-28T10:00:00Z,x,pay,A1,wechat,1\r\n' >>hostile.csv   # lines 2-3: quoted CRLF
printf '"{}",2026-11-28T10:00:00Z,x,pay,  ,wechat,1\r\n' >>hostile.csv          # line 4: blank key
printf '"{}",2026-02-30T10:00:00Z,x,pay,A2,wechat,1\r\n' >>hostile.csv          # line 5: bad date
printf '"{""n"":1e400,""big"":123456789012345678901234567890}",2026-11-28T10:00:00+08,x,pay,A3,wechat,1\r\n' >>hostile.csv
printf '"{""a"":\\u0000}",2026-11-28T10:00:00Z,x,pay,A4,wechat,1\r\n' >>hostile.csv  # line 7: bad JSON
printf '"{""a"":""\\u0000""}",2026-11-28T10:00:00Z,x,pay,A5,wechat,1\r\n' >>hostile.csv # line 8: \u0000
printf '"{}",2026-11-28T10:00:00,x,pay,A6,wechat,1\r\n' >>hostile.csv            # line 9: no offset
printf '"{}",2026-11-28T10:00:00Z,x,pay,A7,wechat,99999999999999999999\r\n' >>hostile.csv # line 10
printf '"{}",2026-11-28T10:00:00Z,x,pay,A\xff8,wechat,1\r\n' >>hostile.csv       # line 11: bad UTF-8
printf '"{}",2026-11-28T10:00:00Z,x,pay,A9,NULL,1\r\n' >>hostile.csv             # line 12: NULL text
printf 'null,2026-11-28T10:00:00Z,x,pay,A10,wechat,1\r\n' >>hostile.csv          # line 13: JSON null
printf '"{}",2026-11-28T10:00:00Z,x,pay,A11,wechat\r\n' >>hostile.csv            # line 14: short row
printf '"{}",2026-11-28T10:00:00-05:30,x,pay,A12,wechat,1\r\n' >>hostile.csv     # line 15: ok
run validate --rejects rj.ndjson --report rep.json hostile.csv
eq "hostile csv exit 1 (rejects)" 1 $RC
eq "hostile rows_read" 13 "$(json rep.json 'r["totals"]["rows_read"]')"
eq "hostile rows_rejected" 10 "$(json rep.json 'r["totals"]["rows_rejected"]')"
eq "rejects file has one line per reject" 10 "$(wc -l <rj.ndjson)"
eq "reject lines are record start lines" "4 5 7 8 9 10 11 12 13 14" \
    "$(python3 -c 'import json;print(" ".join(str(json.loads(l)["line"]) for l in open("rj.ndjson")))' | cut -d' ' -f1-10)"
check "every reject has file, line, reason, raw" python3 -c '
import json,sys
for l in open("rj.ndjson"):
    r=json.loads(l); assert r["file"]=="hostile.csv" and r["reason"] and "raw" in r and r["line"]>0, r'
check "blank key reason" grep -q '"line":4,"reason":"out_trade_no' rj.ndjson
check "invalid date reason" grep -q 'day out of range' rj.ndjson
check "raw kept as written" python3 -c '
import json
r=[json.loads(l) for l in open("rj.ndjson")]
assert r[1]["raw"]=="\"{}\",2026-02-30T10:00:00Z,x,pay,A2,wechat,1", r[1]["raw"]'
check "invalid UTF-8 raw keeps exact bytes in raw_base64" python3 -c '
import json,base64
r=[json.loads(l) for l in open("rj.ndjson") if json.loads(l)["line"]==11][0]
assert b"\xff" in base64.b64decode(r["raw_base64"])'
rm -f rj.ndjson

# --- gzip: detected by magic bytes, multi-member, truncated, trailing garbage
head -n 3 clean.csv >part1.csv; (head -n 1 clean.csv; tail -n 2 clean.csv) >part2.csv
gzip -c part1.csv >m.csv.gz; tail -n 2 clean.csv | gzip -c >>m.csv.gz
run validate --report mm.json m.csv.gz
eq "multi-member gzip: exit 0" 0 $RC
eq "multi-member gzip read to the end" 4 "$(json mm.json 'r["totals"]["rows_read"]')"
cp m.csv.gz noname.csv; run validate --report noname.json noname.csv
eq "gzip by magic bytes: exit 0" 0 $RC
eq "gzip detected by magic bytes, not the name" 4 "$(json noname.json 'r["totals"]["rows_read"]')"
$GEN --rows 20000 --seed 3 --format csv --out big.csv.gz
size=$(stat -c %s big.csv.gz); head -c $((size / 2)) big.csv.gz >trunc.csv.gz
run validate --report rep.json trunc.csv.gz
eq "truncated gzip is exit 3" 3 $RC
check "message names the file" contains "$ERR" "trunc.csv.gz"
check "message says truncated" grep -qi "truncated" "$ERR"
eq "truncated file status" failed "$(json rep.json 'r["files"][0]["status"]')"
(cat big.csv.gz; echo "garbage") >garbage.csv.gz
run validate garbage.csv.gz; eq "garbage after a gzip member is exit 3" 3 $RC
run validate nosuchfile.csv; eq "missing file is exit 3" 3 $RC
# No header row at all (a failed download): the file fails, it is not "0 rows, ok".
: >empty.csv; gzip -c empty.csv >empty.csv.gz
for f in empty.csv empty.csv.gz; do
    run validate --report e.json $f
    eq "$f (no header row): exit 3" 3 $RC
    check "$f: says the file is empty, with no header row" contains "$ERR" "$f: the file is empty: no header row"
    eq "$f: status failed" failed "$(json e.json 'r["files"][0]["status"]')"
done
run validate --format csv - </dev/null; eq "empty stdin (csv): exit 3" 3 $RC
: >empty.ndjson; run validate empty.ndjson; eq "empty NDJSON (no header to miss): exit 0, no rows" 0 $RC
run validate --report rep.json trunc.csv.gz clean.csv
eq "one failing file does not stop the others" ok "$(json rep.json 'r["files"][1]["status"]')"
eq "exit status is the most severe" 3 $RC

# --- stdin, NDJSON, --set, --delimiter
run validate --format csv - <clean.csv; eq "stdin csv" 0 $RC
cat >a.ndjson <<'ND'
{"tenant_id": 7, "channel": "alipay", "out_trade_no": "N1", "callback_type": "pay", "status": 1, "payload": {"amount": 168.90}, "received_at": "2026-11-28T10:00:00+08:00"}

{"tenant_id": "7", "channel": "alipay", "out_trade_no": "N1", "callback_type": "pay", "status": 2, "payload": {"amount": 168.90}, "received_at": "2026-11-28T02:00:00.000001Z"}
{"tenant_id": 7, "channel": "alipay", "out_trade_no": "N2", "callback_type": "pay", "payload": "just a string", "received_at": "2026-11-28T10:00:00Z"}
{"tenant_id": 7, "channel": "alipay", "out_trade_no": "N3", "callback_type": "pay", "payload": null, "received_at": "2026-11-28T10:00:00Z"}
[1, 2]
{"tenant_id": 7, "channel": "alipay", "out_trade_no": "N4", "callback_type": "pay", "payload": {}, "received_at": "2026-11-28T10:00:00Z"
ND
run validate --rejects rj.ndjson --report rep.json a.ndjson
eq "ndjson exit 1" 1 $RC
eq "ndjson blank line skipped, rows_read" 6 "$(json rep.json 'r["totals"]["rows_read"]')"
eq "ndjson dedup" 1 "$(json rep.json 'r["totals"]["rows_deduplicated"]')"
eq "ndjson rejects" 3 "$(json rep.json 'r["totals"]["rows_rejected"]')"
eq "ndjson reject lines" "5 6 7" "$(python3 -c 'import json;print(" ".join(str(json.loads(l)["line"]) for l in open("rj.ndjson")))')"
rm -f rj.ndjson
printf 'tenant_id;out_trade_no;callback_type;payload;received_at\n5;U1;pay;"{""a"":1}";2026-11-28T10:00:00Z\n' >u.csv
run validate --delimiter ';' u.csv; eq "csv without channel needs --set" 3 $RC
check "missing column message names it" contains "$ERR" "channel"
run validate --delimiter ';' --set channel=unionpay u.csv; eq "--set fills the absent column" 0 $RC

# --- --max-rejects
$GEN --rows 2000 --seed 5 --bad-rate 0.05 --format csv --out bad.csv --summary bad.sum.json --quiet
rm -f rj.ndjson
run validate --max-rejects 3 --rejects rj.ndjson --report mr.json bad.csv
eq "--max-rejects stops the file (exit 3)" 3 $RC
eq "--max-rejects: the file failed" failed "$(json mr.json 'r["files"][0]["status"]')"
check "--max-rejects message" grep -q "more than 3 rows rejected (--max-rejects)" "$ERR"
eq "--max-rejects 3: it stopped at the 4th reject" 4 "$(wc -l <rj.ndjson)"
run validate --rejects rj2.ndjson --report full.json bad.csv
eq "without --max-rejects the file finishes (exit 1)" 1 $RC
eq "--max-rejects 3: the 4 rejects are the file's first 4" "$(head -n 4 rj2.ndjson)" "$(cat rj.ndjson)"
# The generator's own counts (one chunk holds the whole file): rows_read =
# rows, rows_rejected = bad rows, rows_deduplicated = good rows - keys.
eq "count identity: rows_read, rows_rejected, rows_deduplicated = the generator's" \
    "$(json bad.sum.json '"%d %d %d" % (r["rows"], r["bad"], r["good"] - r["keys"])')" \
    "$(json full.json '"%d %d %d" % (r["totals"]["rows_read"], r["totals"]["rows_rejected"], r["totals"]["rows_deduplicated"])')"
eq "count identity: one reject line per bad row" "$(json bad.sum.json 'r["bad"]')" "$(wc -l <rj2.ndjson)"
check "the generator made bad rows to count" jtrue bad.sum.json 'r["bad"] > 50 and r["good"] > r["keys"]' 

# --- generated files, both formats: chunking does not change totals but
# deduplication is per chunk
$GEN --rows 30000 --seed 9 --format ndjson --out g.ndjson.gz
run validate --report rep1.json g.ndjson.gz
eq "generated ndjson.gz validates" 0 $RC
run validate --chunk-rows 1000 --report rep2.json g.ndjson.gz
eq "rows_read same for any chunk size" "$(json rep1.json 'r["totals"]["rows_read"]')" "$(json rep2.json 'r["totals"]["rows_read"]')"
eq "chunks counted" 30 "$(json rep2.json 'r["totals"]["chunks"]')"

# --- 1 MB payload
python3 - <<'PY'
import json
big = "x" * (1 << 20)
with open("big1m.ndjson", "w") as f:
    f.write(json.dumps({"tenant_id": 1, "channel": "c", "out_trade_no": "o", "callback_type": "t",
                        "payload": {"blob": big}, "received_at": "2026-11-28T10:00:00Z"}) + "\n")
with open("big1m.csv", "w") as f:
    f.write("tenant_id,channel,out_trade_no,callback_type,payload,received_at\n")
    f.write('1,c,o,t,"{""blob"":""%s""}",2026-11-28T10:00:00Z\n' % big)
PY
run validate big1m.ndjson big1m.csv; eq "1 MB payloads validate" 0 $RC

# --- a rejects file that cannot be written: the file is failed, not ok
printf '{"bad\n' >bad1.ndjson
run validate --rejects /dev/full --report full.json bad1.ndjson
eq "--rejects /dev/full: exit 3" 3 $RC
eq "--rejects /dev/full: the file's status in the report" failed "$(json full.json 'r["files"][0]["status"]')"
check "--rejects /dev/full: its error says why" contains full.json "No space left on device"

# --- validate names each file by the digest a later import's ledger will
# use (report and page); standard input has none
run validate --report dig.json --html dig.html g.ndjson.gz
eq "the report's digest is the file's SHA-256" "$(sha256sum g.ndjson.gz | cut -d' ' -f1)" "$(json dig.json 'r["files"][0]["digest"]')"
check "the page shows it" grep -q "<code>$(sha256sum g.ndjson.gz | cut -d' ' -f1)</code>" dig.html
run validate --report digin.json --html digin.html - <big1m.csv
eq "standard input: no digest" None "$(json digin.json 'r["files"][0]["digest"]')"
check "the page says why" grep -q "none (standard input)" digin.html

# --set supplies a column the file lacks: where the header has the column,
# the file's values are kept, and the run says its --set is not used.
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '1,wechat,X1,pay,2,"{}",2024-05-01T10:00:05Z' >setcol.csv
run validate --set channel=zzz --set tenant_id=9 --rejects rj_set.ndjson --report setrep.json setcol.csv
eq "--set of a column the file has: still exit 0" 0 "$RC"
check "it says --set channel is not used" contains "$ERR" "setcol.csv: --set channel is not used: the file has a channel column"
check "and --set tenant_id" contains "$ERR" "--set tenant_id is not used"

check "validate's report: would_merge, so that rows_read adds up" jtrue "$WORK/setrep.json" \
    "(t := r['totals'])['would_merge'] == 1 and t['rows_read'] == t['rows_rejected'] + t['rows_skipped'] + t['rows_deduplicated'] + t['would_merge'] and r['files'][0]['would_merge'] == 1"

finish
