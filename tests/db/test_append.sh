#!/usr/bin/env bash
# The append (src/load/lane.h): rows whose key no earlier chunk of the run
# carried are COPYed straight into the target, not staged and merged.  It
# must never change the table, the figures or the rejects: the same file
# loaded where the append is off (a --set column turns it off) must give
# the same.  A key the table has after all (an earlier run, another
# process) is found by the append's probe and merged instead, so no COPY
# meets it (no aborted COPY, no dead tuples: test_nothing_written.sh); a row
# the server refuses is found and rejected alone; triggers fire as for the
# merge's INSERT; tables where COPY would not do what INSERT does (rules,
# row-level security, other column types) and dry runs never append.
# What ran is read from the server's log (log_statement = all, own sessions).
. "$(dirname "$0")/../lib.sh"
pg_use
export PGOPTIONS='-c log_statement=all'
# appends: how many append statements were sent since log_mark.
# (The statement as sent, not again as the STATEMENT of its error.)
appends() { log_since | grep -c 'LOG:  statement: COPY "public"."payment_callback" (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) FROM STDIN'; }
# conflicts: how many statements failed on the unique index since log_mark.
conflicts() { log_since | grep -c 'duplicate key value violates unique constraint'; }
figures() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_rejected","rows_deduplicated","inserted","updated","unchanged","stale","existing","chunks"))'; }
snap() {
    q "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, (extract(epoch from received_at)*1000000)::bigint), ',' ORDER BY tenant_id, channel COLLATE \"C\", out_trade_no COLLATE \"C\", callback_type COLLATE \"C\")), '-') FROM payment_callback WHERE deleted_at IS NULL"
}
dups() { q "SELECT count(*) FROM (SELECT 1 FROM payment_callback WHERE deleted_at IS NULL GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1) d"; }
# no_append_db NAME: a table where the append is off: a column only --set fills.
no_append_db() { init_db "$1"; q "ALTER TABLE payment_callback ADD COLUMN note text" >/dev/null; }

# Repeated keys across chunks, older versions later, equal instants, exact
# repeats and bad rows; a second file over the same keys and more.
$GEN --rows 30000 --seed 71 --dup-rate 0.3 --out-of-order 0.3 --ties 0.2 --exact-dup-rate 0.2 --bad-rate 0.01 --format csv --out a.csv --expected a.exp.csv --quiet
$GEN --rows 20000 --seed 71 --dup-rate 0.4 --out-of-order 0.4 --format ndjson --out b.ndjson --expected b.exp.csv --quiet
check "the files were generated" test -s a.csv -a -s b.ndjson
$EXPECTED_MERGE ab.exp.csv a.exp.csv b.exp.csv 2>ab.counts
check "the expected state of a then b was worked out" test -s ab.exp.csv
check "the model: b updates keys of a and turns older versions away ($(cat ab.counts))" \
    jtrue ab.counts 'r["updated"] > 100 and r["stale"] > 100'

# =====================================================================
# 1. A first load appends, and ends as the merge alone would
# =====================================================================
for j in 1 2; do
    init_db ap_on_$j
    log_mark
    run import -d "$DB" -j $j --chunk-rows 2000 --report on$j.a.json --rejects on$j.a.rej a.csv
    eq "-j $j: first load exit 1 (bad rows rejected)" 1 $RC
    check "-j $j: the first load appended (statements: $(appends))" [ "$(appends)" -ge 15 ]
    expect_table "-j $j: first load: the generator's expected state" a.exp.csv
    eq "-j $j: no duplicate active key" 0 "$(dups)"
    SNAP_A=$(snap)
    log_mark
    run import -d "$DB" -j $j --chunk-rows 1500 --report on$j.b.json b.ndjson
    eq "-j $j: second file exit 0" 0 $RC
    eq "-j $j: the second file's appends never met a key of the first (the probe sent those to the merge)" 0 "$(conflicts)"
    check "-j $j: and still appended its new keys (statements: $(appends))" [ "$(appends)" -ge 1 ]
    expect_table "-j $j: a then b: the merge rules' expected state" ab.exp.csv
    SNAP_AB=$(snap)

    no_append_db ap_off_$j
    log_mark
    run import -d "$DB" -j $j --chunk-rows 2000 --set note=x --report off$j.a.json --rejects off$j.a.rej a.csv
    eq "-j $j: without the append: exit 1" 1 $RC
    eq "-j $j: a --set column turns the append off" 0 "$(appends)"
    eq "-j $j: the same table as with the append" "$SNAP_A" "$(snap)"
    eq "-j $j: the same figures as with the append" "$(figures off$j.a.json)" "$(figures on$j.a.json)"
    check "-j $j: the same rejects as with the append" cmp -s on$j.a.rej off$j.a.rej
    run import -d "$DB" -j $j --chunk-rows 1500 --set note=x --report off$j.b.json b.ndjson
    eq "-j $j: second file without the append: the same table" "$SNAP_AB" "$(snap)"
    eq "-j $j: second file: the same figures" "$(figures off$j.b.json)" "$(figures on$j.b.json)"
done
check "the first load inserted what it appended (inserted > 0)" jtrue on2.a.json 'r["totals"]["inserted"] > 10000'
check "the second file updated and turned older versions away" jtrue on2.b.json 'r["totals"]["updated"] > 0 and r["totals"]["stale"] > 0'

# The report's groups count appended rows as inserted, as the merge does.
grp() { json "$1" '" ".join("%s/%s/%s:%s+%s+%s+%s" % (g["tenant_id"], g["channel"], g["callback_kind"], g["inserted"], g["updated"], g["unchanged"], g["stale"]) for g in r["groups"])'; }
eq "the groups' figures match with and without the append" "$(grp off2.a.json)" "$(grp on2.a.json)"
eq "and for the second file" "$(grp off2.b.json)" "$(grp on2.b.json)"

# --on-conflict nothing: appended rows are inserted, the others existing.
init_db ap_nothing_on
run import -d "$DB" -j 2 --chunk-rows 2000 --on-conflict nothing --report nothing_on.json a.csv
eq "--on-conflict nothing: exit 1" 1 $RC
SNAP_N=$(snap)
no_append_db ap_nothing_off
run import -d "$DB" -j 2 --chunk-rows 2000 --on-conflict nothing --set note=x --report nothing_off.json a.csv
eq "--on-conflict nothing: the same table with and without the append" "$SNAP_N" "$(snap)"
eq "--on-conflict nothing: the same figures" "$(figures nothing_off.json)" "$(figures nothing_on.json)"
check "--on-conflict nothing: later versions of a key were kept out (existing > 0)" jtrue nothing_on.json 'r["totals"]["existing"] > 0'

# =====================================================================
# 2. Every key already there: the appends stop trying
# =====================================================================
# (No equal instants: with those a re-import rewrites rows, as SPEC.md's
# rule for a same-instant version says.)
$GEN --rows 8000 --seed 72 --dup-rate 0.3 --out-of-order 0.3 --format csv --out c.csv --expected c.exp.csv --quiet
init_db ap_again
run import -d "$DB" -j 1 --chunk-rows 500 c.csv
log_mark
run import -d "$DB" -j 1 --chunk-rows 500 --force --report again.json c.csv
eq "a re-import: exit 0" 0 $RC
eq "a re-import writes nothing" "0 0" "$(json again.json '"%d %d" % (r["totals"]["inserted"], r["totals"]["updated"])')"
n=$(json again.json 'r["totals"]["chunks"]')
# The append's probe finds every key present, so no COPY goes out, and it
# backs off: only a few of the chunks are probed at all.
probes() { log_since | grep 'LOG:  ' | grep -c 'SELECT array_agg(k.k_ord ORDER BY k.k_ord)'; }
eq "a re-import appends nothing (the probe finds every key)" 0 "$(appends)"
check "a re-import of $n chunks probes only a few times ($(probes))" between "$(probes)" 1 6
expect_table "a re-import: the table unchanged" c.exp.csv

# =====================================================================
# 3. A row the server refuses inside an append: rejected alone
# =====================================================================
hdr="tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"
{
    echo "$hdr"
    for i in $(seq -w 0 29); do
        v=ok; [ "$i" = 17 ] && v=bad
        echo "7,alipay,R$i,pay,1,\"{\"\"v\"\":\"\"$v\"\"}\",2026-11-28T09:00:00Z"
    done
} >refused.csv
init_db ap_refused
q "ALTER TABLE payment_callback ADD CONSTRAINT no_bad CHECK (payload->>'v' <> 'bad')" >/dev/null
log_mark
run import -d "$DB" -j 1 --rejects refused.rej --report refused.json refused.csv
eq "a refused row: exit 1" 1 $RC
check "the append was tried" [ "$(appends)" -ge 1 ]
eq "the others are loaded" 29 "$(q "SELECT count(*) FROM payment_callback")"
eq "the refused row is not" 0 "$(q "SELECT count(*) FROM payment_callback WHERE out_trade_no = 'R17'")"
eq "one reject, line 19, naming the constraint" "1 19 True" "$(python3 -c "
import json; rs=[json.loads(l) for l in open('refused.rej')]
print(len(rs), rs[0]['line'], 'no_bad' in rs[0]['reason'])")"
eq "figures: 29 inserted, 1 rejected" "29 1" "$(json refused.json '"%d %d" % (r["totals"]["inserted"], r["totals"]["rows_rejected"])')"

# =====================================================================
# 4. Triggers fire on appended rows as on merged ones
# =====================================================================
trigger_sql="ALTER TABLE payment_callback ADD COLUMN src text;
   CREATE TABLE fired (n bigint);
   INSERT INTO fired VALUES (0);
   CREATE FUNCTION mark() RETURNS trigger LANGUAGE plpgsql AS \$\$
     BEGIN NEW.src := 'trigger'; RETURN NEW; END \$\$;
   CREATE FUNCTION tally() RETURNS trigger LANGUAGE plpgsql AS \$\$
     BEGIN UPDATE fired SET n = n + 1; RETURN NULL; END \$\$;
   CREATE TRIGGER mark BEFORE INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION mark();
   CREATE TRIGGER tally AFTER INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION tally()"
init_db ap_trigger
q "$trigger_sql" >/dev/null
log_mark
run import -d "$DB" -j 2 --chunk-rows 2000 --report trig.json a.csv
eq "with a trigger: exit 1" 1 $RC
check "it appended" [ "$(appends)" -ge 1 ]
eq "every row went through the trigger" 0 "$(q "SELECT count(*) FROM payment_callback WHERE src IS DISTINCT FROM 'trigger'")"
eq "the AFTER INSERT trigger ran once per row inserted (rolled-back appends undone)" \
    "$(json trig.json 'r["totals"]["inserted"]')" "$(q "SELECT n FROM fired")"
expect_table "with a trigger: the expected state" a.exp.csv

# =====================================================================
# 5. Where COPY is not INSERT, and dry runs: never an append
# =====================================================================
off_case() {
    local what=$1 sql=$2
    init_db "ap_$what"
    [ -z "$sql" ] || q "$sql" >/dev/null
    log_mark
    run import -d "$DB" -j 2 --chunk-rows 2000 a.csv
    eq "$what: exit 1" 1 $RC
    eq "$what: no append" 0 "$(appends)"
    expect_table "$what: the expected state" a.exp.csv
}
# The merge's INSERT ... ON CONFLICT refuses a table with rules (0A000),
# so such a table is refused; COPY, which ignores rules, must not load it.
init_db ap_rule
q "CREATE TABLE audit (k text);
   CREATE RULE keep AS ON INSERT TO payment_callback DO ALSO INSERT INTO audit VALUES (NEW.out_trade_no)" >/dev/null
log_mark
run import -d "$DB" -j 2 --chunk-rows 2000 a.csv
eq "rule: refused as before (exit 4)" 4 $RC
eq "rule: no append" 0 "$(appends)"
eq "rule: nothing loaded behind the rule's back" 0 "$(q "SELECT count(*) FROM payment_callback")"
off_case row_security "ALTER TABLE payment_callback ENABLE ROW LEVEL SECURITY"
off_case status_integer "ALTER TABLE payment_callback ALTER COLUMN status TYPE integer"

init_db ap_switch
log_mark
run import -d "$DB" -j 2 --chunk-rows 2000 --no-append --report switch.json a.csv
eq "--no-append: exit 1" 1 $RC
eq "--no-append: no append" 0 "$(appends)"
expect_table "--no-append: the expected state" a.exp.csv
eq "--no-append: the figures of the append" "$(figures on2.a.json)" "$(figures switch.json)"

init_db ap_dry
log_mark
run import -d "$DB" -j 2 --chunk-rows 2000 --dry-run --report dry.json a.csv
eq "dry run: exit 1" 1 $RC
eq "dry run: no append" 0 "$(appends)"
eq "dry run: nothing written" 0 "$(q "SELECT count(*) FROM payment_callback")"
eq "dry run: the figures of the real load" "$(figures on2.a.json)" "$(figures dry.json)"

# A COPY the server refuses for a reason not of the rows (here a trigger
# that refuses COPY, 0A000): the lane merges instead, says so once, and
# appends no more.
init_db ap_copy_refused
q "CREATE FUNCTION no_copy() RETURNS trigger LANGUAGE plpgsql AS \$\$
     BEGIN
       IF current_query() LIKE 'COPY %' THEN
         RAISE EXCEPTION 'no COPY here' USING ERRCODE = '0A000';
       END IF;
       RETURN NEW;
     END \$\$;
   CREATE TRIGGER no_copy BEFORE INSERT ON payment_callback FOR EACH ROW EXECUTE FUNCTION no_copy()" >/dev/null
log_mark
run import -d "$DB" -j 2 --chunk-rows 2000 a.csv
eq "COPY refused: exit 1 (the bad rows only)" 1 $RC
eq "COPY refused: one append per connection, then none" 2 "$(appends)"
check "COPY refused: it says so" contains "$ERR" "appending straight into the table failed: no COPY here (SQLSTATE 0A000); merging instead"
expect_table "COPY refused: the expected state" a.exp.csv

# varchar key columns carry the same binary rows as text: appended.
init_db ap_varchar
q "ALTER TABLE payment_callback ALTER COLUMN channel TYPE varchar(32), ALTER COLUMN out_trade_no TYPE varchar(64)" >/dev/null
log_mark
run import -d "$DB" -j 2 --chunk-rows 2000 a.csv
eq "varchar keys: exit 1" 1 $RC
check "varchar keys: appended" [ "$(appends)" -ge 1 ]
expect_table "varchar keys: the expected state" a.exp.csv

# =====================================================================
# 6. A partitioned target: COPY routes the rows
# =====================================================================
new_db ap_partitioned
q "CREATE TABLE payment_callback (id bigserial, tenant_id bigint NOT NULL, channel text NOT NULL, out_trade_no text NOT NULL, callback_type text NOT NULL, status smallint NOT NULL DEFAULT 0, payload jsonb NOT NULL, received_at timestamptz NOT NULL DEFAULT now(), deleted_at timestamptz) PARTITION BY HASH (tenant_id);
   CREATE TABLE pc_0 PARTITION OF payment_callback FOR VALUES WITH (MODULUS 2, REMAINDER 0);
   CREATE TABLE pc_1 PARTITION OF payment_callback FOR VALUES WITH (MODULUS 2, REMAINDER 1);
   CREATE UNIQUE INDEX uk_payment_callback_biz_active ON payment_callback (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL" >/dev/null
log_mark
run import -d "$DB" -j 2 --chunk-rows 2000 --report part.json a.csv
eq "partitioned: exit 1" 1 $RC
check "partitioned: appended" [ "$(appends)" -ge 1 ]
expect_table "partitioned: the expected state" a.exp.csv
eq "partitioned: the figures of a plain table" "$(figures on2.a.json)" "$(figures part.json)"
run import -d "$DB" -j 2 --chunk-rows 1500 b.ndjson
expect_table "partitioned: a then b" ab.exp.csv

# =====================================================================
# 7. Two importers at once over the same new keys
# =====================================================================
init_db ap_race
python3 - <<'PY'
# two files over the same 6,000 keys: c1 older versions, c2 newer ones
hdr = "tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n"
for name, hour, v in (("c1.csv", "09", "one"), ("c2.csv", "10", "two")):
    with open(name, "w") as f:
        f.write(hdr)
        for i in range(6000):
            f.write('5,wechat,C%05d,pay,1,"{""v"":""%s""}",2026-11-28T%s:00:00Z\n' % (i, v, hour))
PY
log_mark
# Both held at a gate inside their first chunk, seen there together, then
# let go at once: the race is proven, not assumed.
gate_close 2525
PGAPPNAME=race1 "$IDEMLOAD" import -d "$DB" -q -j 2 --chunk-rows 300 c1.csv 2>race1.err & p1=$!
PGAPPNAME=race2 "$IDEMLOAD" import -d "$DB" -q -j 2 --chunk-rows 300 c2.csv 2>race2.err & p2=$!
gate_wait 2525 "race1 race2" $p1 $p2
gate_open 2525
wait $p1; r1=$?
wait $p2; r2=$?
eq "two importers at once: both exit 0" "0 0" "$r1 $r2"
eq "every key once" "6000 0" "$(q "SELECT count(*) FROM payment_callback") $(dups)"
eq "every key holds the newer version" 6000 "$(q "SELECT count(*) FROM payment_callback WHERE payload->>'v' = 'two' AND received_at = '2026-11-28T10:00:00Z'")"

finish
