#!/usr/bin/env bash
# An output path that names the file standard output or error is redirected
# to: `--report /dev/stdout >> runs.log` in a cron line, `/dev/stderr`,
# `/dev/fd/1`.  It is written through the stream, after what the file holds,
# as `-` would be: the report was written beside the file and renamed onto
# it (the log's earlier runs gone, and the summary the run had just written
# to stderr), the rejects file "mended" the log's last line away, and the
# changes file (tests/db/test_side_outputs_paths.sh) truncated it.  And two
# outputs into one file through a dangling symbolic link are refused like
# two spellings of one new file (README "An output path ...").
. "$(dirname "$0")/../lib.sh"

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
{
    echo "$H"
    echo '1,wechat,S1,pay,1,"{}",2026-11-28T10:00:00Z'
    echo 'x,wechat,S2,pay,1,"{}",2026-11-28T10:00:00Z'
    echo '1,wechat,S3,pay,1,"{}",2026-11-28T10:00:00Z'
} >in.csv

# --- the report through /dev/stdout, /dev/fd/1 and /dev/stderr: appended
for p in /dev/stdout /dev/fd/1; do
    echo "an earlier run" >runs.log
    "$IDEMLOAD" validate -q --rejects rj.ndjson --report "$p" in.csv >>runs.log 2>err.txt
    eq "--report $p >> log: exit 1 (a row rejected)" 1 $?
    eq "--report $p >> log: the log's earlier line stays" "an earlier run" "$(head -n 1 runs.log)"
    check "--report $p >> log: the report follows it, whole" sh -c "tail -n +2 runs.log | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); sys.exit(r[\"totals\"][\"rows_rejected\"] != 1)' 2>/dev/null"
    eq "--report $p >> log: no temporary file left" "" "$(ls -A | grep idemload- || true)"
done
echo "an earlier run" >e.log
"$IDEMLOAD" validate --rejects rj.ndjson --report /dev/stderr in.csv 2>>e.log
eq "--report /dev/stderr 2>> log: exit 1" 1 $?
eq "--report /dev/stderr 2>> log: the log's earlier line stays" "an earlier run" "$(head -n 1 e.log)"
check "--report /dev/stderr 2>> log: the summary stays, before the report" \
    python3 -c 'import sys; t=open("e.log").read(); i=t.index("validate summary"); j=t.index("\"command\""); sys.exit(not i < j)' 2>/dev/null

# --- the page the same way
echo "an earlier run" >page.log
"$IDEMLOAD" validate -q --rejects rj.ndjson --html /dev/stdout in.csv >>page.log 2>err.txt
eq "--html /dev/stdout >> log: the log's earlier line stays" "an earlier run" "$(head -n 1 page.log)"
check "--html /dev/stdout >> log: the page follows it" grep -q '</html>' page.log

# --- the rejects: the log's last line, without a newline, is not cut
printf 'an earlier line without its newline' >rj.log
"$IDEMLOAD" validate -q --rejects /dev/stdout in.csv >>rj.log 2>err.txt
eq "--rejects /dev/stdout >> log: exit 1" 1 $?
check "--rejects /dev/stdout >> log: the log's text stays" grep -q '^an earlier line without its newline' rj.log
check "--rejects /dev/stdout >> log: says nothing of a torn line" sh -c "! grep -q 'torn' err.txt"
eq "--rejects /dev/stdout >> log: the reject is in it" 1 "$(grep -c '"line":3' rj.log)"

# --- standard output through its file's name counts as "-"
run validate -q --report - --html /dev/stdout in.csv
eq "--report - beside --html /dev/stdout (one stream): exit 2" 2 $RC
check "--report - beside --html /dev/stdout: says they share standard output" contains "$ERR" "cannot share standard output"
"$IDEMLOAD" validate -q --rejects /dev/stdout --report /dev/stdout in.csv >both.out 2>err.txt
eq "--rejects and --report through /dev/stdout > f, as with -: exit 1" 1 $?
check "--rejects and --report through /dev/stdout > f: the reject, then the report" \
    python3 -c 'import json,sys; t=open("both.out").read(); l,_,rest=t.partition("\n"); json.loads(l); json.loads(rest)' 2>/dev/null

# --- a dangling symbolic link and the name it would create: one file
ln -s new.json dangling.json
run validate -q --rejects rj.ndjson --report dangling.json --html new.json in.csv
eq "--report through a dangling link, --html its target: exit 2" 2 $RC
check "a dangling link and its target: named as the same file" contains "$ERR" "are the same file"
check "a dangling link and its target: nothing written" test ! -e new.json
mkdir -p sub && ln -s ../new2.json sub/l.json
run validate -q --rejects rj.ndjson --html sub/l.json --report ./new2.json in.csv
eq "a relative dangling link in another directory and its target: exit 2" 2 $RC
run validate -q --rejects rj.ndjson --report dangling.json --html other.json in.csv
eq "a dangling link and another file: exit 1" 1 $RC
check "a dangling link: the report written where it leads" sh -c "python3 -c 'import json; json.load(open(\"new.json\"))' && test -L dangling.json"
finish
