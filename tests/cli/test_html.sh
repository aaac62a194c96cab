#!/usr/bin/env bash
# `--html` of validate, checked in a real browser: headless Chromium renders
# the page to a PNG that must not be blank, and the DOM it dumps must hold the
# run's figures, the rejects by reason, the files, the holes of the timeline,
# and every hostile text from the data as text (no element made of it).
# Import and dry run pages: tests/db/test_reconciliation.sh.
. "$(dirname "$0")/../lib.sh"

CHECK="python3 $SRC/tests/cli/html_check.py"
# page NAME: renders NAME.html to NAME.png and NAME.dom, facts in NAME.json.
page() {
    if ! $CHECK render "$1.html" "$1.png" "$1.dom"; then
        fail "$1: chromium rendered the page"
        return 1
    fi
    check "$1: the screenshot is not blank" $CHECK png "$1.png"
    $CHECK dom "$1.dom" >"$1.json"
    check "$1: no script, no image, no URL: nothing runs or is fetched" \
        jtrue "$1.json" '"script" not in r["tags"] and "img" not in r["tags"] and r["urls"] == []'
}

# --- the samples: figures, rejects, files
S=$SRC/samples
run validate --rejects rj.ndjson --report rep.json --html samples.html \
    "$S/statements-wechat-2026-11-28.csv.gz" "$S/statements-alipay-2026-11-28.ndjson" \
    "$S/statements-mixed-2026-11-29.ndjson.gz"
eq "samples: exit 1 (some rows rejected)" 1 $RC
if page samples; then
    for f in rows_read:read rows_rejected:rejected rows_deduplicated:deduplicated chunks:chunks; do
        eq "samples: tile ${f#*:} is the report's ${f%:*}" \
            "$(json rep.json "r['totals']['${f%:*}']")" "$(json samples.json "r['tiles']['${f#*:}']")"
    done
    eq "samples: tile 'would merge'" \
        "$(json rep.json "r['totals']['rows_read'] - r['totals']['rows_rejected'] - r['totals']['rows_deduplicated']")" \
        "$(json samples.json "r['tiles']['merge']")"
    check "samples: exit status shown" jtrue samples.json '"exit status" in r["text"] and "some rows were rejected" in r["text"]'
    check "samples: every file in the files table" jtrue samples.json \
        'all(any(row[0].startswith(p) for row in r["tables"]["file-table"]) for p in ["'"$S"'/statements-wechat-2026-11-28.csv.gz", "'"$S"'/statements-alipay-2026-11-28.ndjson", "'"$S"'/statements-mixed-2026-11-29.ndjson.gz"])'
    check "samples: rejects by reason add up to the rejected rows" jtrue samples.json \
        "sum(int(row[1]) for row in r['tables']['reject-table'][1:]) == $(json rep.json "r['totals']['rows_rejected']")"
    check "samples: a reject example shows its file:line and raw text" jtrue samples.json \
        '"statements-wechat-2026-11-28.csv.gz:9" in r["text"] and "WX2026112800010000" in r["text"]'
    check "samples: a reason's quoted value is not its group" jtrue samples.json \
        'any(row[0].startswith("tenant_id is not an integer") and "abc" not in row[0] for row in r["tables"]["reject-table"])'
    check "samples: the timeline charts each channel" jtrue samples.json \
        'r["ids"].get("timeline") == "section" and all(c in r["text"] for c in ["wechat", "alipay", "paypal"])'
fi

# --- holes: rows of one channel at 10:00 and 13:00: 11:00 and 12:00 are empty
cat >hole.ndjson <<'J'
{"tenant_id":1,"channel":"wechat","out_trade_no":"A","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-28T10:15:00Z"}
{"tenant_id":1,"channel":"wechat","out_trade_no":"B","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-28T13:59:59+00:00"}
{"tenant_id":1,"channel":"wechat","out_trade_no":"C","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-28T21:30:00+08:00"}
J
run validate --rejects rj2.ndjson --html hole.html hole.ndjson
eq "hole: exit 0" 0 $RC
if page hole; then
    check "hole: per hour, 11:00 to 13:00 empty (two hours)" jtrue hole.json \
        '"Rows per hour" in r["text"] and "wechat: 2 empty hours: 2026-11-28 11:00 – 2026-11-28 13:00" in r["text"]'
fi
# Long range: per day, with an empty day.
: >days.ndjson
for d in 01 02 03 05 06 07 08 09 10; do
    echo '{"tenant_id":1,"channel":"alipay","out_trade_no":"D'$d'","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-'$d'T12:00:00Z"}' >>days.ndjson
done
run validate --rejects rj3.ndjson --html days.html days.ndjson
if page days; then
    check "days: per day, 2026-11-04 empty" jtrue days.json \
        '"Rows per day" in r["text"] and "alipay: 1 empty day: 2026-11-04" in r["text"] and "2026-11-04 – 2026-11-05" not in r["text"]'
fi
check "validate's page says what its exit 0 means (not 'loaded')" grep -qF 'every row of every file is valid' days.html
# Two empty days in a row: the span names its last empty day, not the next
# one (which has rows).
grep -v '"D05"' days.ndjson >days2.ndjson
run validate --rejects rj3.ndjson --html days2.html days2.ndjson
if page days2; then
    check "days: 2026-11-04 and -05 empty, said as 2026-11-04 – 2026-11-05" jtrue days2.json \
        '"alipay: 2 empty days: 2026-11-04 – 2026-11-05" in r["text"]'
fi

# --- hostile text in a file name, a channel and a rejected row's raw text
X='</script><img src=x onerror=alert(1)>'
HF="x<img src=x onerror=alert(1)>.ndjson"
printf '%s\n' \
 '{"tenant_id":1,"channel":"</script><img src=x onerror=alert(1)>","out_trade_no":"</script><img src=x onerror=alert(1)>","callback_type":"pay","status":1,"payload":{"memo":"</script><img src=x onerror=alert(1)>"},"received_at":"2026-11-28T10:00:00Z"}' \
 '{"tenant_id":1,"channel":"wechat","out_trade_no":"K","callback_type":"pay","status":"</script><img src=x onerror=alert(1)>","payload":{},"received_at":"2026-11-28T10:00:00Z"}' >"$HF"
run validate --rejects rj4.ndjson --html hostile.html "$HF"
eq "hostile: exit 1" 1 $RC
check "hostile: the raw page holds no tag made of data" test "$(grep -c '<img' hostile.html)" -eq 0
if page hostile; then
    python3 - "$X" "$HF" hostile.json <<'PY' && ok "hostile: channel, raw text and file name shown as text" || fail "hostile: shown as text"
import json, sys
x, hf, facts = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
t = facts["text"]
sys.exit(0 if t.count(x) >= 2 and hf in t else 1)
PY
fi

# A line break in a file name is shown as its code, as in the summary
# (README: control characters as their codes on the page too): the name
# must not read as two words; a rejected row's own line breaks stay.
NL=$'nl\nname.ndjson'
printf '%s\n' '{"tenant_id":"x"}' >"$NL"
run validate --rejects rj8.ndjson --html nl.html "$NL"
check "a file name's line break is shown as \\u000A" grep -qF 'nl\u000Aname.ndjson' nl.html
check "and not as a raw line break" test "$(grep -c '^name.ndjson' nl.html)" -eq 0

# --- zero rows, and every row rejected: still a valid page
: >empty.ndjson
run validate --rejects rj5.ndjson --html empty.html empty.ndjson
eq "zero rows: exit 0" 0 $RC
if page empty; then
    check "zero rows: tiles at 0, nothing to chart, no rejects" jtrue empty.json \
        'r["tiles"]["read"] == 0 and r["tiles"]["merge"] == 0 and "No valid row" in r["text"] and "No row was rejected" in r["text"]'
fi
printf '%s\n' '{"tenant_id":"x"}' '{"tenant_id":1}' 'not json' >allbad.ndjson
run validate --rejects rj6.ndjson --html allbad.html allbad.ndjson
eq "all rejected: exit 1" 1 $RC
if page allbad; then
    check "all rejected: 3 rejected, nothing to merge, the reasons listed" jtrue allbad.json \
        'r["tiles"]["rejected"] == 3 and r["tiles"]["merge"] == 0 and "No valid row" in r["text"] and sum(int(row[1]) for row in r["tables"]["reject-table"][1:]) == 3'
fi

# --- a page that cannot be written: exit 3 before anything is read (not
# after the run, when an import would have committed), the summary still there
run validate --rejects rj7.ndjson --html /nonexistent/dir/p.html hole.ndjson
eq "unwritable --html: exit 3" 3 $RC
check "unwritable --html: says so, and why" contains "$ERR" \
    "cannot write --html '/nonexistent/dir/p.html': its directory does not exist; nothing was read or loaded"
check "unwritable --html: summary printed, the file not started" contains "$ERR" "failed: not started: cannot write --html"
run validate --help
check "validate --help lists --html" contains "$OUT" "--html PATH"

# --- a profile's skipped rows are a figure, and "would merge" leaves them out
run validate -q --rejects rjs.ndjson --report stripe-rep.json --html stripe.html --profile stripe-balance \
    --set tenant_id=1 "$S/bill-stripe-balance-2024-05-01.csv"
if page stripe; then
    eq "stripe: the skipped tile is the report's rows_skipped" \
        "$(json stripe-rep.json "r['totals']['rows_skipped']")" "$(json stripe.json "r['tiles'].get('skipped')")"
    eq "stripe: would merge = read - rejected - skipped - deduplicated" \
        "$(json stripe-rep.json "r['totals']['rows_read'] - r['totals']['rows_rejected'] - r['totals']['rows_skipped'] - r['totals']['rows_deduplicated']")" \
        "$(json stripe.json "r['tiles']['merge']")"
fi

# --- long names on a phone: the charts scale, a long key wraps, a chart's
# label is cut with an ellipsis and whole in its tooltip
long=quickpass-merchant-settlement-eu-west-1
{ echo 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
  echo "1,$long,K1,pay,1,\"{}\",2026-11-28T10:00:00Z"; } >long.csv
run validate -q --rejects rjl.ndjson --html long.html long.csv
# (cut to the width it has, as the page's font draws it: tests/db/test_page_layout.sh)
check "long: the timeline's label is cut" grep -qE '>quickpass-me[a-z-]*…</text>' long.html
check "long: the whole name is its tooltip" grep -q "<g><title>$long</title>" long.html
check "long: charts no wider than the screen, tables wrap" grep -q 'svg{max-width:100%;height:auto}section{overflow-x:auto}td{overflow-wrap:anywhere}' long.html

# --- names that differ only in bytes that are not UTF-8 stay two on the
# page, written as the summary writes them (\xHH), not both as U+FFFD
for b in FE FF; do
    cp long.csv "$(printf "f\x$b.csv")"
done
run validate -q --rejects rjb.ndjson --html bytes.html "$(printf 'f\xFE.csv')" "$(printf 'f\xFF.csv')"
check "bytes: the first name as f\\xFE.csv" grep -qF 'f\xFE.csv' bytes.html
check "bytes: the second as f\\xFF.csv" grep -qF 'f\xFF.csv' bytes.html
check "bytes: no replacement character" test "$(grep -c "$(printf '\xef\xbf\xbd')" bytes.html)" = 0

# --- past 23 channels the rest share one band: the page says their own
# holes are not checked (c24 has none at 01:00, hidden by c23's row)
python3 -c "
print('tenant_id,channel,out_trade_no,callback_type,status,payload,received_at')
for c in range(25):
    for h in range(3):
        if c != 24 or h != 1:
            print('1,c%02d,K%d_%d,pay,1,\"{}\",2026-11-28T%02d:00:00Z' % (c, c, h, h))
" >many.csv
run validate -q --rejects rjm.ndjson --html many.html many.csv
check "many channels: the lumped band is named" grep -q '(other channels)' many.html
check "many channels: the page says their holes are not checked" grep -q 'id="channels-lumped"' many.html
run validate -q --rejects rjm.ndjson --html few.html long.csv
check "few channels: no such note" test "$(grep -c 'channels-lumped' few.html)" = 0

finish
