#!/usr/bin/env bash
# Starts or stops the local S3 server the object storage tests share:
# s3rver 3.7.1 (npm), installed once under the build directory
# (IDEMLOAD_S3DIR/node, kept across runs) with the machine's Node.js, on
# 127.0.0.1 only.  Each test puts its own signature-checking proxy
# (s3proxy.py) in front of it and uses its own buckets.
# usage: s3_fixture.sh start|stop
set -euo pipefail
dir=${IDEMLOAD_S3DIR:?IDEMLOAD_S3DIR not set}
version=3.7.1
case "$1" in
start)
    mkdir -p "$dir/node"
    if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
        kill "$(cat "$dir/pid")"
    fi
    pkg=$dir/node/node_modules/s3rver/package.json
    if ! [ -f "$pkg" ] || ! grep -q "\"version\": \"$version\"" "$pkg"; then
        command -v npm >/dev/null || { echo "s3_fixture: npm (Node.js) is needed" >&2; exit 1; }
        npm install --prefix "$dir/node" --no-audit --no-fund --no-save --loglevel=error \
            "s3rver@$version"
    fi
    rm -rf "$dir/data" "$dir/env" "$dir/pid"
    mkdir -p "$dir/data"
    # s3rver makes continuation tokens with DES, which Node's OpenSSL 3
    # offers only from its legacy provider (else every truncated listing
    # is a 500).
    nohup node --openssl-legacy-provider "$dir/node/node_modules/s3rver/bin/s3rver.js" \
        -d "$dir/data" -a 127.0.0.1 -p 0 >"$dir/s3rver.log" 2>&1 &
    echo $! >"$dir/pid"
    port=
    for _ in $(seq 1 300); do
        port=$(sed -n 's/^S3rver listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/s3rver.log")
        [ -n "$port" ] && break
        kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$port" ] || { echo "s3_fixture: s3rver did not start:" >&2; cat "$dir/s3rver.log" >&2; exit 1; }
    echo "S3_BACKEND_PORT=$port" >"$dir/env"
    echo "s3rver $version on 127.0.0.1:$port"
    ;;
stop)
    if [ -f "$dir/pid" ]; then
        kill "$(cat "$dir/pid")" 2>/dev/null || true
        rm -f "$dir/pid" "$dir/env"
    fi
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
