#!/usr/bin/env bash
# reconcile against a Citus-distributed target (SPEC.md, "Reconcile",
# "Scale"): the same table and statements as on one server give the same
# discrepancies, figures and register; the statement reaches the workers
# and the join with the table runs there, shard by shard (EXPLAIN of the
# statement idemload sent, taken from the coordinator's log).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/citus_lib.sh"
export PGTZ=UTC

new_db citus_recon_ref
REF=$DB
run init -q -d "$REF"
eq "init of the reference" 0 "$RC"
citus_new_db citus_recon
psql -X -q -c "ALTER DATABASE citus_recon SET log_statement = 'all'"
# The workers log what idemload's own session sends them, to show below
# where its joins ran (the statements arrive from the coordinator's
# connections, in the database of the same name).
for port in $CITUS_WORKER_PORTS; do
    psql -X -q -p "$port" -c "ALTER DATABASE citus_recon SET log_statement = 'all'"
done
LOG_FROM=$(stat -c %s "$IDEMLOAD_CITUSDIR/coordinator.log")
W1_FROM=$(stat -c %s "$IDEMLOAD_CITUSDIR/worker1.log")
W2_FROM=$(stat -c %s "$IDEMLOAD_CITUSDIR/worker2.log")
run init -q -d "$CDB" --distributed
eq "init --distributed" 0 "$RC"

D=2026-11-20
rows="(1, 'wechat', 'M1', 'pay', 1, '{\"amount\": 168.9, \"currency\": \"CNY\"}', '$D 10:00:01Z'),
 (1, 'wechat', 'AM', 'pay', 1, '{\"amount\": 11, \"currency\": \"CNY\"}', '$D 11:00:00Z'),
 (1, 'wechat', 'SM', 'pay', 1, '{\"amount\": 8, \"currency\": \"CNY\"}', '$D 11:00:00Z'),
 (1, 'wechat', 'MS', 'pay', 1, '{\"amount\": 3.33, \"currency\": \"CNY\"}', '$D 12:00:00Z'),
 (2, 'alipay', 'B1', 'pay', 2, '{\"amount\": \"9.90\", \"currency\": \"CNY\"}', '$D 10:00:00Z'),
 (3, 'alipay', 'C1', 'pay', 1, '{\"amount\": \"1.00\", \"currency\": \"CNY\"}', '$D 10:00:00Z'),
 (4, 'wechat', 'N1', 'pay', 1, '{\"amount\": \"2.00\", \"currency\": \"CNY\"}', '2026-11-19 10:00:00Z')"
for db in "$REF" "$CDB"; do
    qd "$db" "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES $rows" >/dev/null
done
cat >stmt.csv <<EOF2
tenant_id,channel,out_trade_no,callback_type,status,payload,received_at
1,wechat,M1,pay,1,"{""amount"": ""168.90"", ""currency"": ""CNY""}",${D}T10:00:00Z
1,wechat,AM,pay,1,"{""amount"": 10.00, ""currency"": ""CNY""}",${D}T11:00:00Z
1,wechat,SM,pay,2,"{""amount"": 8, ""currency"": ""CNY""}",${D}T11:00:00Z
1,wechat,MT,pay,1,"{""amount"": ""42.00"", ""currency"": ""CNY""}",${D}T13:00:00Z
1,wechat,DUP,pay,1,"{""amount"": 5, ""currency"": ""CNY""}",${D}T12:00:00Z
1,wechat,DUP,pay,1,"{""amount"": 6, ""currency"": ""CNY""}",${D}T12:00:01Z
2,alipay,B1,pay,2,"{""amount"": ""9.9"", ""currency"": ""CNY""}",${D}T10:00:00Z
4,wechat,N2,pay,1,"{""amount"": ""2.00"", ""currency"": ""CNY""}",${D}T10:00:00Z
EOF2

strip() { python3 -c "
import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l); o.pop('first_seen'); print(json.dumps(o, sort_keys=True))" "$1"; }
# register DB: its items and current runs, through qd (a failing query
# prints a line no register holds and fails the test: two failures never
# compare equal as two empty registers did).
register() {
    qd "$1" "SELECT category, tenant_id, channel, coalesce(out_trade_no, '-'), day, state,
        coalesce(statement::text, '-'), coalesce(table_side::text, '-'), coalesce(difference, '-')
        FROM idemload_recon_item ORDER BY 2, 3, 4, 1, 5"
    qd "$1" "SELECT tenant_id, channel, day, verdict,
        statement::text, table_side::text, matched, unverified, pending, categories::text
        FROM idemload_recon_run WHERE superseded_by IS NULL ORDER BY 1, 2, 3"
}
for p in "" "--period 2026-11-19..$D"; do
    what=${p:-"the statement's days"}
    # shellcheck disable=SC2086
    run reconcile -d "$REF" $p --report ref.json --discrepancies ref.ndjson stmt.csv
    ref_rc=$RC
    # shellcheck disable=SC2086
    run reconcile -d "$CDB" $p --report citus.json --discrepancies citus.ndjson stmt.csv
    eq "$what: the same exit status (5)" "5 5" "$ref_rc $RC"
    eq "$what: the same discrepancies" "$(strip ref.ndjson)" "$(strip citus.ndjson)"
    check "$what: the same figures per day" jtrue citus.json \
        "r['reconciliation']['days'] == __import__('json').load(open('ref.json'))['reconciliation']['days']"
    ref_register=$(register "$REF")
    eq "$what: the same register" "$ref_register" "$(register "$CDB")"
    check "$what: the register holds the run's items and days" \
        test "$(grep -c '|open|' <<<"$ref_register")" -ge 5
done
# A dry run of the next day reads the register (a local table beside the
# distributed one) and carries over the same six open items of the 20th as
# on one server (first seen: when each server's run was).
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '1,wechat,NEXT,pay,1,"{""amount"": ""1.00"", ""currency"": ""CNY""}",2026-11-21T10:00:00Z' >next.csv
run reconcile -d "$REF" --dry-run --report refdry.json next.csv
run reconcile -d "$CDB" --dry-run --report citusdry.json next.csv
check "a dry run carries over the same items on Citus as on one server" jtrue citusdry.json \
    "r['reconciliation']['carried_over'] == 6 and [dict(i, first_seen=None) for i in r['reconciliation']['carried_over_items']] == [dict(i, first_seen=None) for i in __import__('json').load(open('refdry.json'))['reconciliation']['carried_over_items']]"
check "every category but currency and the time-fact ones is there" jtrue citus.json \
    "all(r['reconciliation']['categories'][c] >= 1 for c in ['missing_in_table', 'missing_in_statement', 'amount_mismatch', 'status_mismatch', 'duplicate_in_statement', 'no_statement'])"

# A key pending on the 22nd, listed by the 24th's statement, the 22nd
# reconciled again: matched (the register, a local table, read into the
# comparison), not opened again, as on one server.
for db in "$REF" "$CDB"; do
    qd "$db" "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES
      (5, 'wechat', 'P1', 'pay', 1, '{\"amount\": \"1.00\", \"currency\": \"CNY\"}', '2026-11-22 01:00Z'),
      (5, 'wechat', 'Q2', 'pay', 1, '{\"amount\": \"2.00\", \"currency\": \"CNY\"}', '2026-11-22 23:00Z')" >/dev/null
done
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '5,wechat,P1,pay,1,"{""amount"": ""1.00"", ""currency"": ""CNY""}",2026-11-22T01:00:00Z' >d22.csv
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '5,wechat,Q2,pay,1,"{""amount"": ""2.00"", ""currency"": ""CNY""}",2026-11-24T00:10:00Z' >d24.csv
for db in "$REF" "$CDB"; do
    run reconcile -d "$db" --grace 10000d d22.csv
    run reconcile -d "$db" --grace 10000d d24.csv
done
run reconcile -d "$REF" --report ref22.json d22.csv
ref_rc=$RC
run reconcile -d "$CDB" --report citus22.json d22.csv
eq "the 22nd again after the 24th listed Q2: balanced on both (exit 0)" "0 0" "$ref_rc $RC"
check "Q2 matched on Citus as on one server" jtrue citus22.json \
    "r['reconciliation']['days'] == __import__('json').load(open('ref22.json'))['reconciliation']['days'] and r['reconciliation']['matched'] == 2"

# Where idemload's own joins ran: what its session sent the workers (their
# logs, since the first run above; only this database logs its statements
# there).  The table's rows are read only by
# statements that join them there, shard by shard, with the statement's
# keys or pairs shipped as intermediate results: every one of the 8 shards
# of payment_callback is read that way, and no statement reads a shard
# without such a join (the table is never pulled to the coordinator).
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
        # a statement goes on over the lines after it, up to the next entry
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
print("shards", len(shards), "read by a join with the statement:", len(joined), "read alone:", len(alone))
for a in alone[:3]:
    print("  alone:", a)
sys.exit(0 if shards and joined == shards and not alone else 1)
PY
rc=$?
check "the workers joined every shard of the table with the statement's keys, nothing read alone: $(head -n 1 pushdown.txt)" test $rc -eq 0
finish
