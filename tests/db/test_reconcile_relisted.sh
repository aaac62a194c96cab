#!/usr/bin/env bash
# reconcile, a day reconciled again after a later statement listed one of
# its keys (SPEC.md, "Reconcile", "Across days"): a table row of day 20
# that day 20's statement lacks is pending (or, past the grace,
# missing_in_statement); day 22's statement lists the key, which resolves
# the item.  Reconciling day 20 again (a corrected or re-sent statement)
# must not open it again: the register knows a later statement listed it,
# so the rerun counts the row as matched, and a dry run says the same as
# the real run where the role may read the register.
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
D20=2026-11-20
D22=2026-11-22
# open: the key's items not resolved (category/state), one per line.
open_items() { q "SELECT coalesce(string_agg(category || '/' || state, ' ' ORDER BY id), '-') FROM idemload_recon_item
                  WHERE tenant_id = $1 AND out_trade_no = '$2' AND state <> 'resolved'"; }

init_db recon_relisted

# Pending on day 20, listed by day 22's statement, day 20 reconciled again.
ins 1 wx P1 1.00 "${D20}T01:00:00Z"
ins 1 wx Q2 2.00 "${D20}T23:00:00Z"
ins 1 wx R1 3.00 "${D22}T02:00:00Z"
{ echo "$header"; row 1 wx P1 1.00 "${D20}T01:00:00Z"; } >d20.csv
{ echo "$header"; row 1 wx Q2 2.00 "${D22}T00:10:00Z"; row 1 wx R1 3.00 "${D22}T02:00:00Z"; } >d22.csv
run reconcile -d "$DB" --grace 10000d d20.csv
eq "day 20 within a long grace: Q2 pending, exit 0" "0 pending/pending" "$RC $(open_items 1 Q2)"
run reconcile -d "$DB" --grace 10000d d22.csv
eq "day 22's statement lists Q2: resolved, exit 0" "0 -" "$RC $(open_items 1 Q2)"
before=$(all_tables)
run reconcile -d "$DB" --dry-run --grace 10000d --report dry.json --discrepancies dry.ndjson d20.csv
eq "a dry run of day 20 again: exit 0" 0 "$RC"
check "it counts Q2 as matched (listed by a later statement), not pending" jtrue dry.json \
    "(x := r['reconciliation'])['pending'] == 0 and x['matched'] == 2 and x['days'][0]['matched'] == 2 and x['verdict'] == 'balanced'"
eq "and writes nothing" "$before" "$(all_tables)"
run reconcile -d "$DB" --grace 10000d --report re.json --discrepancies re.ndjson d20.csv
eq "day 20 reconciled again within the grace: exit 0" 0 "$RC"
check "Q2 matched, not pending, as the dry run said" jtrue re.json \
    "(x := r['reconciliation'])['pending'] == 0 and x['matched'] == 2 and x['appeared'] == 0 and x['verdict'] == 'balanced'"
eq "no item of Q2 opened again" "-" "$(open_items 1 Q2)"
run reconcile -d "$DB" --report re2.json --discrepancies re2.ndjson d20.csv
eq "day 20 reconciled again past the grace: balanced, exit 0" 0 "$RC"
check "no missing_in_statement line for Q2" test ! -s re2.ndjson
check "Q2 matched in the report" jtrue re2.json \
    "(x := r['reconciliation'])['categories']['missing_in_statement'] == 0 and x['matched'] == 2 and x['appeared'] == 0"
eq "still no item of Q2 open" "-" "$(open_items 1 Q2)"
run reconcile -d "$DB" --dry-run --report dry2.json d20.csv
check "a dry run past the grace agrees: balanced, Q2 matched" jtrue dry2.json \
    "(x := r['reconciliation'])['verdict'] == 'balanced' and x['matched'] == 2"

# Escalated first (missing_in_statement, open), then listed by day 22's
# statement, then day 20 reconciled again: not opened again.
ins 2 wx P1 1.00 "${D20}T01:00:00Z"
ins 2 wx Q3 3.00 "${D20}T22:00:00Z"
{ echo "$header"; row 2 wx P1 1.00 "${D20}T01:00:00Z"; } >e20.csv
{ echo "$header"; row 2 wx Q3 3.00 "${D22}T00:20:00Z"; } >e22.csv
run reconcile -d "$DB" --discrepancies e20.ndjson e20.csv
eq "day 20 past the grace: Q3 missing_in_statement, exit 5" "5 missing_in_statement/open" "$RC $(open_items 2 Q3)"
run reconcile -d "$DB" --report e22.json e22.csv
eq "day 22's statement lists Q3: resolved, exit 0" "0 -" "$RC $(open_items 2 Q3)"
run reconcile -d "$DB" --report e20b.json --discrepancies e20b.ndjson e20.csv
eq "day 20 reconciled again: balanced, exit 0" 0 "$RC"
check "nothing in its discrepancies file" test ! -s e20b.ndjson
eq "Q3 not opened again" "-" "$(open_items 2 Q3)"

# A key no statement listed stays a discrepancy; a key listed by a later
# statement does not hide another day's row of another key.
ins 3 wx P1 1.00 "${D20}T01:00:00Z"
ins 3 wx Q4 4.00 "${D20}T05:00:00Z"
ins 3 wx Q5 5.00 "${D20}T06:00:00Z"
{ echo "$header"; row 3 wx P1 1.00 "${D20}T01:00:00Z"; } >c20.csv
{ echo "$header"; row 3 wx Q5 5.00 "${D22}T00:30:00Z"; } >c22.csv
run reconcile -d "$DB" c20.csv
eq "tenant 3's day 20: two missing_in_statement, exit 5" 5 "$RC"
run reconcile -d "$DB" c22.csv
run reconcile -d "$DB" --report c20b.json --discrepancies c20b.ndjson c20.csv
eq "day 20 again: Q4, never listed, is still missing_in_statement: exit 5" 5 "$RC"
check "Q4 is the one line; Q5 matched" jtrue c20b.json \
    "(x := r['reconciliation'])['categories']['missing_in_statement'] == 1 and x['matched'] == 2"
eq "the line is Q4's" "Q4" "$(json c20b.ndjson "r['out_trade_no']")"

# A role that may not read the register: the dry run says so and proceeds
# as without the register (Q2 of tenant 1 is missing_in_statement again).
q "DROP ROLE IF EXISTS idem_relisted_ro; CREATE ROLE idem_relisted_ro LOGIN; GRANT SELECT ON payment_callback TO idem_relisted_ro" >/dev/null
before=$(all_tables)
run reconcile -d "dbname=$PGDATABASE user=idem_relisted_ro" --dry-run --report ro.json d20.csv
eq "a role without the register: exit 5 (it cannot know a later statement listed Q2)" 5 "$RC"
check "it says the register is not readable" contains "$ERR" "may not read the register"
eq "and nothing changed" "$before" "$(all_tables)"
q "DROP OWNED BY idem_relisted_ro; DROP ROLE idem_relisted_ro" >/dev/null

finish
