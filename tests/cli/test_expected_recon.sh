#!/usr/bin/env bash
# tests/expected_recon.py, the model the reconcile tests compare idemload
# with, checked on its own: small cases worked out by hand from SPEC.md's
# "Reconcile" rules (the money read, one run's lines and figures, and the
# register across runs: pending, resolved by a later statement,
# escalated, carried over, superseded, the order of days, a --period
# whose key is listed on another day), each rule once, the counts exact.
. "$(dirname "$0")/../lib.sh"
out=$(python3 "$SRC/tests/expected_recon.py" --self-test 2>&1)
eq "the model's money and zone rules (--self-test)" "expected_recon self-test ok" "$out"

hdr="tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"
# row KEY AMOUNT TIME [STATUS] [CURRENCY]
row() { printf '1,wechat,%s,pay,%s,"{""amount"": ""%s"", ""currency"": ""%s""}",%s\n' \
        "$1" "${4:-1}" "$2" "${5:-CNY}" "$3"; }
{ echo "$hdr"
  row M1 1.00 2026-11-20T01:00:00Z
  row M2 1.50 2026-11-20T02:00:00Z
  row T1 3.00 2026-11-20T03:00:00Z
  row L1 4.00 2026-11-20T04:00:00Z
  row S1 5.00 2026-11-20T05:00:00Z 1
  row C1 6.00 2026-11-20T06:00:00Z 1 JPY
  row A1 7.00 2026-11-21T01:00:00Z
} >table.csv
{ echo "$hdr"
  row M1 1.00 2026-11-20T01:00:00Z
  row M2 1.00 2026-11-20T02:00:00Z
  row N1 2.00 2026-11-20T02:30:00Z
  row S1 5.00 2026-11-20T05:00:00Z 2
  row C1 6.00 2026-11-20T06:00:00Z 1 USD
  row D1 8.00 2026-11-20T07:00:00Z
  row D1 9.00 2026-11-20T08:00:00Z
} >s20.csv
{ echo "$hdr"; row L1 4.00 2026-11-21T00:30:00Z; row A1 7.00 2026-11-21T01:00:00Z; } >s21.csv

python3 - "$SRC/tests" <<'PY' >cases.txt 2>&1
import datetime as dt, sys
sys.path.insert(0, sys.argv[1])
import expected_recon as m
z = m.zone_of("UTC")
table = m.read_table("table.csv", {}, z)
now = dt.datetime(2026, 12, 6, tzinfo=dt.timezone.utc)
LONG = 1000 * 86400

# One run of day 20, the grace passed.
r = m.reconcile(["s20.csv"], None, {}, "UTC", None, 2 * 86400, now, frozenset(), table)
for l in r["lines"]:
    print("line", l["category"], l["out_trade_no"], l["difference"])
d = r["days"]["1|wechat|2026-11-20"]
print("day20", d["statement"], d["table"], d["matched"], d["unverified"], d["pending"])
print("amounts", sorted((c, m.render(v, c)) for c, v in d["s_amounts"].items()),
      sorted((c, m.render(v, c)) for c, v in d["t_amounts"].items()))

# The register: day 20 with a long grace (T1 and L1 pending), then day 21,
# whose statement lists L1 (resolved), then day 21 again with the default
# grace: T1 escalated, appeared, carried over.
g = m.Register()
a = g.run(["s20.csv"], table, {}, "UTC", None, LONG, now)
print("reg1", a["appeared"], a["resolved"], a["carried_over"], a["days"]["1|wechat|2026-11-20"]["pending"])
b = g.run(["s21.csv"], table, {}, "UTC", None, LONG, now)
print("reg2", b["appeared"], b["resolved"], b["carried_over"], b["escalated"])
c = g.run(["s21.csv"], table, {}, "UTC", None, 2 * 86400, now)
print("reg3", c["appeared"], c["resolved"], c["carried_over"], c["escalated"])
# a dry run: the same carried over, nothing appeared
e = g.run(["s21.csv"], table, {}, "UTC", None, 2 * 86400, now, dry_run=True)
print("dry", e["appeared"], e["carried_over"])
# day 20 again, corrected: N1 no longer listed (its missing_in_table
# resolved), the rest found again
with open("s20.csv") as fp:
    kept = [x for x in fp if ",N1," not in x]
open("s20b.csv", "w").writelines(kept)
f = g.run(["s20b.csv"], table, {}, "UTC", None, 2 * 86400, now)
print("reg4", f["appeared"], f["resolved"], f["carried_over"])

# The order of days: 21 first lists L1 (its row on the 20th); day 20 then
# matches it, as when day 20 came first and 21 resolved it.
h = m.Register()
h.run(["s21.csv"], table, {}, "UTC", None, 2 * 86400, now)
x = h.run(["s20.csv"], table, {}, "UTC", None, 2 * 86400, now)
print("order", x["days"]["1|wechat|2026-11-20"]["matched"],
      sorted(l["out_trade_no"] or "-" for l in x["lines"] if l["category"] == "missing_in_statement"))

# --period 20 over both days' rows: L1 (listed on the 21st) matched, A1's
# row not in the period, the 21st's rows outside it.
y = m.reconcile(["s20.csv", "s21.csv"], None, {}, "UTC", ["2026-11-20"] * 2, 2 * 86400, now,
                frozenset(), table)
print("period", y["days"]["1|wechat|2026-11-20"]["matched"], y["outside_period"],
      sorted(y["days"]))
PY
echo "# $(tr '\n' '|' <cases.txt)"
# Day 20: M1 matched; M2 1.00 vs 1.50; N1 missing (2.00); S1 status 2 vs
# 1; C1 USD vs JPY (no amount compared); D1 listed 8.00 then 9.00 (the
# latest, 9.00, kept; missing in the table); T1 and L1 missing from the
# statement (-3.00, -4.00).
eq "one run: its lines, each with its difference" \
"line amount_mismatch M2 -0.50|line currency_mismatch C1 None|line duplicate_in_statement D1 9.00|line missing_in_statement L1 -4.00|line missing_in_statement T1 -3.00|line missing_in_table D1 9.00|line missing_in_table N1 2.00|line status_mismatch S1 0.00" \
    "$(grep '^line' cases.txt | sort | paste -sd'|')"
# The statement's side counts every row of the file (D1's two listings,
# two records of one key), so that it adds up to the file's own sums.
eq "one run: statement 7 rows of 6 keys, table 6 rows, 1 matched" "day20 7 6 1 0 0" "$(grep '^day20' cases.txt)"
# statement CNY 1.00 + 1.00 + 2.00 + 5.00 + 8.00 + 9.00, USD 6.00; table
# CNY 1.00 + 1.50 + 3.00 + 4.00 + 5.00, JPY 6
eq "one run: each side's money per currency" \
    "amounts [('CNY', '26.00'), ('USD', '6.00')] [('CNY', '14.50'), ('JPY', '6')]" \
    "$(grep '^amounts' cases.txt)"
eq "register: day 20 within the grace, 6 discrepancies appeared, T1 and L1 pending" \
    "reg1 6 0 0 2" "$(grep '^reg1' cases.txt)"
eq "register: day 21 lists L1, resolved; day 20's 6 carried over" \
    "reg2 0 1 6 0" "$(grep '^reg2' cases.txt)"
eq "register: the grace passed, T1 escalated (appeared), 7 carried over" \
    "reg3 1 0 7 1" "$(grep '^reg3' cases.txt)"
eq "register: a dry run carries over the same, nothing appears" "dry 0 7" "$(grep '^dry' cases.txt)"
eq "register: day 20 again without N1, its item resolved, nothing new" \
    "reg4 0 1 0" "$(grep '^reg4' cases.txt)"
eq "the order of days: day 21 first, day 20 matches L1, T1 alone missing" \
    "order 2 ['T1']" "$(grep '^order' cases.txt)"
eq "--period 20 over both files: L1 matched by the 21st's listing, 2 rows outside" \
    "period 2 2 ['1|wechat|2026-11-20']" "$(grep '^period' cases.txt)"
finish
