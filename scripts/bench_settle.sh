# scripts/bench_settle.sh - the settle case of scripts/bench (sourced by it;
# uses its helpers: log, die, sql, newdb, drop, settle, now, sub, server_cpu,
# PSQL, IDL, work, seed, round).
#
# SPEC.md "Performance": `settle` takes at most 0.5 times its own
# hand-written comparison.  The scenario is tests/make_settle.py's, at
# --settle-rows payments (a twelfth a day on each of three channels, four
# days): Stripe's payout reconciliation and balance reports, WeChat Pay's
# trade bill and one 资金账单 a day, Alipay's 业务明细 and one 账务明细 a
# day (GBK), a camt.053 and an MT940 statement; the table holds the
# payments (imported once into a template, outside the timing).  Planted:
# a fee a cent off, a payout a unit short of its nets, a fund-bill row
# removed, a withdrawal never credited, a credit no batch explains and a
# payment no file lists: six lines, which both sides must find.
#
# The comparison by hand: one psql transaction, every file \copy'd into a
# TEMP table of its own columns (the WeChat files through grep and tr for
# their backticks and summary lines, the Alipay files through iconv and
# grep, as one would write it), the bank's credits from a plain CSV of
# the same credits (the generator's --bank-csv: a hand-writer does not
# parse camt.053 or MT940 in SQL); then in SQL the fee against the rate
# (rounded to the cent), each payout against the sum of its rows' nets,
# each fund bill's running balance (lag over the file's order), each batch
# against a credit of its amount within 0..3 days and each credit against
# a batch, and the table's active payments of the days that no file
# lists; both result sets \copy'd to files.  No validation of the files'
# own totals, no register, no per-day figures, no many-to-one matching.

settle_scenario() {  # settle_scenario PAYMENTS -> $st_dir with the files, $st_tpl prepared
    local per_day=$(( $1 / 12 ))
    [ "$per_day" -ge 2 ] || die "--settle-rows must be at least 24"
    st_dir=$root/build/bench-data/settle$((per_day * 12))-seed$seed
    if [ ! -f "$st_dir/scenario.json" ]; then
        log "generating the settle scenario ($((per_day * 12)) payments) in $st_dir"
        rm -rf "$st_dir"
        python3 tests/make_settle.py "$seed" "$st_dir" --per-day "$per_day" --bank-csv \
            --plant fee_off:wechat --plant batch_short:stripe --plant row_removed:wechat \
            --plant never_credited:alipay --plant stray_credit:stripe --plant table_only:stripe ||
            { rm -rf "$st_dir"; die "tests/make_settle.py failed"; }
    fi
    st_files=()
    local f
    for f in "$st_dir"/*; do
        case ${f##*/} in table.csv|scenario.json|bank-credits.csv) ;; *) st_files+=("$f") ;; esac
    done
    st_tpl=bench_settle_tpl
    newdb "$st_tpl"
    "${IDL_USE:-$IDL}" import -d "$st_tpl" "$st_dir/table.csv" >/dev/null 2>"$work/st_import.err" ||
        { cat "$work/st_import.err" >&2; die "import of the settle scenario's table failed"; }
    settle "$st_tpl"
    # the hand-writer's two filters
    printf '%s\n' "grep -h '^.[0-9][0-9][0-9][0-9]-' \"\$@\" | tr -d '\\140'" >"$work/wx_rows.sh"
    printf '%s\n' "cat \"\$@\" | iconv -f GBK -t UTF-8 | grep '^[0-9]'" >"$work/ap_rows.sh"
}

settle_copy() { dropdb --if-exists "$1" 2>/dev/null; createdb -T "$st_tpl" "$1" || die "createdb $1 failed"; }

# settle_idl -> $T; $st_found "LINES" (the discrepancy lines), $st_rss
settle_idl() {
    local db=bench_st_idl rc=0 t0
    settle_copy "$db"
    sql "$db" "CHECKPOINT" >/dev/null
    t0=$(now)
    IDEMLOAD_NOW=2026-11-21T12:00:00Z /usr/bin/time -f '%M' -o "$work/st_rss" "${IDL_USE:-$IDL}" settle \
        -d "$db" --set tenant_id=1 --fee-rate stripe=2.9% --fee-rate wechat=0.6% \
        --fee-rate alipay=0.6% --settle-window 0..3d --discrepancies "$work/st.ndjson" \
        "${st_files[@]}" >/dev/null 2>"$work/st.err" || rc=$?
    T=$(sub "$t0" "$(now)")
    st_rss=$(tail -n 1 "$work/st_rss")
    [ "$rc" -eq 5 ] || { tail -n 20 "$work/st.err" >&2; die "settle: exit $rc, expected 5 (discrepancies)"; }
    st_found=$(grep -c . "$work/st.ndjson")
    drop "$db"
}

# settle_hand -> $T; $st_hand_found "CHANNEL_LINES TABLE_LINES"
settle_hand() {
    local db=bench_st_hand d=$st_dir a b t0
    settle_copy "$db"
    local wx="sh $work/wx_rows.sh" ap="sh $work/ap_rows.sh" tx=$'E\'\\t\''
    local fund=("$d"/wechat-fund-*.csv) ledger=("$d"/alipay-ledger-*.csv)
    local q1="SELECT 'fee_mismatch', 'stripe', txn, round(gross * 0.029, 2), fee FROM sp
               WHERE cat = 'charge' AND fee <> round(gross * 0.029, 2)
              UNION ALL SELECT 'fee_mismatch', 'wechat', c6, round(c13::numeric * 0.006, 2), c23::numeric
               FROM wt WHERE c23::numeric <> round(c13::numeric * 0.006, 2)
              UNION ALL SELECT 'fee_mismatch', 'alipay', btrim(c1, $tx), round(c12::numeric * 0.006, 2),
                     -c23::numeric FROM at WHERE -c23::numeric <> round(c12::numeric * 0.006, 2)
              UNION ALL SELECT 'payout_mismatch', 'stripe', b.source, -b.net, s.net FROM sb b
               JOIN (SELECT payout, sum(net) AS net FROM sp GROUP BY payout) s ON s.payout = b.source
               WHERE b.cat = 'payout' AND -b.net <> s.net
              UNION ALL SELECT 'balance_break', 'wechat', biz, prev + amt, balance
               FROM (SELECT biz, balance, CASE WHEN dir = '收入' THEN amount ELSE -amount END AS amt,
                            lag(balance) OVER (ORDER BY n) AS prev FROM wf) x WHERE prev + amt <> balance
              UNION ALL SELECT 'balance_break', 'alipay', btrim(biz, $tx), prev + amt, balance
               FROM (SELECT biz, balance, inc - exp AS amt, lag(balance) OVER (ORDER BY n) AS prev
                       FROM al) x WHERE prev + amt <> balance
              UNION ALL SELECT 'payout_not_received', b.channel, b.id, b.amount, NULL FROM batch b
               WHERE NOT EXISTS (SELECT 1 FROM bank c WHERE c.currency = b.currency
                                    AND c.amount = b.amount AND c.day BETWEEN b.day AND b.day + 3)
              UNION ALL SELECT 'unexpected_deposit', 'bank', c.day::text, NULL, c.amount FROM bank c
               WHERE NOT EXISTS (SELECT 1 FROM batch b WHERE c.currency = b.currency
                                    AND c.amount = b.amount AND c.day BETWEEN b.day AND b.day + 3)"
    local q2="SELECT p.channel, p.out_trade_no, p.payload ->> 'amount' FROM payment_callback p
               WHERE p.deleted_at IS NULL AND p.tenant_id = 1 AND p.callback_type = 'pay'
                 AND p.received_at >= '2026-11-14 16:00:00+00' AND p.received_at < '2026-11-19 00:00:00+00'
                 AND NOT EXISTS (SELECT 1 FROM (SELECT 'stripe' AS channel, order_key FROM sp
                                  UNION ALL SELECT 'wechat', c7 FROM wt
                                  UNION ALL SELECT 'alipay', btrim(c2, $tx) FROM at) k
                                  WHERE k.channel = p.channel AND k.order_key = p.out_trade_no)"
    local cols27 cols25 i
    cols27=$(for i in $(seq 1 27); do printf 'c%d text,' "$i"; done)
    cols25=$(for i in $(seq 1 25); do printf 'c%d text,' "$i"; done)
    rm -f "$work/st_hand1.csv" "$work/st_hand2.csv"
    sql "$db" "CHECKPOINT" >/dev/null
    t0=$(now)
    "${PSQL[@]}" -d "$db" -c "BEGIN" \
        -c "CREATE TEMP TABLE sp (payout text, payout_at text, txn text, created text, avail text,
              currency text, gross numeric, fee numeric, net numeric, cat text, source text,
              descr text, order_key text) ON COMMIT DROP" \
        -c "\\copy sp FROM '$d/stripe-payouts.csv' (FORMAT csv, HEADER)" \
        -c "CREATE TEMP TABLE sb (txn text, created text, avail text, currency text, gross numeric,
              fee numeric, net numeric, cat text, source text, charge text, pi text, order_key text,
              descr text) ON COMMIT DROP" \
        -c "\\copy sb FROM '$d/stripe-balance.csv' (FORMAT csv, HEADER)" \
        -c "CREATE TEMP TABLE wt (${cols27%,}) ON COMMIT DROP" \
        -c "\\copy wt FROM PROGRAM '$wx $d/wechat-trade.csv' (FORMAT csv)" \
        -c "CREATE TEMP TABLE wf (t text, biz text, flow text, name text, kind text, dir text,
              amount numeric, balance numeric, who text, note text, ref text, n bigserial) ON COMMIT DROP" \
        -c "\\copy wf (t, biz, flow, name, kind, dir, amount, balance, who, note, ref) FROM PROGRAM '$wx ${fund[*]}' (FORMAT csv)" \
        -c "CREATE TEMP TABLE at (${cols25%,}) ON COMMIT DROP" \
        -c "\\copy at FROM PROGRAM '$ap $d/alipay-trade.csv' (FORMAT csv)" \
        -c "CREATE TEMP TABLE al (flow text, biz text, order_key text, item text, t text, other text,
              inc numeric, exp numeric, balance numeric, via text, kind text, note text,
              n bigserial) ON COMMIT DROP" \
        -c "\\copy al (flow, biz, order_key, item, t, other, inc, exp, balance, via, kind, note) FROM PROGRAM '$ap ${ledger[*]}' (FORMAT csv)" \
        -c "CREATE TEMP TABLE bank (day date, currency text, amount numeric) ON COMMIT DROP" \
        -c "\\copy bank FROM '$d/bank-credits.csv' (FORMAT csv, HEADER)" \
        -c "CREATE TEMP TABLE batch ON COMMIT DROP AS
              SELECT 'stripe' AS channel, source AS id, created::date AS day, 'USD' AS currency,
                     -net AS amount FROM sb WHERE cat = 'payout'
              UNION ALL SELECT 'wechat', biz, t::date, 'CNY', amount FROM wf WHERE kind = '提现'
              UNION ALL SELECT 'alipay', btrim(biz, $tx), t::date, 'CNY', exp FROM al WHERE kind = '提现'" \
        -c "\\copy (${q1//$'\n'/ }) TO '$work/st_hand1.csv' (FORMAT csv)" \
        -c "\\copy (${q2//$'\n'/ }) TO '$work/st_hand2.csv' (FORMAT csv)" \
        -c "COMMIT" >/dev/null 2>"$work/psql.err" ||
        { cat "$work/psql.err" >&2; die "the settle comparison by hand failed"; }
    T=$(sub "$t0" "$(now)")
    a=$(wc -l <"$work/st_hand1.csv"); b=$(wc -l <"$work/st_hand2.csv")
    st_hand_found="$a $b"
    drop "$db"
}
