#!/usr/bin/env bash
# The table's facts are read by the scan's parallel workers, with the
# levels of --facts, the kinds it names and the currencies' exponents
# written into the statement as literals (SQL_RECON_LEVELS): a channel, a
# kind, a path member and a constant holding quotes, braces, commas,
# backslashes and a dollar sign must reach the server as they are, and
# read the same facts the rows probed in the index (outside the period's
# scan) read through the temporary tables.
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
D=2026-11-20
init_db recon_levels

CH="w'x{1},\\\$a"                  # w'x{1},\$a
python3 - "$CH" <<'PY' >facts.json
import json, sys
ch = sys.argv[1]
amt = "a'b{c},\"d\\e$1"           # one member: no dot
cur = "c'u\"r}"
print(json.dumps({
    "default": {"amount": {"path": "amount", "unit": "major"}, "currency": {"path": "currency"}},
    "channels": {ch: {"amount": {"path": amt, "unit": "major"}, "currency": {"path": cur},
                      "fee": {"value": "0'{}"},   # no amount: the constant reaches the server
                      "kinds": {"r'f{": {"amount": {"path": "r'{x}", "unit": "minor"},
                                         "currency": {"path": cur}}}}}}))
PY
# tab KEY TYPE PAYLOAD TIME: a table row of channel CH
tab() {
    local ch=${CH//\'/\'\'} p=${3//\'/\'\'}
    q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
       VALUES (1, E'${ch//\\/\\\\}', '$1', E'${2//\'/\\\'}', 1, E'${p//\\/\\\\}', '$4')" >/dev/null ||
        fail "insert $1"
}
# st KEY TYPE AMOUNT: a statement row of channel CH (canonical payload)
st() { printf '1,"%s",%s,"%s",1,"{""amount"": ""%s"", ""currency"": ""CNY""}",%sT03:00:00Z\n' \
    "$CH" "$1" "$2" "$3" "$D"; }
pay() { python3 -c 'import json,sys; print(json.dumps({"a'"'"'b{c},\"d\\e$1": sys.argv[1], "c'"'"'u\"r}": "CNY"}))' "$1"; }
ref() { python3 -c 'import json,sys; print(json.dumps({"r'"'"'{x}": sys.argv[1], "c'"'"'u\"r}": "CNY"}))' "$1"; }

old=2026-10-01T03:00:00Z           # outside the period's scan: probed in the index
tab K1 pay "$(pay 10.00)" "${D}T03:00:00Z"
tab K2 pay "$(pay 21.00)" "${D}T03:00:00Z"
tab K3 "r'f{:1" "$(ref 3000)" "${D}T03:00:00Z"
tab P1 pay "$(pay 10.00)" "$old"
tab P2 pay "$(pay 21.00)" "$old"
tab P3 "r'f{:2" "$(ref 3000)" "$old"
{
    echo "$header"
    st K1 pay 10.00; st K2 pay 20.00; st K3 "r'f{:1" 30.00
    st P1 pay 10.00; st P2 pay 20.00; st P3 "r'f{:2" 30.00
} >st.csv

run reconcile -d "$DB" --dry-run --period $D --facts facts.json --report r.json \
    --discrepancies d.ndjson st.csv
eq "reconcile: exit 5 (discrepancies)" 5 "$RC"
check "the channel's and the kind's paths read: four matched" jtrue r.json \
    "r['reconciliation']['days'][0]['matched'] == 4"
check "the lines: K2 and P2 differ in amount, scanned and probed alike" python3 -c '
import json, sys
lines = [json.loads(l) for l in open("d.ndjson")]
got = sorted((l["out_trade_no"], l["category"], l["table"]["amount"]) for l in lines)
sys.exit(0 if got == [(k, "amount_mismatch", "21.00") for k in ("K2", "P2")] else 1)'
check "the lines name the channel as it is" python3 -c '
import json, sys
sys.exit(0 if all(json.loads(l)["channel"] == sys.argv[1] for l in open("d.ndjson")) else 1)' "$CH"
finish
