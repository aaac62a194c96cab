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
LOG_FROM=$(stat -c %s "$IDEMLOAD_CITUSDIR/coordinator.log")
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

# EXPLAIN of the statement that reads the table: the statement's keys and
# pairs are sent to the workers, the join runs on each of the 8 shards.
python3 - "$IDEMLOAD_CITUSDIR/coordinator.log" "$LOG_FROM" >read.sql <<'PY'
import re, sys
log = open(sys.argv[1], errors="replace")
log.seek(int(sys.argv[2]))
for line in log:
    m = re.search(r"LOG:  (?:execute [^:]*|statement): CREATE TEMP TABLE idemload_recon_traw AS (.*)$", line)
    if m:
        sql = m.group(1)
        sql = re.sub(r"\$1\b", "'2026-11-20'", sql)
        sql = re.sub(r"\$2\b", "'2026-11-20'", sql)
        sql = re.sub(r"\$3\b", "'UTC'", sql)
        print(sql)
        break
PY
# ... under the join policy idemload set for its transaction (logged too).
policy=$(tail -c +"$((LOG_FROM + 1))" "$IDEMLOAD_CITUSDIR/coordinator.log" |
    grep -o "citus.local_table_join_policy', '[a-z-]*'" | head -n 1 | grep -o "'[a-z-]*'$")
check "the statement reading the table was found in the coordinator's log" test -s read.sql
psql -X -q -t -A -d "$CDB" >plan.txt 2>&1 <<SQL
BEGIN;
SET LOCAL citus.local_table_join_policy = ${policy:-default};
CREATE TEMP TABLE idemload_recon_sk (tenant_id bigint, channel text, out_trade_no text, callback_type text, day date);
INSERT INTO idemload_recon_sk VALUES (1, 'wechat', 'M1', 'pay', '2026-11-20'), (2, 'alipay', 'B1', 'pay', '2026-11-20');
CREATE TEMP TABLE idemload_recon_pairs AS SELECT DISTINCT tenant_id, channel, false AS timed, NULL::text[] AS excluded FROM idemload_recon_sk;
EXPLAIN (COSTS OFF) $(cat read.sql);
ROLLBACK;
SQL
# Both joins (the keys, the pairs) run in the tasks on the 8 shards, each
# reading the statement's keys and pairs as intermediate results there; the
# table is never pulled to the coordinator (the distributed subplans, before
# "Task Count", scan only the session's own tables, and a shard is scanned
# inside the tasks).
python3 - plan.txt <<'PY' && ok "EXPLAIN: both joins run on the 8 shards, the statement shipped to them" || fail "EXPLAIN: not pushed down: $(tr '\n' ' ' <plan.txt | cut -c1-600)"
import re, sys
plan = open(sys.argv[1]).read()
counts = re.findall(r"Task Count: (\d+)", plan)
head, _, tasks = plan.partition("Task Count:")
joins = len(re.findall(r"Join", tasks))
inter = tasks.count("read_intermediate_result")
ok = (counts and all(c == "8" for c in counts) and joins >= 2 and inter >= 2
      and "payment_callback" not in head and re.search(r"payment_callback_\d+", tasks)
      and "ERROR" not in plan)
sys.exit(0 if ok else 1)
PY
finish
