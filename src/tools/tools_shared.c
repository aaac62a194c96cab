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
#include "util/signals.h"
#include "db/sql.h"

int tool_open(const config *cfg, tool_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->human = cfg->report_path && strcmp(cfg->report_path, "-") == 0 ? stderr : stdout;
    buf err = BUF_INIT;
    int code = EXIT_OK;
    c->d = db_connect(cfg->dbname, &err);
    if (!c->d) {
        /* A server we cannot reach is the caller's configuration (-d,
         * PG* variables): the tool could not even start to look. */
        log_error("%s", buf_cstr(&err));
        code = EXIT_USAGE;
        goto out;
    }
    signals_set_hook(db_cancel, c->d);
    bool missing = false;
    if (!target_resolve(c->d, cfg->table, &c->t, &missing, &err)) {
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
}

int tool_db_failure(const db *d, const char *what)
{
    const char *state = db_sqlstate(d);
    if (signals_interrupted())
        log_error("%s: interrupted", what);
    else
        log_error("%s: %s (SQLSTATE %s)", what, db_message(d), *state ? state : "none");
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

db_result *tool_duplicates(tool_ctx *c, size_t limit, long long *keys, long long *surplus)
{
    buf sql = BUF_INIT, lim = BUF_INIT;
    db_result *r = NULL;
    *keys = *surplus = 0;
    if (!tool_render(&sql, SQL_DUPLICATES, &c->t, NULL, NULL))
        goto out;
    if (limit > 0)
        buf_printf(&lim, "%zu", limit);
    const char *params[] = {limit > 0 ? buf_cstr(&lim) : NULL};
    r = db_query(c->d, buf_cstr(&sql), 1, params);
    if (r && db_nrows(r) > 0) {
        *keys = (long long)db_int(r, 0, 7);
        *surplus = (long long)db_int(r, 0, 8);
    }
out:
    buf_free(&sql);
    buf_free(&lim);
    return r;
}

void tool_print_duplicates(FILE *fp, const char *indent, const db_result *r)
{
    static const char *const heads[] = {KEY_COLUMN_0, KEY_COLUMN_1, KEY_COLUMN_2, KEY_COLUMN_3,
                                        "rows", "first_id", "last_id"};
    enum { NCOL = 7 };
    int width[NCOL];
    for (int k = 0; k < NCOL; k++)
        width[k] = (int)strlen(heads[k]);
    for (int i = 0; i < db_nrows(r); i++)
        for (int k = 0; k < NCOL; k++) {
            int w = (int)strlen(db_value(r, i, k));
            if (w > width[k])
                width[k] = w;
        }
    fputs(indent, fp);
    for (int k = 0; k < NCOL; k++)
        fprintf(fp, "%-*s%s", k < NCOL - 1 ? width[k] : 0, heads[k], k < NCOL - 1 ? "  " : "\n");
    for (int i = 0; i < db_nrows(r); i++) {
        fputs(indent, fp);
        for (int k = 0; k < NCOL; k++)
            fprintf(fp, "%-*s%s", k < NCOL - 1 ? width[k] : 0, db_value(r, i, k),
                    k < NCOL - 1 ? "  " : "\n");
    }
}

json_t *tool_json_text(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_null();
}

void tool_key_to_json(json_t *obj, const db_result *r, int ri, int col)
{
    /* tenant_id is a number; the other key columns are text. */
    json_object_set_new(obj, key_column_names[0], json_integer((json_int_t)db_int(r, ri, col)));
    for (int k = 1; k < KEY_NCOLUMNS; k++)
        json_object_set_new(obj, key_column_names[k], tool_json_text(db_value(r, ri, col + k)));
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

void tool_key_to_text(buf *out, const db_result *r, int ri, int col)
{
    for (int k = 0; k < KEY_NCOLUMNS; k++) {
        buf_printf(out, "%s%s=", k ? " " : "", key_column_names[k]);
        append_value(out, db_value(r, ri, col + k));
    }
}

json_t *tool_duplicates_json(const db_result *r)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < db_nrows(r); i++) {
        json_t *o = json_object();
        tool_key_to_json(o, r, i, 0);
        json_object_set_new(o, "count", json_integer((json_int_t)db_int(r, i, 4)));
        json_object_set_new(o, "first_id", json_integer((json_int_t)db_int(r, i, 5)));
        json_object_set_new(o, "last_id", json_integer((json_int_t)db_int(r, i, 6)));
        json_array_append_new(arr, o);
    }
    return arr;
}

bool tool_write_report(json_t *root, const char *path)
{
    if (!root) {
        log_error("out of memory building the report");
        return false;
    }
    if (strcmp(path, "-") == 0) {
        if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
            fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
            log_error("cannot write the report to standard output: %s", strerror(errno));
            return false;
        }
        return true;
    }
    if (json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
        log_error("cannot write the report to %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}
