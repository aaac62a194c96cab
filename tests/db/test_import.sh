#!/usr/bin/env bash
# `idemload import` against a real PostgreSQL: every merge rule, the count
# identity, no-op re-imports, dry run, refused rows, missing index, and
# concurrent loads.
. "$(dirname "$0")/../lib.sh"
new_db imp
H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
counts() { json "$1" '" ".join(str(r["totals"][k]) for k in ("inserted","updated","unchanged","stale","existing"))'; }
identity() { jtrue "$1" 'all(f["rows_read"] == f["rows_rejected"] + f["rows_deduplicated"] + f["inserted"] + f["updated"] + f["unchanged"] + f["stale"] + f["existing"] for f in r["files"] + [r["totals"]])'; }

# --- table checks before init
echo "$H" >empty.csv
run import -d "$DB" empty.csv; eq "import into a missing table: exit 2" 2 $RC
check "missing table: says to run init" contains "$ERR" "idemload init"
run init -d "$DB"; eq "init exit 0" 0 $RC
run init -d "$DB"; eq "init again exit 0" 0 $RC
eq "init made the partial unique index" 1 "$(q "SELECT count(*) FROM pg_indexes WHERE tablename='payment_callback' AND indexdef LIKE '%UNIQUE%deleted_at IS NULL%'")"

# --- purpose-made rows
cat >a.csv <<CSV
$H
1,wechat,K1,pay,1,"{""amount"":168.90}",2026-11-28T10:00:00+08:00
1,wechat,K2,pay,1,"{""v"":2}",2026-11-28T10:00:00Z
1,wechat,K3,pay,1,"{""v"":3}",2026-11-28T10:00:00Z
1,wechat,K4,pay,1,"{""v"":4}",2026-11-28T10:00:00Z
1,wechat,K5,pay,2,"{""v"":5}",2026-11-28T10:00:00Z
1,wechat,K7,pay,1,"{""v"":7}",2026-11-28T10:00:00Z
CSV
run import -d "$DB" --report r1.json a.csv
eq "first load exit 0" 0 $RC
eq "first load: all inserted" "6 0 0 0 0" "$(counts r1.json)"
check "count identity (first load)" identity r1.json
eq "payload kept as written (168.90)" '{"amount": 168.90}' "$(q "SELECT payload FROM payment_callback WHERE out_trade_no='K1'")"
eq "received_at honours the offset" "2026-11-28 02:00:00+00" "$(q "SET timezone=UTC; SELECT received_at FROM payment_callback WHERE out_trade_no='K1'" | tail -n1)"

q "UPDATE payment_callback SET deleted_at = now() WHERE out_trade_no = 'K7'"
cat >b.csv <<CSV
$H
1,wechat,K1,pay,2,"{""amount"":168.90,""state"":""SUCCESS""}",2026-11-28T03:00:00Z
1,wechat,K2,pay,3,"{""v"":""old""}",2026-11-28T09:00:00Z
1,wechat,K3,pay,1,"{""v"":3}",2026-11-28T10:00:00Z
1,wechat,K4,pay,1,"{""v"":""tie""}",2026-11-28T10:00:00Z
1,wechat,K5,pay,1,"{""v"":""five""}",2026-11-28T11:00:00Z
1,wechat,K6,pay,0,"{""v"":6}",2026-11-28T10:00:00Z
1,wechat,K7,pay,1,"{""v"":""seven""}",2026-11-28T10:00:00Z
CSV
# Row versions before the load: an update or a delete leaves its mark on
# xmin and ctid (statistics would only be flushed later).
q "CREATE TABLE ver_before AS SELECT id, out_trade_no, xmin::text AS x, ctid::text AS c FROM payment_callback"
xmin_k3=$(q "SELECT xmin FROM payment_callback WHERE out_trade_no='K3'")
run import -d "$DB" --report r2.json b.csv
eq "second load exit 0" 0 $RC
# K1 newer -> updated; K2 older -> stale; K3 same -> unchanged; K4 tie with
# another payload -> updated; K5 newer but final -> updated keeping status 2;
# K6 new -> inserted; K7 only soft-deleted -> inserted (never conflicts).
eq "second load figures" "2 3 1 1 0" "$(counts r2.json)"
check "count identity (second load)" identity r2.json
eq "K1 updated to the newer version" '2|{"state": "SUCCESS", "amount": 168.90}' "$(q "SELECT status, payload FROM payment_callback WHERE out_trade_no='K1'")"
eq "K2 stale: newer row kept" '1|{"v": 2}' "$(q "SELECT status, payload FROM payment_callback WHERE out_trade_no='K2'")"
eq "K3 unchanged: no new row version" "$xmin_k3" "$(q "SELECT xmin FROM payment_callback WHERE out_trade_no='K3'")"
eq "K4 tie: incoming wins" '{"v": "tie"}' "$(q "SELECT payload FROM payment_callback WHERE out_trade_no='K4'")"
eq "K5 final status kept, payload updated" '2|{"v": "five"}' "$(q "SELECT status, payload FROM payment_callback WHERE out_trade_no='K5'")"
eq "K7: soft-deleted row untouched, new active row" "1|1" "$(q "SELECT count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM payment_callback WHERE out_trade_no='K7'")"
eq "soft-deleted K7 kept its old payload" '{"v": 7}' "$(q "SELECT payload FROM payment_callback WHERE out_trade_no='K7' AND deleted_at IS NOT NULL")"
eq "exactly 3 rows rewritten (K1, K4, K5), none deleted" "K1 K4 K5|0" \
    "$(q "SELECT string_agg(b.out_trade_no, ' ' ORDER BY b.out_trade_no) FILTER (WHERE p.id IS NOT NULL AND (p.xmin::text, p.ctid::text) IS DISTINCT FROM (b.x, b.c)) || '|' || count(*) FILTER (WHERE p.id IS NULL) FROM ver_before b LEFT JOIN payment_callback p USING (id)")"
eq "exactly 2 rows added (K6, K7)" "K6 K7" "$(q "SELECT string_agg(out_trade_no, ' ' ORDER BY out_trade_no) FROM payment_callback p WHERE NOT EXISTS (SELECT 1 FROM ver_before b WHERE b.id = p.id)")"
q "DROP TABLE ver_before"

# --final-status list: 3 is final too
cat >c.csv <<CSV
$H
1,wechat,K2,pay,3,"{""v"":""c""}",2026-11-29T00:00:00Z
CSV
run import -d "$DB" c.csv; eq "c.csv: exit 0" 0 $RC; eq "K2 -> status 3" 3 "$(q "SELECT status FROM payment_callback WHERE out_trade_no='K2' AND deleted_at IS NULL")"
cat >d.csv <<CSV
$H
1,wechat,K2,pay,1,"{""v"":""d""}",2026-11-29T01:00:00Z
CSV
run import -d "$DB" --final-status 2,3 d.csv
eq "--final-status 2,3: exit 0" 0 $RC
eq "--final-status 2,3 keeps status 3" '3|{"v": "d"}' "$(q "SELECT status, payload FROM payment_callback WHERE out_trade_no='K2' AND deleted_at IS NULL")"

# --on-conflict nothing: first write wins
cat >e.csv <<CSV
$H
1,wechat,K1,pay,0,"{""v"":""e""}",2026-12-01T00:00:00Z
1,wechat,K8,pay,0,"{""v"":8}",2026-12-01T00:00:00Z
CSV
run import -d "$DB" --on-conflict nothing --report r3.json e.csv
eq "--on-conflict nothing: exit 0" 0 $RC
eq "--on-conflict nothing figures" "1 0 0 0 1" "$(counts r3.json)"
eq "--on-conflict nothing leaves K1" 2 "$(q "SELECT status FROM payment_callback WHERE out_trade_no='K1' AND deleted_at IS NULL")"
eq "one active row per key" 0 "$(q "SELECT count(*) FROM (SELECT 1 FROM payment_callback WHERE deleted_at IS NULL GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1) d")"

# --- re-import of a big generated file writes nothing
init_db imp2
# (Exact duplicates, no ties: a re-import writes nothing only when no two
# versions of a key claim one instant, since the later row wins a tie.)
$GEN --rows 20000 --seed 11 --format csv --bad-rate 0.01 --dup-rate 0.3 --exact-dup-rate 0.2 --expected exp.csv --out g.csv.gz --quiet
run import -d "$DB" --chunk-rows 3000 --rejects rj.ndjson --report g1.json g.csv.gz
eq "generated load exit 1 (bad rows)" 1 $RC
check "count identity (generated)" identity g1.json
eq "rejects file lines = rows_rejected" "$(json g1.json 'r["totals"]["rows_rejected"]')" "$(wc -l <rj.ndjson)"
expect_table "table holds the newest version of every key, payload included (generator's expectation)" exp.csv
# wsnap: every row with its id, xmin and ctid: any write changes it.
wsnap() { q "SELECT count(*) || ':' || md5(string_agg(concat_ws('|', id, xmin, ctid, p::text), ',' ORDER BY id)) FROM payment_callback p"; }
before=$(wsnap)
run import -d "$DB" --force --chunk-rows 3000 --rejects rj.ndjson --report g2.json g.csv.gz
eq "re-import: exit 1 (the same bad rows)" 1 $RC
eq "re-import: nothing inserted or updated" "0 0" "$(json g2.json '"%d %d" % (r["totals"]["inserted"], r["totals"]["updated"])')"
eq "re-import: no row written (ids, xmin, ctid, every column)" "$before" "$(wsnap)"
eq "re-import: unchanged + stale = every row merged" "$(json g2.json '(t := r["totals"]) and t["rows_read"] - t["rows_rejected"] - t["rows_deduplicated"]')" "$(json g2.json '(t := r["totals"]) and t["unchanged"] + t["stale"]')"
check "count identity (re-import)" identity g2.json

# --- dry run: same figures as the real run, nothing changed anywhere
$GEN --rows 8000 --seed 12 --format ndjson --out h.ndjson.gz
# What a write would change and autovacuum would not (reltuples it does):
# each relation's storage, and every row version of the table.
checksum() { q "SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM (SELECT c.relname, c.relfilenode FROM pg_class c JOIN pg_namespace n ON n.oid=c.relnamespace WHERE n.nspname='public') t"; q "SELECT md5(string_agg(ctid::text || xmin::text || p::text, ',' ORDER BY id)) FROM payment_callback p"; q "SELECT count(*) FROM pg_tables WHERE schemaname='public'"; }
before=$(checksum)
run import -d "$DB" --dry-run --chunk-rows 1000 --report dry.json h.ndjson.gz g.csv.gz
eq "dry run exit 0 (g is skipped: the ledger holds it)" 0 $RC
eq "dry run changes nothing" "$before" "$(checksum)"
check "dry run report says dry_run" jtrue dry.json 'r["dry_run"] is True'
run import -d "$DB" --chunk-rows 1000 --report real.json h.ndjson.gz
eq "dry run figures equal the real run (new file)" "$(json dry.json 'r["files"][0]')" "$(json real.json 'r["files"][0]')"
run import -d "$DB" --dry-run --chunk-rows 1000 --report dry2.json h.ndjson.gz
eq "dry run of a loaded file: skipped as the real run would" skipped "$(json dry2.json 'r["files"][0]["status"]')"

# --- a row PostgreSQL refuses does not fail its chunk
long=$(python3 -c 'import random,string; random.seed(1); print("".join(random.choice(string.ascii_letters) for _ in range(9000)))')
{ echo "$H"; for i in $(seq 1 50); do echo "2,wechat,R$i,pay,1,\"{}\",2026-11-28T10:00:00Z"; done
  echo "2,wechat,$long,pay,1,\"{}\",2026-11-28T10:00:00Z"
  for i in $(seq 51 100); do echo "2,wechat,R$i,pay,1,\"{}\",2026-11-28T10:00:00Z"; done; } >refuse.csv
run import -d "$DB" --rejects rj_refuse.ndjson --report rf.json refuse.csv
eq "refused row: exit 1" 1 $RC
eq "the 100 other rows load" 100 "$(q "SELECT count(*) FROM payment_callback WHERE tenant_id=2")"
eq "refused row counted as rejected" 1 "$(json rf.json 'r["totals"]["rows_rejected"]')"
check "count identity (refused row)" identity rf.json
check "reject names the line and the server's message" python3 -c '
import json
r=json.loads(open("rj_refuse.ndjson").readline())
assert r["line"]==52 and "PostgreSQL" in r["reason"] and "index row" in r["reason"], r["reason"]'

# --- a CHECK constraint refuses one row: only that row is rejected
q "ALTER TABLE payment_callback ADD CONSTRAINT status_small CHECK (status < 9)"
{ echo "$H"; echo '3,wechat,C1,pay,1,"{}",2026-11-28T10:00:00Z'; echo '3,wechat,C2,pay,9,"{}",2026-11-28T10:00:00Z'; echo '3,wechat,C3,pay,1,"{}",2026-11-28T10:00:00Z'; } >check.csv
run import -d "$DB" --rejects rj_check.ndjson check.csv
eq "CHECK violation: exit 1" 1 $RC
eq "CHECK violation: the other rows load" "C1 C3" "$(q "SELECT string_agg(out_trade_no, ' ' ORDER BY out_trade_no) FROM payment_callback WHERE tenant_id=3")"
check "CHECK violation: rejected with the constraint's name" grep -q 'status_small' rj_check.ndjson
# --- no privilege: every row would fail alike; that is an error, not rejects
q "DROP ROLE IF EXISTS idem_ro; CREATE ROLE idem_ro LOGIN; GRANT SELECT ON payment_callback TO idem_ro"
run import -d "dbname=$PGDATABASE user=idem_ro" --rejects rj_priv.ndjson --force check.csv
eq "no INSERT privilege: exit 4" 4 $RC
check "no INSERT privilege: the message says so" grep -qi "permission denied" "$ERR"
check "no INSERT privilege: no row sent to the rejects file" test ! -e rj_priv.ndjson
check "no INSERT privilege: the GRANT that fixes it" contains "$ERR" 'GRANT INSERT (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) ON "public"."payment_callback" TO idem_ro'
# INSERT but not UPDATE: new keys would append, the first merge would stop
# the load half done; the role is checked before any row is read.
new_db imp_priv; run init -d "$DB"
q "DROP ROLE IF EXISTS idem_ins; CREATE ROLE idem_ins LOGIN; GRANT SELECT, INSERT ON payment_callback TO idem_ins; GRANT USAGE ON SEQUENCE payment_callback_id_seq TO idem_ins; GRANT CREATE ON SCHEMA public TO idem_ins"
$GEN --rows 3000 --seed 9 --format csv --out priv.csv --quiet
run import -d "dbname=$PGDATABASE user=idem_ins" --chunk-rows 500 --rejects rj_priv.ndjson priv.csv
eq "no UPDATE privilege: exit 4" 4 $RC
check "no UPDATE privilege: names what is missing, and the GRANT" \
    contains "$ERR" 'lacks UPDATE (payload, received_at, status); GRANT UPDATE (payload, received_at, status) ON "public"."payment_callback" TO idem_ins'
check "no UPDATE privilege: says --on-conflict nothing needs none" contains "$ERR" "or --on-conflict nothing"
eq "no UPDATE privilege: nothing loaded (not the first chunks)" 0 "$(q "SELECT count(*) FROM payment_callback")"
run import -d "dbname=$PGDATABASE user=idem_ins" --dry-run --chunk-rows 500 --rejects rj_priv.ndjson priv.csv
check "no UPDATE privilege: a dry run merges into a copy instead (exit 0 or 1)" test $RC -le 1
check "no UPDATE privilege: the dry run says so" contains "$ERR" "this dry run merges into a temporary copy"
eq "no UPDATE privilege: the dry run wrote nothing" 0 "$(q "SELECT count(*) FROM payment_callback")"
run import -d "dbname=$PGDATABASE user=idem_ins" --on-conflict nothing --chunk-rows 500 --rejects rj_priv.ndjson priv.csv
check "no UPDATE privilege: --on-conflict nothing loads (exit 0 or 1)" test $RC -le 1
q "GRANT UPDATE (payload, received_at, status) ON payment_callback TO idem_ins; REVOKE TEMP ON DATABASE $PGDATABASE FROM PUBLIC"
run import -d "dbname=$PGDATABASE user=idem_ins" --force --chunk-rows 500 --rejects rj_priv.ndjson priv.csv
eq "column UPDATE granted, no TEMP: exit 4" 4 $RC
check "no TEMP: named, with its GRANT" contains "$ERR" "TEMP on the database (for the staging table); GRANT TEMP ON DATABASE $PGDATABASE TO idem_ins"
q "GRANT TEMP ON DATABASE $PGDATABASE TO idem_ins"
run import -d "dbname=$PGDATABASE user=idem_ins" --force --chunk-rows 500 --rejects rj_priv.ndjson priv.csv
check "column UPDATE and TEMP granted: loads (exit 0 or 1)" test $RC -le 1
# The ledger: a role that may not create it (PostgreSQL 15 grants no CREATE
# on public) is told how; once it exists, the GRANTs on it.
new_db imp_ledger; run init -d "$DB"
q "DROP ROLE IF EXISTS idem_noddl; CREATE ROLE idem_noddl LOGIN; GRANT SELECT, INSERT, UPDATE ON payment_callback TO idem_noddl; GRANT USAGE ON SEQUENCE payment_callback_id_seq TO idem_noddl; REVOKE CREATE ON SCHEMA public FROM PUBLIC"
run import -d "dbname=$PGDATABASE user=idem_noddl" --chunk-rows 500 --rejects rj_priv.ndjson priv.csv
eq "no CREATE on the schema, no ledger yet: exit 4" 4 $RC
check "no CREATE on the schema: says how to get the ledger created" contains "$ERR" "the loading role needs CREATE on the schema once"
eq "no CREATE on the schema: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback")"
run import -d "$DB" --rejects rj_priv.ndjson check.csv   # the owner's import creates the ledger
run import -d "dbname=$PGDATABASE user=idem_noddl" --chunk-rows 500 --rejects rj_priv.ndjson priv.csv
eq "no privilege on the ledger: exit 4" 4 $RC
check "no privilege on the ledger: the GRANT" contains "$ERR" 'GRANT SELECT, INSERT, UPDATE, DELETE ON "public".idemload_ledger, "public".idemload_ledger_chunk TO it'
q "GRANT SELECT, INSERT, UPDATE, DELETE ON idemload_ledger, idemload_ledger_chunk TO idem_noddl"
run import -d "dbname=$PGDATABASE user=idem_noddl" --chunk-rows 500 --rejects rj_priv.ndjson priv.csv
check "ledger granted: loads (exit 0 or 1)" test $RC -le 1

# --- a view (or the like) is not a table: said so, exit 2
q "CREATE VIEW pc_view AS SELECT * FROM payment_callback; CREATE MATERIALIZED VIEW pc_mv AS SELECT * FROM payment_callback" >/dev/null
for rel in pc_view:view pc_mv:"materialized view"; do
    run import -d "$DB" --table "${rel%%:*}" --rejects rj_view.ndjson check.csv
    eq "--table ${rel%%:*}: exit 2" 2 $RC
    check "--table ${rel%%:*}: says it is a ${rel#*:}, not a table" contains "$ERR" "${rel%%:*} is a ${rel#*:}, not a table"
    run check -d "$DB" --table "${rel%%:*}"
    eq "check --table ${rel%%:*}: exit 2" 2 $RC
done
# --- no usable index: exit 2 with the fix
new_db imp3
q "CREATE TABLE payment_callback (id bigserial primary key, tenant_id bigint not null, channel text not null, out_trade_no text not null, callback_type text not null, status smallint not null default 0, payload jsonb not null, received_at timestamptz not null default now(), handled_at timestamptz, deleted_at timestamptz)"
run import -d "$DB" a.csv; eq "no unique index: exit 2" 2 $RC
check "hint gives CREATE UNIQUE INDEX" contains "$ERR" "CREATE UNIQUE INDEX"
eq "nothing loaded without the index" 0 "$(q "SELECT count(*) FROM payment_callback")"
q "CREATE UNIQUE INDEX wrong ON payment_callback (tenant_id, channel, out_trade_no)"
run import -d "$DB" a.csv; eq "index on other columns: exit 2" 2 $RC
q "CREATE UNIQUE INDEX full_idx ON payment_callback (tenant_id, channel, out_trade_no, callback_type)"
run import -d "$DB" a.csv; eq "full index while the table soft-deletes: exit 2" 2 $RC
q "CREATE UNIQUE INDEX ok_idx ON payment_callback (callback_type, out_trade_no, channel, tenant_id) WHERE deleted_at IS NULL"
run import -d "$DB" a.csv; eq "partial index in any column order works" 0 $RC
q "CREATE SCHEMA pay; CREATE TABLE pay.cb (LIKE payment_callback INCLUDING ALL)"
run import -d "$DB" --table pay.cb a.csv; eq "--table schema.name" 0 $RC
eq "--table loaded the other table" 6 "$(q "SELECT count(*) FROM pay.cb")"

# --- connection problems; the password never shows
run import -d "postgresql://idem:S3cretPw@127.0.0.1:1/nodb" a.csv
eq "unreachable server: exit 4" 4 $RC
check "password not in the message" sh -c "! grep -q S3cretPw '$ERR'"

# --- concurrent loads of overlapping files equal a sequential load
init_db conc_seq; SEQ=$DB
for i in 1 2 3 4; do
    $GEN --rows 6000 --seed $((40 + i)) --tenants 3 --dup-rate 0.3 --exact-dup-rate 0.2 --format csv --out p$i.csv --expected p$i.exp.csv --quiet
done
# What any order of the four loads must give: each file's added rows are
# copies of rows of another file, never newer than that file's winners, and
# (no --ties) no two versions of a key claim one instant, so they are stale
# or unchanged wherever they arrive.
$EXPECTED_MERGE p.exp.csv p1.exp.csv p2.exp.csv p3.exp.csv p4.exp.csv 2>p.exp.json
check "the four files have no key two of them claim at one instant with different versions" jtrue p.exp.json 'r["order_dependent"] == 0' 
# Make them overlap: every file holds part of the others' keys.
python3 - <<'PY'
import csv
files = ["p1.csv", "p2.csv", "p3.csv", "p4.csv"]
rows = {f: list(csv.reader(open(f))) for f in files}
for i, f in enumerate(files):
    other = rows[files[(i + 1) % 4]]
    mixed = rows[f] + other[1:3000]
    with open(f, "w", newline="") as out:
        csv.writer(out).writerows(mixed)
PY
for i in 1 2 3 4; do
    run import -q -d "$SEQ" --chunk-rows 500 p$i.csv
    eq "sequential reference load of p$i.csv: exit 0" 0 $RC
done
expect_table "sequential loads: the merged expected state of the four files" p.exp.csv
init_db conc_par
pids=""
gate_close 2626
for i in 1 2 3 4; do PGAPPNAME=par$i "$IDEMLOAD" import -d "$DB" --chunk-rows 500 p$i.csv >/dev/null 2>par$i.err & pids="$pids $!"; done
# shellcheck disable=SC2086
gate_wait 2626 "par1 par2 par3 par4" $pids
gate_open 2626
rcs=""; for p in $pids; do wait $p; rcs="$rcs $?"; done
gate_drop 2626
eq "concurrent loads all succeed" " 0 0 0 0" "$rcs"
check "no deadlock error reached the user" sh -c "! grep -qi deadlock par*.err"
eq "no duplicate active key" 0 "$(q "SELECT count(*) FROM (SELECT 1 FROM payment_callback WHERE deleted_at IS NULL GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1) d")"
snap() { qd "$1" "SELECT md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, received_at), ',' ORDER BY tenant_id, channel, out_trade_no, callback_type)) FROM payment_callback WHERE deleted_at IS NULL"; }
eq "concurrent result equals the sequential load" "$(snap "$SEQ")" "$(snap "$DB")"
expect_table "concurrent loads: the merged expected state of the four files" p.exp.csv

# --- an interrupted load keeps whole chunks only
init_db intr
$GEN --rows 200000 --seed 21 --dup-rate 0 --format csv --out big.csv 2>/dev/null
"$IDEMLOAD" import -d "$DB" --chunk-rows 1000 --report intr.json big.csv >/dev/null 2>intr.err &
pid=$!
# Interrupt once some chunks are in: the test fails (rather than proving
# nothing) if the load ends before, or commits nothing, or everything.
for _ in $(seq 1 1200); do
    n=$(q "SELECT count(*) FROM payment_callback"); [ "$n" -gt 5000 ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
done
check "SIGINT: sent while the load runs" kill -INT $pid
wait $pid; rc=$?
eq "SIGINT: exit 130" 130 $rc
n=$(q "SELECT count(*) FROM payment_callback")
check "SIGINT landed mid-load: some but not all of 200000 rows committed ($n)" test "$n" -gt 0 -a "$n" -lt 200000
check "only whole chunks committed ($n rows)" test $((n % 1000)) -eq 0
eq "SIGINT: the file is partial in the report" partial "$(json intr.json 'r["files"][0]["status"]')"
check "interrupted run still prints the summary" contains intr.err "summary"
eq "report counts match the table" "$n" "$(json intr.json 'r["totals"]["inserted"]')"

# --- the samples give the figures samples/README.md works out by hand
init_db samples
S=$SRC/samples
fig() { rm -f s.json; run import -d "$DB" --rejects rj_s.ndjson --report s.json "$@"; counts s.json | cut -d' ' -f1-4; }
eq "samples: wechat csv.gz" "18 0 0 0" "$(fig "$S/statements-wechat-2026-11-28.csv.gz")"
eq "samples: alipay ndjson" "14 0 0 0" "$(fig "$S/statements-alipay-2026-11-28.ndjson")"
eq "samples: mixed ndjson.gz (inserted updated unchanged stale)" "9 4 4 3" "$(fig "$S/statements-mixed-2026-11-29.ndjson.gz")"
eq "samples: unionpay with --set channel" "14 2 0 0" "$(fig --set channel=unionpay "$S/statements-unionpay-nochannel-2026-11-29.csv")"
eq "samples: 55 active rows" 55 "$(q "SELECT count(*) FROM payment_callback WHERE deleted_at IS NULL")"
eq "samples: the 30-digit integer arrives whole" 1 "$(q "SELECT count(*) FROM payment_callback WHERE payload::text LIKE '%123456789012345678901234567890%'")"

# --- a file read through a pipe (process substitution): every row loaded,
# the file not hashed first (the digest consumed the pipe: 0 rows, exit 0)
init_db piped
run import -d "$DB" --format csv --rejects rj_p.ndjson --report p.json <(zcat "$S/statements-wechat-2026-11-28.csv.gz")
eq "import <(zcat FILE.csv.gz): exit 1, as the file itself (the sample has a rejected row)" 1 "$RC"
eq "import <(zcat FILE.csv.gz): every row loaded, as from the file" "18 0 0 0" "$(counts p.json | cut -d' ' -f1-4)"
check "import <(zcat FILE.csv.gz): the ledger cannot know a stream, and says so" contains "$ERR" "read from a stream"
run import -d "$DB" --profile paypal-stl --set tenant_id=1 --rejects rj_p.ndjson <(cat "$SRC/samples/bill-paypal-stl-2024-08-20.csv")
eq "a profile that counts in a first pass, from a pipe: exit 2" 2 "$RC"
check "it says a stream is read only once" contains "$ERR" "can be read only once"

finish
