#!/usr/bin/env bash
# The progress line (SPEC.md "Reports and progress"): on stderr while a
# terminal is attached (bytes and rows done, rate), redrawn in place; none
# with --quiet, none when stderr is not a terminal.  The terminal is a
# pseudo-terminal made by script(1) from util-linux; stdout goes to a file,
# so what script records is stderr alone.
. "$(dirname "$0")/../lib.sh"

command -v script >/dev/null || { fail "script(1) from util-linux is needed"; finish; }
$GEN --rows 60000 --seed 101 --format csv --out p.csv --quiet

# on_pty OUTFILE ARGS...: runs idemload ARGS with stderr on a pseudo-terminal;
# OUTFILE gets what the terminal showed, RC the exit status.
on_pty() {
    local out=$1
    shift
    script -qfec "$(printf '%q ' "$IDEMLOAD" "$@") >stdout.txt" /dev/null </dev/null >"$out" 2>&1
    RC=$?
    san_check "$out" "idemload $* on a terminal"
}
ESC=$'\033'

on_pty tty.txt validate --chunk-rows 5000 --report rep.json p.csv
eq "on a terminal: exit 0" 0 $RC
check "on a terminal: a progress line (file, MB done of the total, percent, rows, rows/s)" \
    grep -aqE "p\.csv: [0-9]+\.[0-9]/[0-9]+\.[0-9] MB \([0-9]+%\), [0-9]+ rows, [0-9]+ rows/s" tty.txt
check "on a terminal: redrawn in place (carriage return, erase line)" grep -aq $'\r'"$ESC\\[K" tty.txt
check "on a terminal: the summary still comes" grep -aq "rows read 60000" tty.txt
check "on a terminal: the report on stdout is untouched by the progress line" jtrue rep.json 'r["totals"]["rows_read"] == 60000'

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

finish
