/*
 * ledger_schema.c - the ledger's names and version (see ledger_schema.h).
 */
#include "db/ledger_schema.h"

#include <string.h>

#include "db/sql.h"

bool ledger_names_of(ledger_names *n, db *d, const char *schema)
{
    buf_clear(&n->file);
    buf_clear(&n->chunk);
    return db_append_ident(d, &n->file, schema) &&
           buf_append_str(&n->file, "." LEDGER_FILE_TABLE) &&
           db_append_ident(d, &n->chunk, schema) &&
           buf_append_str(&n->chunk, "." LEDGER_CHUNK_TABLE);
}

void ledger_names_free(ledger_names *n)
{
    buf_free(&n->file);
    buf_free(&n->chunk);
}

bool ledger_version_read(const ledger_names *n, db *d, ledger_version *v)
{
    buf sql = BUF_INIT;
    if (!sql_ledger_exists(&sql)) {
        buf_free(&sql);
        return false;
    }
    const char *p[] = {buf_cstr(&n->chunk), buf_cstr(&n->file)};
    db_result *r = db_query(d, buf_cstr(&sql), 2, p);
    buf_free(&sql);
    if (!r)
        return false;
    /* Column 0 is the ledger itself, then one per migration in order. */
    v->exists = strcmp(db_value(r, 0, 0), "t") == 0;
    for (int m = 0; m < LEDGER_N_MIGRATIONS; m++)
        v->has[m] = strcmp(db_value(r, 0, 1 + m), "t") == 0;
    v->readable = strcmp(db_value(r, 0, 1 + LEDGER_N_MIGRATIONS), "t") == 0;
    db_result_free(&r);
    return true;
}

bool ledger_version_current(const ledger_version *v)
{
    if (!v->exists)
        return false;
    for (int m = 0; m < LEDGER_N_MIGRATIONS; m++)
        if (!v->has[m])
            return false;
    return true;
}

const char *ledger_migration_sql(ledger_migration m)
{
    static const char *const sql[] = {
#define LEDGER_MIGRATION_SQL(id, on_chunk, column, statement) statement,
        LEDGER_MIGRATIONS(LEDGER_MIGRATION_SQL)
#undef LEDGER_MIGRATION_SQL
    };
    return (unsigned)m < LEDGER_N_MIGRATIONS ? sql[m] : NULL;
}
