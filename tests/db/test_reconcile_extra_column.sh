#!/usr/bin/env bash
# A column added to the column table is one row there plus its semantics
# (core/columns.h; issue 46, item 2): idemload_extra_column is idemload
# built with one more column (test_fact, a text fact), and every command's
# SQL follows it.  init creates the column, import loads it, reconcile
# stages and copies it (with the COPY list written by hand, reconcile
# failed, exit 4: "row field count is 10, expected 9"), and
# `reconcile --repair missing` inserts the statement's rows with it; the
# reconciliation is the same as the build without the column gives.
. "$(dirname "$0")/../lib.sh"
pg_use
export PGTZ=UTC
export IDEMLOAD_NOW=2026-11-23T12:00:00Z
XBIN=${IDEMLOAD_EXTRA_COLUMN:?IDEMLOAD_EXTRA_COLUMN (idemload built with one more column) not set}
# xrun ARGS...: run, with idemload_extra_column in place of idemload.
xrun() {
    local bin=$IDEMLOAD real=${IDEMLOAD_WRAP_REAL:-}
    if [ -n "${IDEMLOAD_WRAP:-}" ] && [ "$IDEMLOAD" = "$IDEMLOAD_WRAP" ]; then
        export IDEMLOAD_WRAP_REAL=$XBIN
    else
        IDEMLOAD=$XBIN
    fi
    run "$@"
    IDEMLOAD=$bin
    [ -z "$real" ] || export IDEMLOAD_WRAP_REAL=$real
}
# lines FILE: the discrepancies, one line each: category key amounts difference
lines() {
    python3 -c "
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    s, t = o.get('statement') or {}, o.get('table') or {}
    print(o['category'], o.get('out_trade_no'), s.get('amount'), t.get('amount'), o.get('difference'))
" "$1" | sort | tr '\n' ';'
}

new_db recon_extra_column
xrun init -d "$DB"
eq "init of the build with one more column" 0 "$RC"
eq "the table has the column, as its row says (text, NOT NULL, DEFAULT '')" "text|t|''::text" \
    "$(q "SELECT format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)
          FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE a.attrelid = 'payment_callback'::regclass AND a.attname = 'test_fact'")"

P='"{""amount"": ""%s"", ""currency"": ""CNY""}"'
cat >table.csv <<EOF
tenant_id,channel,out_trade_no,callback_type,status,payload,received_at,test_fact
1,wechat,K1,pay,1,$(printf "$P" 10.00),2026-11-20T01:00:00Z,t-one
1,wechat,K2,pay,1,$(printf "$P" 20.00),2026-11-20T02:00:00Z,t-two
1,wechat,K3,pay,1,$(printf "$P" 30.00),2026-11-20T03:00:00Z,t-three
EOF
xrun import -q -d "$DB" table.csv
eq "import with the column" 0 "$RC"
eq "each row holds its value of the column" "K1 t-one,K2 t-two,K3 t-three" \
    "$(q "SELECT string_agg(out_trade_no || ' ' || test_fact, ',' ORDER BY out_trade_no)
          FROM payment_callback")"

# The statement: K1 agrees, K2 differs, K3 is not listed, K4 is not in the table.
cat >stmt.csv <<EOF
tenant_id,channel,out_trade_no,callback_type,status,payload,received_at,test_fact
1,wechat,K1,pay,1,$(printf "$P" 10.00),2026-11-20T01:00:00Z,s-one
1,wechat,K2,pay,1,$(printf "$P" 25.00),2026-11-20T02:00:00Z,s-two
1,wechat,K4,pay,1,$(printf "$P" 40.00),2026-11-20T04:00:00Z,s-four
EOF
cat >facts.json <<'JSON'
{"default": {"amount": {"path": "amount", "unit": "major"}, "currency": {"path": "currency"}}}
JSON
R=(reconcile -d "$DB" --facts facts.json --period 2026-11-20)
WANT="amount_mismatch K2 25.00 20.00 5.00;missing_in_statement K3 None 30.00 -30.00;missing_in_table K4 40.00 None 40.00;"

run "${R[@]}" --dry-run --discrepancies plain.ndjson stmt.csv
eq "the build without the column: exit 5, the three discrepancies" "5 $WANT" "$RC $(lines plain.ndjson)"
xrun "${R[@]}" --dry-run --discrepancies extra.ndjson stmt.csv
eq "the build with it: the same (its statement staged with the column)" "5 $WANT" \
    "$RC $(lines extra.ndjson)"
contains "$ERR" "field count" && fail "the COPY: $(head -c 300 "$ERR")"

xrun "${R[@]}" --repair missing --discrepancies repair.ndjson stmt.csv
eq "reconcile --repair missing with the column: the same discrepancies" "5 $WANT" \
    "$RC $(lines repair.ndjson)"
eq "the missing row inserted with the statement's value of the column" "K4 s-four 40.00" \
    "$(q "SELECT out_trade_no || ' ' || test_fact || ' ' || (payload ->> 'amount')
          FROM payment_callback WHERE out_trade_no = 'K4' AND deleted_at IS NULL")"
eq "the other rows as they were" "K1 t-one,K2 t-two,K3 t-three,K4 s-four" \
    "$(q "SELECT string_agg(out_trade_no || ' ' || test_fact, ',' ORDER BY out_trade_no)
          FROM payment_callback WHERE deleted_at IS NULL")"

AFTER="amount_mismatch K2 25.00 20.00 5.00;missing_in_statement K3 None 30.00 -30.00;"
run "${R[@]}" --dry-run --discrepancies plain2.ndjson stmt.csv
eq "then, without the column: K4 matched" "5 $AFTER" "$RC $(lines plain2.ndjson)"
xrun "${R[@]}" --dry-run --discrepancies extra2.ndjson stmt.csv
eq "and with it: the same" "5 $AFTER" "$RC $(lines extra2.ndjson)"
finish
