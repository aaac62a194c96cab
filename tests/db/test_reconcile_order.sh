#!/usr/bin/env bash
# reconcile across days and runs, the defects issue 47 found (SPEC.md,
# "Reconcile": "Across days", "The facts compared", "Writes"):
# - a day reconciled after a later day (day 22 before day 20) matches the
#   table row of day 20 whose key day 22's statement listed, as it would
#   had day 20 come first (the order never changes a result);
# - with an explicit --period, a table row inside it whose key the
#   statement lists only on another day is matched and counted, not lost;
# - a table amount in minor units whose currency is missing is no amount
#   (unverified), never scaled by a guessed exponent;
# - an amount text naming another currency ("USD 10.00" in a CNY row) is
#   no amount;
# - pending items are not carried over, and a carried-over item does not
#   change the run's verdict;
# - a run whose report could not be written, or that was killed after
#   its COMMIT, registered its items, and the next run lists them as
#   appeared (no report showed them);
# - --repair merge resolves the mismatches whose rows it updated (and
#   leaves open those it did not: a stale statement row).
# Days are of November 2026, long past any grace, so no test depends on
# the wall clock's day.
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
item() { q "SELECT category || '/' || state || coalesce('/' || resolution, '') FROM idemload_recon_item
            WHERE tenant_id = $1 AND out_trade_no = '$2' AND resolution IS DISTINCT FROM
                  'listed by the statement of another day' ORDER BY id DESC LIMIT 1"; }
jv() { json "$1" "$2" 2>/dev/null; }

# --- the order of days: 22 before 20 ------------------------------------
init_db recon_order
ins 1 wechat A1 1.00 "2026-11-20T10:00:00Z"
ins 1 wechat A2 2.00 "2026-11-20T11:00:00Z"
ins 1 wechat A3 3.00 "2026-11-22T09:00:00Z"
# day 22's statement lists A2 (listed late) beside its own A3
{ echo "$header"; row 1 wechat A2 2.00 "2026-11-22T08:00:00Z"; row 1 wechat A3 3.00 "2026-11-22T09:00:00Z"; } >d22.csv
{ echo "$header"; row 1 wechat A1 1.00 "2026-11-20T10:00:00Z"; } >d20.csv
run reconcile -d "$DB" --report r22.json d22.csv
eq "day 22 first: balanced, exit 0" 0 "$RC"
run reconcile -d "$DB" --report r20.json --discrepancies d20.ndjson d20.csv
eq "then day 20: A2, listed by day 22's statement, is no discrepancy: exit 0" 0 "$RC"
check "day 20 is balanced with A2 matched" jtrue r20.json \
    "(x := r['reconciliation'])['verdict'] == 'balanced' and x['days'][0]['matched'] == 2 and x['days'][0]['table']['rows'] == 2"
check "and no line" test ! -s d20.ndjson
check "the report lists nothing resolved for day 22's marker" jtrue r22.json "r['reconciliation']['resolved'] == 0"
# The same days the other way round, in another pair: the same result.
ins 2 wechat A1 1.00 "2026-11-20T10:00:00Z"
ins 2 wechat A2 2.00 "2026-11-20T11:00:00Z"
ins 2 wechat A3 3.00 "2026-11-22T09:00:00Z"
sed 's/^1,/2,/' d20.csv >e20.csv
sed 's/^1,/2,/' d22.csv >e22.csv
run reconcile -d "$DB" --report s20.json e20.csv
eq "day 20 first: A2 missing_in_statement (past its grace), exit 5" 5 "$RC"
run reconcile -d "$DB" --report s22.json e22.csv
eq "then day 22, which lists A2: exit 0" 0 "$RC"
eq "A2's item is resolved by the later statement" \
    "missing_in_statement/resolved/listed by a later statement" "$(item 2 A2)"
run reconcile -d "$DB" --report s20b.json e20.csv
eq "day 20 again: as in the first order, exit 0" 0 "$RC"
eq "both orders give day 20 the same figures" \
    "$(jv r20.json "[(d['verdict'], d['matched'], d['table']['rows']) for d in r['reconciliation']['days']]")" \
    "$(jv s20b.json "[(d['verdict'], d['matched'], d['table']['rows']) for d in r['reconciliation']['days']]")"

# --- an explicit --period and a key listed on another day ---------------
init_db recon_period
ins 1 wechat B1 1.00 "2026-11-20T10:00:00Z"
ins 1 wechat B2 2.00 "2026-11-20T11:00:00Z"
{ echo "$header"; row 1 wechat B1 1.00 "2026-11-20T10:00:00Z"; row 1 wechat B2 2.00 "2026-11-21T08:00:00Z"; } >p.csv
run reconcile -d "$DB" --period 2026-11-20 --report p.json p.csv
eq "--period 20: B2 (listed on the 21st) matched by that listing: exit 0" 0 "$RC"
check "B2 is counted: two table rows, two matched, their money in the day" jtrue p.json \
    "(d := r['reconciliation']['days'][0])['table']['rows'] == 2 and d['matched'] == 2 and d['table']['amounts'] == {'CNY': '3.00'} and r['reconciliation']['outside_period'] == 1"

# --period D --repair missing: the rows outside the period were never
# compared; inserting them would hide their missing callbacks from their
# own day's reconcile.  Refused, nothing written.
ins 1 wechat B0 0.50 "2026-11-21T09:00:00Z"
{ echo "$header"; row 1 wechat B1 1.00 "2026-11-20T10:00:00Z"; row 1 wechat B3 3.00 "2026-11-20T12:00:00Z"; row 1 wechat B4 4.00 "2026-11-21T09:30:00Z"; } >pr.csv
before=$(all_tables)
run reconcile -d "$DB" --period 2026-11-20 --repair missing --report pr.json pr.csv
eq "--period 20 --repair missing with a row of the 21st: refused, exit 2" 2 "$RC"
check "the message names the rows outside the period" contains "$ERR" "1 statement row falls outside --period 2026-11-20..2026-11-20"
eq "nothing written: the table and the register as they were" "$before" "$(all_tables)"
run reconcile -d "$DB" --period 2026-11-20..2026-11-21 --repair missing --report pr2.json pr.csv
eq "a period covering the statement: the repair runs, exit 5" 5 "$RC"
eq "it inserted B3 and B4, nothing else" "B0 B1 B2 B3 B4" \
    "$(q "SELECT string_agg(out_trade_no, ' ' ORDER BY out_trade_no) FROM payment_callback")"
check "and reports them inserted" jtrue pr2.json \
    "(x := r['reconciliation'])['repaired'] == 2 and sorted(k['out_trade_no'] for k in x['repaired_keys']) == ['B3', 'B4']"

# --- the facts: minor units without a currency, another currency's text
init_db recon_facts
cat >facts.json <<'EOF'
{"channels": {"stripe": {"amount": {"path": "amount", "unit": "minor"}}}}
EOF
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES
   (1, 'stripe', 'J1', 'pay', 1, '{\"amount\": 951395}', '2026-11-20T10:00:00Z'),
   (1, 'stripe', 'J2', 'pay', 1, '{\"amount\": 500, \"currency\": \"JPY\"}', '2026-11-20T10:00:00Z'),
   (1, 'wechat', 'U1', 'pay', 1, '{\"amount\": \"10.00\", \"currency\": \"CNY\"}', '2026-11-20T10:00:00Z'),
   (1, 'wechat', 'U2', 'pay', 1, '{\"amount\": \"10.00\", \"currency\": \"CNY\"}', '2026-11-20T10:00:00Z')" >/dev/null
cat >f.csv <<'EOF'
tenant_id,channel,out_trade_no,callback_type,status,payload,received_at
1,stripe,J1,pay,1,"{""amount"": ""951395"", ""currency"": ""JPY""}",2026-11-20T10:00:00Z
1,stripe,J2,pay,1,"{""amount"": ""500"", ""currency"": ""JPY""}",2026-11-20T10:00:00Z
1,wechat,U1,pay,1,"{""amount"": ""USD 10.00"", ""currency"": ""CNY""}",2026-11-20T10:00:00Z
1,wechat,U2,pay,1,"{""amount"": ""CNY 10.00"", ""currency"": ""CNY""}",2026-11-20T10:00:00Z
EOF
run reconcile -d "$DB" --facts facts.json --report f.json --discrepancies f.ndjson f.csv
eq "a minor amount without a currency, another currency's text: unverified, exit 0" 0 "$RC"
check "stripe: J1 unverified (no currency to scale 951395 by), J2 matched" jtrue f.json \
    "[(d['channel'], d['matched'], d['unverified']) for d in r['reconciliation']['days']] == [('stripe', 1, 1), ('wechat', 1, 1)]"
check "no line for either" test ! -s f.ndjson
check "their amounts counted as without one" jtrue f.json \
    "[(d['statement']['without_amount'], d['table']['without_amount']) for d in r['reconciliation']['days']] == [(0, 1), (1, 0)]"

# --- pending items are not carried over; carried ones leave the verdict --
init_db recon_carry
ins 1 wechat C1 1.00 "2026-11-10T10:00:00Z"
ins 1 wechat C2 2.00 "2026-11-10T11:00:00Z"
ins 1 wechat C3 3.00 "2026-11-11T10:00:00Z"
ins 1 wechat C4 4.00 "2026-11-11T11:00:00Z"
{ echo "$header"; row 1 wechat C1 1.00 "2026-11-10T10:00:00Z"; } >c10.csv
{ echo "$header"; row 1 wechat C3 3.00 "2026-11-11T10:00:00Z"; } >c11.csv
{ echo "$header"; row 1 wechat C5 5.00 "2026-11-12T10:00:00Z"; } >c12.csv
ins 1 wechat C5 5.00 "2026-11-12T10:00:00Z"
# a grace of 1000 days keeps C2 and C4 pending
run reconcile -d "$DB" --grace 1000d c10.csv
eq "day 10: C2 pending, exit 0" 0 "$RC"
run reconcile -d "$DB" --grace 1000d c11.csv
eq "day 11: C4 pending, exit 0" 0 "$RC"
q "UPDATE idemload_recon_item SET state = 'open', category = 'missing_in_statement' WHERE out_trade_no = 'C4'" >/dev/null
run reconcile -d "$DB" --grace 1000d --report c12.json --discrepancies c12.ndjson c12.csv
eq "day 12: balanced, the open C4 carried over, not its verdict: exit 0" 0 "$RC"
check "carried over: C4 alone, not the pending C2" jtrue c12.json \
    "(x := r['reconciliation'])['carried_over'] == 1 and [i['out_trade_no'] for i in x['carried_over_items']] == ['C4'] and x['verdict'] == 'balanced'"
check "and not in the discrepancies file" test ! -s c12.ndjson
eq "C2 still pending" "pending/pending" "$(item 1 C2)"

# --- a report that cannot be written: the next run lists what appeared --
init_db recon_unreported
ins 1 wechat R1 1.00 "2026-11-20T10:00:00Z"
{ echo "$header"; row 1 wechat R1 1.50 "2026-11-20T10:00:00Z"; row 1 wechat R2 2.00 "2026-11-20T11:00:00Z"; } >u.csv
# the file-size limit reached writing the report (idemload ignores SIGXFSZ);
# under ThreadSanitizer, whose runtime writes a file of its own at start
# (and dies of that limit before main), a full device instead
if [ -n "${TSAN_OPTIONS:-}" ]; then
    "$IDEMLOAD" reconcile -d "$DB" --report /dev/full u.csv >/dev/null 2>u1.err
else
    ( ulimit -f 0; exec "$IDEMLOAD" reconcile -d "$DB" --report u.json u.csv ) >/dev/null 2>u1.err
fi
rc=$?
eq "the report cannot be written: exit 3" 3 $rc
eq "the register holds the run's two discrepancies" 2 \
    "$(q "SELECT count(*) FROM idemload_recon_item WHERE state = 'open'")"
run reconcile -d "$DB" --report u2.json u.csv
eq "the day again: exit 5" 5 "$RC"
check "the discrepancies no report showed are listed as appeared" jtrue u2.json \
    "(x := r['reconciliation'])['appeared'] == 2 and sorted(i['out_trade_no'] for i in x['appeared_items']) == ['R1', 'R2']"
run reconcile -d "$DB" --report u3.json u.csv
eq "and again: exit 5" 5 "$RC"
check "once shown, they do not appear again" jtrue u3.json "r['reconciliation']['appeared'] == 0"
eq "the register records which run's report showed them" 1 \
    "$(q "SELECT count(DISTINCT reported_by) FROM idemload_recon_item WHERE state = 'open'")"

# Killed after its COMMIT, before any output: a --repair missing whose
# insert waits on a lock another session holds on the table (the
# comparison only reads it) has committed its register; killed there
# (SIGKILL), it wrote no report.  The next run lists its discrepancies.
init_db recon_killed
ins 1 wechat K1 1.00 "2026-11-20T10:00:00Z"
{ echo "$header"; row 1 wechat K1 1.50 "2026-11-20T10:00:00Z"; row 1 wechat K2 2.00 "2026-11-20T11:00:00Z"; } >k.csv
PGAPPNAME=order_holder psql -X -q -c "BEGIN; LOCK TABLE payment_callback IN EXCLUSIVE MODE; SELECT pg_sleep(600)" >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 1200); do
    [ "$(q "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = 'order_holder' AND l.granted AND l.locktype = 'relation' AND l.relation = 'payment_callback'::regclass")" = 1 ] && break
    sleep 0.05
done
"$IDEMLOAD" reconcile -d "$DB" --repair missing --report k1.json k.csv >/dev/null 2>k1.err &
pid=$!
waiting=0
for _ in $(seq 1 6000); do
    waiting=$(q "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND NOT l.granted AND l.relation = 'payment_callback'::regclass")
    [ "$waiting" -gt 0 ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
check "the repair waits on the lock ($waiting sessions)" between "$waiting" 1 99
eq "its comparison committed: two open items" 2 \
    "$(q "SELECT count(*) FROM idemload_recon_item WHERE state = 'open'")"
kill -9 $pid 2>/dev/null
wait $pid
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'order_holder'" >/dev/null
wait $holder
check "killed: no report" test ! -e k1.json
run reconcile -d "$DB" --report k2.json k.csv
eq "the day again: exit 5" 5 "$RC"
check "the killed run's discrepancies are listed as appeared" jtrue k2.json \
    "(x := r['reconciliation'])['appeared'] == 2 and sorted(i['out_trade_no'] for i in x['appeared_items']) == ['K1', 'K2']"

# --- --repair merge resolves what it updated ----------------------------
init_db recon_merge
ins 1 wechat M1 1.00 "2026-11-20T10:00:00Z"
ins 1 wechat M2 1.00 "2026-11-20T12:00:00Z"
# M1's statement row is newer (the merge updates it); M2's is older than
# the table's row (stale: the merge leaves it)
{ echo "$header"; row 1 wechat M1 2.00 "2026-11-20T11:00:00Z"; row 1 wechat M2 2.00 "2026-11-20T09:00:00Z"; row 1 wechat M3 3.00 "2026-11-20T09:30:00Z"; } >m.csv
run reconcile -d "$DB" --repair merge --report m.json m.csv
eq "--repair merge: exit 5 (what it found before)" 5 "$RC"
eq "M1's amount_mismatch resolved, its row updated" \
    "amount_mismatch/resolved/updated by --repair merge" "$(item 1 M1)"
eq "M2's stays open: the merge left its row (stale)" "amount_mismatch/open" "$(item 1 M2)"
eq "M3's missing_in_table resolved, its row inserted" \
    "missing_in_table/resolved/inserted by --repair" "$(item 1 M3)"
check "the report: one row inserted (M3), two items resolved" jtrue m.json \
    "(x := r['reconciliation'])['repaired'] == 1 and x['resolved'] == 2"
finish
