#!/usr/bin/env bash
# tests/expected_merge.py, the model the database tests compare tables
# with, checked on its own: small inputs worked out by hand from SPEC.md's
# merge rules (each rule once, the counts exact), its data mode's reading
# of instants (offsets, fractions) and numbers (as written), and on
# generated files its data mode and the generator's --expected state, two
# computations that share no code, agree key for key.
. "$(dirname "$0")/../lib.sh"
MODEL="python3 $SRC/tests/expected_merge.py"
hdr="tenant_id,channel,out_trade_no,callback_type,status,received_at,payload"
# state FILE: the model's output as "key status received_at payload" lines.
state() { tail -n +2 "$1" | sed 's/,pay,/ /; s/,"/ "/' | sort; }

# --- expected-file mode: one file after another
cat >e1.csv <<EOF
$hdr
1,alipay,K1,pay,1,100,"{""a"":1}"
1,alipay,K2,pay,2,100,"{""a"":1}"
1,alipay,K3,pay,1,100,"{""a"":1}"
1,alipay,K4,pay,1,100,"{""n"":168.90}"
1,alipay,K5,pay,1,100,"{""a"":1}"
1,alipay,K6,pay,1,100,"{""a"":1}"
EOF
cat >e2.csv <<EOF
$hdr
1,alipay,K1,pay,1,200,"{""a"":2}"
1,alipay,K2,pay,1,200,"{""a"":2}"
1,alipay,K3,pay,2,50,"{""a"":0}"
1,alipay,K4,pay,1,100,"{""n"":168.9}"
1,alipay,K5,pay,1,100,"{""a"":9}"
1,alipay,K6,pay,1,50,"{""a"":0}"
1,alipay,K7,pay,0,70,"{""a"":7}"
EOF
$MODEL out.csv e1.csv e2.csv 2>counts.json
eq "two files: exit 0" 0 $?
eq "two files: the counts" \
    '{"rows": 13, "keys": 7, "order_dependent": 1, "older_final": 1, "updated": 4, "stale": 1, "unchanged": 1}' \
    "$(cat counts.json)"
# K1 newer: replaced; K2 newer but final: payload and instant replaced, the
# status stays 2; K3 older but final: only the status; K4 the same value
# (168.90 = 168.9 in jsonb): unchanged, the first text stays; K5 the same
# instant, another payload: the incoming wins (order-dependent); K6 older:
# stale; K7 new.
eq "two files: the state, rule by rule" "$(sort <<'EOF'
1,alipay,K1 1,200 "{""a"":2}"
1,alipay,K2 2,200 "{""a"":2}"
1,alipay,K3 2,100 "{""a"":1}"
1,alipay,K4 1,100 "{""n"":168.90}"
1,alipay,K5 1,100 "{""a"":9}"
1,alipay,K6 1,100 "{""a"":1}"
1,alipay,K7 0,70 "{""a"":7}"
EOF
)" "$(state out.csv)"
# --final-status 3: 2 is no longer final, so K2 takes the incoming 1 and
# K3's older 2 is stale.
$MODEL --final-status 3 out3.csv e1.csv e2.csv 2>counts3.json
eq "--final-status 3: the counts" \
    '{"rows": 13, "keys": 7, "order_dependent": 1, "older_final": 0, "updated": 3, "stale": 2, "unchanged": 1}' \
    "$(cat counts3.json)"
eq "--final-status 3: K2 takes the incoming status, K3 stays" \
    '1,alipay,K2 1,200 "{""a"":2}"|1,alipay,K3 1,100 "{""a"":1}"' \
    "$(state out3.csv | grep -E 'K2|K3' | paste -sd'|')"
# The same instant with only another status, over a final one: nothing.
printf '%s\n1,alipay,K2,pay,0,200,"{""a"":2}"\n' "$hdr" >e3.csv
$MODEL out4.csv e1.csv e2.csv e3.csv 2>counts4.json
eq "the same instant, another status, over a final one: unchanged" "2 1,alipay,K2 2,200" \
    "$(json counts4.json 'r["unchanged"]') $(state out4.csv | grep K2 | cut -d' ' -f1,2)"

# --- data mode: rows as a file holds them, in file order
us() { echo $(($(date -u -d "$1" +%s) * 1000000 + ${2:-0})); }
cat >d.csv <<'EOF'
tenant_id,channel,out_trade_no,callback_type,status,payload,received_at
5,wechat,T1,pay,1,"{""v"":1}",2026-11-28T03:00:00Z
5,wechat,T1,pay,1,"{""v"":2}",2026-11-28T10:00:00+08:00
5,wechat,T2,pay,1,"{""v"":1}",2026-11-28T03:00:00.5+0530
5,wechat,T2,pay,1,"{""v"":2}",2026-11-28T03:00:00.5+0530
5,wechat,T3,pay,2,"{""amount"":168.90}",2026-11-28T03:00:00.000123-01
EOF
$MODEL --data dout.csv d.csv 2>dcounts.json
eq "data: exit 0" 0 $?
# T1: 10:00+08:00 is 02:00Z, older than 03:00Z: stale.  T2: a tie inside
# one file, the later row wins (the file decides: not order-dependent).
eq "data: the counts" \
    '{"rows": 5, "keys": 3, "order_dependent": 0, "older_final": 0, "updated": 1, "stale": 1, "unchanged": 0}' \
    "$(cat dcounts.json)"
eq "data: instants from their offsets, to the microsecond" \
    "$(us 2026-11-28T03:00:00Z) $(($(us 2026-11-27T21:30:00Z) + 500000)) $(($(us 2026-11-28T04:00:00Z) + 123))" \
    "$(tail -n +2 dout.csv | cut -d, -f6 | paste -sd' ')"
eq "data: a tie inside the file goes to the later row" '"{""v"":2}"' "$(grep T2 dout.csv | cut -d, -f7)"
# NDJSON: the payload object's numbers as written (168.90 stays 168.90).
printf '%s\n' '{"tenant_id":5,"channel":"wechat","out_trade_no":"N1","callback_type":"pay","status":1,"payload":{"amount":168.90,"n":[1,2.50],"s":"a\"b"},"received_at":"2026-11-28T03:00:00Z"}' >d.ndjson
$MODEL --data nout.csv d.ndjson 2>/dev/null
eq "data, NDJSON: the payload's text keeps its numbers" '{"amount":168.90,"n":[1,2.50],"s":"a\"b"}' \
    "$(python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[0]["payload"])' nout.csv)"
# A row it cannot read stops it (exit 2): data mode never skips a row.
printf 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n5,wechat,B1,pay,1,"{}",2026-11-28T03:00:00\n' >bad.csv
$MODEL --data bout.csv bad.csv 2>bad.err
eq "data: a received_at without an offset: exit 2" 2 $?
check "data: and says which row" contains bad.err "bad.csv: row 1"

# --- generated files: data mode agrees with the generator's own state
for fmt in csv ndjson; do
    $GEN --rows 20000 --seed 5 --dup-rate 0.3 --out-of-order 0.3 --ties 0.2 --exact-dup-rate 0.2 \
        --format $fmt --out g.$fmt --expected g.$fmt.exp --quiet
    $MODEL --data gd.$fmt.csv g.$fmt 2>gd.$fmt.json
    $MODEL ge.$fmt.csv g.$fmt.exp 2>/dev/null
    check "$fmt: the data mode found repeats, older versions and ties" \
        jtrue gd.$fmt.json 'r["updated"] > 1000 and r["stale"] > 1000 and r["unchanged"] > 100'
    agree=$(python3 - gd.$fmt.csv ge.$fmt.csv <<'EOF'
import csv, decimal, json, sys
def load(p):
    return {(r["tenant_id"], r["channel"], r["out_trade_no"], r["callback_type"]):
            (r["status"], r["received_at"], json.loads(r["payload"], parse_float=decimal.Decimal))
            for r in csv.DictReader(open(p, newline="", encoding="utf-8"))}
a, b = load(sys.argv[1]), load(sys.argv[2])
print(len(a), len(b), sum(1 for k in a.keys() | b.keys() if a.get(k) != b.get(k)))
EOF
)
    check "$fmt: data mode and the generator's expected state agree key for key ($agree)" \
        python3 -c 'import sys; a, b, d = map(int, sys.argv[1].split()); sys.exit(not (a == b > 10000 and d == 0))' "$agree"
done
finish
