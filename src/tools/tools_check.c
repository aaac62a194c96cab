/*
 * tools_check.c - idemload check: is the target table safe for
 * idempotent loads?  (SPEC.md "Table safety tools".)
 *
 * Safe means: a valid unique index covers exactly the business key with
 * the active-row predicate (target.c decides which index counts), and no
 * two active rows share a key.  Key columns that allow NULL are reported
 * as a warning, not a failure: import rejects NULL keys itself, but other
 * writers could slip them past an index that treats NULLs as distinct.
 *
 * check_gather() collects the facts into a check_facts (tools_facts.h),
 * check_judge() derives the problems and warnings from them, and the text
 * and JSON reports are rendered from those alone.
 */
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

#include "util/exitcodes.h"
#include "output/log.h"
#include "db/advice.h"
#include "db/sql.h"
#include "tools/tools_facts.h"

/* Does the comma-separated column list name any business-key column? */
static bool touches_key(const char *cols)
{
    for (const char *p = cols; p && *p;) {
        size_t len = strcspn(p, ",");
        for (int k = 0; k < KEY_NCOLUMNS; k++)
            if (strlen(key_column_names[k]) == len && strncmp(key_column_names[k], p, len) == 0)
                return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

/* Why an index on the key counts or not, in plain words.  Mirrors the
 * rule of target.c: valid, not deferrable, exactly the key, "deleted_at IS NULL" as the
 * predicate when the table soft-deletes, none otherwise. */
static void index_note(const target *t, const unique_index *ix, const char *rebuild_args,
                       buf *out, bool *counts)
{
    *counts = false;
    if (ix == t->key_index) {
        *counts = true;
        buf_append_str(out, "valid; this is the index loads use");
    } else if (!ix->valid) {
        buf_printf(out, "INVALID%s: left by a failed CREATE INDEX CONCURRENTLY, or one still "
                        "running; does not count%s; drop it with DROP INDEX CONCURRENTLY, or "
                        "let 'idemload create-index%s' rebuild it",
                   ix->ready ? "" : " and not ready",
                   ix->ready ? ", yet writes still maintain it and it can reject them" : "",
                   tool_args(rebuild_args));
    } else if (ix->deferrable) {
        buf_append_str(out, "DEFERRABLE: INSERT ... ON CONFLICT refuses a table with a "
                            "deferrable unique constraint on its columns, so while it exists "
                            "no index makes loads safe; fix: drop the constraint and add it "
                            "again NOT DEFERRABLE");
    } else if (ix->has_expressions || !ix->covers_key) {
        buf_printf(out, "on (%s)%s, not exactly the business key; does not count",
                   ix->columns ? ix->columns : "", ix->has_expressions ? " with expressions" : "");
    } else if (t->has_deleted_at && !ix->predicate) {
        buf_append_str(out, "has no predicate, so soft-deleted rows would still conflict; "
                            "needs WHERE deleted_at IS NULL; does not count");
    } else if (t->has_deleted_at) {
        buf_printf(out, "predicate %s is not deleted_at IS NULL; does not count", ix->predicate);
    } else if (ix->predicate) {
        buf_printf(out, "partial (%s): rows outside it escape the check; does not count",
                   ix->predicate);
    } else if (!t->key_index) {
        buf_printf(out, "valid, but the DEFERRABLE %s keeps INSERT ... ON CONFLICT from "
                        "running on the table; does not count",
                   t->blocked_by ? t->blocked_by->name : "constraint");
    } else {
        *counts = true;
        buf_printf(out, "valid; a second index on the key (%s is used)", t->key_index->name);
    }
}

/* ---- gather ------------------------------------------------------------ */

/* The command that rebuilds an INVALID index: create-index drops an
 * INVALID index of the name it builds, so an index of another name than
 * the default needs that name as --index-name, or create-index would
 * build a second index and leave this one.  False: out of memory. */
static bool rebuild_args(const config *cfg, const target *t, const unique_index *ix, buf *out)
{
    buf default_name = BUF_INIT;
    target_default_index_name(t, &default_name);
    bool other = strcmp(ix->name, buf_cstr(&default_name)) != 0;
    buf_free(&default_name);
    return advice_target_args(out, cfg, other ? ix->name : NULL);
}

/* The unique indexes that touch the key (not the primary key and the
 * like), each with its note.  False: out of memory. */
static bool gather_indexes(const config *cfg, const target *t, check_facts *f)
{
    f->indexes = calloc((size_t)t->n_indexes + 1, sizeof *f->indexes);
    if (!f->indexes)
        return false;
    buf note = BUF_INIT, rebuild = BUF_INIT;
    bool ok = true;
    for (int i = 0; ok && i < t->n_indexes; i++) {
        const unique_index *ix = &t->indexes[i];
        if (!ix->has_expressions && !touches_key(ix->columns))
            continue;
        check_index *ci = &f->indexes[f->n_indexes];
        buf_clear(&note);
        buf_clear(&rebuild);
        if (!ix->valid && !rebuild_args(cfg, t, ix, &rebuild)) {
            ok = false;
            break;
        }
        index_note(t, ix, buf_cstr(&rebuild), &note, &ci->counts);
        ci->name = ix->name;
        ci->columns = ix->columns;
        ci->predicate = ix->predicate;
        ci->valid = ix->valid;
        ci->ready = ix->ready;
        ci->nulls_not_distinct = ix->nulls_not_distinct;
        ci->deferrable = ix->deferrable;
        ci->is_key_index = ix == t->key_index;
        ok = (ci->note = strdup(buf_cstr(&note))) != NULL;
        f->n_indexes += ok;
    }
    buf_free(&note);
    buf_free(&rebuild);
    return ok;
}

/* The key columns that allow NULL (SQL_NULLABLE_KEYS).  False: the
 * failure is on c->d. */
static bool gather_nullable(tool_ctx *c, check_facts *f)
{
    buf sql = BUF_INIT;
    db_result *r = NULL;
    bool ok = false;
    const char *p_oid[] = {c->t.oid};
    if (!tool_render(&sql, SQL_NULLABLE_KEYS, &c->t, NULL, NULL))
        db_set_out_of_memory(c->d);
    else if ((r = db_query(c->d, buf_cstr(&sql), 1, p_oid)) != NULL)
        ok = true;
    for (int i = 0; ok && r && i < db_nrows(r); i++)
        if (!strlist_add(&f->nullable, db_value(r, i, 0))) {
            db_set_out_of_memory(c->d);
            ok = false;
        }
    db_result_free(&r);
    buf_free(&sql);
    return ok;
}

/* Active rows with a NULL in the key (SQL_DUPLICATE_COUNT); -1 on error,
 * left on c->d. */
static long long null_key_rows(tool_ctx *c)
{
    buf sql = BUF_INIT;
    long long n = -1;
    if (!tool_render(&sql, SQL_DUPLICATE_COUNT, &c->t, NULL, NULL)) {
        db_set_out_of_memory(c->d);
    } else {
        db_result *r = db_query(c->d, buf_cstr(&sql), 0, NULL);
        if (r) {
            n = (long long)db_int(r, 0, 2);
            db_result_free(&r);
        }
    }
    buf_free(&sql);
    return n;
}

/* Every fact check reports.  Returns EXIT_OK, or the exit status of the
 * failure after logging it. */
static int check_gather(const config *cfg, tool_ctx *c, check_facts *f)
{
    const target *t = &c->t;
    memset(f, 0, sizeof *f);
    f->table = t->display;
    f->table_sql = t->sql_name;
    f->args = buf_cstr(&c->args);
    f->has_deleted_at = t->has_deleted_at;
    f->null_rows = -1;
    f->blocked_by = t->blocked_by ? t->blocked_by->name : NULL;
    buf shape = BUF_INIT;
    if (!target_check_shape(t, &shape))
        f->shape_problem = strdup(buf_cstr(&shape));
    buf_free(&shape);
    if (t->key_index) {
        f->key_index = t->key_index->name;
        f->key_predicate = t->key_index->predicate;
        f->key_nulls_not_distinct = t->key_index->nulls_not_distinct;
    }
    if (!gather_indexes(cfg, t, f)) {
        db_set_out_of_memory(c->d);
        return tool_db_failure(c->d, "cannot list the indexes");
    }
    if (!gather_nullable(c, f))
        return tool_db_failure(c->d, "cannot read the key columns");
    /* With a usable unique index and NOT NULL key columns the index itself
     * guarantees there is no duplicate: skip the scan of a big table. */
    f->dups_counted = !(t->key_index && f->nullable.n == 0);
    if (f->dups_counted && !tool_duplicates(c, cfg->limit, &f->dups))
        return tool_db_failure(c->d, "cannot count duplicate keys");
    if (f->nullable.n > 0 && (f->null_rows = null_key_rows(c)) < 0)
        return tool_db_failure(c->d, "cannot count rows with a NULL key");
    return EXIT_OK;
}

void check_facts_free(check_facts *f)
{
    for (size_t i = 0; i < f->n_indexes; i++)
        free(f->indexes[i].note);
    free(f->indexes);
    free(f->shape_problem);
    strlist_free(&f->nullable);
    dup_list_free(&f->dups);
    memset(f, 0, sizeof *f);
}

/* ---- judge and render -------------------------------------------------- */

static bool nulls_covered(const check_facts *f)
{
    return f->key_index && f->key_nulls_not_distinct;
}

/* The nullable key columns, "channel, out_trade_no". */
static void nullable_list(const check_facts *f, buf *out)
{
    for (size_t i = 0; i < f->nullable.n; i++)
        buf_printf(out, "%s%s", i ? ", " : "", f->nullable.v[i]);
}

/* What makes the table unsafe (problems) and what deserves a look
 * (warnings), in the words both renderings use. */
static void check_judge(const check_facts *f, strlist *problems, strlist *warnings)
{
    buf line = BUF_INIT, cols = BUF_INIT;
    for (size_t i = 0; i < f->n_indexes; i++)
        if (!f->indexes[i].valid) {
            buf_clear(&line);
            buf_printf(&line, "index %s is INVALID and does not count", f->indexes[i].name);
            strlist_add(warnings, buf_cstr(&line));
        }
    if (f->blocked_by) {
        buf_clear(&line);
        buf_printf(&line, "the unique constraint %s on (%s) is DEFERRABLE, and INSERT ... ON "
                          "CONFLICT refuses such a table", f->blocked_by, KEY_COLUMNS);
        strlist_add(problems, buf_cstr(&line));
    } else if (!f->key_index) {
        buf_clear(&line);
        buf_printf(&line, "no valid unique index covers exactly (%s)%s", KEY_COLUMNS,
                   f->has_deleted_at ? " WHERE deleted_at IS NULL" : "");
        strlist_add(problems, buf_cstr(&line));
    }
    nullable_list(f, &cols);
    if (f->nullable.n > 0 && !nulls_covered(f)) {
        buf_clear(&line);
        buf_printf(&line, "key columns %s allow NULL and no NULLS NOT DISTINCT index covers "
                          "them (fix: ALTER TABLE %s ALTER COLUMN ... SET NOT NULL)",
                   buf_cstr(&cols), f->table_sql ? f->table_sql : f->table);
        strlist_add(warnings, buf_cstr(&line));
    }
    if (f->nullable.n > 0 && f->null_rows > 0) {
        buf_clear(&line);
        buf_printf(&line, "%lld active rows have a NULL in the key", f->null_rows);
        strlist_add(warnings, buf_cstr(&line));
    }
    if (f->dups.keys > 0) {
        buf_clear(&line);
        buf_printf(&line, "%lld duplicate active keys (%lld surplus rows)", f->dups.keys,
                   f->dups.surplus);
        strlist_add(problems, buf_cstr(&line));
    }
    if (f->shape_problem)
        strlist_add(problems, f->shape_problem);
    buf_free(&line);
    buf_free(&cols);
}

bool check_safe(const check_facts *f)
{
    return f->key_index && f->dups.keys == 0 && !f->shape_problem;
}

static void render_indexes_text(const check_facts *f, FILE *fp)
{
    if (f->key_index)
        fprintf(fp, "  unique index on the business key: %s, %s%s\n", f->key_index,
                f->key_predicate ? "WHERE " : "no predicate",
                f->key_predicate ? f->key_predicate : "");
    else
        fprintf(fp, "  unique index on the business key: NONE usable\n");
    for (size_t i = 0; i < f->n_indexes; i++)
        if (!f->indexes[i].is_key_index)
            fprintf(fp, "    %s: %s\n", f->indexes[i].name, f->indexes[i].note);
}

static void render_nullable_text(const check_facts *f, FILE *fp)
{
    if (f->nullable.n == 0) {
        fprintf(fp, "  key columns that allow NULL: none\n");
        return;
    }
    buf cols = BUF_INIT;
    nullable_list(f, &cols);
    fprintf(fp, "  key columns that allow NULL: %s (%s)\n", buf_cstr(&cols),
            nulls_covered(f) ? "covered: the unique index is NULLS NOT DISTINCT"
                             : "no NULLS NOT DISTINCT index covers them: rows with a NULL in the "
                               "key never conflict; idemload rejects such rows, other writers "
                               "may not");
    fprintf(fp, "  active rows with a NULL in the key: %lld\n", f->null_rows);
    buf_free(&cols);
}

static void render_dups_text(const check_facts *f, FILE *fp)
{
    const dup_list *d = &f->dups;
    bool partial = (long long)d->n < d->keys;
    if (!f->dups_counted) {
        fprintf(fp, "  duplicate active keys: none (the unique index guarantees it)\n");
    } else if (d->keys == 0) {
        fprintf(fp, "  duplicate active keys: none\n");
    } else {
        fprintf(fp, "  duplicate active keys: %lld (%lld surplus rows)%s\n", d->keys, d->surplus,
                partial ? "; the largest:" : ":");
        tool_print_duplicates(fp, "    ", d);
        if (partial)
            fprintf(fp, "    (%zu of %lld shown; --limit 0 lists all)\n", d->n, d->keys);
    }
}

void check_render_text(const check_facts *f, FILE *fp)
{
    strlist problems = {0}, warnings = {0};
    check_judge(f, &problems, &warnings);
    fprintf(fp, "table %s\n", f->table);
    render_indexes_text(f, fp);
    render_nullable_text(f, fp);
    render_dups_text(f, fp);
    if (check_safe(f)) {
        fprintf(fp, "verdict: safe for import\n");
    } else {
        fprintf(fp, "verdict: NOT safe for import: ");
        for (size_t k = 0; k < problems.n; k++)
            fprintf(fp, "%s%s", k ? "; " : "", problems.v[k]);
        fputc('\n', fp);
        const char *args = tool_args(f->args);
        if (f->dups.keys > 0)
            fprintf(fp, "fix: 'idemload dedupe --apply%s' keeps the earliest active row of each "
                        "key, then 'idemload create-index%s' builds the index\n", args, args);
        else if (f->blocked_by)
            fprintf(fp, "fix: drop the constraint %s and add it again NOT DEFERRABLE\n",
                    f->blocked_by);
        else if (!f->key_index)
            fprintf(fp, "fix: 'idemload create-index%s' builds the index without blocking "
                        "writes\n", args);
    }
    strlist_free(&problems);
    strlist_free(&warnings);
}

static json_t *indexes_json(const check_facts *f)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < f->n_indexes; i++) {
        const check_index *ix = &f->indexes[i];
        json_array_append_new(
            arr, json_pack("{s:o, s:o, s:o, s:b, s:b, s:b, s:b, s:b, s:o}", "name",
                           tool_json_text(ix->name), "columns", tool_json_text(ix->columns),
                           "predicate", tool_json_text(ix->predicate), "valid", ix->valid,
                           "ready", ix->ready, "nulls_not_distinct", ix->nulls_not_distinct,
                           "deferrable", ix->deferrable, "counts", ix->counts, "note",
                           tool_json_text(ix->note)));
    }
    return arr;
}

json_t *check_render_json(const check_facts *f)
{
    strlist problems = {0}, warnings = {0};
    check_judge(f, &problems, &warnings);
    json_t *key_index = f->key_index
        ? json_pack("{s:o, s:o, s:b}", "name", tool_json_text(f->key_index), "predicate",
                    tool_json_text(f->key_predicate), "nulls_not_distinct",
                    f->key_nulls_not_distinct)
        : json_null();
    json_t *dups = json_pack("{s:b, s:I, s:I, s:o}", "counted", f->dups_counted, "keys",
                             (json_int_t)f->dups.keys, "surplus_rows", (json_int_t)f->dups.surplus,
                             "sample", tool_duplicates_json(&f->dups));
    json_t *root = json_pack(
        "{s:s, s:o, s:b, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o}", "command", "check", "table",
        tool_json_text(f->table), "safe", check_safe(f), "unique_index", key_index, "indexes",
        indexes_json(f), "nullable_key_columns", strlist_json(&f->nullable),
        "nulls_not_distinct", nulls_covered(f), "null_key_rows",
        f->null_rows >= 0 ? json_integer(f->null_rows) : json_null(), "duplicates", dups,
        "problems", strlist_json(&problems), "warnings", strlist_json(&warnings));
    strlist_free(&problems);
    strlist_free(&warnings);
    return root;
}

int tools_check(const config *cfg)
{
    tool_ctx c;
    check_facts f;
    memset(&f, 0, sizeof f);
    int code = tool_open(cfg, &c);
    if (code == EXIT_OK)
        code = check_gather(cfg, &c, &f);
    if (code == EXIT_OK) {
        check_render_text(&f, c.human);
        code = check_safe(&f) ? EXIT_OK : EXIT_FINDINGS;
        if (cfg->report_path) {
            json_t *root = check_render_json(&f);
            if (!tool_write_report(root, cfg->report_path))
                code = exit_worst(code, EXIT_INPUT);
            json_decref(root);
        }
    }
    check_facts_free(&f);
    tool_close(&c);
    return code;
}
