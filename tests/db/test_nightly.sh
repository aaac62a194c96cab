#!/usr/bin/env bash
# The nightly example (doc/examples/idemload-nightly) with the real idemload
# and a real database: yesterday's statements load, the report, rejects and
# log land in the dated directory, rejected rows notify without failing the
# job, the rerun skips every file and says nothing, and an unreachable
# database pages with status 4.
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

IDEMLOAD_DB="host=$WORK/no-server dbname=nightly" nightly
eq "database unreachable: exit 4" 4 $RC
check "database unreachable: paged, pointing at the log" grep -q "^page: .*database error.*$D/idemload.log" <<<"$ALERTS"
check "the log says why" grep -q "cannot connect" "$D/idemload.log"
san_file "$D/idemload.log" "the unreachable night's idemload.log"
finish
