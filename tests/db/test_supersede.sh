#!/usr/bin/env bash
# --supersede corrects a load whose wrong parameters left versions newer
# than the corrected rows (SPEC.md "Crash safety, reruns and concurrency":
# "idemload offers a way to correct such a load"): the same file loaded
# with the right parameters and --supersede replaces the active versions
# that the earlier load of this file, under other parameters, wrote (known
# by the transactions the ledger recorded for its chunks, appended or
# isolated rows included) and nothing else: a version another writer left
# since is kept.  Without --supersede the corrected rows are stale.  The
# expected rows are the bill's as test_profiles.sh states them (+08:00).
. "$(dirname "$0")/../lib.sh"
pg_use
python3 "$SRC/tests/make_bills.py" . || { echo "make_bills.py failed"; exit 1; }
fstatus() { json "$1" "r['files'][${2:-0}]['status']"; }
rows() {
    q "SET timezone = 'UTC'; SELECT string_agg(format('%s %s %s', out_trade_no, callback_type,
         to_char(received_at, 'YYYY-MM-DD\"T\"HH24:MI:SS')), E'\n' ORDER BY out_trade_no, callback_type)
       FROM payment_callback WHERE channel = 'wechat' AND deleted_at IS NULL"
}
wsnap() { q "SELECT md5(string_agg(concat_ws('|', ctid, xmin, payload::text, received_at), ',' ORDER BY ctid)) FROM payment_callback"; }
RIGHT="ORD1 pay 2024-05-01T02:15:02
ORD1 refund:RF1 2024-05-01T10:40:11
ORD1 refund:RF2 2024-05-01T11:02:45
ORD2 revoked 2024-05-01T03:00:00"
WRONG="ORD1 pay 2024-05-01T10:15:02
ORD1 refund:RF1 2024-05-01T18:40:11
ORD1 refund:RF2 2024-05-01T19:02:45
ORD2 revoked 2024-05-01T11:00:00"
imp() { local rep=$1; shift; run import -d "$DB" --profile wechat-trade --set tenant_id=7 --report "$rep" "$@" wechat-all.csv; }

for j in 1 2; do
    init_db sp_$j
    # The wrong load: appended, one row per chunk, over -j lanes.
    imp w.json --timezone Z --chunk-rows 1 -j $j
    eq "-j $j: wrong --timezone Z: exit 0" 0 $RC
    eq "-j $j: the wrong load's rows" "$WRONG" "$(rows)"
    # Another writer changes ORD2 since: its version must stay.
    q "UPDATE payment_callback SET payload = payload || '{\"note\":\"by hand\"}' WHERE out_trade_no = 'ORD2'"
    # The right parameters alone: loaded, but stale against the wrong load.
    imp r.json --timezone +08:00 --chunk-rows 1 -j $j
    eq "-j $j: right --timezone: loaded" "0 ok" "$RC $(fstatus r.json)"
    eq "-j $j: right --timezone alone: all 4 stale, the table unchanged" "4 $WRONG" \
        "$(json r.json 'r["totals"]["stale"]') $(rows)"
    # --supersede: the wrong load's versions give way; ORD2 does not.
    imp s.json --timezone +08:00 --chunk-rows 1 -j $j --supersede
    eq "-j $j: --supersede: loaded (not skipped)" "0 ok" "$RC $(fstatus s.json)"
    eq "-j $j: --supersede: the wrong load's three versions replaced, ORD2 (changed by another writer) kept" \
"ORD1 pay 2024-05-01T02:15:02
ORD1 refund:RF1 2024-05-01T10:40:11
ORD1 refund:RF2 2024-05-01T11:02:45
ORD2 revoked 2024-05-01T11:00:00" "$(rows)"
    eq "-j $j: --supersede: the other writer's payload kept" "by hand" \
        "$(q "SELECT payload->>'note' FROM payment_callback WHERE out_trade_no = 'ORD2'")"
    eq "-j $j: --supersede: figures 3 updated, 1 stale" "3 1" \
        "$(json s.json '"%d %d" % (r["totals"]["updated"], r["totals"]["stale"])')"
    # Again: nothing left to supersede, nothing written.
    before=$(wsnap)
    imp s2.json --timezone +08:00 --chunk-rows 1 -j $j --supersede
    eq "-j $j: --supersede again: exit 0" 0 $RC
    eq "-j $j: --supersede again: nothing written" "$before" "$(wsnap)"
done

# In one step, and rows the wrong load wrote while isolating a refused row
# (in subtransactions): replaced too.
init_db sp_iso
q "ALTER TABLE payment_callback ADD CONSTRAINT no_rf2 CHECK (callback_type <> 'refund:RF2')"
imp w.json --timezone Z
eq "isolated wrong load: exit 1 (RF2 refused)" 1 $RC
q "ALTER TABLE payment_callback DROP CONSTRAINT no_rf2"
imp s.json --timezone +08:00 --supersede
eq "isolated: --supersede in one step: exit 0" 0 $RC
eq "isolated: every row right (RF2 inserted, the others replaced)" "$RIGHT" "$(rows)"

# Nothing to supersede: says so, loads as without it.
init_db sp_none
imp n.json --timezone +08:00 --supersede
eq "no earlier load: exit 0" 0 $RC
check "no earlier load: says nothing is superseded" grep -q "nothing is superseded" "$ERR"
eq "no earlier load: the rows" "$RIGHT" "$(rows)"
run import -d "$DB" --supersede --dry-run wechat-all.csv
eq "--supersede --dry-run: usage error" 2 $RC
run import -d "$DB" --supersede --on-conflict nothing wechat-all.csv
eq "--supersede --on-conflict nothing: usage error" 2 $RC
finish
