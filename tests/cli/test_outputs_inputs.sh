#!/usr/bin/env bash
# SPEC.md "Outputs never touch inputs" (issue 26, items 5 and 6): an output
# path that is the same file as an input (the same path, another spelling, a
# hard link or a symbolic link) is refused before anything is read or
# opened for writing: exit 2, both named, every file as it was.  Checked on
# validate and on import (which refuses before connecting: the server given
# does not exist).
. "$(dirname "$0")/../lib.sh"

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
{ echo "$H"; echo '1,wechat,A1,pay,1,"{}",2026-11-28T10:00:00Z'; echo '1,wechat,A2,pay,x,"{}",2026-11-28T10:00:00Z'; } >in.csv
printf '%s\n' '{"tenant_id":1,"channel":"wechat","out_trade_no":"N1","callback_type":"pay","status":1,"payload":{},"received_at":"2026-11-28T10:00:00Z"}' >in.ndjson
ln in.csv hard.csv
ln -s in.csv sym.csv
mkdir sub
sums() { sha256sum in.csv in.ndjson | paste -sd' '; }
before=$(sums)
NODB='host=/nonexistent/socket-dir'

# refused WHAT ARGS...: exit 2, the error names both paths, inputs intact.
refused() {
    local what=$1 out=$2 in=$3; shift 3
    run "$@"
    eq "$what: exit 2" 2 "$RC"
    check "$what: names the output $out" contains "$ERR" "$out is the same file"
    check "$what: names the input $in" contains "$ERR" "input $in"
    eq "$what: the inputs are untouched" "$before" "$(sums)"
}
for cmd in validate "import -d $NODB"; do
    # shellcheck disable=SC2086
    set -- $cmd
    c=$1
    refused "$c --report X X" in.csv in.csv "$@" --report in.csv in.csv
    refused "$c --html X X" in.csv in.csv "$@" --html in.csv in.csv
    refused "$c --rejects X X" in.csv in.csv "$@" --rejects in.csv in.csv
    refused "$c --rejects through a hard link" hard.csv in.csv "$@" --rejects hard.csv in.csv
    refused "$c --report through a symbolic link" sym.csv in.csv "$@" --report sym.csv in.csv
    refused "$c --report, another spelling" ./sub/../in.csv in.csv "$@" --report ./sub/../in.csv in.csv
    refused "$c: the input is the link" in.csv sym.csv "$@" --report in.csv sym.csv
    refused "$c: among several inputs" in.ndjson in.ndjson "$@" --report in.ndjson in.csv in.ndjson
done
refused "import --changes X X" in.ndjson in.ndjson import -d "$NODB" --changes in.ndjson in.ndjson

# A profile file is an input too (a built-in name is not a file).
"$IDEMLOAD" profiles wechat-trade >my-profile.json
psum=$(sha256sum my-profile.json)
run validate --profile my-profile.json --set tenant_id=1 --report my-profile.json in.csv
eq "--report over the --profile file: exit 2" 2 "$RC"
check "--report over the --profile file: both named" contains "$ERR" "my-profile.json is the same file as the --profile my-profile.json"
eq "--report over the --profile file: the profile untouched" "$psum" "$(sha256sum my-profile.json)"
run validate --profile ./my-profile.json --set tenant_id=1 --html ./sub/../my-profile.json in.csv
eq "--html over the --profile file, spelled otherwise: exit 2" 2 "$RC"
eq "and the profile untouched" "$psum" "$(sha256sum my-profile.json)"

# The default rejects file caught by a glob (the second run of
# `validate *.ndjson` in a directory that holds last night's rejects).
mkdir glob && cd glob || exit 1
printf '%s\n' '{"tenant_id":1,"channel":"wechat","out_trade_no":"N1","callback_type":"pay","status":"x","payload":{},"received_at":"2026-11-28T10:00:00Z"}' >statements.ndjson
run validate -q ./*.ndjson
eq "first validate: exit 1 (a row rejected)" 1 "$RC"
check "first validate: the default rejects file" test -s idemload-rejects.ndjson
size=$(stat -c %s idemload-rejects.ndjson)
run validate -q ./*.ndjson
eq "the glob caught the default rejects file: exit 2" 2 "$RC"
check "names the default rejects file" contains "$ERR" "idemload-rejects.ndjson is the same file as the input"
eq "the rejects file did not grow" "$size" "$(stat -c %s idemload-rejects.ndjson)"
cd .. || exit 1

# "-" is never a file to compare, and distinct files pass.
run validate --report - --rejects rj.ndjson in.csv
eq "--report - with an input: exit 1 (a reject), not refused" 1 "$RC"
run validate --report other.json --rejects rj2.ndjson in.csv
eq "distinct paths: not refused" 1 "$RC"
check "distinct paths: the report is written" test -s other.json
finish
