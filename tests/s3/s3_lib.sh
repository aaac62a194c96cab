# Helpers of the object storage tests (bash), sourced after ../lib.sh.
# s3_start: this test's signing proxy (s3proxy.py) in front of the shared
# s3rver (s3_fixture.sh), with a test-only key pair in the AWS variables,
# HOME in the test's directory (no ~/.aws of the user's), and the endpoint
# path style (http://127.0.0.1:PORT); EXIT stops the proxy.
S3_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
s3_start() {
    local env=${IDEMLOAD_S3DIR:?}/env
    [ -f "$env" ] || { echo "no S3 server: $env missing (run via ctest)"; exit 1; }
    # shellcheck disable=SC1090
    . "$env"
    S3_ACCESS=AKIDIDEMLOADTEST
    # Distinctive, with the characters a URL or a shell would mangle.
    S3_SECRET="SeCrEt-${TEST_NAME}-9f3c/x+y=z"
    S3_LOG=$WORK/s3proxy.log S3_CTL=$WORK/s3proxy.ctl
    : >"$S3_LOG"
    echo '{}' >"$S3_CTL"
    rm -f "$WORK/s3proxy.port"
    python3 "$S3_HERE/s3proxy.py" "$S3_BACKEND_PORT" "$WORK/s3proxy.port" "$S3_LOG" "$S3_CTL" \
        "$S3_ACCESS" "$S3_SECRET" us-east-1 >"$WORK/s3proxy.out" 2>&1 &
    S3_PROXY_PID=$!
    trap 's3_stop' EXIT
    for _ in $(seq 1 100); do [ -s "$WORK/s3proxy.port" ] && break; sleep 0.1; done
    S3_PORT=$(cat "$WORK/s3proxy.port" 2>/dev/null)
    [ -n "$S3_PORT" ] || { echo "the proxy did not start:"; cat "$WORK/s3proxy.out"; exit 1; }
    export HOME=$WORK
    unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION AWS_ENDPOINT_URL_S3 \
        AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE
    export AWS_ACCESS_KEY_ID=$S3_ACCESS AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
    export AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT
}
s3_stop() { [ -n "${S3_PROXY_PID:-}" ] && kill "$S3_PROXY_PID" 2>/dev/null; }
# s3_bucket NAME: creates the bucket (straight at s3rver, unsigned).
s3_bucket() {
    curl -sf -X PUT "http://127.0.0.1:$S3_BACKEND_PORT/$1" -o /dev/null ||
        { echo "cannot create bucket $1"; exit 1; }
}
# s3_put BUCKET KEY FILE: uploads FILE as the object.
s3_put() {
    local key
    key=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$2")
    curl -sf -X PUT --data-binary "@$3" "http://127.0.0.1:$S3_BACKEND_PORT/$1/$key" -o /dev/null ||
        { echo "cannot put $1/$2"; exit 1; }
}
# s3_ctl JSON: the proxy's faults from now on (s3proxy.py).
s3_ctl() { echo "$1" >"$S3_CTL.tmp" && mv "$S3_CTL.tmp" "$S3_CTL"; }
# s3_mark / s3_since: the proxy's log lines since the mark.
s3_mark() { S3_MARK=$(wc -l <"$S3_LOG"); }
s3_since() { tail -n +$((S3_MARK + 1)) "$S3_LOG"; }
# s3_count REGEX: how many logged requests since the mark match.
s3_count() { s3_since | grep -cE -- "$1"; }
# not_in TEXT FILE...: none of the files holds TEXT (a command for check).
not_in() { ! grep -qF -- "$1" "${@:2}"; }
