#!/usr/bin/env bash
# The rows a direct merge sends to the INSERT but does not write (a newer or
# the same version already there) are still classified exactly as stale or
# unchanged.  The merge asks for their list only when it wrote fewer rows
# than it was sent (src/db/sql.c, SQL_MISSED_*), so a lane that has gone
# direct (a first chunk of new keys) must still see them in later chunks.
. "$(dirname "$0")/../lib.sh"
pg_use

hdr="tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"
row() { echo "$1,alipay,$2,pay,$3,\"{\"\"v\"\":\"\"$4\"\"}\",$5"; }

{ echo "$hdr"
  row 7 K1 1 newer 2026-11-28T12:00:00Z
  row 7 K2 1 same 2026-11-28T12:00:00Z
} >"$WORK/pre.csv"

# Three chunks of 10 rows: 10 new keys (the lane goes direct), then 9 new
# keys and an older version of K1 (stale), then 9 new keys and K2 again as
# it is (unchanged).
{ echo "$hdr"
  for i in $(seq -w 0 9); do row 7 "N0$i" 0 n 2026-11-28T09:00:00Z; done
  for i in $(seq -w 0 8); do row 7 "N1$i" 0 n 2026-11-28T09:00:00Z; done
  row 7 K1 1 older 2026-11-28T10:00:00Z
  for i in $(seq -w 0 8); do row 7 "N2$i" 0 n 2026-11-28T09:00:00Z; done
  row 7 K2 1 same 2026-11-28T12:00:00Z
} >"$WORK/f.csv"

figures() { json "$1" '" ".join(str(r["totals"][k]) for k in ("inserted","updated","unchanged","stale","chunks"))'; }

for jobs in 1 2; do
    init_db "missed_j$jobs"
    run import -d "$DB" -q --report "$WORK/pre.json" "$WORK/pre.csv"
    eq "-j $jobs: the two keys preloaded" 0 "$RC"
    run import -d "$DB" -q -j "$jobs" --chunk-rows 10 --report "$WORK/r.json" "$WORK/f.csv"
    eq "-j $jobs: import exit status" 0 "$RC"
    eq "-j $jobs: inserted, updated, unchanged, stale, chunks" "28 0 1 1 3" "$(figures "$WORK/r.json")"
    eq "-j $jobs: K1 keeps its newer version" "newer 2026-11-28 12:00:00+00" \
        "$(q "SET TIME ZONE 'UTC'; SELECT payload->>'v' || ' ' || received_at FROM payment_callback WHERE out_trade_no = 'K1'")"
    eq "-j $jobs: ledger figures as reported" "28 0 1 1" \
        "$(q "SELECT sum(inserted) || ' ' || sum(updated) || ' ' || sum(unchanged) || ' ' || sum(stale) FROM idemload_ledger_chunk WHERE digest = '$(sha256sum "$WORK/f.csv" | cut -d' ' -f1)'")"
done

finish
