#!/usr/bin/env bash
# Concurrent imports of overlapping files that provably overlap in time
# (SPEC.md: "Any number of idemload processes may load overlapping files at
# once: no duplicate active key, no deadlock error reaching the user, and the
# final table equals that of a sequential load").
#
# The proof does not rest on timing: each file carries one marker row (tenant
# 0, so it sorts first in its lane), and a trigger holds the transaction that
# writes a marker until it sees the other import's marker transaction waiting
# too (in pg_stat_activity), then records what it saw in a witness table.
# Both witness rows exist only if both merges were in progress at one moment;
# should one import never get there, the trigger gives up after 60 s with an
# error and the test fails.
. "$(dirname "$0")/../lib.sh"

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
# Two overlapping files: b holds half of a's rows again (exact copies) plus
# rows of its own, with many repeated keys inside each.
# (No --ties: a copy of an earlier version claiming the winner's instant
# would win wherever it arrives later, and the order would decide.)
$GEN --rows 20000 --seed 81 --tenants 4 --dup-rate 0.3 --exact-dup-rate 0.2 --format csv --out a0.csv --expected a.exp.csv --quiet
$GEN --rows 20000 --seed 82 --tenants 4 --dup-rate 0.3 --exact-dup-rate 0.2 --format csv --out b0.csv --expected b.exp.csv --quiet
python3 - <<'EOF'
import csv
a = list(csv.reader(open("a0.csv", newline="")))
b = list(csv.reader(open("b0.csv", newline="")))
hdr = a[0]
marker = lambda name: ["0", "wechat", name, "pay", "1", '{"marker":"%s"}' % name, "2026-11-28T00:00:00Z"]
with open("a.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerows([hdr, marker("MARK_A")] + a[1:] + b[1:10001])
with open("b.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerows([hdr, marker("MARK_B")] + b[1:] + a[1:10001])
with open("m.exp.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["tenant_id", "channel", "out_trade_no", "callback_type", "status", "received_at", "payload"])
    for name in ("MARK_A", "MARK_B"):
        w.writerow(["0", "wechat", name, "pay", "1", "1795824000000000", '{"marker":"%s"}' % name])
EOF
$EXPECTED_MERGE ab.exp.csv m.exp.csv a.exp.csv b.exp.csv 2>ab.json
check "no key claimed at one instant by two different versions (order cannot matter)" jtrue ab.json 'r["order_dependent"] == 0'
check "the files overlap (over 5000 keys in both)" python3 -c '
import csv, sys
keys = lambda f: {tuple(r[:4]) for r in csv.reader(open(f, newline=""))}
sys.exit(0 if len(keys("a.csv") & keys("b.csv")) > 5000 else 1)' 

init_db cc_par
q "CREATE TABLE witness (marker text, others int, at timestamptz DEFAULT clock_timestamp())"
q "CREATE FUNCTION rendezvous() RETURNS trigger LANGUAGE plpgsql AS \$\$
   DECLARE n int; t0 timestamptz := clock_timestamp();
   BEGIN
     IF NEW.tenant_id = 0 AND NEW.out_trade_no LIKE 'MARK_%' THEN
       PERFORM set_config('application_name', 'rendezvous', true);
       LOOP
         PERFORM pg_stat_clear_snapshot();   -- else the view stays as first read
         SELECT count(*) INTO n FROM pg_stat_activity
          WHERE application_name = 'rendezvous' AND pid <> pg_backend_pid()
            AND datname = current_database();
         EXIT WHEN n > 0;
         IF clock_timestamp() - t0 > interval '60 s' THEN
           RAISE EXCEPTION 'rendezvous: the other import never came' USING ERRCODE = '55000';
         END IF;
         PERFORM pg_sleep(0.02);
       END LOOP;
       INSERT INTO witness (marker, others) VALUES (NEW.out_trade_no, n);
       -- let the other side see this one too before going on
       PERFORM pg_sleep(0.5);
     END IF;
     RETURN NEW;
   END \$\$"
q "CREATE TRIGGER rendezvous BEFORE INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION rendezvous()"
"$IDEMLOAD" import -d "$DB" --chunk-rows 2500 --report pa.json a.csv >/dev/null 2>pa.err &
p1=$!
"$IDEMLOAD" import -d "$DB" --chunk-rows 2500 --report pb.json b.csv >/dev/null 2>pb.err &
p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
eq "concurrent imports: both exit 0" "0 0" "$r1 $r2"
eq "concurrent imports overlapped: each marker's transaction saw the other's" "MARK_A:1 MARK_B:1" \
    "$(q "SELECT string_agg(marker || ':' || others, ' ' ORDER BY marker) FROM witness")"
check "no deadlock or serialization error reached the user" sh -c "! grep -qiE 'deadlock|could not serialize|failed after' pa.err pb.err"
eq "no duplicate active key" 0 "$(q "SELECT count(*) FROM (SELECT 1 FROM payment_callback WHERE deleted_at IS NULL GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1) d")"
expect_table "concurrent imports: the expected state of both files" ab.exp.csv
eq "figures: every row read once, in both reports" 60002 "$(python3 -c 'import json; print(sum(json.load(open(f))["totals"]["rows_read"] for f in ("pa.json", "pb.json")))')"

# The same two files loaded one after the other, in both orders.
for order in "a b" "b a"; do
    init_db cc_seq_${order// /}
    for f in $order; do
        run import -d "$DB" --chunk-rows 2500 $f.csv
        eq "sequential ($order): $f.csv exit 0" 0 $RC
    done
    expect_table "sequential ($order): the same expected state" ab.exp.csv
done

finish
