/*
 * sql.c - the SQL of idemload (see sql.h).
 */
#include "sql.h"

#include <string.h>

/* $1: the table as typed ([schema.]name, quoted as needed). */
const char SQL_RESOLVE_TABLE[] =
    "SELECT n.nspname, c.relname, c.oid::text "
    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.oid = to_regclass($1) AND c.relkind IN ('r', 'p')";

/* $1: table oid. */
const char SQL_TABLE_COLUMNS[] =
    "SELECT a.attname, a.attnotnull, format_type(a.atttypid, a.atttypmod) "
    "FROM pg_attribute a WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped "
    "ORDER BY a.attnum";

/* $1: table oid.  One row per unique index, with its key columns in order. */
const char SQL_UNIQUE_INDEXES[] =
    "SELECT ci.relname, i.indisvalid, i.indisready, i.indislive, "
    "       pg_get_expr(i.indpred, i.indrelid), "
    "       (SELECT string_agg(a.attname, ',' ORDER BY k.n) "
    "          FROM unnest(i.indkey[0:i.indnkeyatts - 1]) WITH ORDINALITY AS k(attnum, n) "
    "          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum), "
    "       i.indexprs IS NOT NULL, i.indnkeyatts, "
    "       coalesce((to_jsonb(i) ->> 'indnullsnotdistinct')::boolean, false) "
    "FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid "
    "WHERE i.indrelid = $1::oid AND i.indisunique "
    "ORDER BY ci.relname";

/* The staging table: a temporary table of this session.  Types are the
 * loosest the input can have, so a value the target refuses fails in the
 * merge, where one row can be isolated, not in COPY. */
const char SQL_CREATE_STAGE[] =
    "CREATE TEMP TABLE IF NOT EXISTS idemload_stage ("
    "  ord integer NOT NULL,"
    "  tenant_id bigint NOT NULL,"
    "  channel text NOT NULL,"
    "  out_trade_no text NOT NULL,"
    "  callback_type text NOT NULL,"
    "  status smallint NOT NULL,"
    "  payload text NOT NULL,"
    "  received_at timestamptz NOT NULL"
    ")";

const char SQL_TRUNCATE_STAGE[] = "TRUNCATE idemload_stage";

const char SQL_COPY_STAGE[] =
    "COPY idemload_stage (ord, tenant_id, channel, out_trade_no, callback_type, status, "
    "payload, received_at) FROM STDIN";

/*
 * The merge of SPEC.md, for staged rows $1..$2 (ord), final statuses $3.
 * Rows come in business-key order (the client sorts them), so concurrent
 * loaders lock keys in the same order.  A row is written only when the
 * incoming version is not older and changes something; a final status is
 * kept.  xmax = 0 tells an inserted row from an updated one.
 */
const char SQL_MERGE_UPDATE[] =
    "WITH merged AS ("
    "  INSERT INTO {table} AS t (tenant_id, channel, out_trade_no, callback_type, status, "
    "                            payload, received_at)"
    "  SELECT s.tenant_id, s.channel, s.out_trade_no, s.callback_type, s.status, "
    "         s.payload::jsonb, s.received_at"
    "    FROM idemload_stage s"
    "   WHERE s.ord BETWEEN $1::int AND $2::int"
    "  ON CONFLICT {conflict}"
    "  DO UPDATE SET payload = EXCLUDED.payload,"
    "                received_at = EXCLUDED.received_at,"
    "                status = CASE WHEN t.status = ANY ($3::smallint[]) THEN t.status"
    "                              ELSE EXCLUDED.status END"
    "   WHERE t.received_at <= EXCLUDED.received_at"
    "     AND (t.payload, t.received_at, t.status) IS DISTINCT FROM"
    "         (EXCLUDED.payload, EXCLUDED.received_at,"
    "          CASE WHEN t.status = ANY ($3::smallint[]) THEN t.status ELSE EXCLUDED.status END)"
    "  RETURNING (t.xmax = 0) AS inserted"
    ") "
    "SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM merged";

/* --on-conflict nothing: the first write wins.  $1..$2 as above. */
const char SQL_MERGE_NOTHING[] =
    "WITH merged AS ("
    "  INSERT INTO {table} AS t (tenant_id, channel, out_trade_no, callback_type, status, "
    "                            payload, received_at)"
    "  SELECT s.tenant_id, s.channel, s.out_trade_no, s.callback_type, s.status, "
    "         s.payload::jsonb, s.received_at"
    "    FROM idemload_stage s"
    "   WHERE s.ord BETWEEN $1::int AND $2::int"
    "  ON CONFLICT {conflict} DO NOTHING"
    "  RETURNING 1"
    ") "
    "SELECT count(*), 0 FROM merged";

/*
 * After the merge, in the same transaction: staged rows $1..$2 whose active
 * row is newer are stale; the others that were not written are unchanged.
 * The merge has locked every conflicting row, so this count is exact.
 */
const char SQL_COUNT_STALE[] =
    "SELECT count(*) FROM idemload_stage s JOIN {table} t"
    "  ON t.tenant_id = s.tenant_id AND t.channel = s.channel"
    " AND t.out_trade_no = s.out_trade_no AND t.callback_type = s.callback_type"
    " AND {active}"
    " WHERE s.ord BETWEEN $1::int AND $2::int AND t.received_at > s.received_at";

/* The ledger: files by content digest, and their committed chunks. */
const char SQL_LEDGER_EXISTS[] =
    "SELECT to_regclass($1) IS NOT NULL";

const char SQL_LEDGER_CREATE[] =
    "SELECT pg_advisory_xact_lock(7350323339418284032);"
    "CREATE TABLE IF NOT EXISTS {ledger} ("
    "  target       text        NOT NULL,"
    "  digest       text        NOT NULL,"
    "  size_bytes   bigint      NOT NULL,"
    "  file_name    text        NOT NULL,"
    "  chunk_rows   integer     NOT NULL,"
    "  status       text        NOT NULL CHECK (status IN ('loading', 'completed')),"
    "  chunks       bigint      NOT NULL DEFAULT 0,"
    "  started_at   timestamptz NOT NULL DEFAULT now(),"
    "  updated_at   timestamptz NOT NULL DEFAULT now(),"
    "  completed_at timestamptz,"
    "  PRIMARY KEY (target, digest)"
    ");"
    "CREATE TABLE IF NOT EXISTS {ledger_chunk} ("
    "  target            text        NOT NULL,"
    "  digest            text        NOT NULL,"
    "  chunk_no          bigint      NOT NULL,"
    "  rows_read         bigint      NOT NULL,"
    "  rows_rejected     bigint      NOT NULL,"
    "  rows_deduplicated bigint      NOT NULL,"
    "  inserted          bigint      NOT NULL,"
    "  updated           bigint      NOT NULL,"
    "  unchanged         bigint      NOT NULL,"
    "  stale             bigint      NOT NULL,"
    "  existing          bigint      NOT NULL,"
    "  committed_at      timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (target, digest, chunk_no),"
    "  FOREIGN KEY (target, digest) REFERENCES {ledger} ON DELETE CASCADE"
    ")";

/* $1 target, $2 digest. */
const char SQL_LEDGER_LOOKUP[] =
    "SELECT status, chunks, chunk_rows FROM {ledger} WHERE target = $1 AND digest = $2";

/* $1 target, $2 digest, $3 size, $4 name, $5 chunk_rows.  Starts (or
 * restarts from zero) a file's entry. */
const char SQL_LEDGER_START[] =
    "WITH gone AS (DELETE FROM {ledger_chunk} WHERE target = $1 AND digest = $2) "
    "INSERT INTO {ledger} (target, digest, size_bytes, file_name, chunk_rows, status, chunks) "
    "VALUES ($1, $2, $3, $4, $5, 'loading', 0) "
    "ON CONFLICT (target, digest) DO UPDATE SET size_bytes = EXCLUDED.size_bytes,"
    "  file_name = EXCLUDED.file_name, chunk_rows = EXCLUDED.chunk_rows, status = 'loading',"
    "  chunks = 0, started_at = now(), updated_at = now(), completed_at = NULL";

/* $1 target, $2 digest, $3 chunk_no, $4.. the chunk's figures. */
const char SQL_LEDGER_CHUNK[] =
    "WITH f AS (UPDATE {ledger} SET chunks = $3, updated_at = now() "
    "            WHERE target = $1 AND digest = $2) "
    "INSERT INTO {ledger_chunk} (target, digest, chunk_no, rows_read, rows_rejected, "
    "  rows_deduplicated, inserted, updated, unchanged, stale, existing) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

const char SQL_LEDGER_FILE_PROGRESS[] =
    "UPDATE {ledger} SET updated_at = now() WHERE target = $1 AND digest = $2";

/* $1 target, $2 digest. */
const char SQL_LEDGER_COMPLETE[] =
    "UPDATE {ledger} SET status = 'completed', completed_at = now(), updated_at = now() "
    "WHERE target = $1 AND digest = $2";

/* $1 target, $2 digest, $3 up to chunk: the figures committed so far. */
const char SQL_LEDGER_SUMS[] =
    "SELECT coalesce(sum(rows_read), 0), coalesce(sum(rows_rejected), 0),"
    "       coalesce(sum(rows_deduplicated), 0), coalesce(sum(inserted), 0),"
    "       coalesce(sum(updated), 0), coalesce(sum(unchanged), 0), coalesce(sum(stale), 0),"
    "       coalesce(sum(existing), 0), count(*) "
    "FROM {ledger_chunk} WHERE target = $1 AND digest = $2 AND chunk_no <= $3";

/* One file at a time per target: an advisory lock on (target, digest). */
const char SQL_FILE_LOCK_TRY[] = "SELECT pg_try_advisory_lock(hashtextextended($1 || ':' || $2, 0))";
const char SQL_FILE_LOCK[] = "SELECT pg_advisory_lock(hashtextextended($1 || ':' || $2, 0))";
const char SQL_FILE_UNLOCK[] = "SELECT pg_advisory_unlock(hashtextextended($1 || ':' || $2, 0))";

/* idemload init: the default profile of SPEC.md. */
const char SQL_INIT_TABLE[] =
    "CREATE TABLE IF NOT EXISTS {table} ("
    "  id             BIGSERIAL PRIMARY KEY,"
    "  tenant_id      BIGINT      NOT NULL,"
    "  channel        TEXT        NOT NULL,"
    "  out_trade_no   TEXT        NOT NULL,"
    "  callback_type  TEXT        NOT NULL,"
    "  status         SMALLINT    NOT NULL DEFAULT 0,"
    "  payload        JSONB       NOT NULL,"
    "  received_at    TIMESTAMPTZ NOT NULL DEFAULT now(),"
    "  handled_at     TIMESTAMPTZ,"
    "  deleted_at     TIMESTAMPTZ"
    ")";

const char SQL_INIT_INDEX[] =
    "CREATE UNIQUE INDEX IF NOT EXISTS {index} ON {table} "
    "(tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL";

/* Duplicate active keys, largest groups first; $1 limit (NULL: all). */
const char SQL_DUPLICATES[] =
    "SELECT tenant_id, channel, out_trade_no, callback_type, count(*), min(id), max(id) "
    "FROM {table} WHERE {active} "
    "GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1 "
    "ORDER BY count(*) DESC, min(id) LIMIT $1::bigint";

/* Number of duplicate keys and of surplus rows. */
const char SQL_DUPLICATE_COUNT[] =
    "SELECT count(*), coalesce(sum(n - 1), 0) FROM ("
    "  SELECT count(*) AS n FROM {table} WHERE {active} "
    "  GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1) d";

/* $1 table oid: key columns that allow NULL. */
const char SQL_NULLABLE_KEYS[] =
    "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = $1::oid AND NOT a.attnotnull "
    "AND a.attname IN ('tenant_id', 'channel', 'out_trade_no', 'callback_type') "
    "ORDER BY a.attnum";

/* Rows dedupe would soft-delete that hold a final status ($1). */
const char SQL_DEDUPE_FINAL_BLOCKED[] =
    "SELECT tenant_id, channel, out_trade_no, callback_type, id, status FROM ("
    "  SELECT id, tenant_id, channel, out_trade_no, callback_type, status,"
    "         row_number() OVER (PARTITION BY tenant_id, channel, out_trade_no, callback_type"
    "                            ORDER BY received_at, id) AS rn,"
    "         count(*) OVER (PARTITION BY tenant_id, channel, out_trade_no, callback_type) AS n"
    "  FROM {table} WHERE {active}) d "
    "WHERE n > 1 AND rn > 1 AND status = ANY ($1::smallint[]) "
    "ORDER BY tenant_id, channel, out_trade_no, callback_type, id";

/*
 * One batch of dedupe --apply: up to $1 duplicate keys, all but the
 * earliest row (received_at, then id) of each soft-deleted; keys with a
 * final-status row to delete are left alone unless $3.  $2: final statuses.
 * Returns the ids changed.
 */
const char SQL_DEDUPE_BATCH[] =
    "WITH keys AS ("
    "  SELECT tenant_id, channel, out_trade_no, callback_type FROM {table} WHERE {active}"
    "  GROUP BY tenant_id, channel, out_trade_no, callback_type HAVING count(*) > 1"
    "  AND ($3::boolean OR NOT EXISTS ("
    "    SELECT 1 FROM {table} x WHERE x.{active_x}"
    "      AND x.tenant_id = {table}.tenant_id AND x.channel = {table}.channel"
    "      AND x.out_trade_no = {table}.out_trade_no AND x.callback_type = {table}.callback_type"
    "      AND x.status = ANY ($2::smallint[]) AND x.id <> ("
    "        SELECT y.id FROM {table} y WHERE y.{active_y}"
    "          AND y.tenant_id = x.tenant_id AND y.channel = x.channel"
    "          AND y.out_trade_no = x.out_trade_no AND y.callback_type = x.callback_type"
    "        ORDER BY y.received_at, y.id LIMIT 1)))"
    "  LIMIT $1::bigint), "
    "ranked AS ("
    "  SELECT t.id, row_number() OVER (PARTITION BY t.tenant_id, t.channel, t.out_trade_no,"
    "                                  t.callback_type ORDER BY t.received_at, t.id) AS rn"
    "  FROM {table} t JOIN keys k USING (tenant_id, channel, out_trade_no, callback_type)"
    "  WHERE t.{active_t} FOR UPDATE OF t) "
    "UPDATE {table} u SET deleted_at = now() FROM ranked r "
    "WHERE u.id = r.id AND r.rn > 1 "
    "RETURNING u.id, u.tenant_id, u.channel, u.out_trade_no, u.callback_type, u.status";

const char SQL_CREATE_INDEX[] =
    "CREATE UNIQUE INDEX CONCURRENTLY {index} ON {table} "
    "(tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL";

const char SQL_DROP_INDEX[] = "DROP INDEX CONCURRENTLY IF EXISTS {index}";

/* $1: pid of the building session. */
const char SQL_INDEX_PROGRESS[] =
    "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total, "
    "       lockers_done, lockers_total "
    "FROM pg_stat_progress_create_index WHERE pid = $1::int";

/* $1 schema, $2 index name: does it exist, and is it valid? */
const char SQL_INDEX_STATE[] =
    "SELECT i.indisvalid, i.indisready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
    "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2";

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
        if (k == n || !buf_append_str(out, values[k]))
            return false;
        p = close + 1;
    }
    return true;
}
