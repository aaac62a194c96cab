#!/usr/bin/env bash
# reconcile reads each statement row's money texts on the client
# (recon/stmt_texts.h) and stages them beside the payload, which the server
# then parses only for a row the client leaves it (an escaped string, a
# number with an exponent or a negative zero, an object or array where a
# path ends, an escaped key).  Whatever the payload holds, the comparison
# must be the one the server's own reading gives: each row's outcome here
# is named, and the run is compared, line for line and figure for figure,
# with one where the server reads every row's texts
# (IDEMLOAD_FAULT=recon-server-texts).
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
D=2026-11-20
init_db recon_staged_texts

# tab KEY PAYLOAD: a table row; st KEY PAYLOAD: a statement row (CSV, the
# payload's quotes doubled)
tab() {
    q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
       VALUES (1, 'wx', '$1', 'pay', 1, '$2', '${D}T03:00:00Z')" >/dev/null || fail "insert $1"
}
st() { printf '1,wx,%s,pay,1,"%s",%sT03:00:00Z\n' "$1" "${2//\"/\"\"}" "$D"; }
cny() { printf '{"amount": "%s", "currency": "CNY"}' "$1"; }

{
    echo "$header"
    st E1 '{"amount": 1.5e3, "currency": "CNY"}';                      tab E1 "$(cny 1500.00)"
    st E2 '{"amount": "\u0031\u0030.00", "currency": "\u0043NY"}';     tab E2 "$(cny 10.00)"
    st E3 '{"amount": -0.00, "currency": "CNY"}';                      tab E3 "$(cny 0)"
    st E4 '{"amount": {"value": 1}, "currency": "CNY"}';               tab E4 "$(cny 1.00)"
    st E5 '{"amount": "1.00", "currency": "CNY", "amount": "2.00"}';   tab E5 "$(cny 2.00)"
    st E6 '{"amo\u0075nt": "3.00", "currency": "CNY"}';               tab E6 "$(cny 3.00)"
    st E7 '{"amount": 4, "currency": "CNY"}';                          tab E7 "$(cny 5.00)"
    st E8 '{"amount": "6.00", "currency": " usd "}';                   tab E8 '{"amount": "6.00", "currency": "USD"}'
    st E9 '{"amount": true, "currency": "CNY"}';                       tab E9 "$(cny 1.00)"
    st E10 '{"total": "7.00", "currency": "CNY"}';                     tab E10 "$(cny 7.00)"
    st E11 '{"amount": 123456789012345678901234567890.12, "currency": "CNY"}'
    tab E11 "$(cny 123456789012345678901234567890.12)"
    st E12 '{"amount": "8.00", "currency": ["CNY"]}';                  tab E12 "$(cny 8.00)"
    st E13 '{"amount": "\"9.00\"", "currency": "CNY"}';                tab E13 "$(cny 9.00)"
    st E14 '{"amount": "11.00", "currency": "CNY", "x": "\u00e9"}';    tab E14 "$(cny 11.00)"
} >st.csv

run reconcile -d "$DB" --dry-run --report r1.json --discrepancies d1.ndjson st.csv
eq "reconcile: exit 5 (discrepancies)" 5 "$RC"
check "nine matched, three unverified (an object, a boolean, no amount)" jtrue r1.json \
    "(d := r['reconciliation']['days'][0])['matched'] == 9 and d['unverified'] == 3"
check "E7's amount differs, E12's currency is the array's text" jtrue r1.json \
    "(c := r['reconciliation']['days'][0]['categories'])['amount_mismatch']['count'] == 1 and c['currency_mismatch']['count'] == 1 and sum(v['count'] for v in c.values()) == 2"
check "the lines name E7 and E12" python3 -c '
import json, sys
lines = [json.loads(l) for l in open("d1.ndjson")]
got = sorted((l["out_trade_no"], l["category"]) for l in lines)
sys.exit(0 if got == [("E12", "currency_mismatch"), ("E7", "amount_mismatch")] else 1)'
check "E12's statement currency is jsonb's text of the array" python3 -c '
import json, sys
l = [json.loads(l) for l in open("d1.ndjson") if "E12" in l][0]
sys.exit(0 if l["statement"]["currency"] == "[\"CNY\"]" else 1)'

export IDEMLOAD_FAULT=recon-server-texts
run reconcile -d "$DB" --dry-run --report r2.json --discrepancies d2.ndjson st.csv
unset IDEMLOAD_FAULT
eq "reconcile, the server reading every row: exit 5" 5 "$RC"
same() {
    python3 - "$1" "$2" <<'PY'
import json, sys
def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items() if k not in ("elapsed_s", "first_seen")}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x
def load(p):
    if p.endswith(".ndjson"):
        return [clean(json.loads(l)) for l in open(p)]
    return clean(json.load(open(p)))
sys.exit(0 if load(sys.argv[1]) == load(sys.argv[2]) else 1)
PY
}
check "the report is the server's reading's" same r1.json r2.json
check "the discrepancy lines are the server's reading's" same d1.ndjson d2.ndjson
finish
