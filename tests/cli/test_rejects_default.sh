#!/usr/bin/env bash
# The default rejects file (SPEC.md "Validation"): without --rejects, the
# rejected rows go to idemload-rejects.ndjson in the current directory,
# appended to (what was there stays, a second run adds its rows), one JSON
# object per row with file, line (where the record starts), reason and the
# raw text.  validate writes it as import does.
. "$(dirname "$0")/../lib.sh"

mkdir -p here elsewhere
{
    echo "tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"
    echo '1,wechat,A1,pay,1,"{}",2026-11-28T10:00:00Z'
    echo 'abc,wechat,A2,pay,1,"{}",2026-11-28T10:00:00Z'
    echo '1,wechat,A3,pay,1,"{""a"":'
    echo '2}",2026-11-28T10:00:00'
    echo '1,wechat,A4,pay,1,"{}",2026-11-28T11:00:00Z'
} >elsewhere/r.csv
# What was in the file before: kept.
echo '{"earlier":"night"}' >here/idemload-rejects.ndjson
cd here || exit 1
run validate ../elsewhere/r.csv
eq "two bad rows: exit 1" 1 "$RC"
check "no rejects file beside the input (the current directory's)" test ! -e ../elsewhere/idemload-rejects.ndjson
eq "the earlier line stays first, then one line per rejected row" 3 "$(wc -l <idemload-rejects.ndjson)"
eq "the earlier line untouched" '{"earlier":"night"}' "$(head -n 1 idemload-rejects.ndjson)"
# The rows by construction: line 3 (tenant abc), and the record starting
# on line 4 (it spans two lines; no offset in its received_at).
check "each rejected row: file, its starting line, a reason, the raw text" python3 - <<'PY'
import json, sys
rows = [json.loads(l) for l in open("idemload-rejects.ndjson", encoding="utf-8")][1:]
want = [(3, 'abc,wechat,A2,pay,1,"{}",2026-11-28T10:00:00Z'),
        (4, '1,wechat,A3,pay,1,"{""a"":\n2}",2026-11-28T10:00:00')]
got = [(r["line"], r["raw"].rstrip("\r\n")) for r in rows]
ok = got == want and all(r["file"].endswith("r.csv") and r["reason"] for r in rows)
print(got if not ok else "", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
run validate ../elsewhere/r.csv
eq "again: exit 1" 1 "$RC"
eq "again: appended (the earlier line, then both runs' two rows)" 5 "$(wc -l <idemload-rejects.ndjson)"
eq "again: the second run's lines repeat the first's" "$(sed -n 2,3p idemload-rejects.ndjson)" \
    "$(sed -n 4,5p idemload-rejects.ndjson)"
run validate --rejects mine.ndjson ../elsewhere/r.csv
eq "--rejects PATH: the default file not written" 5 "$(wc -l <idemload-rejects.ndjson)"
eq "--rejects PATH: its rows there" 2 "$(wc -l <mine.ndjson)"
finish
