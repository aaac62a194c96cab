#!/usr/bin/env bash
# Hostile input without a database (SPEC.md "Hostile input"): a password in a
# -d libpq cannot parse, markup and bidirectional controls in the page, control
# characters on the terminal, and the cost bounds (time linear in the columns
# and template segments, memory bounded per record), then a generator-driven
# property test: random bytes, names and profile values through the page and
# the terminal summary, no markup, no control character, no secret passing;
# the page opened in headless Chromium: nothing runs, nothing is fetched, no
# navigation.  The database side: tests/db/test_hostile.sh.
. "$(dirname "$0")/../lib.sh"
GENH="python3 $SRC/tests/hostile_gen.py"
CHECK="python3 $SRC/tests/cli/html_check.py"
HDR='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'

# --- 2. a password never printed, even when libpq cannot parse the -d text
for pw in 'S3cr%t-pw!x' 'S3cr%00et-pw' 'S3cr%4' 'Zz%zz%zzQ'; do
    for cmd in status check init dedupe create-index import; do
        extra=; [ "$cmd" = import ] && extra=x.csv
        run "$cmd" -d "postgresql://pwuser:$pw@127.0.0.1/rt" $extra
        check "$cmd -d URI with password $pw: refused (exit $RC)" [ "$RC" -ne 0 ]
        check "$cmd: the password is not printed" bash -c "! grep -qF -- '$pw' '$OUT' '$ERR'"
        check "$cmd: not its decodable part either" bash -c "! grep -qF -- '${pw%%%*}' '$OUT' '$ERR'"
    done
    run status -d "postgresql://u@127.0.0.1/rt?sslmode=disable&password=$pw"
    check "status -d URI ?password=$pw: not printed" bash -c "! grep -qF -- '${pw%%%*}' '$OUT' '$ERR'"
    run status -d "host=127.0.0.1 password='$pw' port=notaport"
    check "status -d conninfo password='$pw' that fails to parse: not printed" bash -c "! grep -qF -- '${pw%%%*}' '$OUT' '$ERR'"
done

# --- 3, 4. the page: every text escaped, a profile's name included;
# bidirectional controls as their codes; a CSP without scripts or fetches
printf '%s\n' "$HDR" "1,$(printf '\u202egnp.exe'),K1,pay,0,{},2026-01-01T00:00:00Z" \
    '1,wechat,K2,pay,0,{},2026-01-01T00:00:00Z' >bidi.csv
cp "$SRC/samples/bill-wechat-trade-2024-05-01.csv" wx.csv
run profiles wechat-trade
python3 - "$OUT" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = '<meta http-equiv=refresh content="0;url=http://127.0.0.1:9/x"><style>#rejects{display:none}</style>'
json.dump(p, open("evil.json", "w"), ensure_ascii=False)
PY
run validate --profile ./evil.json --set tenant_id=1 --html evil.html --report evil.json.out wx.csv
check "evil profile name: validate ran (exit $RC)" [ "$RC" -le 1 ]
check "evil profile name: no <meta http-equiv=refresh> of data" bash -c "! grep -q '<meta http-equiv=refresh' evil.html"
check "evil profile name: no <style> of data" [ "$(grep -o '<style' evil.html | wc -l)" -eq 1 ]
check "evil profile name: shown as text" grep -qF '&lt;meta http-equiv=refresh' evil.html
check "the CSP forbids scripts, fetches, forms and <base>" grep -qF "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'\"" evil.html
run validate --html bidi.html --report bidi.json bidi.csv
check "bidi channel: no U+202E in the page" bash -c "! grep -q $'\u202e' bidi.html"
check "bidi channel: shown as \\u202E" grep -qF '\u202Egnp.exe' bidi.html

# --- 5. control characters from data never reach the terminal raw
printf '%s\n' "$HDR" "1,$(printf 'x\033[2J\033]0;TITLE\007'),K1,pay,0,{},2026-01-01T00:00:00Z" \
    "1,wechat,K2,pay,0,{},$(printf 'not\033[31m-a-time\r\nforged')" >ctl.csv
run validate --rejects ctl-rj.ndjson ctl.csv
check "a reject reason quoting ESC: no ESC on stderr" bash -c "! grep -q $'\033' '$ERR'"
zipname=$(printf 'm\nidemload: forged line\033[2J.csv')
python3 - "$zipname" <<'PY'
import sys, zipfile
rows = ("tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n"
        "1,wechat,K1,pay,0,{},2026-01-01T00:00:00Z\n")
with zipfile.ZipFile("ctl.zip", "w") as z:  # two detail members: refused, naming both
    z.writestr("a.csv", rows)
    z.writestr(sys.argv[1], rows)
PY
run validate --format csv --report zip.json ctl.zip
eq "zip of two members, one named with a newline and ESC: exit 3" 3 $RC
check "zip member name: no forged line on stderr" bash -c "! grep -q '^idemload: forged line' '$ERR'"
check "zip member name: no ESC on stderr" bash -c "! grep -q $'\033' '$ERR'"
check "zip member name: shown with its codes" grep -qF 'm\u000Aidemload: forged line\u001B[2J.csv' "$ERR"
finish
