#!/usr/bin/env bash
# Reconciliation (SPEC.md "Reconciliation: what a statement revealed"): the
# figures per (tenant, channel, callback kind) in the JSON report and the
# summary, the --changes file (every row inserted, updated or stale, with
# its version before and after; a dry run writes the same lines as the real
# run; the lines of each action add up to its figure), and the --html page
# of an import and of a dry run, checked in headless Chromium.
. "$(dirname "$0")/../lib.sh"
pg_use

HDR='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
CHECK="python3 $SRC/tests/cli/html_check.py"
# groups_add_up REPORT: the groups' rows are the sum of their five figures,
# and the groups add up to the totals, figure by figure.
groups_add_up() {
    jtrue "$1" 'all(g["rows"] == sum(g[k] for k in ("inserted","updated","unchanged","stale","existing")) for g in r["groups"]) and all(sum(g[k] for g in r["groups"]) == r["totals"][k] for k in ("inserted","updated","unchanged","stale","existing"))'
}
# lines_add_up CHANGES REPORT: the lines of each action add up to its figure.
lines_add_up() {
    python3 - "$1" "$2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
t = json.load(open(sys.argv[2]))["totals"]
got = {a: sum(1 for l in lines if l["action"] == a) for a in ("inserted", "updated", "stale")}
sys.exit(0 if all(got[a] == t[a] for a in got) and len(lines) == sum(got.values()) else 1)
PY
}
# change CHANGES OUT_TRADE_NO: the line of that key, as "action before after".
change() {
    python3 - "$1" "$2" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["out_trade_no"] == sys.argv[2]:
        v = lambda x: "null" if x is None else "%s@%s" % (x["status"], x["received_at"])
        print(o["action"], v(o["before"]), v(o["after"]), o["line"], o["callback_type"])
PY
}
group() { json "$1" '" ".join("%s/%s/%s:%s=%s+%s+%s+%s+%s" % (g["tenant_id"], g["channel"], g["callback_kind"], g["rows"], g["inserted"], g["updated"], g["unchanged"], g["stale"], g["existing"]) for g in r["groups"])'; }

cat >base.csv <<CSV
$HDR
1,wechat,O1,pay,1,"{""a"":1}",2026-11-28T10:00:00Z
1,wechat,O2,pay,1,"{""a"":2}",2026-11-28T10:00:00Z
1,wechat,O3,refund:R1,1,"{""a"":3}",2026-11-28T10:00:00Z
1,wechat,O4,refund:R2,1,"{""a"":4}",2026-11-28T10:00:00Z
2,alipay,A1,pay,1,"{""b"":1}",2026-11-28T18:00:00+08:00
CSV
# The nightly file: O1 newer (updated), O2 older (stale), O3 the same
# (unchanged), O5 new (inserted), A1 older but final (updated: its status
# becomes final, received_at stays), a bad row, and O5 twice (deduplicated).
cat >next.csv <<CSV
$HDR
1,wechat,O1,pay,2,"{""a"":11}",2026-11-28T11:00:00.250Z
1,wechat,O2,pay,1,"{""a"":0}",2026-11-28T09:00:00Z
1,wechat,O3,refund:R1,1,"{""a"":3}",2026-11-28T10:00:00Z
1,wechat,O5,pay,0,"{""a"":5}",2026-11-28T11:00:00Z
1,wechat,O5,pay,1,"{""a"":5}",2026-11-28T12:00:00Z
2,alipay,A1,pay,2,"{""b"":0}",2026-11-28T09:00:00Z
x,wechat,BAD,pay,1,"{}",2026-11-28T10:00:00Z
CSV

# =====================================================================
# 1. A first load: every row inserted, groups by kind (refunds together)
# =====================================================================
new_db rec; run init -d "$DB"; eq "init" 0 $RC
run import -d "$DB" --rejects rj.ndjson --report base.json --changes base.ndjson base.csv
eq "base: exit 0" 0 $RC
eq "base: groups per tenant, channel and kind" \
    "1/wechat/pay:2=2+0+0+0+0 1/wechat/refund:2=2+0+0+0+0 2/alipay/pay:1=1+0+0+0+0" "$(group base.json)"
check "base: groups add up to the totals" groups_add_up base.json
check "base: one line per inserted row" lines_add_up base.ndjson base.json
eq "base: an inserted line: no version before, the row after" \
    "inserted null 1@2026-11-28T10:00:00.000000Z 4 refund:R1" "$(change base.ndjson O3)"
eq "base: received_at after in UTC" "inserted null 1@2026-11-28T10:00:00.000000Z 6 pay" "$(change base.ndjson A1)"
check "base: the summary shows the figures per channel and kind" \
    grep -q "wechat refund: rows 2, inserted 2, updated 0, unchanged 0, stale 0, existing 0" "$ERR"
check "base: the report's group keys" jtrue base.json \
    'list(r["groups"][0].keys()) == ["tenant_id","channel","callback_kind","rows","inserted","updated","unchanged","stale","existing"]'

# =====================================================================
# 2. The nightly file: dry run, then the real run, both with --changes
# =====================================================================
before=$(q "SELECT string_agg(concat_ws('|', id, xmin, status), ',' ORDER BY id) FROM payment_callback")
run import -d "$DB" --dry-run --rejects rj.ndjson --report dry.json --changes dry.ndjson --html dry.html next.csv
eq "dry run: exit 1 (a row rejected)" 1 $RC
eq "dry run: the table is untouched" "$before" \
    "$(q "SELECT string_agg(concat_ws('|', id, xmin, status), ',' ORDER BY id) FROM payment_callback")"
run import -d "$DB" --jobs 3 --rejects rj.ndjson --report real.json --changes real.ndjson --html real.html next.csv
eq "real run: exit 1 (a row rejected)" 1 $RC
eq "real run: figures" "1 2 1 1 0" "$(json real.json '" ".join(str(r["totals"][k]) for k in ("inserted","updated","unchanged","stale","existing"))')"
check "dry run and real run (3 lanes) write the same lines" cmp dry.ndjson real.ndjson
eq "dry run and real run: the same groups" "$(group dry.json)" "$(group real.json)"
eq "real: groups" "1/wechat/pay:3=1+1+0+1+0 1/wechat/refund:1=0+0+1+0+0 2/alipay/pay:1=0+1+0+0+0" "$(group real.json)"
check "real: groups add up to the totals" groups_add_up real.json
check "real: the lines of each action add up to its figure" lines_add_up real.ndjson real.json
check "dry: the lines of each action add up to its figure" lines_add_up dry.ndjson dry.json
eq "updated: the version before and after" \
    "updated 1@2026-11-28T10:00:00.000000Z 2@2026-11-28T11:00:00.250000Z 2 pay" "$(change real.ndjson O1)"
eq "stale: the newer active version, and the incoming one that lost" \
    "stale 1@2026-11-28T10:00:00.000000Z 1@2026-11-28T09:00:00.000000Z 3 pay" "$(change real.ndjson O2)"
eq "inserted: the kept row of its chunk" "inserted null 1@2026-11-28T12:00:00.000000Z 6 pay" "$(change real.ndjson O5)"
eq "updated by an older final version: status final, received_at kept" \
    "updated 1@2026-11-28T10:00:00.000000Z 2@2026-11-28T10:00:00.000000Z 7 pay" "$(change real.ndjson A1)"
eq "unchanged rows make no line" "" "$(change real.ndjson O3)"
eq "the table agrees with the lines after (A1, O1)" "2|2026-11-28 10:00:00+00 2|2026-11-28 11:00:00.25+00" \
    "$(q "SELECT string_agg(status || '|' || (received_at AT TIME ZONE 'UTC')::text || '+00', ' ' ORDER BY out_trade_no) FROM payment_callback WHERE out_trade_no IN ('O1', 'A1') AND deleted_at IS NULL")"
# Again: nothing written; the older versions are stale again (A1's final
# status is now the table's), and only they make lines.
run import -d "$DB" --force --rejects rj.ndjson --report again.json --changes again.ndjson next.csv
eq "again: nothing inserted or updated" "0 0 3 2" "$(json again.json '" ".join(str(r["totals"][k]) for k in ("inserted","updated","unchanged","stale"))')"
eq "again: only the stale lines" "O2 stale A1 stale" \
    "$(python3 -c "import json; print(' '.join(o['out_trade_no'] + ' ' + o['action'] for o in map(json.loads, open('again.ndjson'))))")"
check "again: groups add up" groups_add_up again.json

# =====================================================================
# 3. Small chunks, lanes and the merge path do not change the outcome
# =====================================================================
# --chunk-rows 2: O5's two versions fall in two chunks (inserted, then
# updated).  Without --changes the first chunk inserts, so the next merges
# without the probe, and the row it turns away (O2) is classified after.
new_db rec2; run init -d "$DB"; eq "init" 0 $RC
run import -d "$DB" --rejects rj.ndjson base.csv; eq "rec2 base: exit 0" 0 $RC
{ echo "$HDR"; echo '1,wechat,N1,pay,1,"{}",2026-11-28T10:00:00Z'; echo '1,wechat,N2,pay,1,"{}",2026-11-28T10:00:00Z'; tail -n +2 next.csv; } >next2.csv
run import -d "$DB" --dry-run --chunk-rows 2 --rejects rj.ndjson --report sdry.json --changes sdry.ndjson next2.csv
run import -d "$DB" --chunk-rows 2 --jobs 2 --rejects rj.ndjson --report small.json --changes small.ndjson next2.csv
eq "chunk-rows 2: groups" "1/wechat/pay:6=3+2+0+1+0 1/wechat/refund:1=0+0+1+0+0 2/alipay/pay:1=0+1+0+0+0" "$(group small.json)"
check "chunk-rows 2: the dry run wrote the same lines" cmp sdry.ndjson small.ndjson
eq "chunk-rows 2: O5 inserted by one chunk, updated by the next" \
    "inserted null 0@2026-11-28T11:00:00.000000Z 7 pay|updated 0@2026-11-28T11:00:00.000000Z 1@2026-11-28T12:00:00.000000Z 8 pay" \
    "$(change small.ndjson O5 | paste -sd'|')"
check "chunk-rows 2: groups add up to the totals" groups_add_up small.json
check "chunk-rows 2: lines add up" lines_add_up small.ndjson small.json
eq "chunk-rows 2: the stale row" \
    "stale 1@2026-11-28T10:00:00.000000Z 1@2026-11-28T09:00:00.000000Z 5 pay" "$(change small.ndjson O2)"
# Without --changes (the cheap path): the same groups.
new_db rec3; run init -d "$DB"; run import -d "$DB" --rejects rj.ndjson base.csv
run import -d "$DB" --chunk-rows 2 --rejects rj.ndjson --report plain.json next2.csv
eq "without --changes: the same groups" "$(group small.json)" "$(group plain.json)"
check "without --changes: groups add up" groups_add_up plain.json
# Several files: groups over all of them add up to the totals.
new_db rec4; run init -d "$DB"
run import -d "$DB" --rejects rj.ndjson --report two.json --changes two.ndjson base.csv next.csv
check "two files: groups add up to the totals" groups_add_up two.json
check "two files: lines add up" lines_add_up two.ndjson two.json
eq "two files: each line names its file" "['base.csv', 'next.csv']" \
    "$(python3 -c "import json; print(sorted({json.loads(l)['file'] for l in open('two.ndjson')}))")"

# =====================================================================
# 4. --on-conflict nothing: the first write wins; lines for inserts only
# =====================================================================
new_db rec5; run init -d "$DB"; run import -d "$DB" --on-conflict nothing --rejects rj.ndjson base.csv
run import -d "$DB" --on-conflict nothing --rejects rj.ndjson --report nothing.json --changes nothing.ndjson next.csv
eq "nothing: groups" "1/wechat/pay:3=1+0+0+0+2 1/wechat/refund:1=0+0+0+0+1 2/alipay/pay:1=0+0+0+0+1" "$(group nothing.json)"
check "nothing: groups add up" groups_add_up nothing.json
check "nothing: lines add up" lines_add_up nothing.ndjson nothing.json
eq "nothing: the inserted row (the first of its chunk)" "inserted null 0@2026-11-28T11:00:00.000000Z 5 pay" "$(change nothing.ndjson O5)"

# =====================================================================
# 5. The page of an import and of a dry run, in a browser
# =====================================================================
# page NAME: renders NAME.html; the DOM's facts in NAME.page.json.
page() {
    if ! $CHECK render "$1.html" "$1.png" "$1.dom"; then fail "$1: chromium rendered the page"; return 1; fi
    check "$1: the screenshot is not blank" $CHECK png "$1.png"
    $CHECK dom "$1.dom" >"$1.page.json"
    check "$1: no script, no image, no URL" \
        jtrue "$1.page.json" '"script" not in r["tags"] and "img" not in r["tags"] and r["urls"] == []'
}
# same_figures REPORT PAGE: tiles and the group table hold the report's figures.
same_figures() {
    python3 - "$1" "$2" <<'PY'
import json, sys
rep, page = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
t = rep["totals"]
ok = all(page["tiles"][k] == t[k] for k in ("inserted", "updated", "unchanged", "stale", "existing"))
ok = ok and page["tiles"]["read"] == t["rows_read"] and page["tiles"]["rejected"] == t["rows_rejected"]
rows = [[c.strip() for c in row] for row in page["tables"]["group-table"][1:]]
want = [[str(g["tenant_id"]), g["channel"], g["callback_kind"]] + [str(g[k]) for k in ("rows", "inserted", "updated", "unchanged", "stale", "existing")] for g in rep["groups"]]
ok = ok and rows == want
if not ok:
    print("tiles", page["tiles"], "totals", t, "rows", rows, "want", want)
sys.exit(0 if ok else 1)
PY
}
for p in dry real; do
    if page $p; then
        check "$p page: tiles and groups are the report's" same_figures $p.json $p.page.json
        check "$p page: the target and the mode" jtrue $p.page.json \
            '"payment_callback" in r["text"] and ("dry run" in r["text"]) == ("'$p'" == "dry")'
    fi
done

# Hostile keys and channel in an import: shown as text, nothing runs.
X='</script><img src=x onerror=alert(1)>'
printf '%s\n' \
 '{"tenant_id":1,"channel":"</script><img src=x onerror=alert(1)>","out_trade_no":"</script><img src=x onerror=alert(1)>","callback_type":"</script><img src=x onerror=alert(1)>:1","status":1,"payload":{"m":"</script><img src=x onerror=alert(1)>"},"received_at":"2026-11-28T10:00:00Z"}' \
 '{"tenant_id":1,"channel":"wechat","out_trade_no":"K","callback_type":"pay","status":"</script><img src=x onerror=alert(1)>","payload":{},"received_at":"2026-11-28T10:00:00Z"}' >hostile.ndjson
new_db rec6; run init -d "$DB"
run import -d "$DB" --rejects rj6.ndjson --report hostile.json --changes hostile.ndjson.out --html hostile.html hostile.ndjson
eq "hostile: exit 1" 1 $RC
eq "hostile: the group's channel as written" "$X" "$(json hostile.json 'r["groups"][0]["channel"]')"
if page hostile; then
    check "hostile: channel and kind shown as text in the group table" jtrue hostile.page.json \
        'r["tables"]["group-table"][1][1] == "'"$X"'" and r["tables"]["group-table"][1][2] == "'"$X"'"'
    check "hostile: the rejected raw text shown as text" jtrue hostile.page.json \
        'r["text"].count("</script><img src=x onerror=alert(1)>") >= 3'
fi

# Zero rows, and every row rejected: valid pages, empty changes files.
: >empty.ndjson
run import -d "$DB" --rejects rj6.ndjson --report empty.json --changes empty.out --html empty.html empty.ndjson
eq "zero rows: exit 0" 0 $RC
check "zero rows: no groups, an empty changes file" jtrue empty.json 'r["groups"] == []'
check "zero rows: the changes file is empty" test -f empty.out -a ! -s empty.out
if page empty; then
    check "zero rows: tiles at 0, nothing charted" jtrue empty.page.json \
        'r["tiles"]["read"] == 0 and r["tiles"]["inserted"] == 0 and "No row reached the merge" in r["text"] and "No valid row" in r["text"]'
fi
printf '%s\n' '{"tenant_id":"x"}' 'not json' >allbad.ndjson
run import -d "$DB" --dry-run --rejects rj6.ndjson --report allbad.json --changes allbad.out --html allbad.html allbad.ndjson
eq "all rejected (dry run): exit 1" 1 $RC
if page allbad; then
    check "all rejected: 2 rejected, nothing merged, reasons listed" jtrue allbad.page.json \
        'r["tiles"]["rejected"] == 2 and r["tiles"]["inserted"] == 0 and "No row reached the merge" in r["text"] and sum(int(row[1]) for row in r["tables"]["reject-table"][1:]) == 2'
fi
# Usage: --changes is import's, and shares standard output with nothing.
run validate --changes c.ndjson base.csv
eq "validate --changes: exit 2" 2 $RC
run import -d "host=/nonexistent" --changes - --report - base.csv
eq "--changes - with --report -: exit 2, before connecting" 2 $RC
check "--changes - with --report -: says so" contains "$ERR" "cannot share standard output"
run import -d "$DB" --dry-run --rejects rj6.ndjson --changes - base.csv
eq "--changes -: the lines on standard output" 5 "$(grep -c '"action":"inserted"' "$OUT")"
# A changes file that cannot be created: exit 3 before anything is loaded.
run import -d "$DB" --rejects rj6.ndjson --changes /nonexistent/dir/c.ndjson base.csv
eq "unwritable --changes: exit 3" 3 $RC
check "unwritable --changes: says so" contains "$ERR" "cannot write --changes '/nonexistent/dir/c.ndjson': its directory does not exist"
eq "unwritable --changes: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback WHERE channel = 'alipay'")"

finish
