#!/usr/bin/env bash
# The --html page as Chromium lays it out, at a desktop's width (1280 px)
# and a phone's (390 px), with awkward data (tests/cli/html_check.py
# layout measures the laid-out page):
# - no figure drawn over two lines: an 18-digit amount beside a long key
#   read as two numbers ("12345678901234568" over "1.90"), a tenant id as
#   three, a day or a verdict cut in the middle;
# - no chart label running past the chart's edge (a 13-digit tenant, a long
#   channel, CJK text, a control shown as its code \u202E);
# - at a desktop's width nothing runs out of its card (a channel without
#   spaces in the list of empty periods);
# - the table of files adds up as the report does (README "The files":
#   read = rejected + skipped + dedup. + would merge, the page shows the
#   same), and the reconcile page's figures are the report's.
. "$(dirname "$0")/../lib.sh"

CHECK="python3 $SRC/tests/cli/html_check.py"
init_db page_layout
export PGTZ=UTC

# layout NAME: NAME.html measured at both widths into NAME.1280.json and
# NAME.390.json; checks nothing is split or clipped (and at 1280 that no
# card overflows).
layout() {
    local w
    for w in 1280 390; do
        if ! $CHECK layout "$1.html" $w >"$1.$w.json"; then
            fail "$1: chromium laid out the page at $w px"
            continue
        fi
        eq "$1 at $w px: no figure drawn over two lines" "[]" "$(json "$1.$w.json" 'r["split"][:6]')"
        eq "$1 at $w px: every chart label inside its chart" "[]" "$(json "$1.$w.json" 'r["clipped"][:6]')"
    done
    [ -f "$1.1280.json" ] &&
        eq "$1 at 1280 px: nothing runs out of its card" "[]" "$(json "$1.1280.json" 'r["overflow"]')"
}

# --- an import of awkward names: 13-digit tenants, long channels and kinds
python3 - >awkward.ndjson <<'PY'
import json
names = ["A" * 300, "支付宝微信支付渠道名称很长的中文文本测试", "rtl\u202egnp.exe-quickpass-merchant",
         "</style><b>x</b>" * 4, "wechat"]
for i, ch in enumerate(names):
    for h in (10, 13):
        print(json.dumps({"tenant_id": 1000000000000 + i, "channel": ch,
                          "out_trade_no": "K%d-%d" % (i, h), "callback_type": "payment_settled_" + "x" * 20,
                          "status": 1, "payload": {}, "received_at": "2026-11-28T%02d:00:00Z" % h},
                         ensure_ascii=False))
PY
run import -d "$DB" --rejects rj.ndjson --report imp.json --html imp.html awkward.ndjson
eq "awkward import: exit 0" 0 "$RC"
layout imp

# --- validate of a bill whose profile skips rows, with a canonical file
run validate -q --rejects rj2.ndjson --report val.json --html val.html --profile stripe-balance \
    --set tenant_id=1 "$SRC/samples/bill-stripe-balance-2024-05-01.csv"
if $CHECK render val.html val.png val.dom; then
    $CHECK dom val.dom >val.page.json
    check "validate: the table of files shows skipped and would merge, as the report" python3 - val.json val.page.json <<'PY'
import json, sys
rep, page = json.load(open(sys.argv[1])), json.load(open(sys.argv[2], encoding="utf-8"))
t = page["tables"]["file-table"]
head, rows = [c.strip() for c in t[0]], [[c.strip() for c in r] for r in t[1:]]
col = {k: head.index(k) for k in ("read", "rejected", "dedup.", "skipped", "would merge")} \
    if all(k in head for k in ("skipped", "would merge")) else None
if col is None:
    print("file table columns:", head); sys.exit(1)
for f, row in zip(rep["files"], rows):
    got = [int(row[col[k]]) for k in ("read", "rejected", "dedup.", "skipped", "would merge")]
    want = [f["rows_read"], f["rows_rejected"], f["rows_deduplicated"], f["rows_skipped"], f["would_merge"]]
    if got != want or got[0] != sum(got[1:]):
        print("file", f["path"], "page", got, "report", want); sys.exit(1)
sys.exit(0 if rep["files"] and rep["files"][0]["rows_skipped"] > 0 else 1)
PY
else
    fail "validate: chromium rendered the page"
fi

# --- reconcile: 18-digit amounts in two currencies beside long keys, every
# category, several days
python3 - <<'PY'
import json
stmt, table = open("stmt.ndjson", "w"), open("table.ndjson", "w")
def row(f, ch, k, ct, st, amount, cur, day, hh=10):
    pay = {"currency": cur} if amount is None else {"amount": amount, "currency": cur}
    f.write(json.dumps({"tenant_id": 1000000000001, "channel": ch, "out_trade_no": k, "callback_type": ct,
                        "status": st, "payload": pay,
                        "received_at": "%sT%02d:00:00Z" % (day, hh)}, ensure_ascii=False) + "\n")
for d in ("2026-09-01", "2026-09-02", "2026-09-03"):
    for ch in ("wechat", "<script>alert(1)</script>\u202egnp.exe-" + "B" * 60):
        k = lambda s: "%s-%s" % (s, d)
        for f in (stmt, table):
            row(f, ch, k("OK"), "pay", 1, "100.00", "CNY", d)
            row(f, ch, k("USD"), "pay", 1, "123456789012345678.90", "USD", d)
        row(stmt, ch, k("MT") + "A" * 80, "pay", 1, "999999999999999999.99", "CNY", d)
        row(table, ch, k("MS"), "pay", 1, "7.00", "CNY", d)
        row(stmt, ch, k("AM"), "refund:R", 1, "-5.00", "CNY", d); row(table, ch, k("AM"), "refund:R", 1, "5.00", "CNY", d)
        row(stmt, ch, k("CM"), "pay", 1, "3.00", "USD", d); row(table, ch, k("CM"), "pay", 1, "3.00", "CNY", d)
        row(stmt, ch, k("SM"), "pay", 2, "4.00", "CNY", d); row(table, ch, k("SM"), "pay", 1, "4.00", "CNY", d)
        row(stmt, ch, k("DUP"), "pay", 1, "6.00", "CNY", d); row(stmt, ch, k("DUP"), "pay", 1, "6.50", "CNY", d, 11)
        row(table, ch, k("DUP"), "pay", 1, "6.00", "CNY", d)
        row(stmt, ch, k("UV"), "pay", 1, None, "CNY", d); row(table, ch, k("UV"), "pay", 1, "8.00", "CNY", d)
    row(table, "alipay", "AL-" + d, "pay", 1, "1.00", "CNY", d)
row(stmt, "alipay", "AL-2026-09-01", "pay", 1, "1.00", "CNY", "2026-09-01")
row(stmt, "alipay", "AL-2026-09-03", "pay", 1, "1.00", "CNY", "2026-09-03")
PY
run import -q -d "$DB" --rejects rj3.ndjson table.ndjson
eq "the table's rows loaded" 0 "$RC"
run reconcile -d "$DB" --dry-run --rejects rj4.ndjson --report rec.json --html rec.html stmt.ndjson
eq "reconcile: exit 5 (discrepancies)" 5 "$RC"
check "reconcile: every category found" jtrue rec.json \
    'sorted(k for k, v in r["reconciliation"]["categories"].items() if v) == sorted(["missing_in_table", "missing_in_statement", "amount_mismatch", "currency_mismatch", "status_mismatch", "duplicate_in_statement", "no_statement"])'
layout rec
if $CHECK render rec.html rec.png rec.dom; then
    $CHECK dom rec.dom >rec.page.json
    check "reconcile: each day's row on the page holds the report's figures" python3 - rec.json rec.page.json <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))["reconciliation"]
t = json.load(open(sys.argv[2], encoding="utf-8"))["tables"]["recon-days"]
head, rows = t[0], t[1:]
if len(rows) != len(rep["days"]):
    print("rows", len(rows), "days", len(rep["days"])); sys.exit(1)
def side(s):
    kinds = s.get("kinds") or {}
    parts = [str(s["rows"])]
    if len(kinds) > 1:
        for k, v in kinds.items():
            parts += ["%s %d" % (k, v["rows"])] + ["%s %s" % c for c in v["amounts"].items()]
    else:
        parts += ["%s %s" % c for c in s["amounts"].items()]
    return parts
for d, row in zip(rep["days"], rows):
    row = [c.strip() for c in row]
    if row[0] != str(d["tenant_id"]) or row[2] != d["day"] or row[3] != d["verdict"]:
        print("day", d["tenant_id"], d["day"], d["verdict"], "page", row[:4]); sys.exit(1)
    for name, cell in (("statement", row[4]), ("table", row[5])):
        want = side(d[name])
        if not all(p in cell for p in want) or not cell.startswith(want[0]):
            print(name, "page", cell, "report", want); sys.exit(1)
    if [row[6], row[7], row[8]] != [str(d["matched"]), str(d["unverified"]), str(d["pending"])]:
        print("counts", row[6:9], d["matched"], d["unverified"], d["pending"]); sys.exit(1)
PY
    check "reconcile: the table of files counts the rows compared" jtrue rec.page.json \
        "[c.strip() for c in r['tables']['file-table'][1]][r['tables']['file-table'][0].index('compared')] == '$(json rec.json 'r["files"][0]["would_merge"]')'"
else
    fail "reconcile: chromium rendered the page"
fi

# The register's tables on the page: what appeared, then carried over.
run reconcile -q -d "$DB" --rejects rj4.ndjson --period 2026-09-01..2026-09-02 --html reg1.html stmt.ndjson
eq "the first days registered: exit 5" 5 "$RC"
run reconcile -q -d "$DB" --rejects rj4.ndjson --period 2026-09-03 --report reg2.json --html reg2.html stmt.ndjson
eq "the next day: exit 5" 5 "$RC"
check "the next day carries the first days' discrepancies over" jtrue reg2.json \
    'r["reconciliation"]["carried_over"] > 0 and r["reconciliation"]["appeared"] > 0'
layout reg2
finish
