#!/usr/bin/env bash
# rules/json_path.c against the server it imitates: for every payload and
# path it answers from the bytes alone (TEXT or NULL), `payload::jsonb #>>
# path` must give exactly that text, or NULL.  The payloads are the unit
# test's table (test_json_path --cases) and a few thousand generated ones:
# nested objects with duplicate keys, escaped and raw Unicode keys, arrays,
# numbers in every form numeric_out keeps or rewrites, strings with and
# without escapes, white space everywhere.  The module's answers come from
# the unit test's binary (test_json_path --eval), built beside the others
# in the tests' build directory, which IDEMLOAD_TEST_TMP is under.
# JSON_PATH_SEED and JSON_PATH_COUNT change the generated set.
. "$(dirname "$0")/../lib.sh"

JP=$(dirname "${IDEMLOAD_TEST_TMP:?IDEMLOAD_TEST_TMP not set}")/test_json_path
[ -x "$JP" ] || { fail "no test_json_path binary at $JP (build the unit tests)"; finish; }
SEED=${JSON_PATH_SEED:-20261128}
COUNT=${JSON_PATH_COUNT:-3000}
new_db jp_check

# gen.py SEED COUNT: COUNT lines of hex fields (payload, path elements) as
# test_json_path --eval reads them.
cat >gen.py <<'PY'
import random, sys

rng = random.Random(int(sys.argv[1]))
KEYS = ["a", "b", "c", "amount", "payer", "buyer_id", "0", "1", "", "A", "ab", "a b",
        "cl\u00e9", "cafe\u0301", "\u91d1\u989d", "\U0001f600", "{x}", "k:q"]
PLAIN = "abcXYZ019 -_.,:;{}[]'/~"
RAW = ["\u00e9", "\u91d1", "\U0001f600", "\u2028", "\u00a0", "\u0301"]
ESC = ["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u00e9", "\\u0041",
       "\\ud83d\\ude00", "\\u2028"]
WS = ["", "", "", " ", "\n", "\t", "\r\n  "]

def ws():
    return rng.choice(WS)

def digits(n, first_nonzero=False):
    d = "".join(rng.choice("0123456789") for _ in range(n))
    return (rng.choice("123456789") + d[1:]) if first_nonzero and n else d

def number():
    form = rng.random()
    if form < 0.15:
        return rng.choice(["0", "-0", "-0.0", "-0.000", "0.00", "1.50", "-0.5", "-10",
                           "123456789012345678901234567890", "1.5e3", "1E5", "-0e5",
                           "2.5e+10", "5e-1", "0e0", "-100.00", "1638.41"])
    s = "-" if rng.random() < 0.3 else ""
    s += "0" if rng.random() < 0.3 else digits(rng.randint(1, 32), True)
    if rng.random() < 0.5:
        s += "." + ("0" * rng.randint(1, 4) if rng.random() < 0.3 else digits(rng.randint(1, 6)))
    if rng.random() < 0.1:
        s += rng.choice("eE") + rng.choice(["", "+", "-"]) + digits(rng.randint(1, 2))
    return s

def string_body():
    parts = []
    for _ in range(rng.randint(0, 8)):
        r = rng.random()
        if r < 0.75:
            parts.append(rng.choice(PLAIN))
        elif r < 0.92:
            parts.append(rng.choice(RAW))
        else:
            parts.append(rng.choice(ESC))
    return "".join(parts)

def key_text(k):
    # a key written plainly, or now and then with one character escaped
    if rng.random() < 0.04 and k:
        i = rng.randrange(len(k))
        c = k[i]
        e = "\\\"" if c == '"' else "\\u%04x" % ord(c) if ord(c) < 0x10000 else c
        return key_text_plain(k[:i]) + e + key_text_plain(k[i + 1:])
    return key_text_plain(k)

def key_text_plain(k):
    return k.replace('"', '\\"')

def value(depth):
    r = rng.random()
    if depth < 3 and r < 0.3:
        return obj(depth + 1)
    if depth < 3 and r < 0.38:
        items = [value(depth + 1)[0] for _ in range(rng.randint(0, 3))]
        return "[" + ws() + ("," + ws()).join(items) + ws() + "]", None
    if r < 0.55:
        return number(), None
    if r < 0.62:
        return rng.choice(["true", "false", "null"]), None
    return '"' + string_body() + '"', None

def obj(depth):
    pool = rng.sample(KEYS, rng.randint(1, 6))
    members, tree = [], {}
    for _ in range(rng.randint(0, 6)):
        k = rng.choice(pool)
        text, sub = value(depth)
        members.append(ws() + '"' + key_text(k) + '"' + ws() + ":" + ws() + text + ws())
        tree[k] = sub
    return "{" + ",".join(members) + ws() + "}", tree

def path_for(tree):
    # mostly down the keys the payload has, to a leaf; now and then astray
    path = []
    while True:
        if isinstance(tree, dict) and tree and rng.random() < 0.85:
            k = rng.choice(list(tree))
            tree = tree[k]
        else:
            k = rng.choice(KEYS + ["x", "0"])
            tree = None
        path.append(k)
        if len(path) == 4 or (tree is None and rng.random() < 0.8) or rng.random() < 0.1:
            return path

def top():
    r = rng.random()
    if r < 0.9:
        return obj(1)
    if r < 0.95:
        return value(2)[0], None  # an array, an object or a scalar, inside nothing
    return value(3)

def hexed(s):
    return s.encode("utf-8").hex()

for _ in range(int(sys.argv[2])):
    text, tree = top()
    text = ws() + text + ws()
    print("\t".join([hexed(text)] + [hexed(e) for e in path_for(tree)]))
PY

python3 gen.py "$SEED" "$COUNT" >cases.hex || fail "generating the payloads"
"$JP" --cases >>cases.hex 2>eval.err || fail "test_json_path --cases"
"$JP" --eval <cases.hex >answers.txt 2>>eval.err
check "test_json_path --eval ran" [ $? -eq 0 ]
san_check eval.err "test_json_path --eval"
eq "an answer for each case" "$(wc -l <cases.hex)" "$(wc -l <answers.txt)"

# The server's answers: payload and path go in as hex (no quoting to get
# wrong), the text comes out as hex, SQL NULL as \N.
python3 - cases.hex >cases.copy <<'PY'
import sys
for i, line in enumerate(open(sys.argv[1])):
    f = line.rstrip("\n").split("\t")
    print("%d\t%s\t{%s}" % (i, f[0], ",".join('"%s"' % e for e in f[1:])))
PY
q "CREATE TABLE jp (id int PRIMARY KEY, payload_hex text NOT NULL, path_hex text[] NOT NULL)" \
    >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -c "\\copy jp FROM 'cases.copy'"
check "cases loaded" [ $? -eq 0 ]
psql -X -q -v ON_ERROR_STOP=1 >server.txt -c "COPY (
    SELECT encode(convert_to(
             convert_from(decode(payload_hex, 'hex'), 'UTF8')::jsonb
             #>> ARRAY(SELECT convert_from(decode(h, 'hex'), 'UTF8')
                       FROM unnest(path_hex) WITH ORDINALITY AS u(h, o) ORDER BY o),
             'UTF8'), 'hex')
    FROM jp ORDER BY id) TO STDOUT"
check "the server answered" [ $? -eq 0 ]

# compare: every TEXT and NULL of the module is the server's answer.
python3 - answers.txt server.txt cases.hex >compare.txt <<'PY'
import sys
mine = open(sys.argv[1]).read().split("\n")[:-1]
theirs = open(sys.argv[2]).read().split("\n")[:-1]
cases = open(sys.argv[3]).read().split("\n")[:-1]
counts = {"T": 0, "N": 0, "S": 0}
bad = 0
for i, (m, t) in enumerate(zip(mine, theirs)):
    counts[m[0]] += 1
    if m[0] == "S" or (m == "N" and t == "\\N") or (m[0] == "T" and m[2:] == t):
        continue
    bad += 1
    if bad <= 20:
        f = [bytes.fromhex(x).decode() for x in cases[i].split("\t")]
        srv = None if t == "\\N" else bytes.fromhex(t).decode()
        got = None if m == "N" else bytes.fromhex(m[2:]).decode()
        print("MISMATCH %r path %r: module %r, server %r" % (f[0], f[1:], got, srv))
print("compared %d %d text %d null %d server %d mismatches %d" % (
    len(mine), len(theirs), counts["T"], counts["N"], counts["S"], bad))
PY
grep '^MISMATCH' compare.txt | sed 's/^/#   /'
read -r _ n_mine n_theirs _ n_text _ n_null _ n_server _ n_bad < <(grep '^compared' compare.txt)
echo "# seed $SEED: ${n_text:-?} TEXT, ${n_null:-?} NULL, ${n_server:-?} left to the server"
eq "the server answered every case" "$n_mine" "$n_theirs"
eq "every TEXT and NULL is the server's answer" 0 "${n_bad:-?}"
# The generator must keep the module deciding most cases, or this tests little.
check "most cases decided from the bytes" between "$((n_text + n_null))" \
    "$((n_mine / 2))" "$n_mine"
check "some cases of each answer" \
    [ "$n_text" -gt 100 -a "$n_null" -gt 100 -a "$n_server" -gt 100 ]

dropdb --if-exists --force jp_check >/dev/null 2>&1
finish
