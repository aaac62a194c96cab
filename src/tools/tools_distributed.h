/*
 * tools_distributed.h - what the table tools do differently on a
 * Citus-distributed table (SPEC.md "A distributed target: Citus").
 */
#ifndef IDEMLOAD_TOOLS_DISTRIBUTED_H
#define IDEMLOAD_TOOLS_DISTRIBUTED_H

#include <stdbool.h>

#include "util/buf.h"
#include "db/db.h"
#include "db/target.h"

/*
 * The dedupe batch for t, into *out: SQL_DEDUPE_BATCH on a single server,
 * SQL_DEDUPE_BATCH_DISTRIBUTED on a distributed table (sql.c says how they
 * differ and why).  False when out of memory.
 */
bool tool_dedupe_batch_sql(buf *out, const target *t);

/*
 * create-index on a distributed table: the index is built shard by shard
 * on the workers, so pg_stat_progress_create_index on the coordinator
 * shows only the empty shell.  Reads it from the workers instead
 * (run_command_on_workers), summed over the shards being built now, as
 * the columns of SQL_INDEX_PROGRESS; NULL on failure (left on d).
 */
db_result *tool_distributed_index_progress(db *d);

#endif
