#!/usr/bin/env bash
# The side outputs and the paths that name them or their inputs.
# 1. A resumed file's --changes lines of the chunks an earlier run committed
#    come from the ledger, where that run rendered them with its own
#    spelling of the file: resumed from another directory (`sub/k.csv`,
#    then `k.csv` from sub/), the file named the input two ways, and was
#    not what an uninterrupted run of the command writes (README "the same
#    lines as an uninterrupted run's").  Now every line names the file as
#    the run that writes it does, with --jobs 1 and 2, and for a name that
#    is not UTF-8 (file_base64) too.
# 2. `--changes /dev/stdout >> runs.log` truncated the log (the path was
#    opened anew with "w"); it is written through standard output, after
#    what the log holds (tests/cli/test_outputs_std.sh: the others).
. "$(dirname "$0")/../lib.sh"
pg_use

# 3000 rows over 3 chunks of 1000, some rejected, some repeated keys.
mkdir -p sub
$GEN --rows 3000 --bad-rate 0.02 --out sub/k.csv --quiet || fail "gen_statements.py failed"

# lines FILE: the lines of a changes file, sorted (file order differs
# between a resumed and an uninterrupted run inside a chunk, README).
lines() { sort "$1"; }
names() { python3 -c 'import json,sys; print(" ".join(sorted({json.loads(l)["file"] + "|" + str(json.loads(l).get("file_base64")) for l in open(sys.argv[1])})))' "$1"; }

for jobs in 1 2; do
    # The uninterrupted run of the command, from sub/.
    init_db sp_ref_$jobs
    (cd sub && "$IDEMLOAD" import -d "$DB" -q --jobs $jobs --chunk-rows 1000 --rejects /dev/null \
        --changes ../ref.ndjson k.csv 2>../ref.err)
    eq "jobs $jobs, uninterrupted: exit 1 (rows rejected)" 1 $?

    # A run that commits chunk 1 and fails to write its changes, from here...
    init_db sp_resume_$jobs
    run import -d "$DB" -q --jobs $jobs --chunk-rows 1000 --rejects /dev/null --changes /dev/full sub/k.csv
    eq "jobs $jobs, --changes /dev/full: exit 3" 3 "$RC"
    check "jobs $jobs: a chunk committed before the failure" test "$(q "SELECT count(*) FROM idemload_ledger_chunk")" -gt 0
    # ...and the same command from sub/, naming the file from there.
    (cd sub && "$IDEMLOAD" import -d "$DB" -q --jobs $jobs --chunk-rows 1000 --rejects /dev/null \
        --changes ../resumed.ndjson --report ../resumed.json k.csv 2>../resumed.err)
    eq "jobs $jobs, resumed from another directory: exit 1" 1 $?
    check "jobs $jobs: it resumed" grep -q "resumed after chunk" resumed.json
    eq "jobs $jobs, resumed: every line names the file as this run does" "k.csv|None" "$(names resumed.ndjson)"
    eq "jobs $jobs, resumed: the lines of an uninterrupted run" "$(lines ref.ndjson | md5sum)" "$(lines resumed.ndjson | md5sum)"
    eq "jobs $jobs, resumed: as many lines as the report's figures" \
        "$(json resumed.json 'r["totals"]["inserted"] + r["totals"]["updated"] + r["totals"]["stale"]')" \
        "$(wc -l <resumed.ndjson)"
done

# A name that is not UTF-8, spelled two ways: the escaped name and its bytes.
weird=$'w\xffe.csv'
cp sub/k.csv "$weird"
init_db sp_bytes
run import -d "$DB" -q --chunk-rows 1000 --rejects /dev/null --changes /dev/full "./$weird"
eq "a name not UTF-8, --changes /dev/full: exit 3" 3 "$RC"
run import -d "$DB" -q --chunk-rows 1000 --rejects /dev/null --changes bytes.ndjson "$weird"
eq "a name not UTF-8, resumed: exit 1" 1 "$RC"
eq "a name not UTF-8, resumed: every line names it as this run does, bytes in file_base64" \
    "w\\xFFe.csv|$(printf '%s' "$weird" | base64)" "$(names bytes.ndjson)"
# The same spelling: the lines the ledger kept are written as they are.
init_db sp_same
run import -d "$DB" -q --chunk-rows 1000 --rejects /dev/null --changes /dev/full sub/k.csv
run import -d "$DB" -q --chunk-rows 1000 --rejects /dev/null --changes same.ndjson sub/k.csv
eq "resumed with the same spelling: exit 1" 1 "$RC"
eq "resumed with the same spelling: the file named once" "sub/k.csv|None" "$(names same.ndjson)"
eq "resumed with the same spelling: the lines of an uninterrupted run" \
    "$(sed 's/"file":"k.csv"/"file":"sub\/k.csv"/' ref.ndjson | sort | md5sum)" "$(lines same.ndjson | md5sum)"

# --- 2. --changes through standard output's file, appended to
init_db sp_stdout
echo "an earlier run" >runs.log
"$IDEMLOAD" import -d "$DB" -q --rejects /dev/null --changes /dev/stdout sub/k.csv >>runs.log 2>stdout.err
eq "--changes /dev/stdout >> log: exit 1" 1 $?
eq "--changes /dev/stdout >> log: the log's earlier line stays" "an earlier run" "$(head -n 1 runs.log)"
eq "--changes /dev/stdout >> log: then one line per change" "$(q "SELECT count(*) FROM payment_callback")" \
    "$(tail -n +2 runs.log | grep -c '"action":"inserted"')"
finish
