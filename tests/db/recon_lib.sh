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
# gen FROM TO PREFIX: statement lines FROM..TO of day 2026-11-20 (tenant 1,
# wechat, keys PREFIX%07d, CNY amounts)
gen() {
    awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { for (i = a; i <= b; i++)
        printf "1,wechat,%s%07d,pay,1,\"{\"\"amount\"\": \"\"%d.%02d\"\", \"\"currency\"\": \"\"CNY\"\"}\",2026-11-20T%02d:%02d:00Z\n",
               p, i, i % 1000, i % 100, (i / 60) % 24, i % 60 }'
}
# register: its items and runs ("none" while reconcile has not created it)
register() {
    if [ "$(q "SELECT to_regclass('idemload_recon_item') IS NULL")" = t ]; then echo none; return; fi
    q "SELECT (SELECT count(*) FROM idemload_recon_item) || ' ' || (SELECT count(*) FROM idemload_recon_run)"
}
# leftovers: temporary files beside the discrepancies files d.*
leftovers() { find . -maxdepth 1 -name '.d.*.idemload-*' | wc -l; }
# held_while_writing ERR ARGS...: starts `idemload ARGS` in the background
# (its stderr to ERR) and stops it (SIGSTOP) once its temporary file beside
# d.ndjson holds lines; sets pid (to wait for), held (the idemload process
# stopped, to send SIGCONT to), and caught to 1 when it was stopped so.
held_while_writing() {
    local err=$1 f; shift
    "$IDEMLOAD" "$@" >/dev/null 2>"$err" &
    pid=$! held=$! caught=0
    for _ in $(seq 1 6000); do
        f=$(find . -maxdepth 1 -name '.d.ndjson.idemload-*' -size +0 | head -n 1)
        if [ -n "$f" ]; then
            held=$(real_pid $pid)
            kill -STOP $held && caught=1
            break
        fi
        kill -0 $pid 2>/dev/null || break
        sleep 0.01
    done
}
