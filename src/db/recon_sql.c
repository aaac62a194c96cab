/*
 * recon_sql.c - the SQL of reconcile (see recon_sql.h).
 *
 * The statement's valid rows are COPYed into idemload_recon_raw, one row
 * per record (duplicates included, so a key listed twice with different
 * facts is seen); every later step is one set-based statement building
 * the next temporary table:
 *   raw -> rep (the rows of the keys listed more than once) -> skr (those
 *   keys settled) -> sk (one row per key with its facts, and whether the
 *   key's rows disagree) -> kd (the keys counted per pair, day and file)
 *   -> t (each key of the statement beside the table's active
 *   row of it, and the rows of the statement's (tenant, channel) pairs in
 *   the period that it lacks, with their facts: one scan) -> out (the
 *   units of the period that differ, with their outcome and categories)
 *   and g (every unit's outcome, summed) -> lines (one per discrepancy).
 * Every join with the table is on the business key, which starts with
 * tenant_id, the distribution column of a Citus target.
 */
#include "db/recon_sql.h"

#include "core/columns.h"
#include "db/recon_sql_parts.h"

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

/* The exponent a row's minor units are scaled by: its currency's (2 for
 * a code idemload_recon_ccy does not list), none when the row states no
 * currency: its amount is then unreadable (the row unverified), never
 * scaled by a guessed exponent (JPY 951395 read as 9513.95). */
#define RECON_EXP(r) "CASE WHEN " r ".currency IS NOT NULL THEN coalesce(x.exponent, 2) END"

/* Whether a level of facts (p: its alias with the dot) declares each
 * fact, by a path or a constant: a_decl, c_decl, f_decl. */
#define RECON_DECLARED(p) \
    p "amount_path IS NOT NULL OR " p "amount_const IS NOT NULL AS a_decl, " \
    p "currency_path IS NOT NULL OR " p "currency_const IS NOT NULL AS c_decl, " \
    p "fee_path IS NOT NULL OR " p "fee_const IS NOT NULL AS f_decl"

/* The statement's facts of each kind the rows of `kinds` hold (the part
 * of callback_type before ':'): its own level, else the default level,
 * the first of each (as the client picks a statement row's level, lvl:
 * recon/stmt_texts.h); then hash-joined with the table's rows, whose
 * bills are read as the statement's rows are (RECON_SIDE_LEVELS), where a
 * sub-select per row (a sort and a limit) cost more than the rest of the
 * facts. */
#define RECON_KIND_FACTS(kinds) \
    "WITH kf AS MATERIALIZED (SELECT k.kind, sf.amount_path, sf.amount_const," \
    "     sf.amount_minor, sf.amount_abs, sf.currency_path, sf.currency_const," \
    "     sf.fee_path, sf.fee_const, sf.fee_minor, sf.fee_abs," \
    "     sf.amount_alt, sf.currency_alt, sf.fee_alt, sf.record_path," \
    "     " RECON_DECLARED("sf.") \
    "   FROM (SELECT DISTINCT split_part(callback_type, ':', 1) AS kind" \
    "           FROM " kinds ") k" \
    "   CROSS JOIN LATERAL (SELECT * FROM idemload_recon_sfacts sf" \
    "      WHERE sf.kind IS NULL OR sf.kind = k.kind ORDER BY sf.kind IS NULL, sf.lvl" \
    "      LIMIT 1) sf) "

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
#define RECON_SIDE_LEVELS(pk) \
    "tl AS MATERIALIZED (SELECT p.channel AS t_channel, p.kind AS t_kind," \
    "     tf.amount_path, tf.amount_const, tf.amount_minor, tf.amount_abs," \
    "     tf.currency_path, tf.currency_const, tf.fee_path, tf.fee_const, tf.fee_minor," \
    "     tf.fee_abs, tf.time_path," \
    "     " RECON_DECLARED("tf.") "," \
    "     s.amount_path AS s_amount_path, s.amount_alt AS s_amount_alt," \
    "     s.amount_minor AS s_amount_minor, s.amount_abs AS s_amount_abs," \
    "     s.currency_const AS s_currency_const, s.currency_path AS s_currency_path," \
    "     s.currency_alt AS s_currency_alt, s.fee_const AS s_fee_const," \
    "     s.fee_path AS s_fee_path, s.fee_alt AS s_fee_alt, s.fee_minor AS s_fee_minor," \
    "     s.fee_abs AS s_fee_abs" \
    "   FROM " pk " p" \
    "   CROSS JOIN LATERAL (SELECT * FROM idemload_recon_tfacts tf" \
    "      WHERE (tf.channel IS NULL OR tf.channel = p.channel)" \
    "        AND (tf.kind IS NULL OR tf.kind = p.kind)" \
    "      ORDER BY tf.channel IS NULL, tf.kind IS NULL LIMIT 1) tf" \
    "   LEFT JOIN kf s ON s.kind = p.kind) "
/* The table's rows (rows: a FROM item t with the table's columns, listed
 * and s_day) with their facts; kind: the kind of t's level in levels (a
 * FROM item f with tl's columns); ccy: the currencies' exponents (a FROM
 * item x); TIME: the row's time, RECON_TIME_FACT (its time fact read, else
 * received_at), or RECON_TIME_TEXT (the fact's text and received_at, for
 * the process that gathers a parallel scan's rows to read:
 * pg_temp.idemload_time catches errors, and a parallel worker can open no
 * subtransaction). */
#define RECON_TIME_FACT \
    "coalesce(CASE WHEN v.time_text IS NOT NULL THEN pg_temp.idemload_time(v.time_text) END," \
    "         v.received_at) AS time"
#define RECON_TIME_TEXT "v.time_text, v.received_at"
/* Each text is taken out of the payload once, in the innermost select
 * (a), the one whose work the workers of a parallel scan do (the selects
 * above it run in the process that gathers the rows, as a LATERAL
 * sub-select would); a bill's currency and fee (s_) are taken from every
 * row, as its amount is, though only a row whose payload lacks the
 * callback's amount uses them. */
#define RECON_TABLE_FACTS_FROM(rows, kind, levels, ccy, TIME) \
    "SELECT " KEY_LIST("v.") ", v.status, v.listed, v.s_day, v.a_decl, v.c_decl, v.f_decl," \
    "       v.currency," \
    "       pg_temp.idemload_money(v.a_text, v.a_minor, v.a_abs, " RECON_EXP("v") ", v.currency)" \
    "         AS amount," \
    "       pg_temp.idemload_money(v.f_text, v.f_minor, v.f_abs, " RECON_EXP("v") ", v.currency)" \
    "         AS fee, " TIME " " \
    "FROM (SELECT " KEY_LIST("b.") ", b.status, b.listed, b.s_day, b.a_decl, b.c_decl," \
    "        b.f_decl," \
    "        CASE WHEN b.bill THEN b.s_currency ELSE b.t_currency END AS currency," \
    "        CASE WHEN b.bill THEN b.s_amount ELSE b.t_amount END AS a_text," \
    "        CASE WHEN b.bill THEN b.s_amount_minor ELSE b.amount_minor END AS a_minor," \
    "        CASE WHEN b.bill THEN b.s_amount_abs ELSE b.amount_abs END AS a_abs," \
    "        CASE WHEN b.bill THEN b.s_fee ELSE b.t_fee END AS f_text," \
    "        CASE WHEN b.bill THEN b.s_fee_minor ELSE b.fee_minor END AS f_minor," \
    "        CASE WHEN b.bill THEN b.s_fee_abs ELSE b.fee_abs END AS f_abs," \
    "        b.time_text, b.received_at" \
    "      FROM (SELECT a.*, a.t_amount IS NULL AND a.s_amount IS NOT NULL AS bill" \
    "              FROM (SELECT t.*, f.*," \
    "                      coalesce(f.amount_const, t.payload #>> f.amount_path) AS t_amount," \
    "                      coalesce(t.payload #>> f.s_amount_path," \
    "                               t.payload #>> f.s_amount_alt) AS s_amount," \
    "                      upper(nullif(btrim(coalesce(f.currency_const," \
    "                                                  t.payload #>> f.currency_path)), ''))" \
    "                        AS t_currency," \
    "                      upper(nullif(btrim(coalesce(f.s_currency_const," \
    "                                                  t.payload #>> f.s_currency_path," \
    "                                                  t.payload #>> f.s_currency_alt)), ''))" \
    "                        AS s_currency," \
    "                      coalesce(f.fee_const, t.payload #>> f.fee_path) AS t_fee," \
    "                      coalesce(f.s_fee_const, t.payload #>> f.s_fee_path," \
    "                               t.payload #>> f.s_fee_alt) AS s_fee," \
    "                      CASE WHEN f.time_path IS NOT NULL" \
    "                           THEN t.payload #>> f.time_path END AS time_text" \
    "                      FROM " rows \
    "                      JOIN " levels " ON f.t_channel = t.channel" \
    "                       AND f.t_kind = " kind " OFFSET 0) a" \
    "            OFFSET 0) b) v " \
    "LEFT JOIN " ccy " ON x.code = v.currency"
/* ... on one server's connection, reading tl (RECON_SIDE_LEVELS) and
 * idemload_recon_ccy, temporary tables only it can read. */
#define RECON_TABLE_FACTS_OF(rows, kind) \
    RECON_TABLE_FACTS_FROM(rows, kind, "tl f", "idemload_recon_ccy x", RECON_TIME_FACT)

/* The levels of the table's rows whose kinds are known beforehand: the
 * pairs' channels, each with every kind --facts names on either side
 * (nk) and '' for every other kind, which takes the same levels as any
 * kind --facts does not name.  The rows are read with their facts
 * (SQL_RECON_TABLE_ROWS, SQL_RECON_TABLE_PROBE), not written with their
 * payloads to a table whose kinds are found by reading it again. */
#define RECON_NAMED_KINDS \
    "SELECT kind FROM idemload_recon_tfacts WHERE kind IS NOT NULL" \
    " UNION SELECT kind FROM idemload_recon_sfacts WHERE kind IS NOT NULL"
#define RECON_NAMED_LEVELS \
    RECON_KIND_FACTS("(" RECON_NAMED_KINDS " UNION SELECT '') AS n (callback_type)") \
    ", nk AS MATERIALIZED (" RECON_NAMED_KINDS "), " \
    RECON_SIDE_LEVELS("(SELECT c.channel, k.kind" \
                      "   FROM (SELECT DISTINCT channel FROM idemload_recon_pairs) c" \
                      "   CROSS JOIN (SELECT kind FROM nk UNION ALL SELECT '') k)")

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
 * million times (a million keys against ten million rows: 13 s of 21).
 * Each row read gets its facts in the same statement: written first with
 * its payload to a temporary table and read again for them, the rows cost
 * a third more at 1M (BENCHMARKS.md, "Reconcile: the table's rows read
 * with their facts"). */
#define RECON_TIME_FROM(p) \
    "($1::date - CASE WHEN " p " THEN 31 ELSE 0 END)::timestamp AT TIME ZONE $3"
#define RECON_TIME_TO(p) \
    "($2::date + CASE WHEN " p " THEN 32 ELSE 1 END)::timestamp AT TIME ZONE $3"
#define RECON_ANY_TIMED "(SELECT bool_or(timed) FROM idemload_recon_pairs)"
/* A row of the table's read joined with a key of the statement: each key
 * column from whichever side has it. */
#define RECON_EITHER_KEY(a, b, n) "coalesce(" a "." n ", " b "." n ") AS " n
#define RECON_EITHER_KEYS_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_IF_##key(COLUMN_SEP_##pos(", ") RECON_EITHER_KEY(A, B, #name))
#define RECON_EITHER_KEYS(a, b) IDEMLOAD_COLUMNS(RECON_EITHER_KEYS_1, a, b)
/* The statement's side of a key, passed on beside the table's row of it
 * (k_: the key's row in idemload_recon_sk), so that the comparison reads
 * one row per key, not the keys joined with the table's rows again (a
 * hash of a million rows built and probed a second time: 1.9 s at 1M). */
#define RECON_K_OF_SK \
    ", k.file_no AS k_file_no, k.line AS k_line, k.conflicting AS k_conflicting," \
    " k.status AS k_status, k.received_at AS k_time, k.currency AS k_currency," \
    " k.amount AS k_amount, k.fee AS k_fee, k.a_decl AS k_a, k.c_decl AS k_c," \
    " k.f_decl AS k_f"
/* tl's columns (RECON_SIDE_LEVELS), each with its type: the levels read
 * as literals (SQL_RECON_LEVELS), and the FROM item of those literals
 * (RECON_LEVELS_LITERAL).  The first row of the literals is one of NULLs,
 * which no row's channel joins, and which types the columns. */
#define RECON_TL_COLUMNS(F, X) \
    F(t_channel, text) X(t_kind, text) X(amount_path, text[]) X(amount_const, text) \
    X(amount_minor, boolean) X(amount_abs, boolean) X(currency_path, text[]) \
    X(currency_const, text) X(fee_path, text[]) X(fee_const, text) X(fee_minor, boolean) \
    X(fee_abs, boolean) X(time_path, text[]) X(a_decl, boolean) X(c_decl, boolean) \
    X(f_decl, boolean) X(s_amount_path, text[]) X(s_amount_alt, text[]) \
    X(s_amount_minor, boolean) X(s_amount_abs, boolean) X(s_currency_const, text) \
    X(s_currency_path, text[]) X(s_currency_alt, text[]) X(s_fee_const, text) \
    X(s_fee_path, text[]) X(s_fee_alt, text[]) X(s_fee_minor, boolean) X(s_fee_abs, boolean)
#define RECON_TL_NAME_1(name, type) #name
#define RECON_TL_NAME(name, type) ", " #name
#define RECON_TL_NULL_1(name, type) "NULL::" #type
#define RECON_TL_NULL(name, type) ", NULL::" #type
#define RECON_TL_FORMAT_1(name, type) "%L::" #type
#define RECON_TL_FORMAT(name, type) ", %L::" #type
#define RECON_TL_ARG(name, type) ", f." #name
#define RECON_TL_LIST(X) RECON_TL_COLUMNS(X##_1, X)
#define RECON_LEVELS_LITERAL "({levels}) f (" RECON_TL_LIST(RECON_TL_NAME) ")"
#define RECON_CCY_LITERAL "({ccys}) x (code, exponent)"

/* The levels of the table's rows of the period, the kinds --facts names,
 * and the currencies' exponents, as SQL literals that
 * SQL_RECON_TABLE_ROWS is written with ({levels}, {kinds}, {ccys}: each a
 * value of format's %L, quoted by the server), so that the table's rows
 * get their facts in the parallel workers that scan the table: a worker
 * reads no temporary table. */
const char SQL_RECON_LEVELS[] =
    RECON_NAMED_LEVELS
    "SELECT 'VALUES (" RECON_TL_LIST(RECON_TL_NULL) ")'"
    "       || coalesce(string_agg(format(', (" RECON_TL_LIST(RECON_TL_FORMAT) ")'"
    "                                     " RECON_TL_COLUMNS(RECON_TL_ARG, RECON_TL_ARG) "),"
    "                              ''), ''),"
    "       format('%L::text[]', (SELECT coalesce(array_agg(kind ORDER BY kind), ARRAY[]::text[])"
    "                               FROM nk)),"
    "       (SELECT 'VALUES (NULL::text, NULL::integer)'"
    "               || coalesce(string_agg(format(', (%L, %s)', code, exponent), ''), '')"
    "          FROM idemload_recon_ccy),"
    "       (" RECON_ANY_TIMED " IS TRUE)::text "
    "FROM tl f";

/* The scan's rows: the table's rows of the widest window, each with its
 * facts (RECON_TABLE_FACTS_FROM, in the workers that scan it: reading them
 * in the one process that joins took a third of the read at 1M rows),
 * joined with its key in the statement and with its pair, and every key
 * of the statement the window lacks, with its key only and listed NULL
 * (SQL_RECON_TABLE_PROBE looks for its row; one it does not find stays,
 * the key missing from the table): a full join, where finding those keys
 * afterwards took a hash of every row read (an anti-join, 1.3 s at 1M
 * keys).  A row's kind of levels is one --facts names ({kinds}), else ''. */
#define RECON_TABLE_WINDOW \
    "(SELECT " RECON_TABLE_COLUMNS ", NULL::boolean AS listed, NULL::date AS s_day," \
    "        CASE WHEN split_part(t.callback_type, ':', 1) = ANY ({kinds})" \
    "             THEN split_part(t.callback_type, ':', 1) ELSE '' END AS lk" \
    "   FROM {table} t WHERE {active}" \
    "    AND t.received_at >= " RECON_TIME_FROM("{timed}") \
    "    AND t.received_at < " RECON_TIME_TO("{timed}") ") t"
const char SQL_RECON_TABLE_ROWS[] =
    "CREATE TEMP TABLE idemload_recon_t AS "
    "SELECT " RECON_EITHER_KEYS("v", "k") ", v.status,"
    "       CASE WHEN v.tenant_id IS NOT NULL THEN k.tenant_id IS NOT NULL END AS listed,"
    "       k.day AS s_day, v.a_decl, v.c_decl, v.f_decl" RECON_K_OF_SK ","
    "       v.currency, v.amount, v.fee,"
    "       coalesce(CASE WHEN v.time_text IS NOT NULL"
    "                     THEN pg_temp.idemload_time(v.time_text) END, v.received_at) AS time "
    "FROM (" RECON_TABLE_FACTS_FROM(RECON_TABLE_WINDOW, "t.lk", RECON_LEVELS_LITERAL,
                                    RECON_CCY_LITERAL, RECON_TIME_TEXT)
    " OFFSET 0) v "
    "LEFT JOIN idemload_recon_pairs p ON v.tenant_id = p.tenant_id AND v.channel = p.channel "
    "FULL JOIN idemload_recon_sk k ON " KEY_JOIN("k", "v") " "
    "WHERE k.tenant_id IS NOT NULL OR (p.tenant_id IS NOT NULL"
    "  AND v.received_at >= " RECON_TIME_FROM("p.timed")
    "  AND v.received_at < " RECON_TIME_TO("p.timed")
    "  AND " RECON_PAIR_COVERS("p", "v") ")";
/* The statement's keys SQL_RECON_TABLE_ROWS left (listed NULL), probed in
 * the unique index: their active row, whatever its time, with its facts,
 * set in the key's row (listed from then on); a key whose row is not
 * found keeps listed NULL: missing from the table. */
#define RECON_TABLE_SIDE(p) \
    p "status, " p "a_decl, " p "c_decl, " p "f_decl, " p "currency, " p "amount, " p "fee, " \
    p "time"
const char SQL_RECON_TABLE_PROBE[] =
    "UPDATE idemload_recon_t u SET listed = true, (" RECON_TABLE_SIDE("") ") = "
    "  (" RECON_TABLE_SIDE("f.") ") "
    "FROM (" RECON_NAMED_LEVELS
    RECON_TABLE_FACTS_OF(
    "(SELECT " RECON_TABLE_COLUMNS ", true AS listed, x.s_day,"
    "        coalesce(n.kind, '') AS lk "
    "   FROM idemload_recon_t x CROSS JOIN LATERAL (SELECT " RECON_TABLE_COLUMNS
    "     FROM {table} t WHERE " KEY_JOIN("t", "x")
    "      AND {active} LIMIT 1) t "
    "   LEFT JOIN nk n ON n.kind = split_part(t.callback_type, ':', 1) "
    "  WHERE x.listed IS NULL) t", "t.lk") ") f "
    "WHERE u.listed IS NULL AND " KEY_JOIN("u", "f");
/* On one server, the table's rows are read with their facts
 * (SQL_RECON_TABLE_ROWS); idemload_recon_traw, which --repair reads its
 * mended rows into, starts empty, with the view of their facts over it
 * (SQL_RECON_TABLE_VIEW). */
const char SQL_RECON_TABLE_RAW_EMPTY[] =
    "CREATE TEMP TABLE idemload_recon_traw AS "
    "SELECT " RECON_TABLE_COLUMNS ", true AS listed, NULL::date AS s_day "
    "FROM {table} t WITH NO DATA";

/* Around SQL_RECON_KEYS: hash joins only.  The statement's rows, just
 * copied and never analyzed, were sorted whole to merge them with the few
 * keys listed more than once (0.8 s of 190k rows, twice), where a hash of
 * those keys beside one scan of the rows is all it takes.  Around
 * SQL_RECON_TABLE_ROWS on one server too (no nested loop but the probe's
 * LATERAL, which has no other plan): a target never analyzed (a fresh
 * import read before autovacuum came by: the nightly job) is taken for a
 * few rows, and the planner, joining them with the statement's keys in a
 * nested loop, compared every row of the period with every key (80,000
 * rows against 100,000 keys: 13 minutes instead of a second).  The
 * server's own settings come back afterwards. */
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

/* The statement's rows with their facts and their day in the zone, as a
 * sub-select of SQL_RECON_KEYS (never stored: only the keys are).  Each
 * row's texts are those the client staged it with (a_text, c_text, f_text,
 * rec_text: recon/stmt_texts.h, exactly what `payload #>> path` gives, at
 * its level lvl of the statement's facts), or, for a row the client
 * marked (facts_server: an escaped string, a number with an exponent, an
 * object where a path ends), read from its payload here, as every row's
 * were: the payload parsed as jsonb and read by path cost a second of the
 * COPY and a second here at 1M rows.  The facts' texts are taken once, in
 * a sub-select the planner keeps (OFFSET 0): idemload_money, inlined,
 * names its text four times, and an expression in its place would be
 * evaluated four times.  rec is what makes the row one record: its
 * transaction id where the profile declares one and the row has it, else
 * its payload (a digest of jsonb's text of it).  Its currency is the text
 * the client staged where it cleaned it (c_clean: trimmed of spaces and
 * upper-cased, in ASCII, as upper(nullif(btrim())) would: 0.3 s at 1M
 * rows), else cleaned here.  Its day is the one the
 * client staged it with where the zone is a fixed offset (0.45 s of the
 * keys at 1M rows: the zone's name read again for every row), else
 * worked out here. */
#define RECON_J "r.payload::jsonb"
#define RECON_STAGED(staged, cnst, path, alt) \
    "CASE WHEN r.facts_server THEN coalesce(f." cnst ", " RECON_J " #>> f." path ", " \
    RECON_J " #>> f." alt ") ELSE r." staged " END"
#define RECON_STATEMENT_ROWS(raw) \
    "SELECT r.file_no, r.line, " KEY_LIST("r.") "," \
    "       r.status, r.received_at, r.day, r.a_decl, r.c_decl, r.f_decl, r.currency," \
    "       coalesce(r.a_num, pg_temp.idemload_money(r.a_text, r.amount_minor, r.amount_abs," \
    "                                                " RECON_EXP("r") ", r.currency)) AS amount," \
    "       coalesce(r.f_num, pg_temp.idemload_money(r.f_text, r.fee_minor, r.fee_abs," \
    "                                                " RECON_EXP("r") ", r.currency)) AS fee," \
    "       r.rec " \
    "FROM (SELECT r.file_no, r.line, " KEY_LIST("r.") "," \
    "        r.status, r.received_at," \
    "        coalesce(r.day, (r.received_at AT TIME ZONE current_setting('idemload.recon_zone'))::date)" \
    "          AS day," \
    "        " RECON_DECLARED("f.") "," \
    "        CASE WHEN r.c_clean THEN r.c_text ELSE upper(nullif(btrim(" \
    RECON_STAGED("c_text", "currency_const", "currency_path", "currency_alt") "), '')) END" \
    "          AS currency," \
    "        " RECON_STAGED("a_text", "amount_const", "amount_path", "amount_alt") " AS a_text," \
    "        f.amount_minor, f.amount_abs," \
    "        " RECON_STAGED("f_text", "fee_const", "fee_path", "fee_alt") " AS f_text," \
    "        f.fee_minor, f.fee_abs, r.a_num, r.f_num," \
    "        coalesce(CASE WHEN r.facts_server THEN " RECON_J " #>> f.record_path" \
    "                      ELSE r.rec_text END, md5(" RECON_J "::text)) AS rec" \
    "      FROM " raw " r" \
    "      LEFT JOIN idemload_recon_sfacts f ON f.lvl = r.lvl OFFSET 0) r " \
    "LEFT JOIN idemload_recon_ccy x ON x.code = r.currency"

const char SQL_RECON_TABLE_VIEW[] =
    "CREATE TEMP VIEW idemload_recon_tv AS " RECON_KIND_FACTS("idemload_recon_traw")
    ", " RECON_SIDE_LEVELS("(SELECT DISTINCT channel, split_part(callback_type, ':', 1) AS kind"
                           "   FROM idemload_recon_traw)")
    RECON_TABLE_FACTS_OF("idemload_recon_traw t", "split_part(t.callback_type, ':', 1)");

/* On a Citus target: the table's rows with their facts
 * (SQL_RECON_TABLE_VIEW), worked out once, each beside its key in the
 * statement, and every key without its row (listed NULL), as
 * SQL_RECON_TABLE_ROWS gives them on one server. */
const char SQL_RECON_TABLE_FACTS[] =
    "CREATE TEMP TABLE idemload_recon_t AS "
    "SELECT " RECON_EITHER_KEYS("t", "k") ", t.status,"
    "       CASE WHEN t.tenant_id IS NOT NULL THEN t.listed END AS listed, k.day AS s_day,"
    "       t.a_decl, t.c_decl, t.f_decl, t.currency, t.amount, t.fee, t.time" RECON_K_OF_SK " "
    "FROM idemload_recon_tv t FULL JOIN idemload_recon_sk k"
    "  ON t.listed AND " KEY_JOIN("k", "t");
const char SQL_RECON_ANALYZE_TABLE_FACTS[] = "ANALYZE idemload_recon_t";

/* The statement's rows of the keys it lists more than once (few on any
 * day), each with how many rows list its key (n), read from here by every
 * later step about them (SQL_RECON_KEYS, SQL_RECON_KEYS_SHARED,
 * SQL_RECON_LISTED, SQL_RECON_EXTRA_ROWS), each of which scanned every row
 * of the statement again to find them (a third of a second each at 1M
 * rows).  A key listed twice has a row the client took as maybe listed
 * before (maybe_again: recon_read.c), so only those rows' keys are looked
 * at, and counted; a hash of every key of the statement, to count them
 * all, spilled to disk at 1M keys (1.6 s).  The raw rows are analyzed
 * first, so that the planner hashes those few keys, not every row. */
const char SQL_RECON_ANALYZE_RAW[] = "ANALYZE idemload_recon_raw";
const char SQL_RECON_REPEATED[] =
    "CREATE TEMP TABLE idemload_recon_rep AS "
    "SELECT * FROM (SELECT r.*, count(*) OVER (PARTITION BY " KEY_LIST("r.") ") AS n"
    "                 FROM idemload_recon_raw r"
    "                WHERE (" KEY_LIST("r.") ") IN (SELECT " KEY_LIST("")
    "                                            FROM idemload_recon_raw WHERE maybe_again)) r "
    "WHERE n > 1";
const char SQL_RECON_ANALYZE_REPEATED[] = "ANALYZE idemload_recon_rep";

/* One row per key: the version import's deduplication would keep (the
 * latest received_at, then the later file and line), and how many rows
 * list it.  A key listed once is its row: its status is its own, and its
 * rows cannot disagree (conflicting false).  The keys listed more than
 * once (SQL_RECON_REPEATED) are settled first, into a table of their own
 * (SQL_RECON_KEYS_SHARED), which every later step about them reads
 * (SQL_RECON_LISTED, SQL_RECON_EXTRA_ROWS, SQL_RECON_EXTRA), where each
 * scanned every key to find them (0.1 to 0.2 s apiece at 1M keys), and an
 * update of them scanned every key once more.  Sorting every row by key to
 * deduplicate them cost two fifths of the comparison, more at 1M rows,
 * where the sort spills to disk, and a dozen window aggregates per key and
 * a digest of every row a third of what remained. */
#define RECON_KEY_COLUMNS(s) \
    s "file_no, " s "line, " KEY_LIST(s) ", " s "status, " s "received_at, " s "day, " \
    s "a_decl, " s "c_decl, " s "f_decl, " s "currency, " s "amount, " s "fee"
const char SQL_RECON_KEYS[] =
    "CREATE TEMP TABLE idemload_recon_sk AS "
    "SELECT " RECON_KEY_COLUMNS("s.") ", 1::bigint AS n_rows, false AS conflicting "
    "FROM (" RECON_STATEMENT_ROWS("(SELECT r.* FROM idemload_recon_raw r"
    "        WHERE NOT EXISTS (SELECT 1 FROM idemload_recon_rep m"
    "                           WHERE " KEY_JOIN("m", "r") "))") ") s "
    "UNION ALL SELECT * FROM idemload_recon_skr";

/* The keys listed more than once, each with its latest row (DISTINCT ON
 * over their rows alone), how many rows list it, its status a final one
 * that any of its rows holds ($1, the final statuses; the least of them
 * when its rows hold two, which makes the key a duplicate anyway), and
 * whether its rows disagree on a fact (amount, currency, status, fee:
 * values that differ, or a value some rows have and others lack) or are
 * different records (rec differs: two charges of one order, with the same
 * amount, are two payments, not one listed twice); min <> max over the
 * key's rows is "more than one distinct value".  Only those keys' rows
 * get their facts worked out. */
#define RECON_KEY_DIFFERS(f) "min(" f ") <> max(" f ")"
#define RECON_KEY_PARTIAL(f) "count(" f ") NOT IN (0, count(*))"
const char SQL_RECON_KEYS_SHARED[] =
    "CREATE TEMP TABLE idemload_recon_skr AS "
    "SELECT w.file_no, w.line, " KEY_LIST("w.") ", coalesce(g.final_status, w.status) AS status,"
    "       w.received_at, w.day, w.a_decl, w.c_decl, w.f_decl, w.currency, w.amount, w.fee,"
    "       w.n AS n_rows, g.conflicting "
    "FROM (SELECT DISTINCT ON (" KEY_LIST("s.") ") " RECON_KEY_COLUMNS("s.") ", m.n"
    "        FROM (" RECON_STATEMENT_ROWS("idemload_recon_rep") ") s"
    "        JOIN (SELECT DISTINCT " KEY_LIST("") ", n FROM idemload_recon_rep) m"
    "          ON " KEY_JOIN("m", "s")
    "       ORDER BY " KEY_LIST("s.") ", s.received_at DESC, s.file_no DESC, s.line DESC) w "
    "JOIN (SELECT " KEY_LIST("s.") ","
    "         min(s.status) FILTER (WHERE s.status = ANY ($1::smallint[])) AS final_status,"
    "         " RECON_KEY_DIFFERS("s.amount") " OR " RECON_KEY_DIFFERS("s.currency")
    "         OR " RECON_KEY_DIFFERS("s.status") " OR " RECON_KEY_DIFFERS("s.fee")
    "         OR " RECON_KEY_PARTIAL("s.amount") " OR " RECON_KEY_PARTIAL("s.currency")
    "         OR " RECON_KEY_PARTIAL("s.fee") " OR " RECON_KEY_DIFFERS("s.rec") " AS conflicting"
    "       FROM (" RECON_STATEMENT_ROWS("idemload_recon_rep") ") s"
    "      GROUP BY " KEY_LIST("s.") ") g"
    "  ON " KEY_JOIN("g", "w");
const char SQL_RECON_ANALYZE_SHARED[] = "ANALYZE idemload_recon_skr";

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
    "        FROM (" RECON_STATEMENT_ROWS("(SELECT r.* FROM idemload_recon_rep r"
    "                JOIN idemload_recon_skr k ON k.conflicting AND " KEY_JOIN("k", "r") ")")
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
    "SELECT " KEY_LIST("s.") ", s.currency, s.amount "
    "FROM (" RECON_STATEMENT_ROWS("(SELECT r.* FROM idemload_recon_rep r"
    "        JOIN idemload_recon_skr k ON " KEY_JOIN("k", "r")
    "         AND (k.file_no, k.line) <> (r.file_no, r.line))") ") s";

const char SQL_RECON_ANALYZE_EXTRA_ROWS[] = "ANALYZE idemload_recon_xrows";

/* $1, $2: the period.  The rows of SQL_RECON_EXTRA_ROWS of the period's
 * keys, each on its key's day. */
const char SQL_RECON_EXTRA[] =
    "CREATE TEMP TABLE idemload_recon_extra AS "
    "SELECT k.tenant_id, k.channel, k.day, k.callback_type, s.currency, s.amount "
    "FROM idemload_recon_xrows s "
    "JOIN idemload_recon_skr k ON " KEY_JOIN("k", "s") " "
    "WHERE k.day BETWEEN $1::date AND $2::date";

/* The statement's keys counted per tenant, channel, day and file: the
 * one pass over the keys that the files' figures (SQL_RECON_FILE_KEYS)
 * and the days each pair lists (RECON_COMPARE_ROWS, read by the two
 * classifying statements) are read from, where each of the three read
 * every key (0.2 to 0.4 s apiece at 1M keys). */
const char SQL_RECON_KEY_DAYS[] =
    "CREATE TEMP TABLE idemload_recon_kd AS "
    "SELECT tenant_id, channel, day, file_no, count(*) AS n "
    "FROM idemload_recon_sk GROUP BY 1, 2, 3, 4";
const char SQL_RECON_ANALYZE_KEY_DAYS[] = "ANALYZE idemload_recon_kd";

/* Per file: the keys its rows represent (the client counted the rows it
 * staged: the difference is what the deduplication took away, for the
 * file's figures), and the days they fall in.  Where the staged rows
 * were counted by a pass over every row (0.3 s at 1M), and the days by a
 * second pass. */
const char SQL_RECON_FILE_KEYS[] =
    "SELECT file_no, sum(n)::bigint, min(day)::text, max(day)::text "
    "FROM idemload_recon_kd GROUP BY file_no";

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
 * bill of one pair, read together, leave out none).  Every row's pair and
 * file is its key's (idemload_recon_kd) unless its key is listed more than
 * once (idemload_recon_rep holds all of those rows): read from those two,
 * not from every row again (0.25 s at 1M). */
const char SQL_RECON_PAIRS[] =
    "CREATE TEMP TABLE idemload_recon_pairs AS"
    " WITH pf AS (SELECT tenant_id, channel, file_no FROM idemload_recon_kd"
    "             UNION SELECT tenant_id, channel, file_no FROM idemload_recon_rep"
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
 * row of its key (whatever that row's time), as idemload_recon_t holds
 * them side by side, then every active row of the statement's (tenant,
 * channel) pairs whose time falls in the period and whose key the
 * statement does not list in the period (SQL_RECON_TABLE_ROWS read them):
 * one it lists only on a day outside an explicit --period is other_day,
 * matched by that listing as by a statement of another day
 * (SQL_RECON_RELISTED), and counted in its day, where it had fallen
 * between the two halves and vanished.  Only those rows the statement
 * lacks are joined with the days it lists and the register's keys listed
 * elsewhere: a key it lists is on a listed day and never relisted, and
 * joining every key cost two hashes probed a million times (0.7 s). */
#define RECON_COMPARE_ROWS \
    "SELECT " KEY_LIST("t.") ", t.s_day AS day," \
    "       t.k_file_no AS file_no, t.k_line AS line, t.k_conflicting AS conflicting," \
    "       true AS s_present, t.k_amount AS s_amount, t.k_currency AS s_currency," \
    "       t.k_status AS s_status, t.k_time AS s_time, t.k_fee AS s_fee," \
    "       t.listed IS NOT NULL AS t_present, t.amount AS t_amount," \
    "       t.currency AS t_currency, t.status AS t_status, t.time AS t_time, t.fee AS t_fee," \
    "       t.k_a AND coalesce(t.a_decl, false) AS a_cmp," \
    "       t.k_c AND coalesce(t.c_decl, false) AS c_cmp," \
    "       t.k_f AND coalesce(t.f_decl, false) AS f_cmp, false AS other_day," \
    "       true AS day_listed, false AS relisted " \
    "FROM idemload_recon_t t " \
    "WHERE t.listed IS DISTINCT FROM false AND t.s_day BETWEEN $1::date AND $2::date " \
    "UNION ALL " \
    "SELECT x.*, ld.tenant_id IS NOT NULL AS day_listed," \
    "       rl.tenant_id IS NOT NULL OR x.other_day AS relisted " \
    "FROM (SELECT " KEY_LIST("t.") "," \
    "        (t.time AT TIME ZONE current_setting('idemload.recon_zone'))::date AS day," \
    "        NULL::integer, NULL::bigint, false," \
    "        false, NULL::numeric, NULL::text, NULL::smallint, NULL::timestamptz, NULL::numeric," \
    "        true, t.amount, t.currency, t.status, t.time, t.fee, false, false, false," \
    "        t.listed AS other_day " \
    "      FROM idemload_recon_t t " \
    "      WHERE (NOT t.listed OR t.s_day NOT BETWEEN $1::date AND $2::date)" \
    "        AND (t.time AT TIME ZONE current_setting('idemload.recon_zone'))::date" \
    "            BETWEEN $1::date AND $2::date) x" \
    " LEFT JOIN (SELECT DISTINCT tenant_id, channel, day FROM idemload_recon_kd) ld" \
    "   ON ld.tenant_id = x.tenant_id AND ld.channel = x.channel AND ld.day = x.day" \
    " LEFT JOIN idemload_recon_relisted rl" \
    "   ON rl.tenant_id = x.tenant_id AND rl.channel = x.channel" \
    "  AND rl.out_trade_no = x.out_trade_no AND rl.callback_type = x.callback_type" \
    "  AND rl.day = x.day"


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

/* The categories' conditions, each a unit's own (NULL, as in a CASE,
 * where a fact is missing: no category): in the array of its categories,
 * and OR'd for the outcome, which is a discrepancy where any holds (the
 * array built for every unit cost 0.2 s at 1M keys; only the units kept
 * build it). */
#define RECON_CATEGORIES(X) \
    X("missing_in_table", "c.s_present AND NOT c.t_present") \
    X("missing_in_statement", "NOT c.s_present AND c.day_listed AND NOT c.relisted") \
    X("amount_mismatch", \
      "c.s_present AND c.t_present" \
      " AND ((c.a_cmp AND c.s_amount <> c.t_amount) OR (c.f_cmp AND c.s_fee <> c.t_fee))" \
      " AND NOT coalesce(c.c_cmp AND c.s_currency <> c.t_currency, false)") \
    X("currency_mismatch", "c.s_present AND c.t_present AND c.c_cmp AND c.s_currency <> c.t_currency") \
    X("status_mismatch", "c.s_present AND c.t_present AND c.s_status <> c.t_status") \
    X("duplicate_in_statement", "c.s_present AND c.conflicting")
#define RECON_CATEGORY_CASE(name, cond) "CASE WHEN " cond " THEN '" name "' END,"
#define RECON_CATEGORY_OR(name, cond) "(" cond ") OR "

/* Each compared unit's outcome: a table row of a day without any
 * statement row of its pair is covered by that day's no_statement; one the
 * statement lacks is matched when a statement of another day listed its
 * key (SQL_RECON_RELISTED), else pending until the grace after the end of
 * its day; otherwise its categories (a fact compared only where both sides
 * declare it and both rows hold it; amounts in two currencies are not compared:
 * the row is a currency_mismatch, not also an amount_mismatch); with none, unverified when a declared fact is
 * missing on a side, else matched.  difference: statement minus table, in
 * the major unit, when the currencies agree.  Whether a day of a pair is
 * listed is a join with the listed days (hashed, RECON_COMPARE_ROWS), not
 * a sub-select per row: that scanned the statement's keys once for every
 * table row the statement lacks (minutes at 1M keys against 10M rows).  $1, $2: the
 * period; the comparison is a sub-select, not a table written, analyzed
 * and read again. */
#define RECON_CLASSIFIED \
    "SELECT c.*, array_remove(ARRAY[" RECON_CATEGORIES(RECON_CATEGORY_CASE) " NULL], NULL)" \
    "         AS categories," \
    "  CASE WHEN NOT c.s_present AND NOT c.day_listed THEN 'no_statement'" \
    "       WHEN c.relisted THEN 'matched'" \
    "       WHEN NOT c.s_present AND pg_temp.idemload_now() < ((c.day + 1)::timestamp AT TIME ZONE" \
    "            current_setting('idemload.recon_zone'))" \
    "            + current_setting('idemload.recon_grace')::interval THEN 'pending'" \
    "       WHEN " RECON_CATEGORIES(RECON_CATEGORY_OR) "false THEN 'discrepancy'" \
    "       WHEN (c.a_cmp AND (c.s_amount IS NULL OR c.t_amount IS NULL))" \
    "         OR (c.c_cmp AND (c.s_currency IS NULL OR c.t_currency IS NULL))" \
    "         OR (c.f_cmp AND (c.s_fee IS NULL OR c.t_fee IS NULL)) THEN 'unverified'" \
    "       ELSE 'matched' END AS outcome," \
    "  CASE WHEN c.s_present AND c.t_present THEN" \
    "         CASE WHEN c.s_currency IS NOT DISTINCT FROM c.t_currency OR NOT c.c_cmp" \
    "              THEN c.s_amount - c.t_amount END" \
    "       WHEN c.s_present THEN c.s_amount ELSE -c.t_amount END AS difference " \
    "FROM (" RECON_COMPARE_ROWS ") c"

/* The compared units summed once per tenant, channel, day, kind (the part
 * of callback_type before ':'), outcome, which sides hold the unit and
 * their currencies: how many, each side's amounts summed and counted.
 * Every figure per day, kind and currency (recon_figures_sql.c) is a sum
 * of these few rows, not a pass of its own over every unit (one pass
 * where there were three, 1.2 s at 1M keys); numeric sums of sums are
 * exact. */
#define RECON_GROUPS_OF(units) \
    "SELECT tenant_id, channel, day, split_part(callback_type, ':', 1) AS kind, outcome," \
    "       s_present, t_present, s_currency, t_currency, count(*) AS n," \
    "       sum(s_amount) AS s_sum, count(s_amount) AS s_n," \
    "       sum(t_amount) AS t_sum, count(t_amount) AS t_n " \
    "FROM " units " GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9"
/* The units each reader of idemload_recon_out reads (the lines, the
 * figures of no_statement days and of the differences): the others
 * (matched and unverified: nearly every unit of a nightly statement)
 * count only in idemload_recon_g.  What the register reads of every unit
 * it reads from idemload_recon_t. */
#define RECON_OUT_KEPT "('discrepancy', 'pending', 'no_statement')"
/* $1, $2: the period.  The tables the classification writes, empty. */
const char SQL_RECON_OUT_TABLE[] =
    "CREATE TEMP TABLE idemload_recon_out AS " RECON_CLASSIFIED " WITH NO DATA";
const char SQL_RECON_GROUPS_TABLE[] =
    "CREATE TEMP TABLE idemload_recon_g AS " RECON_GROUPS_OF("idemload_recon_out") " WITH NO DATA";
/* $1, $2: the period.  The units that differ, into idemload_recon_out,
 * then every unit summed into idemload_recon_g: each statement classifies
 * every unit again (the same expression, in the same transaction, so the
 * same outcomes), which costs less than writing every unit and reading it
 * back (a second at 1M keys), or than passing them all from one to the
 * other through a CTE (it held every unit and spilled to disk: 0.7 s more
 * than the two). */
const char SQL_RECON_CLASSIFY[] =
    "INSERT INTO idemload_recon_out SELECT * FROM (" RECON_CLASSIFIED ") c"
    " WHERE outcome IN " RECON_OUT_KEPT;
const char SQL_RECON_CLASSIFY_SUMS[] =
    "INSERT INTO idemload_recon_g " RECON_GROUPS_OF("(" RECON_CLASSIFIED ") c");

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
