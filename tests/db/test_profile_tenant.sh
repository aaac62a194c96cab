#!/usr/bin/env bash
# tenant_id taken from a profile column (SPEC.md "Channel exports:
# profiles": tenant_id comes from --set, "from a profile column", or from a
# merchant column through --tenant-map).  A service provider's WeChat bill
# lists several sub-merchants (特约商户号), with equal order numbers; a custom
# profile (wechat-trade, as `idemload profiles` prints it, plus a tenant_id
# column rule) gives each row its own tenant, so one order number of two
# sub-merchants is two keys.  A row without the column's value, or with one
# that is not an integer, is rejected.  A second profile maps the column's
# values to tenants (a value map, unmapped values rejected).  The expected
# rows are written out by hand from the bill below.
. "$(dirname "$0")/../lib.sh"

python3 - "$SRC/tests" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import make_bills as mb
rows = [mb.wx_pay("2024-06-02 09:00:00", "SAME1", "1.00", 特约商户号="1900000201"),
        mb.wx_pay("2024-06-02 09:01:00", "SAME1", "2.00", 特约商户号="1900000202"),
        mb.wx_pay("2024-06-02 09:02:00", "OWN2", "3.00", 特约商户号="1900000201"),
        mb.wx_refund("2024-06-02 10:00:00", "SAME1", "RF1", "0.50", "SUCCESS", 特约商户号="1900000201"),
        mb.wx_pay("2024-06-02 09:03:00", "NOSUB", "4.00", 特约商户号=""),
        mb.wx_pay("2024-06-02 09:04:00", "BADSUB", "5.00", 特约商户号="19000x0203")]
open("sp.csv", "wb").write(mb.wx_current_bill(rows))
PY
run profiles wechat-trade
eq "profiles wechat-trade: exit 0" 0 $RC
python3 - "$OUT" <<'PY'
import json, sys
p = json.load(open(sys.argv[1], encoding="utf-8"))
p["name"] = "wechat-sp"
p["columns"]["tenant_id"] = {"from": ["特约商户号"]}
json.dump(p, open("sp-column.json", "w"), ensure_ascii=False, indent=2)
p["name"] = "wechat-sp-mapped"
p["columns"]["tenant_id"] = {"from": ["特约商户号"], "map": {"1900000201": "11", "1900000202": "12"},
                             "unmapped": "reject"}
json.dump(p, open("sp-map.json", "w"), ensure_ascii=False, indent=2)
PY

# rows: "tenant out_trade_no callback_type received_at(UTC) status" per active row
rows() {
    q "SET timezone = 'UTC'; SELECT string_agg(format('%s %s %s %s %s', tenant_id, out_trade_no, callback_type,
         to_char(received_at, 'YYYY-MM-DD\"T\"HH24:MI:SS'), status), E'\n' ORDER BY tenant_id, out_trade_no, callback_type)
       FROM payment_callback WHERE deleted_at IS NULL"
}
reasons() { python3 -c 'import json,sys; print("|".join("%d %s" % (r["line"], r["reason"]) for r in map(json.loads, open(sys.argv[1]))))' "$1"; }

# --- the column's value is the tenant
init_db profile_tenant
run import -d "$DB" --profile ./sp-column.json --rejects rj.ndjson --report rep.json sp.csv
eq "tenant from a column: exit 1 (two rows rejected)" 1 $RC
eq "tenant from a column: 6 read, 2 rejected, 4 inserted" "6 2 4" \
    "$(json rep.json '" ".join(str(r["totals"][k]) for k in ("rows_read", "rows_rejected", "inserted"))')"
eq "tenant from a column: each row under its sub-merchant, one order number two keys" \
"1900000201 OWN2 pay 2024-06-02T01:02:00 2
1900000201 SAME1 pay 2024-06-02T01:00:00 2
1900000201 SAME1 refund:RF1 2024-06-02T02:00:00 2
1900000202 SAME1 pay 2024-06-02T01:01:00 2" "$(rows)"
eq "tenant from a column: the sub-merchant stays in the payload too" "1900000202|2.00" \
    "$(q "SELECT payload->>'特约商户号' || '|' || (payload->>'应结订单金额') FROM payment_callback WHERE tenant_id = 1900000202")"
check "tenant from a column: the rows without a usable value rejected, naming tenant_id" \
    python3 -c '
import json, sys
r = {x["raw"].split(",")[6]: x["reason"] for x in map(json.loads, open("rj.ndjson", encoding="utf-8"))}
sys.exit(0 if sorted(r) == ["`BADSUB", "`NOSUB"] and all("tenant_id" in v for v in r.values()) else 1)'
echo "# rejects: $(reasons rj.ndjson)"
# The ledger entry holds for this profile: the same command skips the file.
run import -d "$DB" --profile ./sp-column.json --rejects rj2.ndjson --report again.json sp.csv
eq "the same command again: skipped" "0 skipped" "$RC $(json again.json 'r["files"][0]["status"]')"

# --- the column's values mapped to tenants
init_db profile_tenant_map
run import -d "$DB" --profile ./sp-map.json --rejects rjm.ndjson --report repm.json sp.csv
eq "mapped tenant: exit 1 (two rows rejected)" 1 $RC
eq "mapped tenant: each row under its mapped tenant" \
"11 OWN2 pay 2024-06-02T01:02:00 2
11 SAME1 pay 2024-06-02T01:00:00 2
11 SAME1 refund:RF1 2024-06-02T02:00:00 2
12 SAME1 pay 2024-06-02T01:01:00 2" "$(rows)"
check "mapped tenant: the unmapped value rejected, naming it" grep -q '19000x0203' rjm.ndjson
eq "mapped tenant: two rejected" 2 "$(wc -l <rjm.ndjson)"
echo "# rejects: $(reasons rjm.ndjson)"
finish
