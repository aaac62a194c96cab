#!/usr/bin/env bash
# Object storage without a database (SPEC.md "Object storage"): validate
# reads s3://BUCKET/KEY, prefixes (every page of ListObjectsV2) and globs,
# path and virtual-hosted style, each request's SigV4 signature checked by
# the proxy (s3proxy.py) independently of libcurl; the same figures as the
# same files on disk; faults: 5xx, a connection cut mid-object, an object
# replaced mid-read, wrong credentials, a missing bucket, a wrong region;
# no secret in any output.
. "$(dirname "$0")/../lib.sh"
. "$SRC/tests/s3/s3_lib.sh"
s3_start
B=val-bills
s3_bucket $B

$GEN --rows 4000 --seed 48 --format csv --gzip --bad-rate 0.01 --out a.csv.gz --quiet
$GEN --rows 3000 --seed 49 --format ndjson --out b.ndjson --quiet
$GEN --rows 2000 --seed 50 --format ndjson --gzip --out c.ndjson.gz --quiet
# A wechat-trade bill (samples/: its layout as the channel publishes it).
cp "$SRC/samples/bill-wechat-trade-2024-05-01.csv" wechat.csv
s3_put $B exports/2026-11-28/a.csv.gz a.csv.gz
s3_put $B exports/2026-11-28/b.ndjson b.ndjson
s3_put $B exports/2026-11-29/c.ndjson.gz c.ndjson.gz
s3_put $B "exports/2026-11-29/with space+plus=é.ndjson" b.ndjson
s3_put $B bills/wechat.csv wechat.csv

# figures FILE: each file's status and counts from a --report, in order.
figures() { json "$1" "[(f['status'], f['rows_read'], f['rows_rejected'], f['rows_deduplicated']) for f in r['files']]"; }

# One object, path style (the endpoint is an IP address).
s3_mark
run validate --report one.json s3://$B/exports/2026-11-28/a.csv.gz
local_rc=$("$IDEMLOAD" validate --report one_local.json a.csv.gz 2>/dev/null; echo $?)
eq "an object validates as the file does (exit)" "$local_rc" "$RC"
eq "the same figures as the file on disk" "$(figures one_local.json)" "$(figures one.json)"
eq "one HEAD and one GET, signatures checked, path style" \
    "HEAD /$B/exports/2026-11-28/a.csv.gz - 200 host=127.0.0.1 range=-|GET /$B/exports/2026-11-28/a.csv.gz - 200 host=127.0.0.1 range=-" \
    "$(s3_since | paste -sd'|')"
eq "the report names the object" "s3://$B/exports/2026-11-28/a.csv.gz" "$(json one.json "r['files'][0]['path']")"

# A prefix, listed 2 keys a page (continuation tokens hold '/', '+', '='),
# in key order, mixed with a local file.
s3_ctl '{"max_keys": 2}'
s3_mark
run validate --report pre.json s3://$B/exports/ b.ndjson
eq "a prefix and a local file: exit" 1 "$RC"
eq "every object under the prefix, in key order, then the file" \
    "['s3://$B/exports/2026-11-28/a.csv.gz', 's3://$B/exports/2026-11-28/b.ndjson', 's3://$B/exports/2026-11-29/c.ndjson.gz', 's3://$B/exports/2026-11-29/with space+plus=é.ndjson', 'b.ndjson']" \
    "$(json pre.json "[f['path'] for f in r['files']]")"
eq "two listing pages, the second with a continuation token" 2 "$(s3_count '^GET /'$B' .*list-type=2.* 200')"
# (The token is base64: its '/', '+' and '=' must go %-encoded, or the
# signature, which covers the query as sent, differs from the canonical one.)
eq "... the token sent canonical, and its signature accepted" 1 \
    "$(s3_count '^GET /'$B' continuation-token=[A-Za-z0-9%._~-]+&list-type=2&prefix=exports%2F 200 ')"
"$IDEMLOAD" validate --report pre_local.json a.csv.gz b.ndjson c.ndjson.gz b.ndjson b.ndjson 2>/dev/null
eq "the same figures as the files on disk" "$(figures pre_local.json)" "$(figures pre.json)"
s3_ctl '{}'

# A glob in the key, virtual-hosted style (BUCKET.localhost).
s3_mark
AWS_ENDPOINT_URL=http://localhost:$S3_PORT run validate --report glob.json "s3://$B/exports/2026-11-*/*.ndjson*"
eq "a glob: exit" 0 "$RC"
eq "the glob's objects" \
    "['s3://$B/exports/2026-11-28/b.ndjson', 's3://$B/exports/2026-11-29/c.ndjson.gz', 's3://$B/exports/2026-11-29/with space+plus=é.ndjson']" \
    "$(json glob.json "[f['path'] for f in r['files']]")"
eq "every request virtual-hosted" "$(s3_since | wc -l)" "$(s3_count " host=$B\.localhost ")"
check "... and none refused" test "$(s3_count ' 200 ')" = "$(s3_since | wc -l)"

# A channel bill by its profile.
run validate --report wx.json --profile wechat-trade --set tenant_id=7 s3://$B/bills/wechat.csv
"$IDEMLOAD" validate --report wx_local.json --profile wechat-trade --set tenant_id=7 wechat.csv 2>/dev/null
eq "a wechat-trade bill from the bucket: the figures of the file" "$(figures wx_local.json)" "$(figures wx.json)"

# Two 503s, then the load goes on.
s3_ctl '{"fail_5xx": 2}'
s3_mark
run validate s3://$B/exports/2026-11-28/b.ndjson
eq "5xx twice: retried, exit 0" 0 "$RC"
eq "... two 503 answers seen" 2 "$(s3_count ' 503 ')"

# The connection dropped after 5000 bytes: resumed from there with Range.
s3_ctl '{"cut": {"key": "exports/2026-11-28/a.csv.gz", "after": 5000, "times": 2}}'
s3_mark
run validate --report cut.json s3://$B/exports/2026-11-28/a.csv.gz
eq "cut twice mid-object: the figures of the whole file" "$(figures one_local.json)" "$(figures cut.json)"
eq "... resumed from byte 5000 and 10000, pinned to the ETag" \
    "range=- range=bytes=5000- range=bytes=10000-" \
    "$(s3_since | grep '^GET' | sed 's/.* range=/range=/' | paste -sd' ')"
s3_ctl '{"cut": {"key": "exports/2026-11-28/a.csv.gz", "after": 0, "times": 100}}'
run validate --retries 2 s3://$B/exports/2026-11-28/a.csv.gz
eq "cut every time: exit 3 after --retries" 3 "$RC"
check "... saying so" contains "$ERR" "tries in a row made no progress (--retries 2)"

# Replaced while read: refused, never stitched; the next file goes on.
$GEN --rows 4000 --seed 77 --format csv --gzip --out new.csv.gz --quiet
s3_put $B replace/x.csv.gz a.csv.gz
s3_ctl "{\"cut\": {\"key\": \"replace/x.csv.gz\", \"after\": 6000, \"replace_with\": \"$WORK/new.csv.gz\"}}"
s3_mark
run validate --report rep.json s3://$B/replace/x.csv.gz b.ndjson
eq "an object replaced mid-read: exit 3" 3 "$RC"
check "... named, and said replaced" contains "$ERR" "s3://$B/replace/x.csv.gz: the object was replaced while it was read"
eq "... failed, the next file ok" "['failed', 'ok']" "$(json rep.json "[f['status'] for f in r['files']]")"
eq "... the resumed GET refused by If-Match (412)" 1 "$(s3_count "^GET /$B/replace/x.csv.gz - 412 .*range=bytes=6000-")"
s3_ctl '{}'

# Wrong credentials: a clear error naming the object; the others go on.
AWS_SECRET_ACCESS_KEY=wrong-secret-4711 run validate s3://$B/exports/2026-11-28/b.ndjson b.ndjson
eq "a wrong secret: exit 3" 3 "$RC"
check "... access denied, naming the object and what to check" contains "$ERR" \
    "s3://$B/exports/2026-11-28/b.ndjson: HTTP 403: access denied; check the credentials"
check "... the local file still read" contains "$ERR" "b.ndjson \[ndjson\] ok"
check "... the wrong secret not shown" not_in "wrong-secret-4711" "$ERR" "$OUT"
AWS_ACCESS_KEY_ID=AKIDNOSUCHKEY run validate s3://$B/exports/
eq "an unknown key listing a prefix: exit 3" 3 "$RC"
check "... InvalidAccessKeyId, naming the prefix" contains "$ERR" "s3://$B/exports/: HTTP 403 InvalidAccessKeyId"

# A missing bucket, as an object and as a prefix; a missing key.
run validate s3://no-such-bucket/x.csv s3://no-such-bucket/p/ s3://$B/missing.csv b.ndjson
eq "missing bucket and key: exit 3" 3 "$RC"
check "the object in a missing bucket named, 404" contains "$ERR" "s3://no-such-bucket/x.csv: HTTP 404: no such bucket or object; check the bucket and key names"
check "the prefix: NoSuchBucket" contains "$ERR" "s3://no-such-bucket/p/: HTTP 404 NoSuchBucket"
check "the missing key named" contains "$ERR" "s3://$B/missing.csv: HTTP 404"
check "... the local file still read" contains "$ERR" "b.ndjson \[ndjson\] ok"
run validate "s3://$B/exports/*.none"
eq "a glob matching nothing: exit 3" 3 "$RC"
check "... said" contains "$ERR" "no object matches the pattern"

# A wrong region: the server names the right one.
AWS_REGION=eu-west-1 run validate s3://$B/exports/2026-11-28/b.ndjson
eq "a wrong region: exit 3" 3 "$RC"
check "... the listing says which region to set" contains "$ERR" "HTTP 400" 
AWS_REGION=eu-west-1 run validate s3://$B/exports/
check "... ListObjectsV2 names the bucket's region" contains "$ERR" "the bucket is in region us-east-1, not eu-west-1: set AWS_REGION=us-east-1"

# No credentials at all: a configuration error before anything is read.
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$IDEMLOAD" validate s3://$B/x.csv >o.txt 2>e.txt
eq "no credentials: exit 2" 2 $?
check "... says where they are read from" contains e.txt "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"

# Credentials and region from a profile of the AWS shared files.
mkdir -p "$HOME/.aws"
printf '[other]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$S3_ACCESS" "$S3_SECRET" >"$HOME/.aws/credentials"
printf '[profile other]\nregion = us-east-1\ns3 =\n  addressing_style = path\n' >"$HOME/.aws/config"
s3_mark
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_REGION AWS_PROFILE=other \
    AWS_ENDPOINT_URL=http://localhost:$S3_PORT "$IDEMLOAD" validate s3://$B/exports/2026-11-28/b.ndjson >o.txt 2>e.txt
eq "AWS_PROFILE with ~/.aws/credentials and config: exit 0" 0 $?
eq "... addressing_style = path honoured" 2 "$(s3_count " host=localhost ")"
rm -rf "$HOME/.aws"

# A session token (temporary credentials): sent as x-amz-security-token
# and signed, which a second proxy that requires it checks.
rm -f tok.port
S3PROXY_SESSION_TOKEN='tok/en+1==' python3 "$S3_HERE/s3proxy.py" "$S3_BACKEND_PORT" tok.port \
    tok.log "$S3_CTL" "$S3_ACCESS" "$S3_SECRET" us-east-1 >tok.out 2>&1 &
TOK_PID=$!
for _ in $(seq 1 100); do [ -s tok.port ] && break; sleep 0.1; done
AWS_SESSION_TOKEN='tok/en+1==' AWS_ENDPOINT_URL=http://127.0.0.1:$(cat tok.port) \
    run validate s3://$B/exports/2026-11-28/b.ndjson
eq "a session token, signed: exit 0" 0 "$RC"
AWS_SESSION_TOKEN='other-token' AWS_ENDPOINT_URL=http://127.0.0.1:$(cat tok.port) \
    run validate s3://$B/exports/2026-11-28/b.ndjson
eq "another token: refused (exit 3)" 3 "$RC"
check "... and not shown" not_in "other-token" "$ERR" "$OUT"
kill $TOK_PID

# Plain http only where the endpoint says http; https verifies certificates.
AWS_ENDPOINT_URL=https://127.0.0.1:$S3_PORT run validate --retries 1 s3://$B/exports/2026-11-28/b.ndjson
eq "https to a plain http server: exit 3" 3 "$RC"

# The progress line on a terminal: the object's bytes of its Content-Length
# (script(1) makes the pseudo-terminal; as tests/cli/test_progress.sh).
$GEN --rows 60000 --seed 101 --format csv --out p.csv --quiet
s3_put $B big/p.csv p.csv
script -qfec "$(printf '%q ' "$IDEMLOAD" validate --chunk-rows 5000 s3://$B/big/p.csv) >stdout.txt" \
    /dev/null </dev/null >tty.txt 2>&1
eq "on a terminal: exit 0" 0 $?
total=$(python3 -c "print('%.1f' % ($(stat -c %s p.csv) / 1e6))")
check "a progress line: the object's MB read of its size, percent, rows, ETA" \
    grep -aqE "s3://$B/big/p\.csv: [0-9]+\.[0-9]/$total MB \([0-9]+%\), [0-9]+ rows" tty.txt

# No secret in anything written.
check "the secret in no output of this test" not_in "$S3_SECRET" $(find "$WORK" -type f)
finish
