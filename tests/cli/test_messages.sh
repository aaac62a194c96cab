#!/usr/bin/env bash
# What the terminal and the report are told about outputs and names
# (issue 47, point 12; SPEC.md "Hostile input", "Exit status"):
# - a refused --html or --report is said once, before anything is read,
#   not again at the end;
# - an output in /proc or /sys (/proc/version, /sys/kernel/notes), which
#   permissions may call writable (to root) but which takes no output, is
#   refused before anything is read, saying so (not "No such file or
#   directory" at the end), and the file is "not started" rather than
#   failed with its figures lost;
# - the bidirectional marks LRM and RLM (U+200E, U+200F) in a file name
#   reach the terminal as their codes;
# - names in these messages are quoted.
. "$(dirname "$0")/../lib.sh"

printf 'tenant_id,channel,out_trade_no,callback_type,payload,received_at\n1,w,A,pay,{},2026-11-20T10:00:00Z\n1,w,B,pay,notjson,2026-11-20T10:00:00Z\n' >a.csv

run validate --rejects rj.ndjson --html "$WORK/no/dir/p.html" a.csv
eq "a refused --html: exit 3" 3 "$RC"
eq "a refused --html: said once as an error" 1 "$(grep -c "^idemload: error: .*p.html" "$ERR")"
eq "... and not tried again at the end" 0 "$(grep -c "cannot write the HTML report" "$ERR")"
check "... quoted" grep -qF "cannot write --html '$WORK/no/dir/p.html'" "$ERR"

run validate --rejects rj.ndjson --report /proc/version a.csv
eq "--report /proc/version: exit 3" 3 "$RC"
check "--report /proc/version: refused before reading, naming the kernel's reason" \
    grep -qF "cannot write --report '/proc/version': it is a file of the kernel's /proc or /sys, which takes no output; nothing was read or loaded" "$ERR"
check "--report /proc/version: no other error about it" bash -c '! grep -q "No such file or directory" "$1"' _ "$ERR"

if [ -e /sys/kernel/notes ]; then
    run validate --rejects /sys/kernel/notes --report r.json a.csv
    eq "--rejects /sys/kernel/notes: exit 3" 3 "$RC"
    check "--rejects /sys/kernel/notes: refused before reading, named" \
        grep -qF "cannot write the rejects file (--rejects) '/sys/kernel/notes'" "$ERR"
    check "--rejects /sys/kernel/notes: the file is not started (nothing read), not failed halfway" \
        jtrue r.json "r['files'][0]['status'] == 'failed' and r['files'][0]['error'].startswith('not started: ')"
fi

lrm=$(printf 'bill\342\200\216-\342\200\217x.csv')
cp a.csv "$lrm"
run validate --rejects rj.ndjson "$lrm"
eq "a file name with LRM and RLM: validated (exit 1: a row rejected)" 1 "$RC"
check "LRM and RLM reach the terminal as their codes" grep -qF 'bill\u200E-\u200Fx.csv' "$ERR"
check "... never as the marks themselves" bash -c '! grep -q "$(printf "\342\200[\216\217]")" "$1"' _ "$ERR"
finish
