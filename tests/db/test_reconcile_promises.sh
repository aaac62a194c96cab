#!/usr/bin/env bash
# Promises of SPEC.md's "Reconcile" no other test held (issue 47): a plain
# run writes nothing to the target (its rows, with their row versions, the
# same before and after); the register beside the ledger in --table's
# schema; the register's columns (first and last seen, resolved_at and
# resolved_by, the run's files and digests, amounts per kind and
# currency); the statement's and the table's time in a discrepancy line;
# --discrepancies -; --grace Nh; rejected rows take no part; the input
# options --delimiter, --format, --chunk-rows, --max-rejects, --kind,
# --tenant-map and --encoding with reconcile; the days cut in a profile's
# zone; a password in none of its outputs; two --repair missing at once
# insert each row once; 18-digit and KWD amounts end to end; reconcile's
# peak RSS.  "Now" is pinned (IDEMLOAD_NOW).
. "$(dirname "$0")/../lib.sh"
pg_use
. "$(dirname "$0")/recon_lib.sh"
export PGTZ=UTC
export IDEMLOAD_NOW=2026-11-21T12:00:00Z
D=2026-11-20
# target_state TABLE: every row of TABLE with its row version (xmin) and
# place (ctid), so that even an UPDATE to the same values shows.
target_state() {
    q "SELECT count(*) || ':' || coalesce(md5(string_agg(ctid::text || xmin::text || t::text, ',' ORDER BY id)), '')
       FROM ${1:-payment_callback} t"
}

# ---- 1. a plain run writes nothing to the target ----------------------
init_db recon_promises
ins 1 wechat K1 1.00 "${D}T01:00:00Z"
ins 1 wechat K2 2.00 "${D}T02:00:00Z"
ins 1 wechat K3 3.00 "${D}T03:00:00Z"
{ echo "$header"; row 1 wechat K1 1.00 "${D}T01:00:00Z"; row 1 wechat K2 2.50 "${D}T02:00:00Z"
  row 1 wechat K4 4.00 "${D}T04:00:00Z"; } >s.csv
before=$(target_state)
# other_tables: the schema's tables but the register's, with their rows
other_tables() { all_tables | tr ',' '\n' | grep -v '^idemload_recon_' | tr '\n' ' '; }
others_before=$(other_tables)
run reconcile -d "$DB" --report r.json --discrepancies d.ndjson s.csv
eq "a plain run with discrepancies: exit 5" 5 "$RC"
eq "a plain run writes nothing to the target: every row and its version the same" "$before" "$(target_state)"
eq "nor to any other table of the schema but the register's" "$others_before" "$(other_tables)"

# ---- 2. the time of both sides in a discrepancy line ------------------
check "amount_mismatch K2: the statement's and the table's time in the line" python3 - d.ndjson <<'PY'
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
k2 = [l for l in ls if l["out_trade_no"] == "K2"]
sys.exit(0 if len(k2) == 1 and k2[0]["category"] == "amount_mismatch"
         and k2[0]["statement"]["time"].startswith("2026-11-20T02:00:00")
         and k2[0]["table"]["time"].startswith("2026-11-20T02:00:00") else 1)
PY
check "missing_in_table K4: the statement's time, no table side" python3 - d.ndjson <<'PY'
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
k = [l for l in ls if l["out_trade_no"] == "K4"]
sys.exit(0 if len(k) == 1 and k[0]["statement"]["time"].startswith("2026-11-20T04:00:00")
         and k[0]["table"] is None else 1)
PY

# ---- 3. --discrepancies -: the same lines on standard output ----------
run reconcile -d "$DB" --dry-run --discrepancies - s.csv
eq "--discrepancies -: exit 5" 5 "$RC"
eq "--discrepancies -: the lines of the file, on standard output (first_seen aside: null in a dry run)" \
    "$(python3 -c 'import json,sys; [print(json.dumps({k: v for k, v in json.loads(l).items() if k != "first_seen"}, sort_keys=True)) for l in open(sys.argv[1])]' d.ndjson)" \
    "$(python3 -c 'import json,sys; [print(json.dumps({k: v for k, v in json.loads(l).items() if k != "first_seen"}, sort_keys=True)) for l in open(sys.argv[1]) if l.strip()]' "$OUT")"

# ---- 4. the register's columns ----------------------------------------
S_DIGEST=$(sha256sum s.csv | cut -c1-64)
eq "the item: first_seen and last_seen the run's now" "2026-11-21 12:00:00+00 2026-11-21 12:00:00+00" \
    "$(q "SELECT first_seen || ' ' || last_seen FROM idemload_recon_item WHERE out_trade_no = 'K2'")"
check "the run's row: its file and the file's digest" jtrue <(q "SELECT files FROM idemload_recon_run WHERE day = '$D' AND superseded_by IS NULL") \
    "any(isinstance(f, dict) and f.get('digest') == '$S_DIGEST' and str(f.get('path', f.get('file', ''))).endswith('s.csv') for f in r)"
q "SELECT statement::text || ' | ' || table_side::text FROM idemload_recon_run WHERE day = '$D' AND superseded_by IS NULL" >sides.txt
check "the run's row: both sides' amounts per kind and currency (statement 7.50 CNY of pay, table 6.00)" \
    python3 - sides.txt <<'PY'
import json, sys
s, t = open(sys.argv[1]).read().split(" | ")
def amounts(x):
    # somewhere in the side: kind pay -> currency CNY -> the amount
    x = json.loads(x)
    found = []
    def walk(v, path):
        if isinstance(v, dict):
            for k, w in v.items():
                walk(w, path + [k])
        elif isinstance(v, (str, int, float)):
            found.append((tuple(path), str(v)))
    walk(x, [])
    return found
def has(x, want):
    return any("pay" in p and "CNY" in p and v == want for p, v in amounts(x))
sys.exit(0 if has(s, "7.50") and has(t, "6.00") else 1)
PY
# A later run the next day still finds K2: last_seen moves, first_seen stays.
IDEMLOAD_NOW=2026-11-22T08:00:00Z run reconcile -d "$DB" s.csv
eq "the same day again: exit 5" 5 "$RC"
eq "the item still open: last_seen is the later run's, first_seen the first's" \
    "2026-11-21 12:00:00+00 2026-11-22 08:00:00+00" \
    "$(q "SELECT first_seen || ' ' || last_seen FROM idemload_recon_item WHERE out_trade_no = 'K2' AND state = 'open'")"
# A corrected statement resolves it: resolved_at its now, resolved_by its run.
{ echo "$header"; row 1 wechat K1 1.00 "${D}T01:00:00Z"; row 1 wechat K2 2.00 "${D}T02:00:00Z"
  row 1 wechat K3 3.00 "${D}T03:00:00Z"; } >s2.csv
IDEMLOAD_NOW=2026-11-23T09:30:00Z run reconcile -d "$DB" s2.csv
eq "the corrected statement: balanced, exit 0" 0 "$RC"
last=$(q "SELECT max(run) FROM idemload_recon_run")
eq "the item resolved: resolved_at the run's now, resolved_by its run" "2026-11-23 09:30:00+00 $last" \
    "$(q "SELECT resolved_at || ' ' || resolved_by FROM idemload_recon_item WHERE out_trade_no = 'K2' ORDER BY id DESC LIMIT 1")"

# ---- 5. the register beside the ledger, in --table's schema -----------
new_db recon_promises_schema
q "CREATE SCHEMA fin" >/dev/null
run init -d "$DB" --table fin.cb
eq "init --table fin.cb: exit 0" 0 "$RC"
q "INSERT INTO fin.cb (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
   VALUES (1, 'wechat', 'K1', 'pay', 1, '{\"amount\": \"1.00\", \"currency\": \"CNY\"}', '${D}T01:00:00Z')" >/dev/null
{ echo "$header"; row 1 wechat K1 1.00 "${D}T01:00:00Z"; } >f.csv
run import -d "$DB" --table fin.cb f.csv
eq "an import into fin.cb first (its ledger): exit 0" 0 "$RC"
before=$(target_state fin.cb)
run reconcile -d "$DB" --table fin.cb f.csv
eq "reconcile --table fin.cb: balanced, exit 0" 0 "$RC"
eq "the register is in schema fin, beside its ledger" "true true true" \
    "$(q "SELECT (to_regclass('fin.idemload_ledger') IS NOT NULL) || ' ' || (to_regclass('fin.idemload_recon_item') IS NOT NULL) || ' ' || (to_regclass('fin.idemload_recon_run') IS NOT NULL)")"
eq "and not in public" "true true" \
    "$(q "SELECT (to_regclass('public.idemload_recon_item') IS NULL) || ' ' || (to_regclass('public.idemload_recon_run') IS NULL)")"
eq "fin.cb unchanged" "$before" "$(target_state fin.cb)"

# ---- 6. --grace in hours ----------------------------------------------
init_db recon_promises_grace
ins 2 wechat G1 1.00 "${D}T10:00:00Z"
ins 2 wechat G2 2.00 "${D}T11:00:00Z"
{ echo "$header"; row 2 wechat G1 1.00 "${D}T10:00:00Z"; } >g.csv
# Now: 5 hours after the end of the day.
IDEMLOAD_NOW=2026-11-21T05:00:00Z run reconcile -d "$DB" --dry-run --grace 6h --report g6.json g.csv
eq "--grace 6h, 5 hours after the day's end: balanced, exit 0" 0 "$RC"
check "G2 pending" jtrue g6.json "r['reconciliation']['pending'] == 1"
IDEMLOAD_NOW=2026-11-21T05:00:00Z run reconcile -d "$DB" --dry-run --grace 4h --report g4.json --discrepancies g4.ndjson g.csv
eq "--grace 4h, 5 hours after the day's end: exit 5" 5 "$RC"
check "G2 missing_in_statement" jtrue g4.json \
    "r['reconciliation']['pending'] == 0 and r['reconciliation']['categories'].get('missing_in_statement') == 1"
run reconcile -d "$DB" --dry-run --grace 5x g.csv
eq "--grace 5x: exit 2" 2 "$RC"

# ---- 7. rejected rows take no part ------------------------------------
init_db recon_promises_rejects
ins 3 wechat R1 1.00 "${D}T10:00:00Z"
ins 3 wechat R2 2.00 "${D}T11:00:00Z"
{ echo "$header"; row 3 wechat R1 1.00 "${D}T10:00:00Z"; row 3 wechat R2 2.00 "not-a-time"; } >rj.csv
run reconcile -d "$DB" --dry-run --grace 0m --rejects rj.ndjson --report rj.json --discrepancies rj.d.ndjson rj.csv
eq "a rejected statement row: exit 5 (a discrepancy; the reject is in the rejects file)" 5 "$RC"
check "the rejected row is in the rejects file" grep -q R2 rj.ndjson
check "it matched nothing: R2 of the table is missing_in_statement, R1 matched" jtrue rj.json \
    "r['reconciliation']['categories'].get('missing_in_statement') == 1 and sum(d['matched'] for d in r['reconciliation']['days']) == 1"
check "and the line names R2" grep -q '"out_trade_no": *"R2".*missing_in_statement\|missing_in_statement.*"out_trade_no": *"R2"' rj.d.ndjson

# ---- 8. input options: --delimiter, --format, --chunk-rows -------------
init_db recon_promises_inputs
for i in 1 2 3 4 5 6 7; do ins 4 wechat I$i $i.00 "${D}T0$i:00:00Z"; done
{ echo "$header"; for i in 1 2 3 4 5 6; do row 4 wechat I$i $i.00 "${D}T0$i:00:00Z"; done
  row 4 wechat I8 8.00 "${D}T08:00:00Z"; } >in.csv
lines() { python3 -c 'import json,sys; print(sorted((l["category"], l["out_trade_no"]) for l in map(json.loads, open(sys.argv[1])) if True))' "$1"; }
run reconcile -d "$DB" --dry-run --grace 0m --discrepancies base.ndjson in.csv
eq "the reference run: exit 5" 5 "$RC"
eq "the reference: I7 missing_in_statement, I8 missing_in_table" \
    "[('missing_in_statement', 'I7'), ('missing_in_table', 'I8')]" "$(lines base.ndjson)"
run reconcile -d "$DB" --dry-run --grace 0m --chunk-rows 2 --discrepancies c2.ndjson in.csv
eq "--chunk-rows 2: exit 5" 5 "$RC"
eq "--chunk-rows 2: the same lines" "$(lines base.ndjson)" "$(lines c2.ndjson)"
python3 - in.csv semi.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
csv.writer(open(sys.argv[2], "w", newline=""), delimiter=";").writerows(rows)
PY
run reconcile -d "$DB" --dry-run --grace 0m --delimiter ';' --discrepancies semi.ndjson semi.csv
eq "--delimiter ';': exit 5" 5 "$RC"
eq "--delimiter ';': the same lines" "$(lines base.ndjson)" "$(lines semi.ndjson)"
python3 - in.csv in.txt <<'PY'
import csv, json, sys
r = csv.DictReader(open(sys.argv[1], newline=""))
with open(sys.argv[2], "w") as f:
    for row in r:
        row["tenant_id"] = int(row["tenant_id"]); row["status"] = int(row["status"])
        row["payload"] = json.loads(row["payload"])
        f.write(json.dumps(row) + "\n")
PY
run reconcile -d "$DB" --dry-run --grace 0m --format ndjson --discrepancies nd.ndjson in.txt
eq "--format ndjson on a .txt file: exit 5" 5 "$RC"
eq "--format ndjson: the same lines" "$(lines base.ndjson)" "$(lines nd.ndjson)"
run reconcile -d "$DB" --dry-run in.txt
eq "a .txt file without --format: exit 2" 2 "$RC"

# ---- 9. a password in none of its outputs -----------------------------
secret='Pw-r3c0ncile-S3cr3t'
run reconcile -d "postgresql://someone:$secret@127.0.0.1:1/nodb" --report pw.json --html pw.html \
    --discrepancies pw.ndjson in.csv
eq "reconcile with a password it cannot use: exit 4" 4 "$RC"
check "the password is in no output (stderr, stdout, report, page, discrepancies)" \
    bash -c "! cat \"$ERR\" \"$OUT\" pw.json pw.html pw.ndjson 2>/dev/null | grep -aq -- '$secret'"

# ---- 10. two --repair missing at once ---------------------------------
init_db recon_promises_repair
ins 5 wechat P0 1.00 "${D}T00:30:00Z"
{ echo "$header"; row 5 wechat P0 1.00 "${D}T00:30:00Z"
  for i in $(seq 1 40); do row 5 wechat "M$i" "$i.00" "${D}T01:$(printf %02d $((i % 60))):00Z"; done; } >rp.csv
"$IDEMLOAD" reconcile -d "$DB" --repair missing --report rp1.json rp.csv >/dev/null 2>rp1.err &
p1=$!
"$IDEMLOAD" reconcile -d "$DB" --repair missing --report rp2.json rp.csv >/dev/null 2>rp2.err &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "both runs end with exit 0 or 5 ($r1 $r2)" bash -c "[[ '$r1' =~ ^(0|5)$ && '$r2' =~ ^(0|5)$ ]]"
eq "each missing row inserted once: 41 active rows, no key twice" "41 41" \
    "$(q "SELECT count(*) || ' ' || count(DISTINCT out_trade_no) FROM payment_callback WHERE deleted_at IS NULL")"
eq "the two reports' inserted rows add up to 40" 40 \
    "$(python3 -c 'import json,sys; print(sum(json.load(open(f))["totals"]["inserted"] for f in sys.argv[1:]))' rp1.json rp2.json 2>&1)"
run reconcile -d "$DB" --dry-run rp.csv
eq "then the day is balanced: exit 0" 0 "$RC"

# ---- 11. 18-digit and KWD amounts end to end --------------------------
init_db recon_promises_money
big=123456789012345678.91
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES
   (6, 'wechat', 'B1', 'pay', 1, '{\"amount\": \"$big\", \"currency\": \"CNY\"}', '${D}T01:00:00Z'),
   (6, 'wechat', 'B2', 'pay', 1, '{\"amount\": \"$big\", \"currency\": \"CNY\"}', '${D}T02:00:00Z'),
   (6, 'wechat', 'W1', 'pay', 1, '{\"amount\": \"1.234\", \"currency\": \"KWD\"}', '${D}T03:00:00Z'),
   (6, 'wechat', 'W2', 'pay', 1, '{\"amount\": \"1.234\", \"currency\": \"KWD\"}', '${D}T04:00:00Z')" >/dev/null
wrow() { printf '6,wechat,%s,pay,1,"{""amount"": ""%s"", ""currency"": ""%s""}",%s\n' "$@"; }
{ echo "$header"; wrow B1 "$big" CNY "${D}T01:00:00Z"; wrow B2 123456789012345678.90 CNY "${D}T02:00:00Z"
  wrow W1 1.234 KWD "${D}T03:00:00Z"; wrow W2 1.235 KWD "${D}T04:00:00Z"; } >m.csv
run reconcile -d "$DB" --dry-run --report m.json --discrepancies m.ndjson m.csv
eq "18-digit CNY and KWD: exit 5" 5 "$RC"
eq "B1 and W1 matched, B2 and W2 amount_mismatch, by exactly -0.01 and 0.001" \
    "[('B2', '123456789012345678.90', '$big', '-0.01'), ('W2', '1.235', '1.234', '0.001')]" \
    "$(python3 -c 'import json,sys; print(sorted((l["out_trade_no"], l["statement"]["amount"], l["table"]["amount"], l["difference"]) for l in map(json.loads, open(sys.argv[1])) if l["category"] == "amount_mismatch"))' m.ndjson)"
check "the report's day: statement amounts exact (CNY 246913578024691357.81, KWD 2.469)" jtrue m.json \
    "[d['statement']['amounts'] for d in r['reconciliation']['days']] == [{'CNY': '246913578024691357.81', 'KWD': '2.469'}]"
check "the table's amounts exact (CNY 246913578024691357.82, KWD 2.468)" jtrue m.json \
    "[d['table']['amounts'] for d in r['reconciliation']['days']] == [{'CNY': '246913578024691357.82', 'KWD': '2.468'}]"

# ---- 12. a profile's bill: days cut in the profile's zone; --kind,
# --tenant-map, --encoding with reconcile.  The bill: samples/
# bill-wechat-trade-2024-05-01.csv (its layout from WeChat Pay's published
# trade bill, see channel-formats.md), its first payment moved to 07:30
# Beijing time, 23:30 UTC of the day before.
sed 's/^`2024-05-01 10:15:02,/`2024-05-01 07:30:00,/' "$SRC/samples/bill-wechat-trade-2024-05-01.csv" >wb.csv
check "the bill's first payment is at 07:30" grep -q '^`2024-05-01 07:30:00,' wb.csv
cat >wfacts.json <<'JSON'
{"channels": {"wechat": {"amount": {"path": "应结订单金额", "unit": "major"}, "currency": {"path": "货币种类"},
                         "kinds": {"refund": {"amount": {"path": "退款金额", "unit": "major"}}}}}}
JSON
init_db recon_promises_profile
run import -q -d "$DB" --rejects wrj.ndjson --profile wechat-trade --set tenant_id=77 wb.csv
eq "the bill loads by its profile" 0 "$RC"
eq "its payment at 07:30 Beijing time is 23:30 UTC the day before" "2024-04-30 23:30:00+00" \
    "$(q "SELECT received_at FROM payment_callback WHERE out_trade_no = 'ORD1' AND callback_type = 'pay'")"
run reconcile -d "$DB" --dry-run --rejects wrj.ndjson --profile wechat-trade --set tenant_id=77 \
    --facts wfacts.json --report wz.json wb.csv
eq "reconciled by the profile: balanced, exit 0" 0 "$RC"
check "one day, 2024-05-01, cut in the profile's zone (UTC would make the payment's 04-30)" jtrue wz.json \
    "r['reconciliation']['zone'] in ('+08:00', 'Asia/Shanghai') and [d['day'] for d in r['reconciliation']['days']] == ['2024-05-01'] and r['reconciliation']['period'] == {'from': '2024-05-01', 'to': '2024-05-01'}"
# --kind: loaded as pay_success, reconciled with the same mapping: balanced;
# without it, the statement's kind is pay, which the table does not hold.
init_db recon_promises_kind
run import -q -d "$DB" --rejects wrj.ndjson --profile wechat-trade --set tenant_id=77 --kind pay=pay_success wb.csv
eq "loaded with --kind pay=pay_success" 0 "$RC"
run reconcile -d "$DB" --dry-run --rejects wrj.ndjson --profile wechat-trade --set tenant_id=77 \
    --kind pay=pay_success --facts wfacts.json --report wk.json wb.csv
eq "reconcile --kind pay=pay_success: balanced, exit 0" 0 "$RC"
check "4 rows matched" jtrue wk.json 'sum(d["matched"] for d in r["reconciliation"]["days"]) == 4'
run reconcile -d "$DB" --dry-run --grace 0m --rejects wrj.ndjson --profile wechat-trade --set tenant_id=77 \
    --facts wfacts.json --discrepancies wk2.ndjson wb.csv
eq "the same without --kind: the payment is missing on both sides, exit 5" 5 "$RC"
eq "missing_in_table pay, missing_in_statement pay_success" "missing_in_statement pay_success
missing_in_table pay" \
    "$(python3 -c 'import json,sys; [print(l["category"], l["callback_type"]) for l in sorted(map(json.loads, open(sys.argv[1])), key=lambda l: l["category"])]' wk2.ndjson)"
# --tenant-map: the tenant from the bill's merchant (商户号 1900000109).
init_db recon_promises_tmap
printf 'merchant,tenant_id\n1900000109,88\n' >tmap.csv
run import -q -d "$DB" --rejects wrj.ndjson --profile wechat-trade --tenant-map tmap.csv wb.csv
eq "loaded with --tenant-map" 0 "$RC"
run reconcile -d "$DB" --dry-run --rejects wrj.ndjson --profile wechat-trade --tenant-map tmap.csv \
    --facts wfacts.json --report wt.json wb.csv
eq "reconcile --tenant-map: balanced, exit 0" 0 "$RC"
check "the day is tenant 88's, 4 rows matched" jtrue wt.json \
    '[(d["tenant_id"], d["matched"]) for d in r["reconciliation"]["days"]] == [(88, 4)]'
# --encoding: the same bill in GBK.
iconv -f utf-8 -t gbk wb.csv >wb-gbk.csv
run reconcile -d "$DB" --dry-run --rejects wrj.ndjson --profile wechat-trade --tenant-map tmap.csv \
    --encoding gbk --facts wfacts.json --report wg.json wb-gbk.csv
eq "reconcile --encoding gbk of the GBK bill: balanced, exit 0" 0 "$RC"
check "the same figures as the UTF-8 bill's" jtrue wg.json \
    "r['reconciliation']['days'] == __import__('json').load(open('wt.json'))['reconciliation']['days']"

# ---- 13. --max-rejects exceeded: exit 3, nothing compared, no register -
init_db recon_promises_maxrej
ins 7 wechat X1 1.00 "${D}T10:00:00Z"
{ echo "$header"; row 7 wechat X1 1.00 "${D}T10:00:00Z"; row 7 wechat X2 2.00 "bad-time"
  row 7 wechat X3 3.00 "bad-time"; } >mr.csv
run reconcile -d "$DB" --max-rejects 1 --rejects mrj.ndjson --discrepancies mr.ndjson --report mr.json mr.csv
eq "--max-rejects 1, two rows rejected: exit 3" 3 "$RC"
eq "no register written" none "$(register)"
check "no discrepancy listed" test ! -s mr.ndjson

# ---- 14. reconcile's peak RSS (README: under 256 MiB with the default
# options; a sanitizer's own memory allowed on top, as test_hostile does)
init_db recon_promises_rss
N=100000
[ -n "${IDEMLOAD_INSTRUMENTED:-}" ] && N=30000
{ echo "$header"; awk -v n=$N 'BEGIN { for (i = 1; i <= n; i++)
    printf "8,wechat,R%07d,pay,1,\"{\"\"amount\"\": \"\"%d.%02d\"\", \"\"currency\"\": \"\"CNY\"\"}\",2026-11-20T%02d:%02d:00Z\n",
           i, i % 1000, i % 100, (i / 60) % 24, i % 60 }'; } >big.csv
run import -q -d "$DB" big.csv
eq "the big table: exit 0" 0 "$RC"
{ head -n $((N / 2 + 1)) big.csv; awk -v n=$N 'BEGIN { for (i = 1; i <= n / 2; i++)
    printf "8,wechat,S%07d,pay,1,\"{\"\"amount\"\": \"\"1.00\"\", \"\"currency\"\": \"\"CNY\"\"}\",2026-11-20T12:00:00Z\n", i }'; } >bigs.csv
rss=$(python3 - "$IDEMLOAD" reconcile -d "$DB" --grace 0m --discrepancies big.ndjson --report big.json bigs.csv <<'PY'
import os, resource, subprocess, sys
env = dict(os.environ)
if env.get("ASAN_OPTIONS"):
    env["ASAN_OPTIONS"] += ":quarantine_size_mb=8:thread_local_quarantine_size_kb=256"
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open("big.err", "wb"), env=env)
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
)
bound=256
[ -n "${ASAN_OPTIONS:-}" ] && bound=512
[ -n "${TSAN_OPTIONS:-}" ] && bound=1024
eq "a reconcile of $N table rows and $N statement rows: exit 5" 5 "${rss%% *}"
check "its peak RSS ${rss#* } MiB < $bound" test "${rss#* }" -lt $bound
check "its figures: half matched, half missing each way" jtrue big.json \
    "(x := r['reconciliation'])['matched'] == $N // 2 and x['categories']['missing_in_table'] == $N // 2 and x['categories']['missing_in_statement'] == $N // 2"

finish
