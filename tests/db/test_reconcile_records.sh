#!/usr/bin/env bash
# Reconcile on real bills, what a statement's records are (issue 45): a
# PayPal STL's days are cut in the zone of its own SH window when
# --timezone is not given (every STL time carries its offset), not in UTC.
. "$(dirname "$0")/../lib.sh"
init_db recon_records
python3 "$SRC/tests/make_bills.py" . || { echo "make_bills.py failed"; exit 1; }

# recon ARGS...: reconcile with a report r.json and discrepancies d.ndjson.
recon() {
    rm -f r.json d.ndjson
    run reconcile -d "$DB" --report r.json --discrepancies d.ndjson "$@"
}
days() { json r.json "' '.join([r['reconciliation']['zone']] + ['%s:%s' % (d['day'], d['statement']['rows']) for d in r['reconciliation']['days']])"; }

# --- a PayPal day in the zone of the report's SH window
# The published STL of make_bills.py (pub-paypal-stl.csv: SH window
# 2024/08/20 00:00:00 -0700 to 23:59:59 -0700), its payment completed at
# 20:02:05 -0700 instead of 01:02:05: 03:02:05 the next day in UTC, inside
# the window PayPal reports it in.
sed 's|2024/08/20 01:02:05 -0700|2024/08/20 20:02:05 -0700|' pub-paypal-stl.csv >paypal-late.csv
recon --profile paypal-stl --set tenant_id=30 --dry-run paypal-late.csv
eq "paypal without --timezone: exit 5 (the table lacks the payment)" 5 $RC
eq "paypal without --timezone: the SH window's -07:00 cuts the day, the payment on the 20th" \
    "-07:00 2024-08-20:1" "$(days)"
check "the period is the window's day" jtrue r.json \
    "r['reconciliation']['period'] == {'from': '2024-08-20', 'to': '2024-08-20'}"
recon --profile paypal-stl --set tenant_id=30 --dry-run --timezone Z paypal-late.csv
eq "paypal with --timezone Z: UTC's day, the 21st" "Z 2024-08-21:1" "$(days)"

finish
