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
#include "db/target.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/columns.h"
#include "db/advice.h"
#include "db/sql.h"


/* Same set of columns, any order? */
static bool same_key_set(const char *cols)
{
    if (!cols)
        return false;
    const char *const *want = key_column_names;
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

static char *dup_or_null(const db_result *r, int ri, int col)
{
    return db_is_null(r, ri, col) ? NULL : strdup(db_value(r, ri, col));
}

/* One part of a name at *pp: a double-quoted identifier ("" inside is one
 * quote) or a bare run of characters other than '.' and '"'.  Leaves *pp
 * after it. */
static char *parse_part(const char **pp, const char *arg, buf *err)
{
    const char *p = *pp;
    buf part = BUF_INIT;
    bool ok = true;
    if (*p == '"') {
        p++;
        for (;;) {
            if (*p == '\0') {
                buf_printf(err, "--table %s: a double quote is not closed", arg);
                goto fail;
            }
            if (*p == '"') {
                if (p[1] != '"')
                    break;
                p++;
            }
            ok = buf_append_char(&part, *p++) && ok;
        }
        p++;
        if (*p != '\0' && *p != '.') {
            buf_printf(err, "--table %s: a quoted name must be followed by '.' or end the name",
                       arg);
            goto fail;
        }
    } else {
        while (*p != '\0' && *p != '.') {
            if (*p == '"') {
                buf_printf(err, "--table %s: a double quote inside a name that does not start "
                                "with one (quote the whole part: \"na\"\"me\")",
                           arg);
                goto fail;
            }
            ok = buf_append_char(&part, *p++) && ok;
        }
    }
    if (!ok || part.len == 0) {
        buf_printf(err, ok ? "--table %s: an empty name" : "--table %s: out of memory", arg);
        goto fail;
    }
    *pp = p;
    return part.data;
fail:
    buf_free(&part);
    return NULL;
}

bool target_parse_arg(const char *arg, char **schema, char **name, buf *err)
{
    *schema = *name = NULL;
    const char *p = arg;
    char *first = parse_part(&p, arg, err);
    if (!first)
        return false;
    if (*p == '\0') {
        *name = first;
        return true;
    }
    p++; /* the '.' */
    char *second = parse_part(&p, arg, err);
    if (!second) {
        free(first);
        return false;
    }
    if (*p != '\0') {
        buf_printf(err, "--table %s: more than schema.name (a database name cannot be given "
                        "here; -d names the database)",
                   arg);
        free(first);
        free(second);
        return false;
    }
    *schema = first;
    *name = second;
    return true;
}

bool target_quote_arg(db *d, const char *arg, buf *out, buf *err)
{
    char *schema, *name;
    if (!target_parse_arg(arg, &schema, &name, err))
        return false;
    bool ok = (!schema || (db_append_ident(d, out, schema) && buf_append_char(out, '.'))) &&
              db_append_ident(d, out, name);
    if (!ok)
        buf_printf(err, "cannot quote the table name %s: %s", arg, db_message(d));
    free(schema);
    free(name);
    return ok;
}

/* The table's names and kind (SQL_RESOLVE_TABLE); *missing when there is
 * no table of that name (nothing at all, or a view or the like). */
static bool read_names(db *d, const config *cfg, target *t, bool *missing, buf *err)
{
    const char *table_arg = cfg->table;
    buf q = BUF_INIT;
    db_result *r = NULL;
    bool ok = false;
    if (!target_quote_arg(d, table_arg, &q, err)) {
        *missing = true; /* a name that cannot be one: the user's to fix */
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
        buf init = BUF_INIT;
        advice_target_args(&init, cfg, cfg->index_name);
        buf_printf(err, "table %s does not exist (create it with 'idemload init%s')", table_arg,
                   buf_cstr(&init));
        buf_free(&init);
        goto out;
    }
    if (strcmp(db_value(r, 0, 6), "t") != 0) {
        *missing = true;
        /* A view (even one with INSTEAD OF triggers) cannot be an ON
         * CONFLICT target, nor a materialized or foreign table. */
        buf_printf(err, "%s is %s, not a table: idemload loads into a table or a partitioned "
                        "table (--table names it)",
                   table_arg, db_value(r, 0, 7));
        goto out;
    }
    t->schema = strdup(db_value(r, 0, 0));
    t->name = strdup(db_value(r, 0, 1));
    t->oid = strdup(db_value(r, 0, 2));
    t->partitioned = strcmp(db_value(r, 0, 3), "t") == 0;
    t->has_rules = strcmp(db_value(r, 0, 4), "t") == 0;
    t->row_security = strcmp(db_value(r, 0, 5), "t") == 0;
    buf quoted = BUF_INIT, display = BUF_INIT, sql_name = BUF_INIT;
    ok = t->schema && t->name && t->oid && db_append_ident(d, &quoted, t->schema) &&
         buf_append_char(&quoted, '.') && db_append_ident(d, &quoted, t->name) &&
         buf_printf(&display, "%s.%s", t->schema, t->name) &&
         target_append_sql_ident(&sql_name, t->schema) && buf_append_char(&sql_name, '.') &&
         target_append_sql_ident(&sql_name, t->name);
    t->quoted = ok ? strdup(buf_cstr(&quoted)) : NULL;
    t->display = ok ? strdup(buf_cstr(&display)) : NULL;
    t->sql_name = ok ? strdup(buf_cstr(&sql_name)) : NULL;
    buf_free(&quoted);
    buf_free(&display);
    buf_free(&sql_name);
    ok = t->quoted && t->display && t->sql_name;
    if (!ok)
        buf_printf(err, "out of memory");
out:
    db_result_free(&r);
    buf_free(&q);
    return ok;
}

/* Its columns (SQL_TABLE_COLUMNS), and whether Citus distributes it. */
static bool read_columns(db *d, target *t, buf *err)
{
    const char *p[] = {t->oid};
    db_result *r = db_query(d, SQL_TABLE_COLUMNS, 1, p);
    if (!r) {
        buf_printf(err, "cannot read the columns of %s: %s", t->display, db_message(d));
        return false;
    }
    bool ok = true;
    t->columns = calloc((size_t)(db_nrows(r) ? db_nrows(r) : 1), sizeof *t->columns);
    t->n_columns = t->columns ? db_nrows(r) : 0;
    for (int i = 0; ok && i < t->n_columns; i++) {
        target_column *c = &t->columns[i];
        c->name = strdup(db_value(r, i, 0));
        c->type = strdup(db_value(r, i, 2));
        c->base_type = strdup(db_value(r, i, 5));
        ok = c->name && c->type && c->base_type;
        c->not_null = strcmp(db_value(r, i, 1), "t") == 0;
        c->has_default = strcmp(db_value(r, i, 3), "t") == 0;
        c->generated = strcmp(db_value(r, i, 4), "t") == 0;
        t->has_deleted_at |= ok && strcmp(c->name, "deleted_at") == 0;
        t->has_id |= ok && strcmp(c->name, "id") == 0;
    }
    db_result_free(&r);
    if (!ok || !t->columns) {
        buf_printf(err, "out of memory");
        return false;
    }
    r = db_query(d, SQL_HAS_CITUS, 0, NULL);
    bool citus = r && strcmp(db_value(r, 0, 0), "t") == 0;
    db_result_free(&r);
    if (citus) {
        r = db_query(d, SQL_TABLE_DISTRIBUTED, 1, p);
        t->distributed = r && strcmp(db_value(r, 0, 0), "t") == 0;
        db_result_free(&r);
    }
    return true;
}

/* Its unique indexes (SQL_UNIQUE_INDEXES), and the one loads use. */
static bool read_indexes(db *d, target *t, buf *err)
{
    const char *p[] = {t->oid};
    db_result *r = db_query(d, SQL_UNIQUE_INDEXES, 1, p);
    if (!r) {
        buf_printf(err, "cannot read the indexes of %s: %s", t->display, db_message(d));
        return false;
    }
    bool ok = true;
    t->indexes = calloc((size_t)(db_nrows(r) ? db_nrows(r) : 1), sizeof *t->indexes);
    t->n_indexes = t->indexes ? db_nrows(r) : 0;
    for (int i = 0; ok && i < t->n_indexes; i++) {
        unique_index *ix = &t->indexes[i];
        ix->name = strdup(db_value(r, i, 0));
        ix->valid = strcmp(db_value(r, i, 1), "t") == 0 && strcmp(db_value(r, i, 2), "t") == 0 &&
                    strcmp(db_value(r, i, 3), "t") == 0;
        ix->ready = strcmp(db_value(r, i, 2), "t") == 0;
        ix->predicate = dup_or_null(r, i, 4);
        ix->columns = dup_or_null(r, i, 5);
        ok = ix->name && (ix->predicate || db_is_null(r, i, 4)) &&
             (ix->columns || db_is_null(r, i, 5));
        ix->has_expressions = strcmp(db_value(r, i, 6), "t") == 0;
        ix->nulls_not_distinct = strcmp(db_value(r, i, 8), "t") == 0;
        ix->deferrable = strcmp(db_value(r, i, 9), "f") == 0;
    }
    db_result_free(&r);
    if (!ok || !t->indexes) {
        buf_printf(err, "out of memory");
        return false;
    }
    target_pick_index(t);
    return true;
}

void target_pick_index(target *t)
{
    t->key_index = NULL;
    t->blocked_by = NULL;
    for (int i = 0; i < t->n_indexes; i++) {
        unique_index *ix = &t->indexes[i];
        ix->covers_key = !ix->has_expressions && same_key_set(ix->columns);
        if (!t->blocked_by && ix->deferrable && ix->covers_key)
            t->blocked_by = ix;
        if (!t->key_index && ix->valid && !ix->deferrable && ix->covers_key &&
            predicate_ok(ix->predicate, t->has_deleted_at))
            t->key_index = ix;
    }
    if (t->blocked_by)
        t->key_index = NULL;
}

bool target_resolve(db *d, const config *cfg, target *t, bool *missing, buf *err)
{
    memset(t, 0, sizeof *t);
    *missing = false;
    if (!read_names(d, cfg, t, missing, err) || !read_columns(d, t, err) ||
        !read_indexes(d, t, err))
        return false;
    /* The conflict target and the active-row predicate the merge uses. */
    buf c = BUF_INIT;
    buf_append_str(&c, "(" KEY_COLUMNS ")");
    if (t->key_index && t->key_index->predicate)
        buf_printf(&c, " WHERE %s", t->key_index->predicate);
    t->conflict = strdup(buf_cstr(&c));
    buf_free(&c);
    t->active = strdup(t->key_index && t->key_index->predicate ? t->key_index->predicate
                       : t->has_deleted_at ? "(deleted_at IS NULL)" : "true");
    if (!t->conflict || !t->active) {
        buf_printf(err, "out of memory");
        return false;
    }
    return true;
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
    if (out->len <= 63)
        return;
    /* Cut to 63 bytes, two long names that differ only past the cut would
     * name one index, and the second table's init would find that name
     * taken: the name is shortened with a hash of the whole table name
     * instead (FNV-1a, 32 bits, as hex), the same on every run. */
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)table_name; *c; c++)
        h = (h ^ *c) * 16777619u;
    char suffix[32];
    snprintf(suffix, sizeof suffix, "_%08x_biz_active", (unsigned)h);
    buf_clear(out);
    buf_printf(out, "uk_%s", table_name);
    out->len = 63 - strlen(suffix);    /* room for the suffix (table_name is longer) */
    while (out->len > 3 && ((unsigned char)out->data[out->len] & 0xC0) == 0x80)
        out->len--;
    out->data[out->len] = '\0';
    buf_append_str(out, suffix);
}

void target_default_index_name(const target *t, buf *out)
{
    index_default_name(t->name, out);
}

bool target_append_sql_ident(buf *out, const char *ident)
{
    bool plain = (*ident >= 'a' && *ident <= 'z') || *ident == '_';
    for (const char *p = ident; plain && *p; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
    if (plain)
        return buf_append_str(out, ident);
    bool ok = buf_append_char(out, '"');
    for (const char *p = ident; ok && *p; p++)
        ok = *p == '"' ? buf_append_str(out, "\"\"") : buf_append_char(out, *p);
    return ok && buf_append_char(out, '"');
}

void target_fix_hint(const target *t, const config *cfg, buf *out)
{
    buf name = BUF_INIT, default_name = BUF_INIT, args = BUF_INIT, index_args = BUF_INIT;
    target_default_index_name(t, &default_name);
    target_append_sql_ident(&name, buf_cstr(&default_name));
    buf_free(&default_name);
    advice_target_args(&args, cfg, NULL);
    advice_target_args(&index_args, cfg, cfg->index_name);
    buf_printf(out, "CREATE UNIQUE INDEX CONCURRENTLY %s ON %s (" KEY_COLUMNS ")%s; "
                    "or run 'idemload check%s' and 'idemload create-index%s'",
               buf_cstr(&name), t->sql_name, t->has_deleted_at ? " WHERE deleted_at IS NULL" : "",
               buf_cstr(&args), buf_cstr(&index_args));
    buf_free(&name);
    buf_free(&args);
    buf_free(&index_args);
}

/* The columns idemload writes itself, in every row. */
#define OWN_COLUMN_1(ID, name, member, kind, key, pos, dflt, A, B) #name,
static const char *const own_columns[] = {IDEMLOAD_COLUMNS(OWN_COLUMN_1, ~, ~)};
#define N_OWN_COLUMNS (sizeof own_columns / sizeof own_columns[0])

static bool written_by_idemload(const char *name)
{
    for (size_t i = 0; i < N_OWN_COLUMNS; i++)
        if (strcmp(own_columns[i], name) == 0)
            return true;
    return false;
}

static const target_column *find_column(const target *t, const char *name)
{
    for (int i = 0; i < t->n_columns; i++)
        if (strcmp(t->columns[i].name, name) == 0)
            return &t->columns[i];
    return NULL;
}

/* Is name a key column of some unique index (the primary key included)? */
static bool in_unique_key(const target *t, const char *name)
{
    size_t len = strlen(name);
    for (int i = 0; i < t->n_indexes; i++) {
        const char *p = t->indexes[i].columns;
        while (p && *p) {
            const char *comma = strchr(p, ',');
            size_t n = comma ? (size_t)(comma - p) : strlen(p);
            if (n == len && strncmp(p, name, n) == 0)
                return true;
            p = comma ? comma + 1 : NULL;
        }
    }
    return false;
}

/* One --set: the column and its value.  False with *err (and *db_failed
 * when the server could not answer). */
static bool check_set(db *d, const target *t, const column_set *cs, bool *db_failed, buf *err)
{
    const target_column *c = find_column(t, cs->name);
    if (!c) {
        buf_printf(err, "--set %s: table %s has no column %s", cs->name, t->display, cs->name);
        return false;
    }
    if (c->generated) {
        buf_printf(err, "--set %s: column %s of %s is generated; it cannot be set", cs->name,
                   c->name, t->display);
        return false;
    }
    if (strcmp(c->name, "deleted_at") == 0) {
        buf_printf(err, "--set %s: idemload loads active rows; setting the soft-delete marker "
                        "would insert every row already deleted", cs->name);
        return false;
    }
    if (in_unique_key(t, c->name)) {
        buf_printf(err, "--set %s: column %s is in a unique index of %s; one constant there "
                        "would collide for every row but the first", cs->name, c->name,
                   t->display);
        return false;
    }
    buf sql = BUF_INIT;
    const char *names[] = {"type"};
    const char *values[] = {c->type};
    const char *params[] = {cs->value};
    bool ok = sql_render(&sql, SQL_CHECK_VALUE, 1, names, values);
    db_result *r = ok ? db_query(d, buf_cstr(&sql), 1, params) : NULL;
    buf_free(&sql);
    if (r) {
        db_result_free(&r);
        return true;
    }
    if (!ok) {
        buf_printf(err, "out of memory");
    } else if (db_error_class_of(d) == DBE_DATA) {
        buf_printf(err, "--set %s=%s: not a valid %s: %s", cs->name, cs->value, c->type,
                   db_message(d));
    } else {
        *db_failed = true;
        buf_printf(err, "--set %s: cannot check the value: %s (SQLSTATE %s)", cs->name,
                   db_message(d), db_sqlstate(d));
    }
    return false;
}

/*
 * The columns idemload writes: each must be there and writable, and the
 * payload a jsonb (or a domain over it), which the merge compares with =
 * and IS DISTINCT FROM: json has no equality, and text would compare
 * formatting, not values.
 */
bool target_check_shape(const target *t, buf *err)
{
    for (size_t i = 0; i < N_OWN_COLUMNS; i++) {
        const char *own = own_columns[i];
        const target_column *c = find_column(t, own);
        if (!c) {
            buf_printf(err, "table %s has no %s column, which idemload writes in every row "
                            "(the shape of the table `idemload init` creates)", t->display, own);
            return false;
        }
        if (c->generated) {
            buf_printf(err, "table %s: column %s is generated, but idemload writes it in every "
                            "row", t->display, own);
            return false;
        }
    }
    const target_column *p = find_column(t, "payload");
    if (strcmp(p->base_type, "jsonb") != 0) {
        buf_printf(err, "table %s: column payload is %s; idemload compares payloads as jsonb "
                        "(an unchanged row is one whose payload equals as jsonb) and needs a "
                        "jsonb column: ALTER TABLE %s ALTER COLUMN payload TYPE jsonb USING "
                        "payload::jsonb",
                   t->display, p->type, t->quoted);
        return false;
    }
    return true;
}

bool target_check_columns(db *d, const target *t, const column_set *sets, size_t n,
                          int first_param, buf *cols, buf *vals, bool *db_failed, buf *err)
{
    *db_failed = false;
    if (!target_check_shape(t, err))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!check_set(d, t, &sets[i], db_failed, err))
            return false;
        const target_column *c = find_column(t, sets[i].name);
        if (!buf_append_str(cols, ", ") || !db_append_ident(d, cols, c->name) ||
            !buf_printf(vals, ", $%d::%s", first_param + (int)i, c->type)) {
            buf_printf(err, "out of memory");
            return false;
        }
    }
    /* NOT NULL columns nothing fills: all of them in one message. */
    buf missing = BUF_INIT, fix = BUF_INIT;
    for (int i = 0; i < t->n_columns; i++) {
        const target_column *c = &t->columns[i];
        if (!c->not_null || c->has_default || c->generated || written_by_idemload(c->name))
            continue;
        bool set = false;
        for (size_t k = 0; k < n && !set; k++)
            set = strcmp(sets[k].name, c->name) == 0;
        if (set)
            continue;
        buf_printf(&missing, "%s%s (%s)", missing.len ? ", " : "", c->name, c->type);
        buf_printf(&fix, "%s--set %s=VALUE", fix.len ? " " : "", c->name);
    }
    bool ok = missing.len == 0;
    if (!ok)
        buf_printf(err, "table %s has NOT NULL column%s without a default that idemload does "
                        "not write: %s; give %s a value for every inserted row with %s, or give "
                        "it a default",
                   t->display, strchr(buf_cstr(&missing), ',') ? "s" : "", buf_cstr(&missing),
                   strchr(buf_cstr(&missing), ',') ? "them" : "it", buf_cstr(&fix));
    buf_free(&missing);
    buf_free(&fix);
    return ok;
}

/* Adds column name with privilege priv to the two array literals. */
static bool want(buf *cols, buf *privs, const char *name, const char *priv)
{
    bool first = cols->len == 0;
    if (!buf_append_str(cols, first ? "{\"" : ",\"") ||
        !buf_append_str(privs, first ? "{" : ","))
        return false;
    for (const char *c = name; *c; c++)
        if (((*c == '"' || *c == '\\') && !buf_append_char(cols, '\\')) ||
            !buf_append_char(cols, *c))
            return false;
    return buf_append_char(cols, '"') && buf_append_str(privs, priv);
}

/* The check of target_check_privileges (write) or of
 * target_check_read_privileges (!write). */
static bool check_privileges(db *d, const target *t, const column_set *sets, size_t n,
                             bool write, bool update, bool *db_failed, buf *err)
{
    static const char *const updated[] = {"payload", "received_at", "status"};
    *db_failed = false;
    buf cols = BUF_INIT, privs = BUF_INIT;
    bool ok = true;
    for (size_t i = 0; ok && i < N_OWN_COLUMNS; i++)
        ok = want(&cols, &privs, own_columns[i], "SELECT") &&
             (!write || want(&cols, &privs, own_columns[i], "INSERT"));
    for (size_t i = 0; ok && write && i < n; i++)
        ok = want(&cols, &privs, sets[i].name, "INSERT");
    /* Reading only: the copy takes every column of the table. */
    for (int i = 0; ok && !write && i < t->n_columns; i++)
        ok = written_by_idemload(t->columns[i].name) ||
             want(&cols, &privs, t->columns[i].name, "SELECT");
    for (size_t i = 0; ok && write && update && i < sizeof updated / sizeof updated[0]; i++)
        ok = want(&cols, &privs, updated[i], "UPDATE");
    if (ok && write && t->has_deleted_at)
        ok = want(&cols, &privs, "deleted_at", "SELECT");
    ok = ok && buf_append_char(&cols, '}') && buf_append_char(&privs, '}');
    if (!ok) {
        buf_free(&cols);
        buf_free(&privs);
        buf_printf(err, "out of memory");
        return false;
    }
    const char *p[] = {t->oid, buf_cstr(&cols), buf_cstr(&privs)};
    db_result *r = db_query(d, SQL_MISSING_PRIVILEGES, 3, p);
    buf_free(&cols);
    buf_free(&privs);
    db_result *tmp = r && !t->distributed ? db_query(d, SQL_MAY_CREATE_TEMP, 0, NULL) : NULL;
    if (!r || (!t->distributed && !tmp)) {
        *db_failed = true;
        buf_printf(err, "cannot read the role's privileges on %s: %s (SQLSTATE %s)",
                   t->display, db_message(d), db_sqlstate(d));
        db_result_free(&r);
        return false;
    }
    buf lacks = BUF_INIT, grant = BUF_INIT;
    bool lacks_update = false;
    for (int i = 0; i < db_nrows(r); i++) {
        lacks_update |= strcmp(db_value(r, i, 0), "UPDATE") == 0;
        buf_printf(&lacks, "%s%s (%s)", i ? ", " : "", db_value(r, i, 0), db_value(r, i, 1));
        buf_printf(&grant, "%sGRANT %s (%s) ON %s TO %s", i ? "; " : "", db_value(r, i, 0),
                   db_value(r, i, 1), t->quoted, db_value(r, i, 2));
    }
    if (tmp && strcmp(db_value(tmp, 0, 0), "t") != 0) {
        buf_printf(&lacks, "%sTEMP on the database (for the staging table)",
                   lacks.len ? ", " : "");
        buf_printf(&grant, "%sGRANT TEMP ON DATABASE %s TO %s", grant.len ? "; " : "",
                   db_value(tmp, 0, 2), db_value(tmp, 0, 1));
    }
    ok = lacks.len == 0;
    /* The server would refuse it at the first chunk that needs it
     * (SQLSTATE 42501): SPEC.md counts that as the load's failure, exit
     * 4, and so does this check made before it, which loads nothing. */
    *db_failed = !ok;
    if (!ok)
        buf_printf(err, "permission denied for table %s (SQLSTATE 42501, checked before "
                        "reading a row): the role lacks %s; %s%s", t->display,
                   buf_cstr(&lacks), buf_cstr(&grant),
                   lacks_update ? " (or --on-conflict nothing, which updates nothing)" : "");
    buf_free(&lacks);
    buf_free(&grant);
    db_result_free(&r);
    db_result_free(&tmp);
    return ok;
}

bool target_check_privileges(db *d, const target *t, const column_set *sets, size_t n,
                             bool update, bool *db_failed, buf *err)
{
    return check_privileges(d, t, sets, n, true, update, db_failed, err);
}

bool target_check_read_privileges(db *d, const target *t, bool *db_failed, buf *err)
{
    return check_privileges(d, t, NULL, 0, false, false, db_failed, err);
}

void target_free(target *t)
{
    for (int i = 0; i < t->n_columns; i++) {
        free(t->columns[i].name);
        free(t->columns[i].type);
        free(t->columns[i].base_type);
    }
    free(t->columns);
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
    free(t->sql_name);
    free(t->conflict);
    free(t->active);
    memset(t, 0, sizeof *t);
}
