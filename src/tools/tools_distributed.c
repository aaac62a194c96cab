/*
 * tools_distributed.c - the table tools on a Citus-distributed table (see
 * tools_distributed.h).
 */
#include "tools/tools_distributed.h"

#include "db/sql.h"
#include "tools/tools_shared.h"

bool tool_dedupe_batch_sql(buf *out, const target *t)
{
    return tool_render(out, t->distributed ? SQL_DEDUPE_BATCH_DISTRIBUTED : SQL_DEDUPE_BATCH, t,
                       NULL, NULL);
}

db_result *tool_distributed_index_progress(db *d)
{
    return db_query(d, SQL_INDEX_PROGRESS_WORKERS, 0, NULL);
}
