#!/usr/bin/env bash
# Which merge a lane runs (src/load/lane.c): the probe first, then the probe
# only while more than a tenth of a chunk's rows are ones it spares
# (unchanged or stale: a direct merge would lock them for nothing).  Rows
# that update a key are written by either merge, so a file of newer
# versions goes direct after its first chunk, and a re-import stays on the
# probe.  Counted from the server's log (log_statement = all, own sessions).
. "$(dirname "$0")/../lib.sh"
pg_use
GOLDEN=$SRC/tests/golden
export PGOPTIONS='-c log_statement=all'
# times NAME: how many times the golden statement NAME was logged since log_mark.
times() { log_since | grep -cF -- "$(golden_sql "$1")"; }

hdr="tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"
# keys K00..K39, one version each at TIME with payload V
version() {
    echo "$hdr"
    for i in $(seq -w 0 39); do echo "7,alipay,K$i,pay,1,\"{\"\"v\"\":\"\"$1\"\"}\",$2"; done
}
version old 2026-11-28T09:00:00Z >"$WORK/old.csv"
version new 2026-11-28T10:00:00Z >"$WORK/new.csv"
figures() { json "$1" '" ".join(str(r["totals"][k]) for k in ("inserted","updated","unchanged","stale","chunks"))'; }

init_db merge_choice
run import -d "$DB" -q -j 1 --chunk-rows 10 "$WORK/old.csv"
eq "the old versions loaded" 0 "$RC"

log_mark
run import -d "$DB" -q -j 1 --chunk-rows 10 --report "$WORK/new.json" "$WORK/new.csv"
eq "the newer versions loaded" 0 "$RC"
eq "every key updated (inserted, updated, unchanged, stale, chunks)" "0 40 0 0 4" "$(figures "$WORK/new.json")"
eq "a file of newer versions: the probe for the first chunk only" 1 "$(times merge_probe_update.sql)"
eq "and the direct merge for the three others" 3 "$(times merge_direct_update.sql)"

log_mark
run import -d "$DB" -q -j 1 --chunk-rows 10 --force --report "$WORK/again.json" "$WORK/new.csv"
eq "the re-import ran" 0 "$RC"
eq "nothing written (inserted, updated, unchanged, stale, chunks)" "0 0 40 0 4" "$(figures "$WORK/again.json")"
eq "a re-import stays on the probe" 4 "$(times merge_probe_update.sql)"
eq "and never goes direct" 0 "$(times merge_direct_update.sql)"

finish
