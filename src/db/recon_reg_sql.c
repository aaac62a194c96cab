/*
 * recon_reg_sql.c - the SQL of reconcile's register (see recon_sql.h):
 * its tables beside the ledger, the run's items opened, carried, escalated
 * and resolved against the comparison's lines (recon_sql.c), and what
 * --repair mended.
 */
#include "db/recon_sql.h"

#include "db/recon_sql_parts.h"

#define RECON_REPAIRED "'inserted by --repair'"
#define RECON_MERGED "'updated by --repair merge'"

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

/* $1 the run, $2 the files, $3 $4 the period.  The statement's keys this
 * run compared (in idemload_recon_t: a key of the period, listed, its
 * table row found) whose
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
    "FROM (SELECT " KEY_LIST("t.") ", t.k_file_no AS file_no, t.k_line AS line, t.s_day AS day,"
    "             (t.time AT TIME ZONE current_setting('idemload.recon_zone'))::date AS t_day"
    "        FROM idemload_recon_t t"
    "       WHERE t.listed AND t.s_day BETWEEN $3::date AND $4::date) o "
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
 * found again.  The comparison's row of the key (its row in
 * idemload_recon_t on the statement's day: idemload_recon_out holds only
 * the units that differ) is joined (hashed) once, not looked up per item. */
const char SQL_RECON_REG_SUPERSEDE[] =
    "WITH gone AS (SELECT i.id,"
    "    CASE WHEN o.tenant_id IS NULL"
    "         THEN 'not found again when the day was reconciled again'"
    "         WHEN (i.table_side IS NULL) <> (o.listed IS NULL)"
    "           OR (i.table_side ->> 'amount')::numeric IS DISTINCT FROM o.amount"
    "           OR (i.table_side ->> 'currency') IS DISTINCT FROM o.currency"
    "           OR (i.table_side ->> 'status')::int IS DISTINCT FROM o.status"
    "         THEN 'the table now agrees with the statement'"
    "         ELSE 'the statement now agrees with the table' END AS why"
    "  FROM {item} i LEFT JOIN idemload_recon_t o"
    "    ON o.tenant_id = i.tenant_id AND o.channel = i.channel AND o.s_day = i.day"
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
