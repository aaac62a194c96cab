#!/usr/bin/env bash
# The main job on the samples: build, a throwaway PostgreSQL, init, import
# samples/, the summary, a look at the resulting table, and the nightly
# job's reconciliation of a channel's bill against it.
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
    --changes "$work/changes.ndjson" --html "$work/report.html" \
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
echo "== idemload reconcile: the channel's bill against the table, both ways, in money"
echo "-- the Alipay bill just loaded: every row should match (exit 0, balanced)"
# Where the table's rows hold their money (--facts): here the rows the
# profile itself loaded, so its own column; refunds are written negative.
cat >"$work/facts.json" <<'JSON'
{"channels": {"alipay": {"amount": {"path": "订单金额（元）", "unit": "major", "magnitude": true},
                         "currency": {"value": "CNY"}}}}
JSON
set +e
"$idl" reconcile --rejects "$work/reconcile-rejects.ndjson" --profile alipay-trade \
    --facts "$work/facts.json" \
    --set tenant_id=10001 --report "$work/reconcile-alipay.json" \
    --discrepancies "$work/discrepancies-alipay.csv" samples/bill-alipay-trade-2024-05-01.zip
echo "(exit status $?)"
echo "-- the WeChat bill, never loaded: its rows are missing in the table (exit 5, discrepancies)"
"$idl" reconcile --rejects "$work/reconcile-rejects.ndjson" --profile wechat-trade \
    --set tenant_id=10001 --report "$work/reconcile-wechat.json" --html "$work/reconcile.html" \
    --discrepancies "$work/discrepancies-wechat.csv" samples/bill-wechat-trade-2024-05-01.csv
rc=$?
set -e
echo "(exit status $rc: 5 means discrepancies, listed in $work/discrepancies-wechat.csv)"
head -n 4 "$work/discrepancies-wechat.csv" || true
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
echo "The page of the first import: $work/report.html (what changed: $work/changes.ndjson)"
echo "The reconciliation's page: $work/reconcile.html"
echo "The server is still running.  Use it:  . $pgdir/env && psql payments"
echo "Stop it:                              bash scripts/pg_local.sh stop $pgdir"
