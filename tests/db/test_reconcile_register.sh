#!/usr/bin/env bash
# reconcile across runs (SPEC.md, "Reconcile", "Across days" and "Writes"):
# a table row the statement lacks is pending within --grace, resolved when
# a later statement lists it, escalated to missing_in_statement after it
# (then carried over, not in the run's verdict); a corrected statement of
# the same day supersedes the first run's items; --repair missing inserts
# exactly what the table lacks and changes no row, after which the day is
# balanced; --dry-run by a role that may only read writes nothing at all.
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
MODEL="python3 $SRC/tests/expected_recon.py"
# "Now" pinned (IDEMLOAD_NOW, for tests: src/util/clock.h) to noon of D1,
# so that the days, the grace and the ages mean the same whenever the test
# runs (it broke across UTC midnight when D0 and D1 followed the clock).
D0=2026-12-01
D1=2026-12-02
export IDEMLOAD_NOW=${D1}T12:00:00Z
OLD=2026-11-10
item() { q "SELECT category || '/' || state || coalesce('/' || resolution, '') FROM idemload_recon_item
            WHERE tenant_id = $1 AND out_trade_no = '$2' ORDER BY id DESC LIMIT 1"; }

init_db recon_reg

# Pending within the grace, resolved by the next day's statement.
ins 1 wechat P1 1.00 "${D0}T10:00:00Z"
ins 1 wechat P2 2.00 "${D0}T11:00:00Z"
{ echo "$header"; row 1 wechat P1 1.00 "${D0}T10:00:00Z"; } >a.csv
run reconcile -d "$DB" --report a.json --discrepancies a.ndjson a.csv
eq "a row the statement lacks within the grace is pending, not a discrepancy: exit 0" 0 "$RC"
check "it is counted as pending" jtrue a.json "r['reconciliation']['pending'] == 1 and r['reconciliation']['verdict'] == 'balanced'"
check "and not in the discrepancies file" test ! -s a.ndjson
eq "the register holds it as pending" "pending/pending" "$(item 1 P2)"
ins 1 wechat P3 3.00 "${D1}T00:30:00Z"
{ echo "$header"; row 1 wechat P2 2.00 "${D1}T00:10:00Z"; row 1 wechat P3 3.00 "${D1}T00:30:00Z"; } >b.csv
run reconcile -d "$DB" --report b.json b.csv
eq "the next day's statement lists it: exit 0" 0 "$RC"
eq "the pending item is resolved by the later statement" \
    "pending/resolved/listed by a later statement" "$(item 1 P2)"
check "the report counts it resolved" jtrue b.json "r['reconciliation']['resolved'] == 1"

# Escalated past the grace, then carried over.
ins 5 wechat Q1 9.00 "${D0}T09:00:00Z"
ins 5 wechat Q0 1.00 "${D0}T08:00:00Z"
{ echo "$header"; row 5 wechat Q0 1.00 "${D0}T08:00:00Z"; } >e0.csv
run reconcile -d "$DB" e0.csv
eq "tenant 5's day: pending, exit 0" 0 "$RC"
ins 5 wechat Q2 2.00 "${D1}T08:00:00Z"
{ echo "$header"; row 5 wechat Q2 2.00 "${D1}T08:00:00Z"; } >e1.csv
before=$(all_tables)
run reconcile -d "$DB" --dry-run --grace 0m --report e1dry.json e1.csv
eq "a dry run first: exit 0" 0 "$RC"
check "it carries over what the run would: the pending item past its grace, as missing_in_statement" jtrue e1dry.json \
    "r['reconciliation']['carried_over'] == 1 and r['reconciliation']['carried_over_known'] and r['reconciliation']['carried_over_items'][0]['out_trade_no'] == 'Q1' and r['reconciliation']['carried_over_items'][0]['category'] == 'missing_in_statement'"
eq "and escalates nothing" "$before" "$(all_tables)"
run reconcile -d "$DB" --grace 0m --report e1.json --discrepancies e1.ndjson e1.csv
eq "a later run past the grace escalates it; carried over, not this run's verdict: exit 0" 0 "$RC"
eq "escalated to missing_in_statement, open" "missing_in_statement/open" "$(item 5 Q1)"
check "the run reports the escalation as a discrepancy that appeared (listed), though carried over" jtrue e1.json \
    "(x := r['reconciliation'])['escalated'] == 1 and x['appeared'] == 1 and [i['out_trade_no'] for i in x['appeared_items']] == ['Q1'] and x['verdict'] == 'balanced'"
check "and the summary says so" contains "$ERR" "escalated: 1 row of earlier days"
check "carried over with its age" jtrue e1.json \
    "r['reconciliation']['carried_over'] == 1 and r['reconciliation']['carried_over_items'][0]['out_trade_no'] == 'Q1' and r['reconciliation']['carried_over_items'][0]['age_days'] == 1"
check "carried-over items are not in this run's discrepancies file" test ! -s e1.ndjson
run reconcile -d "$DB" --dry-run --report e1dry2.json e1.csv
check "a dry run after it carries over the same item" jtrue e1dry2.json \
    "r['reconciliation']['carried_over'] == 1 and r['reconciliation']['carried_over_items'][0]['out_trade_no'] == 'Q1'"

# A corrected statement for the same day supersedes the first run's items.
ins 6 wechat S1 11.00 "${OLD}T09:00:00Z"
{ echo "$header"; row 6 wechat S1 10.00 "${OLD}T09:00:00Z"; } >s1.csv
run reconcile -d "$DB" --discrepancies s1.ndjson s1.csv
eq "the first statement disagrees: exit 5" 5 "$RC"
check "a registered line has its first_seen" jtrue s1.ndjson "r['first_seen'] is not None"
first=$(json s1.ndjson "r['first_seen']")
run reconcile -d "$DB" --discrepancies s1b.ndjson s1.csv
eq "reconciled again, the item keeps its first_seen" "$first" "$(json s1b.ndjson "r['first_seen']")"
eq "one open item, not two" 1 "$(q "SELECT count(*) FROM idemload_recon_item WHERE tenant_id = 6 AND state = 'open'")"
{ echo "$header"; row 6 wechat S1 11.00 "${OLD}T09:00:00Z"; } >s2.csv
run reconcile -d "$DB" --report s2.json s2.csv
eq "the corrected statement balances the day: exit 0" 0 "$RC"
eq "the first run's item is resolved: the corrected statement now agrees with the table" \
    "amount_mismatch/resolved/the statement now agrees with the table" "$(item 6 S1)"
check "the report lists it as resolved" jtrue s2.json "r['reconciliation']['resolved'] == 1 and r['reconciliation']['appeared'] == 0"
eq "the day's run record is superseded by the latest run" "discrepancies:true discrepancies:true balanced:false" \
    "$(q "SELECT string_agg(verdict || ':' || (superseded_by IS NOT NULL)::text, ' ' ORDER BY id) FROM idemload_recon_run WHERE tenant_id = 6")"

check "and lists it, with why" jtrue s2.json \
    "[(i['out_trade_no'], i['category'], i['resolution']) for i in r['reconciliation']['resolved_items']] == [('S1', 'amount_mismatch', 'the statement now agrees with the table')] and r['reconciliation']['appeared_items'] == [] and r['reconciliation']['resolved_items_omitted'] == 0"

# The same day reconciled again past the grace: its pending item becomes
# missing_in_statement in place (it keeps its first_seen, and is listed as
# appeared, not as resolved and opened again); the reverse, a longer grace,
# makes it pending again without resolving it.
ins 8 wechat G1 1.00 "${OLD}T09:00:00Z"
ins 8 wechat G2 2.00 "${OLD}T10:00:00Z"
{ echo "$header"; row 8 wechat G1 1.00 "${OLD}T09:00:00Z"; } >g.csv
run reconcile -d "$DB" --grace 10000d g.csv
eq "within a long grace the row is pending: exit 0" 0 "$RC"
eq "pending in the register" "pending/pending" "$(item 8 G2)"
first=$(q "SELECT first_seen FROM idemload_recon_item WHERE tenant_id = 8 AND out_trade_no = 'G2'")
run reconcile -d "$DB" --grace 0m --report g2.json g.csv
eq "the same day past the grace: missing_in_statement, exit 5" 5 "$RC"
eq "the item is escalated in place" "missing_in_statement/open" "$(item 8 G2)"
eq "one item for the key, its first_seen kept" "1 $first" \
    "$(q "SELECT count(*) || ' ' || min(first_seen) FROM idemload_recon_item WHERE tenant_id = 8 AND out_trade_no = 'G2'")"
check "the report: appeared 1 (listed), resolved 0" jtrue g2.json \
    "(x := r['reconciliation'])['appeared'] == 1 and x['resolved'] == 0 and [i['out_trade_no'] for i in x['appeared_items']] == ['G2'] and x['resolved_items'] == []"
run reconcile -d "$DB" --grace 10000d --report g3.json g.csv
eq "a longer grace again: pending, exit 0" 0 "$RC"
eq "the item is pending again, still one" "1 pending" \
    "$(q "SELECT count(*) || ' ' || min(state) FROM idemload_recon_item WHERE tenant_id = 8 AND out_trade_no = 'G2'")"
check "nothing reported resolved or appeared" jtrue g3.json \
    "r['reconciliation']['appeared'] == 0 and r['reconciliation']['resolved'] == 0"

# A backfill of a day before one with open items carries none of them over:
# they are not of an earlier day.
ins 9 wechat L1 1.00 "${D0}T09:00:00Z"
ins 9 wechat L0 1.00 "${D0}T08:00:00Z"
{ echo "$header"; row 9 wechat L0 1.00 "${D0}T08:00:00Z"; } >l0.csv
run reconcile -d "$DB" --grace 0m l0.csv
eq "the later day: missing_in_statement, exit 5" 5 "$RC"
ins 9 wechat L9 1.00 "${OLD}T09:00:00Z"
{ echo "$header"; row 9 wechat L9 1.00 "${OLD}T09:00:00Z"; } >l9.csv
run reconcile -d "$DB" --report l9.json l9.csv
eq "the older day, backfilled: balanced, exit 0" 0 "$RC"
check "nothing carried over from the later day" jtrue l9.json \
    "r['reconciliation']['carried_over'] == 0 and r['reconciliation']['carried_over_items'] == []"
check "nor said to be in the summary" test "$(grep -c "carried over" "$ERR")" = 0

# --repair missing: inserts what the table lacks, changes nothing else.
ins 7 wechat R1 1.00 "${OLD}T09:00:00Z"
{ echo "$header"; row 7 wechat R1 1.00 "${OLD}T09:00:00Z"; row 7 wechat R3 3.00 "${OLD}T10:00:00Z"
  row 7 wechat R4 4.40 "${OLD}T11:00:00Z"; } >r.csv
existing=$(q "SELECT md5(string_agg(id || ':' || xmin::text || payload::text, ',' ORDER BY id)) FROM payment_callback")
run reconcile -d "$DB" --repair missing --report rep.json r.csv
eq "--repair missing: exit 5, the discrepancies found before repairing" 5 "$RC"
eq "no existing row changed" "$existing" \
    "$(q "SELECT md5(string_agg(id || ':' || xmin::text || payload::text, ',' ORDER BY id)) FROM payment_callback WHERE out_trade_no NOT IN ('R3', 'R4')")"
check "the report counts what it inserted" jtrue rep.json "r['reconciliation']['repaired'] == 2"
check "the report lists what it inserted, by key, file and line" jtrue rep.json \
    "r['reconciliation']['repaired_keys'] == [{'tenant_id': 7, 'channel': 'wechat', 'out_trade_no': k, 'callback_type': 'pay', 'file': 'r.csv', 'line': n} for k, n in (('R3', 3), ('R4', 4))] and r['reconciliation']['repaired_keys_omitted'] == 0"
check "the summary names the inserted keys" grep -q "inserted: tenant 7 wechat R3 pay, tenant 7 wechat R4 pay\$" "$ERR"
eq "the missing rows are in, the statement's version" '{"amount": "3.00", "currency": "CNY"}|{"amount": "4.40", "currency": "CNY"}' \
    "$(q "SELECT string_agg(payload::text, '|' ORDER BY out_trade_no) FROM payment_callback WHERE tenant_id = 7 AND out_trade_no IN ('R3', 'R4')")"
check "through the merge: the ledger holds the file" test "$(q "SELECT count(*) FROM idemload_ledger")" -ge 1
run reconcile -d "$DB" --discrepancies r2.ndjson r.csv
eq "reconciled again after the repair: balanced, exit 0" 0 "$RC"
psql -X -q -c "\\copy (SELECT tenant_id, channel, out_trade_no, callback_type, status, payload::text AS payload,
    to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS received_at
    FROM payment_callback WHERE deleted_at IS NULL AND tenant_id = 7) TO 'table7.csv' WITH (FORMAT csv, HEADER true)"
check "the table equals the model's balance for the day" jtrue <($MODEL --table table7.csv r.csv) \
    "r['lines'] == [] and r['verdict'] == 'balanced'"

# A key the statement lists twice with different amounts is one
# duplicate_in_statement and one missing_in_table line, both showing the
# version import would keep (the later line on equal received_at); the
# repair inserts that version, not the first.
{ echo "$header"; row 14 wechat DU 21.00 "${OLD}T09:00:00Z"; row 14 wechat DU 22.00 "${OLD}T09:00:00Z"
  row 14 wechat DV 5.00 "${OLD}T10:00:00Z"; row 14 wechat DV 4.00 "${OLD}T09:00:00Z"; } >du.csv
run reconcile -d "$DB" --repair missing --discrepancies du.ndjson du.csv
eq "the duplicated keys: exit 5" 5 "$RC"
check "the missing_in_table lines show the kept versions (22.00, and 5.00 the latest)" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('du.ndjson')]
m={l['out_trade_no']: l['statement']['amount'] for l in ls if l['category'] == 'missing_in_table'}
sys.exit(0 if m == {'DU': '22.00', 'DV': '5.00'} else 1)"
eq "the repair inserted those versions" '22.00|5.00' \
    "$(q "SELECT string_agg(payload->>'amount', '|' ORDER BY out_trade_no) FROM payment_callback WHERE tenant_id = 14")"

# A huge repair: the report lists the first 1000 inserted keys and counts
# the rest; the summary names five.
python3 -c "
print('$header')
for i in range(1003):
    print('11,bulk,B%04d,pay,1,\"{\"\"amount\"\": \"\"1.00\"\", \"\"currency\"\": \"\"CNY\"\"}\",${OLD}T10:00:00Z' % i)
" >bulk.csv
run reconcile -d "$DB" --repair missing --report bulk.json bulk.csv
eq "--repair missing of 1003 rows: exit 5" 5 "$RC"
check "all 1003 inserted, the first 1000 listed in the files' order, 3 omitted" jtrue bulk.json \
    "r['reconciliation']['repaired'] == 1003 and [k['out_trade_no'] for k in r['reconciliation']['repaired_keys']] == ['B%04d' % i for i in range(1000)] and r['reconciliation']['repaired_keys_omitted'] == 3"
check "the summary names five and points at the report" grep -q "tenant 11 bulk B0004 pay ... (1003 in all; the report's repaired_keys lists the first 1000)" "$ERR"
eq "and they are in the table" 1003 "$(q "SELECT count(*) FROM payment_callback WHERE tenant_id = 11")"

# --repair merge: import after the comparison; the report has both.
ins 10 wechat U1 1.00 "${OLD}T09:00:00Z"
{ echo "$header"; row 10 wechat U1 2.00 "${OLD}T09:30:00Z"; row 10 wechat U2 5.00 "${OLD}T10:00:00Z"; } >m.csv
run reconcile -d "$DB" --repair merge --report merge.json m.csv
eq "--repair merge: exit 5, the comparison made before the merge" 5 "$RC"
check "the report has the comparison and the merge's figures" jtrue merge.json \
    "r['reconciliation']['categories']['amount_mismatch'] == 1 and r['reconciliation']['categories']['missing_in_table'] == 1 and r['totals']['inserted'] == 1 and r['totals']['updated'] == 1"
eq "the newer statement version won, as import merges" '{"amount": "2.00", "currency": "CNY"}' \
    "$(q "SELECT payload::text FROM payment_callback WHERE tenant_id = 10 AND out_trade_no = 'U1' AND deleted_at IS NULL")"
run reconcile -d "$DB" m.csv
eq "after the merge the day is balanced" 0 "$RC"
run reconcile -d "$DB" --dry-run --repair missing m.csv
eq "--repair with --dry-run: refused, exit 2" 2 "$RC"

# The page lists the first 20 carried-over items with their callback_type
# and says how many more the report holds.
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
   SELECT 13, 'wechat', 'C' || i, CASE WHEN i % 2 = 0 THEN 'pay' ELSE 'refund:' || i END, 1,
          '{\"amount\": \"1.00\", \"currency\": \"CNY\"}', '${OLD}T09:00:00Z'
   FROM generate_series(1, 23) i" >/dev/null
ins 13 wechat C0 1.00 "${OLD}T09:00:00Z"
{ echo "$header"; row 13 wechat C0 1.00 "${OLD}T09:00:00Z"; } >c0.csv
run reconcile -d "$DB" c0.csv
eq "23 rows the old day's statement lacks: exit 5" 5 "$RC"
ins 13 wechat C99 1.00 "${D1}T09:00:00Z"
{ echo "$header"; row 13 wechat C99 1.00 "${D1}T09:00:00Z"; } >c1.csv
run reconcile -d "$DB" --report c1.json --html c1.html c1.csv
check "the report carries all 23 over" jtrue c1.json "r['reconciliation']['carried_over'] == 23"
check "the page lists 20 of them" test "$(grep -o '<tr><td>missing_in_statement</td><td>13</td>' c1.html | wc -l)" = 20
check "and says 3 more are in the report" grep -q '3 more in the report' c1.html
check "with their callback_type" grep -q '<th>callback_type</th><th>day</th><th>age (days)</th>' c1.html
check "a refund's kind shown" grep -q '<td class="key">refund:1</td>' c1.html

# A register of more open items than the report lists: all are counted,
# the oldest RECON_CARRIED_LISTED (1000) listed, the rest said to be omitted
# (memory and the report stay bounded whatever the register holds).
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
   SELECT 77, 'wechat', 'M' || i, 'pay', 1, '{\"amount\": \"1.00\", \"currency\": \"CNY\"}',
          CASE WHEN i <= 3 THEN '2026-11-09T09:00:00Z' ELSE '${OLD}T09:00:00Z' END::timestamptz
   FROM generate_series(1, 1203) i" >/dev/null
ins 77 wechat M0 1.00 "2026-11-09T08:00:00Z"
ins 77 wechat M00 1.00 "${OLD}T08:00:00Z"
{ echo "$header"; row 77 wechat M0 1.00 "2026-11-09T08:00:00Z"; row 77 wechat M00 1.00 "${OLD}T08:00:00Z"; } >m0.csv
run reconcile -d "$DB" m0.csv
eq "1203 rows two old days' statement lacks: exit 5" 5 "$RC"
ins 77 wechat Z99 1.00 "${D1}T09:00:00Z"
{ echo "$header"; row 77 wechat Z99 1.00 "${D1}T09:00:00Z"; } >m1.csv
run reconcile -d "$DB" --dry-run --report m1dry.json m1.csv
check "a dry run counts all 1203 carried over, lists the oldest 1000 and says 203 are omitted" jtrue m1dry.json \
    "(x := r['reconciliation'])['carried_over'] == 1203 and len(x['carried_over_items']) == 1000 and x['carried_over_items_omitted'] == 203 and x['carried_over_items'][0]['day'] == '2026-11-09' and x['carried_over_items'][3]['day'] == '${OLD}'"
run reconcile -d "$DB" --report m1.json --html m1.html m1.csv
eq "the next day: balanced, exit 0" 0 "$RC"
check "the run counts all 1203 carried over and lists 1000" jtrue m1.json \
    "(x := r['reconciliation'])['carried_over'] == 1203 and len(x['carried_over_items']) == 1000 and x['carried_over_items_omitted'] == 203"
check "the summary counts all of them, with the oldest's age" \
    contains "$ERR" "carried over: 1203 open discrepancies of earlier days (oldest 23 days)"
check "the page counts all of them" grep -q 'Carried over from earlier days: 1203' m1.html
check "the page says what the balanced exit 0 means" grep -qF 'balanced: the statements and the table agree' m1.html
check "and says where the rest are" grep -q '1183 more: the report.s carried_over_items lists the next 980, the register holds them all' m1.html

# --dry-run by a role that may only read the table: nothing written at all.
q "DROP ROLE IF EXISTS idem_recon_ro; CREATE ROLE idem_recon_ro LOGIN; GRANT SELECT ON payment_callback TO idem_recon_ro" >/dev/null
{ echo "$header"; row 6 wechat S1 10.00 "${OLD}T09:00:00Z"; row 6 wechat S9 1.00 "${OLD}T09:00:00Z"; } >ro.csv
before=$(all_tables)
run reconcile -d "dbname=$PGDATABASE user=idem_recon_ro" --dry-run --report ro.json --discrepancies ro.ndjson ro.csv
eq "a read-only role's dry run: exit 5 (it finds the discrepancies)" 5 "$RC"
eq "and every table is as it was (register included)" "$before" "$(all_tables)"
check "it says it may not read the register, so what is carried over is not known" \
    contains "$ERR" "carried over: not known"
check "and the report says so" jtrue ro.json "r['reconciliation']['carried_over_known'] is False"
check "the dry run's lines have no first_seen" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('ro.ndjson')]
sys.exit(0 if len(ls) == 2 and all(l['first_seen'] is None for l in ls) else 1)"
run reconcile -d "dbname=$PGDATABASE user=idem_recon_ro" ro.csv
eq "the same role without --dry-run may not write the register: exit 4 (a privilege the server refuses, as in every command)" 4 "$RC"
check "it says which table it may not write" contains "$ERR" "permission denied for table idemload_recon_"
eq "and still nothing changed" "$before" "$(all_tables)"
q "DROP OWNED BY idem_recon_ro; DROP ROLE idem_recon_ro" >/dev/null

# A backfill of an older day leaves a later day's pending item to its own
# runs: not escalated, however its grace stands ("of earlier days").
init_db recon_reg_backfill
ins 6 wechat L0 1.00 "${OLD}T09:00:00Z"
ins 6 wechat L1 4.00 "${D0}T09:00:00Z"
ins 6 wechat L2 5.00 "${D0}T10:00:00Z"
{ echo "$header"; row 6 wechat L2 5.00 "${D0}T10:00:00Z"; } >l0.csv
run reconcile -d "$DB" l0.csv
eq "tenant 6's later day: L1 pending, exit 0" "0 pending/pending" "$RC $(item 6 L1)"
{ echo "$header"; row 6 wechat L0 1.00 "${OLD}T09:00:00Z"; } >lold.csv
run reconcile -d "$DB" --grace 0m --report lold.json lold.csv
eq "a backfill of an older day, past every grace: exit 0" 0 "$RC"
eq "the later day's pending item stays pending" "pending/pending" "$(item 6 L1)"
check "and nothing is escalated" jtrue lold.json "r['reconciliation']['escalated'] == 0"

finish
