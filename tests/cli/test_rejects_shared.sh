#!/usr/bin/env bash
# One rejects file, many runs (SPEC.md "The side outputs are part of the
# load", "Any number of idemload processes may load ... at once"): the
# default rejects file is shared by every run started in one directory, and
# each run first mends the end a crash may have left.  That mending must
# never cut what a live run is writing: a long run and thirty short ones
# sharing the file end with every rejected row in it, each line one JSON
# object.  A last line that is a whole JSON object without its newline is
# completed, not removed; a fragment is removed.  All on validate (no
# server; import shares the writer, src/output/rejects.c).
. "$(dirname "$0")/../lib.sh"

# 60,000 rows of which 30,000 are bad, long enough to be written in many
# writes of 64 KiB while the short runs start.
python3 - <<'PY'
import json
with open("big.ndjson", "w") as f:
    for i in range(60000):
        if i % 2:
            f.write("{bad %d %s\n" % (i, "x" * 300))
        else:
            f.write(json.dumps({"tenant_id": 1, "channel": "c", "out_trade_no": "K%d" % i,
                                "callback_type": "pay", "payload": {"v": i},
                                "received_at": "2026-01-01T00:00:00Z"}) + "\n")
for j in range(30):
    open("one%02d.ndjson" % j, "w").write("{bad %d\n" % j)
PY
lost=0 rounds=3
for round in $(seq 1 $rounds); do
    rm -f idemload-rejects.ndjson
    "$IDEMLOAD" validate -q big.ndjson >/dev/null 2>big.err &
    big=$!
    for j in $(seq -w 0 29); do "$IDEMLOAD" validate -q "one$j.ndjson" >/dev/null 2>>short.err; done
    wait $big
    python3 - "$round" <<'PY' || lost=$((lost + 1))
import collections, json, sys
c = collections.Counter()
for n, line in enumerate(open("idemload-rejects.ndjson", encoding="utf-8"), 1):
    r = json.loads(line)
    c[(r["file"], r["line"])] += 1
big = sum(1 for k in c if k[0] == "big.ndjson")
short = sum(1 for k in c if k[0].startswith("one"))
once = all(v == 1 for v in c.values())
if big != 30000 or short != 30 or not once:
    print("round %s: big %d of 30000, short %d of 30, each once: %s" % (sys.argv[1], big, short, once),
          file=sys.stderr)
    sys.exit(1)
PY
done
eq "a long run and thirty short ones sharing the rejects file, $rounds rounds: every row in it, once" 0 $lost
check "no run took a live run's line for a torn one" test "$(grep -c torn short.err)" = 0

# The end of the file as a crash leaves it.
printf '{"file":"old.ndjson","line":1,"reason":"r","raw":"keep"}\n{"file":"old.ndjson","line":2,"reason":"r","raw":"whole, no newline"}' >whole.ndjson
printf '{"broken\n' >bad.ndjson
run validate --rejects whole.ndjson bad.ndjson
eq "a whole last line without its newline: exit 1 (the new reject)" 1 "$RC"
check "it is said" contains "$ERR" "had no newline; it is whole and was completed"
eq "three lines: the two kept, then the new one" 3 "$(wc -l <whole.ndjson)"
check "every line one JSON object, the completed one intact" python3 - <<'PY'
import json, sys
rows = [json.loads(l) for l in open("whole.ndjson")]
sys.exit(0 if [r.get("raw") for r in rows[:2]] == ["keep", "whole, no newline"] and rows[2]["file"] == "bad.ndjson" else 1)
PY
printf '{"file":"old.ndjson","line":1,"reason":"r","raw":"keep"}\n{"file":"old.ndjson","line":2,"rea' >torn.ndjson
run validate --rejects torn.ndjson bad.ndjson
check "a fragment: removed, and said" contains "$ERR" "removed a torn last line (34 bytes)"
eq "the line before it and the new one" 2 "$(wc -l <torn.ndjson)"
check "every line one JSON object" python3 -c 'import json; [json.loads(l) for l in open("torn.ndjson")]'
finish
