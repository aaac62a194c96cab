#!/usr/bin/env bash
# Property (issue 29; SPEC.md "Money facts"): for random bills in the WeChat
# (current and older) and Alipay layouts, with random amounts, decimals,
# negative fees and refunds, blanks, BOMs and line ends that the profiles'
# cleanup takes off, the totals the bill states (computed independently by
# tests/gen_bill_totals.py with Python's decimal module) agree with its rows:
# validate passes; with one row's amount changed by a unit of its last
# decimal, the totals check fails the file (exit 3), naming both figures.
. "$(dirname "$0")/../lib.sh"

SEEDS=${BILL_TOTAL_SEEDS:-25}
for seed in $(seq 1 "$SEEDS"); do
    python3 "$SRC/tests/gen_bill_totals.py" "$seed" . || { fail "gen_bill_totals.py $seed"; continue; }
done
bad_ok=0 good_ok=0 named=0 n=0
for seed in $(seq 1 "$SEEDS"); do
    for f in wechat-$seed wechatold-$seed alipay-$seed; do
        p=wechat-trade
        case $f in alipay-*) p=alipay-trade ;; esac
        n=$((n + 1))
        run validate -q --profile $p --set tenant_id=1 --rejects rj.ndjson "$f.csv"
        if [ $RC -eq 0 ]; then good_ok=$((good_ok + 1)); else echo "# $f.csv: exit $RC: $(head -c 300 "$ERR")"; fi
        run validate -q --profile $p --set tenant_id=1 --rejects rj.ndjson "$f-bad.csv"
        if [ $RC -eq 3 ]; then bad_ok=$((bad_ok + 1)); else echo "# $f-bad.csv: exit $RC"; fi
        grep -q "the bill states .* but its .*rows' .* add up to " "$ERR" && named=$((named + 1))
    done
done
eq "every generated bill whose totals agree validates (exit 0)" "$n" "$good_ok"
eq "every bill with one amount changed fails its totals check (exit 3)" "$n" "$bad_ok"
eq "... naming the stated figure and the rows' sum" "$n" "$named"
finish
