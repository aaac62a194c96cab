/*
 * sql.c - the SQL of idemload (see sql.h): the target as the catalog
 * describes it, the session, and import's staging and merge (on one
 * server and on Citus).  The ledger's SQL is in ledger_sql.c, that of the
 * tools (file locks, init, status, check, create-index, dedupe) in
 * tools_sql.c, the advisory locks in sql_locks.h.
 */
#include "db/sql.h"

#include <string.h>


const char *const key_column_names[KEY_NCOLUMNS] = {KEY_COLUMN_NAMES};

/* $1: the table as typed ([schema.]name, quoted as needed). */
const char SQL_RESOLVE_TABLE[] =
    "SELECT n.nspname, c.relname, c.oid::text, c.relkind = 'p', c.relhasrules, "
    "       c.relrowsecurity, c.relkind IN ('r', 'p'),"
    "       CASE c.relkind WHEN 'v' THEN 'a view' WHEN 'm' THEN 'a materialized view'"
    "                      WHEN 'f' THEN 'a foreign table' WHEN 'S' THEN 'a sequence'"
    "                      WHEN 'i' THEN 'an index' WHEN 'I' THEN 'a partitioned index'"
    "                      ELSE 'not a table' END "
    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.oid = to_regclass($1)";

/* $1: table oid.  Name, NOT NULL, type, has a default (or identity),
 * generated. */
const char SQL_TABLE_COLUMNS[] =
    "SELECT a.attname, a.attnotnull, format_type(a.atttypid, a.atttypmod),"
    "       a.atthasdef OR a.attidentity <> '', a.attgenerated <> '',"
    "       format_type(CASE WHEN ty.typtype = 'd' THEN ty.typbasetype ELSE ty.oid END, NULL) "
    "FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid "
    "WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped "
    "ORDER BY a.attnum";

/* Is Citus installed here?  Then $1 (table oid): is the table one of its
 * distributed (or reference) tables? */
const char SQL_HAS_CITUS[] = "SELECT to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL";
const char SQL_TABLE_DISTRIBUTED[] =
    "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1::oid)";
/* The same for $1 the table's quoted name (init, before it resolves the
 * table). */
const char SQL_TABLE_DISTRIBUTED_BY_NAME[] =
    "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition "
    "WHERE logicalrelid = to_regclass($1))";

/* Of the privileges an import needs on the target's columns ($1 the table's
 * oid; $2 column names, $3 the privilege on each), those the current role
 * lacks, one row per privilege with its columns as quoted names, and the
 * role.  Then whether the role may create temporary tables (the staging
 * table), the role and the database. */
const char SQL_MISSING_PRIVILEGES[] =
    "SELECT k.priv, string_agg(quote_ident(k.col), ', ' ORDER BY k.n), quote_ident(current_user) "
    "FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS k(col, priv, n) "
    "WHERE NOT has_column_privilege($1::oid, k.col, k.priv) "
    "GROUP BY k.priv ORDER BY min(k.n)";
const char SQL_MAY_CREATE_TEMP[] =
    "SELECT has_database_privilege(current_database(), 'TEMP'), quote_ident(current_user),"
    "       quote_ident(current_database())";

/* $1: a --set value, cast to its column's type ({type}, from format_type):
 * does the server accept it? */
const char SQL_CHECK_VALUE[] = "SELECT $1::{type}";

/* $1: table oid.  One row per unique index, with its key columns in order. */
const char SQL_UNIQUE_INDEXES[] =
    "SELECT ci.relname, i.indisvalid, i.indisready, i.indislive, "
    "       pg_get_expr(i.indpred, i.indrelid), "
    "       (SELECT string_agg(a.attname, ',' ORDER BY k.n) "
    "          FROM unnest(i.indkey[0:i.indnkeyatts - 1]) WITH ORDINALITY AS k(attnum, n) "
    "          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum), "
    "       i.indexprs IS NOT NULL, i.indnkeyatts, "
    "       coalesce((to_jsonb(i) ->> 'indnullsnotdistinct')::boolean, false), "
    "       i.indimmediate "
    "FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid "
    "WHERE i.indrelid = $1::oid AND i.indisunique "
    "ORDER BY ci.relname";

/* The staging table: a temporary table of this session.  Types are the
 * loosest the input can have, so a value the target refuses fails in the
 * merge, where one row can be isolated, not in COPY. */
/*
 * Per session (a session runs only idemload's statements):
 * work_mem keeps a chunk's verdicts in memory, not on disk;
 * enable_seqscan off makes the per-row key probe use the unique index even
 * when statistics say the target is empty (an analyzed empty table), where a
 * sequential scan per staged row would make the first chunk quadratic.  The
 * staging table has no index, so its scan is unaffected;
 * jit off: the cost penalty of enable_seqscan pushes every merge over the
 * JIT thresholds, and compiling it cost ~100-300 ms per chunk for a
 * statement that runs in tens of milliseconds;
 * read committed, whatever the role or database sets as its default: the
 * merge (ON CONFLICT, its guard against concurrent loaders, the ledger's
 * rows) is written for it.  Under a default of serializable, an import's
 * own lanes, on disjoint keys, failed each other's commits as "pivots"
 * (40001) and were redone; under repeatable read, ON CONFLICT DO UPDATE
 * refuses a row another loader changed since the snapshot.
 */
const char SQL_SESSION_SETTINGS[] =
    "SET work_mem = '64MB'; SET enable_seqscan = off; SET jit = off; "
    "SET default_transaction_isolation = 'read committed'";

/*
 * The SQL of the columns idemload loads is generated from the column table
 * (core/columns.h): COLUMN_LIST, COLUMN_VALUES, KEY_LIST, KEY_JOIN,
 * FACT_ASSIGN, STAGED_COLUMN_DEFS, INIT_COLUMN_DEFS; tests/golden holds the
 * merges as they render.
 */

/* A staged row's columns after its ord, in both kinds of staging table
 * (this session's, and a distributed target's: SQL_CITUS_STAGE_CREATE):
 * the column table's, in its order, which is also the order in which COPY
 * sends them (copy_encode.c generates its fields from the same table). */
#define STAGED_COLUMNS STAGED_COLUMN_DEFS
#define STAGED_COPY_COLUMNS " (ord, " COLUMN_LIST("") ")" " FROM STDIN (FORMAT binary)"

const char SQL_CREATE_STAGE[] =
    "CREATE TEMP TABLE IF NOT EXISTS idemload_stage ("
    "  ord integer NOT NULL,"
    STAGED_COLUMNS
    ")";

const char SQL_TRUNCATE_STAGE[] = "TRUNCATE idemload_stage";

const char SQL_COPY_STAGE[] = "COPY idemload_stage" STAGED_COPY_COLUMNS;

/*
 * The conflict action of SPEC.md, shared by both merges, for the incoming
 * row against the active row of its key ($3: the final statuses):
 * - not older: it replaces payload, received_at and status when it changes
 *   something, but a final status of the active row stays;
 * - older: it is stale, unless it holds a final status the active row
 *   lacks: then only the status becomes that final one (payload and
 *   received_at stay the newer version's), so the order in which versions
 *   arrive never decides a key's final status.
 * Rows it turns away are locked, not written.  The merge appends what it
 * returns of each written row (SQL_CONFLICT_RETURNING, SQL_CITUS_RETURNING).
 */
const char SQL_CONFLICT_UPDATE[] =
    "  ON CONFLICT {conflict}"
    "  DO UPDATE SET payload = CASE WHEN t.received_at <= EXCLUDED.received_at"
    "                               THEN EXCLUDED.payload ELSE t.payload END,"
    "                received_at = greatest(t.received_at, EXCLUDED.received_at),"
    "                status = CASE WHEN t.status = ANY ($3::smallint[]) THEN t.status"
    "                              ELSE EXCLUDED.status END"
    "   WHERE CASE WHEN t.received_at <= EXCLUDED.received_at"
    "              THEN (t.payload, t.received_at, t.status) IS DISTINCT FROM"
    "                   (EXCLUDED.payload, EXCLUDED.received_at,"
    "                    CASE WHEN t.status = ANY ($3::smallint[]) THEN t.status"
    "                         ELSE EXCLUDED.status END)"
    "              ELSE EXCLUDED.status = ANY ($3::smallint[])"
    "                   AND NOT t.status = ANY ($3::smallint[]) END";

/* What the single-server merges return of each row they write (status and
 * received_at: the version after, for --changes). */
const char SQL_CONFLICT_RETURNING[] =
    "  RETURNING {inserted} AS inserted, " KEY_LIST("t.") ","
    "            t.status, t.received_at";

/*
 * The heart of every verdict (VERDICT_OF_STAGED_ROW here, SQL_CITUS_VERDICT
 * for a distributed target), for staged row s against the active row a of
 * its key: the WHEN arms of a CASE giving 1 when a is newer (stale; but 0,
 * to write, when s brings a final status a lacks) and 2 when a is the same
 * version (unchanged, a final status of a kept as the update would keep
 * it); the caller's ELSE is 0, to write.  $3: the final statuses.
 */
#define VERDICT_STALE_OR_SAME(a) \
    "              WHEN " a ".received_at > s.received_at THEN" \
    "                   CASE WHEN s.status = ANY ($3::smallint[])" \
    "                         AND NOT " a ".status = ANY ($3::smallint[]) THEN 0 ELSE 1 END" \
    "              WHEN " a ".received_at = s.received_at AND " a ".payload = s.payload::jsonb" \
    "               AND " a ".status = CASE WHEN " a ".status = ANY ($3::smallint[])" \
    " THEN " a ".status" \
    "                                     ELSE s.status END THEN 2"

/*
 * The pieces the two probing merges (SQL_MERGE_PROBE, SQL_MERGE_DETAIL)
 * share, so both judge a row alike: each staged row's verdict against the
 * active row of its key (VERDICT_OF_STAGED_ROW over VERDICTS_SOURCE), and
 * the INSERT of the rows to write (INSERT_VERDICT_0), which ends the WITH.
 */
#define VERDICT_OF_STAGED_ROW \
    "         CASE WHEN cur.received_at IS NULL THEN 0" \
    VERDICT_STALE_OR_SAME("cur") \
    "              ELSE 0 END AS verdict"

#define VERDICTS_SOURCE \
    "    FROM idemload_stage s" \
    "    LEFT JOIN LATERAL (" \
    "      SELECT t.received_at, t.payload, t.status FROM {table} t" \
    "       WHERE " KEY_JOIN("t", "s") \
    "         AND {active}" \
    "       LIMIT 1) cur ON true" \
    "   WHERE s.ord BETWEEN $1::int AND $2::int"

#define INSERT_VERDICT_0 \
    "), merged AS (" \
    "  INSERT INTO {table} AS t (" COLUMN_LIST("") "{extra_cols})" \
    "  SELECT " COLUMN_VALUES("v.") "{extra_vals}" \
    "    FROM verdicts v" \
    "   WHERE v.verdict = 0" \
    "{do_update}" \
    ") "

/*
 * Is the key of staged row P (its alias and a dot) among the rows the
 * merge wrote for which COND holds (m: the merge's RETURNING)?  Asked in
 * an aggregate's FILTER or CASE or a select list, not in a WHERE, so the
 * planner cannot turn it into a join: it hashes the merge's rows once (a
 * hashed SubPlan).  As a join it chose a nested loop whenever the
 * unanalyzed staging table looked small: a merge of 1,219 updates compared
 * 1.5M key pairs, 200 ms of a 220 ms statement (BENCHMARKS.md, the
 * nightly shape).  A staged key is unique within its ords (the client
 * merges a key's versions in a chunk), so the test is the join's.
 */
#define KEY_IN_MERGED(P, COND) \
    "(" KEY_LIST(P) ") IN (SELECT " KEY_LIST("m.") " FROM merged m WHERE " COND ")"

/*
 * The merge for staged rows $1..$2 (ord), final statuses $3, when most keys
 * are expected to exist already (re-imports, overlapping files).
 *
 * verdicts: each staged row is first compared with the active row of its key
 * (one index probe): no row or an older/different one -> 0, to write; a
 * newer one -> 1, stale (but 0 when the staged row brings a final status
 * the newer one lacks); the same version -> 2, unchanged.  Only rows to
 * write reach the INSERT, so stale and unchanged rows are never locked and
 * never written: a re-import costs one probe per row.  The INSERT's own
 * conflict action stays the guard against concurrent loaders: a row another
 * session changed meanwhile still obeys the same rules there.
 * Rows come in business-key order (the client sorts them), so concurrent
 * loaders lock keys in the same order.
 * {extra_cols}/{extra_vals}: columns beyond idemload's own and their --set
 * constants ($4..), set on inserted rows only (an update changes payload,
 * received_at and status, nothing else).
 * Columns: inserted, updated, stale, and the ords of the rows sent to the
 * INSERT that it did not write (SQL_MISSED_*), or NULL.  The loader derives
 * unchanged: the rows that are none of these.  Then, so the figures can be
 * told per row (the groups of the report): the ords of the rows written,
 * negative for an update (the written rows hashed once, KEY_IN_MERGED;
 * nothing on a re-import that writes nothing), and the ords of the stale
 * rows.
 */
const char SQL_MERGE_PROBE[] =
    "WITH verdicts AS MATERIALIZED ("
    "  SELECT s.*,"
    VERDICT_OF_STAGED_ROW VERDICTS_SOURCE INSERT_VERDICT_0
    "SELECT (SELECT count(*) FILTER (WHERE inserted) FROM merged),"
    "       (SELECT count(*) FILTER (WHERE NOT inserted) FROM merged),"
    "       (SELECT count(*) FILTER (WHERE verdict = 1) FROM verdicts),"
    "       {missed_probe},"
    "       (SELECT array_agg(CASE WHEN " KEY_IN_MERGED("v.", "m.inserted")
    "                              THEN v.ord ELSE -v.ord END)"
    "                FILTER (WHERE " KEY_IN_MERGED("v.", "true") ")"
    "          FROM verdicts v WHERE v.verdict = 0),"
    "       (SELECT array_agg(v.ord) FROM verdicts v WHERE v.verdict = 1)";

/*
 * A dry run by a role that may read the target but not write it merges
 * into a temporary copy instead (loader.c): the target's columns, no rows,
 * and the unique index the merge's ON CONFLICT names ({conflict}).  Created
 * inside the dry run's transaction, so it goes with its rollback.
 */
const char SQL_SHADOW_CREATE[] =
    "CREATE TEMP TABLE idemload_shadow AS SELECT * FROM {table} WHERE false; "
    "CREATE UNIQUE INDEX idemload_shadow_key ON pg_temp.idemload_shadow {conflict}";
const char SQL_SHADOW_NAME[] = "pg_temp.idemload_shadow";

/* Before a merge into the copy: the active rows of staged rows $1..$2's
 * keys, from the target ({table}), unless an earlier chunk of the run put
 * its version of the key there already. */
const char SQL_SHADOW_FILL[] =
    "INSERT INTO pg_temp.idemload_shadow SELECT t.* FROM idemload_stage s"
    "  CROSS JOIN LATERAL ("
    "    SELECT * FROM {table} t"
    "     WHERE " KEY_JOIN("t", "s")
    "       AND {active}"
    "     LIMIT 1) t"
    " WHERE s.ord BETWEEN $1::int AND $2::int"
    " ON CONFLICT DO NOTHING";

/*
 * The append: rows whose keys no earlier chunk of the run carried, COPYed
 * straight into the target in place of staging and merging (lane.h).
 * The unique index on the key is what makes it safe: a key that is in the
 * table after all (an earlier run, another process) fails the COPY with
 * 23505, and the lane merges the chunk instead.  COPY fires the table's
 * triggers and checks its constraints as the INSERT would; it does not
 * apply rules, and is refused under row-level security, so the loader
 * appends only to a table with neither (loader.c), with the column types
 * the binary rows carry (copy_encode.h) and no --set.
 */
const char SQL_APPEND[] = "COPY {table} (" COLUMN_LIST("") ") FROM STDIN (FORMAT binary)";

/*
 * Before the append: which of the rows about to be appended have a key
 * the table holds as active ($1..$4: their keys as bigint[] and text[]
 * literals, in the order of the COPY); their 1-based positions, or NULL
 * when none.  One index descent per key, reading only: a COPY that met
 * such a key would have written its batch of heap tuples before the
 * unique index stopped it, leaving dead tuples and WAL for rows the table
 * already holds (SPEC.md, "Nothing written means nothing written").  Those
 * rows take the merge; the others are appended.
 */
/* The append's probe and its xmin (below) take a key as parameters, one
 * per key column in the column table's order (lane.c binds them): a new
 * key column is a parameter more there, so the build stops here until
 * both statements and their binding say so. */
_Static_assert(KEY_NCOLUMNS == 4,
               "a new key column: add its parameter to SQL_XMIN_OF_KEY and SQL_APPEND_PROBE"
               " and to their binding in lane.c");

/* $1..$4 a key: the xmin of its active row (after the append wrote it in
 * a subtransaction: that subtransaction's xid, for the ledger). */
const char SQL_XMIN_OF_KEY[] =
    "SELECT t.xmin::text FROM {table} t WHERE t.tenant_id = $1::bigint AND t.channel = $2"
    "   AND t.out_trade_no = $3 AND t.callback_type = $4 AND {active} LIMIT 1";

/* The xmin of staged row $1 (written in the subtransaction of an isolated
 * range: that subtransaction's xid, for the ledger). */
const char SQL_XMIN_OF_STAGED[] = "SELECT xmin::text FROM idemload_stage WHERE ord = $1::int";

/*
 * --supersede, before the merge of staged rows $1..$2: an active row of
 * the same key that is newer than the staged row and that a transaction of
 * this file's earlier load under other parameters wrote ($3, the xids as an
 * int8[] literal; xmin compared modulo 2^32, as PostgreSQL keeps it) takes
 * the staged row's version; the merge then finds them equal.  Nothing else
 * is touched: a version another load wrote since keeps its xmin.  Returns
 * the count and the ords replaced.
 */
const char SQL_SUPERSEDE[] =
    "WITH u AS ("
    "  UPDATE {table} t SET " FACT_ASSIGN("s.")
    "    FROM idemload_stage s"
    "   WHERE s.ord BETWEEN $1::int AND $2::int"
    "     AND " KEY_JOIN("t", "s")
    "     AND {active} AND t.received_at > s.received_at"
    "     AND t.xmin::text::bigint = ANY ($3::bigint[])"
    "  RETURNING s.ord) "
    "SELECT count(*), array_agg(ord) FROM u";

/* Does the target hold any active row?  When it held none as the run
 * began, a key the run meets for the first time can be in the table only
 * if another process put it there meanwhile: the append skips its probe. */
const char SQL_TABLE_HAS_ACTIVE[] =
    "SELECT EXISTS (SELECT 1 FROM {table} t WHERE {active})";

const char SQL_APPEND_PROBE[] =
    "SELECT array_agg(k.k_ord ORDER BY k.k_ord)"
    "  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY"
    "       AS k(k_tenant, k_channel, k_out_trade_no, k_callback_type, k_ord)"
    /* A lateral LIMIT 1, not EXISTS: the planner would hash the whole
     * index for a semi join, a scan of the table per probe (2.6 s at 190k
     * rows, against 0.1 s for one descent per key). */
    " CROSS JOIN LATERAL (SELECT 1 FROM {table} t"
    "                      WHERE t.tenant_id = k.k_tenant AND t.channel = k.k_channel"
    "                        AND t.out_trade_no = k.k_out_trade_no"
    "                        AND t.callback_type = k.k_callback_type AND {active}"
    "                      LIMIT 1) hit";

/*
 * The same merge when most keys are expected to be new (a first load): no
 * probe, every row goes straight to the INSERT; the few rows it does not
 * write are classified afterwards by SQL_COUNT_STALE.  Columns as above,
 * stale 0 (all left for that count); of the written rows only the updated
 * ones are listed (negative ords), every other row sent and written being
 * inserted, so a first load does not ship back an ord per row.
 */
const char SQL_MERGE_DIRECT[] =
    "WITH merged AS ("
    "  INSERT INTO {table} AS t (" COLUMN_LIST("") "{extra_cols})"
    "  SELECT " COLUMN_VALUES("s.") "{extra_vals}"
    "    FROM idemload_stage s"
    "   WHERE s.ord BETWEEN $1::int AND $2::int"
    "{do_update}"
    ") "
    "SELECT (SELECT count(*) FILTER (WHERE inserted) FROM merged),"
    "       (SELECT count(*) FILTER (WHERE NOT inserted) FROM merged), 0,"
    "       {missed_direct},"
    "       (SELECT array_agg(-s.ord) FILTER (WHERE " KEY_IN_MERGED("s.", "NOT m.inserted") ")"
    "          FROM idemload_stage s WHERE s.ord BETWEEN $1::int AND $2::int),"
    "       NULL::int[]";

/*
 * The probing merge when every row's outcome is wanted with its versions
 * (--changes): the same verdicts and the same INSERT as SQL_MERGE_PROBE,
 * which already reads each key's active row before writing; then one row
 * per staged row that is not unchanged: ord, verdict, inserted (NULL when
 * not written), the active version before (status, received_at; NULL when
 * none) and the version after (the row written, or for a row not written
 * the incoming one).  received_at as UTC text ({ts_*}).  Rows with verdict
 * 0 that were not written are classified by SQL_STALE_DETAIL.
 */
const char SQL_MERGE_DETAIL[] =
    "WITH verdicts AS MATERIALIZED ("
    "  SELECT s.*, cur.status AS cur_status, cur.received_at AS cur_received_at,"
    VERDICT_OF_STAGED_ROW VERDICTS_SOURCE INSERT_VERDICT_0
    "SELECT v.ord, v.verdict, m.inserted, v.cur_status,"
    "       " SQL_TS_TEXT("v.cur_received_at") ","
    "       coalesce(m.status, v.status),"
    "       " SQL_TS_TEXT("coalesce(m.received_at, v.received_at)")
    "  FROM verdicts v LEFT JOIN merged m"
    "    ON " KEY_JOIN("m", "v")
    " WHERE v.verdict <> 2";

/*
 * After SQL_MERGE_DETAIL, the staged rows ($1, ords) it sent to the INSERT
 * but did not write: those whose active row is newer are stale (as
 * SQL_COUNT_STALE), listed with that newer version and their own (ord,
 * newer status, newer received_at, status, received_at); the others are
 * unchanged.
 */
const char SQL_STALE_DETAIL[] =
    "SELECT s.ord, newer.status, " SQL_TS_TEXT("newer.received_at") ","
    "       s.status, " SQL_TS_TEXT("s.received_at")
    "  FROM idemload_stage s CROSS JOIN LATERAL ("
    "  SELECT t.status, t.received_at FROM {table} t"
    "   WHERE " KEY_JOIN("t", "s")
    "     AND {active} AND t.received_at > s.received_at"
    "   LIMIT 1) newer"
    " WHERE s.ord = ANY ($1::int[])";

/*
 * --on-conflict nothing with --changes: SQL_MERGE_DIRECT, then one row per
 * row inserted (ord, status, received_at); the others are existing.  The
 * written keys are looked up in the select list of a subquery kept apart
 * (OFFSET 0), so they are hashed once (KEY_IN_MERGED), never joined.
 */
const char SQL_MERGE_DETAIL_NOTHING[] =
    "WITH merged AS ("
    "  INSERT INTO {table} AS t (" COLUMN_LIST("") "{extra_cols})"
    "  SELECT " COLUMN_VALUES("s.") "{extra_vals}"
    "    FROM idemload_stage s"
    "   WHERE s.ord BETWEEN $1::int AND $2::int"
    "{do_update}"
    ") "
    "SELECT x.ord, x.status, " SQL_TS_TEXT("x.received_at")
    "  FROM (SELECT s.ord, s.status, s.received_at, " KEY_IN_MERGED("s.", "true") " AS written"
    "          FROM idemload_stage s WHERE s.ord BETWEEN $1::int AND $2::int"
    "        OFFSET 0) x"
    " WHERE x.written";

/* --on-conflict nothing, the action for SQL_MERGE_DIRECT: the first write
 * wins, an active row is never touched.  Rows not written are simply
 * existing: the {missed_direct} list names them, for the groups. */
const char SQL_CONFLICT_NOTHING[] =
    "  ON CONFLICT {conflict} DO NOTHING"
    "  RETURNING true AS inserted, " KEY_LIST("t.");

/*
 * {missed_probe} / {missed_direct}: the staged rows the merge sent to the
 * INSERT but did not write (the conflict action turned them away), as an
 * int[] of ords, NULL when there are none.  NOT IN over the written keys
 * runs as one hashed subplan (the staging table has no statistics, so a
 * NOT EXISTS would be planned as a nested loop over the CTE); it spares
 * SQL_COUNT_STALE an index probe for every staged row when only a few need
 * classifying.  The key columns are never NULL here.
 */
/* Both are asked only when the INSERT wrote fewer rows than it was sent
 * (a CASE runs its subquery only when that branch is taken): in a first
 * load every row is written, and the hashed NOT IN over every written key
 * was a tenth of each merge's time (EXPLAIN ANALYZE, 10,000 new keys into
 * a 1M-row table: 42 of 378 ms).  The staged rows of $1..$2 are one per
 * key (the client deduplicates), so "all written" is count = $2 - $1 + 1. */
const char SQL_MISSED_PROBE[] =
    "CASE WHEN (SELECT count(*) FROM merged)"
    "        < (SELECT count(*) FROM verdicts v WHERE v.verdict = 0) THEN"
    " (SELECT array_agg(v.ord) FROM verdicts v WHERE v.verdict = 0"
    "    AND (" KEY_LIST("v.") ") NOT IN ("
    "        SELECT " KEY_LIST("m.") " FROM merged m))"
    " END";

#define MISSED_DIRECT \
    "CASE WHEN (SELECT count(*) FROM merged) < $2::int - $1::int + 1 THEN" \
    " (SELECT array_agg(s.ord) FROM idemload_stage s WHERE s.ord BETWEEN $1::int AND $2::int" \
    "    AND (" KEY_LIST("s.") ") NOT IN (" \
    "        SELECT " KEY_LIST("m.") " FROM merged m))" \
    " END"
const char SQL_MISSED_DIRECT[] = MISSED_DIRECT;

/* --on-conflict nothing: the existing rows, for the groups; the same list,
 * looked for only when some row was not inserted. */
const char SQL_MISSED_NOTHING[] = MISSED_DIRECT;

const char SQL_MISSED_NONE[] = "NULL::int[]";

/*
 * {inserted}: was the returned row inserted (not updated)?  On a plain
 * table, xmax = 0: an update by ON CONFLICT leaves our lock in the new
 * version's xmax.  A partitioned table has no system columns to return, so
 * there the question is asked of the statement's snapshot, which still shows
 * the row's previous version when it was an update.  That answer is wrong
 * only when another session inserted the key after this statement began
 * (the table is right either way; the figure then says inserted for updated).
 */
const char SQL_INSERTED_XMAX[] = "(t.xmax = 0)";
const char SQL_INSERTED_SNAPSHOT[] =
    "NOT EXISTS (SELECT 1 FROM {table} o"
    "             WHERE " KEY_JOIN("o", "t")
    "               AND {active})";

/*
 * After a merge that did not write some of the rows it sent to the INSERT
 * ($1, their ords): those whose active row is newer are stale, the others
 * unchanged.  The merge has locked every row it conflicted with, and this
 * statement's snapshot is newer than the merge's, so the count is exact
 * even when another session changed the key meanwhile.
 */
/* (LATERAL ... LIMIT 1: one index probe per listed row, whatever the
 * statistics say; a plain join was planned as a merge join over the whole
 * unique index once autovacuum had analyzed a growing table, 1 s a chunk.) */
/* Columns: the count and the ords of the stale rows. */
const char SQL_COUNT_STALE[] =
    "SELECT count(*), array_agg(s.ord) FROM idemload_stage s CROSS JOIN LATERAL ("
    "  SELECT 1 FROM {table} t"
    "   WHERE " KEY_JOIN("t", "s")
    "     AND {active} AND t.received_at > s.received_at"
    "   LIMIT 1) newer"
    " WHERE s.ord = ANY ($1::int[])";

/*
 * A Citus-distributed target (SPEC.md "A distributed target: Citus").
 * The staging table is an UNLOGGED table of the target's schema, one per
 * connection, named after the coordinator backend's pid (so a leftover of a
 * killed loader is known by its pid being gone), distributed by tenant_id
 * and colocated with the target: every statement below joins the two on
 * the distribution column, so Citus runs it on the workers, shard by
 * shard, never pulling rows through the coordinator.  new_id is filled
 * from the target's id sequence while the rows are COPYed (on the
 * coordinator), so the INSERT evaluates no volatile default; verdict is the
 * probe's outcome (0: to write, 1: stale, 2: unchanged), stored so no CTE
 * has to carry it (a CTE over the stage would be planned through the
 * coordinator).  {seq}: the sequence as a quoted literal.
 */
/* A distributed target's sessions: the lanes of one import merge disjoint
 * keys, each a multi-shard INSERT ... SELECT; with Citus's deadlock
 * prevention on, only one multi-shard modification may hold a shard until
 * it commits, so a second lane would wait for the first, which waits at
 * the commit barrier for it.  Off, they run side by side; a real
 * distributed deadlock between importers of overlapping files is found by
 * Citus's deadlock detection and retried like any deadlock (40P01). */
const char SQL_CITUS_SESSION_SETTINGS[] = "SET citus.enable_deadlock_prevention = off";

const char SQL_CITUS_STAGE_CREATE[] =
    "CREATE UNLOGGED TABLE IF NOT EXISTS {stage} ("
    "  ord integer NOT NULL,"
    "  new_id bigint NOT NULL DEFAULT nextval({seq}::regclass),"
    "  verdict smallint NOT NULL DEFAULT 0,"
    STAGED_COLUMNS
    ")";

/* $1 the stage, $2 the target (quoted names). */
const char SQL_CITUS_STAGE_DISTRIBUTE[] =
    "SELECT create_distributed_table($1::text::regclass, 'tenant_id', colocate_with => $2::text) "
    "WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition "
    "                   WHERE logicalrelid = to_regclass($1::text))";

/* $1 the target's quoted name: its id column's sequence, or NULL. */
const char SQL_CITUS_ID_SEQUENCE[] = "SELECT pg_get_serial_sequence($1, 'id')";

/* $1 the schema: staging tables whose coordinator session is gone (a
 * loader killed, or a lost connection), as quoted names. */
const char SQL_CITUS_LEFTOVERS[] =
    "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c"
    "  JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname ~ '^idemload_stage_[0-9]+$'"
    "   AND substring(c.relname FROM 16)::int NOT IN (SELECT pid FROM pg_stat_activity)";

const char SQL_CITUS_TRUNCATE[] = "TRUNCATE {stage}";

/* A staging table (this loader's, or one SQL_CITUS_LEFTOVERS found). */
const char SQL_CITUS_DROP[] = "DROP TABLE IF EXISTS {stage}";

const char SQL_CITUS_COPY[] = "COPY {stage}" STAGED_COPY_COLUMNS;

/* The probe of SQL_MERGE_PROBE's verdicts, for staged rows $1..$2 with
 * final statuses $3, written into the stage; a row whose key has no active
 * row keeps verdict 0. */
const char SQL_CITUS_VERDICT[] =
    "UPDATE {stage} s"
    "   SET verdict = CASE"
    VERDICT_STALE_OR_SAME("t")
    "              ELSE 0 END"
    "  FROM {table} t"
    " WHERE " KEY_JOIN("t", "s")
    "   AND {active} AND s.ord BETWEEN $1::int AND $2::int";

/* Staged rows $1..$2: how many the probe found stale, how many go to the
 * INSERT. */
const char SQL_CITUS_VERDICTS[] =
    "SELECT count(*) FILTER (WHERE verdict = 1), count(*) FILTER (WHERE verdict = 0)"
    "  FROM {stage} WHERE ord BETWEEN $1::int AND $2::int";

/* The merge of staged rows $1..$2 whose verdict is 0 (all of them when no
 * probe ran); {do_update}: the conflict action and SQL_CITUS_RETURNING. */
const char SQL_CITUS_MERGE[] =
    "INSERT INTO {table} AS t (id, " COLUMN_LIST("") "{extra_cols})"
    "SELECT s.new_id, " COLUMN_VALUES("s.") "{extra_vals}"
    "  FROM {stage} s"
    " WHERE s.ord BETWEEN $1::int AND $2::int AND s.verdict = 0"
    "{do_update}";

/* Of each written row, only whether it was inserted and its id travel back
 * (through the coordinator to idemload). */
const char SQL_CITUS_RETURNING[] = "  RETURNING {inserted} AS inserted, t.id";

/*
 * Staged rows $1..$2 sent to the INSERT but not written ($3: the ids it
 * returned) whose active row is newer: stale; the others it did not write
 * are unchanged.  A row the INSERT wrote is known by its id: its new_id
 * when inserted, its active row's when updated.  As SQL_COUNT_STALE, exact:
 * the merge locked every row it conflicted with.
 */
const char SQL_CITUS_MISSED_STALE[] =
    "SELECT count(*) FROM {stage} s JOIN {table} t"
    "    ON " KEY_JOIN("t", "s") " AND {active}"
    " WHERE s.ord BETWEEN $1::int AND $2::int AND s.verdict = 0"
    "   AND NOT s.new_id = ANY ($3::bigint[]) AND NOT t.id = ANY ($3::bigint[])"
    "   AND t.received_at > s.received_at";
