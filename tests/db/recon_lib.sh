# Shared by the database tests of reconcile across runs (sourced after
# lib.sh and pg_use): statement rows and table rows of one shape, and a
# fingerprint of every table of the database.
header='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
# row TENANT CHANNEL KEY AMOUNT TIME: a statement line (pay, status 1, CNY)
row() { printf '%s,%s,%s,pay,1,"{""amount"": ""%s"", ""currency"": ""CNY""}",%s\n' "$@"; }
# ins TENANT CHANNEL KEY AMOUNT TIME: the same as a table row
ins() { q "INSERT INTO payment_callback (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
          VALUES ($1, '$2', '$3', 'pay', 1, '{\"amount\": \"$4\", \"currency\": \"CNY\"}', '$5')" >/dev/null; }
# all_tables: each table of schema public with a digest of its rows
all_tables() {
    q "SELECT string_agg(relname || ':' || md5(query_to_xml('SELECT * FROM public.' || quote_ident(relname)
              || ' ORDER BY 1', false, false, '')::text), ',' ORDER BY relname)
       FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"
}
