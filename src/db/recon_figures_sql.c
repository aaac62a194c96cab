/*
 * recon_figures_sql.c - the SQL of reconcile's figures (see recon_sql.h):
 * per tenant, channel and day, and over the run, each side's rows and
 * money per kind and currency, and the discrepancies' money per category,
 * read from the comparison's temporary tables (recon_sql.c).
 */
#include "db/recon_sql.h"

/* Per tenant, channel and day: rows on each side (the statement's every
 * row, SQL_RECON_EXTRA's included), matched, unverified, pending, and each
 * side's rows with no readable amount (in no total). */
#define RECON_N_WHERE(cond) "coalesce(sum(n) FILTER (WHERE " cond "), 0)::bigint"
const char SQL_RECON_DAY_FIGURES[] =
    "SELECT tenant_id, channel, day::text,"
    "       " RECON_N_WHERE("s_present") ", " RECON_N_WHERE("t_present") ","
    "       " RECON_N_WHERE("outcome = 'matched'") ","
    "       " RECON_N_WHERE("outcome = 'unverified'") ","
    "       " RECON_N_WHERE("outcome = 'pending'") ","
    "       coalesce(sum(n - s_n) FILTER (WHERE s_present), 0)::bigint,"
    "       coalesce(sum(n - t_n) FILTER (WHERE t_present), 0)::bigint "
    "FROM (SELECT tenant_id, channel, day, s_present, t_present, outcome, n, s_n, t_n"
    "        FROM idemload_recon_g"
    "      UNION ALL SELECT tenant_id, channel, day, true, false, NULL, 1,"
    "             (amount IS NOT NULL)::int, 0"
    "        FROM idemload_recon_extra) o "
    "GROUP BY 1, 2, 3 ORDER BY 3, 1, 2";

/* Each side's rows of the comparison with their kind, currency and
 * amount (idemload_recon_g: SQL_RECON_CLASSIFY_SUMS; and the statement's
 * other rows of its keys),
 * summed once per tenant, channel, day, side ('s' or 't'), kind and
 * currency (amount NULL when none of the rows has one), with the rows and
 * the amounts counted: every figure per kind and per currency below is a
 * sum of these few rows. */
const char SQL_RECON_KIND_TOTALS[] =
    "CREATE TEMP TABLE idemload_recon_kt AS "
    "SELECT tenant_id, channel, day, side, kind, currency, sum(amount) AS amount,"
    "       sum(n)::bigint AS n, sum(n_amount)::bigint AS n_amount "
    "FROM (SELECT tenant_id, channel, day, 's' AS side, kind, s_currency AS currency,"
    "             s_sum AS amount, n, s_n AS n_amount FROM idemload_recon_g WHERE s_present"
    "      UNION ALL SELECT tenant_id, channel, day, 's', split_part(callback_type, ':', 1),"
    "             currency, amount, 1, (amount IS NOT NULL)::int FROM idemload_recon_extra"
    "      UNION ALL SELECT tenant_id, channel, day, 't', kind, t_currency, t_sum, n, t_n"
    "        FROM idemload_recon_g WHERE t_present) a "
    "GROUP BY tenant_id, channel, day, side, kind, currency";

/* Per tenant, channel, day, side and kind: each currency's amount (the
 * currency '' for amounts that state none; a row of NULL amount when none
 * of the kind's rows in that currency has one), the kind's rows, those
 * without a readable amount, and how many amounts the sum holds. */
const char SQL_RECON_DAY_KINDS[] =
    "SELECT tenant_id, channel, day::text, side, kind, coalesce(currency, ''),"
    "       pg_temp.idemload_money_text(amount, currency),"
    "       sum(n) OVER k, sum(n - n_amount) OVER k, n_amount "
    "FROM idemload_recon_kt "
    "WINDOW k AS (PARTITION BY tenant_id, channel, day, side, kind) "
    "ORDER BY 3, 1, 2, 4, 5, 6";

/* The same over the whole run (every tenant, channel and day). */
const char SQL_RECON_PERIOD_KINDS[] =
    "SELECT side, kind, coalesce(currency, ''),"
    "       pg_temp.idemload_money_text(sum(amount), currency),"
    "       sum(sum(n)) OVER k, sum(sum(n - n_amount)) OVER k, sum(n_amount) "
    "FROM idemload_recon_kt GROUP BY side, kind, currency "
    "WINDOW k AS (PARTITION BY side, kind) ORDER BY 1, 2, 3";

/* $1, $2: the kinds that return money (refunds) and the kinds left apart
 * (revocations: an order cancelled, no money taken), JSON arrays of names.
 * A side's amounts per currency are its net (SPEC "Reconcile for finance":
 * refunds never added to payments): every other kind's amounts minus the
 * refunds'; each kind's own are SQL_RECON_DAY_KINDS'. */
#define RECON_NET_ROWS \
    "SELECT a.*, CASE WHEN a.kind = ANY(k.refunds) THEN -a.amount ELSE a.amount END AS net" \
    "  FROM idemload_recon_kt a," \
    "       (SELECT ARRAY(SELECT jsonb_array_elements_text($1::jsonb)) AS refunds," \
    "               ARRAY(SELECT jsonb_array_elements_text($2::jsonb)) AS apart) k" \
    " WHERE a.amount IS NOT NULL AND NOT a.kind = ANY(k.apart)"

/* Per tenant, channel, day, side ('s' or 't') and currency: the net amount
 * ($1, $2 as RECON_NET_ROWS's). */
const char SQL_RECON_DAY_AMOUNTS[] =
    "SELECT tenant_id, channel, day::text, side, coalesce(currency, ''),"
    "       pg_temp.idemload_money_text(sum(net), currency) "
    "FROM (" RECON_NET_ROWS ") n GROUP BY 1, 2, 3, 4, currency ORDER BY 3, 1, 2, 4, 5";

/* The whole run, per side ('s' or 't') and currency: the net amount (a
 * currency's over every tenant, channel and day; two currencies never
 * added; $1, $2 as RECON_NET_ROWS's). */
const char SQL_RECON_PERIOD_AMOUNTS[] =
    "SELECT side, coalesce(currency, ''), pg_temp.idemload_money_text(sum(net), currency) "
    "FROM (" RECON_NET_ROWS ") n GROUP BY 1, currency ORDER BY 1, 2";

/* Per tenant, channel, day and category (pending excluded): the count, the
 * sum of the differences (NULL when they are in several currencies: money
 * of two currencies is never added), the sums per currency as a JSON
 * object, the text a reader sees ("CNY 149.00", or "JPY 100, USD 1.00"), and
 * the lines with no difference (a side without a readable amount, or two
 * currencies); the sum and the text are NULL when no line has one (not
 * "0.00": nothing is known of the money), and the text leaves out a
 * currency whose lines have none (they are in the last column, not "? ?").
 * A no_statement day is one line whatever its rows' currencies, without a
 * single difference when they hold several; its sums per currency come from its table rows, so that
 * each currency's money is still known (not "1 without an amount").
 * Then what finance reads beside the net (SPEC "Reconcile for finance"):
 * the sums of the absolute differences per currency, as a JSON object and
 * as text ("CNY 0.02"), so that -0.01 and +0.01 read as 0.02 of errors and
 * not as "CNY 0.00"; a currency_mismatch line has no difference (two
 * currencies), and is "without an amount" only when a side has none (its
 * two amounts are SQL_RECON_DAY_CCY_SIDES'). */
const char SQL_RECON_DAY_CATEGORIES[] =
    "SELECT tenant_id, channel, day::text, category, sum(n),"
    "       CASE WHEN count(*) = 1 THEN min(amount) END,"
    "       coalesce(jsonb_object_agg(ccy, amount) FILTER (WHERE ccy IS NOT NULL"
    "                                                   AND amount IS NOT NULL),"
    "                jsonb_build_object())::text,"
    "       CASE WHEN count(*) = 1 THEN coalesce(min(ccy) || ' ', '') || min(amount)"
    "            ELSE string_agg(coalesce(ccy, '?') || ' ' || amount, ', ' ORDER BY ccy) END,"
    "       sum(n_unknown),"
    "       coalesce(jsonb_object_agg(ccy, gross) FILTER (WHERE ccy IS NOT NULL"
    "                                                  AND gross IS NOT NULL),"
    "                jsonb_build_object())::text,"
    "       string_agg(coalesce(ccy || ' ', '') || gross, ', ' ORDER BY ccy) "
    "FROM (SELECT tenant_id, channel, day, category, ccy, count(*) AS n,"
    "             count(*) FILTER (WHERE CASE WHEN category = 'currency_mismatch'"
    "                                         THEN s_amount IS NULL OR t_amount IS NULL"
    "                                         ELSE diff IS NULL END) AS n_unknown,"
    "             pg_temp.idemload_money_text(sum(diff), ccy) AS amount,"
    "             pg_temp.idemload_money_text(sum(abs(diff)), ccy) AS gross"
    "        FROM idemload_recon_lines WHERE category NOT IN ('pending', 'no_statement')"
    "       GROUP BY 1, 2, 3, 4, 5"
    "      UNION ALL"
    "      SELECT tenant_id, channel, day, 'no_statement', t_currency,"
    "             (row_number() OVER w = 1)::int,"
    "             (row_number() OVER w = 1 AND sum(count(t_amount)) OVER w = 0)::int,"
    "             pg_temp.idemload_money_text(-sum(t_amount), t_currency),"
    "             pg_temp.idemload_money_text(abs(sum(t_amount)), t_currency)"
    "        FROM idemload_recon_out WHERE outcome = 'no_statement'"
    "       GROUP BY tenant_id, channel, day, t_currency"
    "      WINDOW w AS (PARTITION BY tenant_id, channel, day ORDER BY t_currency"
    "                   ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)) g "
    "GROUP BY 1, 2, 3, 4 ORDER BY 3, 1, 2, 4";

/* Per tenant, channel and day: the currency_mismatch lines' two sides, as
 * a reader sees them ("statement USD 10.00; table CNY 70.00": each side's
 * amounts per currency), where the line itself has no difference. */
const char SQL_RECON_DAY_CCY_SIDES[] =
    "SELECT tenant_id, channel, day::text,"
    "       string_agg(side || ' ' || amounts, '; ' ORDER BY side) "
    "FROM (SELECT tenant_id, channel, day, side,"
    "             string_agg(coalesce(ccy || ' ', '') || amount, ', ' ORDER BY ccy) AS amounts"
    "        FROM (SELECT tenant_id, channel, day, side, ccy,"
    "                     pg_temp.idemload_money_text(sum(amount), ccy) AS amount"
    "                FROM (SELECT tenant_id, channel, day, 'statement' AS side,"
    "                             s_currency AS ccy, s_amount::numeric AS amount"
    "                        FROM idemload_recon_lines WHERE category = 'currency_mismatch'"
    "                      UNION ALL"
    "                      SELECT tenant_id, channel, day, 'table', t_currency,"
    "                             t_amount::numeric"
    "                        FROM idemload_recon_lines WHERE category = 'currency_mismatch') a"
    "               WHERE amount IS NOT NULL GROUP BY 1, 2, 3, 4, 5) c"
    "       GROUP BY 1, 2, 3, 4) s "
    "GROUP BY 1, 2, 3 ORDER BY 3, 1, 2";

/* Per tenant, channel, day and currency: the money of the day's
 * discrepancies with each key counted once (a key that is an
 * amount_mismatch and a duplicate_in_statement is one difference, not two
 * added up), the net and the sum of the absolute differences, from the
 * comparison's one row per key (a no_statement day's rows too), and how
 * many keys differ in money. */
const char SQL_RECON_DAY_DIFFERENCES[] =
    "SELECT tenant_id, channel, day::text, coalesce(ccy, ''),"
    "       pg_temp.idemload_money_text(sum(difference), ccy),"
    "       pg_temp.idemload_money_text(sum(abs(difference)), ccy),"
    "       count(*) FILTER (WHERE difference <> 0) "
    "FROM (SELECT tenant_id, channel, day, coalesce(s_currency, t_currency) AS ccy, difference"
    "        FROM idemload_recon_out WHERE outcome IN ('discrepancy', 'no_statement')"
    "         AND difference IS NOT NULL) o "
    "GROUP BY tenant_id, channel, day, ccy ORDER BY 3, 1, 2, 4";

const char SQL_RECON_MISSING_KEYS[] =
    "SELECT count(*) FROM idemload_recon_lines WHERE category = 'missing_in_table'";
