#!/usr/bin/env bash
# The report and the page are written whole or not at all (SPEC.md exit
# status 3, "Outputs"; src/output/outfile.h): a run killed while writing one
# (kill -9 at each write, fsync and rename in turn) leaves what PATH held,
# never half a JSON object that a script would parse; a write that fails
# (the file-size limit) is exit 3 with PATH as it was and nothing left
# beside it;
# the next run removes what a killed run left, and only that.  A path's mode
# is kept, a symbolic link is followed, a hard link keeps its names, a pipe
# or /dev/null is written as it goes.  Two outputs naming one file are
# refused before anything is written.  All on validate (no server).
. "$(dirname "$0")/../lib.sh"

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
{ echo "$H"; echo '1,wechat,A1,pay,1,"{}",2026-11-28T10:00:00Z'; echo '1,wechat,A2,pay,1,"{}",2026-11-28T11:00:00Z'; } >in.csv
temps() { find . -maxdepth 1 -name ".$1.idemload-??????" | wc -l; }
json_ok() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["command"]=="validate" and r["totals"]["rows_read"]==2 else 1)' "$1"; }
page_ok() { grep -q '</html>' "$1" && grep -q 'idemload validate report' "$1"; }

# The file-size limit (`ulimit -f`) reached while writing the report (a
# limit of 0 blocks: its first write), then the page (2 KiB: the report
# fits, the page does not): the write fails (EFBIG; idemload ignores
# SIGXFSZ, which would kill it with no word), exit 3, PATH as it was,
# nothing left beside it.
echo OLD-REPORT >r.json
echo OLD-PAGE >p.html
(ulimit -f 0; exec "$IDEMLOAD" validate -q --report r.json --html p.html in.csv) >out.txt 2>err.txt
rc=$?
# A sanitizer's runtime may write (and be killed by SIGXFSZ) before
# idemload starts: the status is checked on the plain build only.
if [ -z "${IDEMLOAD_INSTRUMENTED:-}" ]; then
    eq "the file-size limit writing the report: exit 3, not death by SIGXFSZ" 3 "$rc"
fi
eq "the file-size limit writing the report: the old report stays whole" OLD-REPORT "$(cat r.json)"
eq "the file-size limit writing the report: nothing left beside it" 0 "$(temps r.json)"
(ulimit -f 2; exec "$IDEMLOAD" validate -q --report r.json --html p.html in.csv) >out.txt 2>err.txt
eq "the file-size limit writing the page: exit 3" 3 "$?"
check "the file-size limit writing the page: the error says so" contains err.txt "cannot write the HTML report to p.html: File too large"
check "the file-size limit writing the page: the report before it was written" json_ok r.json
eq "the file-size limit writing the page: the old page stays whole" OLD-PAGE "$(cat p.html)"
eq "the file-size limit writing the page: nothing left beside it" 0 "$(temps p.html)"
# What a run killed while writing leaves (kill -9 at each step, below,
# leaves the same): its temporary file, which the next run removes and
# names.
echo partial >.p.html.idemload-KILLED
run validate --html p.html in.csv
eq "after a killed run: exit 0" 0 "$RC"
check "the stale file of the killed run was removed, and said" contains "$ERR" "removed .p.html.idemload-KILLED"
eq "nothing left beside the page" 0 "$(temps p.html)"
check "the page is the new one" page_ok p.html

# kill -9 at every step of the writing in turn (strace stops the run with
# SIGKILL on entry to its Nth write, fsync or rename, before the call
# happens): after
# each, the report and the page are the old ones or the new ones, whole; at
# most one temporary file is left per output, and the next run removes it.
if strace -qq -o /dev/null true 2>/dev/null && [ -z "${IDEMLOAD_INSTRUMENTED:-}" ]; then
    echo OLD-REPORT >k.json
    echo OLD-PAGE >k.html
    whole() { [ "$(cat "$1")" = "$2" ] || "$3" "$1"; }
    calls=write,writev,pwrite64,ftruncate,fsync,fdatasync,rename,renameat,renameat2
    n=0 kills=0 torn=0 extra=0
    while n=$((n + 1)) && [ $n -le 60 ]; do
        { strace -f -qq -o /dev/null -e trace=$calls -e inject=$calls:signal=SIGKILL:when=$n \
            "$IDEMLOAD" validate -q --report k.json --html k.html in.csv >/dev/null 2>&1; } 2>/dev/null
        rc=$?
        whole k.json OLD-REPORT json_ok || torn=$((torn + 1))
        whole k.html OLD-PAGE page_ok || torn=$((torn + 1))
        [ "$(temps k.json)" -le 1 ] && [ "$(temps k.html)" -le 1 ] || extra=$((extra + 1))
        [ $rc -eq 137 ] || break
        kills=$((kills + 1))
    done
    check "kill -9 at each write, fsync and rename: the run was stopped at 6 steps or more ($kills)" test $kills -ge 6
    check "and then ran to the end" test $rc -eq 0
    eq "no kill left a torn report or page" 0 $torn
    eq "no kill left more than one temporary file per output" 0 $extra
    check "the report is the new one" json_ok k.json
    check "the page is the new one" page_ok k.html
    eq "the run that ended removed what the kills left" 0 $(($(temps k.json) + $(temps k.html)))
else
    ok "kill -9 at each step: skipped (no strace that may trace here, or a sanitizer build)"
fi

# What the cleaning leaves: a file another run holds (its flock), names of
# another shape, a symbolic link, another user's file.
touch .p.html.idemload-HELD01 .p.html.idemload-ABCDEFG .p.html.idemload-ABCDE .x.html.idemload-ABCDEF
echo keep >target.txt
ln -s target.txt .p.html.idemload-LINK01
exec 9<.p.html.idemload-HELD01   # held by this shell, as a live run holds its own
flock -x 9
other=0
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    touch .p.html.idemload-OTHER1 && chown nobody .p.html.idemload-OTHER1 && other=1
fi
run validate -q --html p.html in.csv
eq "the page is written: exit 0" 0 "$RC"
check "the page is whole" page_ok p.html
check "a temporary file a live run holds is left" test -e .p.html.idemload-HELD01
check "a name with seven letters is left" test -e .p.html.idemload-ABCDEFG
check "a name with five letters is left" test -e .p.html.idemload-ABCDE
check "another output's temporary file is left" test -e .x.html.idemload-ABCDEF
check "a symbolic link of that shape is left" test -L .p.html.idemload-LINK01
eq "and its target untouched" keep "$(cat target.txt)"
if [ $other = 1 ]; then
    check "another user's file of that shape is left" test -e .p.html.idemload-OTHER1
fi
exec 9<&-
rm -f .p.html.idemload-* .x.html.idemload-*

# Modes: kept for an existing file, the umask's for a new one.
chmod 600 r.json
run validate -q --report r.json in.csv
eq "an existing report keeps its mode" 600 "$(stat -c %a r.json)"
check "and holds the new report" json_ok r.json
(umask 027; exec "$IDEMLOAD" validate -q --report new.json --html new.html in.csv) 2>/dev/null
eq "a new report takes the umask's mode" 640 "$(stat -c %a new.json)"
eq "a new page takes the umask's mode" 640 "$(stat -c %a new.html)"

# Another user's report rewritten by root stays theirs.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    echo old >theirs.json && chown nobody theirs.json
    run validate -q --report theirs.json in.csv
    check "root rewriting another user's report: written" json_ok theirs.json
    eq "root rewriting another user's report: the owner stays" nobody "$(stat -c %U theirs.json)"
fi

# A symbolic link is followed; a hard link keeps both names on one file.
echo old >real.json
ln -s real.json link.json
run validate -q --report link.json in.csv
check "a symbolic link stays a link" test -L link.json
check "the file it names holds the report" json_ok real.json
mkdir -p elsewhere && echo OLD >elsewhere/t.html && ln -s elsewhere/t.html lp.html
(ulimit -f 2; exec "$IDEMLOAD" validate -q --html lp.html in.csv) >out.txt 2>err.txt
eq "a symbolic link, the write failing: the file it names stays whole" OLD "$(cat elsewhere/t.html)"
# A killed run's temporary file stands beside the file the link names.
echo partial >elsewhere/.t.html.idemload-KILLED
run validate --html lp.html in.csv
check "a symbolic link, written: the file it names holds the page" page_ok elsewhere/t.html
check "a symbolic link, written: the link stays" test -L lp.html
eq "and the stale file beside its target was removed" 0 "$(find elsewhere -name '.t.html.idemload-??????' | wc -l)"
echo old >h1.json
ln h1.json h2.json
run validate -q --report h1.json in.csv
check "a hard link: the name given holds the report" json_ok h1.json
check "a hard link: the other name holds the same" cmp -s h1.json h2.json

# Written as it goes: /dev/null, a pipe, standard output.
run validate -q --report /dev/null --html /dev/null in.csv
eq "--report /dev/null --html /dev/null: exit 0" 0 "$RC"
mkfifo fifo.json
cat fifo.json >from_fifo.json &
reader=$!
run validate -q --report fifo.json in.csv
wait $reader
eq "a pipe: exit 0" 0 "$RC"
check "a pipe: the report came through it" json_ok from_fifo.json
run validate -q --html - in.csv
eq "--html -: exit 0" 0 "$RC"
check "--html -: the page on standard output" page_ok "$OUT"
run validate -q --report - --html - in.csv
eq "--report - --html -: one standard output for two: exit 2" 2 "$RC"
check "--report - --html -: says so" contains "$ERR" "cannot share standard output"

# Two outputs in one file, refused before anything is written.
echo untouched >same.json
for pair in "--report same.json --html same.json" "--report same.json --rejects same.json" \
    "--html ./same.json --report same.json"; do
    # shellcheck disable=SC2086
    run validate $pair in.csv
    eq "$pair: exit 2" 2 "$RC"
    check "$pair: both named" contains "$ERR" "are the same file"
    eq "$pair: the file untouched" untouched "$(cat same.json)"
done
run validate --report fresh.json --html fresh.json in.csv
eq "a path named twice that does not exist yet: exit 2" 2 "$RC"
check "and nothing was created" test ! -e fresh.json
mkdir -p spell
for pair in "--rejects fresh.json --report ./fresh.json" "--report fresh.json --html $PWD/fresh.json" \
    "--rejects spell/fresh.json --report ./spell/../spell/fresh.json"; do
    # shellcheck disable=SC2086
    run validate $pair in.csv
    eq "a new path spelled two ways ($pair): exit 2" 2 "$RC"
    check "($pair): nothing was created" test ! -e fresh.json -a ! -e spell/fresh.json
done
run validate -q --report /dev/null --html /dev/null --rejects /dev/null in.csv
eq "/dev/null may take several outputs" 0 "$RC"

# A directory this user cannot write to (as root, permissions do not stop
# the rename, so this part is for a normal user): a file it can write is
# written in place; a new one cannot be created (exit 3).
if [ "$(id -u)" != 0 ]; then
    mkdir ro && echo old >ro/r.json && chmod 666 ro/r.json && chmod 555 ro
    run validate -q --report ro/r.json in.csv
    eq "a writable file in a read-only directory: exit 0" 0 "$RC"
    check "written in place" json_ok ro/r.json
    run validate -q --report ro/new.json in.csv
    eq "a new file in a read-only directory: exit 3" 3 "$RC"
    check "the error names it, before anything is read" contains "$ERR" "cannot write --report 'ro/new.json': its directory is not writable; nothing was read"
    chmod 755 ro
else
    ok "read-only directory: skipped as root"
fi
finish
