#!/usr/bin/env bash
# `idemload settle` (SPEC.md, "Settle: the money that arrives") against
# tests/expected_settle.py's model, on scenarios tests/make_settle.py
# writes in the channels' real layouts (Stripe payout reconciliation and
# balance reports, WeChat Pay trade bill and 资金账单, Alipay 业务明细 and
# 账务明细 in GBK, a camt.053 and an MT940 statement) with discrepancies
# planted: a fee off by a cent, a batch short of its nets, a fund-bill row
# removed (within a day, and a day's last: the break in the next day's
# file), a batch never credited, a credit no batch explains, a payment no
# batch paid, two batches in one deposit (no line) and a batch whose window
# is still open (pending, no line).  For each scenario, a database of its
# own holds the table's payments (imported), and settle's discrepancy lines
# (category, tenant, channel, day, subject, currency, expected, actual,
# difference) must be the model's, as sets; the differences are printed.
# Exit 5 with lines, 0 without; the summary's pending count the model's
# (the open window's batch); one scenario also as a dry run writing CSV
# (its byte-order mark, null as an empty field).  The model's own rules
# are checked by hand in tests/cli/test_expected_settle.sh.
# The 账务明细 are written in time order: the real export lists its newest
# row first (make_settle.py --newest-first), and settle (at settle-core
# 585884d) chains such a file top down, finding a break at every row whose
# time is that of the row above it (a payment and its fee); the scenarios
# go back to the real order once settle reads a newest-first file upwards.
. "$(dirname "$0")/../lib.sh"
pg_use
export PGTZ=UTC
NOW=2026-11-21T12:00:00Z
OPTS=(--set tenant_id=1 --fee-rate stripe=2.9% --fee-rate wechat=0.6% --fee-rate alipay=0.6%
      --settle-window 0..3d)

# same_lines DESCRIPTION IDEMLOAD_NDJSON MODEL_NDJSON: the lines agree as
# sets on the contract's members; each difference printed.
same_lines() {
    local out
    [ -f "$2" ] || { fail "$1: no discrepancies file $2"; return; }
    out=$(python3 - "$2" "$3" <<'PY'
import csv, io, json, sys
KEYS = ("category", "tenant", "channel", "day", "subject", "currency", "expected", "actual",
        "difference")
def load(path):
    out = []
    if path.endswith(".csv"):       # UTF-8 with a byte-order mark, null as empty
        raw = open(path, "rb").read()
        if not raw.startswith(b"\xef\xbb\xbf"):
            print("no byte-order mark in " + path)
        for d in csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline="")):
            out.append(tuple(d.get(k) or None for k in KEYS))
        return out
    for l in open(path, encoding="utf-8"):
        if l.strip():
            d = json.loads(l)       # a pending item written as a line shows as one
            out.append(tuple(None if d.get(k) is None else str(d[k]) for k in KEYS))
    return out
got, want = load(sys.argv[1]), load(sys.argv[2])
for t in sorted(set(want) - set(got), key=str):
    print("only the model: " + json.dumps(dict(zip(KEYS, t)), ensure_ascii=False))
for t in sorted(set(got) - set(want), key=str):
    print("only idemload:  " + json.dumps(dict(zip(KEYS, t)), ensure_ascii=False))
if len(got) != len(set(got)):
    print("idemload wrote a line twice")
print("%d lines" % len(want))
PY
)
    if [ "$(tail -n 1 <<<"$out")" = "$(wc -l <"$3" | tr -d ' ') lines" ] && [ "$(wc -l <<<"$out")" = 1 ]; then
        ok "$1 ($out)"
    else
        fail "$1:"
        sed 's/^/#   /' <<<"$out"
    fi
}

# scenario NAME SEED PLANT...: generates, loads the table into a database of
# its own, runs settle on every file, compares with the model.
scenario() {
    local name=$1 seed=$2 p args=() files
    shift 2
    for p in "$@"; do args+=(--plant "$p"); done
    [ -n "${PER_DAY:-}" ] && args+=(--per-day "$PER_DAY")
    rm -rf "$name" && python3 "$SRC/tests/make_settle.py" "$seed" "$name" "${args[@]}" ||
        { fail "$name: make_settle.py"; return; }
    files=$(ls "$name"/* | grep -v -e '/table.csv$' -e '/scenario.json$')
    python3 "$SRC/tests/expected_settle.py" --now $NOW --tenant 1 --fee-rate stripe=2.9% \
        --fee-rate wechat=0.6% --fee-rate alipay=0.6% --settle-window 0..3d \
        --table "$name/table.csv" --pending $files >"$name.all" || { fail "$name: the model"; return; }
    grep -v '"pending"' "$name.all" >"$name.model"
    init_db "settle_model_$name"
    run import -d "$DB" "$name/table.csv"
    eq "$name: the table's payments imported" 0 "$RC"
    # shellcheck disable=SC2086
    IDEMLOAD_NOW=$NOW RUN_LIMIT=${LIMIT:-} run settle -d "$DB" "${OPTS[@]}" \
        --discrepancies "$name.ndjson" $files
    local want=0
    [ -s "$name.model" ] && want=5
    eq "$name: exit $want" "$want" "$RC"
    [ "$RC" = "$want" ] || head -c 1500 "$ERR" | sed 's/^/#   /'
    same_lines "$name: settle's lines are the model's" "$name.ndjson" "$name.model"
    # the pending batches and payments: counted in the summary, not lines
    eq "$name: pending in the summary, as many as the model's" \
       "$(grep -c '"pending"' "$name.all")" "$(sed -n 's/^ *pending: \([0-9]*\) .*/\1/p' "$ERR" | head -n 1)"
    [ -n "${DRY:-}" ] || return
    # shellcheck disable=SC2086
    IDEMLOAD_NOW=$NOW run settle --dry-run -d "$DB" "${OPTS[@]}" --discrepancies "$name.csv" $files
    eq "$name: a dry run: exit $want" "$want" "$RC"
    same_lines "$name: a dry run's CSV lines are the model's" "$name.csv" "$name.model"
}

scenario none 5
DRY=1 scenario all1 5 fee_off:wechat batch_short:stripe row_removed:alipay never_credited:wechat \
    stray_credit:stripe table_only:alipay two_in_one:stripe window_open:stripe
scenario all2 23 fee_off:stripe batch_short:stripe row_removed:wechat never_credited:stripe \
    stray_credit:alipay table_only:wechat two_in_one:alipay window_open:wechat
scenario some 61 fee_off:alipay never_credited:alipay table_only:stripe two_in_one:wechat \
    window_open:alipay last_removed:wechat
# 400 payments a day and channel (4,800 in all, some in one second): the
# same lines as the model.  Within two minutes: a check that joined the
# files' rows with the table's (or with each other) on an OR, or searched
# them once per row, took over five minutes here (settle at c84389f) and
# under a second once every join was on equalities.
PER_DAY=400 LIMIT=120 scenario many 31 fee_off:alipay batch_short:stripe row_removed:wechat \
    never_credited:alipay stray_credit:wechat table_only:stripe two_in_one:stripe
finish
