/*
 * tools.c - idemload init: the table and its partial unique index of
 * SPEC.md, created if absent.  Safe to run again and concurrently.
 */
#include "tools.h"

#include <string.h>

#include "db.h"
#include "exitcodes.h"
#include "log.h"
#include "sql.h"
#include "target.h"

/* Splits --table into a quoted "schema"."name" (or "name") for DDL. */
static bool quote_table(db *d, const char *arg, buf *out, buf *bare_name)
{
    const char *dot = strchr(arg, '.');
    if (dot) {
        buf schema = BUF_INIT;
        buf_append(&schema, arg, (size_t)(dot - arg));
        bool ok = db_append_ident(d, out, buf_cstr(&schema)) && buf_append_char(out, '.') &&
                  db_append_ident(d, out, dot + 1);
        buf_free(&schema);
        buf_append_str(bare_name, dot + 1);
        return ok;
    }
    buf_append_str(bare_name, arg);
    return db_append_ident(d, out, arg);
}

int tools_init(const config *cfg)
{
    buf err = BUF_INIT, table = BUF_INIT, name = BUF_INIT, index = BUF_INIT, sql = BUF_INIT;
    int code = EXIT_OK;
    db *d = db_connect(cfg->dbname, &err);
    if (!d) {
        log_error("%s", buf_cstr(&err));
        code = EXIT_DATABASE;
        goto out;
    }
    if (!quote_table(d, cfg->table, &table, &name)) {
        log_error("cannot quote the table name %s", cfg->table);
        code = EXIT_USAGE;
        goto out;
    }
    buf idx_name = BUF_INIT;
    if (cfg->index_name) {
        buf_append_str(&idx_name, cfg->index_name);
    } else {
        buf_printf(&idx_name, "uk_%s_biz_active", buf_cstr(&name));
        if (idx_name.len > 63) {
            idx_name.len = 63;
            idx_name.data[63] = '\0';
        }
    }
    db_append_ident(d, &index, buf_cstr(&idx_name));
    buf_free(&idx_name);
    const char *names[] = {"table", "index"};
    const char *vals[] = {buf_cstr(&table), buf_cstr(&index)};
    /* Serialize concurrent inits: CREATE ... IF NOT EXISTS alone can still
     * collide on the catalog when two sessions create at the same moment. */
    bool ok = db_exec(d, "BEGIN") &&
              db_exec(d, "SELECT pg_advisory_xact_lock(7350323339418284033)") &&
              sql_render(&sql, SQL_INIT_TABLE, 2, names, vals) && db_exec(d, buf_cstr(&sql));
    if (ok) {
        buf_clear(&sql);
        ok = sql_render(&sql, SQL_INIT_INDEX, 2, names, vals) && db_exec(d, buf_cstr(&sql)) &&
             db_exec(d, "COMMIT");
    }
    if (!ok) {
        log_error("init of %s failed: %s (SQLSTATE %s)", cfg->table, db_message(d),
                  db_sqlstate(d));
        code = strncmp(db_sqlstate(d), "42", 2) == 0 || strncmp(db_sqlstate(d), "3F", 2) == 0
                   ? EXIT_USAGE : EXIT_DATABASE;
        goto out;
    }
    /* The table may have existed already in another shape: say whether it
     * is usable for loads now. */
    target t;
    bool missing;
    buf_clear(&err);
    if (target_resolve(d, cfg->table, &t, &missing, &err)) {
        if (t.key_index) {
            log_info("table %s is ready (unique index %s on the business key, %s)", t.display,
                     t.key_index->name, t.key_index->predicate ? t.key_index->predicate
                                                               : "no predicate");
        } else {
            buf hint = BUF_INIT;
            target_fix_hint(&t, &hint);
            log_error("table %s exists but has no usable unique index on the business key; %s",
                      t.display, buf_cstr(&hint));
            buf_free(&hint);
            code = EXIT_USAGE;
        }
        target_free(&t);
    } else {
        log_error("%s", buf_cstr(&err));
        code = EXIT_DATABASE;
    }
out:
    db_close(&d);
    buf_free(&err);
    buf_free(&table);
    buf_free(&name);
    buf_free(&index);
    buf_free(&sql);
    return code;
}
