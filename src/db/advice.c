/*
 * advice.c - the user's target on an advised command line (see advice.h).
 */
#include "db/advice.h"

#include <string.h>

#include "db/db.h"
#include "util/shell_quote.h"

bool advice_target_args(buf *out, const config *cfg, const char *index_name)
{
    bool ok = true;
    if (cfg->dbname) {
        buf shown = BUF_INIT;
        if (db_conninfo_shown(cfg->dbname, &shown) && shown.len > 0)
            ok = buf_append_str(out, " -d ") && shell_quote_append(out, buf_cstr(&shown));
        buf_free(&shown);
    }
    if (ok && strcmp(cfg->table, DEFAULT_TABLE) != 0)
        ok = buf_append_str(out, " --table ") && shell_quote_append(out, cfg->table);
    if (ok && index_name)
        ok = buf_append_str(out, " --index-name ") && shell_quote_append(out, index_name);
    return ok;
}
