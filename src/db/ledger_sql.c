/*
 * ledger_sql.c - the SQL of the ledger (see sql.h): its tables and their
 * migrations, a file's entry and its chunks, claimed, committed and read
 * back for a resume.
 */
#include "db/sql.h"

#include <string.h>

#include "db/ledger_migrations.h"
#include "db/sql_locks.h"

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
