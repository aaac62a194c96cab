#!/usr/bin/env bash
# reconcile, an amount beyond what numeric holds (issue 47, point 2;
# README "Money", SPEC.md "The facts compared"): numeric takes 131,072
# digits before the point and 16,383 after.  One amount text past that, on
# a callback or on a statement row, made every reconcile of its tenant and
# channel exit 4 with nothing compared; it is an amount that cannot be
# read: its row is unverified and counted without_amount, the other rows
# of the pair are compared as usual, and the run ends normally.
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
D=2026-11-20
init_db recon_amount_range

# insb KEY AMOUNT TIME: a table row through psql's standard input (the
# amount is longer than one command-line argument may be)
insb() {
    printf "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES (1, 'wx', '%s', 'pay', 1, '{\"amount\": \"%s\", \"currency\": \"CNY\"}', '%s');\n" "$@" |
        psql -X -q -v ON_ERROR_STOP=1 >/dev/null || fail "insert $1"
}
big_int=$(head -c 131073 /dev/zero | tr '\0' 9)
big_frac=1.$(head -c 16384 /dev/zero | tr '\0' 5)
insb T1 "$big_int" "${D}T01:00:00Z"     # the callback beyond range
ins 1 wx T2 1.00 "${D}T02:00:00Z"
insb T3 "$big_frac" "${D}T03:00:00Z"
ins 1 wx OK 4.00 "${D}T04:00:00Z"
{
    echo "$header"
    row 1 wx T1 1.00 "${D}T01:00:00Z"
    row 1 wx T2 "$big_int" "${D}T02:00:00Z"  # the statement row beyond range
    row 1 wx T3 3.00 "${D}T03:00:00Z"
    row 1 wx OK 4.00 "${D}T04:00:00Z"
} >st.csv
for dry in --dry-run ""; do
    run reconcile -d "$DB" $dry --report r.json --discrepancies d.ndjson st.csv
    eq "reconcile ${dry:-(plain)}: exit 0, nothing failed" 0 "$RC"
    check "reconcile ${dry:-(plain)}: one row matched, three unverified" jtrue r.json \
        "(d := r['reconciliation']['days'][0])['matched'] == 1 and d['unverified'] == 3"
    check "reconcile ${dry:-(plain)}: each side counts its unreadable amounts" jtrue r.json \
        "(d := r['reconciliation']['days'][0])['statement']['without_amount'] == 1 and d['table']['without_amount'] == 2 and d['statement']['amounts'] == {'CNY': '8.00'} and d['table']['amounts'] == {'CNY': '5.00'}"
    eq "reconcile ${dry:-(plain)}: no discrepancy line" 0 "$(wc -l <d.ndjson)"
done
# A missing row of that amount is a discrepancy like any other, in no sum.
q "DELETE FROM payment_callback WHERE out_trade_no = 'T2'" >/dev/null
run reconcile -d "$DB" --dry-run --report r2.json st.csv
eq "the row beyond range missing in the table: exit 5" 5 "$RC"
check "... counted in missing_in_table without an amount" jtrue r2.json \
    "r['reconciliation']['days'][0]['categories']['missing_in_table'] == {'count': 1, 'amount': None, 'amounts': {}, 'without_amount': 1, 'absolute': {}}"
finish
