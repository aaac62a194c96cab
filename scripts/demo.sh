#!/usr/bin/env bash
# The main job on the samples: build, a throwaway PostgreSQL, init, import
# samples/, the summary, and a look at the resulting table.
#   scripts/demo.sh
# The server keeps running afterwards so you can look around; the last lines
# say how to use and stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh build
pgdir=${IDEMLOAD_DEMO_PG:-$root/build/demo-pg}
bash scripts/pg_local.sh start "$pgdir"
# shellcheck disable=SC1091
. "$pgdir/env"
createdb payments 2>/dev/null || true
export PGDATABASE=payments
idl=$root/build/idemload
work=$root/build/demo
mkdir -p "$work"
rm -f "$work/rejects.ndjson"

echo
echo "== idemload init"
"$idl" init
echo
echo "== idemload validate samples/* (no database)"
set +e
"$idl" validate --rejects "$work/validate-rejects.ndjson" \
    samples/*wechat*.csv.gz samples/*alipay*.ndjson samples/*mixed*.ndjson.gz
"$idl" validate --rejects "$work/validate-rejects.ndjson" --set channel=unionpay samples/*unionpay*.csv
echo
echo "== idemload import samples/*"
"$idl" import --rejects "$work/rejects.ndjson" --report "$work/report.json" \
    samples/*wechat*.csv.gz samples/*alipay*.ndjson samples/*mixed*.ndjson.gz
code=$?
"$idl" import --rejects "$work/rejects.ndjson" --set channel=unionpay samples/*unionpay*.csv
code2=$?
set -e
echo "(exit status $code and $code2: 1 means some rows were rejected, see $work/rejects.ndjson)"
echo
echo "== a channel's own bill: the Alipay download (a zip of GBK CSVs) read by its profile"
"$idl" import --rejects "$work/rejects.ndjson" --profile alipay-trade --set tenant_id=10001 \
    samples/bill-alipay-trade-2024-05-01.zip || true
psql -X -c "SELECT out_trade_no, callback_type, received_at, payload->>'订单金额（元）' AS amount
            FROM payment_callback WHERE channel = 'alipay' AND tenant_id = 10001
              AND out_trade_no LIKE 'AORD%' ORDER BY out_trade_no, callback_type"
echo
echo "== rejected rows"
cat "$work/rejects.ndjson" 2>/dev/null | head -n 20 || true
echo
echo "== the table"
psql -X -c "SELECT channel, count(*) AS active_rows, count(*) FILTER (WHERE status = 2) AS final,
                   min(received_at), max(received_at)
            FROM payment_callback WHERE deleted_at IS NULL GROUP BY channel ORDER BY channel"
psql -X -c "SELECT id, tenant_id, channel, out_trade_no, callback_type, status, received_at,
                   left(payload::text, 60) AS payload
            FROM payment_callback ORDER BY id LIMIT 15"
echo "== importing the same files again changes nothing (the ledger skips them):"
"$idl" import --rejects "$work/rejects.ndjson" \
    samples/*wechat*.csv.gz samples/*alipay*.ndjson samples/*mixed*.ndjson.gz || true
echo
echo "The server is still running.  Use it:  . $pgdir/env && psql payments"
echo "Stop it:                              bash scripts/pg_local.sh stop $pgdir"
