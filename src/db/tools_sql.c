/*
 * tools_sql.c - the SQL of the tools beside import (see sql.h): one load
 * of a file at a time, `init`, `status`, `check`, `create-index` and
 * `dedupe`.
 */
#include "db/sql.h"

#include <string.h>

#include "db/sql_locks.h"

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
