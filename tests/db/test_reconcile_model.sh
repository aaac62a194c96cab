#!/usr/bin/env bash
# idemload reconcile against tests/expected_recon.py's model, run after
# run, on generated scenarios of several days (tests/recon_differential.py:
# seeded, 20 scenarios of 8 tenants each, about 85 runs): plain
# runs that write the register and dry runs, days in a random order,
# corrected statements, --period over two days' rows, a day between two
# statement days, long-passed and thousand-year graces, dressed amounts,
# minor units with and without a currency, another currency's code.  Each
# run's exit status, discrepancy lines, per-day figures (rows, amounts per
# currency and kind, without an amount, matched, unverified, pending,
# categories' counts and amounts) and register counts (carried over,
# appeared, resolved, escalated, outside the period) must agree.  The
# model's own rules are checked by hand in tests/cli/test_expected_recon.sh.
. "$(dirname "$0")/../lib.sh"
pg_use
SEED=${IDEMLOAD_RECON_SEED:-47}
N=20
[ -n "${IDEMLOAD_INSTRUMENTED:-}" ] && N=6
init_db recon_model
out=$(python3 "$SRC/tests/recon_differential.py" --db "$DB" --seed "$SEED" --scenarios $N 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
eq "seed $SEED, $N scenarios: idemload and the model agree on every run" 0 $rc
finish
