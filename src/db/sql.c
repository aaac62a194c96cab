/*
 * sql.c - the SQL of idemload (see sql.h).
 */
#include "db/sql.h"

#include <string.h>

#include "db/ledger_migrations.h"

const char *const key_column_names[KEY_NCOLUMNS] = {KEY_COLUMN_NAMES};

/*
 * The advisory locks idemload takes, named here and nowhere else:
 * LOCK_LEDGER_CREATE  one transaction at a time creates or migrates the
 *                     ledger tables (a transaction lock, SQL_LEDGER_CREATE).
 *                     An arbitrary constant key, chosen once: changing it
 *                     would let an old and a new idemload create the ledger
 *                     at the same time.
 * LOCK_INIT           one `idemload init` at a time creates the table and
 *                     its index (a transaction lock, SQL_INIT_LOCK): CREATE
 *                     ... IF NOT EXISTS alone can still collide on the
 *                     catalog.  The ledger's key + 1.
 * LOCK_FILE           one process at a time loads a file into a table (a
 *                     session lock, SQL_FILE_LOCK*): the key hashes
 *                     "target:digest", $1 the target, $2 the file's digest.
 */
#define LOCK_LEDGER_CREATE "7350323339418284032"
#define LOCK_INIT "7350323339418284033"
#define LOCK_FILE "hashtextextended($1 || ':' || $2, 0)"

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
 * negative for an update (one hash join of the written rows, nothing on a
 * re-import that writes nothing), and the ords of the stale rows.
 */
const char SQL_MERGE_PROBE[] =
    "WITH verdicts AS MATERIALIZED ("
    "  SELECT s.*,"
    VERDICT_OF_STAGED_ROW VERDICTS_SOURCE INSERT_VERDICT_0
    "SELECT (SELECT count(*) FILTER (WHERE inserted) FROM merged),"
    "       (SELECT count(*) FILTER (WHERE NOT inserted) FROM merged),"
    "       (SELECT count(*) FILTER (WHERE verdict = 1) FROM verdicts),"
    "       {missed_probe},"
    "       (SELECT array_agg(CASE WHEN m.inserted THEN v.ord ELSE -v.ord END)"
    "          FROM verdicts v JOIN merged m"
    "            ON " KEY_JOIN("m", "v") "),"
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
    "       (SELECT array_agg(-s.ord) FROM idemload_stage s JOIN merged m"
    "            ON " KEY_JOIN("m", "s")
    "         WHERE s.ord BETWEEN $1::int AND $2::int AND NOT m.inserted),"
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
 * row inserted (ord, status, received_at); the others are existing.
 */
const char SQL_MERGE_DETAIL_NOTHING[] =
    "WITH merged AS ("
    "  INSERT INTO {table} AS t (" COLUMN_LIST("") "{extra_cols})"
    "  SELECT " COLUMN_VALUES("s.") "{extra_vals}"
    "    FROM idemload_stage s"
    "   WHERE s.ord BETWEEN $1::int AND $2::int"
    "{do_update}"
    ") "
    "SELECT s.ord, s.status, " SQL_TS_TEXT("s.received_at")
    "  FROM idemload_stage s JOIN merged m"
    "    ON " KEY_JOIN("m", "s")
    " WHERE s.ord BETWEEN $1::int AND $2::int";

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

/*
 * The ledger: files by content digest, and their committed chunks.  An
 * import loads each chunk over `lanes` connections, lane k taking the keys
 * whose hash is k modulo lanes, each lane in its own transaction; so the
 * ledger has one row per chunk and lane, except for a lane the chunk gave
 * no rows (it commits nothing).  The reading figures of a chunk (rows read,
 * rejected while reading, deduplicated) are on the row of its first lane
 * with rows (lane 0 when none has; earlier versions put them on lane 0
 * always, and wrote a row for every lane).
 * {lane} and {lanes} are the column names, or 0 and 1 when a dry run reads
 * a ledger written before lanes existed (which it must not alter).
 *
 * An entry holds only for the table it was written for: each file row
 * records the table's oid and storage (SQL_TABLE_IDENTITY) as they were
 * when the file was started, before any of its chunks.  TRUNCATE, VACUUM
 * FULL and CLUSTER give a table new storage, and storage is never given
 * back, so any of them after that moment, like DROP and CREATE, leaves the
 * entry not matching the table for good: such a file is loaded again.
 * {table_oid} and {table_storage} are the column names, or NULL when a
 * dry run reads a ledger written before they existed.
 */
/* The ledger's version (ledger_migrations.h), $1 the chunk table, $2 the file
 * table: does it exist, and for each migration in the list's order, has it
 * the column that migration added?  sql_ledger_exists() writes it. */
static const char SQL_LEDGER_EXISTS_HEAD[] = "SELECT to_regclass($1) IS NOT NULL";
static const char SQL_LEDGER_HAS_COLUMN[] =
    ","
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass({rel})"
    "                  AND attname = '{column}' AND NOT attisdropped)";

/* The last column: may this role read both tables (a dry run by a role
 * that may only read the target may not read the ledger)? */
static const char SQL_LEDGER_READABLE[] =
    ", coalesce(has_table_privilege(to_regclass($1), 'SELECT')"
    "           AND has_table_privilege(to_regclass($2), 'SELECT'), false)";

bool sql_ledger_exists(buf *out)
{
    static const struct {
        bool on_chunk;
        const char *column;
    } probes[] = {
#define LEDGER_PROBE(id, on_chunk, column, sql) {on_chunk, column},
        LEDGER_MIGRATIONS(LEDGER_PROBE)
#undef LEDGER_PROBE
    };
    static const char *const names[] = {"rel", "column"};
    bool ok = buf_append_str(out, SQL_LEDGER_EXISTS_HEAD);
    for (size_t i = 0; ok && i < sizeof probes / sizeof probes[0]; i++) {
        const char *vals[] = {probes[i].on_chunk ? "$1" : "$2", probes[i].column};
        ok = sql_render(out, SQL_LEDGER_HAS_COLUMN, 2, names, vals);
    }
    return ok && buf_append_str(out, SQL_LEDGER_READABLE);
}

const char SQL_LEDGER_CREATE[] =
    "SELECT pg_advisory_xact_lock(" LOCK_LEDGER_CREATE ");"
    "CREATE TABLE IF NOT EXISTS {ledger} ("
    "  target       text        NOT NULL,"
    "  digest       text        NOT NULL,"
    "  size_bytes   bigint      NOT NULL,"
    "  file_name    text        NOT NULL,"
    "  chunk_rows   integer     NOT NULL,"
    "  lanes        integer     NOT NULL DEFAULT 1,"
    "  status       text        NOT NULL CHECK (status IN ('loading', 'completed')),"
    "  chunks       bigint      NOT NULL DEFAULT 0,"
    "  started_at   timestamptz NOT NULL DEFAULT now(),"
    "  updated_at   timestamptz NOT NULL DEFAULT now(),"
    "  completed_at timestamptz,"
    "  table_oid    oid,"
    "  table_storage text,"
    "  loader_host  text,"
    "  loader_pid   integer,"
    "  params       text,"
    "  prior_xids   bigint[],"
    "  content_sha256 text,"
    "  file_name_bytes text,"
    "  PRIMARY KEY (target, digest)"
    ");"
    "CREATE TABLE IF NOT EXISTS {ledger_chunk} ("
    "  target            text        NOT NULL,"
    "  digest            text        NOT NULL,"
    "  chunk_no          bigint      NOT NULL,"
    "  lane              integer     NOT NULL DEFAULT 0,"
    "  rows_read         bigint      NOT NULL,"
    "  rows_rejected     bigint      NOT NULL,"
    "  rows_deduplicated bigint      NOT NULL,"
    "  inserted          bigint      NOT NULL,"
    "  updated           bigint      NOT NULL,"
    "  unchanged         bigint      NOT NULL,"
    "  stale             bigint      NOT NULL,"
    "  existing          bigint      NOT NULL,"
    "  committed_at      timestamptz NOT NULL DEFAULT now(),"
    "  changes           text,"
    "  xids              bigint[],"
    "  CONSTRAINT idemload_ledger_chunk_pkey PRIMARY KEY (target, digest, chunk_no, lane),"
    "  FOREIGN KEY (target, digest) REFERENCES {ledger} ON DELETE CASCADE"
    ")";

/* A ledger written before lanes: every chunk was one lane (run in the
 * transaction of SQL_LEDGER_CREATE, only when the lane column is missing). */
const char SQL_LEDGER_ADD_LANES[] =
    "ALTER TABLE {ledger} ADD COLUMN IF NOT EXISTS lanes integer NOT NULL DEFAULT 1;"
    "ALTER TABLE {ledger_chunk} ADD COLUMN IF NOT EXISTS lane integer NOT NULL DEFAULT 0,"
    "  DROP CONSTRAINT IF EXISTS idemload_ledger_chunk_pkey,"
    "  ADD CONSTRAINT idemload_ledger_chunk_pkey PRIMARY KEY (target, digest, chunk_no, lane)";

/* A ledger written before the table's identity was recorded (run in the
 * transaction of SQL_LEDGER_CREATE, only when the column is missing): its
 * entries get NULL, which the loader takes as "not known to match". */
const char SQL_LEDGER_ADD_IDENTITY[] =
    "ALTER TABLE {ledger} ADD COLUMN IF NOT EXISTS table_oid oid,"
    "  ADD COLUMN IF NOT EXISTS table_storage text";

/* A ledger written before it recorded who loads each file (run in the
 * transaction of SQL_LEDGER_CREATE, only when the column is missing). */
const char SQL_LEDGER_ADD_LOADER[] =
    "ALTER TABLE {ledger} ADD COLUMN IF NOT EXISTS loader_host text,"
    "  ADD COLUMN IF NOT EXISTS loader_pid integer";

/* A ledger written before it kept the --changes lines of unfinished files
 * (run in the transaction of SQL_LEDGER_CREATE, only when the column is
 * missing; output/changes.h says why they are kept). */
const char SQL_LEDGER_ADD_CHANGES[] =
    "ALTER TABLE {ledger_chunk} ADD COLUMN IF NOT EXISTS changes text";

/* $1 target, $2 digest, $3 chunk_no: the --changes lines each lane of that
 * chunk committed (NULL: committed by a run without --changes). */
const char SQL_LEDGER_CHANGES[] =
    "SELECT {lane}, changes FROM {ledger_chunk} WHERE target = $1 AND digest = $2 "
    "AND chunk_no = $3 ORDER BY 1";

/* A ledger written before it recorded the parameters that shaped each
 * file's rows (run in the transaction of SQL_LEDGER_CREATE, only when the
 * column is missing): its entries get NULL, which the loader takes as "not
 * known to match" (ledger.c: such a file is loaded again, and the summary
 * says why). */
const char SQL_LEDGER_ADD_PARAMS[] =
    "ALTER TABLE {ledger} ADD COLUMN IF NOT EXISTS params text";

/* A ledger written before it recorded the transactions that wrote each
 * chunk (--supersede): the columns, NULL for the chunks it holds, whose
 * rows --supersede then cannot tell apart (it replaces none of them). */
const char SQL_LEDGER_ADD_XIDS[] =
    "ALTER TABLE {ledger_chunk} ADD COLUMN IF NOT EXISTS xids bigint[];"
    "ALTER TABLE {ledger} ADD COLUMN IF NOT EXISTS prior_xids bigint[]";

/* A ledger written before it kept the SHA-256 of an object's bytes (an
 * object's digest names its bucket, key, size and ETag; its bytes are
 * hashed while they stream): NULL for every entry it holds, and for files,
 * whose digest is already that of their bytes. */
const char SQL_LEDGER_ADD_CONTENT[] =
    "ALTER TABLE {ledger} ADD COLUMN IF NOT EXISTS content_sha256 text";
/* A ledger written before it kept a file name's bytes: the column (the
 * base64 of a name that file_name holds escaped; NULL when file_name is
 * the name itself). */
const char SQL_LEDGER_ADD_NAME_BYTES[] =
    "ALTER TABLE {ledger} ADD COLUMN IF NOT EXISTS file_name_bytes text";

/* $1 target, $2 digest: before an entry is restarted with other
 * parameters, the transactions of its chunks join the entry's prior_xids:
 * the versions those wrote are what --supersede may replace. */
const char SQL_LEDGER_KEEP_PRIOR[] =
    "UPDATE {ledger} l SET prior_xids = ARRAY("
    "    SELECT x FROM (SELECT unnest(l.prior_xids) AS x"
    "                   UNION SELECT unnest(c.xids) FROM {ledger_chunk} c"
    "                    WHERE c.target = l.target AND c.digest = l.digest) u"
    "     WHERE x IS NOT NULL ORDER BY x) "
    "WHERE l.target = $1 AND l.digest = $2";

/* $1 target, $2 digest: the entry's prior transactions, an int8[] literal. */
const char SQL_LEDGER_PRIOR[] =
    "SELECT coalesce(prior_xids, ARRAY[]::bigint[])::text FROM {ledger}"
    " WHERE target = $1 AND digest = $2";

/* $1 the target's quoted name (the merge writes into whatever table the
 * name denotes now): what identifies its contents, as (oid, storage).
 * A table's storage is its relfilenode; a partitioned table has none of its
 * own, so the list of its leaf partitions with theirs plays that part (a
 * partition attached, detached, truncated or rewritten changes it).  No row
 * when the table is gone. */
const char SQL_TABLE_IDENTITY[] =
    "SELECT c.oid::text,"
    "       CASE WHEN c.relkind = 'p' THEN 'partitions:' || coalesce("
    "         (SELECT string_agg(p.relid::oid::text || '/' ||"
    "                            coalesce(pg_relation_filenode(p.relid)::text, '-'), ','"
    "                            ORDER BY p.relid::oid)"
    "            FROM pg_partition_tree(c.oid) p WHERE p.isleaf), '')"
    "       ELSE pg_relation_filenode(c.oid)::text END "
    "FROM pg_class c WHERE c.oid = to_regclass($1)";

/* $1 target, $2 digest: the entry, the identity of the table it was
 * started for, and how many chunk rows it has. */
const char SQL_LEDGER_LOOKUP[] =
    "SELECT l.status, l.chunks, l.chunk_rows, {lanes}, {table_oid}::text, {table_storage},"
    "       (SELECT count(*) FROM {ledger_chunk} c"
    "         WHERE c.target = l.target AND c.digest = l.digest), {params} "
    "FROM {ledger} l WHERE l.target = $1 AND l.digest = $2";

/* $1 target, $2 digest: how far each lane got. */
const char SQL_LEDGER_LANES[] =
    "SELECT {lane}, max(chunk_no) FROM {ledger_chunk} WHERE target = $1 AND digest = $2 "
    "GROUP BY 1";

/* $1 target, $2 digest, $3 size, $4 name, $5 chunk_rows, $6 lanes, $7 and
 * $8 the table's oid and storage (SQL_TABLE_IDENTITY), read before this,
 * $9 and $10 who loads it (host name, process id), $11 the parameters
 * that shape its rows (params.h).
 * Starts (or restarts from zero) a file's entry. */
const char SQL_LEDGER_START[] =
    "WITH gone AS (DELETE FROM {ledger_chunk} WHERE target = $1 AND digest = $2) "
    "INSERT INTO {ledger} (target, digest, size_bytes, file_name, chunk_rows, lanes, status, "
    "                      chunks, table_oid, table_storage, loader_host, loader_pid, params,"
    "                      file_name_bytes) "
    "VALUES ($1, $2, $3, $4, $5, $6, 'loading', 0, $7, $8, $9, $10, $11, $12) "
    "ON CONFLICT (target, digest) DO UPDATE SET size_bytes = EXCLUDED.size_bytes,"
    "  file_name = EXCLUDED.file_name, file_name_bytes = EXCLUDED.file_name_bytes,"
    "  chunk_rows = EXCLUDED.chunk_rows,"
    "  lanes = EXCLUDED.lanes, status = 'loading',"
    "  chunks = 0, started_at = now(), updated_at = now(), completed_at = NULL,"
    "  table_oid = EXCLUDED.table_oid, table_storage = EXCLUDED.table_storage,"
    "  loader_host = EXCLUDED.loader_host, loader_pid = EXCLUDED.loader_pid,"
    "  params = EXCLUDED.params";

/* $1 target, $2 digest: who the ledger says loads the file (host, pid). */
const char SQL_LEDGER_HOLDER[] =
    "SELECT loader_host, loader_pid FROM {ledger} WHERE target = $1 AND digest = $2";

/* $1 target, $2 digest, $3 host, $4 pid: this process resumes the file. */
const char SQL_LEDGER_CLAIM[] =
    "UPDATE {ledger} SET loader_host = $3, loader_pid = $4, updated_at = now() "
    "WHERE target = $1 AND digest = $2";

/* $1 target, $2 digest, $3 chunk_no, $4 lane, $5..$12 the figures, $13 the
 * lane's --changes lines (NULL without --changes), $14 the lane's
 * subtransactions that wrote rows (an int8[] literal): with the
 * transaction's own xid they name every row version the lane wrote (the
 * versions' xmin), for --supersede.  The lane
 * that carries the chunk's rows read ($5 > 0: one lane per chunk, the first
 * with rows) also moves the file's progress (the other lanes leave the file
 * row alone, so lanes never wait for each other's locks). */
const char SQL_LEDGER_CHUNK[] =
    "WITH f AS (UPDATE {ledger} SET chunks = greatest(chunks, $3), updated_at = now() "
    "            WHERE target = $1 AND digest = $2 AND $5::bigint > 0) "
    "INSERT INTO {ledger_chunk} (target, digest, chunk_no, lane, rows_read, rows_rejected, "
    "  rows_deduplicated, inserted, updated, unchanged, stale, existing, changes, xids) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,"
    "        array_append($14::bigint[], pg_current_xact_id()::text::bigint % 4294967296))";

/* $1 target, $2 digest, $3 chunk_no, $4 lane: that lane's committed figures. */
const char SQL_LEDGER_LANE_FIGURES[] =
    "SELECT rows_read, rows_rejected, rows_deduplicated, inserted, updated, unchanged, stale,"
    "       existing FROM {ledger_chunk}"
    " WHERE target = $1 AND digest = $2 AND chunk_no = $3 AND {lane} = $4";

/* $1 target, $2 digest, $3 the number of chunks, $4 the SHA-256 of an
 * object's bytes (NULL for a file).  The --changes lines the
 * chunk rows kept are dropped: the file holds them now (changes_sync). */
const char SQL_LEDGER_COMPLETE[] =
    "WITH lines AS (UPDATE {ledger_chunk} SET changes = NULL"
    "               WHERE target = $1 AND digest = $2 AND changes IS NOT NULL) "
    "UPDATE {ledger} SET status = 'completed', chunks = $3, completed_at = now(), "
    "updated_at = now(), content_sha256 = $4 WHERE target = $1 AND digest = $2";

/* $1 target, $2 digest: a file that ended before any lane of it committed
 * (refused by its own count or header check, or failed at its first
 * chunk) leaves no entry: there is nothing to resume, and `status` must
 * not call it interrupted. */
const char SQL_LEDGER_FORGET[] =
    "DELETE FROM {ledger} l WHERE l.target = $1 AND l.digest = $2 AND l.status = 'loading'"
    "  AND NOT EXISTS (SELECT 1 FROM {ledger_chunk} c"
    "                   WHERE c.target = l.target AND c.digest = l.digest)";

/* $1 target, $2 digest, $3 up to chunk: the figures committed so far. */
const char SQL_LEDGER_SUMS[] =
    "SELECT coalesce(sum(rows_read), 0), coalesce(sum(rows_rejected), 0),"
    "       coalesce(sum(rows_deduplicated), 0), coalesce(sum(inserted), 0),"
    "       coalesce(sum(updated), 0), coalesce(sum(unchanged), 0), coalesce(sum(stale), 0),"
    "       coalesce(sum(existing), 0), count(DISTINCT chunk_no) "
    "FROM {ledger_chunk} WHERE target = $1 AND digest = $2 AND chunk_no <= $3";

/* One file at a time per target: the advisory lock LOCK_FILE on (target,
 * digest). */
const char SQL_FILE_LOCK_TRY[] = "SELECT pg_try_advisory_lock(" LOCK_FILE ")";
const char SQL_FILE_LOCK[] = "SELECT pg_advisory_lock(" LOCK_FILE ")";
const char SQL_FILE_UNLOCK[] = "SELECT pg_advisory_unlock(" LOCK_FILE ")";

/* idemload init, in its transaction before creating anything. */
const char SQL_INIT_LOCK[] = "SELECT pg_advisory_xact_lock(" LOCK_INIT ")";

/*
 * idemload status: $1 target.  Every file of the ledger with its figures
 * (summed over its chunk rows), its loader, its times (UTC, ISO 8601), and
 * the backend pid of the session holding its advisory lock (the key of
 * SQL_FILE_LOCK: a bigint lock shows in pg_locks as classid = high 32 bits,
 * objid = low 32 bits, objsubid 1), NULL when none holds it.
 * The chunks are those a rerun takes as whole (ledger.c, plan_resume): up
 * to the last one any lane committed, less that one when fewer lanes than
 * the file's committed it (a lane the chunk gave no rows writes no row: it
 * is read again, and its committed lanes taken from the ledger); the
 * figures are those whole chunks'.  Then how many lanes of the next chunk
 * committed (NULL: none is partly committed) and the file's lanes.
 * {loader_host}/{loader_pid}: the columns, or NULL for an older ledger;
 * {lanes}: the column, or 1 for a ledger written before lanes;
 * {name_bytes}: file_name_bytes, or NULL for an older ledger.
 */
const char SQL_STATUS[] =
    "SELECT l.file_name, l.digest, l.size_bytes, l.status, {loader_host}, {loader_pid}::text,"
    "       w.whole, coalesce(c.rows_read, 0), coalesce(c.rows_rejected, 0),"
    "       coalesce(c.rows_deduplicated, 0), coalesce(c.inserted, 0), coalesce(c.updated, 0),"
    "       coalesce(c.unchanged, 0), coalesce(c.stale, 0), coalesce(c.existing, 0),"
    "       to_char(l.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    "       to_char(l.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    "       to_char(l.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    "       (SELECT k.pid FROM pg_locks k"
    "         WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 1"
    "           AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    "           AND k.classid = ((hashtextextended(l.target || ':' || l.digest, 0) >> 32)"
    "                            & 4294967295)::oid"
    "           AND k.objid = (hashtextextended(l.target || ':' || l.digest, 0)"
    "                          & 4294967295)::oid"
    "         LIMIT 1),"
    "       extract(epoch FROM now() - l.updated_at)::bigint,"
    "       CASE WHEN t.top > w.whole THEN t.top_lanes END, {lanes}, {name_bytes} "
    "FROM {ledger} l "
    "LEFT JOIN LATERAL ("
    "  SELECT chunk_no AS top, count(*) AS top_lanes"
    "    FROM {ledger_chunk} ch WHERE ch.target = l.target AND ch.digest = l.digest"
    "   GROUP BY chunk_no ORDER BY chunk_no DESC LIMIT 1) t ON true "
    "CROSS JOIN LATERAL ("
    "  SELECT CASE WHEN l.status = 'completed' OR t.top IS NULL THEN l.chunks"
    "              WHEN t.top_lanes >= {lanes} THEN t.top ELSE t.top - 1 END AS whole) w "
    "LEFT JOIN LATERAL ("
    "  SELECT sum(rows_read) AS rows_read, sum(rows_rejected) AS rows_rejected,"
    "         sum(rows_deduplicated) AS rows_deduplicated, sum(inserted) AS inserted,"
    "         sum(updated) AS updated, sum(unchanged) AS unchanged, sum(stale) AS stale,"
    "         sum(existing) AS existing"
    "    FROM {ledger_chunk} ch WHERE ch.target = l.target AND ch.digest = l.digest"
    "     AND ch.chunk_no <= w.whole) c ON true "
    "WHERE l.target = $1 "
    "ORDER BY l.started_at, l.file_name";

/* idemload init: the default profile of SPEC.md. */
const char SQL_INIT_TABLE[] =
    "CREATE TABLE IF NOT EXISTS {table} ("
    "  id             BIGSERIAL PRIMARY KEY,"
    INIT_COLUMN_DEFS
    "  handled_at     TIMESTAMPTZ,"
    "  deleted_at     TIMESTAMPTZ"
    ")";

/* init --distributed: the same table for Citus, whose unique indexes must
 * hold the distribution column, so the primary key is (tenant_id, id). */
const char SQL_INIT_TABLE_DISTRIBUTED[] =
    "CREATE TABLE IF NOT EXISTS {table} ("
    "  id             BIGSERIAL,"
    INIT_COLUMN_DEFS
    "  handled_at     TIMESTAMPTZ,"
    "  deleted_at     TIMESTAMPTZ,"
    "  PRIMARY KEY (tenant_id, id)"
    ")";

/* $1 the table (quoted name), $2 the shard count (NULL: Citus's default). */
const char SQL_DISTRIBUTE[] =
    "SELECT create_distributed_table($1, 'tenant_id',"
    "                                shard_count => coalesce($2::int,"
    "                                  current_setting('citus.shard_count')::int))";

/*
 * The unique index that makes loads idempotent, after "CREATE UNIQUE INDEX
 * [IF NOT EXISTS | CONCURRENTLY] {index} ": the one place its shape is
 * written (init and create-index build it; target.c judges an index by it).
 */
#define KEY_INDEX_TAIL "ON {table} ({key}) WHERE deleted_at IS NULL"
const char SQL_KEY_INDEX_TAIL[] = KEY_INDEX_TAIL;

const char SQL_INIT_INDEX[] = "CREATE UNIQUE INDEX IF NOT EXISTS {index} " KEY_INDEX_TAIL;

/*
 * The table safety tools (check, dedupe, create-index).  {active} is the
 * active-row predicate, "(deleted_at IS NULL)".  A key with a NULL part is
 * never a duplicate: a unique index does not see it as one either, and
 * check counts such rows apart.
 */

/* Duplicate active keys, largest groups first, with the number of
 * duplicate keys and of surplus rows over all of them (window over the
 * groups, taken before the LIMIT); $1 limit (NULL: all).  A row
 * constructor IS NOT NULL when every one of its fields is. */
const char SQL_DUPLICATES[] =
    "SELECT {key}, count(*), min(id), max(id),"
    "       count(*) OVER (), sum(count(*) - 1) OVER () "
    "  FROM {table}"
    " WHERE {active} AND ({key}) IS NOT NULL"
    " GROUP BY {key}"
    " HAVING count(*) > 1"
    " ORDER BY count(*) DESC, min(id)"
    " LIMIT $1::bigint";

/* Number of duplicate active keys, of surplus rows, and of active rows
 * with a NULL in the key, in one pass. */
const char SQL_DUPLICATE_COUNT[] =
    "SELECT count(*) FILTER (WHERE n > 1 AND NOT null_key),"
    "       coalesce(sum(n - 1) FILTER (WHERE n > 1 AND NOT null_key), 0),"
    "       coalesce(sum(n) FILTER (WHERE null_key), 0)"
    "  FROM (SELECT count(*) AS n, NOT (({key}) IS NOT NULL) AS null_key"
    "          FROM {table} WHERE {active}"
    "         GROUP BY {key}) g";

/* $1 table oid: key columns that allow NULL. */
const char SQL_NULLABLE_KEYS[] =
    "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = $1::oid AND NOT a.attnotnull "
    "AND NOT a.attisdropped AND a.attnum > 0 "
    "AND a.attname = ANY (string_to_array('{key}', ', ')) "
    "ORDER BY a.attnum";

/*
 * The duplicate keys dedupe --apply would refuse without --include-final:
 * a row other than the earliest (received_at, then id) holds a final
 * status ($1).  Only keys with some final row are ranked, so the sort
 * stays small.  Returns the key, the number of such rows and their ids.
 * ({active} names no table: only {table} has deleted_at.)
 */
const char SQL_DEDUPE_FINAL_BLOCKED[] =
    "WITH dup AS ("
    "  SELECT {key}"
    "    FROM {table}"
    "   WHERE {active} AND ({key}) IS NOT NULL"
    "   GROUP BY {key}"
    "  HAVING count(*) > 1 AND bool_or(status = ANY ($1::smallint[]))), "
    "ranked AS ("
    "  SELECT t.id, t.status, {key},"
    "         row_number() OVER (PARTITION BY {key} ORDER BY t.received_at, t.id) AS rn"
    "    FROM {table} t JOIN dup d USING ({key})"
    "   WHERE {active}) "
    "SELECT {key}, count(*), string_agg(id::text, ', ' ORDER BY id)"
    "  FROM ranked WHERE rn > 1 AND status = ANY ($1::smallint[])"
    " GROUP BY {key}"
    " ORDER BY {key}";

/*
 * One batch of dedupe --apply, run as one statement (so one transaction):
 * the next $1 duplicate keys in key order after the key $4..$7 (all NULL
 * for the first batch).  Their active rows are locked, then ranked by
 * received_at, then id; every row but the first is soft-deleted, except
 * in keys where such a row holds a final status ($2) and not $3
 * (--include-final): those keys are left whole.  Ranking after the lock
 * means a row changed meanwhile by another session is judged on its
 * committed version.  The UPDATE finds its rows by id, so it costs no
 * further scan.
 *
 * One row per ranked row: kind 'keep' (the earliest), 'delete' (soft-
 * deleted now) or 'refuse' (left alone), in key then rank order; plus one
 * row of kind 'last' holding the batch's last key (the keys in key order,
 * all but the last skipped), where the next batch starts.  No 'last' row:
 * nothing left to do.
 */
/* The batch, with lock after the rows it locks and live after the
 * soft-delete's condition: one text for the two forms below. */
#define SQL_DEDUPE_BATCH_OF(lock, live) \
    "WITH keys AS (" \
    "  SELECT {key}" \
    "    FROM {table}" \
    "   WHERE {active} AND ({key}) IS NOT NULL" \
    "     AND ($4::bigint IS NULL OR ({key}) > ($4::bigint, $5::text, $6::text, $7::text))" \
    "   GROUP BY {key}" \
    "  HAVING count(*) > 1" \
    "   ORDER BY {key}" \
    "   LIMIT $1::bigint), " \
    "locked AS (" \
    "  SELECT t.id, {key}, t.status, t.received_at" \
    "    FROM {table} t JOIN keys k USING ({key})" \
    "   WHERE {active}" \
    "    " lock "), " \
    "ranked AS (" \
    "  SELECT l.*, row_number() OVER (PARTITION BY {key} ORDER BY received_at, id) AS rn" \
    "    FROM locked l), " \
    "refused AS (" \
    "  SELECT DISTINCT {key}, true AS refused" \
    "    FROM ranked" \
    "   WHERE rn > 1 AND status = ANY ($2::smallint[]) AND NOT $3::boolean), " \
    "doomed AS (" \
    "  SELECT r.id FROM ranked r LEFT JOIN refused f USING ({key})" \
    "   WHERE r.rn > 1 AND f.refused IS NULL), " \
    "gone AS (" \
    "  UPDATE {table} u SET deleted_at = now()" \
    "   WHERE u.id = ANY (ARRAY(SELECT id FROM doomed))" live \
    "  RETURNING u.id) " \
    "SELECT CASE WHEN r.rn = 1 THEN 'keep' WHEN g.id IS NOT NULL THEN 'delete'" \
    "            ELSE 'refuse' END AS kind," \
    "       {key}, r.id, r.status, r.rn" \
    "  FROM ranked r LEFT JOIN gone g ON g.id = r.id " \
    "UNION ALL " \
    "SELECT 'last', {key}, NULL, NULL, 0" \
    "  FROM (SELECT {key} FROM keys ORDER BY {key}" \
    "        OFFSET (SELECT greatest(count(*) - 1, 0) FROM keys) LIMIT 1) l " \
    "ORDER BY 2, 3, 4, 5, 8"
const char SQL_DEDUPE_BATCH[] = SQL_DEDUPE_BATCH_OF(" FOR UPDATE OF t", "");
/* On a Citus-distributed table: without the row locks (Citus runs no FOR
 * UPDATE across shards), the soft-delete then touching only rows still
 * active, so two dedupes at once never count a row twice.  (No import runs
 * meanwhile: a table with duplicate keys has no unique index, and import
 * refuses such a table.) */
const char SQL_DEDUPE_BATCH_DISTRIBUTED[] =
    SQL_DEDUPE_BATCH_OF("", " AND u.deleted_at IS NULL");

/* {index}: the bare quoted name (an index lives in its table's schema). */
const char SQL_CREATE_INDEX[] = "CREATE UNIQUE INDEX CONCURRENTLY {index} " KEY_INDEX_TAIL;

const char SQL_DROP_INDEX[] = "DROP INDEX CONCURRENTLY IF EXISTS {schema}.{index}";

/* create-index on a distributed table: the progress of every index build
 * running on the workers now (each shard's), summed; the columns of
 * SQL_INDEX_PROGRESS.  The phase is the least advanced shard's (PostgreSQL
 * 15's phases in their order). */
const char SQL_INDEX_PROGRESS_WORKERS[] =
    "WITH w AS ("
    "  SELECT (jsonb_array_elements(coalesce(nullif(result, ''), '[]')::jsonb)) AS p"
    "    FROM run_command_on_workers($q$SELECT coalesce(json_agg(json_build_object("
    "           'phase', phase, 'blocks_done', blocks_done, 'blocks_total', blocks_total,"
    "           'tuples_done', tuples_done, 'tuples_total', tuples_total,"
    "           'lockers_done', lockers_done, 'lockers_total', lockers_total)), '[]')"
    "           FROM pg_stat_progress_create_index$q$)"
    "   WHERE success) "
    "SELECT (array_agg(p->>'phase' ORDER BY array_position(ARRAY['initializing',"
    "          'waiting for writers before build', 'building index',"
    "          'waiting for writers before validation', 'index validation: scanning index',"
    "          'index validation: sorting tuples', 'index validation: scanning table',"
    "          'waiting for old snapshots', 'waiting for readers before marking dead',"
    "          'waiting for readers before dropping'], p->>'phase') NULLS LAST))[1],"
    "       sum((p->>'blocks_done')::bigint), sum((p->>'blocks_total')::bigint),"
    "       sum((p->>'tuples_done')::bigint), sum((p->>'tuples_total')::bigint),"
    "       sum((p->>'lockers_done')::bigint), sum((p->>'lockers_total')::bigint), NULL::int "
    "  FROM w HAVING count(*) > 0";

/* $1: pid of the building session. */
const char SQL_INDEX_PROGRESS[] =
    "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total,"
    "       lockers_done, lockers_total, current_locker_pid "
    "FROM pg_stat_progress_create_index WHERE pid = $1::int";

/*
 * $1 schema, $2 name, $3 table oid: the relation of that name, if any:
 * is it an index, of this table, valid (valid, ready and live), ready,
 * and the pid of a session building it right now (NULL: none).
 */
const char SQL_INDEX_STATE[] =
    "SELECT c.relkind IN ('i', 'I'), coalesce(i.indrelid = $3::oid, false),"
    "       coalesce(i.indisvalid AND i.indisready AND i.indislive, false),"
    "       coalesce(i.indisready, false),"
    "       (SELECT p.pid FROM pg_stat_progress_create_index p"
    "         WHERE p.index_relid = c.oid LIMIT 1) "
    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "LEFT JOIN pg_index i ON i.indexrelid = c.oid "
    "WHERE n.nspname = $1 AND c.relname = $2";

bool sql_render(buf *out, const char *tmpl, int n, const char *const *names,
                const char *const *values)
{
    const char *p = tmpl;
    while (*p) {
        const char *open = strchr(p, '{');
        if (!open)
            return buf_append_str(out, p);
        if (!buf_append(out, p, (size_t)(open - p)))
            return false;
        const char *close = strchr(open, '}');
        if (!close)
            return false;
        size_t len = (size_t)(close - open - 1);
        int k;
        for (k = 0; k < n; k++)
            if (strlen(names[k]) == len && strncmp(names[k], open + 1, len) == 0)
                break;
        const char *value = k < n ? values[k] : NULL;
        if (!value && len == 3 && strncmp(open + 1, "key", 3) == 0)
            value = KEY_COLUMNS;
        if (!value || !buf_append_str(out, value))
            return false;
        p = close + 1;
    }
    return true;
}
