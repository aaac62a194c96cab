/*
 * tools.c - idemload init: the table and its partial unique index of
 * SPEC.md, created if absent.  Safe to run again and concurrently.
 */
#include "tools/tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/exitcodes.h"
#include "output/log.h"
#include "db/sql.h"
#include "db/target.h"

/*
 * init --distributed: distributes the table by tenant_id with Citus, unless
 * it is already; serialized with other inits.  Needs a Citus coordinator.
 */
static int distribute(db *d, const config *cfg, const char *table)
{
    db_result *r = db_query(d, SQL_HAS_CITUS, 0, NULL);
    bool citus = r && strcmp(db_value(r, 0, 0), "t") == 0;
    db_result_free(&r);
    if (!citus) {
        log_error("init --distributed needs a Citus coordinator: the citus extension is not "
                  "installed in this database (CREATE EXTENSION citus, and add the workers)");
        return EXIT_USAGE;
    }
    char shards[16];
    snprintf(shards, sizeof shards, "%d", cfg->shard_count);
    const char *pt[] = {table};
    const char *pd[] = {table, cfg->shard_count ? shards : NULL};
    bool ok = db_begin(d) && db_exec(d, SQL_INIT_LOCK);
    bool done = false;
    if (ok) {
        r = db_query(d, SQL_TABLE_DISTRIBUTED_BY_NAME, 1, pt);
        ok = r != NULL;
        done = ok && strcmp(db_value(r, 0, 0), "t") == 0;
        db_result_free(&r);
    }
    if (ok && !done) {
        r = db_query(d, SQL_DISTRIBUTE, 2, pd);
        ok = r != NULL;
        db_result_free(&r);
    }
    if (!ok || !db_commit(d)) {
        log_error("cannot distribute %s: %s (SQLSTATE %s)%s", cfg->table, db_message(d),
                  db_sqlstate(d),
                  strncmp(db_sqlstate(d), "0A", 2) == 0 || strcmp(db_sqlstate(d), "42P16") == 0
                      ? "; a table created without --distributed has the primary key (id), "
                        "which Citus refuses: its unique indexes must hold tenant_id"
                      : "");
        /* The status by the one rule (db.c's SQLSTATE table), as in every
         * command: the server refusing is 4, the hint says what to fix. */
        int code = db_failure_exit(d);
        db_rollback(d);
        return code;
    }
    if (!done)
        log_info("table %s distributed by tenant_id%s%s%s", cfg->table,
                 cfg->shard_count ? " over " : "", cfg->shard_count ? shards : "",
                 cfg->shard_count ? " shards" : "");
    return EXIT_OK;
}

/* The target as init names it: its quoted name into *table, its unique
 * index's (--index-name, or the default for the table's name) into *index.
 * EXIT_OK, or EXIT_USAGE for a table argument that names no table (logged). */
static int init_names(db *d, const config *cfg, buf *table, buf *index)
{
    buf err = BUF_INIT, name = BUF_INIT;
    char *schema_part = NULL, *name_part = NULL;
    int code = EXIT_OK;
    if (!target_parse_arg(cfg->table, &schema_part, &name_part, &err) ||
        !buf_append_str(&name, name_part) || !target_quote_arg(d, cfg->table, table, &err)) {
        log_error("%s", buf_cstr(&err));
        code = EXIT_USAGE;
    }
    free(schema_part);
    free(name_part);
    if (code == EXIT_OK) {
        buf idx_name = BUF_INIT;
        if (cfg->index_name) {
            buf_append_str(&idx_name, cfg->index_name);
        } else {
            index_default_name(buf_cstr(&name), &idx_name);
        }
        db_append_ident(d, index, buf_cstr(&idx_name));
        buf_free(&idx_name);
    }
    buf_free(&err);
    buf_free(&name);
    return code;
}

/* Creates the table and its index, if absent, in one transaction.  EXIT_OK,
 * or the exit status of the failure (logged). */
static int create_table(db *d, const config *cfg, const char *table, const char *index)
{
    buf sql = BUF_INIT;
    const char *names[] = {"table", "index"};
    const char *vals[] = {table, index};
    /* Serialize concurrent inits: CREATE ... IF NOT EXISTS alone can still
     * collide on the catalog when two sessions create at the same moment. */
    bool ok = db_begin(d) && db_exec(d, SQL_INIT_LOCK) &&
              sql_render(&sql, cfg->distributed ? SQL_INIT_TABLE_DISTRIBUTED : SQL_INIT_TABLE, 2,
                         names, vals) &&
              db_exec(d, buf_cstr(&sql));
    if (ok) {
        buf_clear(&sql);
        ok = sql_render(&sql, SQL_INIT_INDEX, 2, names, vals) && db_exec(d, buf_cstr(&sql)) &&
             db_commit(d);
    }
    buf_free(&sql);
    if (ok)
        return EXIT_OK;
    /* A schema that does not exist is the table argument's fault, as for
     * every other command (target_resolve): exit 2. */
    bool no_schema = strcmp(db_sqlstate(d), "3F000") == 0;
    log_error("init of %s failed: %s (SQLSTATE %s)%s", cfg->table, db_message(d), db_sqlstate(d),
              no_schema ? "; create the schema first (CREATE SCHEMA), or name another" : "");
    return no_schema ? EXIT_USAGE : db_failure_exit(d);
}

/* The table may have existed already in another shape: says whether it is
 * usable for loads now.  EXIT_OK, EXIT_USAGE when it lacks the unique index
 * on the business key, else db_failure_exit's status when it cannot be read
 * (logged). */
static int report_ready(db *d, const config *cfg)
{
    target t;
    bool missing;
    buf err = BUF_INIT;
    int code = EXIT_OK;
    if (target_resolve(d, cfg, &t, &missing, &err)) {
        if (t.key_index) {
            log_info("table %s is ready (unique index %s on the business key, %s)", t.display,
                     t.key_index->name, t.key_index->predicate ? t.key_index->predicate
                                                               : "no predicate");
        } else {
            buf hint = BUF_INIT;
            target_fix_hint(&t, cfg, &hint);
            log_error("table %s exists but has no usable unique index on the business key; %s",
                      t.display, buf_cstr(&hint));
            buf_free(&hint);
            code = EXIT_USAGE;
        }
        target_free(&t);
    } else {
        log_error("%s", buf_cstr(&err));
        code = db_failure_exit(d);
    }
    buf_free(&err);
    return code;
}

int tools_init(const config *cfg)
{
    buf err = BUF_INIT, table = BUF_INIT, index = BUF_INIT;
    int code = EXIT_OK;
    db *d = db_connect(cfg->dbname, &err, &code);
    if (!d)
        log_error("%s", buf_cstr(&err));
    if (code == EXIT_OK)
        code = init_names(d, cfg, &table, &index);
    if (code == EXIT_OK)
        code = create_table(d, cfg, buf_cstr(&table), buf_cstr(&index));
    if (code == EXIT_OK && cfg->distributed)
        code = distribute(d, cfg, buf_cstr(&table));
    if (code == EXIT_OK)
        code = report_ready(d, cfg);
    db_close(&d);
    buf_free(&err);
    buf_free(&table);
    buf_free(&index);
    return code;
}
