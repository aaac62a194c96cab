#!/usr/bin/env bash
# The man page idemload(1) against --help (SPEC.md "Installing it, running it
# nightly": generated from the same option table, so every option is in
# both): every command of `idemload --help` has its section in the rendered
# page, and every option of `idemload COMMAND --help` is under it with the
# same argument and the same text, and nothing more; the page has the exit
# statuses of src/util/exitcodes.h, the files, the environment and the three
# jobs' examples; groff finds nothing to warn about.
. "$(dirname "$0")/../lib.sh"

MAN=$(dirname "$IDEMLOAD_REAL")/doc/idemload.1
check "the build generated the man page" test -s "$MAN"
check "and its gzipped copy" test -s "$MAN.gz"
command -v man >/dev/null || { fail "man is missing (scripts/setup.sh installs man-db)"; finish; }

# Rendered as a reader sees it, wide enough that no line wraps.
LANG=C MANWIDTH=1000 man -l "$MAN" 2>man.err | col -bx >man.txt
check "man -l renders the page" test -s man.txt
eq "man -l prints no warning" "" "$(cat man.err)"
eq "groff -ww finds nothing to warn about" "" "$(groff -man -ww -z "$MAN" 2>&1)"

idem_out --help >help.txt
for cmd in $(sed -n 's/^  idemload \([a-z][a-z-]*\) .*/\1/p' help.txt); do
    echo "$cmd" >>commands.txt
    idem_out "$cmd" --help >"help-$cmd.txt"
done
check "idemload --help lists commands" test "$(wc -l <commands.txt)" -ge 6

# Both sides as lines "COMMAND<TAB>-s, --long ARG<TAB>help text", parsed
# from the two texts (not from the tables they come from).
python3 - "$WORK" <<'PY' || fail "parsing --help and the man page"
import re, sys, os
work = sys.argv[1]
os.chdir(work)
opt = re.compile(r'^(?:-(\w), )?(--[a-z0-9-]+)(?: (\S+))?$')
def norm(s): return ' '.join(s.split())

with open('help.out', 'w') as out:
    for cmd in open('commands.txt').read().split():
        text = open(f'help-{cmd}.txt').read().splitlines()
        assert 'Options:' in text, cmd
        for line in text[text.index('Options:') + 1:]:
            m = re.match(r'^  (-\w, |    )(--\S+(?: \S+)?) +(\S.*)$', line)
            assert m, f'{cmd} --help: cannot parse {line!r}'
            left = (m.group(1).strip() + ' ' if m.group(1).strip() else '') + m.group(2)
            assert opt.match(left), left
            out.write(f'{cmd}\t{left}\t{norm(m.group(3))}\n')

lines = open('man.txt').read().splitlines()
sections = {}
cur = None
for l in lines:
    if re.match(r'^[A-Z]', l):
        cur = l.strip(); sections[cur] = []
    elif cur:
        sections[cur].append(l)
assert 'COMMANDS' in sections and 'SYNOPSIS' in sections, sorted(sections)
with open('man.out', 'w') as out:
    cmd = left = None; text = []
    def flush():
        if cmd and left:
            out.write(f'{cmd}\t{left}\t{norm(" ".join(text))}\n')
    for l in sections['COMMANDS']:
        m = re.match(r'^   idemload (\S+) ', l)
        if m:
            flush(); cmd, left, text = m.group(1), None, []
            continue
        if cmd and re.match(r'^ {7}-', l) and opt.match(l.strip()):
            flush(); left, text = l.strip(), []
        elif left and l.startswith(' ' * 14):
            text.append(l)
    flush()
with open('man-commands.txt', 'w') as out:
    for l in sections['SYNOPSIS']:
        m = re.match(r'^ +idemload ([a-z][a-z-]*) ', l)
        if m:
            out.write(m.group(1) + '\n')
PY
eq "SYNOPSIS has exactly the commands of --help, in order" "$(cat commands.txt)" "$(cat man-commands.txt)"
check "--help lists options of every command" test "$(wc -l <help.out)" -ge 40
if diff help.out man.out >help-vs-man.diff; then
    ok "every option of every command: the same in --help and the man page ($(wc -l <help.out) entries)"
else
    fail "--help (<) and the man page (>) differ:"; cat help-vs-man.diff
fi
for cmd in $(cat commands.txt); do
    grep -q "^   idemload $cmd " man.txt || fail "no section for $cmd in COMMANDS"
done

# Every file README.md and the pages of doc/ name by its path is in the
# tree (a program the build makes, doc/gendoc, by its source), and every
# page a link names exists, as does every heading a contents entry names.
missing=$(cat "$SRC/README.md" "$SRC"/doc/*.md |
    grep -oE '`(src|tests|doc|scripts|fuzz|samples|packaging)/[^`* ]*`' |
    tr -d '`' | sort -u | while read -r p; do
        [ -e "$SRC/$p" ] || [ -e "$SRC/$p.c" ] || echo "$p"
    done)
eq "every path README.md and doc/*.md name exists" "" "$missing"
python3 - "$SRC" >links.txt <<'PY' || fail "checking the pages' links"
import os, re, sys
src = sys.argv[1]
def anchor(t):
    return re.sub(r'[^\w\- ]', '', t.lower()).replace(' ', '-')
pages = ['README.md'] + ['doc/' + f for f in sorted(os.listdir(src + '/doc')) if f.endswith('.md')]
for page in pages:
    text = open(os.path.join(src, page), encoding='utf-8').read()
    heads = {anchor(h) for h in re.findall(r'^#+ (.*)$', text, re.M)}
    for target in re.findall(r'\]\(([^)]+)\)', text):
        if target.startswith('http'):
            continue
        path, _, frag = target.partition('#')
        if path and not os.path.exists(os.path.normpath(os.path.join(src, os.path.dirname(page), path))):
            print(f'{page}: no {path}')
        if frag and not path and frag not in heads:
            print(f'{page}: no heading #{frag}')
PY
eq "every link of README.md and doc/*.md finds its page and heading" "" "$(cat links.txt)"
readme_lines=$(wc -l <"$SRC/README.md")
check "README.md is a front page (at most 250 lines: $readme_lines)" test "$readme_lines" -le 250

# A default the help states is the one the program takes.
eq "--chunk-rows states its default, config.h's DEFAULT_CHUNK_ROWS" \
    "$(sed -n 's/^#define DEFAULT_CHUNK_ROWS \([0-9]*\).*/\1/p' "$SRC/src/core/config.h")" \
    "$(grep -- '--chunk-rows' help-import.txt | sed -n 's/.*(default \([0-9]*\)).*/\1/p')"

# EXIT STATUS: every status of exitcodes.h, with its meaning.
sed -n '/^EXIT STATUS/,/^[A-Z]/p' man.txt >exit.txt
for code in $(sed -n 's/^ *EXIT_[A-Z_]* = \([0-9]*\).*/\1/p' "$SRC/src/util/exitcodes.h"); do
    check "EXIT STATUS explains $code" grep -qE "^ {7}$code +[A-Z]" exit.txt
done
# --help's own line about exit statuses names the same numbers.
eq "idemload --help names the statuses of exitcodes.h" \
    "$(sed -n 's/^ *EXIT_[A-Z_]* = \([0-9]*\).*/\1/p' "$SRC/src/util/exitcodes.h" | sort -n | tr '\n' ' ')" \
    "$(sed -n '/^Exit status:/,/^$/p' help.txt | grep -oE '(^|[ :,] ?)[0-9]+ [a-z]' | grep -oE '[0-9]+' | sort -n | tr '\n' ' ')"
check "exitcodes.h has the seven statuses" test "$(grep -c '^ *EXIT_[A-Z_]* = ' "$SRC/src/util/exitcodes.h")" -eq 7

# FILES, ENVIRONMENT, EXAMPLES.
sed -n '/^FILES/,/^[A-Z]/p' man.txt >files.txt
for f in idemload-rejects.ndjson --report idemload_ledger idemload_ledger_chunk .pgpass pg_service.conf; do
    check "FILES names $f" grep -q -- "$f" files.txt
done
sed -n '/^ENVIRONMENT/,/^[A-Z]/p' man.txt >env.txt
for v in PGHOST PGPORT PGDATABASE PGUSER PGPASSWORD PGSERVICE PGPASSFILE .pgpass; do
    check "ENVIRONMENT names $v" grep -q -- "$v" env.txt
done
sed -n '/^EXAMPLES/,/^[A-Z]/p' man.txt >examples.txt
check "EXAMPLES: the nightly reconciliation, with flock and a dated report" \
    grep -q -- "flock -n .*idemload import\|--report /var/lib/idemload/\$day/report.json" examples.txt
check "EXAMPLES: the nightly reconciliation reconciles the day it loaded" \
    grep -q -- "idemload reconcile .*--period \$day" examples.txt
check "EXAMPLES: a backfill" grep -qi "backfill" examples.txt
check "EXAMPLES: a dry run" grep -q -- "idemload import --dry-run" examples.txt
# Every option an example uses exists for its command.
python3 - "$WORK" <<'PY' || fail "an example uses an option its command does not take"
import re, sys, os
os.chdir(sys.argv[1])
known = {}
for l in open('help.out'):
    cmd, left, _ = l.split('\t')
    known.setdefault(cmd, set()).update(re.findall(r'(?<![\w-])(--?[a-z][a-z0-9-]*)', left))
text = open('examples.txt').read().replace('\\\n', ' ')
n = 0
for m in re.finditer(r'idemload ([a-z-]+)((?: +[^\n]*)?)', text):
    cmd, rest = m.group(1), m.group(2)
    if cmd not in known:
        continue
    for o in re.findall(r'(?<![\w/$-])(--?[a-z][a-z0-9-]*)', rest):
        n += 1
        assert o in known[cmd], f'{cmd} does not take {o}'
assert n >= 10, n
print(f'{n} options in the examples, all known')
PY
finish
