#!/usr/bin/env bash
# The nightly example (doc/examples/idemload-nightly and its systemd units):
# run by sh with a stand-in idemload that exits with a chosen status, it
# reconciles yesterday's (or the given day's) files first and loads them
# after, with the reports and rejects in a dated directory; a reconcile
# that compared nothing loads nothing; it treats status 1 (rows rejected:
# notify, unit succeeds), 4 (database: page, unit fails) and reconcile's 5
# (finance) differently, and never starts while another nightly job holds
# the lock.  tests/db/test_nightly.sh runs it with the real idemload.
. "$(dirname "$0")/../lib.sh"
NIGHTLY=$SRC/doc/examples/idemload-nightly
check "the wrapper is valid sh" sh -n "$NIGHTLY"

cat >fake <<'SH'
#!/bin/sh
# Stand-in idemload: records its arguments per command, writes
# ./report.COMMAND (when there is one) as its --report, exits with the
# status in ./rc.COMMAND, else ./rc.
printf '%s\n' "$@" >"$FAKE_DIR/args.$1"
echo "$1" >>"$FAKE_DIR/order"
cmd=$1 prev=
for a in "$@"; do
    [ "$prev" = --report ] && [ -f "$FAKE_DIR/report.$cmd" ] && cp "$FAKE_DIR/report.$cmd" "$a"
    prev=$a
done
[ -f "$FAKE_DIR/rc.$1" ] && exit "$(cat "$FAKE_DIR/rc.$1")"
exit "$(cat "$FAKE_DIR/rc")"
SH
cat >alert <<'SH'
#!/bin/sh
echo "$1: $2" >>"$FAKE_DIR/alerts"
SH
chmod +x fake alert
export FAKE_DIR=$WORK IDEMLOAD_BIN=$WORK/fake IDEMLOAD_INBOX=$WORK/inbox IDEMLOAD_OUT=$WORK/out
export IDEMLOAD_LOCK=$WORK/nightly.lock IDEMLOAD_PAGE="$WORK/alert page" IDEMLOAD_NOTIFY="$WORK/alert notify"
export IDEMLOAD_FINANCE="$WORK/alert finance"
# The default day, "yesterday", as the wrapper's own `date` says it: one
# run with the real clock, bracketed (a run across midnight names one of
# the two days); every other run with the day pinned (lib.sh).
before=$(date -d yesterday +%F)
today=$(date +%F)     # yesterday, should midnight pass during the run
mkdir -p "inbox/$before" "inbox/$today"
touch "inbox/$before/x.csv.gz" "inbox/$today/x.csv.gz"
echo 0 >rc; rm -f args.*
sh "$NIGHTLY" >/dev/null 2>nightly.err
after=$(date -d yesterday +%F)
got=$(grep -m1 '/inbox/' args.import 2>/dev/null)
check "the default day is yesterday's ($before)" \
    test "$got" = "$WORK/inbox/$before/x.csv.gz" -o "$got" = "$WORK/inbox/$after/x.csv.gz"
rm -rf inbox out args.*
pin_yesterday
yesterday=$PINNED_DAY
mkdir -p "inbox/$yesterday" inbox/2026-11-28
touch "inbox/$yesterday/wechat.csv.gz" "inbox/$yesterday/mixed.ndjson.gz" "inbox/$yesterday/notes.txt"
touch inbox/2026-11-28/alipay.ndjson.gz

# nightly STATUS [ARGS]: runs the wrapper with idemload exiting STATUS; sets
# RC, and ALERTS (what was paged or notified, one line each).
nightly() {
    echo "$1" >rc
    shift
    rm -f args.* alerts order
    sh "$NIGHTLY" "$@" >/dev/null 2>nightly.err
    RC=$?
    ALERTS=$(cat alerts 2>/dev/null)
}

nightly 0
eq "all loaded: exit 0" 0 $RC
eq "all loaded: nobody alerted" "" "$ALERTS"
eq "idemload import with yesterday's .gz files, report and rejects in a dated directory" \
"import
--quiet
-d
service=payments
--report
$WORK/out/$yesterday/report.json
--changes
$WORK/out/$yesterday/changes.ndjson
--html
$WORK/out/$yesterday/report.html
--rejects
$WORK/out/$yesterday/rejects.ndjson
$WORK/inbox/$yesterday/mixed.ndjson.gz
$WORK/inbox/$yesterday/wechat.csv.gz" "$(cat args.import)"
check "the dated directory exists" test -d "out/$yesterday"
eq "the day reconciled first, loaded after (a load first would hide what finance must hear)" \
"reconcile
import" "$(cat order)"
eq "idemload reconcile of the day, its outputs beside the load's" \
"reconcile
--quiet
-d
service=payments
--period
$yesterday
--report
$WORK/out/$yesterday/reconcile.json
--html
$WORK/out/$yesterday/reconcile.html
--discrepancies
$WORK/out/$yesterday/discrepancies.csv
--rejects
$WORK/out/$yesterday/reconcile-rejects.ndjson
$WORK/inbox/$yesterday/mixed.ndjson.gz
$WORK/inbox/$yesterday/wechat.csv.gz" "$(cat args.reconcile)"
echo 5 >rc.reconcile
# Two discrepancies, one of a key holding a line break: three lines of CSV
# after the header, two in the report's categories.
printf 'category,out_trade_no\nmissing_in_table,"A\nB"\namount_mismatch,C\n' >"out/$yesterday/discrepancies.csv"
printf '{\n  "reconciliation": {\n    "days": [\n      {\n        "categories": {\n          "missing_in_table": 9\n        }\n      }\n    ],\n    "categories": {\n      "missing_in_table": 1,\n      "amount_mismatch": 1,\n      "no_statement": 0\n    },\n    "escalated": 0\n  }\n}\n' >report.reconcile
nightly 0
eq "discrepancies: the unit succeeds (exit 0)" 0 $RC
check "discrepancies: finance is told how many (the report's, not the CSV's lines), with the file" grep -q "^finance: .*disagree: 2 discrepancies in $WORK/out/$yesterday/discrepancies.csv" <<<"$ALERTS"
eq "discrepancies: finance only, nobody paged" 1 "$(grep -c . <<<"$ALERTS")"
printf '{\n  "reconciliation": {\n    "categories": {\n      "amount_mismatch": 1\n    }\n  }\n}\n' >report.reconcile
nightly 0
check "one discrepancy: said in the singular" grep -q "^finance: .*disagree: 1 discrepancy in" <<<"$ALERTS"
rm -f report.reconcile
echo 4 >rc.reconcile
nightly 0
eq "reconcile's database error: exit 4" 4 $RC
check "reconcile's database error: paged" grep -q "^page: .*database error while reconciling" <<<"$ALERTS"
check "reconcile's database error: nothing loaded (a rerun reconciles first)" test ! -e args.import
for s in 3 130; do
    echo $s >rc.reconcile
    nightly 0
    eq "reconcile exit $s: the job exits $s" $s $RC
    check "reconcile exit $s: nothing loaded" test ! -e args.import
    check "reconcile exit $s: notified" grep -q "^notify: .*nothing was.* loaded" <<<"$ALERTS"
done
echo 1 >rc.reconcile
nightly 0
eq "reconcile exit 1 (rejected rows, the load's too): exit 0" 0 $RC
check "reconcile exit 1: the day loaded" test -s args.import
rm -f rc.reconcile
IDEMLOAD_RECONCILE=0 nightly 0
check "IDEMLOAD_RECONCILE=0: no reconciliation" test ! -e args.reconcile
check "IDEMLOAD_RECONCILE=0: loaded" test -s args.import
IDEMLOAD_FACTS=/etc/idemload/facts.json IDEMLOAD_TIMEZONE=Asia/Shanghai nightly 0
check "IDEMLOAD_FACTS and IDEMLOAD_TIMEZONE reach reconcile" grep -qx -- "--facts" args.reconcile
check "the zone too" grep -qx "Asia/Shanghai" args.reconcile

# The load's own statuses, after a reconcile that compared the day.
echo 0 >rc.reconcile
printf '{"reason":"x"}\n{"reason":"y"}\n' >"out/$yesterday/rejects.ndjson"
nightly 1
eq "rows rejected: the unit succeeds (exit 0)" 0 $RC
check "rows rejected: notified, with the rejects file" grep -q "^notify: .*rejected.*out/$yesterday/rejects.ndjson (2 lines)" <<<"$ALERTS"
check "rows rejected: nobody paged" test -z "$(grep '^page' <<<"$ALERTS")"

nightly 4
eq "database error: exit 4 (the unit fails)" 4 $RC
check "database error: the day was reconciled before the load" test -s args.reconcile
check "database error: paged" grep -q "^page: .*database error.*resumes" <<<"$ALERTS"
eq "database error: one alert" 1 "$(grep -c . <<<"$ALERTS")"

nightly 2
eq "configuration error: exit 2" 2 $RC
check "configuration error: paged" grep -q "^page: .*configuration" <<<"$ALERTS"
nightly 3
eq "corrupt input: exit 3" 3 $RC
check "corrupt input: notified, not paged" grep -q "^notify: .*corrupt" <<<"$ALERTS"
nightly 130
eq "interrupted: exit 130" 130 $RC
check "interrupted: notified" grep -q "^notify: .*interrupted" <<<"$ALERTS"
rm -f rc.reconcile

IDEMLOAD_DB="host=/tmp dbname=pay" nightly 0 2026-11-28
eq "a given day: its files, IDEMLOAD_DB as -d" \
"import
--quiet
-d
host=/tmp dbname=pay
--report
$WORK/out/2026-11-28/report.json
--changes
$WORK/out/2026-11-28/changes.ndjson
--html
$WORK/out/2026-11-28/report.html
--rejects
$WORK/out/2026-11-28/rejects.ndjson
$WORK/inbox/2026-11-28/alipay.ndjson.gz" "$(cat args.import)"

nightly 0 2026-11-01
eq "no files for the day: exit 3" 3 $RC
check "no files for the day: idemload not run" test ! -e args.import
check "no files for the day: notified" grep -q "^notify: .*no statement files" <<<"$ALERTS"

# Another nightly job holds the lock (this shell, on its own descriptor).
exec 8>>"$IDEMLOAD_LOCK"
flock -n 8 || fail "could not take the lock for the test"
nightly 0
eq "lock held: exit 75" 75 $RC
check "lock held: idemload not run" test ! -e args.import
check "lock held: notified" grep -q "^notify: .*still holds" <<<"$ALERTS"
exec 8>&-
nightly 0
eq "lock released: runs again" 0 $RC
check "lock released: idemload ran" test -s args.import

# Plain CSV and NDJSON files of the day are loaded too, not only *.gz.
touch "inbox/$yesterday/plain.csv" "inbox/$yesterday/plain.ndjson"
nightly 0
check "a .csv file of the day is loaded" grep -qx "$WORK/inbox/$yesterday/plain.csv" args.import
check "and a .ndjson file" grep -qx "$WORK/inbox/$yesterday/plain.ndjson" args.import
check "not the notes" test "$(grep -c 'notes.txt' args.import)" = 0
rm -f "inbox/$yesterday/plain.csv" "inbox/$yesterday/plain.ndjson"

# A rerun of a day keeps the earlier run's outputs in run-TIME/ (the rerun
# skips what the first run loaded: its report would say nothing of it).
mkdir -p "out/$yesterday"
echo '{"first": true}' >"out/$yesterday/report.json"
echo '{"line": 1}' >"out/$yesterday/changes.ndjson"
echo '{"reconciled": 1}' >"out/$yesterday/reconcile.json"
nightly 0
eq "a rerun: exit 0" 0 $RC
check "the earlier run's report is kept" grep -q first "out/$yesterday"/run-*/report.json
check "and its changes" test -s "$(ls "out/$yesterday"/run-*/changes.ndjson)"
check "and its reconcile report" grep -q reconciled "out/$yesterday"/run-*/reconcile.json
# A run that reconciled, then stopped before the load wrote anything: its
# reconcile report is kept all the same.
rm -rf "out/$yesterday"
mkdir -p "out/$yesterday"
echo '{"alone": 1}' >"out/$yesterday/reconcile.json"
nightly 0
check "a reconcile report without a load report is kept" grep -q alone "out/$yesterday"/run-*/reconcile.json

# Rows of earlier days escalated by the reconcile: finance hears of them
# although the day itself balances (exit 0).
printf '{\n  "reconciliation": {\n    "escalated": 3,\n    "appeared": 3\n  }\n}\n' >report.reconcile
nightly 0
eq "escalated earlier days: exit 0" 0 $RC
check "finance is told how many" grep -q "^finance: .*3 rows of earlier days .* missing_in_statement" <<<"$ALERTS"
rm -f report.reconcile
# A reconcile configuration error (a bad facts file) pages, as the load's.
echo 2 >rc.reconcile
nightly 0
eq "reconcile exit 2: the job fails with 2" 2 $RC
check "reconcile exit 2: paged" grep -q "^page: .*reconcile configuration error" <<<"$ALERTS"
check "reconcile exit 2: nothing loaded" test ! -e args.import
rm -f rc.reconcile

# The default day is yesterday in IDEMLOAD_TIMEZONE: the day reconcile cuts.
real_date=$(PATH=${PATH#"$WORK/.pin:"} command -v date)
mkdir -p zbin
cat >zbin/date <<SH
#!/bin/sh
if [ "\$*" = "-d yesterday +%F" ]; then echo "tz=\$TZ"; exit 0; fi
exec $real_date "\$@"
SH
chmod +x zbin/date
rm -f alerts
IDEMLOAD_TIMEZONE=+08:00 PATH=$WORK/zbin:$PATH sh "$NIGHTLY" >/dev/null 2>nightly.err
check "a fixed offset +08:00 is TZ=UTC-08:00 for date (POSIX counts west positive)" \
    grep -q "inbox/tz=UTC-08:00" alerts
# +0800 and -0530, which --timezone takes as +08:00 and -05:30: TZ reads
# "UTC-0800" as 800 hours (yesterday would be a day off), so the wrapper
# writes the colon in.
rm -f alerts
IDEMLOAD_TIMEZONE=+0800 PATH=$WORK/zbin:$PATH sh "$NIGHTLY" >/dev/null 2>nightly.err
check "a fixed offset +0800 is TZ=UTC-08:00 for date, as +08:00" grep -q "inbox/tz=UTC-08:00" alerts
rm -f alerts
IDEMLOAD_TIMEZONE=-0530 PATH=$WORK/zbin:$PATH sh "$NIGHTLY" >/dev/null 2>nightly.err
check "a fixed offset -0530 is TZ=UTC+05:30 for date" grep -q "inbox/tz=UTC+05:30" alerts
rm -f alerts
IDEMLOAD_TIMEZONE=+08 PATH=$WORK/zbin:$PATH sh "$NIGHTLY" >/dev/null 2>nightly.err
check "a fixed offset +08 is TZ=UTC-08 for date" grep -q "inbox/tz=UTC-08\b" alerts
rm -f alerts
IDEMLOAD_TIMEZONE=Asia/Shanghai PATH=$WORK/zbin:$PATH sh "$NIGHTLY" >/dev/null 2>nightly.err
check "an IANA zone is TZ as it is" grep -q "inbox/tz=Asia/Shanghai" alerts

# The crontab sets a PATH that finds idemload where cmake --install puts it.
check "crontab: PATH includes /usr/local/bin" grep -q '^PATH=/usr/local/bin:' "$SRC/doc/examples/crontab"

# The systemd units, with systemd's own checker when it is installed.
if command -v systemd-analyze >/dev/null; then
    mkdir -p units man/man1
    cp "$SRC/doc/examples/idemload-nightly.service" "$SRC/doc/examples/idemload-nightly.timer" units/
    install -m 755 "$NIGHTLY" units/idemload-nightly
    sed -i "s|/usr/local/bin/idemload-nightly|$WORK/units/idemload-nightly|" units/idemload-nightly.service
    cp "$(dirname "$IDEMLOAD_REAL")/doc/idemload.1" man/man1/
    MANPATH=$WORK/man timeout 60 systemd-analyze verify units/idemload-nightly.timer \
        units/idemload-nightly.service >verify.txt 2>&1
    eq "systemd-analyze verify: nothing to say about the units" "" "$(cat verify.txt)"
else
    echo "skip - systemd-analyze is not installed: units not verified"
fi
finish
