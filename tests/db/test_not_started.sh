#!/usr/bin/env bash
# A file the run never started still has its report entry, and every such
# entry says the same thing the same way (pipeline_not_started): its path,
# status failed, why, and the format it would have been read as (the one
# its name chooses, --format's, or the profile's), never "unknown".
. "$(dirname "$0")/../lib.sh"

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
printf '%s\n7,wechat,A1,pay,1,"{""a"":1}",2026-11-28T10:00:00Z\n' "$H" >a.csv
printf '{"tenant_id":7,"channel":"wechat","out_trade_no":"B1","callback_type":"pay","status":1,"payload":{"b":1},"received_at":"2026-11-28T10:00:00Z"}\n' >b.ndjson
formats() { json "$1" '" ".join(f["path"].rsplit("/", 1)[-1] + ":" + f["format"] + ":" + f["status"] for f in r["files"])'; }

# No database: the loader never opens (main.c's entries).
run import -q -d "host=/nonexistent" --report nodb.json a.csv b.ndjson
eq "no server: exit 4" 4 "$RC"
eq "no server: each file failed, with its own format" "a.csv:csv:failed b.ndjson:ndjson:failed" "$(formats nodb.json)"
check "no server: the entries say why" jtrue nodb.json 'all("not loaded" in f["error"] for f in r["files"])'
check "no server: and give the cause itself (a mailed report has no stderr beside it)" jtrue nodb.json \
    'all("cannot connect to the database" in f["error"] for f in r["files"])'
init_db not_started_noidx
q "CREATE TABLE noidx (LIKE payment_callback)" >/dev/null
run import -q -d "$DB" --table noidx --report noidx.json a.csv
eq "no unique index: exit 2" 2 "$RC"
check "no unique index: the report names the fix, as stderr does" jtrue noidx.json \
    '"unique index" in r["files"][0]["error"]'

# The changes file cannot be opened: the sinks fail, no file is touched.
init_db not_started
run import -q -d "$DB" --changes "$WORK/no/such/dir/ch.ndjson" --report sinks.json a.csv b.ndjson
check "unwritable --changes: a failure status (3)" test "$RC" -eq 3
eq "unwritable --changes: each file with its own format" "a.csv:csv:failed b.ndjson:ndjson:failed" "$(formats sinks.json)"
check "unwritable --changes: the entries say not started" jtrue sinks.json 'all("not started" in f["error"] for f in r["files"])'
eq "unwritable --changes: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback")"

# A page (or a rejects file, a report) that cannot be written is found
# before anything is read: found after the load, the file would be in the
# ledger as completed, a rerun would skip it, and no page would ever show
# its figures.  The report still says, file by file, that nothing started.
init_db not_started_out
run import -q -d "$DB" --report out.json --html "$WORK/no/such/dir/p.html" a.csv b.ndjson
eq "unwritable --html: exit 3" 3 "$RC"
check "unwritable --html: says which output and why" contains "$ERR" \
    "cannot write --html '$WORK/no/such/dir/p.html': its directory does not exist; nothing was read or loaded"
check "unwritable --html: the report's entries say not started, and why" jtrue out.json \
    'all("not started: cannot write --html" in f["error"] for f in r["files"])'
eq "unwritable --html: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback")"
eq "unwritable --html: no ledger entry (not even its table)" t "$(q "SELECT to_regclass('idemload_ledger') IS NULL")"
run import -q -d "$DB" --rejects "$WORK/no/such/dir/rj.ndjson" a.csv
eq "unwritable --rejects (given): exit 3 before reading" 3 "$RC"
eq "unwritable --rejects: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback")"
run import -q -d "$DB" --report "$WORK" a.csv
eq "--report naming a directory: exit 3" 3 "$RC"
check "--report naming a directory: says so" contains "$ERR" "it is a directory"
mkdir -p pages
run import -q -d "$DB" --report out.json --html pages/p.html a.csv b.ndjson
eq "the same command with a directory that exists: exit 0" 0 "$RC"
eq "both files loaded then" 2 "$(q "SELECT count(*) FROM payment_callback")"
check "and the page written" test -s pages/p.html

# --format names the format of every entry, whatever the names say.
run import -q -d "host=/nonexistent" --format ndjson --report forced.json a.csv
eq "--format ndjson: the entry names ndjson" "a.csv:ndjson:failed" "$(formats forced.json)"
finish
