#!/usr/bin/env bash
# Object storage with the ledger (SPEC.md "Object storage"): import of a
# prefix loads what the same files load from disk; the ledger knows each
# object by bucket, key, size and ETag, so a rerun skips it after one HEAD
# and no GET, and a new version is a new file; a connection cut
# mid-object resumes and loads every row once; two importers share a
# prefix; status shows the objects; reconcile reads an object; no secret
# reaches the ledger, the report or the page.
. "$(dirname "$0")/../lib.sh"
. "$SRC/tests/s3/s3_lib.sh"
s3_start
B=imp-bills
s3_bucket $B

$GEN --rows 6000 --seed 481 --format csv --gzip --bad-rate 0.01 --out a.csv.gz --quiet
$GEN --rows 4000 --seed 482 --format ndjson --out b.ndjson --quiet
$GEN --rows 3000 --seed 483 --format ndjson --gzip --out c.ndjson.gz --quiet
s3_put $B day/a.csv.gz a.csv.gz
s3_put $B day/b.ndjson b.ndjson
s3_put $B day/c.ndjson.gz c.ndjson.gz

# table_sum: the active rows of the current database, as one digest.
table_sum() {
    q "SELECT count(*) || ' ' || md5(string_agg(concat_ws('|', tenant_id, channel, out_trade_no,
         callback_type, status, received_at, payload::text), ',' ORDER BY tenant_id, channel,
         out_trade_no, callback_type)) FROM payment_callback WHERE deleted_at IS NULL"
}

# The files from disk, for comparison.
init_db s3_imp_local
run import -q -d "$DB" --chunk-rows 1000 a.csv.gz b.ndjson c.ndjson.gz
eq "the files from disk: exit 1 (rows rejected)" 1 "$RC"
WANT=$(table_sum)

init_db s3_imp
s3_mark
run import -d "$DB" --chunk-rows 1000 --report first.json --html first.html s3://$B/day/
eq "a prefix: exit 1 (rows rejected), as from disk" 1 "$RC"
eq "the table as loaded from disk" "$WANT" "$(table_sum)"
eq "one listing, then HEAD and GET of each object" \
    "GET /$B HEAD /$B/day/a.csv.gz GET /$B/day/a.csv.gz HEAD /$B/day/b.ndjson GET /$B/day/b.ndjson HEAD /$B/day/c.ndjson.gz GET /$B/day/c.ndjson.gz" \
    "$(s3_since | awk '{print $1, $2}' | paste -sd' ')"

# Rerun: each object skipped after one HEAD, nothing downloaded.
s3_mark
run import -d "$DB" --chunk-rows 1000 --report again.json s3://$B/day/
eq "rerun: exit 0" 0 "$RC"
eq "rerun: every object skipped" "['skipped', 'skipped', 'skipped']" "$(json again.json "[f['status'] for f in r['files']]")"
eq "rerun: one HEAD per object" 3 "$(s3_count '^HEAD ')"
eq "rerun: no GET of an object (only the listing)" 1 "$(s3_count '^GET ')"
check "... which is the listing" contains <(s3_since | grep '^GET') "list-type=2"

# status shows the objects, with their size.
run status -d "$DB" --report st.json
eq "status: exit 0" 0 "$RC"
eq "status: the three objects, completed, with their sizes" \
    "[('s3://$B/day/a.csv.gz', 'completed', $(stat -c %s a.csv.gz)), ('s3://$B/day/b.ndjson', 'completed', $(stat -c %s b.ndjson)), ('s3://$B/day/c.ndjson.gz', 'completed', $(stat -c %s c.ndjson.gz))]" \
    "$(json st.json "sorted((f['file_name'], f['state'], f['size_bytes']) for f in r['files'])")"

# The ledger keeps the SHA-256 of each object's bytes, hashed as they
# streamed.
eq "the ledger: each object's bytes' SHA-256" \
    "$(for f in a.csv.gz b.ndjson c.ndjson.gz; do sha256sum $f | cut -c1-64; done | paste -sd' ')" \
    "$(q "SELECT string_agg(content_sha256, ' ' ORDER BY file_name) FROM idemload_ledger")"

# Another version of an object (another ETag) is another file.
$GEN --rows 500 --seed 484 --format ndjson --out b2.ndjson --quiet
s3_put $B day/b.ndjson b2.ndjson
run import -d "$DB" --report new.json s3://$B/day/
eq "a replaced object loads, the others skip" "['skipped', 'ok', 'skipped']" \
    "$(json new.json "[f['status'] for f in r['files']]")"
eq "... its 500 rows read" 500 "$(json new.json "r['files'][1]['rows_read']")"
s3_put $B day/b.ndjson b.ndjson

# A connection cut twice mid-object, in a fresh database: resumed with
# Range, every row loaded once.
init_db s3_imp_cut
s3_ctl '{"cut": {"key": "day/a.csv.gz", "after": 40000, "times": 2}}'
s3_mark
run import -d "$DB" --chunk-rows 500 --report cut.json s3://$B/day/
eq "cut mid-object: exit 1 (rows rejected), as from disk" 1 "$RC"
eq "... the table as loaded from disk" "$WANT" "$(table_sum)"
eq "... resumed twice with Range" 2 "$(s3_count '^GET /'$B'/day/a.csv.gz - 206 .*range=bytes=')"
s3_ctl '{}'

# Two importers on one prefix at once, in a fresh database: each object
# loaded once, the table as from disk.
init_db s3_imp_two
"$IDEMLOAD" import -d "$DB" --chunk-rows 500 --report two1.json s3://$B/day/ >two1.out 2>two1.err &
P1=$!
"$IDEMLOAD" import -d "$DB" --chunk-rows 500 --report two2.json s3://$B/day/ >two2.out 2>two2.err &
P2=$!
wait $P1
R1=$?
wait $P2
R2=$?
check "two importers: each exits 0 or 1" test "$R1" -le 1 -a "$R2" -le 1
eq "... the table as loaded from disk" "$WANT" "$(table_sum)"
eq "... each object loaded by one of them, skipped by the other" "[1, 1, 1]" \
    "$(python3 -c "
import json
a = json.load(open('two1.json'))['files']; b = json.load(open('two2.json'))['files']
print([sorted([x['status'], y['status']]).count('skipped') for x, y in zip(a, b)])")"
eq "... the ledger: three objects, completed" 3 \
    "$(q "SELECT count(*) FROM idemload_ledger WHERE status = 'completed' AND file_name LIKE 's3://$B/day/%'")"

# A profile bill (wechat-trade, from samples/) from the bucket.
init_db s3_imp_wx
s3_put $B bills/wechat.csv "$SRC/samples/bill-wechat-trade-2024-05-01.csv"
run import -d "$DB" --profile wechat-trade --set tenant_id=7 --report wx.json s3://$B/bills/wechat.csv
WX_RC=$RC
WX=$(table_sum)
init_db s3_imp_wx_local
run import -d "$DB" --profile wechat-trade --set tenant_id=7 "$SRC/samples/bill-wechat-trade-2024-05-01.csv"
eq "a wechat-trade bill: the exit of the file from disk" "$RC" "$WX_RC"
eq "... the table of the file from disk" "$(table_sum)" "$WX"

# reconcile reads an object as it reads the file.
export PGDATABASE=s3_imp DB="postgresql:///s3_imp?host=$PGHOST&port=$PGPORT&user=$PGUSER"
run reconcile -d "$DB" --report rec_local.json a.csv.gz
LOCAL_RC=$RC
run reconcile -d "$DB" --report rec.json s3://$B/day/a.csv.gz
eq "reconcile of an object: the exit of the file" "$LOCAL_RC" "$RC"
eq "... the same figures" "$(json rec_local.json "r['files'][0]['rows_read'], r['files'][0]['digest'] is not None")" \
    "$(json rec.json "r['files'][0]['rows_read'], r['files'][0]['digest'] is not None")"

# No secret in the ledger, the report, the page or any output.
pg_dump -d s3_imp >dump.sql 2>dump.err
check "the ledger and the table dumped" test -s dump.sql
check "the secret in no output, report, page or the database dump" \
    not_in "$S3_SECRET" $(find "$WORK" -type f ! -name 's3proxy.*')
finish
