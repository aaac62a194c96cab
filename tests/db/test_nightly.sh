#!/usr/bin/env bash
# The nightly example (doc/examples/idemload-nightly) with the real idemload
# and a real database: yesterday's statements are reconciled, then load, the
# reports, rejects and log land in the dated directory, rejected rows notify
# without failing the job, the rerun skips every file and says nothing, a
# missing callback and a status difference reach finance on their night
# (the load comes after the comparison, so it cannot hide them), and an
# unreachable database pages with status 4.
. "$(dirname "$0")/../lib.sh"
new_db nightly
NIGHTLY=$SRC/doc/examples/idemload-nightly
run init -d "$DB"
eq "init" 0 $RC

cat >alert <<'SH'
#!/bin/sh
echo "$1: $2" >>"$ALERTS_FILE"
SH
chmod +x alert
export ALERTS_FILE=$WORK/alerts IDEMLOAD_BIN=$IDEMLOAD IDEMLOAD_DB=$DB
export IDEMLOAD_INBOX=$WORK/inbox IDEMLOAD_OUT=$WORK/out IDEMLOAD_LOCK=$WORK/nightly.lock
export IDEMLOAD_PAGE="$WORK/alert page" IDEMLOAD_NOTIFY="$WORK/alert notify"
export IDEMLOAD_FINANCE="$WORK/alert finance"
pin_yesterday
day=$PINNED_DAY
mkdir -p "inbox/$day"
cp "$SRC/samples/statements-wechat-2026-11-28.csv.gz" "$SRC/samples/statements-mixed-2026-11-29.ndjson.gz" \
   "inbox/$day/"
D=$WORK/out/$day

nightly() { rm -f alerts; sh "$NIGHTLY" "$@" >/dev/null 2>nightly.err; RC=$?; ALERTS=$(cat alerts 2>/dev/null); }

nightly
eq "the first night: exit 0 (rows rejected are not a failure)" 0 $RC
check "notified of the rejected rows" grep -q "^notify: .*rows rejected.*$D/rejects.ndjson (3 lines)" <<<"$ALERTS"
check "nobody paged" test -z "$(grep '^page' <<<"$ALERTS")"
check "report in the dated directory" jtrue "$D/report.json" \
    "[f['status'] for f in r['files']] == ['ok', 'ok'] and r['totals']['rows_rejected'] == 3 and not r['dry_run']"
eq "rejects in the dated directory" 3 "$(wc -l <"$D/rejects.ndjson")"
check "idemload's summary in the day's log" grep -q "idemload import summary" "$D/idemload.log"
san_file "$D/idemload.log" "the first night's idemload.log"
rows=$(q "SELECT count(*) FROM payment_callback WHERE deleted_at IS NULL")
check "rows loaded" test "$rows" -gt 0
check "then the day reconciled: its report beside the load's" jtrue "$D/reconcile.json" \
    "r['command'] == 'reconcile' and r['reconciliation']['verdict'] in ('balanced', 'discrepancies') and r['reconciliation']['registered']"
check "the discrepancies as CSV with its byte-order mark" python3 -c "
import sys; sys.exit(0 if open('$D/discrepancies.csv', 'rb').read(3) == b'\xef\xbb\xbf' else 1)"
check "over the night's day only" jtrue "$D/reconcile.json" \
    "r['reconciliation']['period']['from'] == r['reconciliation']['period']['to'] == '${D##*/}'"

nightly
eq "the rerun: exit 0" 0 $RC
eq "the rerun: no alert" "" "$ALERTS"
check "the rerun's report: every file skipped" jtrue "$D/report.json" \
    "[f['status'] for f in r['files']] == ['skipped', 'skipped']"
san_file "$D/idemload.log" "the rerun's idemload.log"
eq "the rerun: the table unchanged" "$rows" "$(q "SELECT count(*) FROM payment_callback WHERE deleted_at IS NULL")"

# IDEMLOAD_TIMEZONE as --timezone takes it: +0800 is +08:00, whose
# midnight cuts the day (it reached PostgreSQL as "UTC-0800", which it
# refuses: the reconcile failed with exit 4 and paged a database error).
mkdir -p inbox/2026-11-28
cp "$SRC/samples/statements-wechat-2026-11-28.csv.gz" inbox/2026-11-28/
# 04:00 on the 28th at +08:00, the 27th in UTC.
echo '{"tenant_id":10001,"channel":"wechat","out_trade_no":"TZ1","callback_type":"pay","status":2,"payload":{"amount":1.00,"currency":"CNY"},"received_at":"2026-11-27T20:00:00Z"}' \
    >inbox/2026-11-28/early.ndjson
# Loaded beforehand, so that each night below reconciles the same table
# (each reconciles before it loads).
run import -d "$DB" --rejects tz-rejects.ndjson inbox/2026-11-28/*
check "the zone's day loaded beforehand" between $RC 0 1
days() {
    json "$WORK/out/2026-11-28/reconcile.json" \
        "[(d['tenant_id'], d['day'], d['verdict'], d['statement']['rows'], d['table']['rows']) for d in r['reconciliation']['days']], r['reconciliation']['outside_period']"
}
IDEMLOAD_TIMEZONE=+08:00 nightly 2026-11-28
eq "IDEMLOAD_TIMEZONE=+08:00: exit 0" 0 $RC
check "IDEMLOAD_TIMEZONE=+08:00: reconciled in that zone" jtrue "$WORK/out/2026-11-28/reconcile.json" \
    "r['reconciliation']['zone'] == '+08:00' and r['reconciliation']['registered']"
with_colon=$(days)
IDEMLOAD_TIMEZONE=+0800 nightly 2026-11-28
eq "IDEMLOAD_TIMEZONE=+0800: exit 0" 0 $RC
check "IDEMLOAD_TIMEZONE=+0800: nobody paged" test -z "$(grep '^page' <<<"$ALERTS")"
check "IDEMLOAD_TIMEZONE=+0800: reconciled in that zone" jtrue "$WORK/out/2026-11-28/reconcile.json" \
    "r['reconciliation']['zone'] == '+0800' and r['reconciliation']['registered']"
eq "IDEMLOAD_TIMEZONE=+0800: the same days, verdicts and rows as +08:00" "$with_colon" "$(days)"
check "and not those of UTC's day" test "$with_colon" != "$(IDEMLOAD_TIMEZONE=UTC nightly 2026-11-28; days)"

# The night finance must hear of: the callbacks table has A1 (paid, 2)
# and A3 (still pending, 1), A2's callback never came; the channel's bill
# lists A1, A2 and A3, all paid.  Reconciled before the load: A2 is
# missing_in_table, A3 a status_mismatch, finance is told; then the load
# brings the table to the bill.  (Loaded first, as the example did, the
# reconcile found the table agreeing: "balanced", nobody told.)
mkdir -p cb inbox/2026-12-01
row() { printf '{"tenant_id":7,"channel":"stripe","out_trade_no":"%s","callback_type":"pay","status":%s,"payload":{"amount":"%s","currency":"USD"},"received_at":"2026-12-01T%s:00:00Z"}\n' "$@"; }
{ row A1 2 10.00 09; row A3 1 30.00 11; } >cb/callbacks.ndjson
run import -d "$DB" --rejects cb/rejects.ndjson cb/callbacks.ndjson
eq "the callbacks received" 0 $RC
{ row A1 2 10.00 09; row A2 2 20.00 10; row A3 2 30.00 11; } >inbox/2026-12-01/bill.ndjson
D1=$WORK/out/2026-12-01
nightly 2026-12-01
eq "a missing callback and a status difference: the job succeeds (exit 0)" 0 $RC
check "finance told of the two discrepancies" \
    grep -q "^finance: .*disagree: 2 discrepancies in $D1/discrepancies.csv" <<<"$ALERTS"
check "nobody paged" test -z "$(grep '^page' <<<"$ALERTS")"
eq "the reconcile's verdict and categories" "discrepancies missing_in_table=1 status_mismatch=1" \
    "$(json "$D1/reconcile.json" "' '.join([r['reconciliation']['verdict']] + ['%s=%s' % kv for kv in sorted(r['reconciliation']['categories'].items()) if kv[1]])")"
eq "the discrepancies file: A2 missing_in_table, A3 status_mismatch" \
"missing_in_table A2
status_mismatch A3" "$(python3 -c "
import csv, sys
for r in sorted(csv.DictReader(open(sys.argv[1], encoding='utf-8-sig')), key=lambda r: r['out_trade_no']):
    print(r['category'], r['out_trade_no'])" "$D1/discrepancies.csv")"
check "then loaded: the bill's report beside the reconcile's" jtrue "$D1/report.json" \
    "[f['status'] for f in r['files']] == ['ok'] and r['totals']['inserted'] == 1 and r['totals']['updated'] == 1"
eq "the table now holds A2, and A3 paid" "A1 2|A2 2|A3 2" \
    "$(q "SELECT string_agg(out_trade_no || ' ' || status, '|' ORDER BY out_trade_no) FROM payment_callback WHERE tenant_id = 7 AND deleted_at IS NULL")"

IDEMLOAD_DB="host=$WORK/no-server dbname=nightly" nightly
eq "database unreachable: exit 4" 4 $RC
check "database unreachable: paged, pointing at the log" grep -q "^page: .*database error.*$D/idemload.log" <<<"$ALERTS"
check "the log says why" grep -q "cannot connect" "$D/idemload.log"
san_file "$D/idemload.log" "the unreachable night's idemload.log"
finish
