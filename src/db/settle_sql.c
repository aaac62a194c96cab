/*
 * settle_sql.c - the statements of `idemload settle` (see settle_sql.h).
 *
 * The files' rows are COPYed as text into idemload_settle_raw, typed once
 * into idemload_settle_r (money numeric, never a float; each row's day in
 * the channel's zone, a bank entry's booking date), and every check is
 * one INSERT into idemload_settle_disc: only the discrepancies and the
 * per-day figures come back to the client.  Money is compared per
 * currency and never added across currencies: every sum is grouped by
 * currency.
 */
#include "db/settle_sql.h"

const char SQL_SETTLE_SETUP[] =
    "CREATE TEMP TABLE idemload_settle_raw ("
    "  file_no integer NOT NULL, seq bigint NOT NULL, line bigint NOT NULL, side text NOT NULL,"
    "  kind text NOT NULL, tenant text NOT NULL, channel text NOT NULL, account text,"
    "  txn_id text NOT NULL, order_key text, batch_id text, time text NOT NULL,"
    "  value_date text, currency text NOT NULL, gross text, fee text, net text NOT NULL,"
    "  balance text, text text, ts_s bigint, lday date, off_s integer);"
    "CREATE TEMP TABLE idemload_settle_rate (channel text PRIMARY KEY, rate text NOT NULL,"
    "  pct numeric NOT NULL, fixed numeric NOT NULL);"
    "CREATE TEMP TABLE idemload_settle_cfg (w_min interval, w_max interval, grace interval,"
    "  p_from date, p_to date, has_bank boolean, has_channel boolean);"
    "CREATE TEMP TABLE idemload_settle_disc (category text NOT NULL, tenant_id bigint NOT NULL,"
    "  channel text NOT NULL, day date NOT NULL, subject text, currency text,"
    "  expected numeric, actual numeric, file_no integer, line bigint, detail jsonb,"
    "  pending boolean NOT NULL DEFAULT false);"
    "CREATE TEMP TABLE idemload_settle_m (tenant_id bigint, channel text, batch_id text,"
    "  currency text, credit text, credit_day date, how text)";

const char SQL_SETTLE_COPY[] = "COPY idemload_settle_raw FROM STDIN";

/* $1 channel, $2 the rate as given, $3 percent, $4 fixed amount. */
const char SQL_SETTLE_RATE[] =
    "INSERT INTO idemload_settle_rate VALUES ($1, $2, $3::numeric, $4::numeric)";

/* The rows typed, and counted per tenant, channel, day and side
 * (idemload_settle_n: the period, the days covered and their counts are
 * read from it, not from every row again): money as numeric (the client
 * checked each is a decimal), the day of a channel row in the session's
 * zone, a bank entry's its booking date; the currency's exponent beside.  The client
 * sends the readers' shapes of a time taken apart (settle_stage.c
 * time_parts: ts_s, lday, off_s), read here at a fraction of what reading
 * "2026-11-15T10:52:45+08:00" as a timestamptz costs; any other text is
 * read from itself, through idemload_time (whose error trap costs a
 * subtransaction a row). */
const char SQL_SETTLE_ROWS[] =
    "CREATE TEMP TABLE idemload_settle_r AS "
    "SELECT r.file_no, r.seq, r.line, r.side, r.kind, r.tenant::bigint AS tenant_id, r.channel,"
    "       coalesce(r.account, '') AS account, r.txn_id, r.order_key, r.batch_id,"
    "       upper(r.currency) AS currency, r.gross::numeric AS gross, r.fee::numeric AS fee,"
    "       r.net::numeric AS net, r.balance::numeric AS balance, r.text, t.ts,"
    "       CASE WHEN r.side = 'channel' THEN left(r.value_date, 10)::date END AS batch_day,"
    "       coalesce(r.lday,"
    "                CASE WHEN r.time ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'"
    "                     THEN left(r.time, 10)::date END,"
    "                (t.ts AT TIME ZONE current_setting('idemload.recon_zone'))::date) AS day,"
    "       CASE WHEN r.off_s IS NOT NULL THEN r.off_s * interval '1 second'"
    "            WHEN r.time ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9:.]+"
    "([Zz]|[+-][0-9][0-9](:?[0-9][0-9])?)$'"
    "            THEN left(replace(r.time, 'T', ' '), 19)::timestamp - (t.ts AT TIME ZONE 'UTC')"
    "            ELSE interval '0' END AS off,"
    "       coalesce(x.exponent, 2) AS e "
    "FROM idemload_settle_raw r"
    " CROSS JOIN LATERAL (SELECT CASE"
    "       WHEN r.ts_s IS NOT NULL THEN timestamptz 'epoch' + r.ts_s * interval '1 second'"
    "       WHEN r.side = 'bank' AND r.time ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$'"
    "       THEN r.time::date::timestamp AT TIME ZONE 'UTC'"
    "       ELSE pg_temp.idemload_time(r.time) END AS ts) t"
    " LEFT JOIN idemload_recon_ccy x ON x.code = upper(r.currency);"
    "ANALYZE idemload_settle_r;"
    "CREATE TEMP TABLE idemload_settle_n AS SELECT tenant_id, channel, day, side, count(*) AS n"
    "  FROM idemload_settle_r GROUP BY 1, 2, 3, 4;"
    "ANALYZE idemload_settle_n";

/* $1 $2 the window, $3 the grace (seconds), $4 $5 --period (NULL: the
 * rows' days).  Returns the period and whether a side is absent (no
 * matching without both), and how many rows have no day. */
const char SQL_SETTLE_PERIOD[] =
    "INSERT INTO idemload_settle_cfg "
    "SELECT ($1 || ' seconds')::interval, ($2 || ' seconds')::interval,"
    "       ($3 || ' seconds')::interval,"
    "       coalesce($4::date, min(day)), coalesce($5::date, max(day)),"
    "       bool_or(side = 'bank'), bool_or(side = 'channel') "
    "FROM idemload_settle_n "
    "RETURNING p_from::text, p_to::text, coalesce(has_bank, false), coalesce(has_channel, false),"
    "          (SELECT coalesce(sum(n), 0) FROM idemload_settle_n WHERE day IS NULL)";

#define IN_PERIOD(d) d " BETWEEN (SELECT p_from FROM idemload_settle_cfg)" \
                     " AND (SELECT p_to FROM idemload_settle_cfg)"

/* fee_mismatch against --fee-rate: the fee a payment should have been
 * charged is its gross times the percentage rounded half up to the
 * currency's minor unit (PostgreSQL's round() of a numeric rounds half
 * away from zero, and a gross is positive), plus the fixed part.  One
 * line per payment and fee charged, whichever files list it (the first
 * listing).  The fee wanted is worked out once per payment (w: its first
 * listing, sorted bytewise, which tells keys apart as any collation
 * does), and only the listings charging another reach the final sort.  A
 * fee row names its payment by transaction id or by order key: two joins
 * on one equality each (hashed), not one join on an OR, which the planner
 * can only run as a loop over every pair of rows. */
const char SQL_SETTLE_FEE_RATE[] =
    "INSERT INTO idemload_settle_disc (category, tenant_id, channel, day, subject, currency,"
    "  expected, actual, file_no, line, detail) "
    "WITH w AS MATERIALIZED ("
    "       SELECT p.*, k.rate,"
    "              CASE WHEN k.channel IS NOT NULL"
    "                   THEN round(abs(p.gross) * k.pct / 100, p.e) + k.fixed"
    "                   ELSE p.fee END AS want"
    "         FROM (SELECT DISTINCT ON (r.tenant_id, r.channel COLLATE \"C\","
    "                                   r.txn_id COLLATE \"C\")"
    "                      r.tenant_id, r.channel, r.txn_id, r.order_key, r.gross, r.fee, r.e,"
    "                      r.day, r.currency"
    "                 FROM idemload_settle_r r"
    "                WHERE r.side = 'channel' AND r.kind = 'payment' AND r.gross IS NOT NULL"
    "                  AND r.fee IS NOT NULL"
    "                ORDER BY r.tenant_id, r.channel COLLATE \"C\", r.txn_id COLLATE \"C\","
    "                         r.file_no, r.seq) p"
    "         LEFT JOIN idemload_settle_rate k ON k.channel = p.channel"
    "        WHERE " IN_PERIOD("p.day") "),"
    " f AS (SELECT w.*, r.fee AS charged, r.file_no, r.seq, r.line"
    "         FROM w JOIN idemload_settle_r r ON r.tenant_id = w.tenant_id"
    "          AND r.channel = w.channel AND r.txn_id = w.txn_id AND r.kind = 'payment'"
    "          AND r.fee IS NOT NULL"
    "        WHERE r.fee <> w.want"
    "       UNION ALL"
    "       SELECT w.*, coalesce(r.fee, -r.net), r.file_no, r.seq, r.line"
    "         FROM w JOIN idemload_settle_r r ON r.tenant_id = w.tenant_id"
    "          AND r.channel = w.channel AND r.side = 'channel' AND r.kind = 'fee'"
    "          AND r.order_key = w.txn_id"
    "        WHERE coalesce(r.fee, -r.net) <> w.want"
    "       UNION ALL"
    "       SELECT w.*, coalesce(r.fee, -r.net), r.file_no, r.seq, r.line"
    "         FROM w JOIN idemload_settle_r r ON r.tenant_id = w.tenant_id"
    "          AND r.channel = w.channel AND r.side = 'channel' AND r.kind = 'fee'"
    "          AND r.order_key = w.order_key AND r.order_key IS DISTINCT FROM w.txn_id"
    "        WHERE coalesce(r.fee, -r.net) <> w.want) "
    "SELECT DISTINCT ON (f.tenant_id, f.channel, f.txn_id, f.charged)"
    "       'fee_mismatch', f.tenant_id, f.channel, f.day, f.txn_id, f.currency, f.want,"
    "       f.charged, f.file_no, f.line,"
    "       jsonb_build_object('gross', pg_temp.idemload_render(f.gross, f.e), 'rate', f.rate,"
    "                          'order_key', f.order_key,"
    "                          'expected_from', CASE WHEN f.rate IS NULL THEN 'the first file "
    "listing the payment' ELSE 'the rate' END) "
    "FROM f ORDER BY f.tenant_id, f.channel, f.txn_id, f.charged, f.file_no, f.seq";

/* payout_mismatch: a batch (a payout row, once per batch whichever files
 * list it) against the sum of the nets of the rows linked to it by
 * batch_id (each row once by its txn_id), per currency; the remainder is
 * labelled by the kinds of the linked rows that are no payment, with
 * their sums.  A batch no row links to is not compared (nothing to
 * compare it with). */
const char SQL_SETTLE_PAYOUT[] =
    "INSERT INTO idemload_settle_disc (category, tenant_id, channel, day, subject, currency,"
    "  expected, actual, file_no, line, detail) "
    "WITH po AS (SELECT DISTINCT ON (r.tenant_id, r.channel, r.batch_id, r.currency) r.*"
    "              FROM idemload_settle_r r"
    "             WHERE r.side = 'channel' AND r.kind = 'payout' AND r.batch_id IS NOT NULL"
    "             ORDER BY r.tenant_id, r.channel, r.batch_id, r.currency, r.file_no, r.seq),"
    " li AS (SELECT DISTINCT ON (r.tenant_id, r.channel, r.txn_id) r.*"
    "          FROM idemload_settle_r r"
    "         WHERE r.side = 'channel' AND r.kind <> 'payout' AND r.batch_id IS NOT NULL"
    "         ORDER BY r.tenant_id, r.channel, r.txn_id, r.file_no, r.seq),"
    " k AS (SELECT tenant_id, channel, batch_id, currency, kind, count(*) AS n, sum(net) AS net"
    "         FROM li GROUP BY 1, 2, 3, 4, 5),"
    " s AS (SELECT tenant_id, channel, batch_id, currency, sum(net) AS net,"
    "              jsonb_object_agg(kind, jsonb_build_object('rows', n, 'net', net::text)"
    "                               ORDER BY kind) AS kinds,"
    "              string_agg(CASE kind WHEN 'refund' THEN 'refunds' WHEN 'dispute' THEN 'disputes'"
    "                                   WHEN 'adjustment' THEN 'adjustments' WHEN 'fee' THEN 'fees'"
    "                         END, ', ' ORDER BY kind) AS label"
    "         FROM k GROUP BY 1, 2, 3, 4) "
    "SELECT 'payout_mismatch', po.tenant_id, po.channel, po.day, po.batch_id, po.currency,"
    "       s.net, -po.net, po.file_no, po.line,"
    "       jsonb_build_object('linked', s.kinds,"
    "                          'remainder', coalesce(s.label, 'unexplained: only payments linked')) "
    "FROM po JOIN s USING (tenant_id, channel, batch_id, currency) "
    "WHERE s.net <> -po.net AND " IN_PERIOD("po.day");

/* balance_break: the rows that state a balance, per tenant, channel,
 * account and currency, through every file in time order: each is the
 * previous balance plus its net.  Rows of one time (a payment and its fee)
 * keep their file's order, read upwards in a file listed newest first
 * (Alipay's 账务明细 export).  The break names the row before it (the
 * money went missing between the two).  Each row once by its txn_id (the
 * columns used only, sorted bytewise: the sort is most of the cost). */
const char SQL_SETTLE_BALANCE[] =
    "INSERT INTO idemload_settle_disc (category, tenant_id, channel, day, subject, currency,"
    "  expected, actual, file_no, line, detail) "
    "SELECT 'balance_break', q.tenant_id, q.channel, q.day, q.txn_id, q.currency,"
    "       q.prev + q.net, q.balance, q.file_no, q.line,"
    "       jsonb_build_object('after', q.prev_txn, 'after_line', q.prev_line,"
    "                          'previous_balance', q.prev::text, 'net', q.net::text,"
    "                          'account', q.account) "
    "FROM (SELECT u.*, lag(u.balance) OVER w AS prev, lag(u.txn_id) OVER w AS prev_txn,"
    "             lag(u.line) OVER w AS prev_line"
    "        FROM (SELECT DISTINCT ON (r.tenant_id, r.channel COLLATE \"C\","
    "                                  r.account COLLATE \"C\", r.txn_id COLLATE \"C\")"
    "                     r.tenant_id, r.channel, r.account, r.txn_id, r.currency, r.ts, r.day,"
    "                     r.file_no, r.seq, r.line, r.net, r.balance, d.dir"
    "                FROM idemload_settle_r r"
    "                JOIN (SELECT f.file_no, CASE WHEN min(f.ts) FILTER (WHERE f.seq = f.lo)"
    "                                           > min(f.ts) FILTER (WHERE f.seq = f.hi)"
    "                                      THEN -1 ELSE 1 END AS dir"
    "                        FROM (SELECT r2.file_no, r2.seq, r2.ts,"
    "                                     min(r2.seq) OVER (PARTITION BY r2.file_no) AS lo,"
    "                                     max(r2.seq) OVER (PARTITION BY r2.file_no) AS hi"
    "                                FROM idemload_settle_r r2 WHERE r2.balance IS NOT NULL) f"
    "                       GROUP BY f.file_no) d ON d.file_no = r.file_no"
    "               WHERE r.balance IS NOT NULL"
    "               ORDER BY r.tenant_id, r.channel COLLATE \"C\", r.account COLLATE \"C\","
    "                        r.txn_id COLLATE \"C\", r.file_no, r.seq) u"
    "      WINDOW w AS (PARTITION BY u.tenant_id, u.channel, u.account, u.currency"
    "                   ORDER BY u.ts, u.file_no, u.seq * u.dir)) q "
    "WHERE q.prev IS NOT NULL AND q.prev + q.net <> q.balance AND " IN_PERIOD("q.day");

/* The batches to be credited: every payout once (its batch_id, or its own
 * id), its amount positive; and a batch the rows link to (batch_id) that no
 * payout row lists, where they state its date (Stripe's payout
 * reconciliation report: automatic_payout_effective_at, the day it is
 * expected in the bank): its amount the sum of their nets, each row once
 * by its txn_id, its window counted from that date. */
const char SQL_SETTLE_BATCHES[] =
    "CREATE TEMP TABLE idemload_settle_b AS "
    "(SELECT DISTINCT ON (r.tenant_id, r.channel, coalesce(r.batch_id, r.txn_id), r.currency)"
    "        r.tenant_id, r.channel, coalesce(r.batch_id, r.txn_id) AS batch_id, r.currency,"
    "        r.day, r.ts, r.off, -r.net AS amount, r.file_no, r.line, false AS registered "
    "   FROM idemload_settle_r r WHERE r.side = 'channel' AND r.kind = 'payout' "
    "  ORDER BY r.tenant_id, r.channel, coalesce(r.batch_id, r.txn_id), r.currency, r.file_no,"
    "           r.seq) "
    "UNION ALL "
    "SELECT l.tenant_id, l.channel, l.batch_id, l.currency, max(l.batch_day),"
    "       max(l.batch_day)::timestamp AT TIME ZONE 'UTC', interval '0', sum(l.net),"
    "       min(l.file_no), min(l.line), false "
    "  FROM (SELECT DISTINCT ON (r.tenant_id, r.channel, r.txn_id) r.*"
    "          FROM idemload_settle_r r"
    "         WHERE r.side = 'channel' AND r.kind <> 'payout' AND r.batch_id IS NOT NULL"
    "           AND r.batch_day IS NOT NULL"
    "         ORDER BY r.tenant_id, r.channel, r.txn_id, r.file_no, r.seq) l "
    " WHERE NOT EXISTS (SELECT 1 FROM idemload_settle_r p"
    "                    WHERE p.side = 'channel' AND p.kind = 'payout'"
    "                      AND p.tenant_id = l.tenant_id AND p.channel = l.channel"
    "                      AND coalesce(p.batch_id, p.txn_id) = l.batch_id) "
    " GROUP BY l.tenant_id, l.channel, l.batch_id, l.currency";

/* The batches earlier runs left pending (the register), which no file of
 * this run lists: a bank statement of a later day may credit them. */
const char SQL_SETTLE_BATCHES_REGISTER[] =
    "INSERT INTO idemload_settle_b "
    "SELECT i.tenant_id, i.channel, i.subject, i.currency, i.day,"
    "       i.day::timestamp AT TIME ZONE 'UTC', interval '0', i.expected::numeric, NULL, NULL,"
    "       true "
    "FROM {item} i WHERE i.state = 'pending' AND i.category = 'payout_not_received'"
    "  AND NOT EXISTS (SELECT 1 FROM idemload_settle_b b WHERE b.tenant_id = i.tenant_id"
    "      AND b.channel = i.channel AND b.batch_id = i.subject AND b.currency = i.currency)";

/* The bank's credits, each once (overlapping statements list it twice). */
const char SQL_SETTLE_CREDITS[] =
    "CREATE TEMP TABLE idemload_settle_c AS "
    "SELECT DISTINCT ON (r.tenant_id, r.account, r.txn_id, r.currency, r.day, r.net)"
    "       r.tenant_id, r.account, r.txn_id, r.batch_id AS ref, r.currency, r.day,"
    "       r.net AS amount, r.file_no, r.line, r.text "
    "FROM idemload_settle_r r WHERE r.side = 'bank' AND r.kind = 'bank_credit' "
    "ORDER BY r.tenant_id, r.account, r.txn_id, r.currency, r.day, r.net, r.file_no, r.seq";

/* A credit's booking day from the day the window's start falls on to the
 * window's end (a bank's booking date has no time of day). */
#define IN_WINDOW(c, b) c ".day::timestamp BETWEEN date_trunc('day', " b ".day::timestamp" \
    " + (SELECT w_min FROM idemload_settle_cfg))" \
    " AND " b ".day::timestamp + (SELECT w_max FROM idemload_settle_cfg)"
#define UNMATCHED_B(b) "NOT EXISTS (SELECT 1 FROM idemload_settle_m m WHERE m.tenant_id = " \
    b ".tenant_id AND m.channel = " b ".channel AND m.batch_id = " b ".batch_id" \
    " AND m.currency = " b ".currency)"
#define UNMATCHED_C(c) "NOT EXISTS (SELECT 1 FROM idemload_settle_m m WHERE m.tenant_id = " \
    c ".tenant_id AND m.credit = " c ".txn_id)"

/* First: a credit whose remittance reference names the batch, for the
 * batch's amount and currency. */
const char SQL_SETTLE_MATCH_REF[] =
    "INSERT INTO idemload_settle_m "
    "SELECT DISTINCT ON (b.tenant_id, b.channel, b.batch_id, b.currency)"
    "       b.tenant_id, b.channel, b.batch_id, b.currency, c.txn_id, c.day, 'reference' "
    "FROM idemload_settle_b b JOIN idemload_settle_c c ON c.tenant_id = b.tenant_id"
    "  AND c.currency = b.currency AND c.amount = b.amount AND c.ref = b.batch_id "
    "ORDER BY b.tenant_id, b.channel, b.batch_id, b.currency, c.day, c.txn_id";

/* Then one batch to one credit of the same amount and currency within the
 * window: among the batches and credits of one amount, the k-th batch by
 * day with the k-th credit by day (both still unmatched), kept when the
 * credit falls in the batch's window. */
const char SQL_SETTLE_MATCH_ONE[] =
    "INSERT INTO idemload_settle_m "
    "SELECT b.tenant_id, b.channel, b.batch_id, b.currency, c.txn_id, c.day, 'amount' "
    "FROM (SELECT b.*, row_number() OVER (PARTITION BY b.tenant_id, b.currency, b.amount"
    "                                     ORDER BY b.ts, b.batch_id) AS k"
    "        FROM idemload_settle_b b WHERE " UNMATCHED_B("b") ") b "
    "JOIN (SELECT c.*, row_number() OVER (PARTITION BY c.tenant_id, c.currency, c.amount"
    "                                     ORDER BY c.day, c.txn_id) AS k"
    "        FROM idemload_settle_c c WHERE " UNMATCHED_C("c") ") c"
    "  ON c.tenant_id = b.tenant_id AND c.currency = b.currency AND c.amount = b.amount"
    " AND c.k = b.k "
    "WHERE " IN_WINDOW("c", "b");

/* Last, many to one: two to four still unmatched batches of one channel
 * within a credit's window against that credit, of their sum (the first
 * such set by the credit's day).  The sets are searched only for a credit
 * with at most SETTLE_MANY_MAX smaller batches in its window: the search
 * grows as the fourth power of that number (80 batches: 1.6M sets, 4 s;
 * 320 would take hours), and a credit beyond it stays unexpected and its
 * batches not received, both reported. */
#define SETTLE_MANY_MAX "20"
const char SQL_SETTLE_MATCH_DAY[] =
    "INSERT INTO idemload_settle_m "
    "WITH RECURSIVE b AS (SELECT b.*, row_number() OVER (ORDER BY b.ts, b.batch_id) AS r"
    "                       FROM idemload_settle_b b WHERE b.amount > 0 AND " UNMATCHED_B("b") "),"
    " c AS (SELECT c.* FROM idemload_settle_c c WHERE " UNMATCHED_C("c")
    "          AND (SELECT count(*) FROM b WHERE b.tenant_id = c.tenant_id"
    "                 AND b.currency = c.currency AND b.amount < c.amount"
    "                 AND " IN_WINDOW("c", "b") ") <= " SETTLE_MANY_MAX "),"
    " s AS (SELECT c.txn_id, c.day AS cday, c.amount AS camount, b.tenant_id, b.channel,"
    "              b.currency, b.r AS last, ARRAY[b.r] AS rs, b.amount AS total, 1 AS n"
    "         FROM c JOIN b ON b.tenant_id = c.tenant_id AND b.currency = c.currency"
    "          AND b.amount < c.amount AND " IN_WINDOW("c", "b")
    "       UNION ALL"
    "       SELECT s.txn_id, s.cday, s.camount, s.tenant_id, s.channel, s.currency, b.r,"
    "              s.rs || b.r, s.total + b.amount, s.n + 1"
    "         FROM s JOIN b ON b.tenant_id = s.tenant_id AND b.channel = s.channel"
    "          AND b.currency = s.currency AND b.r > s.last AND s.n < 4"
    "          AND s.total + b.amount <= s.camount"
    "          AND s.cday::timestamp BETWEEN date_trunc('day', b.day::timestamp"
    "              + (SELECT w_min FROM idemload_settle_cfg))"
    "              AND b.day::timestamp + (SELECT w_max FROM idemload_settle_cfg)),"
    " pick AS (SELECT * FROM s WHERE s.n >= 2 AND s.total = s.camount"
    "           ORDER BY s.cday, s.txn_id, s.n, s.rs LIMIT 1) "
    "SELECT b.tenant_id, b.channel, b.batch_id, b.currency, pick.txn_id, pick.cday, 'several' "
    "FROM pick JOIN b ON b.r = ANY (pick.rs)";

/* A batch of this run no credit matched: pending while its window is open
 * (now before the end of the window's last day in the zone), else
 * payout_not_received.  Only when a bank statement was read. */
const char SQL_SETTLE_NOT_RECEIVED[] =
    "INSERT INTO idemload_settle_disc (category, tenant_id, channel, day, subject, currency,"
    "  expected, actual, file_no, line, detail, pending) "
    "SELECT 'payout_not_received', b.tenant_id, b.channel, b.day, b.batch_id, b.currency,"
    "       b.amount, NULL, b.file_no, b.line,"
    "       jsonb_build_object('window_ends', (b.day::timestamp"
    "         + (SELECT w_max FROM idemload_settle_cfg))::date::text),"
    "       pg_temp.idemload_now() < ((b.day::timestamp + (SELECT w_max FROM idemload_settle_cfg)"
    "         + interval '1 day' - b.off) AT TIME ZONE 'UTC') "
    "FROM idemload_settle_b b "
    "WHERE NOT b.registered AND " UNMATCHED_B("b") " AND " IN_PERIOD("b.day");

/* A credit no batch matched: unexpected_deposit (channel "bank"), when a
 * channel's file was read too (a bank statement alone has no batches). */
const char SQL_SETTLE_UNEXPECTED[] =
    "INSERT INTO idemload_settle_disc (category, tenant_id, channel, day, subject, currency,"
    "  expected, actual, file_no, line, detail) "
    "SELECT 'unexpected_deposit', c.tenant_id, 'bank', c.day, c.txn_id, c.currency, NULL,"
    "       c.amount, c.file_no, c.line,"
    "       jsonb_build_object('reference', c.ref, 'text', c.text, 'account', c.account) "
    "FROM idemload_settle_c c "
    "WHERE " UNMATCHED_C("c") " AND " IN_PERIOD("c.day");

/* unsettled_payment: an active payment row of the table ($1: the kind's
 * names, a JSON array) of the (tenant, channel) pairs whose files link
 * rows to batches, its time (--facts, else received_at) in the period,
 * that no channel row (by its order key) links to a batch: pending until
 * the end of its day plus the channel's delay (--grace), then a
 * discrepancy.  Its amount and currency read where --facts says.
 *
 * In steps, on one server as on Citus (each statement below says its
 * own): the pairs, with the bounds of received_at that put a row's day in
 * the period (SQL_SETTLE_UNSETTLED_PREP), and the keys the files settle
 * (_LINKED).  On one server then the keys of the pairs' rows within the
 * bounds (_KEYS), analyzed, so that the anti join of two analyzed tables
 * is hashed whatever the server knows of the user's table (never
 * analyzed, the planner reads one row there and loops: 11 s at 12k
 * payments; a range filter's guess made it probe an index once per row:
 * 5 s at 1M); then the rows of the keys no file settles, read back by the
 * table's unique index.  SETTLE_UNSETTLED takes those rows (src: active,
 * of the pairs, within the bounds, none settled) and reads each one's
 * facts. */
#define SETTLE_UNSETTLED(src) \
    "INSERT INTO idemload_settle_disc (category, tenant_id, channel, day, subject, currency," \
    "  expected, actual, file_no, line, detail, pending) " \
    "SELECT 'unsettled_payment', q.tenant_id, q.channel, q.day, q.out_trade_no, q.currency," \
    "       pg_temp.idemload_money(q.amount_text, q.amount_minor, q.amount_abs," \
    "                              coalesce(x.exponent, 2), q.currency)," \
    "       NULL, NULL, NULL, jsonb_build_object('callback_type', q.callback_type," \
    "         'time', pg_temp.idemload_ts_text(q.time))," \
    "       pg_temp.idemload_now() < q.time + (SELECT grace FROM idemload_settle_cfg) " \
    "FROM (SELECT t.tenant_id, t.channel, t.out_trade_no, t.callback_type," \
    "             coalesce(f.amount_const, t.payload #>> f.amount_path) AS amount_text," \
    "             f.amount_minor, f.amount_abs," \
    "             upper(nullif(btrim(coalesce(f.currency_const, t.payload #>> f.currency_path))," \
    "                          '')) AS currency, tm.time," \
    "             ((tm.time AT TIME ZONE 'UTC') + p.off)::date AS day" \
    "        FROM " src " t" \
    "        JOIN idemload_settle_up p ON p.tenant_id = t.tenant_id AND p.channel = t.channel" \
    "        CROSS JOIN LATERAL (SELECT tf.* FROM idemload_recon_tfacts tf" \
    "               WHERE (tf.channel IS NULL OR tf.channel = t.channel)" \
    "                 AND (tf.kind IS NULL OR tf.kind = split_part(t.callback_type, ':', 1))" \
    "               ORDER BY tf.channel IS NULL, tf.kind IS NULL LIMIT 1) f" \
    "        CROSS JOIN LATERAL (SELECT coalesce(CASE WHEN f.time_path IS NOT NULL" \
    "               THEN pg_temp.idemload_time(t.payload #>> f.time_path) END," \
    "               t.received_at) AS time) tm" \
    "       WHERE split_part(t.callback_type, ':', 1) IN" \
    "             (SELECT jsonb_array_elements_text($1::jsonb))) q " \
    "LEFT JOIN idemload_recon_ccy x ON x.code = q.currency " \
    "WHERE " IN_PERIOD("q.day")
const char SQL_SETTLE_UNSETTLED[] = SETTLE_UNSETTLED(
    "(SELECT t.* FROM {table} t"
    "   JOIN (SELECT * FROM idemload_settle_tk k WHERE NOT EXISTS (SELECT 1"
    "           FROM idemload_settle_lk l WHERE l.tenant_id = k.tenant_id"
    "            AND l.channel = k.channel AND l.out_trade_no = k.out_trade_no)) u"
    "     ON u.tenant_id = t.tenant_id AND u.channel = t.channel"
    "    AND u.out_trade_no = t.out_trade_no AND u.callback_type = t.callback_type"
    "  WHERE {active})");

/* The keys of the pairs' active payments within the bounds (one server). */
const char SQL_SETTLE_UNSETTLED_KEYS[] =
    "CREATE TEMP TABLE idemload_settle_tk AS "
    "SELECT t.tenant_id, t.channel, t.out_trade_no, t.callback_type FROM {table} t "
    "JOIN idemload_settle_up p ON p.tenant_id = t.tenant_id AND p.channel = t.channel "
    "WHERE {active} AND split_part(t.callback_type, ':', 1) = ANY (p.kinds)"
    "  AND (p.t_from IS NULL OR (t.received_at >= p.t_from AND t.received_at < p.t_to));"
    "ANALYZE idemload_settle_tk";

/* The same on a Citus target (SPEC.md: as for reconcile), in three steps,
 * so that the table is read on the workers, shard by shard, by a join with
 * plain equalities only (Citus pushes down no LATERAL with a LIMIT, and
 * pg_temp's functions are not on the workers): first, here (on one server
 * too), the pairs that link rows to batches, with the kinds ($1) and,
 * when no --facts level of the channel reads a row's time from its
 * payload, the bounds of received_at that put a row's day in the period
 * (a constant per pair); and the order keys the files settle.  Then the
 * pairs' active payments that no file settles, within those bounds, from
 * the shards into a temporary table (the settled keys and the pairs
 * shipped to the workers as intermediate results); then
 * SQL_SETTLE_UNSETTLED_DISTRIBUTED over it, here. */
const char SQL_SETTLE_UNSETTLED_PREP[] =
    "CREATE TEMP TABLE idemload_settle_up AS "
    "SELECT p.tenant_id, p.channel, p.off,"
    "       (SELECT array_agg(k) FROM jsonb_array_elements_text($1::jsonb) k) AS kinds,"
    "       CASE WHEN NOT p.timed THEN ((SELECT p_from FROM idemload_settle_cfg)::timestamp"
    "            - p.off) AT TIME ZONE 'UTC' END AS t_from,"
    "       CASE WHEN NOT p.timed THEN (((SELECT p_to FROM idemload_settle_cfg) + 1)::timestamp"
    "            - p.off) AT TIME ZONE 'UTC' END AS t_to "
    "FROM (SELECT r.tenant_id, r.channel, min(r.off) AS off,"
    "             EXISTS (SELECT 1 FROM idemload_recon_tfacts tf WHERE tf.time_path IS NOT NULL"
    "                 AND (tf.channel IS NULL OR tf.channel = r.channel)) AS timed"
    "        FROM idemload_settle_r r WHERE r.side = 'channel' GROUP BY 1, 2) p";
/* The order keys the files settle: a payment row linked to a batch or
 * listed in a running balance, by its own order key, or by the order key
 * of the row whose transaction id it names.  A key may be listed twice:
 * both uses are anti joins, which do not mind. */
const char SQL_SETTLE_UNSETTLED_LINKED[] =
    "CREATE TEMP TABLE idemload_settle_lk AS "
    "SELECT r.tenant_id, r.channel, r.order_key AS out_trade_no FROM idemload_settle_r r"
    " WHERE r.side = 'channel' AND r.kind = 'payment' AND r.order_key IS NOT NULL"
    "   AND (r.batch_id IS NOT NULL OR r.balance IS NOT NULL) "
    "UNION ALL "
    "SELECT p2.tenant_id, p2.channel, p2.order_key FROM idemload_settle_r r"
    "  JOIN idemload_settle_r p2 ON p2.tenant_id = r.tenant_id AND p2.channel = r.channel"
    "   AND p2.txn_id = r.order_key"
    " WHERE r.side = 'channel' AND r.kind = 'payment' AND r.balance IS NOT NULL"
    "   AND p2.order_key IS NOT NULL;"
    "ANALYZE idemload_settle_lk; ANALYZE idemload_settle_up";
const char SQL_SETTLE_UNSETTLED_ROWS_DISTRIBUTED[] =
    "CREATE TEMP TABLE idemload_settle_t AS "
    "SELECT t.tenant_id, t.channel, t.out_trade_no, t.callback_type, t.payload, t.received_at "
    "FROM {table} t "
    "JOIN idemload_settle_up p ON p.tenant_id = t.tenant_id AND p.channel = t.channel "
    "LEFT JOIN idemload_settle_lk k ON k.tenant_id = t.tenant_id AND k.channel = t.channel"
    "  AND k.out_trade_no = t.out_trade_no "
    "WHERE {active} AND k.tenant_id IS NULL"
    "  AND split_part(t.callback_type, ':', 1) = ANY (p.kinds)"
    "  AND (p.t_from IS NULL OR (t.received_at >= p.t_from AND t.received_at < p.t_to));"
    "ANALYZE idemload_settle_t";
/* (The keys the files settle were left out on the workers already.) */
const char SQL_SETTLE_UNSETTLED_DISTRIBUTED[] =
    SETTLE_UNSETTLED("idemload_settle_t");

/* The days this run covers: those of its rows in the period, and those
 * of its discrepancies. */
#define COVERED "(SELECT tenant_id, channel, day FROM idemload_settle_n WHERE " \
    IN_PERIOD("day") " UNION SELECT tenant_id, channel, day FROM idemload_settle_disc)"
/* The rows read of day d's tenant, channel and day. */
#define DAY_ROWS(d) "coalesce((SELECT sum(n.n) FROM idemload_settle_n n WHERE n.tenant_id = " \
    d ".tenant_id AND n.channel = " d ".channel AND n.day = " d ".day), 0)::bigint"

/* Per tenant, channel and day: the rows read per side, each category's
 * count, the pending, and the payouts matched. */
const char SQL_SETTLE_DAYS[] =
    "WITH d AS " COVERED " "
    "SELECT d.tenant_id, d.channel, d.day::text, " DAY_ROWS("d") ","
    "       (SELECT coalesce(jsonb_object_agg(c.category, c.n), jsonb_build_object())::text"
    "          FROM (SELECT category, count(*) AS n FROM idemload_settle_disc s"
    "                 WHERE s.tenant_id = d.tenant_id AND s.channel = d.channel"
    "                   AND s.day = d.day AND NOT s.pending GROUP BY 1) c),"
    "       (SELECT count(*) FROM idemload_settle_disc s WHERE s.tenant_id = d.tenant_id"
    "          AND s.channel = d.channel AND s.day = d.day AND s.pending),"
    "       (SELECT count(*) FROM idemload_settle_m m JOIN idemload_settle_b b USING"
    "          (tenant_id, channel, batch_id, currency) WHERE b.tenant_id = d.tenant_id"
    "          AND b.channel = d.channel AND b.day = d.day),"
    "       (SELECT coalesce(jsonb_object_agg(a.currency, a.amount), jsonb_build_object())::text"
    "          FROM (SELECT s.currency, pg_temp.idemload_money_text("
    "                       sum(abs(coalesce(s.actual, 0) - coalesce(s.expected, 0))),"
    "                       s.currency) AS amount"
    "                  FROM idemload_settle_disc s WHERE s.tenant_id = d.tenant_id"
    "                   AND s.channel = d.channel AND s.day = d.day AND NOT s.pending"
    "                   AND s.currency IS NOT NULL GROUP BY 1) a) "
    "FROM d ORDER BY 1, 2, 3";

/* Every line (the pending too, flagged), in a stable order, with money as
 * text in its currency's minor unit and the register's first_seen once it
 * is written ($1: the run). */
#define SETTLE_LINES(first_seen)                                                      \
    "SELECT s.category, s.tenant_id, s.channel, s.day::text, s.subject, s.currency,"      \
    "       pg_temp.idemload_money_text(s.expected, s.currency),"                          \
    "       pg_temp.idemload_money_text(s.actual, s.currency),"                            \
    "       pg_temp.idemload_money_text(s.actual - s.expected, s.currency),"               \
    "       s.file_no, s.line, s.detail::text, s.pending, " first_seen " "                \
    "FROM idemload_settle_disc s "                                                         \
    "ORDER BY s.pending, array_position(ARRAY['fee_mismatch', 'payout_mismatch',"         \
    "         'balance_break', 'payout_not_received', 'unexpected_deposit',"              \
    "         'unsettled_payment'], s.category),"                                          \
    "         s.tenant_id, s.channel, s.day, s.subject, s.currency"
const char SQL_SETTLE_LINES[] = SETTLE_LINES(
    "(SELECT pg_temp.idemload_ts_text(i.first_seen, false) FROM {item} i"
    "  WHERE i.last_run = $1::bigint"
    "    AND i.tenant_id = s.tenant_id AND i.channel = s.channel AND i.day = s.day"
    "    AND i.category = s.category AND i.subject IS NOT DISTINCT FROM s.subject"
    "    AND i.currency IS NOT DISTINCT FROM s.currency LIMIT 1)");

/* The same without a register (a dry run): first_seen null. */
const char SQL_SETTLE_LINES_UNREGISTERED[] = SETTLE_LINES("NULL::text");

/* How many batches were matched, and how (the summary's). */
const char SQL_SETTLE_MATCHED[] =
    "SELECT count(*) FILTER (WHERE how = 'reference'), count(*) FILTER (WHERE how = 'amount'),"
    "       count(*) FILTER (WHERE how = 'several'), count(DISTINCT credit) FILTER (WHERE how = 'several'),"
    "       (SELECT count(*) FROM idemload_settle_b WHERE NOT registered) "
    "FROM idemload_settle_m";

/* ---- the register ------------------------------------------------------ */

const char SQL_SETTLE_REGISTER_CREATE[] =
    "SELECT pg_advisory_xact_lock(7350323339418284035);"
    "CREATE TABLE IF NOT EXISTS {run} ("
    "  id bigserial PRIMARY KEY, run bigint NOT NULL, ran_at timestamptz NOT NULL DEFAULT now(),"
    "  tenant_id bigint NOT NULL, channel text NOT NULL, day date NOT NULL,"
    "  verdict text NOT NULL, rows bigint NOT NULL, pending bigint NOT NULL,"
    "  matched bigint NOT NULL, categories jsonb NOT NULL, amounts jsonb NOT NULL,"
    "  files jsonb NOT NULL, superseded_by bigint);"
    "CREATE INDEX IF NOT EXISTS {run_index} ON {run} (tenant_id, channel, day);"
    "CREATE TABLE IF NOT EXISTS {item} ("
    "  id bigserial PRIMARY KEY, tenant_id bigint NOT NULL, channel text NOT NULL,"
    "  day date NOT NULL, category text NOT NULL, subject text, currency text,"
    "  state text NOT NULL CHECK (state IN ('open', 'pending', 'resolved')),"
    "  expected text, actual text, difference text, detail jsonb, file text, line bigint,"
    "  first_seen timestamptz NOT NULL, last_seen timestamptz NOT NULL,"
    "  opened_by bigint NOT NULL, last_run bigint NOT NULL,"
    "  resolved_at timestamptz, resolved_by bigint, resolution text);"
    "CREATE INDEX IF NOT EXISTS {item_index} ON {item} (tenant_id, channel, day)"
    " WHERE state <> 'resolved'";

/* $1 the register's item table as text: absent, readable or denied. */
const char SQL_SETTLE_REGISTER_READABLE[] =
    "SELECT CASE WHEN to_regclass($1) IS NULL THEN 'absent'"
    "            WHEN has_table_privilege(to_regclass($1), 'SELECT') THEN 'readable'"
    "            ELSE 'denied' END";

const char SQL_SETTLE_RUN_ID[] =
    "SELECT pg_advisory_xact_lock(7350323339418284035), (SELECT coalesce(max(run), 0) + 1 FROM {run})";

/* $1 the run: the earlier runs of the days this run covers are superseded. */
const char SQL_SETTLE_REG_SUPERSEDE[] =
    "UPDATE {run} u SET superseded_by = $1 FROM " COVERED " c "
    "WHERE u.superseded_by IS NULL AND u.tenant_id = c.tenant_id AND u.channel = c.channel"
    "  AND u.day = c.day";

#define SAME_ITEM(i, s) i ".tenant_id = " s ".tenant_id AND " i ".channel = " s ".channel AND " \
    i ".day = " s ".day AND " i ".category = " s ".category AND " i ".subject IS NOT DISTINCT" \
    " FROM " s ".subject AND " i ".currency IS NOT DISTINCT FROM " s ".currency"

/* $1 the run: items of the covered days this run no longer finds are
 * resolved ("not found again": a corrected statement fixed them). */
const char SQL_SETTLE_REG_RESOLVE[] =
    "UPDATE {item} i SET state = 'resolved', resolved_at = pg_temp.idemload_now(),"
    "       resolved_by = $1, resolution = 'not found again by a later run of its day' "
    "FROM " COVERED " c "
    "WHERE i.state <> 'resolved' AND i.tenant_id = c.tenant_id AND i.channel = c.channel"
    "  AND i.day = c.day"
    "  AND NOT EXISTS (SELECT 1 FROM idemload_settle_disc s WHERE " SAME_ITEM("i", "s") ")";

/* $1 the run: batches an earlier run left pending that this run's bank
 * credits matched: resolved, with the credit named. */
const char SQL_SETTLE_REG_CREDITED[] =
    "UPDATE {item} i SET state = 'resolved', resolved_at = pg_temp.idemload_now(),"
    "       resolved_by = $1, resolution = 'credited by ' || m.credit || ' on ' || m.credit_day "
    "FROM idemload_settle_m m JOIN idemload_settle_b b USING (tenant_id, channel, batch_id, currency) "
    "WHERE b.registered AND i.state = 'pending' AND i.category = 'payout_not_received'"
    "  AND i.tenant_id = m.tenant_id AND i.channel = m.channel AND i.subject = m.batch_id"
    "  AND i.currency = m.currency";

/* $1 the run, $2 the files (a JSON array of paths): this run's lines
 * into the register, an item found again kept (its first_seen) and
 * updated, a new one opened.  Returns how many were opened. */
const char SQL_SETTLE_REG_UPSERT[] =
    "WITH upd AS (UPDATE {item} i SET last_seen = pg_temp.idemload_now(), last_run = $1,"
    "       state = CASE WHEN s.pending THEN 'pending' ELSE 'open' END,"
    "       expected = pg_temp.idemload_money_text(s.expected, s.currency),"
    "       actual = pg_temp.idemload_money_text(s.actual, s.currency),"
    "       difference = pg_temp.idemload_money_text(s.actual - s.expected, s.currency),"
    "       detail = s.detail, file = ($2::jsonb) ->> (s.file_no - 1), line = s.line"
    "     FROM idemload_settle_disc s WHERE i.state <> 'resolved' AND " SAME_ITEM("i", "s")
    "     RETURNING i.id) "
    "INSERT INTO {item} (tenant_id, channel, day, category, subject, currency, state, expected,"
    "  actual, difference, detail, file, line, first_seen, last_seen, opened_by, last_run) "
    "SELECT s.tenant_id, s.channel, s.day, s.category, s.subject, s.currency,"
    "       CASE WHEN s.pending THEN 'pending' ELSE 'open' END,"
    "       pg_temp.idemload_money_text(s.expected, s.currency),"
    "       pg_temp.idemload_money_text(s.actual, s.currency),"
    "       pg_temp.idemload_money_text(s.actual - s.expected, s.currency), s.detail,"
    "       ($2::jsonb) ->> (s.file_no - 1), s.line, pg_temp.idemload_now(),"
    "       pg_temp.idemload_now(), $1, $1 "
    "FROM idemload_settle_disc s "
    "WHERE NOT EXISTS (SELECT 1 FROM {item} i WHERE i.state <> 'resolved'"
    "                  AND " SAME_ITEM("i", "s") ") "
    "RETURNING (SELECT count(*) FROM upd)";

/* $1 the run: pending items of days this run does not cover whose window
 * or delay has closed become discrepancies (open), carried over. */
const char SQL_SETTLE_REG_ESCALATE[] =
    "UPDATE {item} i SET state = 'open', last_run = $1 "
    "WHERE i.state = 'pending' AND i.last_run <> $1"
    "  AND pg_temp.idemload_now() >= ((i.day + 1)::timestamp + CASE i.category"
    "        WHEN 'payout_not_received' THEN (SELECT w_max FROM idemload_settle_cfg)"
    "        ELSE (SELECT grace FROM idemload_settle_cfg) END)"
    "      AT TIME ZONE current_setting('idemload.recon_zone') "
    "RETURNING i.id";

/* $1 the run, $2 the files as [{path, digest}]: one run row per covered day. */
const char SQL_SETTLE_REG_RUNS[] =
    "INSERT INTO {run} (run, tenant_id, channel, day, verdict, rows, pending, matched,"
    "  categories, amounts, files) "
    "SELECT $1, c.tenant_id, c.channel, c.day,"
    "       CASE WHEN EXISTS (SELECT 1 FROM idemload_settle_disc s WHERE s.tenant_id = c.tenant_id"
    "              AND s.channel = c.channel AND s.day = c.day AND NOT s.pending)"
    "            THEN 'discrepancies' ELSE 'settled' END,"
    "       " DAY_ROWS("c") ","
    "       (SELECT count(*) FROM idemload_settle_disc s WHERE s.tenant_id = c.tenant_id"
    "          AND s.channel = c.channel AND s.day = c.day AND s.pending),"
    "       (SELECT count(*) FROM idemload_settle_m m JOIN idemload_settle_b b USING"
    "          (tenant_id, channel, batch_id, currency) WHERE b.tenant_id = c.tenant_id"
    "          AND b.channel = c.channel AND b.day = c.day),"
    "       (SELECT coalesce(jsonb_object_agg(k.category, k.n), jsonb_build_object()) FROM"
    "          (SELECT category, count(*) AS n FROM idemload_settle_disc s"
    "            WHERE s.tenant_id = c.tenant_id AND s.channel = c.channel AND s.day = c.day"
    "              AND NOT s.pending GROUP BY 1) k),"
    "       (SELECT coalesce(jsonb_object_agg(a.currency, a.amount), jsonb_build_object()) FROM"
    "          (SELECT s.currency, pg_temp.idemload_money_text(sum(abs(coalesce(s.actual, 0)"
    "                  - coalesce(s.expected, 0))), s.currency) AS amount"
    "             FROM idemload_settle_disc s WHERE s.tenant_id = c.tenant_id"
    "              AND s.channel = c.channel AND s.day = c.day AND NOT s.pending"
    "              AND s.currency IS NOT NULL GROUP BY 1) a),"
    "       $2::jsonb "
    "FROM " COVERED " c";

/* Open items of days this run does not cover, of the tenants it read,
 * with their age in days: carried over. */
const char SQL_SETTLE_REG_CARRIED[] =
    "SELECT i.category, i.tenant_id, i.channel, i.day::text, i.subject, i.currency, i.expected,"
    "       i.actual, i.difference, pg_temp.idemload_ts_text(i.first_seen, false),"
    "       (pg_temp.idemload_now() AT TIME ZONE current_setting('idemload.recon_zone'))::date"
    "         - i.day "
    "FROM {item} i "
    "WHERE i.state = 'open' AND NOT EXISTS (SELECT 1 FROM idemload_settle_disc s"
    "      WHERE " SAME_ITEM("i", "s") ")"
    "  AND NOT EXISTS (SELECT 1 FROM " COVERED " c WHERE c.tenant_id = i.tenant_id"
    "      AND c.channel = i.channel AND c.day = i.day) "
    "  AND EXISTS (SELECT 1 FROM idemload_settle_n n WHERE n.tenant_id = i.tenant_id) "
    "ORDER BY i.day, i.tenant_id, i.channel, i.category, i.subject";

/* $1 the run: the items it resolved, as the report lists them. */
const char SQL_SETTLE_REG_RESOLVED[] =
    "SELECT i.category, i.tenant_id, i.channel, i.day::text, i.subject, i.currency, i.resolution "
    "FROM {item} i WHERE i.resolved_by = $1 ORDER BY i.day, i.tenant_id, i.channel, i.subject";
