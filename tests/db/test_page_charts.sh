#!/usr/bin/env bash
# The --html page of an import, as headless Chromium renders it (SPEC.md
# "What a load revealed": "a chart of the figures per channel and kind; a
# chart of rows per hour ... with empty periods inside the range marked;
# ... a table of files with status, digest and time.  Charts are inline SVG
# drawn by idemload"): the DOM Chromium dumps is read back
# (tests/cli/html_check.py) and compared with what the test works out from
# the files itself (python below, sha256sum):
# - the figures chart: one bar group per (tenant, channel, kind), each bar's
#   title its figure (here every key new: "inserted N", N its keys);
# - the timeline: one band per channel, one bar per hour from the first to
#   the last hour of the run's valid rows (UTC), titled with its row count
#   (before deduplication), an empty hour a shaded "no rows" bar;
# - the files table: each file's status (skipped, ok, failed), its SHA-256
#   (none for the file that could not be read) and its time.
. "$(dirname "$0")/../lib.sh"

CHECK="python3 $SRC/tests/cli/html_check.py"
init_db page_charts
$GEN --rows 300 --seed 2871 --tenant-ids 1,2,3 --format csv --out a.csv --quiet
run import -d "$DB" --rejects a.rj a.csv
eq "a.csv loaded first" 0 $RC
# b.ndjson: tenants 51 and 52, two channels, an hour without rows in each,
# versions of one key (deduplicated, but counted per hour), a refund, a
# time with an offset (19:30+08:00 is 11:30 UTC), and a rejected row (in an
# hour of its own: not a valid row, so not charted).
r() { printf '{"tenant_id":%s,"channel":"%s","out_trade_no":"%s","callback_type":"%s","status":1,"payload":{"n":1},"received_at":"%s"}\n' "$@"; }
{
    r 51 wechat W1 pay 2026-11-28T10:05:00Z
    r 51 wechat W1 pay 2026-11-28T10:35:00Z
    r 51 wechat W2 pay 2026-11-28T10:59:59Z
    r 51 wechat W1 refund:R1 2026-11-28T19:30:00+08:00
    r 52 wechat W3 pay 2026-11-28T11:10:00Z
    r 52 wechat W4 pay 2026-11-28T13:00:00Z
    r 51 alipay A1 pay 2026-11-28T10:20:00Z
    r 51 alipay A2 pay 2026-11-28T14:00:00+00:00
    r 51 alipay A2 pay 2026-11-28T14:10:00Z
    r 52 alipay A3 pay 2026-11-28T14:45:00Z
    echo '{"tenant_id":"x","channel":"alipay","out_trade_no":"BAD","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-28T12:00:00Z"}'
} >b.ndjson
t0=$(date +%s%N)
run import -d "$DB" --rejects b.rj --report rep.json --html page.html a.csv b.ndjson missing.csv
t1=$(date +%s%N)
eq "exit 3 (missing.csv cannot be read)" 3 $RC
check "chromium rendered the page" $CHECK render page.html page.png page.dom
check "the screenshot is not blank" $CHECK png page.png
want_db=$(psql -X -At -d "$DB" -c "SELECT current_user || '@' || '$PGHOST' || ':' || current_setting('port') || '/' || current_database()")
check "the page names the database, user@host:port/dbname" grep -qF "<dd id=\"database\">$want_db</dd>" page.html
eq "the report names the table and the database" "payment_callback $want_db" \
    "$(python3 -c "import json; r=json.load(open('rep.json')); print(r['target'], r['database'])")"
$CHECK dom page.dom >page.json

# What the page must show, worked out from the files by the test.
python3 - "$SRC/tests" b.ndjson >want.json <<'PY'
import collections, json, sys, datetime
sys.path.insert(0, sys.argv[1])
from expected_merge import micros
rows = []
for line in open(sys.argv[2], encoding="utf-8"):
    o = json.loads(line)
    if isinstance(o["tenant_id"], int):
        rows.append(o)
keys = collections.defaultdict(set)
for o in rows:
    keys[(o["tenant_id"], o["channel"], o["callback_type"].split(":")[0])].add(
        (o["out_trade_no"], o["callback_type"]))
groups = {"tenant %d \u00b7 %s \u00b7 %s" % g: ["inserted %d" % len(k)] for g, k in keys.items()}
hour = lambda o: micros(o["received_at"]) // 3600000000
first, last = min(map(hour, rows)), max(map(hour, rows))
label = lambda h: datetime.datetime.fromtimestamp(h * 3600, datetime.timezone.utc).strftime("%Y-%m-%d %H:00")
bands = {}
for ch in sorted({o["channel"] for o in rows}):
    n = collections.Counter(hour(o) for o in rows if o["channel"] == ch)
    bands[ch] = ["%s: %d %s" % (label(h), n[h], "row" if n[h] == 1 else "rows") if n[h]
                 else "%s: no rows" % label(h)
                 for h in range(first, last + 1)]
print(json.dumps({"groups": groups, "bands": bands}, ensure_ascii=False))
PY
# What the rendered SVG holds, read the same way.
python3 - page.json >got.json <<'PY'
import json, re, sys
svgs = json.load(open(sys.argv[1], encoding="utf-8"))["svgs"]
groups, label = {}, None
for kind, words in svgs["figures per group"]:
    if kind == "text" and words.startswith("tenant "):
        label = words
        groups[label] = []
    elif kind == "rect" and label and words:
        groups[label].append(words)
bands, ch = {}, None
tl = [v for k, v in svgs.items() if k.startswith("rows per hour")]
for kind, words in (tl[0] if tl else []):
    if kind == "text" and not re.fullmatch(r"[0-9]+ rows?", words) and ":" not in words:
        ch = words
        bands[ch] = []
    elif kind in ("rect", "gap") and ch and words:
        if (kind == "gap") == words.endswith(": no rows"):
            bands[ch].append(words)
        else:
            bands[ch].append("MISMARKED " + words)
print(json.dumps({"groups": groups, "bands": bands}, ensure_ascii=False))
PY
field() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]], ensure_ascii=False, sort_keys=True))' "$1" "$2"; }
eq "figures chart: a bar group per tenant, channel and kind, each bar its figure" \
    "$(field want.json groups)" "$(field got.json groups)"
eq "timeline: a band per channel, each hour's bar its row count, empty hours shaded" \
    "$(field want.json bands)" "$(field got.json bands)"
check "timeline: the charted hours are 10:00 to 14:00 UTC" \
    jtrue got.json 'r["bands"]["wechat"][0].startswith("2026-11-28 10:00") and r["bands"]["wechat"][-1].startswith("2026-11-28 14:00")'

# The files table: status, digest, time.
python3 - page.json "$(sha256sum a.csv | cut -d' ' -f1)" "$(sha256sum b.ndjson | cut -d' ' -f1)" \
    "$(json rep.json 'r["elapsed_s"]')" "$(( (t1 - t0) / 1000000 ))" >files.check <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1], encoding="utf-8"))["tables"]["file-table"]
head, rows = [c.strip() for c in t[0]], t[1:]
col = {name: head.index(name) for name in ("file", "status", "SHA-256", "time", "read", "rejected")}
want = {"a.csv": ("skipped", sys.argv[2]), "b.ndjson": ("ok", sys.argv[3]),
        "missing.csv": ("failed", "not computed")}
run_s, wall_s = float(sys.argv[4]), int(sys.argv[5]) / 1000
total = 0.0
for name, (status, digest) in want.items():
    row = [r for r in rows if r[col["file"]].startswith(name)]
    if len(row) != 1:
        print(name, "WRONG: %d rows" % len(row)); continue
    row = [c.strip() for c in row[0]]
    m = re.fullmatch(r"(\d+\.\d\d) s|-", row[col["time"]])
    secs = float(m.group(1)) if m and m.group(1) else 0.0
    total += secs
    ok = row[col["status"]] == status and row[col["SHA-256"]] == digest and m is not None
    print(name, "ok" if ok else "WRONG: %r" % row)
b = [c.strip() for c in rows[[r[col["file"]].startswith("b.ndjson") for r in rows].index(True)]]
print("b counts", "ok" if (b[col["read"]], b[col["rejected"]]) == ("11", "1") else "WRONG: %r" % b)
print("times", "ok" if total <= run_s + 0.02 and run_s <= wall_s + 0.02 else
      "WRONG: files %.2f s, run %.2f s, wall %.2f s" % (total, run_s, wall_s))
PY
eq "files table: status and SHA-256 of each file, its time in seconds" \
    "a.csv ok|b.ndjson ok|missing.csv ok|b counts ok|times ok" "$(paste -sd'|' files.check)"
finish
