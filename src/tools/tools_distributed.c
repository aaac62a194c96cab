/*
 * tools_distributed.c - the table tools on a Citus-distributed table (see
 * tools_distributed.h).
 */
#include "tools/tools_distributed.h"

#include <string.h>

#include "db/sql.h"
#include "output/log.h"
#include "tools/tools_shared.h"

/* Replaces the one occurrence of from in *s by to; false when from is not
 * there exactly once. */
static bool replace_once(buf *s, const char *from, const char *to)
{
    const char *text = buf_cstr(s);
    const char *at = strstr(text, from);
    if (!at || strstr(at + 1, from))
        return false;
    buf out = BUF_INIT;
    bool ok = buf_append(&out, text, (size_t)(at - text)) && buf_append_str(&out, to) &&
              buf_append_str(&out, at + strlen(from));
    if (ok) {
        buf_clear(s);
        ok = buf_append_str(s, buf_cstr(&out));
    }
    buf_free(&out);
    return ok;
}

bool tool_dedupe_batch_sql(buf *out, const target *t)
{
    if (!tool_render(out, SQL_DEDUPE_BATCH, t, NULL, NULL))
        return false;
    if (!t->distributed)
        return true;
    if (!replace_once(out, " FOR UPDATE OF t", "") ||
        !replace_once(out, "WHERE u.id = ANY (ARRAY(SELECT id FROM doomed))",
                      "WHERE u.id = ANY (ARRAY(SELECT id FROM doomed)) AND u.deleted_at IS NULL")) {
        log_error("internal error: SQL_DEDUPE_BATCH no longer has the shape "
                  "tools_distributed.c adapts for Citus");
        return false;
    }
    return true;
}

db_result *tool_distributed_index_progress(db *d)
{
    return db_query(d, SQL_INDEX_PROGRESS_WORKERS, 0, NULL);
}
