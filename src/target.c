/*
 * target.c - the target table and its business-key index (see target.h).
 *
 * An index counts only when it is unique, valid, ready and live, has
 * exactly the four key columns and no expressions, and its predicate is
 * "deleted_at IS NULL" when the table soft-deletes (no predicate otherwise).
 * A looser predicate would let rows outside it escape the uniqueness check;
 * a full index on a table with deleted_at would let a soft-deleted row
 * capture the conflict, hiding the new version.
 */
#include "target.h"

#include <stdlib.h>
#include <string.h>

#include "sql.h"


/* Same set of columns, any order? */
static bool same_key_set(const char *cols)
{
    if (!cols)
        return false;
    const char *want[] = {"tenant_id", "channel", "out_trade_no", "callback_type"};
    int seen = 0;
    int count = 0;
    const char *p = cols;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        bool found = false;
        for (int k = 0; k < 4; k++)
            if (strlen(want[k]) == len && strncmp(want[k], p, len) == 0 && !(seen & (1 << k))) {
                seen |= 1 << k;
                found = true;
            }
        if (!found)
            return false;
        count++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return count == 4 && seen == 15;
}

static bool predicate_ok(const char *pred, bool has_deleted_at)
{
    if (!has_deleted_at)
        return pred == NULL;
    return pred && (strcmp(pred, "(deleted_at IS NULL)") == 0 ||
                    strcmp(pred, "deleted_at IS NULL") == 0);
}

static char *dup_or_null(const db_result *r, int row, int col)
{
    return db_is_null(r, row, col) ? NULL : strdup(db_value(r, row, col));
}

bool target_quote_arg(db *d, const char *arg, buf *out)
{
    const char *dot = strchr(arg, '.');
    if (arg[0] == '"')
        return buf_append_str(out, arg); /* already quoted by the user */
    if (dot) {
        char *schema = strndup(arg, (size_t)(dot - arg));
        bool ok = schema && db_append_ident(d, out, schema) && buf_append_char(out, '.') &&
                  db_append_ident(d, out, dot + 1);
        free(schema);
        return ok;
    }
    return db_append_ident(d, out, arg);
}

bool target_resolve(db *d, const char *table_arg, target *t, bool *missing, buf *err)
{
    memset(t, 0, sizeof *t);
    *missing = false;
    buf q = BUF_INIT;
    bool ok = false;
    db_result *r = NULL;
    if (!target_quote_arg(d, table_arg, &q)) {
        buf_printf(err, "cannot quote table name %s", table_arg);
        goto out;
    }
    const char *p1[] = {buf_cstr(&q)};
    r = db_query(d, SQL_RESOLVE_TABLE, 1, p1);
    if (!r) {
        buf_printf(err, "cannot look up table %s: %s (SQLSTATE %s)", table_arg, db_message(d),
                   db_sqlstate(d));
        goto out;
    }
    if (db_nrows(r) == 0) {
        *missing = true;
        buf_printf(err, "table %s does not exist (create it with 'idemload init')", table_arg);
        goto out;
    }
    t->schema = strdup(db_value(r, 0, 0));
    t->name = strdup(db_value(r, 0, 1));
    t->oid = strdup(db_value(r, 0, 2));
    db_result_free(&r);
    buf quoted = BUF_INIT, display = BUF_INIT;
    db_append_ident(d, &quoted, t->schema);
    buf_append_char(&quoted, '.');
    db_append_ident(d, &quoted, t->name);
    buf_printf(&display, "%s.%s", t->schema, t->name);
    t->quoted = strdup(buf_cstr(&quoted));
    t->display = strdup(buf_cstr(&display));
    buf_free(&quoted);
    buf_free(&display);

    const char *p2[] = {t->oid};
    r = db_query(d, SQL_TABLE_COLUMNS, 1, p2);
    if (!r) {
        buf_printf(err, "cannot read the columns of %s: %s", t->display, db_message(d));
        goto out;
    }
    for (int i = 0; i < db_nrows(r); i++) {
        if (strcmp(db_value(r, i, 0), "deleted_at") == 0)
            t->has_deleted_at = true;
        if (strcmp(db_value(r, i, 0), "id") == 0)
            t->has_id = true;
    }
    db_result_free(&r);

    r = db_query(d, SQL_UNIQUE_INDEXES, 1, p2);
    if (!r) {
        buf_printf(err, "cannot read the indexes of %s: %s", t->display, db_message(d));
        goto out;
    }
    t->n_indexes = db_nrows(r);
    t->indexes = calloc((size_t)(t->n_indexes ? t->n_indexes : 1), sizeof *t->indexes);
    for (int i = 0; i < t->n_indexes; i++) {
        unique_index *ix = &t->indexes[i];
        ix->name = strdup(db_value(r, i, 0));
        ix->valid = strcmp(db_value(r, i, 1), "t") == 0 && strcmp(db_value(r, i, 2), "t") == 0 &&
                    strcmp(db_value(r, i, 3), "t") == 0;
        ix->ready = strcmp(db_value(r, i, 2), "t") == 0;
        ix->predicate = dup_or_null(r, i, 4);
        ix->columns = dup_or_null(r, i, 5);
        ix->has_expressions = strcmp(db_value(r, i, 6), "t") == 0;
        ix->nulls_not_distinct = strcmp(db_value(r, i, 8), "t") == 0;
        ix->covers_key = !ix->has_expressions && same_key_set(ix->columns);
        if (!t->key_index && ix->valid && ix->covers_key &&
            predicate_ok(ix->predicate, t->has_deleted_at))
            t->key_index = ix;
    }
    buf c = BUF_INIT;
    buf_append_str(&c, "(tenant_id, channel, out_trade_no, callback_type)");
    if (t->key_index && t->key_index->predicate)
        buf_printf(&c, " WHERE %s", t->key_index->predicate);
    t->conflict = strdup(buf_cstr(&c));
    buf_free(&c);
    t->active = strdup(t->key_index && t->key_index->predicate ? t->key_index->predicate
                       : t->has_deleted_at ? "(deleted_at IS NULL)" : "true");
    ok = true;
out:
    db_result_free(&r);
    buf_free(&q);
    return ok;
}

void identifier_clip(buf *name)
{
    if (name->len <= 63)
        return;
    /* PostgreSQL keeps the first 63 bytes of a name, never splitting a
     * UTF-8 character: back off to the start of the one cut. */
    size_t n = 63;
    while (n > 0 && ((unsigned char)name->data[n] & 0xC0) == 0x80)
        n--;
    name->len = n;
    name->data[n] = '\0';
}

void index_default_name(const char *table_name, buf *out)
{
    buf_clear(out);
    buf_printf(out, "uk_%s_biz_active", table_name);
    identifier_clip(out);
}

void target_default_index_name(const target *t, buf *out)
{
    index_default_name(t->name, out);
}

void target_fix_hint(const target *t, buf *out)
{
    buf name = BUF_INIT;
    target_default_index_name(t, &name);
    buf_printf(out, "CREATE UNIQUE INDEX CONCURRENTLY %s ON %s "
                    "(tenant_id, channel, out_trade_no, callback_type)%s; "
                    "or run 'idemload check' and 'idemload create-index'",
               buf_cstr(&name), t->display, t->has_deleted_at ? " WHERE deleted_at IS NULL" : "");
    buf_free(&name);
}

void target_free(target *t)
{
    for (int i = 0; i < t->n_indexes; i++) {
        free(t->indexes[i].name);
        free(t->indexes[i].predicate);
        free(t->indexes[i].columns);
    }
    free(t->indexes);
    free(t->schema);
    free(t->name);
    free(t->oid);
    free(t->quoted);
    free(t->display);
    free(t->conflict);
    free(t->active);
    memset(t, 0, sizeof *t);
}
