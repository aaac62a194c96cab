/*
 * recon_stage_sql.c - the SQL of reconcile's session (see recon_sql.h):
 * its temporary tables, the money, time and rendering functions it
 * defines in pg_temp, its settings, the --facts levels and currency
 * exponents it is given, and the statement's COPY.  The comparison that
 * reads them is recon_sql.c's.
 */
#include "db/recon_sql.h"

#include "core/columns.h"

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
 * time has them (frac; none for our own first_seen).  The money functions
 * are PARALLEL SAFE, the others (a setting, a temporary table, an
 * exception block) PARALLEL RESTRICTED: a function left PARALLEL UNSAFE, the
 * default, anywhere in a statement kept the table's read that reads the
 * facts too from running on the server's other cores. */
/* The zone a time is shown in (the day's), and x's offset from UTC there. */
#define RECON_TS_ZONE \
    "coalesce(nullif(current_setting('idemload.recon_zone', true), ''), 'UTC')"
#define RECON_TS_OFFSET \
    "((x AT TIME ZONE " RECON_TS_ZONE ") - (x AT TIME ZONE 'UTC'))"
const char SQL_RECON_SETUP[] =
    "CREATE TEMP TABLE idemload_recon_raw ("
    "  file_no integer NOT NULL, line bigint NOT NULL, maybe_again boolean NOT NULL,"
    "  lvl smallint, facts_server boolean NOT NULL, a_text text, c_text text, f_text text,"
    "  rec_text text, a_num numeric, f_num numeric, day date, c_clean boolean NOT NULL,"
    RECON_RAW_COLUMN_DEFS ");"
    "CREATE TEMP TABLE idemload_recon_ccy (code text PRIMARY KEY, exponent integer NOT NULL);"
    "CREATE TEMP TABLE idemload_recon_cover (file_no integer NOT NULL, kind text);"
    "CREATE TEMP TABLE idemload_recon_sfacts (lvl smallint, kind text,"
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
    " RETURNS numeric LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$"
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
    " RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$"
    " SELECT CASE WHEN t IS NULL THEN NULL"
    "             WHEN t ~ '^-?[0-9]+(\\.[0-9]+)?$' AND length(t) <= 1000 THEN"
    "               CASE WHEN minor THEN CASE WHEN magnitude THEN abs(t::numeric) ELSE t::numeric END"
    "                                    * power(10::numeric, -e)"
    "                    WHEN magnitude THEN abs(t::numeric) ELSE t::numeric END"
    "             ELSE pg_temp.idemload_money_dressed(t, minor, magnitude, e, ccy) END $f$;"
    "CREATE FUNCTION pg_temp.idemload_render(x numeric, e integer)"
    " RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$"
    " SELECT CASE WHEN x = round(x, e) THEN round(x, e)::text ELSE trim_scale(x)::text END $f$;"
    "CREATE FUNCTION pg_temp.idemload_money_text(x numeric, ccy text)"
    " RETURNS text LANGUAGE sql STABLE PARALLEL RESTRICTED AS $f$"
    " SELECT pg_temp.idemload_render(x, coalesce("
    "   (SELECT c.exponent FROM idemload_recon_ccy c WHERE c.code = ccy), 2)) $f$;"
    "CREATE FUNCTION pg_temp.idemload_time(t text) RETURNS timestamptz LANGUAGE plpgsql STABLE"
    " PARALLEL RESTRICTED"
    " AS $f$ BEGIN"
    "  IF t IS NULL OR t !~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' THEN RETURN NULL; END IF;"
    "  IF t ~ '[T ][0-9][0-9]:[0-9][0-9](:[0-9][0-9](\\.[0-9]+)?)?([Zz]|[+-][0-9][0-9](:?[0-9][0-9])?)$'"
    "  THEN RETURN t::timestamptz; END IF;"
    "  RETURN t::timestamp AT TIME ZONE current_setting('idemload.recon_zone');"
    " EXCEPTION WHEN others THEN RETURN NULL;"
    " END $f$;"
    "CREATE FUNCTION pg_temp.idemload_now() RETURNS timestamptz LANGUAGE sql STABLE"
    " PARALLEL RESTRICTED"
    " AS $f$ SELECT coalesce(nullif(current_setting('idemload.now', true), '')::timestamptz,"
    "                        now()) $f$;"
    "CREATE FUNCTION pg_temp.idemload_ts_text(x timestamptz, frac boolean DEFAULT true)"
    " RETURNS text LANGUAGE sql STABLE PARALLEL RESTRICTED AS $f$"
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
 * work_mem at least 128MB: the statement's keys, each with its side of
 * the comparison, are hashed for the table read (126 MB at 1M keys), and
 * below that the hash goes in batches that write the table's rows to
 * temporary files (at 64MB: the read 1.5 times as long; at the default
 * 4MB, the keys' sorts spill to disk as well); a server set higher keeps
 * its own.  The temporary
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
    "                                        < 128 * 1024 * 1024 THEN '128MB'"
    "                                   ELSE current_setting('work_mem') END, true),"
    "       set_config('default_statistics_target', '10', true),"
    "       set_config('enable_memoize', 'off', true)";

/* Does the database's upper() turn a to z into A to Z, as the client
 * does when it cleans a currency text (recon/recon_read.c)?  Not where the
 * default collation's rules are Turkish (upper('i') is 'İ'). */
const char SQL_RECON_ASCII_UPPER[] =
    "SELECT upper('abcdefghijklmnopqrstuvwxyz') = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'";

/* $1 the zone, in place of SQL_RECON_SETTINGS' (a bill's own, found while
 * it was read). */
const char SQL_RECON_ZONE[] = "SELECT set_config('idemload.recon_zone', $1, true)";
/* The zone changed after the rows were staged with their days in the one
 * before (recon/recon_read.c): theirs are worked out again. */
const char SQL_RECON_DAYS_UNSTAGED[] =
    "UPDATE idemload_recon_raw SET day = NULL WHERE day IS NOT NULL";

/* $1 codes, $2 exponents (arrays). */
const char SQL_RECON_CCY[] =
    "INSERT INTO idemload_recon_ccy SELECT * FROM unnest($1::text[], $2::integer[])";

/* One statement level: kind (NULL: the rest), amount, currency, fee, then
 * the member each of the three is read from when the row lacks its own (a
 * profile's [C, ALT]: an older layout's column), and the member holding
 * the row's own transaction id (NULL: none declared); $16 its number, its
 * index in the statement's facts, which the client stages each row with
 * (idemload_recon_raw's lvl: recon/stmt_texts.h). */
const char SQL_RECON_SFACTS[] =
    "INSERT INTO idemload_recon_sfacts VALUES ($16::smallint, $1, $2::text[], $3, $4::boolean,"
    " $5::boolean, $6::text[], $7, $8::text[], $9, $10::boolean, $11::boolean,"
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
    "COPY idemload_recon_raw (file_no, line, maybe_again, lvl, facts_server, a_text, c_text,"
    " f_text, rec_text, a_num, f_num, day, c_clean, " COLUMN_LIST("")
    ") FROM STDIN (FORMAT binary)";
