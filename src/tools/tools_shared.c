/*
 * tools_shared.c - common ground of check, dedupe and create-index (see
 * tools_shared.h).
 */
#include "tools/tools_shared.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/exitcodes.h"
#include "output/log.h"
#include "output/report.h"
#include "util/signals.h"
#include "db/advice.h"
#include "db/sql.h"

int tool_open(const config *cfg, tool_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->human = cfg->report_path && strcmp(cfg->report_path, "-") == 0 ? stderr : stdout;
    buf err = BUF_INIT;
    int code = EXIT_OK;
    if (!advice_target_args(&c->args, cfg, NULL)) {
        log_error("out of memory");
        code = EXIT_INPUT;
        goto out;
    }
    c->d = db_connect(cfg->dbname, &err, &code);
    if (!c->d) {
        log_error("%s", buf_cstr(&err));
        goto out;
    }
    signals_set_hook(db_cancel, c->d);
    bool missing = false;
    if (!target_resolve(c->d, cfg, &c->t, &missing, &err)) {
        log_error("%s", buf_cstr(&err));
        code = missing ? EXIT_USAGE : db_failure_exit(c->d);
        target_free(&c->t);
        goto out;
    }
    c->resolved = true;
out:
    buf_free(&err);
    return code;
}

void tool_close(tool_ctx *c)
{
    signals_set_hook(NULL, NULL);
    if (c->resolved)
        target_free(&c->t);
    c->resolved = false;
    db_close(&c->d);
    buf_free(&c->args);
}

void tool_failure_capture(tool_failure *f, const db *d)
{
    f->interrupted = signals_interrupted();
    snprintf(f->sqlstate, sizeof f->sqlstate, "%s", db_sqlstate(d));
    free(f->message);
    f->message = strdup(db_message(d));
}

void tool_failure_log(const tool_failure *f, const char *what)
{
    if (f->interrupted)
        log_error("%s: interrupted", what);
    else
        log_error("%s: %s (SQLSTATE %s)", what, f->message ? f->message : "out of memory",
                  *f->sqlstate ? f->sqlstate : "none");
}

void tool_failure_free(tool_failure *f)
{
    free(f->message);
    memset(f, 0, sizeof *f);
}

int tool_db_failure(const db *d, const char *what)
{
    tool_failure f = {0};
    tool_failure_capture(&f, d);
    tool_failure_log(&f, what);
    tool_failure_free(&f);
    return db_failure_exit(d);
}

bool tool_render(buf *out, const char *tmpl, const target *t, const char *schema,
                 const char *index)
{
    const char *names[4] = {"table", "active"};
    const char *values[4] = {t->quoted, t->active};
    int n = 2;
    if (schema) {
        names[n] = "schema";
        values[n++] = schema;
    }
    if (index) {
        names[n] = "index";
        values[n++] = index;
    }
    buf_clear(out);
    return sql_render(out, tmpl, n, names, values);
}

/* ---- facts ------------------------------------------------------------- */

bool tool_key_set(tool_key *k, const char *const col[KEY_NCOLUMNS])
{
    memset(k, 0, sizeof *k);
    for (int i = 0; i < KEY_NCOLUMNS; i++)
        if (!(k->col[i] = strdup(col[i] ? col[i] : ""))) {
            tool_key_free(k);
            return false;
        }
    return true;
}

bool tool_key_copy(tool_key *k, const db_result *r, int ri, int col)
{
    const char *cols[KEY_NCOLUMNS];
    for (int i = 0; i < KEY_NCOLUMNS; i++)
        cols[i] = db_value(r, ri, col + i);
    return tool_key_set(k, cols);
}

void tool_key_free(tool_key *k)
{
    for (int i = 0; i < KEY_NCOLUMNS; i++) {
        free(k->col[i]);
        k->col[i] = NULL;
    }
}

void tool_key_to_json(json_t *obj, const tool_key *k)
{
    /* tenant_id is a number; the other key columns are text. */
    json_object_set_new(obj, key_column_names[0], json_integer(strtoll(k->col[0], NULL, 10)));
    for (int i = 1; i < KEY_NCOLUMNS; i++)
        json_object_set_new(obj, key_column_names[i], tool_json_text(k->col[i]));
}

/* A value as it reads unambiguously in a line: quoted when it is empty or
 * holds a space, a quote or an equals sign. */
static void append_value(buf *out, const char *v)
{
    if (*v && !strpbrk(v, " \t\"=")) {
        buf_append_str(out, v);
        return;
    }
    buf_append_char(out, '"');
    for (; *v; v++) {
        if (*v == '"' || *v == '\\')
            buf_append_char(out, '\\');
        buf_append_char(out, *v);
    }
    buf_append_char(out, '"');
}

void tool_key_to_text(buf *out, const tool_key *k)
{
    for (int i = 0; i < KEY_NCOLUMNS; i++) {
        buf_printf(out, "%s%s=", i ? " " : "", key_column_names[i]);
        append_value(out, k->col[i]);
    }
}

bool dup_list_add(dup_list *l, const char *const key[KEY_NCOLUMNS], long long count,
                  long long first_id, long long last_id)
{
    dup_entry *grown = realloc(l->items, (l->n + 1) * sizeof *grown);
    if (!grown)
        return false;
    l->items = grown;
    dup_entry *e = &l->items[l->n];
    if (!tool_key_set(&e->key, key))
        return false;
    e->count = count;
    e->first_id = first_id;
    e->last_id = last_id;
    l->n++;
    return true;
}

void dup_list_free(dup_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        tool_key_free(&l->items[i].key);
    free(l->items);
    memset(l, 0, sizeof *l);
}

bool tool_duplicates(tool_ctx *c, size_t limit, dup_list *out)
{
    buf sql = BUF_INIT, lim = BUF_INIT;
    db_result *r = NULL;
    bool ok = false;
    memset(out, 0, sizeof *out);
    if (!tool_render(&sql, SQL_DUPLICATES, &c->t, NULL, NULL) ||
        (limit > 0 && !buf_printf(&lim, "%zu", limit))) {
        db_set_out_of_memory(c->d);
        goto out;
    }
    const char *params[] = {limit > 0 ? buf_cstr(&lim) : NULL};
    if (!(r = db_query(c->d, buf_cstr(&sql), 1, params)))
        goto out;
    for (int i = 0; i < db_nrows(r); i++) {
        const char *key[KEY_NCOLUMNS];
        for (int k = 0; k < KEY_NCOLUMNS; k++)
            key[k] = db_value(r, i, k);
        if (!dup_list_add(out, key, db_int(r, i, 4), db_int(r, i, 5), db_int(r, i, 6))) {
            db_set_out_of_memory(c->d);
            dup_list_free(out);
            goto out;
        }
    }
    if (db_nrows(r) > 0) {
        out->keys = (long long)db_int(r, 0, 7);
        out->surplus = (long long)db_int(r, 0, 8);
    }
    ok = true;
out:
    db_result_free(&r);
    buf_free(&sql);
    buf_free(&lim);
    return ok;
}

enum { DUP_NCOL = KEY_NCOLUMNS + 3 };

/* The cells of one listing line; the numbers are written into nums. */
static void dup_cells(const dup_entry *e, char nums[3][24], const char *cells[DUP_NCOL])
{
    snprintf(nums[0], sizeof nums[0], "%lld", e->count);
    snprintf(nums[1], sizeof nums[1], "%lld", e->first_id);
    snprintf(nums[2], sizeof nums[2], "%lld", e->last_id);
    for (int k = 0; k < KEY_NCOLUMNS; k++)
        cells[k] = e->key.col[k];
    for (int k = 0; k < 3; k++)
        cells[KEY_NCOLUMNS + k] = nums[k];
}

static void print_cells(FILE *fp, const char *indent, const int width[DUP_NCOL],
                        const char *const cells[DUP_NCOL])
{
    fputs(indent, fp);
    for (int k = 0; k < DUP_NCOL; k++)
        fprintf(fp, "%-*s%s", k < DUP_NCOL - 1 ? width[k] : 0, cells[k],
                k < DUP_NCOL - 1 ? "  " : "\n");
}

void tool_print_duplicates(FILE *fp, const char *indent, const dup_list *l)
{
    static const char *const heads[DUP_NCOL] = {KEY_COLUMN_NAMES "rows", "first_id", "last_id"};
    char nums[3][24];
    const char *cells[DUP_NCOL];
    int width[DUP_NCOL];
    for (int k = 0; k < DUP_NCOL; k++)
        width[k] = (int)strlen(heads[k]);
    for (size_t i = 0; i < l->n; i++) {
        dup_cells(&l->items[i], nums, cells);
        for (int k = 0; k < DUP_NCOL; k++)
            if ((int)strlen(cells[k]) > width[k])
                width[k] = (int)strlen(cells[k]);
    }
    print_cells(fp, indent, width, heads);
    for (size_t i = 0; i < l->n; i++) {
        dup_cells(&l->items[i], nums, cells);
        print_cells(fp, indent, width, cells);
    }
}

json_t *tool_duplicates_json(const dup_list *l)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < l->n; i++) {
        const dup_entry *e = &l->items[i];
        json_t *o = json_object();
        tool_key_to_json(o, &e->key);
        json_object_set_new(o, "count", json_integer((json_int_t)e->count));
        json_object_set_new(o, "first_id", json_integer((json_int_t)e->first_id));
        json_object_set_new(o, "last_id", json_integer((json_int_t)e->last_id));
        json_array_append_new(arr, o);
    }
    return arr;
}

bool strlist_add(strlist *l, const char *s)
{
    char **grown = realloc(l->v, (l->n + 1) * sizeof *grown);
    if (!grown)
        return false;
    l->v = grown;
    if (!(l->v[l->n] = strdup(s)))
        return false;
    l->n++;
    return true;
}

void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

json_t *strlist_json(const strlist *l)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < l->n; i++)
        json_array_append_new(arr, tool_json_text(l->v[i]));
    return arr;
}

/* ---- output ------------------------------------------------------------ */

json_t *tool_json_text(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_null();
}

bool tool_write_report(json_t *root, const char *path)
{
    if (!root) {
        log_error("out of memory building the report");
        return false;
    }
    buf err = BUF_INIT;
    bool ok = report_dump_json(root, path, &err);
    if (!ok)
        log_error("%s", buf_cstr(&err));
    buf_free(&err);
    return ok;
}
