#!/usr/bin/env bash
# Crash safety and reruns (SPEC.md "Crash safety, reruns and concurrency",
# "Dry run", "Exit status"): the ledger skips completed files, kill -9 and a
# stopped server resume after the last committed chunk without redoing it,
# a corrupt input keeps its committed chunks and is never marked completed,
# a dry run writes no ledger, two processes never load one file twice, and
# standard input loads but cannot be skipped or resumed.
#
# The server restart tests use a server of their own (in $WORK/pg), never the
# shared fixture, since other test files use that one concurrently.
. "$(dirname "$0")/../lib.sh"
pg_use
RANDOM=20261130          # the kill points below are drawn from this seed

# ---- helpers
# snap [CONNINFO]: checksum of the active rows, ordered by the business key.
snap() {
    qd "${1:-$PGDATABASE}" "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, (extract(epoch from received_at)*1000000)::bigint), ',' ORDER BY tenant_id, channel COLLATE \"C\", out_trade_no COLLATE \"C\", callback_type COLLATE \"C\")), '-') FROM payment_callback WHERE deleted_at IS NULL"
}
# wsnap: checksum of every row with its id and xmin: any write changes it.
wsnap() {
    q "SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws('|', id, xmin, tenant_id, channel, out_trade_no, callback_type, status, payload::text, received_at, handled_at, deleted_at), ',' ORDER BY id)), '-') FROM payment_callback"
}
# ledger_dump [CONNINFO]: each chunk's figures in the ledger (summed over
# the chunk's lanes, one row per lane and connection).
ledger_dump() {
    qd "${1:-$PGDATABASE}" "SELECT concat_ws(':', digest, chunk_no, sum(rows_read), sum(rows_rejected), sum(rows_deduplicated), sum(inserted), sum(updated), sum(unchanged), sum(stale), sum(existing)) FROM idemload_ledger_chunk GROUP BY digest, chunk_no ORDER BY digest, chunk_no"
}
# ledger_all: both ledger tables, every column (dry-run checks).
ledger_all() {
    q "SELECT md5(coalesce(string_agg(l::text, ',' ORDER BY l::text), '')) FROM idemload_ledger l"
    q "SELECT md5(coalesce(string_agg(c::text, ',' ORDER BY c::text), '')) FROM idemload_ledger_chunk c"
}
# has_ledger [CONNINFO]: whether the ledger tables exist (committed).
has_ledger() { [ "$(qd "${1:-$PGDATABASE}" "SELECT to_regclass('idemload_ledger_chunk') IS NOT NULL AND to_regclass('idemload_ledger') IS NOT NULL")" = t ]; }
# nchunks [CONNINFO]: chunks committed by all their lanes (0 while the
# ledger does not exist; any other failure of psql fails the test).
nchunks() {
    has_ledger "${1:-}" || { echo 0; return 0; }
    qd "${1:-$PGDATABASE}" "SELECT count(*) FROM (SELECT 1 FROM idemload_ledger_chunk c JOIN idemload_ledger l USING (target, digest) GROUP BY c.digest, c.chunk_no, l.lanes HAVING count(*) = l.lanes) w"
}
# partial [CONNINFO]: lanes committed of chunks not committed by all lanes
# (a kill can land between two lanes' commits; the rerun completes them).
partial() {
    has_ledger "${1:-}" || { echo 0; return 0; }
    qd "${1:-$PGDATABASE}" "SELECT coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM idemload_ledger_chunk c JOIN idemload_ledger l USING (target, digest) GROUP BY c.digest, c.chunk_no, l.lanes HAVING count(*) < l.lanes) p"
}
# ledger_rows DIGEST: chunks, and whether each (chunk, lane) row is unique.
ledger_rows() { q "SELECT count(DISTINCT chunk_no) || ' ' || (count(*) = count(DISTINCT (chunk_no, lane)) AND count(*) = count(DISTINCT chunk_no) * max(l.lanes)) FROM idemload_ledger_chunk c JOIN idemload_ledger l USING (target, digest) WHERE digest = '$1'"; }
# same_ledger DESCRIPTION FILE_A FILE_B: the two ledger dumps are identical.
same_ledger() {
    if cmp -s "$2" "$3"; then ok "$1"; else
        fail "$1: $(diff "$2" "$3" | head -n 6 | tr '\n' ' ')"
    fi
}
ledger_status() { q "SELECT status || ':' || chunks FROM idemload_ledger WHERE digest = '$1'"; }
digest() { sha256sum "$1" | cut -d' ' -f1; }
totals() { json "$1" '" ".join(str(r["totals"][k]) for k in ("rows_read","rows_rejected","rows_deduplicated","inserted","updated","unchanged","stale","existing","chunks"))'; }
fstatus() { json "$1" "r['files'][${2:-0}]['status']"; }
note() { json "$1" 'r["files"][0].get("note") or ""'; }
dups() { q "SELECT count(*) FROM (SELECT 1 FROM payment_callback WHERE deleted_at IS NULL GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1) d"; }
# backends_gone: waits until no idemload session is left on the database
# (a killed client's backend may still be finishing its COMMIT).
backends_gone() {
    for _ in $(seq 1 200); do
        [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'idemload'")" -eq 0 ] && return 0
        sleep 0.05
    done
    return 1
}
msleep() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }
# wait_chunks PID N [CONNINFO]: waits until the ledger holds N chunks while
# PID runs; fails (returns 1) if PID ends first or after 120 s.
wait_chunks() {
    local i
    for i in $(seq 1 2400); do
        kill -0 "$1" 2>/dev/null || return 1
        [ "$(nchunks "${3:-}")" -ge "$2" ] && return 0
        sleep 0.05
    done
    return 1
}

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'

# =====================================================================
# 1. A completed file is skipped; a renamed copy too; --force loads again
# =====================================================================
$GEN --rows 20000 --seed 31 --dup-rate 0.2 --format csv --out s.csv --expected s.exp.csv --quiet
init_db lg_skip
run import -d "$DB" --chunk-rows 3000 --report s1.json s.csv
eq "skip: first load exit 0" 0 $RC
eq "skip: first load status ok" ok "$(fstatus s1.json)"
# The reference snapshots later checks compare with are themselves checked
# against the generator's expected state (a model, not another load).
expect_table "skip: first load: the reference is the generator's expected state" s.exp.csv
S_SNAP=$(snap); S_DB=$DB
before=$(wsnap); ledger_before=$(ledger_all)
eq "skip: ledger holds the file completed (7 chunks)" "completed:7" "$(ledger_status "$(digest s.csv)")"
run import -d "$DB" --chunk-rows 3000 --report s2.json s.csv
eq "skip: second load exit 0" 0 $RC
eq "skip: second load status skipped" skipped "$(fstatus s2.json)"
eq "skip: nothing inserted or updated" "0 0" "$(json s2.json '"%d %d" % (r["totals"]["inserted"], r["totals"]["updated"])')"
check "skip: the summary has a line saying skipped" contains "$ERR" "s.csv \[csv\] skipped"
check "skip: the summary says why (--force)" contains "$ERR" "force"
eq "skip: table unchanged (ids, xmin, every column)" "$before" "$(wsnap)"
eq "skip: ledger unchanged" "$ledger_before" "$(ledger_all)"
# Another chunk size does not matter for a completed file.
run import -d "$DB" --chunk-rows 500 --report s2b.json s.csv
eq "skip: other --chunk-rows still skipped" "0 skipped" "$RC $(fstatus s2b.json)"
cp s.csv renamed-copy.csv
run import -d "$DB" --chunk-rows 3000 --report s3.json renamed-copy.csv
eq "skip: same content under another name: exit 0" 0 $RC
eq "skip: same content under another name: skipped" skipped "$(fstatus s3.json)"
eq "skip: renamed copy wrote nothing" "$before" "$(wsnap)"
# Several files, one skipped, one new: exit 0, the new one loads.
printf '%s\n%s\n' "$H" '9,wechat,SKIPNEW,pay,1,"{""v"":1}",2026-11-28T10:00:00Z' >new1.csv
run import -d "$DB" --report s4.json s.csv new1.csv
eq "skip: skipped + new file: exit 0, statuses" "0 skipped ok" "$RC $(fstatus s4.json 0) $(fstatus s4.json 1)"
eq "skip: the new file loaded" 1 "$(q "SELECT count(*) FROM payment_callback WHERE out_trade_no='SKIPNEW'")"
q "DELETE FROM payment_callback WHERE out_trade_no='SKIPNEW'"
before=$(wsnap)
run import -d "$DB" --chunk-rows 3000 --force --report s5.json s.csv
eq "--force: exit 0" 0 $RC
eq "--force: status ok (loaded again)" ok "$(fstatus s5.json)"
eq "--force: nothing inserted/updated/existing" "0 0 0" "$(json s5.json '"%d %d %d" % (r["totals"]["inserted"], r["totals"]["updated"], r["totals"]["existing"])')"
check "--force: every merged row unchanged or stale" jtrue s5.json '(t := r["totals"]) and t["unchanged"] + t["stale"] == t["rows_read"] - t["rows_rejected"] - t["rows_deduplicated"] and t["rows_read"] == 20000 and t["unchanged"] > 0'
eq "--force: same rows read/deduplicated as the first load" "$(json s1.json '[r["totals"][k] for k in ("rows_read","rows_deduplicated","chunks")]')" "$(json s5.json '[r["totals"][k] for k in ("rows_read","rows_deduplicated","chunks")]')"
eq "--force: no row written (ids, xmin unchanged)" "$before" "$(wsnap)"
eq "--force: ledger completed again, chunks not duplicated" "completed:7 7 true" "$(ledger_status "$(digest s.csv)") $(ledger_rows "$(digest s.csv)")"
run import -d "$DB" --report s6.json s.csv
eq "after --force: skipped again" "0 skipped" "$RC $(fstatus s6.json)"

# =====================================================================
# 2. kill -9 at seeded random points: the same command resumes
# =====================================================================
# 100k rows in 100 chunks; half as many rows (in chunks half as big) in the
# sanitizer builds, whose instrumented client is 2-5 times slower: the same
# chunk counts and kill points, half the time.
BIG_ROWS=100000
[ -n "${IDEMLOAD_INSTRUMENTED:-}" ] && BIG_ROWS=50000
CR=$((BIG_ROWS / 100)) CR3=$((BIG_ROWS * 3 / 200))
$GEN --rows $BIG_ROWS --seed 32 --dup-rate 0.1 --ties 0.2 --exact-dup-rate 0.2 --format csv --out big.csv --expected big.exp.csv --quiet
BIG_DIGEST=$(digest big.csv)
init_db lg_clean
run import -d "$DB" --chunk-rows $CR --report clean.json big.csv
eq "clean load of big.csv: exit 0" 0 $RC
expect_table "clean load of big.csv: the generator's expected state" big.exp.csv
CLEAN_SNAP=$(snap); CLEAN_DB=$DB
ledger_dump >clean.ledger
eq "clean load: 100 chunks in the ledger" 100 "$(wc -l <clean.ledger)"

# kill_and_resume NAME K: kill -9 once the ledger holds K chunks (plus a
# random few ms, to land inside a chunk), then rerun the same command.
kill_and_resume() {
    local name=$1 k=$2 extra=$((RANDOM % 70))
    init_db "lg_$name"
    "$IDEMLOAD" import -d "$DB" --chunk-rows $CR --report "$name.1.json" big.csv >/dev/null 2>"$name.1.err" &
    local pid=$!
    if [ "$k" -eq 0 ]; then
        # As soon as the ledger knows the file: inside the first chunk.
        for _ in $(seq 1 2400); do
            has_ledger && [ "$(q "SELECT count(*) FROM idemload_ledger")" -ge 1 ] && break
            kill -0 $pid 2>/dev/null || break
            sleep 0.01
        done
    elif ! wait_chunks $pid "$k"; then
        fail "$name: the load ended before reaching chunk $k (kill point missed)"
    fi
    msleep $extra
    if ! kill -0 $pid 2>/dev/null; then fail "$name: the load ended before the kill"; fi
    kill -9 $pid; wait $pid 2>/dev/null
    backends_gone || fail "$name: the killed client's session did not end"
    local committed part
    committed=$(nchunks); part=$(partial)
    echo "# $name: kill -9 after chunk >= $k + ${extra} ms: $committed chunks committed, $part lanes of the next"
    eq "$name: ledger chunks are contiguous 1..N (+ lanes of N+1)" "$committed" "$(q "SELECT coalesce(max(chunk_no), 0) - sign($part) FROM idemload_ledger_chunk")"
    eq "$name: the killed file stays 'loading'" "loading" "$(q "SELECT status FROM idemload_ledger WHERE digest = '$BIG_DIGEST'")"
    eq "$name: committed chunks whole, with their ledger rows (rows = ledger inserted)" \
        "$(q "SELECT coalesce(sum(inserted), 0) FROM idemload_ledger_chunk")" "$(q "SELECT count(*) FROM payment_callback")"
    run import -d "$DB" --chunk-rows $CR --report "$name.2.json" big.csv
    eq "$name: rerun exit 0" 0 $RC
    eq "$name: rerun status ok" ok "$(fstatus "$name.2.json")"
    if [ "$committed" -gt 0 ]; then
        check "$name: report note says resumed after chunk $committed" sh -c "grep -q 'resumed after chunk $committed[^0-9]' '$name.2.json'"
        check "$name: log says resumed after chunk $committed" grep -q "resumed after chunk $committed[^0-9]" "$ERR"
    elif [ "$part" -eq 0 ]; then
        check "$name: nothing committed, so no resume claimed" sh -c "! grep -q resumed '$ERR'"
    fi
    ledger_dump >"$name.ledger"
    same_ledger "$name: ledger chunks equal a clean load's (none redone or duplicated)" clean.ledger "$name.ledger"
    eq "$name: ledger inserted over both runs = clean load's" "$(json clean.json 'r["totals"]["inserted"]')" "$(q "SELECT sum(inserted) FROM idemload_ledger_chunk")"
    eq "$name: report totals (both runs) = clean load's" "$(totals clean.json)" "$(totals "$name.2.json")"
    eq "$name: table equals a clean uninterrupted load" "$CLEAN_SNAP" "$(snap)"
    expect_table "$name: the generator's expected state" big.exp.csv
    eq "$name: ledger completed, 100 chunks" "completed:100" "$(ledger_status "$BIG_DIGEST")"
    eq "$name: no duplicate active key" 0 "$(dups)"
}
k1=$((1 + RANDOM % 30)); k2=$((31 + RANDOM % 30)); k3=$((61 + RANDOM % 35))
kill_and_resume kill_a "$k1"
kill_and_resume kill_b "$k2"
kill_and_resume kill_c "$k3"
kill_and_resume kill_0 0

# Killed, then rerun with another --chunk-rows: loaded from the start.
init_db lg_kill_cr
"$IDEMLOAD" import -d "$DB" --chunk-rows $CR big.csv >/dev/null 2>kcr.err &
pid=$!
kcr=$((20 + RANDOM % 50))
wait_chunks $pid $kcr || fail "chunk-rows change: the load ended before chunk $kcr"
kill -9 $pid; wait $pid 2>/dev/null
backends_gone || fail "chunk-rows change: the killed client's session did not end"
run import -d "$DB" --chunk-rows $CR3 --report kcr.json big.csv
eq "other --chunk-rows after a kill: exit 0" 0 $RC
check "other --chunk-rows: says it loads from the start" contains "$ERR" "from the start"
check "other --chunk-rows: no resume claimed" sh -c "! grep -q 'resumed after' '$ERR'"
eq "other --chunk-rows: the whole file read again" "$BIG_ROWS 67" "$(json kcr.json '"%d %d" % (r["totals"]["rows_read"], r["totals"]["chunks"])')"
eq "other --chunk-rows: table equals a clean load" "$CLEAN_SNAP" "$(snap)"
eq "other --chunk-rows: ledger restarted with $CR3-row chunks, completed" "completed:67:$CR3 67" \
    "$(q "SELECT status || ':' || chunks || ':' || chunk_rows FROM idemload_ledger") $(nchunks)"
run import -d "$DB" --chunk-rows $CR --report kcr2.json big.csv
eq "other --chunk-rows: then skipped" "0 skipped" "$RC $(fstatus kcr2.json)"

# =====================================================================
# 4. Corrupt input after some chunks committed
# =====================================================================
$GEN --rows 50000 --seed 34 --format csv --out full.csv.gz --expected full.exp.csv --quiet
size=$(stat -c %s full.csv.gz)
head -c $((size * 60 / 100)) full.csv.gz >trunc.csv.gz
TR=$(digest trunc.csv.gz); FULL=$(digest full.csv.gz)
init_db lg_gzclean
run import -d "$DB" --chunk-rows 5000 full.csv.gz
eq "reference load of full.csv.gz: exit 0" 0 $RC
expect_table "reference load of full.csv.gz: the generator's expected state" full.exp.csv
GZ_SNAP=$(snap)
init_db lg_corrupt
run import -d "$DB" --chunk-rows 5000 --report tr1.json trunc.csv.gz
eq "truncated gzip: exit 3" 3 $RC
check "truncated gzip: says it is truncated" grep -qi "truncat" "$ERR"
eq "truncated gzip: status partial" partial "$(fstatus tr1.json)"
tc=$(nchunks)
check "truncated gzip: some chunks committed ($tc)" test "$tc" -ge 3
eq "truncated gzip: ledger says loading, with its chunks" "loading:$tc" "$(ledger_status "$TR")"
eq "truncated gzip: committed chunks stay (rows = ledger inserted)" "$(q "SELECT sum(inserted) FROM idemload_ledger_chunk")" "$(q "SELECT count(*) FROM payment_callback")"
eq "truncated gzip: report counts whole chunks only" "$((tc * 5000)) $tc" "$(json tr1.json '"%d %d" % (r["totals"]["rows_read"], r["totals"]["chunks"])')"
rows_tr=$(q "SELECT count(*) FROM payment_callback")
run import -d "$DB" --chunk-rows 5000 --report tr2.json trunc.csv.gz
eq "truncated gzip again: exit 3 (never skipped)" "3 partial" "$RC $(fstatus tr2.json)"
check "truncated gzip again: resumed after its committed chunks" contains "$ERR" "resumed after chunk $tc"
eq "truncated gzip again: still not completed" "loading:$tc" "$(ledger_status "$TR")"
run import -d "$DB" --chunk-rows 5000 --force --report tr3.json trunc.csv.gz
eq "truncated gzip --force: exit 3" 3 $RC
eq "truncated gzip --force: still not completed" "loading:$tc" "$(ledger_status "$TR")"
run import -d "$DB" --chunk-rows 7000 --report tr4.json trunc.csv.gz
eq "truncated gzip, other chunk size: exit 3, not completed" "3 loading" "$RC $(q "SELECT status FROM idemload_ledger WHERE digest='$TR'")"
eq "truncated gzip: table holds only whole chunks' rows" "$rows_tr" "$(q "SELECT count(*) FROM payment_callback")"
run import -d "$DB" --chunk-rows 5000 --report full.json full.csv.gz
eq "repaired file: exit 0" 0 $RC
eq "repaired file: status ok" ok "$(fstatus full.json)"
check "repaired file (other digest): not resumed, loaded from the start" sh -c "! grep -q 'resumed' '$ERR'"
eq "repaired file: all 50000 rows read, 10 chunks" "50000 10" "$(json full.json '"%d %d" % (r["totals"]["rows_read"], r["totals"]["chunks"])')"
eq "repaired file: table equals a clean load" "$GZ_SNAP" "$(snap)"
eq "repaired file: completed in the ledger" "completed:10" "$(ledger_status "$FULL")"
eq "truncated file still not completed" loading "$(q "SELECT status FROM idemload_ledger WHERE digest='$TR'")"
eq "no duplicate active key" 0 "$(dups)"

# =====================================================================
# 5. A dry run reads the ledger and writes nothing
# =====================================================================
export PGDATABASE=lg_skip; DB=$S_DB
before=$(wsnap); lb=$(ledger_all)
run import -d "$DB" --dry-run --chunk-rows 3000 --report d1.json s.csv
eq "dry run of a completed file: exit 0" 0 $RC
eq "dry run of a completed file: skipped" skipped "$(fstatus d1.json)"
check "dry run of a completed file: says so" grep -q "skipped" "$ERR"
$GEN --rows 5000 --seed 35 --format csv --out n.csv --quiet
run import -d "$DB" --dry-run --chunk-rows 1000 --report d2.json n.csv
eq "dry run of a new file: exit 0" 0 $RC
check "dry run of a new file: figures computed" jtrue d2.json 'r["dry_run"] is True and r["files"][0]["status"] == "ok" and r["totals"]["inserted"] > 0'
eq "dry run: ledger rows unchanged" "$lb" "$(ledger_all)"
eq "dry run: no ledger row for the new file" 0 "$(q "SELECT count(*) FROM idemload_ledger WHERE digest='$(digest n.csv)'")"
eq "dry run: table unchanged" "$before" "$(wsnap)"
run import -d "$DB" --dry-run --force --chunk-rows 3000 --report d3.json s.csv
eq "dry run --force of a completed file: exit 0, ledger untouched" "0 $lb" "$RC $(ledger_all)"
eq "dry run --force: table unchanged" "$before" "$(wsnap)"
init_db lg_dry
tables=$(q "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")
run import -d "$DB" --dry-run --chunk-rows 1000 --report d4.json n.csv
eq "dry run in a fresh database: exit 0" 0 $RC
eq "dry run in a fresh database: no ledger table created" "|" "$(q "SELECT to_regclass('idemload_ledger')")|$(q "SELECT to_regclass('idemload_ledger_chunk')")"
eq "dry run in a fresh database: no table created at all" "$tables" "$(q "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")"
eq "dry run in a fresh database: nothing loaded" 0 "$(q "SELECT count(*) FROM payment_callback")"
run import -d "$DB" --chunk-rows 1000 --report d5.json n.csv
eq "then the real load: same figures as the dry run" "$(totals d4.json)" "$(totals d5.json)"

# =====================================================================
# 6. Two processes loading the same file at once
# =====================================================================
$GEN --rows 60000 --seed 36 --format csv --out conc.csv --expected conc.exp.csv --quiet
CD=$(digest conc.csv)
init_db lg_conc_ref
run import -d "$DB" --chunk-rows 2000 conc.csv
eq "reference load of conc.csv: exit 0" 0 $RC
expect_table "reference load of conc.csv: the generator's expected state" conc.exp.csv
CONC_SNAP=$(snap)
# (a) the second starts while the first holds the file
init_db lg_conc_a
"$IDEMLOAD" import -d "$DB" --chunk-rows 2000 --report ca1.json conc.csv >/dev/null 2>ca1.err &
p1=$!
wait_chunks $p1 1 || fail "concurrent (a): the first load ended before its first chunk"
# Freeze the first process (its session and file lock stay) so the second
# surely meets it, however fast the machine; let it go once the second waits.
kill -STOP "$(real_pid $p1)"
"$IDEMLOAD" import -d "$DB" --chunk-rows 2000 --report ca2.json conc.csv >/dev/null 2>ca2.err &
p2=$!
for _ in $(seq 1 200); do grep -qs "another idemload process" ca2.err && break; sleep 0.1; done
kill -CONT "$(real_pid $p1)"
wait $p1; r1=$?; wait $p2; r2=$?
eq "concurrent (a): both exit 0" "0 0" "$r1 $r2"
eq "concurrent (a): the first loads, the second skips" "ok skipped" "$(fstatus ca1.json) $(fstatus ca2.json)"
check "concurrent (a): the second says it waits for the other process" grep -q "another idemload process" ca2.err
check "concurrent (a): the second says it skipped" grep -q "skipped" ca2.err
eq "concurrent (a): table equals a single load" "$CONC_SNAP" "$(snap)"
eq "concurrent (a): ledger: one file, 30 chunks, none duplicated" "completed:30 30 true" \
    "$(ledger_status "$CD") $(ledger_rows "$CD")"
eq "concurrent (a): the skipping process wrote nothing" "0 0" "$(json ca2.json '"%d %d" % (r["totals"]["inserted"], r["totals"]["updated"])')"
# (b) both start at the same instant on a database without a ledger yet
init_db lg_conc_b
"$IDEMLOAD" import -d "$DB" --chunk-rows 2000 --report cb1.json conc.csv >/dev/null 2>cb1.err &
p1=$!
"$IDEMLOAD" import -d "$DB" --chunk-rows 2000 --report cb2.json conc.csv >/dev/null 2>cb2.err &
p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
eq "concurrent (b): both exit 0" "0 0" "$r1 $r2"
eq "concurrent (b): exactly one ok and one skipped" "ok skipped" "$(printf '%s\n' "$(fstatus cb1.json)" "$(fstatus cb2.json)" | sort | tr '\n' ' ' | sed 's/ $//')"
if [ "$(fstatus cb1.json)" = skipped ]; then skerr=cb1.err; else skerr=cb2.err; fi
check "concurrent (b): the skipping one says so on stderr" grep -q "skipped" $skerr
# Skipped because the other held the file then, not because it had already
# completed it: the two ran at once.
check "concurrent (b): it found the other loading the file (they ran at once)" \
    grep -q "another idemload process.* is loading this file" $skerr
eq "concurrent (b): table equals a single load" "$CONC_SNAP" "$(snap)"
eq "concurrent (b): ledger chunks not duplicated" "completed:30 30 true" \
    "$(ledger_status "$CD") $(ledger_rows "$CD")"

# =====================================================================
# 7. Standard input loads, but cannot be skipped or resumed
# =====================================================================
init_db lg_stdin
run import -d "$DB" --format csv --chunk-rows 3000 --report st1.json - <s.csv
eq "stdin: exit 0" 0 $RC
eq "stdin: status ok" ok "$(fstatus st1.json)"
check "stdin: says it cannot be skipped or resumed" sh -c "grep -qi 'skip' '$ERR' && grep -qi 'resume' '$ERR'"
eq "stdin: table equals the file's load" "$S_SNAP" "$(snap)"
eq "stdin: no ledger row" 0 "$(if has_ledger; then q "SELECT count(*) FROM idemload_ledger"; else echo 0; fi)"
run import -d "$DB" --format csv --chunk-rows 3000 --report st2.json - <s.csv
eq "stdin again: loaded again, not skipped (exit 0, ok)" "0 ok" "$RC $(fstatus st2.json)"
eq "stdin again: nothing inserted or updated" "0 0" "$(json st2.json '"%d %d" % (r["totals"]["inserted"], r["totals"]["updated"])')"
eq "stdin again: table unchanged" "$S_SNAP" "$(snap)"

# =====================================================================
# 3. The server stopped in the middle of a load (a server of our own;
#    last, so that a failure to start it does not cost the other sections)
# =====================================================================
MAIN_PGHOST=$PGHOST MAIN_PGPORT=$PGPORT
PG2=$WORK/pg
PORT2=$((20000 + $$ % 20000))
pg2_start() { PG_PORT=$PORT2 bash "$SRC/scripts/pg_local.sh" start "$PG2" >/dev/null; }
pg2_ctl() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$PG_BIN/pg_ctl" "$@"; else "$PG_BIN/pg_ctl" "$@"; fi; }
pg2_crash() { pg2_ctl -D "$PG2/data" -m immediate -w stop >/dev/null 2>&1; }
pg2_cleanup() { PG_PORT=$PORT2 bash "$SRC/scripts/pg_local.sh" stop "$PG2" >/dev/null 2>&1; }
trap pg2_cleanup EXIT
if ! pg2_start; then
    fail "cannot start a server of our own in $PG2"
    finish
fi
export PGHOST=$PG2 PGPORT=$PORT2
createdb lg_restart && createdb lg_retries1 || fail "createdb on the own server"

# (a) stopped mid-load, restarted 3 s later: the load retries and succeeds
export PGDATABASE=lg_restart; DB="postgresql:///lg_restart?host=$PG2&port=$PORT2&user=$PGUSER"
run init -d "$DB"; eq "own server: init exit 0" 0 $RC
"$IDEMLOAD" import -d "$DB" --chunk-rows $CR --report rs.json big.csv >/dev/null 2>rs.err &
pid=$!
kr=$((10 + RANDOM % 40))
wait_chunks $pid $kr || fail "restart: the load ended before chunk $kr"
msleep $((RANDOM % 70))
pg2_crash
echo "# restart: server stopped (-m immediate) after chunk >= $kr"
sleep 3
pg2_start || fail "restart: cannot restart the own server"
wait $pid; rc=$?
eq "server restarted: load exit 0" 0 $rc
eq "server restarted: status ok" ok "$(fstatus rs.json)"
check "server restarted: it warned and retried" grep -q "retry" rs.err
eq "server restarted: table equals a clean load" "$CLEAN_SNAP" "$(snap)"
expect_table "server restarted: the generator's expected state" big.exp.csv
ledger_dump >rs.ledger
same_ledger "server restarted: ledger chunks equal a clean load's" clean.ledger rs.ledger
eq "server restarted: report totals = clean load's" "$(totals clean.json)" "$(totals rs.json)"
eq "server restarted: ledger completed" "completed:100" "$(ledger_status "$BIG_DIGEST")"

# (b) --retries 1 and the server down longer than the backoff: exit 4
export PGDATABASE=lg_retries1; DB="postgresql:///lg_retries1?host=$PG2&port=$PORT2&user=$PGUSER"
run init -d "$DB"; eq "own server (retries): init exit 0" 0 $RC
"$IDEMLOAD" import -d "$DB" --chunk-rows $CR --retries 1 --report r1.json big.csv >/dev/null 2>r1.err &
pid=$!
kr=$((10 + RANDOM % 40))
wait_chunks $pid $kr || fail "retries 1: the load ended before chunk $kr"
msleep $((RANDOM % 70))
pg2_crash
gone=0
for _ in $(seq 1 200); do kill -0 $pid 2>/dev/null || { gone=1; break; }; sleep 0.1; done
[ $gone = 1 ] || kill -9 $pid
wait $pid; rc=$?
eq "--retries 1, server down: exit 4" 4 $rc
named=$(grep -o 'last committed chunk: [0-9]*' r1.err | tail -n1 | grep -o '[0-9]*$')
check "--retries 1: the message names the last committed chunk" test -n "$named"
check "--retries 1: the message says how to resume" grep -q "run the same command again" r1.err
eq "--retries 1: report status partial" partial "$(fstatus r1.json 2>/dev/null)"
pg2_start || fail "retries 1: cannot restart the own server"
committed=$(nchunks)
# The chunk in flight may have committed with its acknowledgement lost.
check "--retries 1: the named chunk ($named) is the last committed ($committed)" \
    test "$committed" -eq "${named:--1}" -o "$committed" -eq "$((${named:--2} + 1))"
eq "--retries 1: file still loading in the ledger" "loading" "$(q "SELECT status FROM idemload_ledger WHERE digest = '$BIG_DIGEST'")"
run import -d "$DB" --chunk-rows $CR --retries 1 --report r2.json big.csv
eq "--retries 1: the same command then exits 0" 0 $RC
check "--retries 1: it resumed after chunk $committed" grep -q "resumed after chunk $committed[^0-9]" "$ERR"
eq "--retries 1: table equals a clean load" "$CLEAN_SNAP" "$(snap)"
ledger_dump >r1.ledger
same_ledger "--retries 1: ledger chunks equal a clean load's" clean.ledger r1.ledger
eq "--retries 1: report totals (both runs) = clean load's" "$(totals clean.json)" "$(totals r2.json)"

pg2_cleanup
trap - EXIT
finish
