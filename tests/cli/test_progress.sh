#!/usr/bin/env bash
# The progress line (SPEC.md "Reports and progress"): on stderr while a
# terminal is attached (bytes and rows done, rate, ETA), redrawn in place; none
# with --quiet, none when stderr is not a terminal.  The terminal is a
# pseudo-terminal made by script(1) from util-linux; stdout goes to a file,
# so what script records is stderr alone.
. "$(dirname "$0")/../lib.sh"

command -v script >/dev/null || { fail "script(1) from util-linux is needed"; finish; }
$GEN --rows 60000 --seed 101 --format csv --out p.csv --quiet

ESC=$'\033'

on_pty tty.txt validate --chunk-rows 5000 --report rep.json p.csv
eq "on a terminal: exit 0" 0 $RC
check "on a terminal: a progress line (file, MB done of the total, percent, rows, rows/s)" \
    grep -aqE "p\.csv: [0-9]+\.[0-9]/[0-9]+\.[0-9] MB \([0-9]+%\), [0-9]+ rows, [0-9]+ rows/s" tty.txt
check "on a terminal: redrawn in place (carriage return, erase line)" grep -aq $'\r'"$ESC\\[K" tty.txt
check "on a terminal: the summary still comes" grep -aq "rows read 60000" tty.txt
check "on a terminal: the --report file is untouched by the progress line" jtrue rep.json 'r["totals"]["rows_read"] == 60000'
on_pty tty2.txt validate --chunk-rows 5000 --report - p.csv
eq "--report - on a terminal: exit 0" 0 $RC
check "--report - on a terminal: stdout is the report alone, untouched by the progress line" \
    jtrue stdout.txt 'r["totals"]["rows_read"] == 60000'
no_ctl() { ! grep -aq "$ESC" "$1" && ! grep -aq $'\r' "$1"; }
check "--report - on a terminal: no carriage return or escape code on stdout" no_ctl stdout.txt
check "--report - on a terminal: the progress line still on the terminal" grep -aqE "p\.csv: .* MB \(" tty2.txt

# The ETA: the time left at the rate so far, elapsed * (total / done - 1),
# where elapsed is rows / rate, all from the line itself.  The run is
# stopped for 2 s after its first line, so that the ETAs after it are
# seconds long, not rounded to 0.
{ cat p.csv; for _ in 2 3 4 5 6 7 8; do tail -n +2 p.csv; done; } >big.csv
# eta_run: one run, stopped when its first line shows; STOPPED=1 when the
# stop took (the run can end before the line is seen: a fast run on a
# loaded machine, whose lines then hold no ETA; it is run again).
eta_run() {
    rm -f eta.pid
    STOPPED=0
    script -qfec "sh -c 'echo \$\$ >eta.pid; exec $(printf '%q ' "$IDEMLOAD") validate --chunk-rows 5000 big.csv >/dev/null'" /dev/null </dev/null >eta.txt 2>&1 &
    SCRIPT=$!
    for _ in $(seq 1 600); do grep -aq "MB (" eta.txt 2>/dev/null && break; sleep 0.02; done
    ETA_PID=
    [ -s eta.pid ] && ETA_PID=$(real_pid "$(cat eta.pid)")
    if [ -n "$ETA_PID" ] && kill -STOP "$ETA_PID" 2>/dev/null; then
        STOPPED=1
        sleep 2
        # (script(1) stops itself when its child stops: both go on.)
        kill -CONT "$ETA_PID" $SCRIPT
    fi
    wait $SCRIPT
    ETA_RC=$?
    tr '\r' '\n' <eta.txt | sed "s/$ESC\\[K//g" | grep -a ' MB (' >eta.lines
}
for _ in 1 2 3; do
    eta_run
    [ "$STOPPED" = 1 ] && break
done
eq "ETA run: exit 0" 0 $ETA_RC
check "the progress line has an ETA once the total is known and half a second passed" grep -aqE ', ETA [0-9]+s$' eta.lines
check "an ETA of seconds after the stop" grep -aqE ', ETA ([1-9][0-9]*)s$' eta.lines
check "every ETA is the time left at the line's own rate (rows / rate * (total / done - 1))" \
    python3 - eta.lines <<'PY'
import re, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    m = re.search(r": ([0-9.]+)/([0-9.]+) MB \([0-9]+%\), ([0-9]+) rows, ([0-9]+) rows/s, ETA ([0-9]+)s$", line)
    if not m:
        continue
    done, total, rows, rate, eta = float(m[1]), float(m[2]), int(m[3]), int(m[4]), int(m[5])
    if rate == 0 or done == 0:
        continue
    el = rows / rate
    lo = el * (total / (done + 0.05) - 1) * 0.95 - 0.6
    hi = el * (total / max(done - 0.05, 0.01) - 1) * 1.05 + 0.6
    if not lo <= eta <= hi:
        sys.exit("ETA %ds outside [%.1f, %.1f]: %s" % (eta, lo, hi, line.strip()))
    n += 1
sys.exit(0 if n >= 1 else "no line with an ETA")
PY

on_pty quiet.txt validate --quiet --chunk-rows 5000 p.csv
eq "--quiet on a terminal: exit 0" 0 $RC
check "--quiet on a terminal: no progress line, no escape codes" sh -c "! grep -aqE 'MB \\(|$ESC' quiet.txt"

run validate --chunk-rows 5000 p.csv
eq "stderr not a terminal: exit 0" 0 $RC
check "stderr not a terminal: no progress line, no escape codes" sh -c "! grep -aqE 'MB \\(|$ESC' '$ERR'"
check "stderr not a terminal: the summary" contains "$ERR" "rows read 60000"

# A pipe on standard input has no size: MB and rows, without a percentage.
script -qfec "cat p.csv | $(printf '%q ' "$IDEMLOAD" validate --format csv --chunk-rows 5000 -) >stdout.txt" /dev/null </dev/null >stdin.txt 2>&1
eq "stdin on a terminal: exit 0" 0 $?
check "stdin on a terminal: progress without a total" grep -aqE "[0-9]+\.[0-9] MB, [0-9]+ rows, [0-9]+ rows/s" stdin.txt
check "stdin on a terminal: no ETA without a total" sh -c "! grep -aq 'ETA' stdin.txt"

finish
