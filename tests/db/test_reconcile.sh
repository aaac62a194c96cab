#!/usr/bin/env bash
# `idemload reconcile` (SPEC.md, "Reconcile: the statement against the
# table, both ways"): every category planted and found, with both sides'
# facts and the money difference, exactly as tests/expected_recon.py (an
# independent model) computes them; amounts in major and minor units, with
# ¥, thousands separators and five decimals, CNY against JPY; unverified;
# the payment at 23:59:58 whose callback came at 00:00:05; a balanced day
# (exit 0, an empty discrepancies file); the period and the zone, and the
# rows outside the period at a DST change at midnight; the CSV
# with its byte-order mark and Chinese text; the report's shape.
. "$(dirname "$0")/../lib.sh"
pg_use
export PGTZ=UTC
MODEL="python3 $SRC/tests/expected_recon.py"
check "the model's own self-test" $MODEL --self-test

# dump_table FILE: the table's active rows as the model reads them.
dump_table() {
    psql -X -q -v ON_ERROR_STOP=1 -c "\\copy (SELECT tenant_id, channel, out_trade_no,
        callback_type, status, payload::text AS payload,
        to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS received_at
        FROM payment_callback WHERE deleted_at IS NULL ORDER BY id) TO '$1' WITH (FORMAT csv, HEADER true)" \
        || echo "dump_table failed" >>"$WORK/.q_failures"
}
# same_lines DESCRIPTION IDEMLOAD_NDJSON MODEL_JSON: the discrepancy lines
# agree, field by field (facts, difference), as sets in the same order.
same_lines() {
    local out
    out=$(python3 - "$2" "$3" <<'PY'
import json, sys
got = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
want = json.load(open(sys.argv[2]))["lines"]
def side(s):
    return None if s is None else {k: s[k] for k in ("amount", "currency", "status", "time")}
def proj(l):
    return {"category": l["category"], "tenant_id": l["tenant_id"], "channel": l["channel"],
            "out_trade_no": l["out_trade_no"], "callback_type": l["callback_type"],
            "day": l["day"], "statement": side(l["statement"]), "table": side(l["table"]),
            "difference": l["difference"]}
g = [proj(l) for l in got]
w = [proj(l) for l in want]
if g == w:
    print("same %d" % len(g))
else:
    print("differ: %d lines from idemload, %d from the model" % (len(g), len(w)))
    for l in g:
        if l not in w: print("  idemload only:", json.dumps(l, ensure_ascii=False))
    for l in w:
        if l not in g: print("  model only:   ", json.dumps(l, ensure_ascii=False))
PY
)
    if [[ "$out" == same* ]]; then ok "$1 (${out#same } lines)"; else fail "$1: $out"; fi
}
# same_days DESCRIPTION REPORT MODEL_JSON: per tenant, channel and day the
# rows on each side, matched, unverified, pending and each category's count,
# its absolute differences per currency, and the day's money differences
# with each key once.
same_days() {
    local out
    out=$(python3 - "$2" "$3" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))["reconciliation"]["days"]
want = json.load(open(sys.argv[2]))["days"]
got = {}
for d in rep:
    got["%s|%s|%s" % (d["tenant_id"], d["channel"], d["day"])] = {
        "statement": d["statement"]["rows"], "table": d["table"]["rows"],
        "matched": d["matched"], "unverified": d["unverified"], "pending": d["pending"],
        "categories": {c: v["count"] for c, v in d["categories"].items() if v["count"]},
        "absolute": {c: v["absolute"] for c, v in d["categories"].items() if v["absolute"]},
        "differences": {k: v for k, v in d["differences"].items() if k != "difference_is"}}
print("same" if got == want else "differ:\n idemload %s\n model    %s" % (
    json.dumps(got, sort_keys=True), json.dumps(want, sort_keys=True)))
PY
)
    if [ "$out" == same ]; then ok "$1"; else fail "$1: $out"; fi
}
checksum() {
    q "SELECT md5(string_agg(t, '|' ORDER BY t)) FROM (
         SELECT c.relname || ':' || coalesce((SELECT md5(string_agg(x::text, ',' ORDER BY x::text))
                FROM payment_callback x), '') AS t FROM pg_class c WHERE c.relname = 'payment_callback'
         UNION ALL SELECT 'tables:' || string_agg(relname, ',' ORDER BY relname) FROM pg_class
          WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace) s"
}

init_db recon
D=2026-11-20
# The table: what the callbacks brought.
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES
 (1, 'wechat', 'M1', 'pay', 1, '{\"amount\": 168.9, \"currency\": \"CNY\"}', '$D 10:00:01Z'),
 (1, 'wechat', 'M2', 'pay', 1, '{\"amount\": \"1234.5\", \"currency\": \"CNY\"}', '$D 10:00:02Z'),
 (1, 'wechat', 'M3', 'pay', 1, '{\"amount\": 0.59, \"currency\": \"cny\"}', '$D 10:00:03Z'),
 (1, 'wechat', 'LATE', 'pay', 1, '{\"amount\": 20, \"currency\": \"CNY\"}', '2026-11-21 00:00:05Z'),
 (1, 'wechat', 'AM', 'pay', 1, '{\"amount\": 11, \"currency\": \"CNY\"}', '$D 11:00:00Z'),
 (1, 'wechat', 'CM', 'pay', 1, '{\"amount\": 7.00, \"currency\": \"USD\"}', '$D 11:00:00Z'),
 (1, 'wechat', 'CX', 'pay', 1, '{\"amount\": 11, \"currency\": \"JPY\"}', '$D 11:00:00Z'),
 (1, 'wechat', 'SM', 'pay', 1, '{\"amount\": 8, \"currency\": \"CNY\"}', '$D 11:00:00Z'),
 (1, 'wechat', 'MS', 'pay', 1, '{\"amount\": 3.33, \"currency\": \"CNY\"}', '$D 12:00:00Z'),
 (1, 'wechat', 'DUP', 'pay', 1, '{\"amount\": 5, \"currency\": \"CNY\"}', '$D 12:00:00Z'),
 (1, 'wechat', 'FS', 'pay', 2, '{\"amount\": 6, \"currency\": \"CNY\"}', '$D 12:30:00Z'),
 (1, 'wechat', 'UV', 'pay', 1, '{\"currency\": \"CNY\"}', '$D 12:00:00Z'),
 (1, 'wechat', 'NS1', 'pay', 1, '{\"amount\": 1.10, \"currency\": \"CNY\"}', '2026-11-19 08:00:00Z'),
 (1, 'wechat', 'NS2', 'pay', 1, '{\"amount\": 2.20, \"currency\": \"CNY\"}', '2026-11-19 09:00:00Z'),
 (1, 'stripe', 'J1', 'pay', 1, '{\"amount\": {\"total\": 1200}, \"currency\": \"JPY\"}', '$D 01:00:00Z'),
 (1, 'stripe', 'C1', 'pay', 1, '{\"amount\": {\"total\": 16890}, \"currency\": \"CNY\"}', '$D 01:00:00Z'),
 (1, 'stripe', 'C2', 'pay', 1, '{\"amount\": {\"total\": 16800}, \"currency\": \"CNY\"}', '$D 01:00:00Z'),
 (1, 'stripe', 'T1', 'pay', 1, '{\"amount\": {\"total\": 500}, \"currency\": \"CNY\", \"success_time\": \"${D}T23:59:58Z\"}', '2026-11-21 00:00:05Z'),
 (1, 'stripe', 'T2', 'pay', 1, '{\"amount\": {\"total\": 700}, \"currency\": \"CNY\", \"success_time\": \"${D}T23:59:59+00:00\"}', '2026-11-21 00:00:03Z'),
 (2, 'alipay', 'B1', 'pay', 2, '{\"amount\": \"9.90\", \"currency\": \"CNY\"}', '$D 10:00:00Z'),
 (3, 'refunds', 'RF1', 'refund:RF1', 1, '{\"refund\": \"-30.00\"}', '$D 10:00:00Z'),
 (3, 'refunds', 'RF2', 'refund:RF2', 1, '{\"refund\": \"-31.00\"}', '$D 10:00:00Z'),
 (9, 'other', 'X1', 'pay', 1, '{\"amount\": 1, \"currency\": \"CNY\"}', '$D 10:00:00Z')" >/dev/null
cat >facts.json <<'JSON'
{"default": {"amount": {"path": "amount", "unit": "major"}, "currency": {"path": "currency"}},
 "channels": {"stripe": {"amount": {"path": "amount.total", "unit": "minor"},
                         "time": {"path": "success_time"}},
              "refunds": {"kinds": {"refund": {"amount": {"path": "refund", "magnitude": true},
                                               "currency": {"value": "CNY"}}}}}}
JSON
# The statement: what the channel says.
cat >stmt.csv <<EOF2
tenant_id,channel,out_trade_no,callback_type,status,payload,received_at
1,wechat,M1,pay,1,"{""amount"": ""168.90"", ""currency"": ""CNY""}",${D}T10:00:00Z
1,wechat,M2,pay,1,"{""amount"": ""¥1,234.50"", ""currency"": ""CNY""}",${D}T10:00:00Z
1,wechat,M3,pay,1,"{""amount"": ""0.59000"", ""currency"": ""CNY""}",${D}T10:00:00Z
1,wechat,LATE,pay,1,"{""amount"": 20.00, ""currency"": ""CNY""}",${D}T23:59:58Z
1,wechat,AM,pay,1,"{""amount"": 10.00, ""currency"": ""CNY""}",${D}T11:00:00Z
1,wechat,CM,pay,1,"{""amount"": 7.00, ""currency"": ""CNY""}",${D}T11:00:00Z
1,wechat,CX,pay,1,"{""amount"": ""10.00"", ""currency"": ""EUR""}",${D}T11:00:00Z
1,wechat,SM,pay,2,"{""amount"": 8, ""currency"": ""CNY""}",${D}T11:00:00Z
1,wechat,MT,pay,1,"{""amount"": ""42.00"", ""currency"": ""CNY""}",${D}T13:00:00Z
1,wechat,订单-1,pay,1,"{""amount"": ""1.00"", ""currency"": ""CNY""}",${D}T13:00:00Z
1,wechat,DUP,pay,1,"{""amount"": 5, ""currency"": ""CNY""}",${D}T12:00:00Z
1,wechat,DUP,pay,1,"{""amount"": 6, ""currency"": ""CNY""}",${D}T12:00:01Z
1,wechat,SAME,pay,1,"{""amount"": 4, ""currency"": ""CNY""}",${D}T12:00:00Z
1,wechat,UV,pay,1,"{""amount"": 9, ""currency"": ""CNY""}",${D}T12:00:00Z
1,stripe,J1,pay,1,"{""amount"": ""1200"", ""currency"": ""JPY""}",${D}T01:00:00Z
1,stripe,C1,pay,1,"{""amount"": ""168.90"", ""currency"": ""CNY""}",${D}T01:00:00Z
1,stripe,C2,pay,1,"{""amount"": ""168.90"", ""currency"": ""CNY""}",${D}T01:00:00Z
1,stripe,T1,pay,1,"{""amount"": ""5.00"", ""currency"": ""CNY""}",${D}T23:59:58Z
2,alipay,B1,pay,2,"{""amount"": ""9.9"", ""currency"": ""CNY""}",${D}T10:00:00Z
3,refunds,RF1,refund:RF1,1,"{""amount"": ""30.00"", ""currency"": ""CNY""}",${D}T10:00:00Z
3,refunds,RF2,refund:RF2,1,"{""amount"": ""30.00"", ""currency"": ""CNY""}",${D}T10:00:00Z
EOF2
# SAME is listed twice, the same record (the same payload) at two times:
# deduplicated, not a duplicate.  SAME4 is listed with the same facts but
# two payloads (4 and "4.00"): two records of one key, a duplicate.
printf '%s\n' '1,wechat,SAME,pay,1,"{""amount"": 4, ""currency"": ""CNY""}",'"${D}T12:00:05Z" \
    '1,wechat,SAME4,pay,1,"{""amount"": 4, ""currency"": ""CNY""}",'"${D}T12:00:00Z" \
    '1,wechat,SAME4,pay,1,"{""amount"": ""4.00"", ""currency"": ""CNY""}",'"${D}T12:00:05Z" >>stmt.csv
# FS: settled (status 2, final), then listed again later as 1: import keeps
# the final status, and so does the statement's side (a duplicate, not a
# status_mismatch against the table's 2).
printf '%s\n' '1,wechat,FS,pay,2,"{""amount"": 6, ""currency"": ""CNY""}",'"${D}T12:30:00Z" \
    '1,wechat,FS,pay,1,"{""amount"": 6, ""currency"": ""CNY""}",'"${D}T12:40:00Z" >>stmt.csv
q "UPDATE payment_callback SET payload = payload" >/dev/null
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
   VALUES (1, 'wechat', 'SAME', 'pay', 1, '{\"amount\": 4, \"currency\": \"CNY\"}', '$D 12:00:00Z')" >/dev/null
dump_table table.csv
before=$(checksum)

run reconcile -d "$DB" --dry-run --facts facts.json --report r.json --discrepancies d.ndjson stmt.csv
eq "a day with discrepancies: exit 5" 5 "$RC"
$MODEL --table table.csv --facts facts.json stmt.csv >model.json
same_lines "every category found, with both sides' facts and the difference" d.ndjson model.json
same_days "per day: both sides' rows, matched, unverified, pending, categories" r.json model.json
check "the period's totals: each side's rows and each currency's money over every day" python3 -c "
import json, sys, collections
from decimal import Decimal
r = json.load(open('r.json'))['reconciliation']
ok = len(r['days']) > 1
for side in ('statement', 'table'):
    rows = sum(d[side]['rows'] for d in r['days'])
    money = collections.defaultdict(Decimal)
    for d in r['days']:
        for c, a in d[side]['amounts'].items():
            money[c] += Decimal(a)
    t = r['totals'][side]
    ok = ok and t['rows'] == rows and {c: Decimal(a) for c, a in t['amounts'].items()} == dict(money)
sys.exit(0 if ok else 1)"
check "the summary gives them" grep -q '^  all days: statement [0-9]* rows' "$ERR"
eq "a dry run writes nothing at all (no register either)" "$before" "$(checksum)"
check "the report states the period it used" jtrue r.json \
    "r['reconciliation']['period'] == {'from': '$D', 'to': '$D'} and r['reconciliation']['zone'] == 'UTC'"
check "every category is counted" jtrue r.json \
    "all(r['reconciliation']['categories'][c] >= 1 for c in ['missing_in_table', 'missing_in_statement', 'amount_mismatch', 'currency_mismatch', 'status_mismatch', 'duplicate_in_statement'])"
check "amounts in two currencies are not compared: CX (10.00 EUR, 11 JPY) is a currency_mismatch alone" python3 -c "
import json, sys
ls = [json.loads(l) for l in open('d.ndjson')]
sys.exit(0 if sorted(l['category'] for l in ls if l['out_trade_no'] == 'CX') == ['currency_mismatch'] else 1)"
check "a declared fact missing on one side is unverified, not matched" jtrue r.json \
    "[d['unverified'] for d in r['reconciliation']['days'] if d['channel'] == 'wechat'] == [1]"
check "the day's verdicts" jtrue r.json \
    "sorted((d['tenant_id'], d['channel'], d['verdict']) for d in r['reconciliation']['days']) == [(1, 'stripe', 'discrepancies'), (1, 'wechat', 'discrepancies'), (2, 'alipay', 'balanced'), (3, 'refunds', 'discrepancies')]"
check "a kind's facts: a constant currency, a signed amount compared by magnitude" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('d.ndjson')]
rf=[(l['out_trade_no'], l['category'], l['table']['amount'], l['table']['currency'], l['difference']) for l in ls if l['channel']=='refunds']
sys.exit(0 if rf == [('RF2', 'amount_mismatch', '31.00', 'CNY', '-1.00')] else 1)"
check "a tenant the statement does not name is not compared" jtrue r.json \
    "all(d['tenant_id'] != 9 for d in r['reconciliation']['days'])"
check "the statement's and the table's totals per currency" jtrue r.json \
    "[d['statement']['amounts'] for d in r['reconciliation']['days'] if d['channel'] == 'alipay'] == [{'CNY': '9.90'}] and [d['table']['amounts'] for d in r['reconciliation']['days'] if d['channel'] == 'stripe'] == [{'CNY': '348.90', 'JPY': '1200'}]"
check "the file, line and (dry run) null first_seen of a line" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('d.ndjson', encoding='utf-8')]
mt=[l for l in ls if l['out_trade_no']=='MT'][0]
sys.exit(0 if mt['file']=='stmt.csv' and mt['line']==10 and mt['first_seen'] is None else 1)"
check "a key listed with different facts: its duplicate line lists every row, with file and line; other lines list none" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('d.ndjson', encoding='utf-8')]
src=open('stmt.csv', encoding='utf-8').read().split(chr(10))
dup=[l for l in ls if l['category']=='duplicate_in_statement' and l['out_trade_no']=='DUP'][0]
got=[(g['file'], g['amount'], g['currency'], g['status'], ',DUP,' in src[g['line']-1]) for g in dup['listed']]
lines=[g['line'] for g in dup['listed']]
others=all(l['listed'] is None and l['listed_rows'] is None for l in ls if l['category']!='duplicate_in_statement')
sys.exit(0 if got==[('stmt.csv','5.00','CNY',1,True),('stmt.csv','6.00','CNY',1,True)] and lines[0] < lines[1] and dup['line']==lines[1] and dup['listed_rows']==2 and others else 1)"
check "a key settled (2) then listed again as 1 keeps the final status: a duplicate, no status_mismatch" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('d.ndjson', encoding='utf-8')]
fs=[(l['category'], l['statement']['status']) for l in ls if l['out_trade_no']=='FS']
sys.exit(0 if fs==[('duplicate_in_statement', 2)] else 1)"
check "CNY minor 16890 matches 168.90, JPY 1200 matches 1200 (exponent 0)" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('d.ndjson')]
sys.exit(0 if not [l for l in ls if l['out_trade_no'] in ('C1','J1')] and [l['difference'] for l in ls if l['out_trade_no']=='C2']==['0.90'] else 1)"
check "the 23:59:58 payment whose callback came at 00:00:05 matches" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('d.ndjson')]
sys.exit(0 if not [l for l in ls if l['out_trade_no'] in ('LATE','T1')] else 1)"
check "with a time fact, a callback after midnight lands in its payment's day" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('d.ndjson')]
sys.exit(0 if [(l['category'],l['day']) for l in ls if l['out_trade_no']=='T2']==[('missing_in_statement','$D')] else 1)"

# The period: an explicit one with a day without a bill, rows outside it.
run reconcile -d "$DB" --dry-run --facts facts.json --period 2026-11-19..$D --report p.json \
    --discrepancies p.ndjson stmt.csv
$MODEL --table table.csv --facts facts.json --period 2026-11-19..$D stmt.csv >model_p.json
same_lines "--period with a day the statement does not cover: no_statement" p.ndjson model_p.json
same_days "--period: the figures per day" p.json model_p.json
check "one no_statement line for the day, key null, its rows not listed one by one" python3 -c "
import json,sys
ls=[json.loads(l) for l in open('p.ndjson')]
ns=[l for l in ls if l['day']=='2026-11-19']
sys.exit(0 if len(ns)==1 and ns[0]['category']=='no_statement' and ns[0]['out_trade_no'] is None and ns[0]['difference']=='-3.30' else 1)"
# Every statement row outside the period, but a table row of the period
# whose key the statement lists on the 20th: counted in its day, which no
# statement row covers (no_statement), where it had vanished, the day
# balanced.
run reconcile -d "$DB" --dry-run --facts facts.json --period 2026-11-21 --report o.json \
    --discrepancies o.ndjson stmt.csv
$MODEL --table table.csv --facts facts.json --period 2026-11-21 stmt.csv >model_o.json
check "rows outside an explicit period are counted, not compared" jtrue o.json \
    "r['reconciliation']['outside_period'] == 26 and r['reconciliation']['days'][0]['statement']['rows'] == 0"
same_lines "the table's row of the period is counted: no_statement" o.ndjson model_o.json
same_days "and its day's figures" o.json model_o.json
eq "a discrepancy: exit 5" 5 "$RC"
# A statement whose rows all fall outside an explicit period still stands
# for its pairs: their table rows of the period are no_statement (a
# truncated or wrong bill is not "balanced").
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
   VALUES (1, 'wechat', 'P22', 'pay', 1, '{\"amount\": \"4.00\", \"currency\": \"CNY\"}', '2026-11-22T10:00:00Z')" >/dev/null
run reconcile -d "$DB" --dry-run --facts facts.json --period 2026-11-22 --report o22.json stmt.csv
eq "a period holding none of the statement's rows, with table rows of its pair: exit 5" 5 "$RC"
check "the pair's day is one no_statement" jtrue o22.json \
    "[(d['channel'], d['day'], d['categories']['no_statement']['count'], d['table']['rows']) for d in r['reconciliation']['days']] == [('wechat', '2026-11-22', 1, 1)]"
# A bill without a row (the header alone) for a merchant and channel --set
# names: the day's table rows are no_statement, not "balanced".
printf 'out_trade_no,callback_type,status,payload,received_at\n' >empty.csv
run reconcile -d "$DB" --dry-run --period 2026-11-22 --set tenant_id=1 --set channel=wechat \
    --report e22.json empty.csv
eq "an empty statement of a pair with table rows in the period: exit 5" 5 "$RC"
check "no_statement for that day" jtrue e22.json \
    "[(d['tenant_id'], d['channel'], d['day'], d['categories']['no_statement']['count']) for d in r['reconciliation']['days']] == [(1, 'wechat', '2026-11-22', 1)]"
run reconcile -d "$DB" --dry-run --period 2026-11-23 --set tenant_id=1 --set channel=wechat empty.csv
eq "the same empty statement for a day without table rows is balanced: exit 0" 0 "$RC"
q "DELETE FROM payment_callback WHERE out_trade_no = 'P22'" >/dev/null

# The zone: at +08:00 the 23:59:58Z rows belong to the next day.
run reconcile -d "$DB" --dry-run --facts facts.json --timezone +08:00 --report z.json \
    --discrepancies z.ndjson stmt.csv
$MODEL --table table.csv --facts facts.json --zone +08:00 stmt.csv >model_z.json
same_lines "days cut at midnight in --timezone" z.ndjson model_z.json
same_days "--timezone: the figures per day" z.json model_z.json
check "the period in that zone" jtrue z.json \
    "r['reconciliation']['period'] == {'from': '$D', 'to': '2026-11-21'} and r['reconciliation']['zone'] == '+08:00'"

# Rows outside the period, at a DST change at midnight: America/Santiago
# goes from -03 back to -04 at 24:00 on 2026-04-04, and Lord Howe by half an
# hour at 02:00; the count (day bounds worked out once on the server) must
# be the count of rows whose own local day is outside, as Python's zoneinfo
# gives it, for a period of one day and of two.
python3 - >dst.csv <<'PY'
import datetime as dt
print("tenant_id,channel,out_trade_no,callback_type,status,payload,received_at")
t = dt.datetime(2026, 4, 3, 20, 0, tzinfo=dt.timezone.utc)
for i in range(230):
    print('990,dsttest,DST%03d,pay,2,"{""amount"":1.00,""currency"":""CNY""}",%s'
          % (i, (t + dt.timedelta(minutes=19 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")))
PY
for zp in America/Santiago:2026-04-04 America/Santiago:2026-04-04..2026-04-05 \
          Australia/Lord_Howe:2026-04-05 America/Santiago:2026-04-05; do
    zone=${zp%%:*} period=${zp#*:}
    want=$(python3 - "$zone" "$period" <<'PY'
import csv, datetime as dt, sys, zoneinfo
z = zoneinfo.ZoneInfo(sys.argv[1]); a, _, b = sys.argv[2].partition("..")
lo, hi = dt.date.fromisoformat(a), dt.date.fromisoformat(b or a)
rows = list(csv.DictReader(open("dst.csv")))
print(sum(1 for r in rows if not lo <= dt.datetime.fromisoformat(
    r["received_at"].replace("Z", "+00:00")).astimezone(z).date() <= hi))
PY
)
    run reconcile -d "$DB" --dry-run --timezone "$zone" --period "$period" --report dst.json dst.csv
    check "rows outside $period in $zone: $want, each by its own local day" jtrue dst.json \
        "r['reconciliation']['outside_period'] == $want"
done

# A balanced day: exit 0 and an empty discrepancies file.
grep -E '^tenant_id|^2,' stmt.csv >balanced.csv
echo stale >bal.ndjson
run reconcile -d "$DB" --dry-run --report b.json --discrepancies bal.ndjson balanced.csv
eq "a balanced day: exit 0" 0 "$RC"
check "the discrepancies file is written, empty" test -f bal.ndjson -a ! -s bal.ndjson
check "the verdict is balanced" jtrue b.json "r['reconciliation']['verdict'] == 'balanced'"

# The CSV: a byte-order mark, the Chinese text intact, a column per fact.
run reconcile -d "$DB" --dry-run --facts facts.json --discrepancies d.csv stmt.csv
check "the CSV opens with a UTF-8 byte-order mark" python3 -c "
import sys; sys.exit(0 if open('d.csv','rb').read(3) == b'\xef\xbb\xbf' else 1)"
check "the CSV holds the Chinese key and the flattened facts" python3 -c "
import csv,sys
rows=list(csv.DictReader(open('d.csv', encoding='utf-8-sig')))
r=[x for x in rows if x['out_trade_no']=='订单-1']
sys.exit(0 if r and r[0]['category']=='missing_in_table' and r[0]['statement_amount']=='1.00' and r[0]['table_amount']=='' else 1)"
check "the CSV lists a duplicated key's rows in its listed column" python3 -c "
import csv,sys
rows=list(csv.DictReader(open('d.csv', encoding='utf-8-sig')))
r=[x for x in rows if x['out_trade_no']=='DUP' and x['category']=='duplicate_in_statement']
v=r[0]['listed'] if r else ''
sys.exit(0 if r and r[0]['listed_rows']=='2' and v.count('stmt.csv:')==2 and 'CNY 5.00, status 1' in v and 'CNY 6.00' in v else 1)"
ndj=$(wc -l <d.ndjson)
eq "the CSV has a line per discrepancy and a header" "$((ndj + 1))" "$(python3 -c "import csv;print(len(list(csv.reader(open('d.csv', encoding='utf-8-sig')))))")"

# The page: a reconciliation section first, the verdict per day, in a real
# browser; a hostile key shows as text.
cp stmt.csv hostile.csv
printf '%s\n' '1,wechat,<img src=x onerror=alert(1)>,pay,1,"{""amount"": ""2.00"", ""currency"": ""CNY""}",'"${D}T14:00:00Z" >>hostile.csv
run reconcile -d "$DB" --dry-run --facts facts.json --html page.html hostile.csv
eq "the page's run: exit 5" 5 "$RC"
check "the page names the command it reports" grep -q '<h1>idemload reconcile --dry-run report</h1>' page.html
check "the page's target is the table" grep -q '<dd id="target">payment_callback</dd>' page.html
check "the page says the dry run wrote nothing" grep -q 'a dry run: nothing written, no register' page.html
check "nothing on the page calls it validate or a merge" test "$(grep -c 'validate\|would merge\|does not merge\|No valid row' page.html)" = 0
check "the rows compared are a figure" grep -q 'data-figure="compared"' page.html
check "a day's verdict is coloured by its class" grep -qF 'tr.discrepancies td.verdict{background:#fbd5d5' page.html
check "the run's verdict is marked bad" grep -q '<p class="verdict bad">Verdict: <strong>discrepancies</strong>' page.html
CHECK="python3 $SRC/tests/cli/html_check.py"
if $CHECK render page.html page.png page.dom; then
    ok "chromium rendered the page"
    check "the screenshot is not blank" $CHECK png page.png
    $CHECK dom page.dom >page.json
    check "the reconciliation section comes first" python3 -c "
import sys; t=open('page.dom', encoding='utf-8').read()
sys.exit(0 if 0 <= t.find('Reconciliation') < t.find('rows read') or 0 <= t.find('Reconciliation') < t.find('file-table') else 1)"
    check "the verdict per tenant, channel and day" jtrue page.json \
        "sorted((row[0], row[1], row[2], row[3]) for row in r['tables']['recon-days'][1:]) == [('1', 'stripe', '$D', 'discrepancies'), ('1', 'wechat', '$D', 'discrepancies'), ('2', 'alipay', '$D', 'balanced'), ('3', 'refunds', '$D', 'discrepancies')]"
    check "the period's totals, in a table of their own" jtrue page.json \
        "r['tables']['recon-totals'][1][0] == 'discrepancies'"
    check "the two-sided totals" jtrue page.json \
        "[row[4:6] for row in r['tables']['recon-days'][1:] if row[1] == 'alipay'] == [['1CNY 9.90', '1CNY 9.90']]"
    check "the discrepancies by category, with examples" jtrue page.json \
        "any(row[2] == 'MT' for row in r['tables']['recon-missing_in_table']) and any(row[2] == 'AM' and row[7] == '-1.00' for row in r['tables']['recon-amount_mismatch'])"
    check "a hostile key is text, no element" jtrue page.json \
        "'img' not in r['tags'] and 'script' not in r['tags'] and any(row[2] == '<img src=x onerror=alert(1)>' for row in r['tables']['recon-missing_in_table'])"
else
    fail "chromium rendered the page"
fi

# Many lines: fetched in batches, every one in the file, a few on the page.
python3 -c "
print('tenant_id,channel,out_trade_no,callback_type,status,payload,received_at')
for i in range(12000):
    print('8,bulk,K%05d,pay,1,\"{\"\"amount\"\": \"\"%d.%02d\"\", \"\"currency\"\": \"\"CNY\"\"}\",2026-11-20T%02d:%02d:00Z' % (i, i, i % 100, i % 24, i % 60))
" >bulk.csv
run reconcile -d "$DB" --dry-run --report bulk.json --html bulk.html --discrepancies bulk.ndjson bulk.csv
eq "12000 rows the table lacks: exit 5" 5 "$RC"
eq "every one in the discrepancies file, in key order" "12000 K00000 K11999" \
    "$(python3 -c "
import json; ls=[json.loads(l) for l in open('bulk.ndjson')]
print(len(ls), ls[0]['out_trade_no'], ls[-1]['out_trade_no'])")"
check "the missing amount is the statement's total" jtrue bulk.json \
    "r['reconciliation']['days'][0]['categories']['missing_in_table'] == {'count': 12000, 'amount': '$(python3 -c "
from decimal import Decimal; print(sum(Decimal('%d.%02d' % (i, i % 100)) for i in range(12000)))")', 'amounts': {'CNY': r['reconciliation']['days'][0]['statement']['amounts']['CNY']}, 'without_amount': 0, 'absolute': {'CNY': r['reconciliation']['days'][0]['statement']['amounts']['CNY']}}"
check "the page shows examples and points at the file for the rest" contains bulk.html "11990 more in the discrepancies file"

# Configuration errors: exit 2.
run reconcile -d "$DB" --period 2026-13-01 --report badp.json stmt.csv
eq "a bad --period: exit 2" 2 "$RC"
check "the report's file says it was not read, and why" jtrue badp.json \
    "r['files'][0]['status'] == 'failed' and r['files'][0]['error'].startswith('not read: nothing was compared (exit 2')"
run reconcile -d "$DB" --grace 2w stmt.csv
eq "a bad --grace: exit 2" 2 "$RC"
echo '{"channels": {"x": {"amount": 5}}}' >bad.json
run reconcile -d "$DB" --facts bad.json stmt.csv
eq "a bad --facts file: exit 2" 2 "$RC"
run reconcile -d "$DB" --report - --discrepancies - stmt.csv
eq "--discrepancies - and --report - on one standard output: exit 2" 2 "$RC"
run reconcile -d "$DB" --facts /nonexistent.json stmt.csv
eq "an unreadable --facts file: exit 2" 2 "$RC"
# A rejected row and discrepancies: 5 outranks 1.
cp stmt.csv rej.csv && echo '1,wechat,BAD,pay,notanumber,{},2026-11-20T10:00:00Z' >>rej.csv
run reconcile -d "$DB" --dry-run --facts facts.json --rejects rj.ndjson rej.csv
eq "rejects and discrepancies: exit 5" 5 "$RC"
check "the rejected row is in the rejects file" contains rj.ndjson BAD
run reconcile -d "$DB" --dry-run --rejects rj2.ndjson balanced.csv missing.csv
eq "an unreadable file: exit 3, nothing compared" 3 "$RC"

json_lines() { python3 -c "
import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l); print(o['category'], o['callback_type'], o['statement']['amount'], o['table']['amount'], o['difference'])" "$1"; }
# A channel's bill read by its profile: the statement's facts are the
# profile's money facts (WeChat 订单金额 for a payment, 申请退款金额 for a
# refund, 货币种类), the table's where --facts says (here the rows the same
# profile loaded, so the same payload members; the sample bill has no
# coupon, so 应结订单金额 and 退款金额 equal them).
WB=$SRC/samples/bill-wechat-trade-2024-05-01.csv
cat >wfacts.json <<'JSON'
{"channels": {"wechat": {"amount": {"path": "应结订单金额", "unit": "major"}, "currency": {"path": "货币种类"},
                         "kinds": {"refund": {"amount": {"path": "退款金额", "unit": "major"}}}}}}
JSON
run import -q -d "$DB" --rejects rjw.ndjson --profile wechat-trade --set tenant_id=77 "$WB"
eq "the WeChat bill loads by its profile" 0 "$RC"
run reconcile -d "$DB" --dry-run --rejects rjw.ndjson --profile wechat-trade --set tenant_id=77 \
    --facts wfacts.json --report wr1.json --discrepancies wd1.ndjson "$WB"
eq "the bill against the rows it loaded: balanced (exit 0)" 0 "$RC"
check "every row matched on the profile's money facts (4 of 4)" \
    jtrue wr1.json 'sum(d["matched"] for d in r["reconciliation"]["days"]) == 4'
q "UPDATE payment_callback SET payload = jsonb_set(payload, '{退款金额}', '\"31.00\"')
    WHERE tenant_id = 77 AND callback_type = 'refund:RF1'" >/dev/null
run reconcile -d "$DB" --dry-run --rejects rjw.ndjson --profile wechat-trade --set tenant_id=77 \
    --facts wfacts.json --discrepancies wd2.ndjson "$WB"
eq "a refund whose amount the table holds otherwise: exit 5" 5 "$RC"
eq "one amount_mismatch on refund:RF1, 30.00 - 31.00" "amount_mismatch refund:RF1 30.00 31.00 -1.00" \
    "$(json_lines wd2.ndjson)"
# A fee that differs is an amount_mismatch (SPEC's categories have no fee
# of their own), only where both sides declare a fee; the line shows both
# fees, so it says which fact differed (here the amounts agree: 0.00).
# WeChat's 手续费 is a settlement fact of the built-in profile, not
# compared: a custom profile that declares it as a fee to compare.
"$IDEMLOAD" profiles wechat-trade | python3 -c "
import json, sys
p = json.load(sys.stdin)
p['name'] = 'wechat-fee'
for k in p['money']:
    k['fee'] = {'column': '手续费'}
json.dump(p, open('wxfee.json', 'w'), ensure_ascii=False)"
cat >wfacts_fee.json <<'JSON'
{"channels": {"wechat": {"amount": {"path": "应结订单金额", "unit": "major"}, "currency": {"path": "货币种类"},
                         "fee": {"path": "手续费", "unit": "major"},
                         "kinds": {"refund": {"amount": {"path": "退款金额", "unit": "major"}}}}}}
JSON
q "UPDATE payment_callback SET payload = jsonb_set(payload, '{退款金额}', '\"30.00\"')
    WHERE tenant_id = 77 AND callback_type = 'refund:RF1'" >/dev/null
run reconcile -d "$DB" --dry-run --rejects rjw.ndjson --profile ./wxfee.json --set tenant_id=77 \
    --facts wfacts_fee.json --discrepancies wf0.ndjson "$WB"
eq "the fees agree: balanced" 0 "$RC"
q "UPDATE payment_callback SET payload = jsonb_set(payload, '{手续费}', '\"0.61000\"')
    WHERE tenant_id = 77 AND out_trade_no = 'ORD1' AND callback_type NOT LIKE 'refund%'" >/dev/null
run reconcile -d "$DB" --dry-run --rejects rjw.ndjson --profile ./wxfee.json --set tenant_id=77 \
    --facts wfacts_fee.json --discrepancies wf1.ndjson "$WB"
eq "a fee that differs: exit 5" 5 "$RC"
eq "one amount_mismatch, amounts equal, the two fees on the line" "amount_mismatch 99.00 99.00 0.00 0.59 0.61" \
    "$(python3 -c "
import json
for l in open('wf1.ndjson'):
    o=json.loads(l); print(o['category'], o['statement']['amount'], o['table']['amount'], o['difference'], o['statement']['fee'], o['table']['fee'])")"
run reconcile -d "$DB" --dry-run --rejects rjw.ndjson --profile wechat-trade --set tenant_id=77 \
    --facts wfacts.json --discrepancies wf2.ndjson "$WB"
eq "without a fee in --facts the fee is not compared: balanced" 0 "$RC"
run reconcile -d "$DB" --dry-run --rejects rjw.ndjson --profile wechat-trade --set tenant_id=77 \
    --facts wfacts_fee.json --discrepancies wf3.ndjson "$WB"
eq "the built-in profile's 手续费 is a settlement fact, not compared: balanced" 0 "$RC"

# The window of a channel with a time fact: its table rows the statement
# does not list are read when they arrived within 31 days of the period
# (README: the read stays near the period), whatever their time fact says;
# one that arrived further away is not seen.  The boundary, both sides.
for r in "W1|${D}T13:00:00Z|2026-12-21 23:59:59Z" "W2|${D}T13:00:00Z|2026-12-22 00:00:00Z" \
         "W3|${D}T13:00:00Z|2026-10-20 00:00:00Z" "W4|${D}T13:00:00Z|2026-10-19 23:59:59Z" \
         "S0|${D}T12:00:00Z|$D 12:00:01Z"; do
    IFS='|' read -r k st ra <<<"$r"
    q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
       VALUES (4, 'stripe', '$k', 'pay', 1, '{\"amount\": {\"total\": 100}, \"currency\": \"CNY\", \"success_time\": \"$st\"}', '$ra')" >/dev/null
done
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '4,stripe,S0,pay,1,"{""amount"": ""1.00"", ""currency"": ""CNY""}",'"${D}T12:00:00Z" >win.csv
run reconcile -d "$DB" --dry-run --facts facts.json --rejects rjwin.ndjson --discrepancies win.ndjson win.csv
eq "a time fact in the period: rows that arrived 31 days before it to 31 days after it are missing_in_statement, not those beyond" \
    "missing_in_statement W1 $D
missing_in_statement W3 $D" "$(python3 -c "
import json
for l in open('win.ndjson'):
    o=json.loads(l); print(o['category'], o['out_trade_no'], o['day'])")"

# The summary on the terminal: a channel and a currency are the data's
# text, so control characters in them are escaped, never sent as they are.
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    "9,$(printf 'x\033[2J\033]0;T\007')y,E1,pay,2,\"{\"\"amount\"\":\"\"1.00\"\",\"\"currency\"\":\"\"C\\u001bN\"\"}\",2026-11-28T10:00:00Z" >esc.csv
run reconcile -d "$DB" --dry-run --rejects rj3.ndjson esc.csv
eq "a statement row missing from the table: exit 5" 5 "$RC"
check "the summary escapes the channel's and currency's control characters" \
    test "$(grep -c "$(printf '\033')" "$ERR")" -eq 0
check "and shows them as codes" grep -qF 'x\u001B[2J' "$ERR"

# Money text: only its dress comes off (a sign, an ISO code, quotes, commas
# between thousands); text that is no amount is unverified, never read as
# another number ("1e400" is not 1400, "1.234,50" not 1.23450).
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' >mt.csv
cp mt.csv ms.csv
n=0
for v in '1e400|1400.00' '1.234,50|1.23450' '12 34|1234' 'CNY 1,234.50|1234.50' '¥-30.00|-30.00' \
         '1,234,567.89|1234567.89' '1234.5 CNY|1234.50' '元|0' '+5|5.00' '1,23|123'; do
    n=$((n + 1))
    printf '7,dress,D%d,pay,1,"{""amount"": ""%s"", ""currency"": ""CNY""}",%sT10:00:00Z\n' $n "${v%%|*}" "$D" >>ms.csv
    printf '7,dress,D%d,pay,1,"{""amount"": ""%s"", ""currency"": ""CNY""}",%sT10:00:00Z\n' $n "${v##*|}" "$D" >>mt.csv
done
run import -d "$DB" --rejects rjm.ndjson mt.csv
eq "the table side of the money cases: loaded" 0 "$RC"
run reconcile -d "$DB" --dry-run --rejects rjm.ndjson --report mr.json --discrepancies md.ndjson ms.csv
check "dressed amounts match, undressable ones are unverified (1e400, 1.234,50, 12 34, 元, 1,23)" jtrue mr.json \
    "[(d['matched'], d['unverified'], d['categories']['amount_mismatch']['count']) for d in r['reconciliation']['days'] if d['channel'] == 'dress'] == [(5, 5, 0)]"
eq "no amount read as another number: no discrepancy line" 0 "$(wc -l <md.ndjson)"

# Money of two currencies is never added up: a category's amount is per
# currency, its single "amount" only where there is one currency.
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '8,mixed,X1,pay,1,"{""amount"": ""1.00"", ""currency"": ""USD""}",'"${D}T10:00:00Z" \
    '8,mixed,X2,pay,1,"{""amount"": ""100"", ""currency"": ""JPY""}",'"${D}T10:00:00Z" \
    '8,mixed,X3,pay,1,"{""amount"": ""2.50"", ""currency"": ""U\u001bSD""}",'"${D}T10:00:00Z" >mx.csv
run reconcile -d "$DB" --dry-run --rejects rjx.ndjson --report mxr.json mx.csv
eq "three rows missing in the table: exit 5" 5 "$RC"
check "missing_in_table's amount per currency, no sum across them" jtrue mxr.json \
    "[d['categories']['missing_in_table'] for d in r['reconciliation']['days'] if d['channel'] == 'mixed'] == [{'count': 3, 'amount': None, 'amounts': {'JPY': '100', 'USD': '1.00', 'U\x1bSD': '2.50'}, 'without_amount': 0, 'absolute': {'JPY': '100', 'USD': '1.00', 'U\x1bSD': '2.50'}}]"
check "the summary shows each currency's sum" grep -qF 'missing_in_table 3 (absolute JPY 100, U\u001BSD 2.50, USD 1.00, net JPY 100, U\u001BSD 2.50, USD 1.00)' "$ERR"
check "and escapes the currency there too" test "$(grep -c "$(printf '\033')" "$ERR")" -eq 0

# An amount that cannot be read is in no total, and the totals say how
# many rows it left out, on each side and in a category.
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '8,junk,J1,pay,1,"{""amount"": ""¥1,234.50\\u0022><img"", ""currency"": ""CNY""}",'"${D}T10:00:00Z" \
    '8,junk,J2,pay,1,"{""amount"": ""2.00"", ""currency"": ""CNY""}",'"${D}T10:00:00Z" >ju.csv
run reconcile -d "$DB" --dry-run --report jur.json --html ju.html ju.csv
eq "two rows missing in the table: exit 5" 5 "$RC"
check "the statement's side counts the row without a readable amount" jtrue jur.json \
    "[(d['statement'], d['categories']['missing_in_table']) for d in r['reconciliation']['days'] if d['channel'] == 'junk'] == [({'rows': 2, 'amounts': {'CNY': '2.00'}, 'without_amount': 1, 'kinds': {'pay': {'rows': 2, 'amounts': {'CNY': '2.00'}, 'without_amount': 1}}}, {'count': 2, 'amount': '2.00', 'amounts': {'CNY': '2.00'}, 'without_amount': 1, 'absolute': {'CNY': '2.00'}})]"
check "the summary says so" grep -qF 'statement 2 rows (CNY 2.00; 1 without a readable amount)' "$ERR"
check "and for the category" grep -qF 'missing_in_table 2 (absolute CNY 2.00, net CNY 2.00; 1 without an amount)' "$ERR"

# Amounts per kind and currency (SPEC.md, "Verdict and totals"): a payment
# and its refund are each shown, not only added up.
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '8,kinds,K1,pay,1,"{""amount"": ""100.00"", ""currency"": ""CNY""}",'"${D}T10:00:00Z" \
    '8,kinds,K1,refund:R1,1,"{""amount"": ""30.00"", ""currency"": ""CNY""}",'"${D}T11:00:00Z" \
    '8,kinds,K2,pay,1,"{""amount"": ""5"", ""currency"": ""JPY""}",'"${D}T12:00:00Z" >ki.csv
run reconcile -d "$DB" --dry-run --report ki.json --html ki.html ki.csv
eq "three rows missing in the table: exit 5" 5 "$RC"
check "the day's statement side per kind and currency" jtrue ki.json \
    "[d['statement']['kinds'] for d in r['reconciliation']['days'] if d['channel'] == 'kinds'] == [{'pay': {'rows': 2, 'amounts': {'CNY': '100.00', 'JPY': '5'}, 'without_amount': 0}, 'refund': {'rows': 1, 'amounts': {'CNY': '30.00'}, 'without_amount': 0}}]"
check "and the period's totals" jtrue ki.json \
    "r['reconciliation']['totals']['statement']['kinds']['refund'] == {'rows': 1, 'amounts': {'CNY': '30.00'}, 'without_amount': 0} and r['reconciliation']['totals']['table']['kinds'] == {}"
check "the summary shows each kind, and the net" grep -qF 'statement 3 rows [pay 2 (CNY 100.00, JPY 5), refund 1 (CNY 30.00)] (net CNY 70.00, JPY 5), table 0 rows' "$ERR"
check "and the page" grep -qF '<div class="kind">refund 1<br>CNY 30.00</div>' ki.html

# A category whose lines have no difference (two currencies) has no
# amount, not "0.00", and shows both sides' amounts (SPEC "Reconcile for
# finance"), not "1 without an amount".
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
   VALUES (8, 'ccy', 'U1', 'pay', 1, '{\"amount\": \"20.00\", \"currency\": \"CNY\"}', '${D}T10:00:00Z')" >/dev/null
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '8,ccy,U1,pay,1,"{""amount"": ""20.00"", ""currency"": ""USD""}",'"${D}T10:00:00Z" >cu.csv
run reconcile -d "$DB" --dry-run --report cu.json cu.csv
eq "one currency mismatch: exit 5" 5 "$RC"
check "its category has no amount (null), both sides' amounts" jtrue cu.json \
    "[d['categories']['currency_mismatch'] for d in r['reconciliation']['days'] if d['channel'] == 'ccy'] == [{'count': 1, 'amount': None, 'amounts': {}, 'without_amount': 0, 'absolute': {}, 'sides': 'statement USD 20.00; table CNY 20.00'}]"
check "the summary says so, no 0.00" grep -qF 'currency_mismatch 1 (statement USD 20.00; table CNY 20.00)' "$ERR"
check "the page too" grep -qF '1 without a readable amount' ju.html

# A hostile file name and a key a spreadsheet would run as a formula: the
# discrepancies file escapes the name (its bytes in file_base64) and the CSV
# writes the formula as text, after an apostrophe; amounts stay numbers.
hname=$(printf 'st-\xb6\xd4.csv')
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '9,formula,=1+2,pay,1,"{""amount"": ""-1.00"", ""currency"": ""CNY""}",'"${D}T10:00:00Z" >"$hname"
run reconcile -d "$DB" --dry-run --rejects rjh.ndjson --discrepancies hd.ndjson "$hname"
eq "a hostile file name: a line for its row (exit 5)" 5 "$RC"
check "the NDJSON line names the file escaped, its bytes in file_base64" python3 -c '
import base64, json, sys
o = json.loads(open("hd.ndjson").readline())
assert o["file"] == "st-\\xB6\\xD4.csv" and o["out_trade_no"] == "=1+2", o
assert base64.b64decode(o["file_base64"]) == sys.argv[1].encode("utf-8", "surrogateescape")
' "$hname"
run reconcile -d "$DB" --dry-run --rejects rjh.ndjson --discrepancies hd.csv "$hname"
check "the CSV writes the formula as text and keeps the amount a number" python3 -c '
import csv, sys
rows = list(csv.DictReader(open("hd.csv", encoding="utf-8-sig")))
r = rows[0]
assert (r["out_trade_no"], r["statement_amount"], r["difference"], r["file"]) == ("\x27=1+2", "-1.00", "-1.00", "st-\\xB6\\xD4.csv"), r
'

# A day without a bill whose table rows hold two currencies: one
# no_statement line (no single difference), each currency's money in the
# day's category, nothing "without an amount".
init_db recon_ns_mixed
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) VALUES
 (4, 'mx', 'A', 'pay', 1, '{\"amount\": \"10.00\", \"currency\": \"CNY\"}', '2026-11-19 10:00Z'),
 (4, 'mx', 'B', 'pay', 1, '{\"amount\": \"5.00\", \"currency\": \"USD\"}', '2026-11-19 11:00Z'),
 (4, 'mx', 'C', 'pay', 1, '{\"amount\": \"3.00\", \"currency\": \"CNY\"}', '2026-11-20 11:00Z')" >/dev/null
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '4,mx,C,pay,1,"{""amount"": ""3.00"", ""currency"": ""CNY""}",2026-11-20T11:00:00Z' >mx.csv
run reconcile -d "$DB" --dry-run --period 2026-11-19..2026-11-20 --report mx.json \
    --discrepancies mx.ndjson mx.csv
eq "a day without a bill: exit 5" 5 "$RC"
check "its rows in two currencies: one no_statement line, each currency's money in the category" jtrue mx.json \
    "[d['categories']['no_statement'] for d in r['reconciliation']['days'] if d['day'] == '2026-11-19'] == [{'count': 1, 'amount': None, 'amounts': {'CNY': '-10.00', 'USD': '-5.00'}, 'without_amount': 0, 'absolute': {'CNY': '10.00', 'USD': '5.00'}}]"
check "the summary says the money, not 'without an amount'" grep -qF 'no_statement 1 (absolute CNY 10.00, USD 5.00, net CNY -10.00, USD -5.00)' "$ERR"
eq "the file has that one line" "no_statement 2026-11-19 None" "$(python3 -c "
import json; ls=[json.loads(l) for l in open('mx.ndjson')]
print(' '.join(' '.join(str(x) for x in (l['category'], l['day'], l['difference'])) for l in ls))")"

# A WeChat bill against a tenant without a row: its REVOKED row has no
# amount (nor currency), so missing_in_table's money is the other rows' CNY
# and the one without an amount is counted, never shown as "? ?".
run reconcile -d "$DB" --dry-run --rejects rjw2.ndjson --profile wechat-trade --set tenant_id=79 \
    --report wr.json --html wr.html "$SRC/samples/bill-wechat-trade-2024-05-01.csv"
eq "the bill's four rows are missing in the table: exit 5" 5 "$RC"
check "the summary shows the CNY and the row without an amount" \
    grep -qF 'missing_in_table 4 (absolute CNY 149.00, net CNY 149.00; 1 without an amount)' "$ERR"
check "and no '? ?' in the summary" test "$(grep -cF '? ?' "$ERR")" = 0
check "nor on the page" test "$(grep -cF '? ?' wr.html)" = 0
check "the report: the CNY sum, one without an amount" jtrue wr.json \
    "[d['categories']['missing_in_table'] for d in r['reconciliation']['days']] == [{'count': 4, 'amount': None, 'amounts': {'CNY': '149.00'}, 'without_amount': 1, 'absolute': {'CNY': '149.00'}}]"

finish
