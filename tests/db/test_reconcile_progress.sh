#!/usr/bin/env bash
# reconcile's progress line (SPEC.md "Reports and progress"; `reconcile
# --help`: --quiet means "no progress line"): while it reads a statement,
# the same line as import's on a terminal (file, MB done of the total,
# percent, rows, rows/s), erased before the summary; none with --quiet,
# none when stderr is not a terminal.  The terminal is a pseudo-terminal
# made by script(1); stdout goes to a file.
. "$(dirname "$0")/../lib.sh"
command -v script >/dev/null || { fail "script(1) from util-linux is needed"; finish; }
init_db recon_progress
$GEN --rows 100000 --seed 7 --format csv --out p.csv --quiet
# (a line is drawn at the first row already: a small file shows its absence)
head -n 1001 p.csv >small.csv

ESC=$'\033'
on_pty tty.txt reconcile -d "$DB" --dry-run --report r.json p.csv
eq "on a terminal: the table lacks the rows, exit 5" 5 "$RC"
check "on a terminal: a progress line while the statement is read" \
    grep -aqE "p\.csv: [0-9]+\.[0-9]/[0-9]+\.[0-9] MB \([0-9]+%\), [0-9]+ rows, [0-9]+ rows/s" tty.txt
check "redrawn in place (carriage return, erase line)" grep -aq $'\r'"$ESC\\[K" tty.txt
# After the reading, the server's comparison (most of a large run's time):
# the line says which step it is at, not the reading's last "ETA 0s".
check "then the comparison's steps, with the time since the start" \
    grep -aqE "reconcile: comparing and classifying \([0-9]+s\)" tty.txt
check "the register's steps too (a dry run reads it)" grep -aqE "reconcile: [a-z' ]+register[a-z' ]* \([0-9]+s\)" tty.txt
check "the summary still comes, after it" grep -aq "idemload reconcile (dry run, nothing written) summary" tty.txt
check "the report is untouched" jtrue r.json "r['totals']['rows_read'] == 100000"
on_pty q.txt reconcile -d "$DB" --dry-run --quiet small.csv
eq "--quiet on a terminal: exit 5" 5 "$RC"
# (a terminal ends lines in CR LF: no CR is asked of it, only no line)
not_progress() { ! grep -aqE "MB \([0-9]+%\)" "$1" && ! grep -aq "$ESC" "$1"; }
check "--quiet: no progress line" not_progress q.txt
run reconcile -d "$DB" --dry-run small.csv
eq "stderr a file: exit 5" 5 "$RC"
check "stderr not a terminal: no progress line" not_progress "$ERR"
finish
