#!/usr/bin/env bash
# The generated bash completion (share/bash-completion/completions/idemload):
# commands, every option of each command exactly as `idemload COMMAND
# --help` lists them, option values (choices, files, "-", nothing for a
# count), --opt=value, files as arguments, and profile names asked of
# `idemload profiles` at run time, silently none when that command does not
# exist.  Each case runs the completion function in a fresh bash, as bash
# would call it, and compares COMPREPLY.
. "$(dirname "$0")/../lib.sh"

COMPLETION=$(dirname "$IDEMLOAD_REAL")/doc/idemload.bash
check "the build generated the completion" test -s "$COMPLETION"
check "it is valid bash" bash -n "$COMPLETION"

# comp WORD...: the sorted candidates for the last word (the one the cursor
# is on), as bash with its default COMP_WORDBREAKS would split the line
# (a '=' is a word of its own).  Anything the function prints fails.
comp() {
    bash --norc --noprofile -c '
        . "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _idemload "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$COMPLETION" "$@" 2>comp.err
    [ -s comp.err ] && { fail "completion of '$*' printed: $(cat comp.err)"; }
}
# expect DESCRIPTION "EXPECTED CANDIDATES" WORD...
expect() {
    local d=$1 want=$2
    shift 2
    eq "$d" "$(tr ' ' '\n' <<<"$want" | sed '/^$/d' | sort)" "$(comp "$@" | sed '/^$/d')"
}

# --- commands, from --help
commands=$(idem_out --help | sed -n 's/^  idemload \([a-z][a-z-]*\) .*/\1/p')
expect "no command yet: every command of --help" "$commands" idemload ""
expect "a prefix: the matching command" "create-index" idemload cr
expect "options before the command: --help, --version" "-h --help -V --version" idemload -

# --- options: each command's, as its --help lists them (parsed from --help)
for cmd in $commands; do
    longs=$(idem_out "$cmd" --help | sed -n 's/^  \(-[a-zA-Z], \|    \)\(--[a-z0-9-]*\).*/\2/p')
    shorts=$(idem_out "$cmd" --help | sed -n 's/^  \(-[a-zA-Z]\), .*/\1/p')
    [ -n "$longs" ] || fail "no options parsed from $cmd --help"
    expect "$cmd --: exactly the long options of '$cmd --help'" "$longs" idemload "$cmd" --
    expect "$cmd -: every option of '$cmd --help'" "$longs $shorts" idemload "$cmd" -
done
expect "options after other words: still the command's" "--apply" idemload dedupe -d x --limit 3 --ap
expect "validate does not offer import's --jobs" "" idemload validate --jo

# --- option values
# An idemload with a profiles command (the real one may not have it yet).
cat >fake-idemload <<'SH'
#!/bin/sh
[ "$1" = profiles ] || exit 2
printf 'wechat-trade    WeChat Pay trade bill (ALL, SUCCESS, REFUND)\n'
printf 'alipay-trade    Alipay trade bill\n'
printf 'stripe-balance  Stripe itemized balance change report\n'
SH
chmod +x fake-idemload
expect "--format: its choices" "csv ndjson" idemload import --format ""
expect "--format=: its choices" "csv ndjson" idemload import --format = ""
expect "--format=n" "ndjson" idemload import --format = n
expect "--on-conflict: its choices" "update nothing" idemload import --on-conflict ""
expect "--format=n as one word (no '=' in COMP_WORDBREAKS)" "--format=ndjson" idemload import --format=n
mkdir -p d/sub && touch d/a.csv.gz d/b.ndjson
expect "--rejects: file names" "d/a.csv.gz d/b.ndjson d/sub" idemload import --rejects d/
expect "--report: file names" "d/a.csv.gz d/b.ndjson d/sub" idemload validate --report d/
got=$(comp idemload validate --report "")
check "--report: - (standard output) and the files here" grep -qx -- "-" <<<"$got"
check "--report: the files here too" grep -qx "fake-idemload" <<<"$got"
expect "--report -" "-" idemload import --report -
expect "--jobs N: nothing (not an option, not a file)" "" idemload import --jobs ""
expect "-d DB: nothing" "" idemload check -d ""
expect "--table: nothing" "" idemload init --table ""

# --- arguments
expect "import FILE: file names" "d/a.csv.gz d/b.ndjson d/sub" idemload import -q d/
expect "validate FILE after an option with a value: file names" "d/a.csv.gz" idemload validate --format csv d/a
expect "check takes no files: nothing" "" idemload check d/

# --- profile names, from `idemload profiles` at run time
expect "profiles NAME: the names idemload profiles lists" \
    "wechat-trade alipay-trade stripe-balance" "$WORK/fake-idemload" profiles ""
expect "profiles w" "wechat-trade" "$WORK/fake-idemload" profiles w
# This idemload: exactly the built-in profiles SPEC.md names (at least
# those), as its `profiles` lists them: nothing else, no error text.
run profiles
eq "idemload profiles: exit 0" 0 "$RC"
listed=$(sed -n 's/^\([a-z0-9][a-z0-9._-]*\)  .*/\1/p' "$OUT" | sort)
for p in wechat-trade alipay-trade stripe-balance; do
    check "idemload profiles lists $p" grep -qx "$p" <<<"$listed"
done
eq "profiles with this idemload: the names it lists, nothing else" "$listed" \
    "$(comp "$IDEMLOAD" profiles "" | sed '/^$/d')"
expect "profiles with an idemload not in PATH: silently nothing" "" no-such-idemload-here profiles ""

finish
