/*
 * recon_sql.c - the SQL of reconcile (see recon_sql.h).
 *
 * The statement's valid rows are COPYed into idemload_recon_raw, one row
 * per record (duplicates included, so a key listed twice with different
 * facts is seen); every later step is one set-based statement building
 * the next temporary table:
 *   raw -> sk (one row per key with its facts, and whether the key's rows
 *   disagree) -> traw (the table's rows of those keys, and of the
 *   statement's (tenant, channel) pairs in the period: one scan) -> cmp
 *   (each key of the period joined with the table's active row; the
 *   table's rows the statement lacks) -> out (each compared unit's outcome
 *   and categories) -> lines (one per discrepancy).
 * Every join with the table is on the business key, which starts with
 * tenant_id, the distribution column of a Citus target.
 */
#include "db/recon_sql.h"

#include "core/columns.h"

/*
 * The columns come from the column table (core/columns.h): the staging
 * table idemload_recon_raw and its COPY list are every column, as
 * copy_binary_recon_row writes them after file_no and line; the table's
 * rows are read with every column (RECON_TABLE_COLUMNS); every join,
 * DISTINCT ON, PARTITION BY, GROUP BY and ORDER BY of a key, and the key
 * columns each temporary table carries, are KEY_LIST and KEY_JOIN.  Only
 * what a column means is written by name: status, payload and received_at
 * as the facts they are, (tenant_id, channel) as the statement's pair.
 *
 * The register ({item}, a table of the target's schema that outlives the
 * run) holds an item's key as columns of its own (out_trade_no and
 * callback_type NULL on a no_statement line, which stands for the pair's
 * day), and the discrepancy lines' columns are read by position
 * (RECON_LINE_COLUMNS, SQL_RECON_REPAIR_INSERTED): a new key column there is
 * a migration of the register and a column of the report, its semantics, so
 * the build stops here until they are written.  A new fact needs nothing
 * here.
 */
_Static_assert(KEY_NCOLUMNS == 4,
               "a new key column: add it to the register ({item}, its joins with i.,"
               " SQL_RECON_RELISTED, idemload_recon_mended), to SQL_RECON_LINES'"
               " no_statement branch and to the lines the report reads");

/* idemload_recon_raw's columns after file_no and line: the column table's,
 * in its order, each of its kind's type in the target. */
#define RECON_RAW_COLUMN_DEFS_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_SEP_##pos(",") " " #name " " COLUMN_RECON_TYPE_##kind " NOT NULL"
#define RECON_RAW_COLUMN_DEFS IDEMLOAD_COLUMNS(RECON_RAW_COLUMN_DEFS_1, ~, ~)

/* Money as text -> an exact numeric in the major unit: only its dress
 * taken off (white space and quotes around it, a currency sign, the
 * row's own currency code ccy before or after it, a comma between
 * thousands), so "¥1,234.50", "CNY 1,234.50" (in a CNY row) and
 * "\"0.59000\"" read as 1234.50 and 0.59000, while "USD 10.00" in a CNY
 * row (or a row stating no currency), "1e400", "1.234,50" or "12 34" are
 * no amount (NULL: the row is
 * unverified, never read as another number; a plain number, the common
 * case, is taken as it is without the undressing), minor units scaled by the currency's ISO
 * 4217 exponent e (RECON_EXP: NULL, so no amount, without a currency),
 * the magnitude when asked; NULL when no number remains, or when it is
 * beyond what the day's sums can hold (numeric's range is 131,072 digits
 * before the point and 16,383 after; past 131,000, a sum of such amounts
 * could overflow): such an amount, on either side, is unreadable, its row
 * unverified, never a failure that stops every run of its pair (a plain
 * number of more than 1,000 characters takes the checked path).  Rendering: in
 * the currency's exponent when exact at it, else every digit (never
 * rounded); idemload_render, a plain expression the planner inlines, for
 * the per-line columns, idemload_money_text (which looks the exponent up)
 * for the few aggregate rows.  Per-row work stays in PL/pgSQL's simple
 * expressions or inlined SQL: an SQL function with a sub-select runs an
 * executor per call.  idemload_money is such an inlined expression for
 * the plain number (and the missing one), which calls PL/pgSQL (about 2
 * microseconds a call, a quarter of a second per million amounts more
 * than the expression) only for a dressed amount.  A time fact: text with an offset
 * as it says, without one in the statement's zone; NULL when not a time.
 * idemload_ts_text shows a time as finance reads it: in the day's zone
 * (the period's, so a bill line that says 09:15:36 in Beijing reads
 * 09:15:36+08:00, not 01:15:36Z), fractions of a second only where the
 * time has them (frac; none for our own first_seen). */
/* The zone a time is shown in (the day's), and x's offset from UTC there. */
#define RECON_TS_ZONE \
    "coalesce(nullif(current_setting('idemload.recon_zone', true), ''), 'UTC')"
#define RECON_TS_OFFSET \
    "((x AT TIME ZONE " RECON_TS_ZONE ") - (x AT TIME ZONE 'UTC'))"
const char SQL_RECON_SETUP[] =
    "CREATE TEMP TABLE idemload_recon_raw ("
    "  file_no integer NOT NULL, line bigint NOT NULL," RECON_RAW_COLUMN_DEFS ");"
    "CREATE TEMP TABLE idemload_recon_ccy (code text PRIMARY KEY, exponent integer NOT NULL);"
    "CREATE TEMP TABLE idemload_recon_cover (file_no integer NOT NULL, kind text);"
    "CREATE TEMP TABLE idemload_recon_sfacts (kind text,"
    "  amount_path text[], amount_const text, amount_minor boolean, amount_abs boolean,"
    "  currency_path text[], currency_const text,"
    "  fee_path text[], fee_const text, fee_minor boolean, fee_abs boolean,"
    "  amount_alt text[], currency_alt text[], fee_alt text[], record_path text[]);"
    "CREATE TEMP TABLE idemload_recon_tfacts (channel text, kind text,"
    "  amount_path text[], amount_const text, amount_minor boolean, amount_abs boolean,"
    "  currency_path text[], currency_const text,"
    "  fee_path text[], fee_const text, fee_minor boolean, fee_abs boolean,"
    "  time_path text[]);"
    "CREATE FUNCTION pg_temp.idemload_money_dressed(t text, minor boolean, magnitude boolean,"
    "                                               e integer, ccy text)"
    " RETURNS numeric LANGUAGE plpgsql IMMUTABLE AS $f$"
    " DECLARE c text; v numeric;"
    " BEGIN"
    "  IF t IS NULL THEN RETURN NULL; END IF;"
    "  IF t ~ '^-?[0-9]+(\\.[0-9]+)?$' THEN c := t;"
    "  ELSE"
    "   c := translate(btrim(t, E' \\t\\r\\n\"''`'), '¥￥$€£₩₹元', '');"
    "   IF upper(substring(c from '^([A-Za-z][A-Za-z][A-Za-z])(?![A-Za-z])')) IS DISTINCT FROM ccy"
    "      AND c ~ '^[A-Za-z][A-Za-z][A-Za-z](?![A-Za-z])'"
    "      OR upper(substring(c from '(?<![A-Za-z])([A-Za-z][A-Za-z][A-Za-z])$')) IS DISTINCT FROM ccy"
    "      AND c ~ '(?<![A-Za-z])[A-Za-z][A-Za-z][A-Za-z]$' THEN RETURN NULL; END IF;"
    "   c := btrim(regexp_replace(c, '^[A-Za-z][A-Za-z][A-Za-z]\\s*|\\s*[A-Za-z][A-Za-z][A-Za-z]$',"
    "                             '', 'g'));"
    "   c := regexp_replace(c, '(?<=[0-9]),(?=[0-9][0-9][0-9]([,.]|$))', '', 'g');"
    "  END IF;"
    "  IF c IS NULL OR c !~ '^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)$' THEN RETURN NULL; END IF;"
    "  IF length(ltrim(split_part(ltrim(c, '+-'), '.', 1), '0')) > 131000"
    "     OR length(split_part(c, '.', 2)) > 16383 THEN RETURN NULL; END IF;"
    "  v := c::numeric;"
    "  IF magnitude THEN v := abs(v); END IF;"
    "  IF minor THEN v := v * power(10::numeric, -e); END IF;"
    "  RETURN v;"
    " END $f$;"
    "CREATE FUNCTION pg_temp.idemload_money(t text, minor boolean, magnitude boolean, e integer,"
    "                                       ccy text)"
    " RETURNS numeric LANGUAGE sql IMMUTABLE AS $f$"
    " SELECT CASE WHEN t IS NULL THEN NULL"
    "             WHEN t ~ '^-?[0-9]+(\\.[0-9]+)?$' AND length(t) <= 1000 THEN"
    "               CASE WHEN magnitude THEN abs(t::numeric) ELSE t::numeric END"
    "               * CASE WHEN minor THEN power(10::numeric, -e) ELSE 1 END"
    "             ELSE pg_temp.idemload_money_dressed(t, minor, magnitude, e, ccy) END $f$;"
    "CREATE FUNCTION pg_temp.idemload_render(x numeric, e integer)"
    " RETURNS text LANGUAGE sql IMMUTABLE AS $f$"
    " SELECT CASE WHEN x = round(x, e) THEN round(x, e)::text ELSE trim_scale(x)::text END $f$;"
    "CREATE FUNCTION pg_temp.idemload_money_text(x numeric, ccy text)"
    " RETURNS text LANGUAGE sql STABLE AS $f$"
    " SELECT pg_temp.idemload_render(x, coalesce("
    "   (SELECT c.exponent FROM idemload_recon_ccy c WHERE c.code = ccy), 2)) $f$;"
    "CREATE FUNCTION pg_temp.idemload_time(t text) RETURNS timestamptz LANGUAGE plpgsql STABLE"
    " AS $f$ BEGIN"
    "  IF t IS NULL OR t !~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' THEN RETURN NULL; END IF;"
    "  IF t ~ '[T ][0-9][0-9]:[0-9][0-9](:[0-9][0-9](\\.[0-9]+)?)?([Zz]|[+-][0-9][0-9](:?[0-9][0-9])?)$'"
    "  THEN RETURN t::timestamptz; END IF;"
    "  RETURN t::timestamp AT TIME ZONE current_setting('idemload.recon_zone');"
    " EXCEPTION WHEN others THEN RETURN NULL;"
    " END $f$;"
    "CREATE FUNCTION pg_temp.idemload_now() RETURNS timestamptz LANGUAGE sql STABLE"
    " AS $f$ SELECT coalesce(nullif(current_setting('idemload.now', true), '')::timestamptz,"
    "                        now()) $f$;"
    "CREATE FUNCTION pg_temp.idemload_ts_text(x timestamptz, frac boolean DEFAULT true)"
    " RETURNS text LANGUAGE sql STABLE AS $f$"
    " SELECT to_char(x AT TIME ZONE " RECON_TS_ZONE ", 'YYYY-MM-DD\"T\"HH24:MI:SS')"
    "  || CASE WHEN frac AND date_trunc('second', x) <> x"
    "          THEN rtrim(to_char(x AT TIME ZONE " RECON_TS_ZONE ", '.US'), '0') ELSE '' END"
    "  || CASE WHEN " RECON_TS_OFFSET " = interval '0' THEN 'Z'"
    "          WHEN " RECON_TS_OFFSET " < interval '0' THEN '-' || to_char(-" RECON_TS_OFFSET ", 'HH24:MI')"
    "          ELSE '+' || to_char(" RECON_TS_OFFSET ", 'HH24:MI') END $f$";

/* $1 the zone (a name PostgreSQL knows), $2 the grace in seconds, $3 the
 * time tests pin "now" to (IDEMLOAD_NOW, util/clock.h), NULL for the
 * server's now(): for this transaction (pg_temp.idemload_now() reads it).  On a Citus target the session's temporary tables (the
 * statement) are sent to the workers and joined there, shard by shard,
 * rather than the distributed table pulled here (on one server the
 * setting is an inert placeholder).  No JIT: every statement here runs
 * once over freshly built temporary tables, and compiling their
 * expressions (the money functions make them look expensive) cost more
 * than it saved, seconds per statement (EXPLAIN ANALYZE's "JIT: Timing").
 * work_mem at least 64MB: the statement's keys are sorted once and hashed
 * for the table read, and at the default 4MB both spill to disk (a sort
 * of a million keys, a hash in batches that writes the table's rows to
 * temporary files); a server set higher keeps its own.  The temporary
 * tables are analyzed for their sizes and the join keys' spread, which a
 * sample of 3,000 rows (statistics target 10) gives as well as 30,000.
 * No memoize: the statement's keys are distinct, so a cache of the index
 * probes for each key hit nothing (950,128 misses, 96 MB of memory). */
const char SQL_RECON_SETTINGS[] =
    "SELECT set_config('idemload.recon_zone', $1, true),"
    "       set_config('idemload.recon_grace', ($2 || ' seconds')::interval::text, true),"
    "       set_config('idemload.now', coalesce($3::timestamptz::text, ''), true),"
    "       set_config('citus.local_table_join_policy', 'prefer-local', true),"
    "       set_config('jit', 'off', true),"
    "       set_config('work_mem', CASE WHEN pg_size_bytes(current_setting('work_mem'))"
    "                                        < 64 * 1024 * 1024 THEN '64MB'"
    "                                   ELSE current_setting('work_mem') END, true),"
    "       set_config('default_statistics_target', '10', true),"
    "       set_config('enable_memoize', 'off', true)";

/* $1 the zone, in place of SQL_RECON_SETTINGS' (a bill's own, found while
 * it was read). */
const char SQL_RECON_ZONE[] = "SELECT set_config('idemload.recon_zone', $1, true)";

/* $1 codes, $2 exponents (arrays). */
const char SQL_RECON_CCY[] =
    "INSERT INTO idemload_recon_ccy SELECT * FROM unnest($1::text[], $2::integer[])";

/* One statement level: kind (NULL: the rest), amount, currency, fee, then
 * the member each of the three is read from when the row lacks its own (a
 * profile's [C, ALT]: an older layout's column), and the member holding
 * the row's own transaction id (NULL: none declared). */
const char SQL_RECON_SFACTS[] =
    "INSERT INTO idemload_recon_sfacts VALUES ($1, $2::text[], $3, $4::boolean, $5::boolean,"
    " $6::text[], $7, $8::text[], $9, $10::boolean, $11::boolean,"
    " $12::text[], $13::text[], $14::text[], $15::text[])";

/* One table level: channel, kind (NULL: the level above), ..., time. */
const char SQL_RECON_TFACTS[] =
    "INSERT INTO idemload_recon_tfacts VALUES ($1, $2, $3::text[], $4, $5::boolean, $6::boolean,"
    " $7::text[], $8, $9::text[], $10, $11::boolean, $12::boolean, $13::text[])";

/* $1 a file's number, $2 the kinds it cannot list (a text[] literal;
 * NULL: none): one row per kind, a NULL kind for none. */
const char SQL_RECON_COVER[] =
    "INSERT INTO idemload_recon_cover"
    " SELECT $1::integer, k FROM unnest(coalesce($2::text[], ARRAY[NULL::text])) k";

const char SQL_RECON_COPY[] =
    "COPY idemload_recon_raw (file_no, line, " COLUMN_LIST("") ") FROM STDIN (FORMAT binary)";

/*
 * $1, $2: the period, $3 the zone.  The table's active rows the comparison
 * needs, as they are: those of the statement's keys (whatever their time),
 * then those of the statement's (tenant, channel) pairs that the statement
 * does not list and whose time may fall in the period.  A row counts by
 * its time: received_at, unless --facts names a time fact for the channel.
 * Without one, the rows read are exactly those that arrived in the
 * period; with one (the channel's own time, which can precede or follow
 * the arrival), those that arrived within 31 days of it, a window that
 * keeps the read near the period (README: a row whose time fact is in the
 * period but which arrived more than 31 days away from it is not seen).
 *
 * On one server, one sequential scan reads the active rows of the widest
 * window (no index leads with the time), each hash-joined with the
 * statement's keys and its pairs: a key of the statement whose active row
 * is among them takes it from there, since a key has one active row, and
 * the rows of no key are kept when their pair's window and kinds take
 * them.  Only the keys the scan leaves (missing from the table, or whose
 * row is of another time) are probed in the unique index afterwards,
 * key by key as import's probe does (LATERAL ... LIMIT 1:
 * SQL_RECON_TABLE_PROBE).  A nightly statement's keys nearly all have
 * their row in the period: probing each of them read the index and the
 * heap at random, once per key, for rows the scan reads anyway
 * (BENCHMARKS.md, "Reconcile in the nightly shape, part by part": 190k
 * keys against 2.2M rows, reconcile in 0.80 of its time before, same
 * rounds); the window's rows kept aside first (a CTE) were written to a
 * temporary file and read twice.  A hash of the statement's keys probed
 * by every row of the table, not only the window's, missed the cache ten
 * million times (a million keys against ten million rows: 13 s of 21). */
#define RECON_TIME_FROM(p) \
    "($1::date - CASE WHEN " p " THEN 31 ELSE 0 END)::timestamp AT TIME ZONE $3"
#define RECON_TIME_TO(p) \
    "($2::date + CASE WHEN " p " THEN 32 ELSE 1 END)::timestamp AT TIME ZONE $3"
#define RECON_ANY_TIMED "(SELECT bool_or(timed) FROM idemload_recon_pairs)"
/* Can the statement list the kind of row r for its pair p (not one its
 * files all leave out, SQL_RECON_PAIRS: a WeChat SUCCESS bill no refunds)?
 * A row of a kind it cannot list is neither missing from it nor pending. */
#define RECON_PAIR_COVERS(p, r) \
    "(" p ".excluded IS NULL OR split_part(" r ".callback_type, ':', 1) <> ALL (" p ".excluded))"
#define RECON_TABLE_COLUMNS COLUMN_LIST("t.")
const char SQL_RECON_TABLE_ROWS[] =
    "CREATE TEMP TABLE idemload_recon_traw AS "
    "SELECT " RECON_TABLE_COLUMNS ", k.tenant_id IS NOT NULL AS listed, k.day AS s_day "
    "FROM {table} t "
    "LEFT JOIN idemload_recon_sk k ON " KEY_JOIN("k", "t") " "
    "LEFT JOIN idemload_recon_pairs p ON t.tenant_id = p.tenant_id AND t.channel = p.channel "
    "WHERE {active}"
    "  AND t.received_at >= " RECON_TIME_FROM(RECON_ANY_TIMED)
    "  AND t.received_at < " RECON_TIME_TO(RECON_ANY_TIMED)
    "  AND (k.tenant_id IS NOT NULL OR (p.tenant_id IS NOT NULL"
    "   AND t.received_at >= " RECON_TIME_FROM("p.timed")
    "   AND t.received_at < " RECON_TIME_TO("p.timed")
    "   AND " RECON_PAIR_COVERS("p", "t") "))";
/* The statement's keys SQL_RECON_TABLE_ROWS left, probed in the unique
 * index: their active row, whatever its time. */
const char SQL_RECON_TABLE_PROBE[] =
    "INSERT INTO idemload_recon_traw "
    "SELECT " RECON_TABLE_COLUMNS ", true, k.day "
    "FROM idemload_recon_sk k CROSS JOIN LATERAL (SELECT " RECON_TABLE_COLUMNS
    "  FROM {table} t WHERE " KEY_JOIN("t", "k")
    "   AND {active} LIMIT 1) t "
    "WHERE NOT EXISTS (SELECT 1 FROM idemload_recon_traw x"
    "                   WHERE x.listed AND " KEY_JOIN("x", "k") ")";

/* Around SQL_RECON_TABLE_ROWS on one server: no nested loop but the
 * LATERAL probe's (which has no other plan).  A target never analyzed (a
 * fresh import read before autovacuum came by: the nightly job) is taken
 * for a few rows, and the planner, joining them with the statement's keys
 * in a nested loop, compared every row of the period with every key:
 * 80,000 rows against 100,000 keys took 13 minutes instead of a second,
 * a million of each would take days.  The server's own setting comes back
 * afterwards. */
const char SQL_RECON_NESTLOOP_OFF[] =
    "SELECT set_config('idemload.recon_nestloop', current_setting('enable_nestloop'), true),"
    "       set_config('enable_nestloop', 'off', true)";
const char SQL_RECON_NESTLOOP_BACK[] =
    "SELECT set_config('enable_nestloop', current_setting('idemload.recon_nestloop'), true)";

/* Around SQL_RECON_KEYS: hash joins only.  The statement's rows, just
 * copied and never analyzed, were sorted whole to merge them with the few
 * keys listed more than once (0.8 s of 190k rows, twice), where a hash of
 * those keys beside one scan of the rows is all it takes. */
const char SQL_RECON_HASH_ONLY[] =
    "SELECT set_config('idemload.recon_nestloop', current_setting('enable_nestloop'), true),"
    "       set_config('idemload.recon_mergejoin', current_setting('enable_mergejoin'), true),"
    "       set_config('enable_nestloop', 'off', true),"
    "       set_config('enable_mergejoin', 'off', true)";
const char SQL_RECON_HASH_BACK[] =
    "SELECT set_config('enable_nestloop', current_setting('idemload.recon_nestloop'), true),"
    "       set_config('enable_mergejoin', current_setting('idemload.recon_mergejoin'), true)";

/* The same on a Citus target: only joins on the business key, whose first
 * column is tenant_id, and plain columns, so that it runs on the workers,
 * shard by shard (Citus pushes down no LATERAL with a LIMIT); the facts are
 * computed here afterwards (SQL_RECON_TABLE_VIEW).  One scan of each shard
 * for both: its rows left-joined with the statement's keys and pairs. */
const char SQL_RECON_TABLE_ROWS_DISTRIBUTED[] =
    "CREATE TEMP TABLE idemload_recon_traw AS "
    "SELECT " RECON_TABLE_COLUMNS ", k.tenant_id IS NOT NULL AS listed, k.day AS s_day "
    "FROM {table} t "
    "LEFT JOIN idemload_recon_sk k"
    "  ON " KEY_JOIN("t", "k") " "
    "LEFT JOIN idemload_recon_pairs p"
    "  ON t.tenant_id = p.tenant_id AND t.channel = p.channel "
    "WHERE {active} AND (k.tenant_id IS NOT NULL OR (p.tenant_id IS NOT NULL"
    "   AND t.received_at >= " RECON_TIME_FROM("p.timed")
    "   AND t.received_at < " RECON_TIME_TO("p.timed")
    "   AND " RECON_PAIR_COVERS("p", "t") "))";

/* The exponent a row's minor units are scaled by: its currency's (2 for
 * a code idemload_recon_ccy does not list), none when the row states no
 * currency: its amount is then unreadable (the row unverified), never
 * scaled by a guessed exponent (JPY 951395 read as 9513.95). */
#define RECON_EXP(r) "CASE WHEN " r ".currency IS NOT NULL THEN coalesce(x.exponent, 2) END"

/* The statement's rows with their facts and their day in the zone, as a
 * sub-select of SQL_RECON_KEYS (never stored: only the keys are).  The
 * facts' texts are taken out of the payload once, in a sub-select the
 * planner keeps (OFFSET 0): idemload_money, inlined, names its text four
 * times, and an expression in its place would be evaluated four times.
 * rec is what makes the row one record: its transaction id where the
 * profile declares one and the row has it, else its payload (a digest). */
#define RECON_STATEMENT_ROWS(raw) \
    "SELECT r.file_no, r.line, " KEY_LIST("r.") "," \
    "       r.status, r.received_at, r.day, r.a_decl, r.c_decl, r.f_decl, r.currency," \
    "       pg_temp.idemload_money(r.a_text, r.amount_minor, r.amount_abs," \
    "                              " RECON_EXP("r") ", r.currency) AS amount," \
    "       pg_temp.idemload_money(r.f_text, r.fee_minor, r.fee_abs," \
    "                              " RECON_EXP("r") ", r.currency) AS fee, r.rec " \
    "FROM (SELECT r.file_no, r.line, " KEY_LIST("r.") "," \
    "        r.status, r.received_at," \
    "        (r.received_at AT TIME ZONE current_setting('idemload.recon_zone'))::date AS day," \
    "        coalesce(f.a_decl, false) AS a_decl, coalesce(f.c_decl, false) AS c_decl," \
    "        coalesce(f.f_decl, false) AS f_decl," \
    "        upper(nullif(btrim(coalesce(f.currency_const, r.payload #>> f.currency_path," \
    "                                    r.payload #>> f.currency_alt)), ''))" \
    "          AS currency," \
    "        coalesce(f.amount_const, r.payload #>> f.amount_path, r.payload #>> f.amount_alt)" \
    "          AS a_text," \
    "        f.amount_minor, f.amount_abs," \
    "        coalesce(f.fee_const, r.payload #>> f.fee_path, r.payload #>> f.fee_alt) AS f_text," \
    "        f.fee_minor, f.fee_abs," \
    "        coalesce(r.payload #>> f.record_path, md5(r.payload::text)) AS rec" \
    "      FROM " raw " r" \
    "      LEFT JOIN kf f ON f.kind = split_part(r.callback_type, ':', 1) OFFSET 0) r " \
    "LEFT JOIN idemload_recon_ccy x ON x.code = r.currency"

/* The statement's facts of each kind the rows of `kinds` hold (the part
 * of callback_type before ':'): its own level, else the default level;
 * then hash-joined with the rows, where a sub-select per row (a sort and a
 * limit) cost more than the rest of the facts. */
#define RECON_KIND_FACTS(kinds) \
    "WITH kf AS MATERIALIZED (SELECT k.kind, sf.amount_path, sf.amount_const," \
    "     sf.amount_minor, sf.amount_abs, sf.currency_path, sf.currency_const," \
    "     sf.fee_path, sf.fee_const, sf.fee_minor, sf.fee_abs," \
    "     sf.amount_alt, sf.currency_alt, sf.fee_alt, sf.record_path," \
    "     sf.amount_path IS NOT NULL OR sf.amount_const IS NOT NULL AS a_decl," \
    "     sf.currency_path IS NOT NULL OR sf.currency_const IS NOT NULL AS c_decl," \
    "     sf.fee_path IS NOT NULL OR sf.fee_const IS NOT NULL AS f_decl" \
    "   FROM (SELECT DISTINCT split_part(callback_type, ':', 1) AS kind" \
    "           FROM " kinds ") k" \
    "   CROSS JOIN LATERAL (SELECT * FROM idemload_recon_sfacts sf" \
    "      WHERE sf.kind IS NULL OR sf.kind = k.kind ORDER BY sf.kind IS NULL LIMIT 1) sf) "

/* The table's rows with their facts, the most specific level of --facts
 * first (channel and kind, channel, default).  A row whose payload lacks
 * the amount --facts names but holds the statement's (a row loaded from a
 * bill: inserted by --repair missing, or by an import of the bill, whose
 * payload is the bill's row, kept as it was) is read as the statement's
 * rows are, its amount, currency and fee from the bill's own columns
 * (bill): reading it at the callback's path found nothing, and it stayed
 * unverified each night after.  Both sides' facts come once per channel
 * and kind (tl: a hash join), not per row (a sorted sub-select per row
 * cost 0.8 s for 190k rows).  The texts are taken out of the payload in
 * sub-selects the planner keeps (OFFSET 0), each once: bill, the currency
 * and idemload_money's text, inlined, named them up to five times each,
 * and every name was the expression again (20 payload reads a row).
 * Read through SQL_RECON_TABLE_FACTS, once; after --repair, through the
 * view (SQL_RECON_REG_REPAIRED), whose rows are read again. */
#define RECON_SIDE_LEVELS \
    "tl AS MATERIALIZED (SELECT p.channel AS t_channel, p.kind AS t_kind," \
    "     tf.amount_path, tf.amount_const, tf.amount_minor, tf.amount_abs," \
    "     tf.currency_path, tf.currency_const, tf.fee_path, tf.fee_const, tf.fee_minor," \
    "     tf.fee_abs, tf.time_path," \
    "     tf.amount_path IS NOT NULL OR tf.amount_const IS NOT NULL AS a_decl," \
    "     tf.currency_path IS NOT NULL OR tf.currency_const IS NOT NULL AS c_decl," \
    "     tf.fee_path IS NOT NULL OR tf.fee_const IS NOT NULL AS f_decl," \
    "     s.amount_path AS s_amount_path, s.amount_alt AS s_amount_alt," \
    "     s.amount_minor AS s_amount_minor, s.amount_abs AS s_amount_abs," \
    "     s.currency_const AS s_currency_const, s.currency_path AS s_currency_path," \
    "     s.currency_alt AS s_currency_alt, s.fee_const AS s_fee_const," \
    "     s.fee_path AS s_fee_path, s.fee_alt AS s_fee_alt, s.fee_minor AS s_fee_minor," \
    "     s.fee_abs AS s_fee_abs" \
    "   FROM (SELECT DISTINCT channel, split_part(callback_type, ':', 1) AS kind" \
    "           FROM idemload_recon_traw) p" \
    "   CROSS JOIN LATERAL (SELECT * FROM idemload_recon_tfacts tf" \
    "      WHERE (tf.channel IS NULL OR tf.channel = p.channel)" \
    "        AND (tf.kind IS NULL OR tf.kind = p.kind)" \
    "      ORDER BY tf.channel IS NULL, tf.kind IS NULL LIMIT 1) tf" \
    "   LEFT JOIN kf s ON s.kind = p.kind) "
const char SQL_RECON_TABLE_VIEW[] =
    "CREATE TEMP VIEW idemload_recon_tv AS " RECON_KIND_FACTS("idemload_recon_traw")
    ", " RECON_SIDE_LEVELS
    "SELECT " KEY_LIST("v.") ", v.status, v.listed, v.s_day, v.a_decl, v.c_decl, v.f_decl,"
    "       v.currency,"
    "       pg_temp.idemload_money(v.a_text, v.a_minor, v.a_abs, " RECON_EXP("v") ", v.currency)"
    "         AS amount,"
    "       pg_temp.idemload_money(v.f_text, v.f_minor, v.f_abs, " RECON_EXP("v") ", v.currency)"
    "         AS fee, v.time "
    "FROM (SELECT " KEY_LIST("b.") ", b.status, b.listed, b.s_day, b.a_decl, b.c_decl,"
    "        b.f_decl,"
    "        upper(nullif(btrim(CASE WHEN b.bill"
    "          THEN coalesce(b.s_currency_const, b.payload #>> b.s_currency_path,"
    "                        b.payload #>> b.s_currency_alt)"
    "          ELSE coalesce(b.currency_const, b.payload #>> b.currency_path) END), ''))"
    "          AS currency,"
    "        CASE WHEN b.bill THEN b.s_amount ELSE b.t_amount END AS a_text,"
    "        CASE WHEN b.bill THEN b.s_amount_minor ELSE b.amount_minor END AS a_minor,"
    "        CASE WHEN b.bill THEN b.s_amount_abs ELSE b.amount_abs END AS a_abs,"
    "        CASE WHEN b.bill THEN coalesce(b.s_fee_const, b.payload #>> b.s_fee_path,"
    "                                       b.payload #>> b.s_fee_alt)"
    "             ELSE coalesce(b.fee_const, b.payload #>> b.fee_path) END AS f_text,"
    "        CASE WHEN b.bill THEN b.s_fee_minor ELSE b.fee_minor END AS f_minor,"
    "        CASE WHEN b.bill THEN b.s_fee_abs ELSE b.fee_abs END AS f_abs,"
    "        coalesce(CASE WHEN b.time_path IS NOT NULL"
    "                      THEN pg_temp.idemload_time(b.payload #>> b.time_path) END,"
    "                 b.received_at) AS time"
    "      FROM (SELECT a.*, a.t_amount IS NULL AND a.s_amount IS NOT NULL AS bill"
    "              FROM (SELECT t.*, f.*,"
    "                      coalesce(f.amount_const, t.payload #>> f.amount_path) AS t_amount,"
    "                      coalesce(t.payload #>> f.s_amount_path,"
    "                               t.payload #>> f.s_amount_alt) AS s_amount"
    "                      FROM idemload_recon_traw t"
    "                      JOIN tl f ON f.t_channel = t.channel"
    "                       AND f.t_kind = split_part(t.callback_type, ':', 1) OFFSET 0) a"
    "            OFFSET 0) b) v "
    "LEFT JOIN idemload_recon_ccy x ON x.code = v.currency";

/* The table's rows with their facts (SQL_RECON_TABLE_VIEW), worked out
 * once for the comparison, which reads them twice (the statement's keys,
 * the rows it lacks). */
const char SQL_RECON_TABLE_FACTS[] =
    "CREATE TEMP TABLE idemload_recon_t AS SELECT * FROM idemload_recon_tv";
const char SQL_RECON_ANALYZE_TABLE_FACTS[] = "ANALYZE idemload_recon_t";

/* One row per key: the version import's deduplication would keep (the
 * latest received_at, then the later file and line), and how many rows
 * list it.  A key listed once is its row: its status is its own, and its
 * rows cannot disagree (conflicting false).  The keys listed more than
 * once (m: a hash of the keys, few of them on any day) keep their latest
 * row (DISTINCT ON over their rows alone), and SQL_RECON_KEYS_SHARED
 * settles the rest.  Sorting every row by key to deduplicate them cost
 * two fifths of the comparison, more at 1M rows, where the sort spills
 * to disk, and a dozen window aggregates per key and a digest of every
 * row a third of what remained. */
#define RECON_KEY_COLUMNS(s) \
    s "file_no, " s "line, " KEY_LIST(s) ", " s "status, " s "received_at, " s "day, " \
    s "a_decl, " s "c_decl, " s "f_decl, " s "currency, " s "amount, " s "fee"
const char SQL_RECON_KEYS[] =
    "CREATE TEMP TABLE idemload_recon_sk AS " RECON_KIND_FACTS("idemload_recon_raw")
    ", m AS MATERIALIZED (SELECT " KEY_LIST("") ", count(*) AS n FROM idemload_recon_raw"
    "   GROUP BY " KEY_LIST("") " HAVING count(*) > 1) "
    "SELECT " RECON_KEY_COLUMNS("s.") ", 1::bigint AS n_rows, false AS conflicting "
    "FROM (" RECON_STATEMENT_ROWS("(SELECT r.* FROM idemload_recon_raw r"
    "        WHERE NOT EXISTS (SELECT 1 FROM m WHERE " KEY_JOIN("m", "r") "))") ") s "
    "UNION ALL "
    "(SELECT DISTINCT ON (" KEY_LIST("s.") ") " RECON_KEY_COLUMNS("s.") ", m.n, false "
    " FROM (" RECON_STATEMENT_ROWS("(SELECT r.* FROM idemload_recon_raw r"
    "         JOIN m ON " KEY_JOIN("m", "r") ")") ") s"
    " JOIN m ON " KEY_JOIN("m", "s")
    " ORDER BY " KEY_LIST("s.") ", s.received_at DESC, s.file_no DESC, s.line DESC)";

/* The keys listed more than once (SQL_RECON_KEYS): the status is a final
 * one that any of its rows holds ($1, the final statuses; the least of
 * them when its rows hold two, which makes the key a duplicate anyway),
 * and whether its rows disagree on a fact (amount, currency, status, fee:
 * values that differ, or a value some rows have and others lack) or are
 * different records (rec differs: two charges of one order, with the same
 * amount, are two payments, not one listed twice); min <> max over the
 * key's rows is "more than one distinct value".  Only those keys' rows
 * get their facts worked out (a hash of the keys beside one scan of the
 * rows). */
#define RECON_KEY_DIFFERS(f) "min(" f ") <> max(" f ")"
#define RECON_KEY_PARTIAL(f) "count(" f ") NOT IN (0, count(*))"
const char SQL_RECON_KEYS_SHARED[] =
    "UPDATE idemload_recon_sk k SET status = coalesce(g.final_status, k.status),"
    "       conflicting = g.conflicting "
    "FROM (" RECON_KIND_FACTS("idemload_recon_sk WHERE n_rows > 1")
    "  SELECT " KEY_LIST("s.") ","
    "         min(s.status) FILTER (WHERE s.status = ANY ($1::smallint[])) AS final_status,"
    "         " RECON_KEY_DIFFERS("s.amount") " OR " RECON_KEY_DIFFERS("s.currency")
    "         OR " RECON_KEY_DIFFERS("s.status") " OR " RECON_KEY_DIFFERS("s.fee")
    "         OR " RECON_KEY_PARTIAL("s.amount") " OR " RECON_KEY_PARTIAL("s.currency")
    "         OR " RECON_KEY_PARTIAL("s.fee") " OR " RECON_KEY_DIFFERS("s.rec") " AS conflicting"
    "    FROM (" RECON_STATEMENT_ROWS("(SELECT r.* FROM idemload_recon_raw r"
    "            JOIN idemload_recon_sk k ON k.n_rows > 1 AND " KEY_JOIN("k", "r") ")") ") s"
    "   GROUP BY " KEY_LIST("s.") ") g "
    "WHERE k.n_rows > 1 AND " KEY_JOIN("k", "g");

/* The rows of each key listed with facts that disagree
 * (duplicate_in_statement), each with its facts, so that its line shows
 * every listing, not only the version kept: at most RECON_LISTED_MAX per
 * key ($1), in file and line order, as a JSON array (file as the
 * file's number).  Only the rows of such keys get their facts worked out (a hash
 * of those keys, empty on most days, beside one scan of the rows), and the
 * kinds' facts are those of such keys (a key's rows share its
 * callback_type), not a second pass over every row. */
const char SQL_RECON_LISTED[] =
    "CREATE TEMP TABLE idemload_recon_listed AS "
    RECON_KIND_FACTS("idemload_recon_sk WHERE conflicting")
    "SELECT " KEY_LIST("s.") ","
    "       (jsonb_agg(jsonb_build_object("
    "          'amount', pg_temp.idemload_render(s.amount, coalesce(x.exponent, 2)),"
    "          'currency', s.currency,"
    "          'fee', pg_temp.idemload_render(s.fee, coalesce(x.exponent, 2)),"
    "          'status', s.status, 'time', pg_temp.idemload_ts_text(s.received_at),"
    "          'file', s.file_no, 'line', s.line) ORDER BY s.file_no, s.line)"
    "        FILTER (WHERE s.n <= $1::int))::text AS listed, count(*) AS n_listed "
    "FROM (SELECT s.*, row_number() OVER (PARTITION BY " KEY_LIST("s.")
    "                                       ORDER BY s.file_no, s.line) AS n"
    "        FROM (" RECON_STATEMENT_ROWS("(SELECT r.* FROM idemload_recon_raw r"
    "                JOIN idemload_recon_sk k ON k.conflicting AND " KEY_JOIN("k", "r") ")")
    ") s) s "
    "LEFT JOIN idemload_recon_ccy x ON x.code = s.currency "
    "GROUP BY " KEY_LIST("s.");

/* The statement's rows of the keys listed more than once, other than the
 * version each key keeps (a second charge of one order, or the same record
 * listed twice), with their own currency and amount: the statement's
 * totals count every row of the file, so that they equal the sums of its
 * rows.  A table of its own, analyzed before SQL_RECON_EXTRA joins it to
 * the keys: the planner took the key join's four columns for one row and
 * scanned every key once per row (2,400 rows of a 50,000-row statement:
 * 40 s; 200,000 rows: over ten minutes). */
const char SQL_RECON_EXTRA_ROWS[] =
    "CREATE TEMP TABLE idemload_recon_xrows AS "
    RECON_KIND_FACTS("idemload_recon_sk WHERE n_rows > 1")
    "SELECT " KEY_LIST("s.") ", s.currency, s.amount "
    "FROM (" RECON_STATEMENT_ROWS("(SELECT r.* FROM idemload_recon_raw r"
    "        JOIN idemload_recon_sk k ON k.n_rows > 1 AND " KEY_JOIN("k", "r")
    "         AND (k.file_no, k.line) <> (r.file_no, r.line))") ") s";

const char SQL_RECON_ANALYZE_EXTRA_ROWS[] = "ANALYZE idemload_recon_xrows";

/* $1, $2: the period.  The rows of SQL_RECON_EXTRA_ROWS of the period's
 * keys, each on its key's day. */
const char SQL_RECON_EXTRA[] =
    "CREATE TEMP TABLE idemload_recon_extra AS "
    "SELECT k.tenant_id, k.channel, k.day, k.callback_type, s.currency, s.amount "
    "FROM idemload_recon_xrows s "
    "JOIN idemload_recon_sk k ON k.n_rows > 1 AND " KEY_JOIN("k", "s") " "
    "WHERE k.day BETWEEN $1::date AND $2::date";

/* Per file: its rows staged minus the keys its rows represent (what the
 * deduplication took away), for the file's figures. */
const char SQL_RECON_FILE_DEDUP[] =
    "SELECT file_no, count(*) - coalesce((SELECT count(*) FROM idemload_recon_sk k"
    "  WHERE k.file_no = r.file_no), 0) "
    "FROM idemload_recon_raw r GROUP BY file_no";

/* The days the statement's keys fall in, and how many keys there are. */
const char SQL_RECON_DAYS_SPAN[] =
    "SELECT min(day)::text, max(day)::text, count(*) FROM idemload_recon_sk";

/* $1, $2: the period.  The statement's (valid) rows outside it, not
 * compared: before the first instant of its first day in the zone, or at
 * or after the first instant of the day after its last (the bounds the
 * table read uses, RECON_TIME_FROM).  Each bound is a sub-select, worked
 * out once: the row's own time in the zone, worked out per row, cost 1.4 s
 * of 1.7 for a million rows. */
const char SQL_RECON_OUTSIDE[] =
    "SELECT count(*) FROM idemload_recon_raw"
    " WHERE received_at < (SELECT $1::date::timestamp"
    "                        AT TIME ZONE current_setting('idemload.recon_zone'))"
    "    OR received_at >= (SELECT ($2::date + 1)::timestamp"
    "                        AT TIME ZONE current_setting('idemload.recon_zone'))";

/* The statement's (tenant, channel) pairs: those of its valid rows, in the
 * period or not (a statement whose rows all fall outside an explicit period
 * still stands for its pairs: their table rows of the period are
 * no_statement, not balanced), and the pair --set names, $1 and $2, when
 * it names both (a bill without a row still stands for its merchant and
 * channel), for every file; with whether --facts names a time fact for the
 * channel (at any level that applies to it: then its rows' time is not
 * received_at), and the kinds every file of the pair leaves out
 * (idemload_recon_cover; NULL: none; a WeChat SUCCESS bill and a REFUND
 * bill of one pair, read together, leave out none). */
const char SQL_RECON_PAIRS[] =
    "CREATE TEMP TABLE idemload_recon_pairs AS"
    " WITH pf AS (SELECT DISTINCT tenant_id, channel, file_no FROM idemload_recon_raw"
    "             UNION SELECT $1::bigint, $2::text, c.file_no FROM idemload_recon_cover c"
    "              WHERE $1 IS NOT NULL AND $2 IS NOT NULL)"
    " SELECT k.tenant_id, k.channel, EXISTS (SELECT 1 FROM idemload_recon_tfacts f"
    "          WHERE (f.channel IS NULL OR f.channel = k.channel) AND f.time_path IS NOT NULL)"
    "        AS timed,"
    "        (SELECT array_agg(e.kind) FROM (SELECT c.kind FROM pf f"
    "            JOIN idemload_recon_cover c ON c.file_no = f.file_no AND c.kind IS NOT NULL"
    "           WHERE f.tenant_id = k.tenant_id AND f.channel = k.channel"
    "           GROUP BY c.kind HAVING count(*) = k.n_files) e) AS excluded"
    " FROM (SELECT tenant_id, channel, count(*) AS n_files FROM pf GROUP BY 1, 2) k";
/* $1, $2: the period.  Every statement key of the period with the active
 * row of its key (whatever that row's time), then every active row of the
 * statement's (tenant, channel) pairs whose time falls in the period and
 * whose key the statement does not list in the period
 * (SQL_RECON_TABLE_ROWS read them): one it lists only on a day outside an
 * explicit --period is other_day, matched by that listing as by a
 * statement of another day (SQL_RECON_RELISTED), and counted in its day,
 * where it had fallen between the two halves and vanished. */
#define RECON_COMPARE_ROWS \
    "SELECT " KEY_LIST("s.") ", s.day," \
    "       s.file_no, s.line, s.conflicting," \
    "       true AS s_present, s.amount AS s_amount, s.currency AS s_currency," \
    "       s.status AS s_status, s.received_at AS s_time, s.fee AS s_fee," \
    "       t.tenant_id IS NOT NULL AS t_present, t.amount AS t_amount," \
    "       t.currency AS t_currency, t.status AS t_status, t.time AS t_time, t.fee AS t_fee," \
    "       s.a_decl AND coalesce(t.a_decl, false) AS a_cmp," \
    "       s.c_decl AND coalesce(t.c_decl, false) AS c_cmp," \
    "       s.f_decl AND coalesce(t.f_decl, false) AS f_cmp, false AS other_day " \
    "FROM idemload_recon_sk s LEFT JOIN idemload_recon_t t" \
    "  ON t.listed AND " KEY_JOIN("t", "s") " " \
    "WHERE s.day BETWEEN $1::date AND $2::date " \
    "UNION ALL " \
    "SELECT " KEY_LIST("t.") "," \
    "       (t.time AT TIME ZONE current_setting('idemload.recon_zone'))::date," \
    "       NULL, NULL, false," \
    "       false, NULL, NULL, NULL, NULL, NULL," \
    "       true, t.amount, t.currency, t.status, t.time, t.fee, false, false, false," \
    "       t.listed " \
    "FROM idemload_recon_t t " \
    "WHERE (NOT t.listed OR t.s_day NOT BETWEEN $1::date AND $2::date)" \
    "  AND (t.time AT TIME ZONE current_setting('idemload.recon_zone'))::date" \
    "      BETWEEN $1::date AND $2::date"

/* The resolution of a missing_in_statement or pending item whose key a
 * statement of another day listed (SQL_RECON_REG_RESOLVE_LISTED). */
#define RECON_LISTED_LATER "'listed by a later statement'"
/* The resolution of a marker item (SQL_RECON_REG_LISTED_ELSEWHERE): a
 * table row of one day whose key a statement of another day listed,
 * recorded so that its own day, reconciled afterwards, matches it. */
#define RECON_LISTED_OTHER "'listed by the statement of another day'"
/* The items of keys a statement of another day listed, by day, for
 * SQL_RECON_RELISTED (the register's open index holds no resolved item). */
#define RECON_LISTED_INDEX \
    "CREATE INDEX IF NOT EXISTS idemload_recon_item_listed ON {item} (day)" \
    " WHERE state = 'resolved' AND resolution IN (" RECON_LISTED_LATER ", " RECON_LISTED_OTHER ")"
#define RECON_REPAIRED "'inserted by --repair'"
#define RECON_MERGED "'updated by --repair merge'"

/* $1, $2: the period.  The keys of the period's days, of the run's pairs,
 * whose register item a statement of another day resolved by listing the
 * key: when the day is reconciled again (a corrected or re-sent statement
 * that still lacks the key), the table's row is not missing from the
 * channel's statements, and SQL_RECON_CLASSIFY counts it as matched rather
 * than opening it again.  Read from the register when the role may read it;
 * otherwise (no register yet, a dry run's role that may not read it) the
 * same table, empty (SQL_RECON_RELISTED_NONE).  One row per key and day.
 * Such items are found by their own index (RECON_LISTED_INDEX), not a
 * scan of the register: a day no run has reconciled yet can have them (a
 * later day reconciled first listed its rows). */
#define RECON_RELISTED_TABLE "CREATE TEMP TABLE idemload_recon_relisted "
const char SQL_RECON_RELISTED[] =
    RECON_RELISTED_TABLE "AS SELECT DISTINCT i.tenant_id, i.channel, i.out_trade_no,"
    "       i.callback_type, i.day "
    "FROM {item} i WHERE i.state = 'resolved'"
    "  AND i.resolution IN (" RECON_LISTED_LATER ", " RECON_LISTED_OTHER ")"
    "  AND i.day BETWEEN $1::date AND $2::date AND i.out_trade_no IS NOT NULL"
    "  AND EXISTS (SELECT 1 FROM idemload_recon_pairs p"
    "      WHERE p.tenant_id = i.tenant_id AND p.channel = i.channel)";
const char SQL_RECON_RELISTED_NONE[] =
    RECON_RELISTED_TABLE "(tenant_id bigint, channel text, out_trade_no text,"
    " callback_type text, day date)";
const char SQL_RECON_ANALYZE_RELISTED[] = "ANALYZE idemload_recon_relisted";

/* Each compared unit's outcome: a table row of a day without any
 * statement row of its pair is covered by that day's no_statement; one the
 * statement lacks is matched when a statement of another day listed its
 * key (SQL_RECON_RELISTED), else pending until the grace after the end of
 * its day; otherwise its categories (a fact compared only where both sides
 * declare it and both rows hold it; amounts in two currencies are not compared:
 * the row is a currency_mismatch, not also an amount_mismatch); with none, unverified when a declared fact is
 * missing on a side, else matched.  difference: statement minus table, in
 * the major unit, when the currencies agree.  Whether a day of a pair is
 * listed is a join with the listed days (hashed), not a sub-select per
 * row: that scanned the statement's keys once for every table row the
 * statement lacks (minutes at 1M keys against 10M rows).  $1, $2: the
 * period; the comparison is a sub-select, not a table written, analyzed
 * and read again. */
const char SQL_RECON_CLASSIFY[] =
    "CREATE TEMP TABLE idemload_recon_out AS "
    "SELECT c.*, cat.categories,"
    "  CASE WHEN NOT c.s_present AND NOT c.day_listed THEN 'no_statement'"
    "       WHEN c.relisted THEN 'matched'"
    "       WHEN NOT c.s_present AND pg_temp.idemload_now() < ((c.day + 1)::timestamp AT TIME ZONE"
    "            current_setting('idemload.recon_zone'))"
    "            + current_setting('idemload.recon_grace')::interval THEN 'pending'"
    "       WHEN cardinality(cat.categories) > 0 THEN 'discrepancy'"
    "       WHEN (c.a_cmp AND (c.s_amount IS NULL OR c.t_amount IS NULL))"
    "         OR (c.c_cmp AND (c.s_currency IS NULL OR c.t_currency IS NULL))"
    "         OR (c.f_cmp AND (c.s_fee IS NULL OR c.t_fee IS NULL)) THEN 'unverified'"
    "       ELSE 'matched' END AS outcome,"
    "  CASE WHEN c.s_present AND c.t_present THEN"
    "         CASE WHEN c.s_currency IS NOT DISTINCT FROM c.t_currency OR NOT c.c_cmp"
    "              THEN c.s_amount - c.t_amount END"
    "       WHEN c.s_present THEN c.s_amount ELSE -c.t_amount END AS difference "
    "FROM (SELECT x.*, x.s_present OR ld.tenant_id IS NOT NULL AS day_listed,"
    "             rl.tenant_id IS NOT NULL OR x.other_day AS relisted"
    "        FROM (" RECON_COMPARE_ROWS ") x"
    "        LEFT JOIN (SELECT DISTINCT tenant_id, channel, day FROM idemload_recon_sk) ld"
    "          ON ld.tenant_id = x.tenant_id AND ld.channel = x.channel AND ld.day = x.day"
    "        LEFT JOIN idemload_recon_relisted rl ON NOT x.s_present"
    "         AND rl.tenant_id = x.tenant_id AND rl.channel = x.channel"
    "         AND rl.out_trade_no = x.out_trade_no AND rl.callback_type = x.callback_type"
    "         AND rl.day = x.day) c "
    "CROSS JOIN LATERAL (SELECT array_remove(ARRAY["
    "    CASE WHEN c.s_present AND NOT c.t_present THEN 'missing_in_table' END,"
    "    CASE WHEN NOT c.s_present AND c.day_listed AND NOT c.relisted"
    "         THEN 'missing_in_statement' END,"
    "    CASE WHEN c.s_present AND c.t_present"
    "          AND ((c.a_cmp AND c.s_amount <> c.t_amount) OR (c.f_cmp AND c.s_fee <> c.t_fee))"
    "          AND NOT coalesce(c.c_cmp AND c.s_currency <> c.t_currency, false)"
    "         THEN 'amount_mismatch' END,"
    "    CASE WHEN c.s_present AND c.t_present AND c.c_cmp AND c.s_currency <> c.t_currency"
    "         THEN 'currency_mismatch' END,"
    "    CASE WHEN c.s_present AND c.t_present AND c.s_status <> c.t_status"
    "         THEN 'status_mismatch' END,"
    "    CASE WHEN c.s_present AND c.conflicting THEN 'duplicate_in_statement' END"
    "  ], NULL) AS categories) cat";

/* One line per discrepancy (a pending row is kept as a line of its own
 * category, 'pending', for the register; it is no discrepancy): both
 * sides' facts as text, amounts in the major unit; one no_statement line
 * per (tenant, channel, day) whose table rows no statement row of its pair
 * covers, its difference minus their sum (none when they hold several
 * currencies: money of two currencies is never added); ccy: the currency
 * of the line's difference. */
const char SQL_RECON_LINES[] =
    "CREATE TEMP TABLE idemload_recon_lines AS "
    "SELECT CASE WHEN o.outcome = 'pending' THEN 'pending' ELSE cat END AS category,"
    "       " KEY_LIST("o.") ", o.day,"
    "       o.s_present, pg_temp.idemload_render(o.s_amount, coalesce(xs.exponent, 2)) AS s_amount,"
    "       o.s_currency, o.s_status, pg_temp.idemload_ts_text(o.s_time) AS s_time,"
    "       pg_temp.idemload_render(o.s_fee, coalesce(xs.exponent, 2)) AS s_fee,"
    "       o.t_present, pg_temp.idemload_render(o.t_amount, coalesce(xt.exponent, 2)) AS t_amount,"
    "       o.t_currency, o.t_status, pg_temp.idemload_ts_text(o.t_time) AS t_time,"
    "       pg_temp.idemload_render(o.t_fee, coalesce(xt.exponent, 2)) AS t_fee,"
    "       o.difference AS diff,"
    "       pg_temp.idemload_render(o.difference,"
    "         coalesce(CASE WHEN o.s_currency IS NOT NULL THEN xs.exponent ELSE xt.exponent END, 2))"
    "         AS difference,"
    "       o.file_no, o.line, coalesce(o.s_currency, o.t_currency) AS ccy,"
    "       d.listed, d.n_listed "
    "FROM idemload_recon_out o"
    " LEFT JOIN idemload_recon_ccy xs ON xs.code = o.s_currency"
    " LEFT JOIN idemload_recon_ccy xt ON xt.code = o.t_currency"
    " CROSS JOIN LATERAL unnest(CASE WHEN o.outcome = 'pending' THEN ARRAY['pending']"
    "                                ELSE o.categories END) cat"
    " LEFT JOIN idemload_recon_listed d ON cat = 'duplicate_in_statement'"
    "  AND " KEY_JOIN("d", "o") " "
    "WHERE o.outcome IN ('discrepancy', 'pending') "
    "UNION ALL "
    "SELECT 'no_statement', o.tenant_id, o.channel, NULL, NULL, o.day,"
    "       false, NULL, NULL, NULL, NULL, NULL,"
    "       false, NULL, NULL, NULL, NULL, NULL,"
    "       CASE WHEN count(DISTINCT o.t_currency) <= 1 THEN -sum(o.t_amount) END,"
    "       CASE WHEN count(DISTINCT o.t_currency) <= 1 THEN"
    "         pg_temp.idemload_money_text(-sum(o.t_amount), min(o.t_currency)) END,"
    "       NULL, NULL, CASE WHEN count(DISTINCT o.t_currency) = 1 THEN min(o.t_currency) END,"
    "       NULL, NULL "
    "FROM idemload_recon_out o WHERE o.outcome = 'no_statement' "
    "GROUP BY o.tenant_id, o.channel, o.day";

/* A line of this run (l) and an item of the register (i) are the same:
 * the same key, day and category, a pending item and a missing_in_statement
 * line (or the reverse) counting as one category, so that a day
 * reconciled again after the grace escalates its pending item in place
 * (it keeps its first_seen, and is neither resolved nor opened again). */
#define RECON_ITEM_FAMILY(x) \
    "CASE WHEN " x ".category = 'pending' THEN 'missing_in_statement' ELSE " x ".category END"
#define RECON_SAME_ITEM \
    "l.tenant_id = i.tenant_id AND l.channel = i.channel AND l.day = i.day" \
    " AND " RECON_ITEM_FAMILY("l") " = " RECON_ITEM_FAMILY("i") \
    " AND coalesce(l.out_trade_no, '') = coalesce(i.out_trade_no, '')" \
    " AND coalesce(l.callback_type, '') = coalesce(i.callback_type, '')"

/* The discrepancy lines (pending ones are the register's only) in a
 * stable order, through a cursor so that memory stays bounded whatever
 * their number; first_seen NULL (a dry run: no register).  The order is
 * day, tenant, channel, category, then the key (out_trade_no,
 * callback_type): the first sort key is the rank of the line's (day,
 * tenant, channel, category) group (a few rows, hashed in), one bigint
 * where four columns were compared, then the key.  (A rank of each key in
 * the statement's order, kept from its deduplication, spared the key's
 * comparison when a day has a million lines; the deduplication no longer
 * sorts the keys.) */
#define RECON_LINE_COLUMNS \
    "l.category, l.tenant_id, l.channel, l.out_trade_no, l.callback_type, l.day::text," \
    " l.s_present, l.s_amount, l.s_currency, l.s_status, l.s_time, l.s_fee," \
    " l.t_present, l.t_amount, l.t_currency, l.t_status, l.t_time, l.t_fee, l.difference," \
    " l.file_no, l.line, l.listed, l.n_listed, "
#define RECON_LINE_FROM \
    " FROM idemload_recon_lines l" \
    " JOIN (SELECT day, tenant_id, channel, category," \
    "              row_number() OVER (ORDER BY day, tenant_id, channel, category) AS g" \
    "         FROM (SELECT DISTINCT day, tenant_id, channel, category" \
    "                 FROM idemload_recon_lines WHERE category <> 'pending') d) g" \
    "   ON g.day = l.day AND g.tenant_id = l.tenant_id AND g.channel = l.channel" \
    "  AND g.category = l.category"
#define RECON_LINE_ORDER \
    " WHERE l.category <> 'pending'" \
    " ORDER BY g.g, l.out_trade_no, l.callback_type"
const char SQL_RECON_LINE_CURSOR[] =
    "DECLARE idemload_recon_lines_cur NO SCROLL CURSOR FOR SELECT " RECON_LINE_COLUMNS
    " NULL::text" RECON_LINE_FROM RECON_LINE_ORDER;
/* The same when none of the lines was an item the register held open
 * (SQL_RECON_REG_UPSERT found none, the common case of a new day): every
 * line's item was opened by this transaction, now, and the join with the
 * register (a hash of every open item) is not needed.  now() is rendered
 * once, in a sub-select, not once per line. */
const char SQL_RECON_LINE_CURSOR_NEW[] =
    "DECLARE idemload_recon_lines_cur NO SCROLL CURSOR FOR SELECT " RECON_LINE_COLUMNS
    " (SELECT pg_temp.idemload_ts_text(pg_temp.idemload_now(), false))" RECON_LINE_FROM RECON_LINE_ORDER;
/* The same with when the register first saw each line. */
const char SQL_RECON_LINE_CURSOR_REG[] =
    "DECLARE idemload_recon_lines_cur NO SCROLL CURSOR FOR SELECT " RECON_LINE_COLUMNS
    " pg_temp.idemload_ts_text(i.first_seen, false)" RECON_LINE_FROM
    " LEFT JOIN {item} i ON i.state <> 'resolved'"
    "  AND " RECON_SAME_ITEM RECON_LINE_ORDER;
const char SQL_RECON_LINE_FETCH[] = "FETCH 5000 FROM idemload_recon_lines_cur";
const char SQL_RECON_LINE_CLOSE[] = "CLOSE idemload_recon_lines_cur";

/* Per tenant, channel and day: rows on each side (the statement's every
 * row, SQL_RECON_EXTRA's included), matched, unverified, pending, and each
 * side's rows with no readable amount (in no total). */
const char SQL_RECON_DAY_FIGURES[] =
    "SELECT tenant_id, channel, day::text,"
    "       count(*) FILTER (WHERE s_present), count(*) FILTER (WHERE t_present),"
    "       count(*) FILTER (WHERE outcome = 'matched'),"
    "       count(*) FILTER (WHERE outcome = 'unverified'),"
    "       count(*) FILTER (WHERE outcome = 'pending'),"
    "       count(*) FILTER (WHERE s_present AND s_amount IS NULL),"
    "       count(*) FILTER (WHERE t_present AND t_amount IS NULL) "
    "FROM (SELECT tenant_id, channel, day, s_present, t_present, outcome, s_amount, t_amount"
    "        FROM idemload_recon_out"
    "      UNION ALL SELECT tenant_id, channel, day, true, false, NULL, amount, NULL"
    "        FROM idemload_recon_extra) o "
    "GROUP BY 1, 2, 3 ORDER BY 3, 1, 2";

/* Each side's rows of the comparison with their kind (the part of
 * callback_type before ':'), currency and amount, summed once per tenant,
 * channel, day, side ('s' or 't'), kind and currency (amount NULL when
 * none of the rows has one), with the rows and the amounts counted: every
 * figure per kind and per currency below is a sum of these few rows, not
 * a pass of its own over every row (two passes where there were eight). */
const char SQL_RECON_KIND_TOTALS[] =
    "CREATE TEMP TABLE idemload_recon_kt AS "
    "SELECT tenant_id, channel, day, side, kind, currency, sum(amount) AS amount,"
    "       count(*) AS n, count(amount) AS n_amount "
    "FROM (SELECT tenant_id, channel, day, 's' AS side, split_part(callback_type, ':', 1) AS kind,"
    "             s_currency AS currency, s_amount AS amount FROM idemload_recon_out WHERE s_present"
    "      UNION ALL SELECT tenant_id, channel, day, 's', split_part(callback_type, ':', 1),"
    "             currency, amount FROM idemload_recon_extra"
    "      UNION ALL SELECT tenant_id, channel, day, 't', split_part(callback_type, ':', 1),"
    "             t_currency, t_amount FROM idemload_recon_out WHERE t_present) a "
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

/* The temporary tables the next statements join, analyzed: autovacuum
 * never sees a temporary table, and without statistics the planner
 * guesses their sizes (a nested loop over a million rows). */
const char SQL_RECON_ANALYZE_KEYS[] = "ANALYZE idemload_recon_sk";
/* The pairs before the table read: unanalyzed, their hundred rows looked
 * like a thousand, and the planner merge-joined them with the table's
 * whole unique index where a hash of them beside a sequential scan reads
 * the table in half the time. */
const char SQL_RECON_ANALYZE_PAIRS[] = "ANALYZE idemload_recon_pairs";
const char SQL_RECON_ANALYZE_ROWS[] = "ANALYZE idemload_recon_traw";
const char SQL_RECON_ANALYZE_OUT[] = "ANALYZE idemload_recon_out";
const char SQL_RECON_ANALYZE_LINES[] = "ANALYZE idemload_recon_lines";
/* The register's items, before the statements that join them with this
 * run's lines and again after new ones are added: a register written by the
 * run before (a corrected statement reconciled minutes later) has no
 * statistics yet, autovacuum not having come by, and the planner, taking it
 * for empty, would rescan every line for each item (200k items and lines:
 * hours instead of a second). */
const char SQL_RECON_ANALYZE_ITEM[] = "ANALYZE {item}";

/* ---- the register (beside the ledger, in the target's schema) -------- */

/* $1, $2: the item and run tables' names as text (schema.name). */
const char SQL_RECON_REGISTER_EXISTS[] =
    "SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL,"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1)"
    "                  AND attname = 'reported_by' AND NOT attisdropped)";

/* A register made before items recorded which run's outputs showed them
 * (reported_by): the column added, its items taken as shown by an
 * earlier run (0: before it was recorded), so that none is listed as
 * appeared again. */
const char SQL_RECON_REGISTER_UPGRADE[] =
    "SELECT pg_advisory_xact_lock(7350323339418284034);"
    "ALTER TABLE {item} ADD COLUMN IF NOT EXISTS reported_by bigint DEFAULT 0;"
    "ALTER TABLE {item} ALTER COLUMN reported_by DROP DEFAULT;"
    RECON_LISTED_INDEX;

/* One transaction at a time creates them (the ledger's lock key + 2). */
const char SQL_RECON_REGISTER_CREATE[] =
    "SELECT pg_advisory_xact_lock(7350323339418284034);"
    "CREATE TABLE IF NOT EXISTS {run} ("
    "  id bigserial PRIMARY KEY, run bigint NOT NULL, ran_at timestamptz NOT NULL DEFAULT now(),"
    "  tenant_id bigint NOT NULL, channel text NOT NULL, day date NOT NULL,"
    "  verdict text NOT NULL, statement jsonb NOT NULL, table_side jsonb NOT NULL,"
    "  matched bigint NOT NULL, unverified bigint NOT NULL, pending bigint NOT NULL,"
    "  categories jsonb NOT NULL, files jsonb NOT NULL, superseded_by bigint);"
    "CREATE INDEX IF NOT EXISTS {run_index} ON {run} (tenant_id, channel, day);"
    "CREATE TABLE IF NOT EXISTS {item} ("
    "  id bigserial PRIMARY KEY, tenant_id bigint NOT NULL, channel text NOT NULL,"
    "  out_trade_no text, callback_type text, day date NOT NULL, category text NOT NULL,"
    "  state text NOT NULL CHECK (state IN ('open', 'pending', 'resolved')),"
    "  statement jsonb, table_side jsonb, difference text, file text, line bigint,"
    "  first_seen timestamptz NOT NULL, last_seen timestamptz NOT NULL,"
    "  opened_by bigint NOT NULL, last_run bigint NOT NULL,"
    "  resolved_at timestamptz, resolved_by bigint, resolution text, reported_by bigint);"
    "CREATE INDEX IF NOT EXISTS {item_index} ON {item} (tenant_id, channel, day)"
    " WHERE state <> 'resolved';"
    RECON_LISTED_INDEX;

/* This run's number: one above every run the register holds, read once
 * SQL_RECON_RUN_LOCK holds the lock of SQL_RECON_REGISTER_CREATE's key
 * for the transaction, so two runs never share one.  Two statements: one
 * that waited for the lock still read the register as its snapshot, taken
 * before the wait, showed it, and two runs of the same day at once were
 * both run 2 (the second superseding run 2 by run 2 and reporting the
 * first's items as its own). */
const char SQL_RECON_RUN_LOCK[] = "SELECT pg_advisory_xact_lock(7350323339418284034)";
const char SQL_RECON_RUN_ID[] =
    "SELECT coalesce(max(run), 0) + 1 FROM {run}";

/* $1 the run, $2 $3 the period.  Open or pending items of other days whose
 * key this statement lists: resolved by a later statement (RECON_LISTED_LATER,
 * which SQL_RECON_RELISTED reads back when their day is reconciled again). */
const char SQL_RECON_REG_RESOLVE_LISTED[] =
    "UPDATE {item} i SET state = 'resolved', resolved_at = pg_temp.idemload_now(), resolved_by = $1,"
    "       resolution = " RECON_LISTED_LATER " "
    "WHERE i.state <> 'resolved' AND i.category IN ('missing_in_statement', 'pending')"
    "  AND i.day NOT BETWEEN $2::date AND $3::date"
    "  AND EXISTS (SELECT 1 FROM idemload_recon_sk k WHERE k.tenant_id = i.tenant_id"
    "      AND k.channel = i.channel AND k.out_trade_no = i.out_trade_no"
    "      AND k.callback_type = i.callback_type)";

/* $1 the run, $2 the files.  The statement's keys this run compared whose
 * table row counts on another day (its time in another day than the
 * statement's row): a marker item of that day, resolved as soon as made
 * (RECON_LISTED_OTHER, never a discrepancy nor listed as resolved), which
 * SQL_RECON_RELISTED reads when that day is reconciled, so that a day
 * reconciled after a later one (day 22 before day 20) matches the row day
 * 22's statement listed, as it would have had day 20 come first (SPEC:
 * the order in which days are reconciled never changes a result).  One
 * per key and day: none when an item of it is already resolved so. */
const char SQL_RECON_REG_LISTED_ELSEWHERE[] =
    "INSERT INTO {item} (tenant_id, channel, out_trade_no, callback_type, day, category, state,"
    "  file, line, first_seen, last_seen, opened_by, last_run, resolved_at, resolved_by,"
    "  resolution) "
    "SELECT o.tenant_id, o.channel, o.out_trade_no, o.callback_type, o.t_day,"
    "  'missing_in_statement', 'resolved', ($2::jsonb) ->> (o.file_no - 1), o.line, pg_temp.idemload_now(), pg_temp.idemload_now(),"
    "  $1, $1, pg_temp.idemload_now(), $1, " RECON_LISTED_OTHER " "
    "FROM (SELECT o.*, (o.t_time AT TIME ZONE current_setting('idemload.recon_zone'))::date"
    "               AS t_day FROM idemload_recon_out o WHERE o.s_present AND o.t_present) o "
    "WHERE o.t_day <> o.day"
    "  AND NOT EXISTS (SELECT 1 FROM {item} i WHERE i.state = 'resolved'"
    "      AND i.resolution IN (" RECON_LISTED_LATER ", " RECON_LISTED_OTHER ")"
    "      AND i.tenant_id = o.tenant_id AND i.channel = o.channel AND i.day = o.t_day"
    "      AND i.out_trade_no = o.out_trade_no AND i.callback_type = o.callback_type)";

/* $1 the run, $2 $3 the period.  Items of the days reconciled again that
 * this run no longer finds (not those of a kind the statement cannot
 * list: a SUCCESS bill says nothing of a refund): resolved, superseded, saying why as finance
 * reads it: the statement lists the key and the table's facts are not those
 * the item recorded (the table was corrected: "the table now agrees"), or
 * they are and the statement's changed (a corrected statement); else not
 * found again.  The comparison's row of the key is joined (hashed) once,
 * not looked up per item. */
const char SQL_RECON_REG_SUPERSEDE[] =
    "WITH gone AS (SELECT i.id,"
    "    CASE WHEN o.tenant_id IS NULL"
    "         THEN 'not found again when the day was reconciled again'"
    "         WHEN (i.table_side IS NULL) <> NOT o.t_present"
    "           OR (i.table_side ->> 'amount')::numeric IS DISTINCT FROM o.t_amount"
    "           OR (i.table_side ->> 'currency') IS DISTINCT FROM o.t_currency"
    "           OR (i.table_side ->> 'status')::int IS DISTINCT FROM o.t_status"
    "         THEN 'the table now agrees with the statement'"
    "         ELSE 'the statement now agrees with the table' END AS why"
    "  FROM {item} i LEFT JOIN idemload_recon_out o ON o.s_present"
    "   AND o.tenant_id = i.tenant_id AND o.channel = i.channel AND o.day = i.day"
    "   AND o.out_trade_no = i.out_trade_no AND o.callback_type = i.callback_type"
    " WHERE i.state <> 'resolved' AND i.day BETWEEN $2::date AND $3::date"
    "  AND EXISTS (SELECT 1 FROM idemload_recon_pairs p"
    "      WHERE p.tenant_id = i.tenant_id AND p.channel = i.channel"
    "        AND (i.callback_type IS NULL OR " RECON_PAIR_COVERS("p", "i") "))"
    "  AND NOT EXISTS (SELECT 1 FROM idemload_recon_lines l WHERE " RECON_SAME_ITEM ")) "
    "UPDATE {item} i SET state = 'resolved', resolved_at = pg_temp.idemload_now(), resolved_by = $1,"
    "       resolution = g.why FROM gone g WHERE i.id = g.id";

/* $1 the run, $2 the period's first day.  Pending items of earlier days (before the
 * period: a backfill of an old day leaves the later days' items to their
 * own runs, as it carries none of them over), of the
 * run's pairs, whose grace has passed: missing_in_statement, open, and
 * noted as escalated by this run (SQL_RECON_REG_ESCALATING made the table):
 * a discrepancy found now, which the report lists as appeared although
 * it is carried over (an earlier day's: not this run's verdict). */
const char SQL_RECON_REG_ESCALATE[] =
    "WITH e AS (UPDATE {item} i SET category = 'missing_in_statement', state = 'open',"
    "       last_run = $1, last_seen = pg_temp.idemload_now(), reported_by = NULL "
    "WHERE i.state = 'pending' AND i.day < $2::date"
    "  AND EXISTS (SELECT 1 FROM idemload_recon_pairs p"
    "      WHERE p.tenant_id = i.tenant_id AND p.channel = i.channel)"
    "  AND pg_temp.idemload_now() >= ((i.day + 1)::timestamp AT TIME ZONE current_setting('idemload.recon_zone'))"
    "             + current_setting('idemload.recon_grace')::interval RETURNING i.id) "
    "INSERT INTO idemload_recon_escalated SELECT id, true FROM e";

/* $1 the run, $2 the files (a JSON array of paths).  This run's lines
 * found again: last seen now, facts as now; how many. */
const char SQL_RECON_REG_UPSERT[] =
    "WITH u AS (UPDATE {item} i SET last_seen = pg_temp.idemload_now(), last_run = $1, category = l.category,"
    "       state = CASE WHEN l.category = 'pending' THEN 'pending' ELSE 'open' END,"
    "       reported_by = CASE WHEN i.state = 'pending' AND l.category <> 'pending' THEN NULL"
    "                          ELSE i.reported_by END,"
    "       statement = CASE WHEN l.s_present THEN jsonb_build_object('amount', l.s_amount,"
    "         'currency', l.s_currency, 'fee', l.s_fee, 'status', l.s_status, 'time', l.s_time) END,"
    "       table_side = CASE WHEN l.t_present THEN jsonb_build_object('amount', l.t_amount,"
    "         'currency', l.t_currency, 'fee', l.t_fee, 'status', l.t_status, 'time', l.t_time) END,"
    "       difference = l.difference,"
    "       file = ($2::jsonb) ->> (l.file_no - 1), line = l.line "
    "FROM idemload_recon_lines l "
    "WHERE i.state <> 'resolved' AND " RECON_SAME_ITEM " RETURNING 1) "
    "SELECT count(*) FROM u";

/* $1 the run, $2 the files.  This run's lines the register does not hold
 * open: new items (the report lists them as appeared). */
#define RECON_REG_INSERT_LINES \
    "INSERT INTO {item} (tenant_id, channel, out_trade_no, callback_type, day, category, state," \
    "  statement, table_side, difference, file, line, first_seen, last_seen, opened_by, last_run) " \
    "SELECT l.tenant_id, l.channel, l.out_trade_no, l.callback_type, l.day, l.category," \
    "  CASE WHEN l.category = 'pending' THEN 'pending' ELSE 'open' END," \
    "  CASE WHEN l.s_present THEN jsonb_build_object('amount', l.s_amount," \
    "    'currency', l.s_currency, 'fee', l.s_fee, 'status', l.s_status, 'time', l.s_time) END," \
    "  CASE WHEN l.t_present THEN jsonb_build_object('amount', l.t_amount," \
    "    'currency', l.t_currency, 'fee', l.t_fee, 'status', l.t_status, 'time', l.t_time) END," \
    "  l.difference, ($2::jsonb) ->> (l.file_no - 1), l.line, pg_temp.idemload_now(), pg_temp.idemload_now(), $1, $1 " \
    "FROM idemload_recon_lines l"
const char SQL_RECON_REG_INSERT_NEW[] =
    RECON_REG_INSERT_LINES
    " WHERE NOT EXISTS (SELECT 1 FROM {item} i WHERE i.state <> 'resolved'"
    "  AND " RECON_SAME_ITEM ")";
/* The same when SQL_RECON_REG_UPSERT found none of the lines open in the
 * register (the common case of a new day): every line is new, and the
 * anti-join, which hashes six keys of every line to find nothing (2.3 s of
 * 15 for a million lines), is left out.  The run's advisory lock keeps
 * any other run from opening an item in between. */
const char SQL_RECON_REG_INSERT_ALL[] = RECON_REG_INSERT_LINES;

/* $1 the run, $2 the files ([{"path", "digest"}]), $3 the days (a JSON
 * array of {tenant_id, channel, day, verdict, statement, table_side,
 * matched, unverified, pending, categories}).  Earlier runs of those days
 * are superseded by this one. */
const char SQL_RECON_REG_RUNS[] =
    "WITH d AS (SELECT * FROM jsonb_to_recordset($3::jsonb) AS d(tenant_id bigint,"
    "     channel text, day date, verdict text, statement jsonb, table_side jsonb,"
    "     matched bigint, unverified bigint, pending bigint, categories jsonb)),"
    " s AS (UPDATE {run} r SET superseded_by = $1 FROM d"
    "     WHERE r.superseded_by IS NULL AND r.tenant_id = d.tenant_id"
    "       AND r.channel = d.channel AND r.day = d.day) "
    "INSERT INTO {run} (run, tenant_id, channel, day, verdict, statement, table_side, matched,"
    "  unverified, pending, categories, files) "
    "SELECT $1, tenant_id, channel, day, verdict, statement, table_side, matched, unverified,"
    "  pending, categories, $2::jsonb FROM d";

/* $1 $2 the period, $3 how many to list.  Open discrepancies of earlier
 * days (before the period: a backfill of an old day carries over nothing
 * of the days after it), of the run's pairs: carried over, with their age in days (the
 * zone's today minus their day), oldest first; the last two columns are
 * the count and the oldest age of all of them (windows over the whole set,
 * worked out before the LIMIT), so that a register of a million open items
 * is counted without being read into memory. */
#define RECON_CARRIED_COLUMNS(category) \
    "SELECT " category ", i.tenant_id, i.channel, i.out_trade_no, i.callback_type," \
    "       i.day::text," \
    "       ((pg_temp.idemload_now() AT TIME ZONE current_setting('idemload.recon_zone'))::date - i.day)," \
    "       i.difference, pg_temp.idemload_ts_text(i.first_seen, false), count(*) OVER ()," \
    "       ((pg_temp.idemload_now() AT TIME ZONE current_setting('idemload.recon_zone'))::date" \
    "         - min(i.day) OVER ()) "
const char SQL_RECON_REG_CARRIED[] =
    RECON_CARRIED_COLUMNS("i.category")
    "FROM {item} i WHERE i.state = 'open' AND i.day < least($1::date, $2::date)"
    "  AND EXISTS (SELECT 1 FROM idemload_recon_pairs p"
    "      WHERE p.tenant_id = i.tenant_id AND p.channel = i.channel) "
    "ORDER BY i.day, i.tenant_id, i.channel, i.category, i.out_trade_no, i.callback_type "
    "LIMIT $3";

/* $1 $2 the period.  What a run would carry over, for a dry run that
 * writes no register: the open discrepancies of earlier days of the run's
 * pairs, with the pending ones past their grace as the escalation would
 * make them, less those this statement lists (a run would resolve them);
 * $3 and the columns as SQL_RECON_REG_CARRIED's. */
const char SQL_RECON_DRY_CARRIED[] =
    RECON_CARRIED_COLUMNS("CASE WHEN i.state = 'pending' THEN 'missing_in_statement'"
                          " ELSE i.category END")
    "FROM {item} i WHERE i.day < least($1::date, $2::date)"
    "  AND (i.state = 'open' OR (i.state = 'pending'"
    "    AND pg_temp.idemload_now() >= ((i.day + 1)::timestamp AT TIME ZONE current_setting('idemload.recon_zone'))"
    "                 + current_setting('idemload.recon_grace')::interval))"
    "  AND EXISTS (SELECT 1 FROM idemload_recon_pairs p"
    "      WHERE p.tenant_id = i.tenant_id AND p.channel = i.channel)"
    "  AND NOT (i.category IN ('missing_in_statement', 'pending')"
    "    AND EXISTS (SELECT 1 FROM idemload_recon_sk k WHERE k.tenant_id = i.tenant_id"
    "      AND k.channel = i.channel AND k.out_trade_no = i.out_trade_no"
    "      AND k.callback_type = i.callback_type)) "
    "ORDER BY i.day, i.tenant_id, i.channel, 1, i.out_trade_no, i.callback_type LIMIT $3";

/* $1 the register's item table: 'absent', 'readable' or 'denied' (a role
 * that may not read it, in a dry run). */
const char SQL_RECON_REGISTER_READABLE[] =
    "SELECT CASE WHEN to_regclass($1) IS NULL THEN 'absent'"
    "  WHEN has_table_privilege(to_regclass($1), 'SELECT') THEN 'readable' ELSE 'denied' END";

/* Before the escalation of earlier days (SQL_RECON_REG_ESCALATE adds them,
 * earlier true) and before the lines found again are brought up to date:
 * the pending items of the period that this run finds as
 * missing_in_statement (escalated in place, SQL_RECON_REG_UPSERT); both
 * appeared as discrepancies now. */
const char SQL_RECON_REG_ESCALATING[] =
    "CREATE TEMP TABLE idemload_recon_escalated AS SELECT i.id, false AS earlier"
    " FROM {item} i JOIN idemload_recon_lines l ON " RECON_SAME_ITEM
    " WHERE i.state = 'pending' AND l.category <> 'pending'";

/* How many items of earlier days this run escalated. */
const char SQL_RECON_REG_ESCALATED_EARLIER[] =
    "SELECT count(*) FROM idemload_recon_escalated WHERE earlier";

/* $1 the run, $2 how many to list.  What this run's register changed, as
 * the report lists it: the discrepancies that appeared (items it opened,
 * and pending ones it escalated), or the items it resolved, with why;
 * the last column is how many there are in all. */
#define RECON_CHANGED_ITEMS \
    "SELECT i.category, i.tenant_id, i.channel, i.out_trade_no, i.callback_type, i.day::text," \
    "       ((pg_temp.idemload_now() AT TIME ZONE current_setting('idemload.recon_zone'))::date - i.day)," \
    "       i.difference, pg_temp.idemload_ts_text(i.first_seen, false), i.resolution," \
    "       count(*) OVER () FROM {item} i "
#define RECON_CHANGED_ORDER \
    " ORDER BY i.day, i.tenant_id, i.channel, i.category, i.out_trade_no, i.callback_type LIMIT $2"
const char SQL_RECON_REG_APPEARED[] =
    RECON_CHANGED_ITEMS
    "WHERE i.id IN (SELECT id FROM idemload_recon_appeared)"
    "  AND $1::bigint IS NOT NULL" /* the run: idemload_recon_appeared is its own */
    RECON_CHANGED_ORDER;

/* $1 the run.  The discrepancies this run's outputs show as appeared: the
 * items it opened or escalated, and the open ones of its pairs that no
 * run's outputs showed yet (reported_by NULL: a run whose report could not
 * be written, or that was killed after its COMMIT, registered them; SPEC
 * "Across days": a later run reports what no earlier report showed).
 * Kept for the session: SQL_RECON_REG_REPORTED marks them once the
 * outputs are written. */
const char SQL_RECON_REG_APPEARING[] =
    "CREATE TEMP TABLE idemload_recon_appeared AS SELECT i.id FROM {item} i "
    "WHERE i.category <> 'pending' AND i.state = 'open'"
    "  AND (i.opened_by = $1::bigint OR i.id IN (SELECT id FROM idemload_recon_escalated)"
    "       OR (i.reported_by IS NULL AND EXISTS (SELECT 1 FROM idemload_recon_pairs p"
    "             WHERE p.tenant_id = i.tenant_id AND p.channel = i.channel)))";

/* $1 the run, after its outputs (summary, report, page, discrepancies
 * file) are written: what they showed as appeared is reported by it. */
const char SQL_RECON_REG_REPORTED[] =
    "UPDATE {item} SET reported_by = $1"
    " WHERE id IN (SELECT id FROM idemload_recon_appeared) AND reported_by IS NULL";
const char SQL_RECON_REG_RESOLVED[] =
    RECON_CHANGED_ITEMS "WHERE i.resolved_by = $1"
    "  AND i.resolution IS DISTINCT FROM " RECON_LISTED_OTHER RECON_CHANGED_ORDER;

/* After --repair, on the reconcile's own connection (its transaction
 * committed, the session's temporary tables still there): the keys of
 * this run's lines the repair may have mended (missing_in_table, and the
 * three mismatches a merge may update), their table rows read again as
 * they are now into idemload_recon_traw, which idemload_recon_t shows with
 * their facts; then SQL_RECON_REG_REPAIRED compares them with the
 * statement again.  Whatever the repair did or left (a merge's stale row,
 * a run killed and resumed, a concurrent importer), the register says
 * what the table now holds, and no list of keys is kept in a file. */
#define RECON_MENDABLE "('missing_in_table', 'amount_mismatch', 'currency_mismatch', 'status_mismatch')"
const char SQL_RECON_REPAIR_KEYS[] =
    "CREATE TEMP TABLE idemload_recon_mend AS SELECT DISTINCT " KEY_LIST("") ","
    "  day FROM idemload_recon_lines WHERE s_present AND category IN " RECON_MENDABLE ";"
    "ANALYZE idemload_recon_mend;"
    "CREATE TEMP TABLE idemload_recon_mended (category text, tenant_id bigint, channel text,"
    "  out_trade_no text, callback_type text, file_no integer, line bigint);"
    "TRUNCATE idemload_recon_traw";
const char SQL_RECON_REPAIR_ROWS[] =
    "INSERT INTO idemload_recon_traw "
    "SELECT " RECON_TABLE_COLUMNS ", true, k.day "
    "FROM idemload_recon_mend k CROSS JOIN LATERAL (SELECT " RECON_TABLE_COLUMNS
    "  FROM {table} t WHERE " KEY_JOIN("t", "k")
    "   AND {active} LIMIT 1) t";
const char SQL_RECON_REPAIR_ROWS_DISTRIBUTED[] =
    "INSERT INTO idemload_recon_traw "
    "SELECT " RECON_TABLE_COLUMNS ", true, k.day "
    "FROM {table} t JOIN idemload_recon_mend k"
    "  ON " KEY_JOIN("t", "k") " "
    "WHERE {active}";

/* $1 the run.  Its open items of those categories whose table row now
 * agrees with the statement (a missing_in_table key the table holds; a
 * mismatch its row no longer has): resolved (inserted, or updated, by
 * --repair), and each into idemload_recon_mended, so that the run reports
 * as inserted exactly the missing keys the table now holds (not the rows a
 * killed run had inserted before, which the comparison found matched).
 * What still disagrees stays open; the day reconciled again resolves what
 * it no longer finds. */
const char SQL_RECON_REG_REPAIRED[] =
    "WITH r AS (UPDATE {item} i SET state = 'resolved', resolved_at = pg_temp.idemload_now(), resolved_by = $1,"
    "       resolution = CASE WHEN i.category = 'missing_in_table' THEN " RECON_REPAIRED
    "                         ELSE " RECON_MERGED " END "
    "  FROM idemload_recon_sk s JOIN idemload_recon_tv t ON " KEY_JOIN("t", "s") " "
    "WHERE i.state = 'open' AND i.last_run = $1 AND i.category IN " RECON_MENDABLE
    "  AND s.tenant_id = i.tenant_id AND s.channel = i.channel AND s.day = i.day"
    "  AND s.out_trade_no = i.out_trade_no AND s.callback_type = i.callback_type"
    "  AND CASE i.category WHEN 'missing_in_table' THEN true"
    "        WHEN 'amount_mismatch' THEN NOT coalesce((s.a_decl AND t.a_decl"
    "               AND s.amount <> t.amount) OR (s.f_decl AND t.f_decl AND s.fee <> t.fee), false)"
    "        WHEN 'currency_mismatch' THEN NOT coalesce(s.c_decl AND t.c_decl"
    "               AND s.currency <> t.currency, false)"
    "        ELSE s.status = t.status END "
    "  RETURNING i.category, i.tenant_id, i.channel, i.out_trade_no, i.callback_type, s.file_no,"
    "            s.line) "
    "INSERT INTO idemload_recon_mended SELECT * FROM r";

/* What the repair mended: the missing keys it inserted, and every item
 * resolved. */
const char SQL_RECON_REPAIR_MENDED[] =
    "SELECT count(*) FILTER (WHERE category = 'missing_in_table'), count(*)"
    " FROM idemload_recon_mended";
/* $1 how many to list: the keys it inserted, in the files' order. */
const char SQL_RECON_REPAIR_INSERTED[] =
    "SELECT tenant_id, channel, out_trade_no, callback_type, file_no, line"
    " FROM idemload_recon_mended WHERE category = 'missing_in_table'"
    " ORDER BY file_no, line LIMIT $1";
