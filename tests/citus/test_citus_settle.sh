#!/usr/bin/env bash
# settle against a Citus-distributed target (SPEC.md, "Settle: the money
# that arrives": Citus "as for reconcile"; "A distributed target: Citus"):
# a planted scenario of tests/make_settle.py (every category, a payment
# only the table holds among them: unsettled_payment reads the target's
# payments) settled on the cluster gives the model's discrepancy lines
# (tests/expected_settle.py), and the same lines, register and pending as on
# one server; a second run (the register, a local table beside the ledger)
# and a dry run too.  The table is read only by joins that ran on the
# workers, shard by shard, with settle's keys shipped as intermediate
# results (the workers' logs), never pulled whole to the coordinator.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/citus_lib.sh"
export PGTZ=UTC
NOW=2026-11-21T12:00:00Z
OPTS=(--set tenant_id=1 --fee-rate stripe=2.9% --fee-rate wechat=0.6% --fee-rate alipay=0.6%
      --settle-window 0..3d)

S=scn
python3 "$SRC/tests/make_settle.py" 5 "$S" --plant fee_off:wechat --plant batch_short:stripe \
    --plant row_removed:alipay --plant never_credited:wechat --plant stray_credit:stripe \
    --plant table_only:alipay --plant two_in_one:stripe --plant window_open:stripe ||
    { fail "make_settle.py"; finish; }
FILES=
for f in "$S"/*; do
    case $f in */table.csv | */scenario.json) ;; *) FILES="$FILES $f" ;; esac
done
# shellcheck disable=SC2086
python3 "$SRC/tests/expected_settle.py" --now $NOW --tenant 1 --fee-rate stripe=2.9% \
    --fee-rate wechat=0.6% --fee-rate alipay=0.6% --settle-window 0..3d \
    --table "$S/table.csv" --pending $FILES >model.all || { fail "the model"; finish; }
grep -v '"pending"' model.all >model.ndjson

new_db citus_settle_ref
REF=$DB
run init -q -d "$REF"
eq "init of the reference" 0 "$RC"
citus_new_db citus_settle
# The workers log the statements they are sent (Citus propagates the
# setting to them), to show below where the table was read.
psql -X -q -c "ALTER DATABASE citus_settle SET log_statement = 'all'"
for port in $CITUS_WORKER_PORTS; do
    eq "the worker on $port logs the statements" all \
        "$(psql -X -q -t -A -p "$port" -c "SHOW log_statement")"
done
run init -q -d "$CDB" --distributed
eq "init --distributed" 0 "$RC"
for db in "$REF" "$CDB"; do
    run import -d "$db" "$S/table.csv"
    eq "the table's payments imported" 0 "$RC"
done
# Two unsettled alipay payments at the edge of the period's first day in
# the channel's zone (Asia/Shanghai): 00:30 on the 15th, inside (a line),
# and 23:59:59 on the 14th, outside (none), as on one server: the bound of
# received_at the workers filter by is the period's, in that zone.  (Not in
# the model's table: tests/expected_settle.py reads every table row, with
# no period.)
for db in "$REF" "$CDB"; do
    qd "$db" "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES
      (1, 'alipay', 'AEDGEIN', 'pay', 1, '{\"amount\": \"7.00\", \"currency\": \"CNY\"}', '2026-11-14 16:30:00Z'),
      (1, 'alipay', 'AEDGEOUT', 'pay', 1, '{\"amount\": \"8.00\", \"currency\": \"CNY\"}', '2026-11-14 15:59:59Z')" >/dev/null
done
W1_FROM=$(stat -c %s "$IDEMLOAD_CITUSDIR/worker1.log")
W2_FROM=$(stat -c %s "$IDEMLOAD_CITUSDIR/worker2.log")

# lines FILE: the contract's members of each line, sorted (first_seen, the
# time of each server's run, left out).
lines() {
    python3 -c "
import json, sys
K = ('category', 'tenant', 'channel', 'day', 'subject', 'currency', 'expected', 'actual',
     'difference', 'pending')
out = []
for l in open(sys.argv[1], encoding='utf-8'):
    if l.strip():
        d = json.loads(l)
        out.append(json.dumps([None if d.get(k) is None else str(d[k]) for k in K]))
print('\n'.join(sorted(out)))" "$1"
}
register() {
    qd "$1" "SELECT category, tenant_id, channel, day, coalesce(subject, '-'), state,
        coalesce(expected, '-'), coalesce(actual, '-'), coalesce(resolution, '-')
        FROM idemload_settle_item ORDER BY 1, 2, 3, 4, 5"
}
pending() { sed -n 's/^ *pending: \([0-9]*\) .*/\1/p' "$1" | head -n 1; }

# shellcheck disable=SC2086
IDEMLOAD_NOW=$NOW run settle -d "$REF" "${OPTS[@]}" --discrepancies ref.ndjson $FILES
ref_rc=$RC
cp "$ERR" ref.err
# shellcheck disable=SC2086
IDEMLOAD_NOW=$NOW run settle -d "$CDB" "${OPTS[@]}" --discrepancies citus.ndjson $FILES
eq "exit 5 on both" "5 5" "$ref_rc $RC"
[ "$RC" = 5 ] || head -c 1500 "$ERR" | sed 's/^/#   /'
model=$(lines model.ndjson)
check "the model has a line of each category" test "$(grep -c . <<<"$model")" -ge 6
check "an unsettled_payment among them (the table's payment no batch paid)" \
    grep -q unsettled_payment <<<"$model"
edge='["unsettled_payment", "1", "alipay", "2026-11-15", "AEDGEIN", "CNY", "7.00", null, null, null]'
eq "on one server: the payment inside the period's edge a line, the one outside none" \
    "1 0" "$(grep -cF "$edge" <(lines ref.ndjson)) $(grep -c AEDGEOUT ref.ndjson)"
eq "on Citus: the model's lines (and the edge's)" "$model" "$(lines citus.ndjson | grep -vF "$edge")"
eq "on one server: the same lines" "$(lines ref.ndjson)" "$(lines citus.ndjson)"
eq "the same pending in the summary, as many as the model's" \
    "$(grep -c '"pending"' model.all) $(pending ref.err)" "$(pending "$ERR") $(pending ref.err)"
ref_register=$(register "$REF")
eq "the same register" "$ref_register" "$(register "$CDB")"

# Again, a day later: the register read and written on both.
for db in "$REF" "$CDB"; do
    # shellcheck disable=SC2086
    IDEMLOAD_NOW=2026-11-22T12:00:00Z run settle -d "$db" "${OPTS[@]}" \
        --discrepancies "again.$(test "$db" = "$REF" && echo ref || echo citus).ndjson" $FILES
    eq "a second run: exit 5" 5 "$RC"
done
eq "a second run: the same lines" "$(lines again.ref.ndjson)" "$(lines again.citus.ndjson)"
eq "a second run: the same register" "$(register "$REF")" "$(register "$CDB")"
# shellcheck disable=SC2086
IDEMLOAD_NOW=$NOW run settle --dry-run -d "$CDB" "${OPTS[@]}" --discrepancies dry.ndjson $FILES
eq "a dry run on Citus: exit 5, the same lines" "5 $(lines citus.ndjson)" "$RC $(lines dry.ndjson)"

# Where the table was read: what settle's sessions sent the workers since
# the imports.  Every one of the shards of payment_callback is read by a
# join with intermediate results (settle's pairs and keys), none by a
# statement without one (no shard pulled whole to the coordinator).
qd "$CDB" "SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'payment_callback'::regclass ORDER BY 1" >shards.txt
python3 - shards.txt "$IDEMLOAD_CITUSDIR/worker1.log" "$W1_FROM" \
    "$IDEMLOAD_CITUSDIR/worker2.log" "$W2_FROM" >pushdown.txt <<'PY'
import re, sys
shards = set(open(sys.argv[1]).read().split())
joined, alone = set(), []
for path, start in ((sys.argv[2], sys.argv[3]), (sys.argv[4], sys.argv[5])):
    log = open(path, errors="replace")
    log.seek(int(start))
    stmt = None
    for line in log.read().split("\n") + ["<end> LOG:  "]:
        if re.match(r"^\S+ \S+ \S+ \[\d+\]|^<end>", line) or "LOG:  " in line or "ERROR:  " in line:
            if stmt is not None:
                read = set(re.findall(r"payment_callback_(\d+)", stmt)) & shards
                if read:
                    if "read_intermediate_result" in stmt and re.search(r"\bJOIN\b", stmt, re.I):
                        joined |= read
                    elif re.match(r"\s*(SELECT|WITH)\b", stmt, re.I):
                        alone.append(stmt[:200])
            m = re.search(r"LOG:  (?:statement|execute [^:]*): (.*)$", line)
            stmt = m.group(1) if m else None
        elif stmt is not None:
            stmt += " " + line
print("shards", len(shards), "read by a join with settle's keys:", len(joined), "read alone:", len(alone))
for a in alone[:3]:
    print("  alone:", a)
sys.exit(0 if shards and joined == shards and not alone else 1)
PY
rc=$?
check "the workers joined every shard with settle's keys, nothing read alone: $(head -n 1 pushdown.txt)" test $rc -eq 0
[ $rc -eq 0 ] || sed 's/^/#   /' pushdown.txt
finish
