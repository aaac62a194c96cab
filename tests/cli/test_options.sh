#!/usr/bin/env bash
# The option table as documentation: every option of every command, the
# values it refuses and the one-line error it gives (exit 2, before any
# connection: -d names a socket that does not exist).  A new option must be
# added to the table below, or the completeness check at the end fails.
. "$(dirname "$0")/../lib.sh"

NODB=(-d "host=/nonexistent")
H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
printf '%s\n' "$H" >empty.csv

# ROWS: command | option | a refused value ("" for an empty one) | the error's words
ROWS=$(cat <<'EOF'
import|--table||--table needs a name
import|--format|xml|--format must be csv or ndjson, not 'xml'
import|--delimiter|ab|--delimiter must be one character other than a quote or line break
import|--delimiter|"|--delimiter must be one character other than a quote or line break
import|--profile|no-such-profile|no-such-profile
import|--encoding|gbk|--encoding goes with --profile
import|--timezone|+08:00|--timezone goes with --profile
import|--kind|pay|--kind takes FROM=TO
import|--kind|pay=x|--kind goes with --profile
import|--tenant-map||--tenant-map needs a path
import|--tenant-map|map.csv|--tenant-map goes with --profile
import|--set|tenant_id|--set takes COLUMN=VALUE
import|--set|=5|--set takes COLUMN=VALUE
import|--set|tenant_id=abc|tenant_id
import|--rejects||--rejects needs a path
import|--max-rejects|-1|--max-rejects needs a count >= 0, not '-1'
import|--max-rejects|x|--max-rejects needs a count >= 0, not 'x'
import|--chunk-rows|0|--chunk-rows needs a count from 1 to 10000000, not '0'
import|--chunk-rows|10000001|--chunk-rows needs a count from 1 to 10000000, not '10000001'
import|--on-conflict|ignore|--on-conflict must be update or nothing, not 'ignore'
import|--on-conflict|nothin|--on-conflict must be update or nothing, not 'nothin'
reconcile|--repair|all|--repair must be missing or merge, not 'all'
reconcile|--repair||--repair must be missing or merge, not ''
import|--final-status|2,x|--final-status needs a comma-separated list of smallints, not '2,x'
import|--final-status|40000|--final-status needs a comma-separated list of smallints, not '40000'
import|--report||--report needs a path or -
import|--html||--html needs a path
import|--changes||--changes needs a path or -
import|--retries|1001|--retries needs a count from 0 to 1000, not '1001'
import|--retries|-1|--retries needs a count from 0 to 1000, not '-1'
import|--cancel-wait|-1|--cancel-wait needs a count from 0 to 3600, not '-1'
import|--cancel-wait|3601|--cancel-wait needs a count from 0 to 3600, not '3601'
import|--jobs|0|--jobs needs a count from 1 to 16, not '0'
import|--jobs|17|--jobs needs a count from 1 to 16, not '17'
import|--jobs|2x|--jobs needs a count from 1 to 16, not '2x'
import|--jobs||--jobs needs a count from 1 to 16, not ''
dedupe|--batch-size|0|--batch-size needs a count from 1 to 1000000, not '0'
dedupe|--batch-size|1000001|--batch-size needs a count from 1 to 1000000, not '1000001'
dedupe|--limit|-1|--limit needs a count >= 0, not '-1'
create-index|--index-name||--index-name needs a name
init|--shard-count|0|--shard-count needs a count from 1 to 64000, not '0'
init|--shard-count|64001|--shard-count needs a count from 1 to 64000, not '64001'
EOF
)
while IFS='|' read -r cmd opt value words; do
    files=()
    [ "$cmd" = import ] && files=(empty.csv)
    run "$cmd" "${NODB[@]}" "$opt" "$value" "${files[@]}"
    eq "$cmd $opt '$value': exit 2" 2 $RC
    check "$cmd $opt '$value': says \"$words\"" contains "$ERR" "$words"
    eq "$cmd $opt '$value': one line" 1 "$(wc -l <"$ERR")"
done <<<"$ROWS"

# With --profile, the encoding and the zone themselves are checked.
run import "${NODB[@]}" --profile wechat-trade --encoding latin9 empty.csv
eq "--encoding latin9: exit 2" 2 $RC
check "--encoding latin9: names the encodings it takes" contains "$ERR" "--encoding must be utf-8 or gbk, not 'latin9'"
run import "${NODB[@]}" --profile wechat-trade --timezone Mars/Olympus empty.csv
eq "--timezone Mars/Olympus: exit 2" 2 $RC
check "--timezone Mars/Olympus: names the zone" contains "$ERR" "Mars/Olympus"

# Flags take no value; options with a value need one.
FLAGS="import|--dry-run import|--quiet import|--force import|--no-append dedupe|--apply dedupe|--include-final init|--distributed"
for f in $FLAGS; do
    cmd=${f%%|*} opt=${f#*|}
    run "$cmd" "${NODB[@]}" "$opt=yes" empty.csv
    eq "$cmd $opt=yes: exit 2" 2 $RC
    check "$cmd $opt=yes: takes no value" contains "$ERR" "option $opt takes no value"
done
run import "${NODB[@]}" empty.csv --jobs
eq "--jobs at the end without a value: exit 2" 2 $RC
check "--jobs without a value: says it needs one" contains "$ERR" "option --jobs needs a value (N)"
# An option another command owns.
for pair in "validate|--jobs 2" "validate|--dry-run" "check|--apply" "init|--limit 1" "import|--apply"; do
    cmd=${pair%%|*} rest=${pair#*|}
    # shellcheck disable=SC2086
    run "$cmd" $rest empty.csv
    eq "$cmd $rest: exit 2" 2 $RC
    check "$cmd $rest: inapplicable" contains "$ERR" "inapplicable option"
done
run init "${NODB[@]}" --shard-count 8
eq "--shard-count without --distributed: exit 2" 2 $RC
check "--shard-count without --distributed: says so" contains "$ERR" "--shard-count goes with --distributed"
run dedupe "${NODB[@]}" --include-final
eq "--include-final without --apply: exit 2" 2 $RC
check "--include-final without --apply: says so" contains "$ERR" "--include-final goes with --apply"
run import "${NODB[@]}" - -
eq "standard input twice: exit 2" 2 $RC
check "standard input twice: says so" contains "$ERR" "standard input (-) can be read only once"
# Values in range are taken: --opt=value, -jN and the bounds themselves.
run validate --chunk-rows=10000000 --max-rejects 0 empty.csv
eq "the bounds are accepted (--chunk-rows=10000000, --max-rejects 0)" 0 $RC
tr ',' '\t' <empty.csv >empty.tsv
run validate --delimiter tab --format=csv empty.tsv
eq "--delimiter tab and --format=csv are accepted" 0 $RC

# Completeness: every option some command's --help lists has a row above,
# or is a flag, or takes any text (-d, --help, --version).
DOCUMENTED=" $(cut -d'|' -f2 <<<"$ROWS" | sort -u | tr '\n' ' ') --dry-run --quiet --force --no-append --supersede --apply --include-final --distributed --dbname --help --version "
missing=""
for cmd in import validate check dedupe create-index init status; do
    for opt in $(idem_out "$cmd" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
        case "$DOCUMENTED" in *" $opt "*) ;; *) missing="$missing $opt($cmd)" ;; esac
    done
done
eq "every option of every command has its row in this table" "" "$missing"

finish
