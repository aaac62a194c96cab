#!/usr/bin/env bash
# Keys as exports write them (issue 12; SPEC.md "Validation", first rule):
# Unicode white space (U+3000, U+00A0, U+2003, ...) and the invisible U+200B,
# U+FEFF around a key text are trimmed, so '　ORD1　' and 'ORD1' are one key
# and a key of only such characters is rejected; inside a key they are kept.
# The eight rows of the issue go through `validate` (CSV, NDJSON with the
# characters raw and as \u escapes) and `import` (CSV, NDJSON); then the
# other key columns, tenant_id, and --set values.
. "$(dirname "$0")/../lib.sh"

IDEO=$'\xe3\x80\x80'   # U+3000 ideographic space
NBSP=$'\xc2\xa0'       # U+00A0 no-break space
ZWSP=$'\xe2\x80\x8b'   # U+200B zero width space
BOM=$'\xef\xbb\xbf'    # U+FEFF zero width no-break space
EMSP=$'\xe2\x80\x83'   # U+2003 em space
LSEP=$'\xe2\x80\xa8'   # U+2028 line separator
WJ=$'\xe2\x81\xa0'     # U+2060 word joiner

# The issue's eight rows: three blank keys, then five rows of four keys, the
# second ORD1 (around U+3000, later received_at) winning over the first.
# Fields: tenant_id channel out_trade_no callback_type status payload received_at
eight() {
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        1 wechat "$IDEO" pay 1 '{"r":1}' 2026-11-28T10:00:00Z \
        1 wechat "$NBSP" pay 1 '{"r":2}' 2026-11-28T10:00:00Z \
        1 wechat "$ZWSP$BOM" pay 1 '{"r":3}' 2026-11-28T10:00:00Z \
        1 wechat "ORD1" pay 1 '{"r":4}' 2026-11-28T10:00:00Z \
        1 wechat "${IDEO}ORD1$IDEO" pay 2 '{"r":5}' 2026-11-28T11:00:00Z \
        1 wechat "${NBSP}ORD2$EMSP" pay 1 '{"r":6}' 2026-11-28T10:00:00Z \
        1 wechat "${ZWSP}ORD3$BOM" pay 1 '{"r":7}' 2026-11-28T10:00:00Z \
        1 wechat "ORD${IDEO}4" pay 1 '{"r":8}' 2026-11-28T10:00:00Z
}
# to_csv / to_ndjson [ascii]: the tab-separated rows above as a statement
# file (NDJSON with non-ASCII raw, or as \u escapes when given "ascii").
to_csv() {
    python3 -c '
import csv, sys
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["tenant_id","channel","out_trade_no","callback_type","status","payload","received_at"])
for line in sys.stdin.buffer.read().decode("utf-8").split("\n")[:-1]:  # not splitlines: it breaks at U+2028
    w.writerow(line.split("\t"))'
}
to_ndjson() {
    python3 -c '
import json, sys
cols = ["tenant_id","channel","out_trade_no","callback_type","status","payload","received_at"]
out = sys.stdout.buffer
for line in sys.stdin.buffer.read().decode("utf-8").split("\n")[:-1]:  # not splitlines: it breaks at U+2028
    r = dict(zip(cols, line.split("\t")))
    r["payload"] = json.loads(r["payload"])
    out.write(json.dumps(r, ensure_ascii=(sys.argv[1] == "ascii")).encode("utf-8") + b"\n")' "${1:-raw}"
}
eight | to_csv >eight.csv
eight | to_ndjson >eight.ndjson
eight | to_ndjson ascii >eight_escaped.ndjson
check "the CSV holds U+3000 as written" grep -q "${IDEO}ORD1$IDEO" eight.csv
check "the escaped NDJSON holds \\u3000, no raw U+3000" \
    bash -c "grep -q '\\\\u3000ORD1' eight_escaped.ndjson && ! grep -q '$IDEO' eight_escaped.ndjson"

totals() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_rejected","rows_deduplicated"))'; }
# rejected FILE: "line:reason" of each reject, one per line.
rejected() { python3 -c 'import json,sys; [print("%d:%s" % (r["line"], r["reason"])) for r in map(json.loads, open(sys.argv[1]))]' "$1"; }
blank() { echo "$1:out_trade_no is empty or blank (only white space or invisible characters)"; }

# --- validate: CSV, NDJSON raw, NDJSON escaped
for f in eight.csv eight.ndjson eight_escaped.ndjson; do
    first=2; [ "$f" = eight.csv ] || first=1   # CSV: line 1 is the header
    rm -f "rj_$f"
    run validate --rejects "rj_$f" --report "v_$f.json" "$f"
    eq "validate $f: exit 1 (rows rejected)" 1 $RC
    eq "validate $f: 8 read, 3 rejected, 1 deduplicated" "8 3 1" "$(totals "v_$f.json")"
    eq "validate $f: the three blank keys rejected, with the reason" \
        "$(blank $first; blank $((first + 1)); blank $((first + 2)))" "$(rejected "rj_$f")"
    check "validate $f: the summary says 4 to merge" contains "$ERR" "would merge 4"
done
# the raw text of a rejected row is kept as written (U+200B U+FEFF included)
eq "rejects keep the raw row" "1,wechat,$ZWSP$BOM,pay,1,\"{\"\"r\"\":3}\",2026-11-28T10:00:00Z" \
    "$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[2])["raw"])' rj_eight.csv)"

# --- import: the same rows, CSV into one database and NDJSON into another
# keys FIELD: the active rows' FIELD in hex (bytes as stored), in key order.
keys() { q "SELECT string_agg(encode(convert_to($1, 'UTF8'), 'hex'), ' ' ORDER BY out_trade_no COLLATE \"C\") FROM payment_callback WHERE deleted_at IS NULL"; }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
want_keys="$(hex ORD1) $(hex ORD2) $(hex ORD3) $(hex "ORD${IDEO}4")"
for f in eight.csv eight.ndjson; do
    new_db "ukeys_${f#*.}"
    run init -d "$DB"; eq "init ($f)" 0 $RC
    rm -f "rj_i_$f"
    run import -d "$DB" --rejects "rj_i_$f" --report "i_$f.json" "$f"
    eq "import $f: exit 1 (rows rejected)" 1 $RC
    eq "import $f: 8 read, 3 rejected, 1 deduplicated" "8 3 1" "$(totals "i_$f.json")"
    eq "import $f: 4 inserted" 4 "$(json "i_$f.json" 'r["totals"]["inserted"]')"
    eq "import $f: 3 rejects" 3 "$(wc -l <"rj_i_$f")"
    eq "import $f: 4 rows in the table" 4 "$(q "SELECT count(*) FROM payment_callback")"
    eq "import $f: the keys as stored, trimmed, U+3000 inside ORD　4 kept" "$want_keys" "$(keys out_trade_no)"
    eq "import $f: the later ORD1 (around U+3000) won" '2|{"r": 5}' \
        "$(q "SELECT status, payload FROM payment_callback WHERE out_trade_no = 'ORD1'")"
    eq "import $f: no blank key reached the table" 0 \
        "$(q "SELECT count(*) FROM payment_callback WHERE btrim(out_trade_no, E' \\t\\n\\r\\u3000\\u00a0\\u200b\\ufeff\\u2003') = ''")"
done

# --- the other key columns and tenant_id: trimmed the same way, in CSV and
# NDJSON.  Into the NDJSON database: ORD2 with every key column dressed,
# a later version, so it updates ORD2 instead of adding a row.
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "${NBSP}1$IDEO" "${IDEO}wechat$NBSP" "${BOM}ORD2" "pay$ZWSP$WJ" 1 '{"r":9}' "2026-11-28T12:00:00Z$IDEO" \
    1 "$LSEP" ORD5 pay 1 '{"r":10}' 2026-11-28T12:00:00Z \
    1 wechat ORD6 "$WJ$BOM" 1 '{"r":11}' 2026-11-28T12:00:00Z \
    "$IDEO" wechat ORD7 pay 1 '{"r":12}' 2026-11-28T12:00:00Z >other.tsv
for fmt in csv ndjson; do
    to_$fmt <other.tsv >"other.$fmt"
    new_db "ukeys_$fmt"   # fresh, then the eight rows again, then these
    run init -d "$DB"
    run import -d "$DB" --rejects rj_load.ndjson "eight.$fmt"
    rm -f rj_o.ndjson
    run import -d "$DB" --rejects rj_o.ndjson --report "o_$fmt.json" "other.$fmt"
    eq "other.$fmt: exit 1" 1 $RC
    eq "other.$fmt: every key column and tenant_id trimmed: ORD2 updated, no row added" \
        "1 0 4" "$(json "o_$fmt.json" '" ".join(str(r["totals"][k]) for k in ("updated","inserted"))') $(q "SELECT count(*) FROM payment_callback")"
    eq "other.$fmt: ORD2 now the dressed version" '1|wechat|pay|{"r": 9}' \
        "$(q "SELECT tenant_id, channel, callback_type, payload FROM payment_callback WHERE out_trade_no = 'ORD2'")"
    first=2; [ $fmt = csv ] || first=1
    eq "other.$fmt: U+2028 channel, U+2060 U+FEFF callback_type, U+3000 tenant_id rejected" \
        "$((first + 1)):channel is empty or blank (only white space or invisible characters)
$((first + 2)):callback_type is empty or blank (only white space or invisible characters)
$((first + 3)):tenant_id is not an integer in [-9223372036854775808, 9223372036854775807]: \"\"" \
        "$(rejected rj_o.ndjson)"
done

# --- --set values: the same rule (into the CSV database, where ORD3 is
# wechat/ORD3/pay at 10:00)
printf 'tenant_id,out_trade_no,callback_type,status,payload,received_at\n1,ORD3,pay,1,"{""r"":13}",2026-11-28T13:00:00Z\n' >noch.csv
run import -d "postgresql:///ukeys_csv?host=$PGHOST&port=$PGPORT&user=$PGUSER" \
    --set "channel=${IDEO}wechat$BOM" --report s.json noch.csv
eq "--set channel around U+3000/U+FEFF: exit 0" 0 $RC
eq "--set channel: ORD3 updated, not a new key" "1 0" \
    "$(json s.json '" ".join(str(r["totals"][k]) for k in ("updated","inserted"))')"
export PGDATABASE=ukeys_csv
eq "--set channel: stored trimmed" 'wechat|{"r": 13}' \
    "$(q "SELECT channel, payload FROM payment_callback WHERE out_trade_no = 'ORD3'")"
run validate --set "channel=$IDEO$NBSP" noch.csv
eq "--set channel of only U+3000 U+00A0: usage error" 2 $RC
check "--set blank channel: says why" contains "$ERR" "channel is empty or blank"

finish
