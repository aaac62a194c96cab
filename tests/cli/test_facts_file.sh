#!/usr/bin/env bash
# The --facts file is checked before anything else (issue 47, points 3 and
# 12; SPEC.md "The facts compared"): one over 1 MiB, or a fact with members
# that contradict each other ("path" and "value") or mean nothing for it
# (a "unit" on time), is exit 2 naming the file and the member, before a
# connection is tried (the server here does not exist: exit 4 would mean
# the file was accepted).
. "$(dirname "$0")/../lib.sh"

NOSERVER="host=$WORK/no-server dbname=x connect_timeout=2"
printf 'tenant_id,channel,out_trade_no,callback_type,payload,received_at\n1,wechat,A,pay,"{""amount"": ""1.00"", ""currency"": ""CNY""}",2026-11-20T10:00:00Z\n' >st.csv

# refused FILE MEMBER DESCRIPTION
refused() {
    run reconcile -d "$NOSERVER" --facts "$1" st.csv
    eq "$3: exit 2" 2 "$RC"
    check "$3: names the file and the member $2" grep -qF -- "--facts '$1': $2" "$ERR"
}
echo '{"default": {"amount": {"path": "amount", "value": "1.00"}}}' >pv.json
refused pv.json default.amount.value '"path" with "value"'
echo '{"channels": {"wechat": {"time": {"path": "success_time", "unit": "minor"}}}}' >tu.json
refused tu.json channels.wechat.time.unit 'a "unit" on time'
echo '{"channels": {"wechat": {"kinds": {"refund": {"currency": {"path": "c", "magnitude": true}}}}}}' >cm.json
refused cm.json channels.wechat.kinds.refund.currency.magnitude '"magnitude" on currency'

# Over 1 MiB: refused as soon as the bound is passed, not parsed (32 MB
# took 525 MB and 27 s, its parse quadratic).
python3 - <<'PY'
parts = ['"c%d": {"amount": {"path": "amount.total", "unit": "minor"}}' % i for i in range(600000)]
open("big.json", "w").write('{"channels": {' + ", ".join(parts) + "}}")
PY
run reconcile -d "$NOSERVER" --facts big.json st.csv
eq "a 35 MB facts file: exit 2" 2 "$RC"
check "... naming it and the bound" grep -qF -- "--facts 'big.json': over 1048576 bytes (1 MiB)" "$ERR"
# Just under the bound, thousands of channels are read (and the run goes on
# to connect: exit 4 here).
python3 - <<'PY'
parts, n, size = [], 0, 20
while size < 1024 * 1024 - 200:
    p = '"c%d": {"amount": {"path": "amount.total", "unit": "minor"}}' % n
    parts.append(p); size += len(p) + 2; n += 1
open("near.json", "w").write('{"channels": {' + ", ".join(parts) + "}}")
PY
run reconcile -d "$NOSERVER" --facts near.json st.csv
eq "a facts file just under 1 MiB is accepted (the run goes on to connect: exit 4)" 4 "$RC"
finish
