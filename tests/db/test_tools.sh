#!/usr/bin/env bash
# The table safety tools against a real PostgreSQL: check, dedupe (listing,
# --apply, the final-status guard, batches, idempotence) and create-index
# (refusal, build, INVALID leftovers, failures during the build).
. "$(dirname "$0")/../lib.sh"
new_db tools

# make_table NAME: the table of SPEC.md, without its unique index.
make_table() {
    q "CREATE TABLE $1 (
        id             BIGSERIAL PRIMARY KEY,
        tenant_id      BIGINT      NOT NULL,
        channel        TEXT        NOT NULL,
        out_trade_no   TEXT        NOT NULL,
        callback_type  TEXT        NOT NULL,
        status         SMALLINT    NOT NULL DEFAULT 0,
        payload        JSONB       NOT NULL,
        received_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
        handled_at     TIMESTAMPTZ,
        deleted_at     TIMESTAMPTZ)"
}
# fill NAME: purpose-made duplicates, with fixed ids.
#   K1: ids 1 (10:00), 2 (09:00), 3 (11:00)  -> keep 2, the earliest received_at
#   K2: ids 4, 5, same received_at           -> keep 4, the lower id
#   K3: id 6 alone                           -> untouched
#   K4: ids 7 (09:00, status 0), 8 (10:00, status 2 final) -> refused unless --include-final
#   K5: ids 9 (09:00, status 2), 10 (10:00, status 0)      -> keep the final 9, delete 10
#   K6: id 11 active, 12 already soft-deleted -> not a duplicate
#   tenant 2 K1: id 13                        -> another key
fill() {
    q "INSERT INTO $1 (id, tenant_id, channel, out_trade_no, callback_type, status, payload, received_at, deleted_at) VALUES
        (1, 1, 'wechat', 'K1', 'pay', 0, '{}', '2026-01-01 10:00Z', NULL),
        (2, 1, 'wechat', 'K1', 'pay', 0, '{}', '2026-01-01 09:00Z', NULL),
        (3, 1, 'wechat', 'K1', 'pay', 1, '{}', '2026-01-01 11:00Z', NULL),
        (4, 1, 'wechat', 'K2', 'pay', 0, '{}', '2026-01-01 10:00Z', NULL),
        (5, 1, 'wechat', 'K2', 'pay', 0, '{}', '2026-01-01 10:00Z', NULL),
        (6, 1, 'wechat', 'K3', 'pay', 0, '{}', '2026-01-01 10:00Z', NULL),
        (7, 1, 'alipay', 'K4', 'pay', 0, '{}', '2026-01-01 09:00Z', NULL),
        (8, 1, 'alipay', 'K4', 'pay', 2, '{}', '2026-01-01 10:00Z', NULL),
        (9, 1, 'alipay', 'K5', 'refund', 2, '{}', '2026-01-01 09:00Z', NULL),
        (10, 1, 'alipay', 'K5', 'refund', 0, '{}', '2026-01-01 10:00Z', NULL),
        (11, 1, 'wechat', 'K6', 'pay', 0, '{}', '2026-01-01 10:00Z', NULL),
        (12, 1, 'wechat', 'K6', 'pay', 0, '{}', '2026-01-01 09:00Z', '2026-01-02 00:00Z'),
        (13, 2, 'wechat', 'K1', 'pay', 0, '{}', '2026-01-01 10:00Z', NULL)"
    q "SELECT setval(pg_get_serial_sequence('$1', 'id'), 100)" >/dev/null
}
active() { q "SELECT string_agg(id::text, ',' ORDER BY id) FROM $1 WHERE deleted_at IS NULL"; }
snapshot() { q "SELECT string_agg(id || ':' || coalesce(deleted_at::text, '-'), ',' ORDER BY id) FROM $1"; }
valid_index() { q "SELECT coalesce(string_agg(c.relname || ':' || i.indisvalid, ',' ORDER BY c.relname), '') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = '$1'::regclass AND i.indisunique AND NOT i.indisprimary"; }
jtrue() { [ "$(json "$1" "$2")" == True ]; }
lacks() { ! grep -q -- "$2" "$1"; }

make_table payment_callback
fill payment_callback

# --- check on a table with no index and duplicates
run check -d "$DB" --report check1.json
eq "check, no index + duplicates: exit 1" 1 $RC
check "check says NOT safe" contains "$OUT" "NOT safe for import"
check "check says no usable index" contains "$OUT" "NONE usable"
check "check counts the duplicate keys" contains "$OUT" "duplicate active keys: 4 (5 surplus rows)"
check "check suggests dedupe --apply" contains "$OUT" "dedupe --apply"
eq "check JSON: not safe" False "$(json check1.json 'r["safe"]')"
eq "check JSON: no unique index" None "$(json check1.json 'r["unique_index"]')"
eq "check JSON: 4 duplicate keys, 5 surplus rows" "4 5" "$(json check1.json '"%d %d" % (r["duplicates"]["keys"], r["duplicates"]["surplus_rows"])')"
eq "check JSON: largest key first, with count, first and last id" "1 wechat K1 pay 3 1 3" \
    "$(json check1.json '" ".join(str(r["duplicates"]["sample"][0][k]) for k in ("tenant_id","channel","out_trade_no","callback_type","count","first_id","last_id"))')"
eq "check JSON: two problems" 2 "$(json check1.json 'len(r["problems"])')"
run check -d "$DB" --limit 1 --report -
eq "check --limit 1 --report -: exit 1" 1 $RC
eq "check --report - writes only JSON on stdout, sample of 1" 1 "$(json "$OUT" 'len(r["duplicates"]["sample"])')"
check "check --report -: the text goes to stderr" contains "$ERR" "1 of 4 shown"

# --- dedupe: listing changes nothing
before=$(snapshot payment_callback)
run dedupe -d "$DB" --report list.json
eq "dedupe listing with duplicates: exit 1" 1 $RC
check "dedupe lists K1 with count, first and last id" grep -Eq '^ +1 +wechat +K1 +pay +3 +1 +3$' "$OUT"
check "dedupe lists K5" grep -Eq '^ +1 +alipay +K5 +refund +2 +9 +10$' "$OUT"
check "dedupe listing warns which keys --apply would refuse" contains "$OUT" "out_trade_no=K4 callback_type=pay: final row ids 8"
eq "dedupe JSON: 4 keys, 1 blocked by a final status" "4 1" "$(json list.json '"%d %d" % (r["duplicate_keys"], r["final_blocked_keys"])')"
eq "dedupe listing changed nothing" "$before" "$(snapshot payment_callback)"
run dedupe -d "$DB" --limit 2
check "dedupe --limit 2 shows 2 of 4" contains "$OUT" "2 of 4 shown"
run dedupe -d "$DB" --final-status 2,3
check "a listing under other final statuses advises the --apply that keeps them" \
    grep -q "^'idemload dedupe --apply .*--final-status 2,3' soft-deletes" "$OUT"
run dedupe -d "$DB"
check "under the default, the advice names none" \
    test "$(grep -c -- "--final-status" "$OUT")" = 0 -a "$(grep -c "^'idemload dedupe --apply.*' soft-deletes" "$OUT")" = 1

# --- create-index refuses while duplicates remain
run create-index -d "$DB"
eq "create-index with duplicates: exit 1" 1 $RC
check "create-index says how many duplicates" contains "$ERR" "4 duplicate active keys"
eq "create-index built nothing" "" "$(valid_index payment_callback)"

# --- dedupe --apply: keep the earliest active row of each key
run dedupe -d "$DB" --apply --report apply1.json
eq "dedupe --apply with a final-status key: exit 1" 1 $RC
eq "kept exactly the earliest rows; K4 left whole" "2,4,6,7,8,9,11,13" "$(active payment_callback)"
check "dedupe --apply prints what it soft-deleted" contains "$OUT" "soft-deleted ids 1, 3 of tenant_id=1 channel=wechat out_trade_no=K1 callback_type=pay; kept id 2"
check "dedupe --apply lists the refused key" grep -q "REFUSED .*out_trade_no=K4.* id 8 (status 2, final); kept id 7" "$OUT"
eq "apply JSON: 4 rows soft-deleted, 3 keys, 1 refused" "4 3 1" "$(json apply1.json '"%d %d %d" % (r["rows_soft_deleted"], r["keys_deduplicated"], r["refused_keys"])')"
eq "apply JSON: the refused row" "K4 8 True" "$(json apply1.json '"%s %d %s" % (r["refused"][0]["out_trade_no"], r["refused"][0]["ids"][0]["id"], r["refused"][0]["ids"][0]["final"])')"
eq "the row soft-deleted before stays so" "2026-01-02 00:00:00+00" "$(q "SET timezone=UTC; SELECT deleted_at FROM payment_callback WHERE id=12" | tail -n1)"
before=$(snapshot payment_callback)
run dedupe -d "$DB" --apply
eq "dedupe --apply again: still refuses K4 (exit 1)" 1 $RC
eq "dedupe --apply again changed nothing" "$before" "$(snapshot payment_callback)"
check "second run soft-deleted nothing" contains "$OUT" "0 rows soft-deleted"
run dedupe -d "$DB" --apply --include-final
eq "dedupe --apply --include-final: exit 0" 0 $RC
eq "--include-final soft-deleted the final row of K4" "2,4,6,7,9,11,13" "$(active payment_callback)"
before=$(snapshot payment_callback)
run dedupe -d "$DB" --apply
eq "dedupe --apply with nothing left: exit 0" 0 $RC
check "says nothing changed" contains "$OUT" "nothing changed"
eq "third run changed nothing" "$before" "$(snapshot payment_callback)"
run dedupe -d "$DB"
eq "dedupe listing without duplicates: exit 0" 0 $RC

# --- create-index, then check says safe
run create-index -d "$DB"
eq "create-index after dedupe: exit 0" 0 $RC
eq "the partial unique index exists and is valid" "uk_payment_callback_biz_active:true" "$(valid_index payment_callback)"
eq "with WHERE deleted_at IS NULL" 1 "$(q "SELECT count(*) FROM pg_indexes WHERE indexname='uk_payment_callback_biz_active' AND indexdef LIKE '%UNIQUE%WHERE (deleted_at IS NULL)'")"
run create-index -d "$DB"
eq "create-index again: exit 0" 0 $RC
check "create-index again says it already exists" contains "$ERR" "already has a valid unique index"
run check -d "$DB" --report check2.json
eq "check after dedupe + create-index: exit 0" 0 $RC
check "check says safe" contains "$OUT" "verdict: safe for import"
eq "check JSON: safe, index named, predicate" "True uk_payment_callback_biz_active (deleted_at IS NULL)" \
    "$(json check2.json '"%s %s %s" % (r["safe"], r["unique_index"]["name"], r["unique_index"]["predicate"])')"

# --- a nullable key column is reported
q "ALTER TABLE payment_callback ALTER COLUMN channel DROP NOT NULL"
q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, payload) VALUES (1, NULL, 'N1', 'pay', '{}'), (1, NULL, 'N1', 'pay', '{}')"
run check -d "$DB" --report check3.json
eq "check with a nullable key column: still safe for import (exit 0)" 0 $RC
check "check names the nullable column" contains "$OUT" "key columns that allow NULL: channel"
check "check says no NULLS NOT DISTINCT index covers it" contains "$OUT" "no NULLS NOT DISTINCT index covers"
eq "check JSON: nullable columns, not covered, 2 NULL-key rows" "['channel'] False 2" \
    "$(json check3.json '"%s %s %s" % (r["nullable_key_columns"], r["nulls_not_distinct"], r["null_key_rows"])')"
check "check JSON: a warning about it" jtrue check3.json 'any("allow NULL" in w for w in r["warnings"])'
eq "check JSON: NULL keys are not counted as duplicates" 0 "$(json check3.json 'r["duplicates"]["keys"]')"
make_table nnd
q "CREATE UNIQUE INDEX nnd_key ON nnd (tenant_id, channel, out_trade_no, callback_type) NULLS NOT DISTINCT WHERE deleted_at IS NULL"
q "ALTER TABLE nnd ALTER COLUMN out_trade_no DROP NOT NULL"
run check -d "$DB" --table nnd --report check4.json
eq "check, nullable column under NULLS NOT DISTINCT: exit 0" 0 $RC
check "check says the index covers the NULLs" contains "$OUT" "covered: the unique index is NULLS NOT DISTINCT"
eq "check JSON: covered" "True" "$(json check4.json 'r["nulls_not_distinct"]')"

# --- a schema-qualified table, and small batches give the same result
q "CREATE SCHEMA billing"
make_table billing.cb
fill billing.cb
run check -d "$DB" --table billing.cb
eq "check --table billing.cb: exit 1" 1 $RC
check "check names the schema" contains "$OUT" "table billing.cb"
run dedupe -d "$DB" --table billing.cb --apply --batch-size 2
eq "dedupe --batch-size 2: exit 1 (K4 refused)" 1 $RC
eq "--batch-size 2 keeps the same rows" "2,4,6,7,8,9,11,13" "$(active billing.cb)"
check "--batch-size 2 ran in 2 batches" contains "$OUT" "in 2 batches"
run dedupe -d "$DB" --table billing.cb --apply --batch-size 1 --include-final
eq "dedupe --batch-size 1 --include-final: exit 0" 0 $RC
eq "same final rows as with the default batch size" "2,4,6,7,9,11,13" "$(active billing.cb)"
run create-index -d "$DB" --table billing.cb --index-name cb_key
eq "create-index --table billing.cb --index-name cb_key: exit 0" 0 $RC
eq "index cb_key made in schema billing" "billing|t" "$(q "SELECT n.nspname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'cb_key'")"
run check -d "$DB" --table billing.cb
eq "check --table billing.cb after create-index: exit 0" 0 $RC

# --- an INVALID index left by a failed CREATE INDEX CONCURRENTLY
make_table inv
fill inv
psql -X -q -c "CREATE UNIQUE INDEX CONCURRENTLY uk_inv_biz_active ON inv (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL" 2>/dev/null
eq "psql's failed concurrent build left an INVALID index" "uk_inv_biz_active:false" "$(valid_index inv)"
run check -d "$DB" --table inv --report check5.json
eq "check with only an INVALID index: exit 1" 1 $RC
check "check says the index is INVALID" contains "$OUT" "uk_inv_biz_active: INVALID"
eq "check JSON: no usable index, the INVALID one does not count" "None False False" \
    "$(json check5.json '"%s %s %s" % (r["unique_index"], r["indexes"][0]["valid"], r["indexes"][0]["counts"])')"
run create-index -d "$DB" --table inv
eq "create-index while duplicates remain: exit 1" 1 $RC
check "create-index mentions the leftover stays" contains "$ERR" "INVALID index left by an earlier attempt stays"
run dedupe -d "$DB" --table inv --apply --include-final
eq "dedupe --apply with an INVALID unique index present: exit 0" 0 $RC
run check -d "$DB" --table inv
eq "check after dedupe, INVALID index still there: exit 1" 1 $RC
run create-index -d "$DB" --table inv
eq "create-index drops the INVALID index and rebuilds: exit 0" 0 $RC
check "create-index says it dropped the leftover" contains "$ERR" "dropping the INVALID index public.uk_inv_biz_active"
eq "one valid index now" "uk_inv_biz_active:true" "$(valid_index inv)"
run check -d "$DB" --table inv
eq "check after the rebuild: exit 0" 0 $RC

# --- failures during the build: each explained, the leftover dropped
make_table race
q "INSERT INTO race (tenant_id, channel, out_trade_no, callback_type, payload) VALUES (1, 'w', 'R1', 'pay', '{}'), (1, 'w', 'R2', 'pay', '{}')"
# hold SQL: runs SQL in a transaction kept open until let_go (it then
# commits), in the background; returns once that session has run SQL and
# waits.  No timer: the test lets go when it has seen what it waits for,
# however slow the build (a sanitizer's) is.  The transaction waits on
# advisory lock 4711, which another session of the test's holds.
hold() {
    psql -X -q -c "SELECT pg_advisory_lock(4711)" -c "SELECT pg_sleep(3600)" >/dev/null 2>&1 &
    KEYHOLDER=$!
    for _ in $(seq 1 400); do
        [ "$(advisory_locks granted 4711)" -ge 1 ] && break
        sleep 0.05
    done
    psql -X -q -c "BEGIN; $1; SELECT pg_advisory_lock_shared(4711); COMMIT;" >/dev/null 2>&1 &
    HOLDER=$!
    for _ in $(seq 1 400); do
        [ "$(advisory_locks "NOT granted" 4711)" -ge 1 ] && return 0
        sleep 0.05
    done
    fail "hold: the holding session never got to wait"
}
# let_go: the held transaction commits; returns when it has.
let_go() {
    kill "$KEYHOLDER" 2>/dev/null
    q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid() AND datname = current_database()" >/dev/null
    wait "$KEYHOLDER" 2>/dev/null
    wait "$HOLDER"
}
# build_started PID: waits until CREATE INDEX runs on the table race (its
# progress row exists) while PID lives; prints the building backend's pid.
build_started() {
    local b
    for _ in $(seq 1 400); do
        b=$(q "SELECT pid FROM pg_stat_progress_create_index WHERE relid = 'race'::regclass")
        [ -n "$b" ] && { echo "$b"; return 0; }
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
# A duplicate committed while the build waits for writers: 23505.
hold "INSERT INTO race (tenant_id, channel, out_trade_no, callback_type, payload) VALUES (1, 'w', 'R1', 'pay', '{}')"
"$IDEMLOAD" create-index -d "$DB" --table race >out.txt 2>dup.err &
pid=$!
# The duplicate commits once the build waits for it (its writer), and
# has said so.
for _ in $(seq 1 1200); do
    grep -q "waiting for writers before build" dup.err 2>/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
let_go
wait $pid; RC=$?; ERR=$WORK/dup.err
eq "a duplicate arriving during the build: exit 1" 1 $RC
check "explains the duplicate" contains "$ERR" "another session wrote it while the index was being built"
check "counts the duplicates now" contains "$ERR" "1 duplicate active keys now"
check "progress lines while it waits" contains "$ERR" "waiting for writers before build"
check "says it dropped the leftover" contains "$ERR" "dropped the INVALID index public.uk_race_biz_active"
eq "no index left behind" "" "$(valid_index race)"
q "UPDATE race SET deleted_at = now() WHERE id = (SELECT max(id) FROM race)"
# Another session's transaction outlasts lock_timeout: 55P03.
hold "INSERT INTO race (tenant_id, channel, out_trade_no, callback_type, payload) VALUES (1, 'w', 'R3', 'pay', '{}')"
PGOPTIONS="-c lock_timeout=1000" run create-index -d "$DB" --table race --quiet
let_go
eq "lock timeout during the build: exit 1" 1 $RC
check "explains the lock timeout" contains "$ERR" "gave up waiting for a lock (lock_timeout)"
check "--quiet: no progress line" lacks "$ERR" "waiting for writers before build"
run create-index -d "$DB" --table race
eq "create-index once the transaction ended: exit 0" 0 $RC
eq "valid index on race" "uk_race_biz_active:true" "$(valid_index race)"
# The building session killed: a lost connection, exit 4.
q "DROP INDEX uk_race_biz_active"
hold "INSERT INTO race (tenant_id, channel, out_trade_no, callback_type, payload) VALUES (1, 'w', 'R4', 'pay', '{}')"
"$IDEMLOAD" create-index -d "$DB" --table race >out.txt 2>lost.err &
pid=$!
builder=$(build_started $pid)
check "the build had started before its session was killed" test -n "$builder"
q "SELECT pg_terminate_backend(${builder:-0})" >/dev/null
let_go      # (its leftover's DROP INDEX CONCURRENTLY waits for the writer)
wait $pid; RC=$?
eq "connection lost during the build: exit 4" 4 $RC
check "explains the lost connection" contains lost.err "connection to the server was lost"
eq "the leftover was dropped on a new connection" "" "$(valid_index race)"
# Interrupted: exit 130, leftover dropped.
hold "INSERT INTO race (tenant_id, channel, out_trade_no, callback_type, payload) VALUES (1, 'w', 'R5', 'pay', '{}')"
"$IDEMLOAD" create-index -d "$DB" --table race >out.txt 2>intr.err &
pid=$!
b=$(build_started $pid)
check "the build had started before the interrupt" test -n "$b"
kill -INT $pid
let_go
wait $pid; RC=$?
eq "interrupted build: exit 130" 130 $RC
check "interrupted build: the leftover was dropped, it says" contains intr.err "dropped the INVALID index"
eq "the leftover of the interrupted build was dropped" "" "$(valid_index race)"

# --- usage and connection problems
run check -d "$DB" --table no_such_table
eq "check, missing table: exit 2" 2 $RC
check "says the table does not exist" contains "$ERR" "does not exist"
run dedupe -d "$DB" --table nope.no_such_table
eq "dedupe, missing table: exit 2" 2 $RC
run create-index -d "$DB" --table no_such_table
eq "create-index, missing table: exit 2" 2 $RC
run check -d "postgresql:///no_such_database_x?host=$PGHOST&port=$PGPORT&user=$PGUSER"
eq "check, cannot connect: exit 4 (a database error, as in every command)" 4 $RC
q "CREATE TABLE noshape (id bigint, tenant_id bigint, channel text, out_trade_no text, callback_type text, status smallint, received_at timestamptz)"
run dedupe -d "$DB" --table noshape --apply
eq "dedupe --apply on a table without deleted_at: exit 2" 2 $RC
run create-index -d "$DB" --table noshape
eq "create-index on a table without deleted_at: exit 2" 2 $RC
q "CREATE TABLE taken (x int)"
q "CREATE INDEX uk_taken_biz_active_x ON taken (x)"
make_table taken2
run create-index -d "$DB" --table taken2 --index-name uk_taken_biz_active_x
eq "create-index with a name taken by another table's index: exit 2" 2 $RC
check "says the name is taken" contains "$ERR" "exists on another table"

# init with names past PostgreSQL's 63 bytes: two tables that differ only
# past the cut still get an index each (the default name carries a hash of
# the whole name), and init again is a no-op; a schema that does not exist
# is exit 2, as for every other command.
long=$(printf 'M%.0s' $(seq 62))
for t in "${long}A" "${long}B" "${long}B"; do
    run init -d "$DB" --table "$t"
    eq "init of a 63-byte table name ($t): exit 0" 0 $RC
done
eq "two indexes of 63 bytes, one per table" "2|63" "$(q "SELECT count(DISTINCT indexname), max(length(indexname)) FROM pg_indexes WHERE indexname LIKE 'uk_MMMM%'")"
run init -d "$DB" --table nosch.tbl
eq "init in a schema that does not exist: exit 2" 2 $RC
check "says to create the schema" contains "$ERR" "create the schema first"

# --- the commands the tools advise name the user's target: -d and --table
# as given (shell-quoted where a shell would read them otherwise), so that
# pasted into a shell they act on that table in that database, never on
# payment_callback of the database the environment names; a password in
# -d never shown; without -d and --table the advice reads as it always
# did.  tools_dflt is the environment's database, whose payment_callback
# holds duplicates that a command without the target would soft-delete;
# tools_adv holds the user's tables.
for d in tools_dflt tools_adv; do
    dropdb --if-exists --force "$d" >/dev/null 2>&1
    createdb "$d" || fail "createdb $d"
done
export PGDATABASE=tools_dflt
make_table payment_callback
fill payment_callback
dflt_before=$(snapshot payment_callback)
adv() { PGDATABASE=tools_adv "$@"; }
# two A1 rows (ids 1 and 2: dedupe keeps 1) and one A2 (id 3)
fill_small() {
    q "INSERT INTO $1 (tenant_id, channel, out_trade_no, callback_type, payload, received_at) VALUES
        (1, 'w', 'A1', 'pay', '{}', '2026-01-01 09:00Z'), (1, 'w', 'A1', 'pay', '{}', '2026-01-01 10:00Z'),
        (1, 'w', 'A2', 'pay', '{}', '2026-01-01 09:00Z')"
}
adv q "CREATE SCHEMA billing"
adv make_table billing.callbacks
adv fill_small billing.callbacks
# The command a line advises, as printed: fix_dedupe and fix_index read
# check's fix line, apply_cmd dedupe's listing (greedy: a quoted value may
# hold a quote of its own).
fix_dedupe() { sed -n "s/^fix: '\(.*\)' keeps the earliest active row of each key, then '.*' builds the index\$/\1/p" "$1"; }
fix_index() { sed -n "s/^fix: '.*' keeps the earliest active row of each key, then '\(.*\)' builds the index\$/\1/p" "$1"; }
apply_cmd() { sed -n "s/^'\(.*\)' soft-deletes all but the earliest active row of each key.*/\1/p" "$1"; }
idemload() { "$IDEMLOAD" "$@"; }
# run_advised WHAT COMMAND: runs an advised command as a shell reads it; sets RC,
# OUT and ERR as run does.
run_advised() {
    OUT=$WORK/advised.out ERR=$WORK/advised.err
    if [[ "$2" != "idemload "* ]]; then
        fail "$1: no idemload command advised: [$2]"
        RC=99
        return
    fi
    eval "$2" >"$OUT" 2>"$ERR"
    RC=$?
    san_check "$ERR" "$2"
}

run check -d tools_adv --table billing.callbacks
eq "check -d tools_adv --table billing.callbacks: exit 1" 1 $RC
eq "check's fix names the user's database and table" \
    "fix: 'idemload dedupe --apply -d tools_adv --table billing.callbacks' keeps the earliest active row of each key, then 'idemload create-index -d tools_adv --table billing.callbacks' builds the index" \
    "$(grep '^fix:' "$OUT")"
cp "$OUT" check_adv.txt
run dedupe -d tools_adv --table billing.callbacks
eq "dedupe's listing names them too" \
    "'idemload dedupe --apply -d tools_adv --table billing.callbacks' soft-deletes all but the earliest active row of each key (by received_at, then id)" \
    "$(tail -n 1 "$OUT")"
run_advised "dedupe's advice" "$(apply_cmd "$OUT")"
eq "dedupe's advice, pasted: exit 0" 0 $RC
eq "it soft-deleted the surplus row of billing.callbacks in tools_adv" "1,3" "$(adv active billing.callbacks)"
eq "and left payment_callback of the environment's database alone" "$dflt_before" "$(snapshot payment_callback)"
check "its closing line advises create-index on the same target" contains "$OUT" \
    "every active key is now unique; 'idemload create-index -d tools_adv --table billing.callbacks' can build the index"
run_advised "check's create-index" "$(fix_index check_adv.txt)"
eq "check's create-index, pasted: exit 0" 0 $RC
eq "it built the index on billing.callbacks in tools_adv" "uk_callbacks_biz_active:true" "$(adv valid_index billing.callbacks)"
eq "and none on payment_callback of the environment's database" "" "$(valid_index payment_callback)"

# A conninfo and a table name a shell would split, and an INVALID index
# whose note (text and JSON) advises create-index.
adv make_table 'billing."Call backs"'
adv fill_small 'billing."Call backs"'
psql -X -q -d tools_adv -c 'CREATE UNIQUE INDEX CONCURRENTLY "uk_Call backs_biz_active" ON billing."Call backs" (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL' 2>/dev/null
eq "an INVALID index on billing.\"Call backs\"" "uk_Call backs_biz_active:false" "$(adv valid_index 'billing."Call backs"')"
CONN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=tools_adv"
run check -d "$CONN" --table 'billing."Call backs"' --report check_q.json
eq "check of billing.\"Call backs\": exit 1" 1 $RC
QARGS="-d '$CONN' --table 'billing.\"Call backs\"'"
eq "the fix quotes -d and --table for the shell" \
    "fix: 'idemload dedupe --apply $QARGS' keeps the earliest active row of each key, then 'idemload create-index $QARGS' builds the index" \
    "$(grep '^fix:' "$OUT")"
check "the INVALID index's note advises create-index on the same target" contains "$OUT" \
    "let 'idemload create-index $QARGS' rebuild it"
eq "its note in the JSON report is the same text" \
    "$(sed -n 's/^    uk_Call backs_biz_active: //p' "$OUT")" "$(json check_q.json 'r["indexes"][0]["note"]')"
cp "$OUT" check_q.txt
run_advised "check's dedupe, quoted" "$(fix_dedupe check_q.txt)"
eq "check's dedupe --apply, pasted: exit 0" 0 $RC
eq "it soft-deleted the surplus row of billing.\"Call backs\"" "1,3" "$(adv active 'billing."Call backs"')"
eq "billing.callbacks untouched by it" "1,3" "$(adv active billing.callbacks)"
run_advised "check's create-index, quoted" "$(fix_index check_q.txt)"
eq "check's create-index, pasted: exit 0" 0 $RC
check "it rebuilt the INVALID index of billing.\"Call backs\"" contains "$ERR" 'dropping the INVALID index billing.uk_Call backs_biz_active'
eq "now valid" "uk_Call backs_biz_active:true" "$(adv valid_index 'billing."Call backs"')"

# An INVALID index of a name of the user's own: create-index rebuilds it
# only under that name (with the default one it would build a second
# index and leave this one), so the note advises --index-name.
adv make_table billing.own
adv q "INSERT INTO billing.own (tenant_id, channel, out_trade_no, callback_type, payload) VALUES (1, 'w', 'O1', 'pay', '{}'), (1, 'w', 'O1', 'pay', '{}')"
psql -X -q -d tools_adv -c 'CREATE UNIQUE INDEX CONCURRENTLY own_key ON billing.own (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL' 2>/dev/null
adv q "DELETE FROM billing.own WHERE id = 2"
eq "an INVALID index own_key, no duplicate left" "own_key:false" "$(adv valid_index billing.own)"
run check -d tools_adv --table billing.own
check "its note advises create-index with its name" contains "$OUT" \
    "let 'idemload create-index -d tools_adv --table billing.own --index-name own_key' rebuild it"
run_advised "the INVALID note's create-index" \
    "$(sed -n "s/.*let '\(idemload create-index[^']*\)' rebuild it.*/\1/p" "$OUT")"
eq "the note's create-index, pasted: exit 0" 0 $RC
eq "it rebuilt own_key, and made no second index" "own_key:true" "$(adv valid_index billing.own)"

# A password in -d: never printed, in the advice or anywhere else; the
# connection without it advised instead.
adv make_table billing.pw
adv fill_small billing.pw
PWURI="postgresql://$PGUSER:s3cr3t-pw@/tools_adv?host=$PGHOST&port=$PGPORT"
run check -d "$PWURI" --table billing.pw --report check_pw.json
eq "check with a password in a URI: exit 1" 1 $RC
check "check's output lacks the password" lacks "$OUT" "s3cr3t"
check "its stderr too" lacks "$ERR" "s3cr3t"
check "its report too" lacks check_pw.json "s3cr3t"
PWARGS="-d 'user=$PGUSER dbname=tools_adv host=$PGHOST port=$PGPORT' --table billing.pw"
eq "the fix names the connection without the password" \
    "fix: 'idemload dedupe --apply $PWARGS' keeps the earliest active row of each key, then 'idemload create-index $PWARGS' builds the index" \
    "$(grep '^fix:' "$OUT")"
cp "$OUT" check_pw.txt
run dedupe -d "password=s3cr3t-pw dbname=tools_adv" --table billing.pw
eq "dedupe with password= in a conninfo: exit 1" 1 $RC
eq "its advice keeps the rest of the conninfo" \
    "'idemload dedupe --apply -d dbname=tools_adv --table billing.pw' soft-deletes all but the earliest active row of each key (by received_at, then id)" \
    "$(tail -n 1 "$OUT")"
check "and never the password" lacks "$OUT" "s3cr3t"
run import -d "$PWURI" --table billing.pw /dev/null
eq "import into a table without the index: exit 2" 2 $RC
check "import's refusal advises check and create-index on the same target" contains "$ERR" \
    "or run 'idemload check $PWARGS' and 'idemload create-index $PWARGS'"
check "without the password" lacks "$ERR" "s3cr3t"
run import -d "$PWURI" --table billing.nope /dev/null
eq "import into a missing table: exit 2" 2 $RC
check "import's refusal advises init on the same target" contains "$ERR" \
    "table billing.nope does not exist (create it with 'idemload init -d 'user=$PGUSER dbname=tools_adv host=$PGHOST port=$PGPORT' --table billing.nope')"
check "without the password" lacks "$ERR" "s3cr3t"
run_advised "check's dedupe, the password left out" "$(fix_dedupe check_pw.txt)"
eq "pasted (the server trusts the socket): exit 0" 0 $RC
eq "it soft-deleted the surplus row of billing.pw" "1,3" "$(adv active billing.pw)"

# create-index: its own advice carries the user's --index-name, the
# commands that take none do not.
adv make_table billing.ix
adv fill_small billing.ix
run create-index -d tools_adv --table billing.ix --index-name ix_key
eq "create-index with duplicates left: exit 1" 1 $RC
check "its dedupe advice names the target, without --index-name" contains "$ERR" \
    "'idemload dedupe -d tools_adv --table billing.ix' lists them and 'idemload dedupe --apply -d tools_adv --table billing.ix' keeps"
run create-index -d tools_adv --table billing.nope --index-name 'nope key'
eq "create-index on a missing table: exit 2" 2 $RC
check "advises init with the same target and --index-name" contains "$ERR" \
    "(create it with 'idemload init -d tools_adv --table billing.nope --index-name 'nope key'')"

# Neither -d nor --table (or the default table named): the advice as before.
run check
eq "check in the environment's database: exit 1" 1 $RC
eq "its fix as it always read" \
    "fix: 'idemload dedupe --apply' keeps the earliest active row of each key, then 'idemload create-index' builds the index" \
    "$(grep '^fix:' "$OUT")"
run check --table payment_callback
eq "--table payment_callback, the default: the same fix" \
    "fix: 'idemload dedupe --apply' keeps the earliest active row of each key, then 'idemload create-index' builds the index" \
    "$(grep '^fix:' "$OUT")"
run dedupe
eq "dedupe's listing as it always read" \
    "'idemload dedupe --apply' soft-deletes all but the earliest active row of each key (by received_at, then id)" \
    "$(tail -n 1 "$OUT")"
run create-index
check "create-index's refusal as it always read" contains "$ERR" \
    "'idemload dedupe' lists them and 'idemload dedupe --apply' keeps"
run import --table no_such_table /dev/null
check "import's refusal with --table alone adds --table alone" contains "$ERR" \
    "(create it with 'idemload init --table no_such_table')"
adv run import /dev/null
check "and with neither, names init alone" contains "$ERR" "(create it with 'idemload init')"
eq "the environment's payment_callback untouched throughout" "$dflt_before" "$(snapshot payment_callback)"
export PGDATABASE=tools

finish
