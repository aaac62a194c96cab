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

# Amounts the client also stages as numbers (a plain decimal in the major
# unit, copy_encode.h), against the server's parse of the same texts: a
# negative zero, leading and trailing zeros, digits in every position of
# numeric's base-10000 groups, 400 digits, and texts the server reads
# itself (over 1,000 characters, a trailing point).  Tenant 2's pair, so
# that the rows above are not also missing from this statement.
long=$(printf '9%.0s' $(seq 400))
huge="1$(printf '0%.0s' $(seq 1000)).5"
plain() {   # plain KEY STATEMENT_AMOUNT TABLE_AMOUNT
    printf '2,wx,%s,pay,1,"{""amount"": ""%s"", ""fee"": ""-1.50"", ""currency"": ""CNY""}",%sT03:00:00Z\n' \
        "$1" "$2" "$D"
    q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
       VALUES (2, 'wx', '$1', 'pay', 1, '{\"amount\": \"$3\", \"fee\": \"-1.5\", \"currency\": \"CNY\"}',
               '${D}T03:00:00Z')" >/dev/null ||
        fail "insert $1"
}
{
    echo "$header"
    plain P1 -0.00 0;                 plain P2 0007.50 7.5
    plain P3 -12.3400 -12.34;         plain P4 "$long.5" "$long.50"
    plain P5 "$huge" "$huge";         plain P6 12. 12
    plain P7 0.00001234 0.00001235;   plain P8 99999999.99995 99999999.99996
    plain P9 10000 10000.00;          plain P10 -5.00 5.00
    plain P11 123456789.1 -123456789.1
} >st2.csv
# the same amounts as a channel's own bill, whose profile says its amounts
# are compared as magnitudes and its fee is in minor units (fees compared:
# the table's facts name one too)
cat >facts.json <<'JSON'
{"default": {"amount": {"path": "amount"}, "currency": {"path": "currency"}, "fee": {"path": "fee"}}}
JSON
cat >plain.json <<'JSON'
{"name": "plain", "encoding": "utf-8", "delimiter": ",",
 "columns": {"tenant_id": {"value": "2"}, "channel": {"value": "wx"},
             "out_trade_no": {"from": ["key"]}, "callback_type": {"value": "pay"},
             "status": {"value": "1"}, "received_at": {"from": ["time"]}},
 "money": [{"kind": "pay", "amount": {"column": "amount", "magnitude": true},
            "currency": {"value": "CNY"}, "fee": {"column": "fee", "unit": "minor"}}]}
JSON
python3 - "$D" >st3.csv <<'PY'
import csv, json, sys
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["key", "amount", "fee", "time"])
for row in csv.reader(open("st2.csv")):
    if row[0] != "tenant_id":
        out.writerow([row[2], json.loads(row[5])["amount"], "-150", sys.argv[1] + "T03:00:00Z"])
PY
# KEYS: the keys whose amounts differ; the rest must match
differ() {
    python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["tenant_id"] == 2]
got = sorted(l["out_trade_no"] for l in lines if l["category"] == "amount_mismatch")
sys.exit(0 if got == sys.argv[2].split() and len(got) == len(lines) else 1)' "$@"
}
for file in st2.csv st3.csv; do
    opt=(--facts facts.json) && [ "$file" = st3.csv ] && opt+=(--profile plain.json)
    run reconcile -d "$DB" --dry-run "${opt[@]}" --report p1.json --discrepancies e1.ndjson "$file"
    eq "plain amounts ($file): exit 5" 5 "$RC"
    export IDEMLOAD_FAULT=recon-server-texts
    run reconcile -d "$DB" --dry-run "${opt[@]}" --report p2.json --discrepancies e2.ndjson "$file"
    unset IDEMLOAD_FAULT
    check "plain amounts ($file): the report is the server's reading's" same p1.json p2.json
    check "plain amounts ($file): the lines are the server's reading's" same e1.ndjson e2.ndjson
    want="P10 P11 P7 P8" && [ "$file" = st3.csv ] && want="P11 P3 P7 P8"
    check "plain amounts ($file): the amounts that differ are $want, no other line" \
        differ e1.ndjson "$want"
done

# Each row's day in the period's zone, which the client stages where the
# zone is a fixed offset (recon_read.c): the instants either side of a
# midnight in zones east and west of UTC, before 2000 and before 1970,
# against the server's own reading of the same rows.
day_row() { printf '3,wx,%s,pay,1,"{""amount"": ""1.00"", ""currency"": ""CNY""}",%s\n' "$1" "$2"; }
{
    echo "$header"
    day_row D1 2026-11-19T15:59:59.999999Z; day_row D2 2026-11-19T16:00:00Z
    day_row D3 2026-11-20T05:29:59Z;        day_row D4 2026-11-20T05:30:00Z
    day_row D5 1999-12-31T23:59:59Z;        day_row D6 2000-01-01T00:00:00Z
    day_row D7 1969-12-31T23:59:59.5Z;      day_row D8 1970-01-01T00:00:00Z
} >st4.csv
for zone in +08:00 -05:30 Z Asia/Shanghai; do
    run reconcile -d "$DB" --dry-run --timezone "$zone" --report q1.json st4.csv
    export IDEMLOAD_FAULT=recon-server-texts
    run reconcile -d "$DB" --dry-run --timezone "$zone" --report q2.json st4.csv
    unset IDEMLOAD_FAULT
    check "days in $zone: the report is the server's reading's" same q1.json q2.json
done
run reconcile -d "$DB" --dry-run --timezone -05:30 --report q1.json st4.csv
check "days in -05:30: each instant on its side of midnight" python3 -c '
import json, sys
days = {d["day"]: d["statement"]["rows"] for d in json.load(open("q1.json"))["reconciliation"]["days"]}
sys.exit(0 if days == {"1969-12-31": 2, "1999-12-31": 2, "2026-11-19": 3, "2026-11-20": 1} else 1)'

# Each row's currency, which the client cleans where it is ASCII (spaces
# trimmed, upper-cased: recon_read.c), against the server's cleaning of
# the same texts: letters in either case, spaces and a tab around them,
# only spaces, a text beyond ASCII, one longer than a code.
ccy_row() {   # ccy_row KEY STATEMENT_CURRENCY TABLE_CURRENCY
    printf '4,wx,%s,pay,1,"{""amount"": ""1.00"", ""currency"": ""%s""}",%sT03:00:00Z\n' "$1" "$2" "$D"
    q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
       VALUES (4, 'wx', '$1', 'pay', 1, '{\"amount\": \"1.00\", \"currency\": \"$3\"}',
               '${D}T03:00:00Z')" >/dev/null || fail "insert $1"
}
{
    echo "$header"
    ccy_row C1 '  usd ' USD;             ccy_row C2 'Usd' usd
    ccy_row C3 '\tusd' USD;              ccy_row C4 '   ' USD
    ccy_row C5 'rénminbì' RÉNMINBÌ;      ccy_row C6 'a currency name, long' 'A CURRENCY NAME, LONG'
    ccy_row C7 'eur' USD;                ccy_row C8 'ｕｓｄ' USD
} >st5.csv
run reconcile -d "$DB" --dry-run --report c1.json --discrepancies l1.ndjson st5.csv
eq "currencies: exit 5" 5 "$RC"
export IDEMLOAD_FAULT=recon-server-texts
run reconcile -d "$DB" --dry-run --report c2.json --discrepancies l2.ndjson st5.csv
unset IDEMLOAD_FAULT
check "currencies: the report is the server's reading's" same c1.json c2.json
check "currencies: the lines are the server's reading's" same l1.ndjson l2.ndjson
check "currencies: C3 (a tab), C7 and C8 differ; C4 has none (unverified)" python3 -c '
import json, sys
lines = [json.loads(l) for l in open("l1.ndjson") if json.loads(l)["tenant_id"] == 4]
got = sorted((l["out_trade_no"], l["category"]) for l in lines)
want = [("C3", "currency_mismatch"), ("C7", "currency_mismatch"), ("C8", "currency_mismatch")]
d = [d for d in json.load(open("c1.json"))["reconciliation"]["days"] if d["tenant_id"] == 4][0]
sys.exit(0 if got == want and d["unverified"] == 1 else 1)'
finish
