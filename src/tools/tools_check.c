/*
 * tools_check.c - idemload check: is the target table safe for
 * idempotent loads?  (SPEC.md "Table safety tools".)
 *
 * Safe means: a valid unique index covers exactly the business key with
 * the active-row predicate (target.c decides which index counts), and no
 * two active rows share a key.  Key columns that allow NULL are reported
 * as a warning, not a failure: import rejects NULL keys itself, but other
 * writers could slip them past an index that treats NULLs as distinct.
 */
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

#include "util/exitcodes.h"
#include "output/log.h"
#include "db/sql.h"
#include "tools/tools_shared.h"

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
 * rule of target.c: valid, exactly the key, "deleted_at IS NULL" as the
 * predicate when the table soft-deletes, none otherwise. */
static void index_note(const target *t, const unique_index *ix, buf *out, bool *counts)
{
    *counts = false;
    if (ix == t->key_index) {
        *counts = true;
        buf_append_str(out, "valid; this is the index loads use");
    } else if (!ix->valid) {
        buf_printf(out, "INVALID%s: left by a failed CREATE INDEX CONCURRENTLY, or one still "
                        "running; does not count%s; drop it with DROP INDEX CONCURRENTLY, or "
                        "let 'idemload create-index' rebuild it",
                   ix->ready ? "" : " and not ready",
                   ix->ready ? ", yet writes still maintain it and it can reject them" : "");
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
    } else {
        *counts = true;
        buf_printf(out, "valid; a second index on the key (%s is used)", t->key_index->name);
    }
}

/* Active rows with a NULL in the key (SQL_DUPLICATE_COUNT); -1 on error. */
static long long null_key_rows(tool_ctx *c)
{
    buf sql = BUF_INIT;
    long long n = -1;
    if (tool_render(&sql, SQL_DUPLICATE_COUNT, &c->t, NULL, NULL)) {
        db_result *r = db_query(c->d, buf_cstr(&sql), 0, NULL);
        if (r) {
            n = (long long)db_int(r, 0, 2);
            db_result_free(&r);
        }
    }
    buf_free(&sql);
    return n;
}

int tools_check(const config *cfg)
{
    tool_ctx c;
    int code = tool_open(cfg, &c);
    db_result *nullable = NULL, *dups = NULL;
    json_t *root = NULL;
    buf line = BUF_INIT, cols = BUF_INIT;
    if (code != EXIT_OK)
        goto out;
    const target *t = &c.t;
    FILE *fp = c.human;

    const char *p_oid[] = {t->oid};
    if (tool_render(&line, SQL_NULLABLE_KEYS, t, NULL, NULL))
        nullable = db_query(c.d, buf_cstr(&line), 1, p_oid);
    if (!nullable) {
        code = tool_db_failure(c.d, "cannot read the key columns");
        goto out;
    }
    int n_nullable = db_nrows(nullable);
    bool nulls_covered = t->key_index && t->key_index->nulls_not_distinct;

    /* With a usable unique index and NOT NULL key columns the index itself
     * guarantees there is no duplicate: skip the scan of a big table. */
    bool counted = !(t->key_index && n_nullable == 0);
    long long dup_keys = 0, surplus = 0, null_rows = -1;
    if (counted) {
        dups = tool_duplicates(&c, cfg->limit, &dup_keys, &surplus);
        if (!dups) {
            code = tool_db_failure(c.d, "cannot count duplicate keys");
            goto out;
        }
    }
    if (n_nullable > 0) {
        null_rows = null_key_rows(&c);
        if (null_rows < 0) {
            code = tool_db_failure(c.d, "cannot count rows with a NULL key");
            goto out;
        }
    }

    json_t *problems = json_array(), *warnings = json_array(), *indexes = json_array();
    root = json_object();
    json_object_set_new(root, "command", json_string("check"));
    json_object_set_new(root, "table", tool_json_text(t->display));
    json_object_set_new(root, "safe", json_false()); /* set below; placed first for readers */

    /* The index. */
    fprintf(fp, "table %s\n", t->display);
    if (t->key_index)
        fprintf(fp, "  unique index on the business key: %s, %s%s\n", t->key_index->name,
                t->key_index->predicate ? "WHERE " : "no predicate",
                t->key_index->predicate ? t->key_index->predicate : "");
    else
        fprintf(fp, "  unique index on the business key: NONE usable\n");
    for (int i = 0; i < t->n_indexes; i++) {
        const unique_index *ix = &t->indexes[i];
        if (!ix->has_expressions && !touches_key(ix->columns))
            continue; /* the primary key and the like */
        bool counts;
        buf_clear(&line);
        index_note(t, ix, &line, &counts);
        if (ix != t->key_index)
            fprintf(fp, "    %s: %s\n", ix->name, buf_cstr(&line));
        json_t *o = json_object();
        json_object_set_new(o, "name", tool_json_text(ix->name));
        json_object_set_new(o, "columns", tool_json_text(ix->columns));
        json_object_set_new(o, "predicate", tool_json_text(ix->predicate));
        json_object_set_new(o, "valid", json_boolean(ix->valid));
        json_object_set_new(o, "ready", json_boolean(ix->ready));
        json_object_set_new(o, "nulls_not_distinct", json_boolean(ix->nulls_not_distinct));
        json_object_set_new(o, "counts", json_boolean(counts));
        json_object_set_new(o, "note", tool_json_text(buf_cstr(&line)));
        json_array_append_new(indexes, o);
        if (!ix->valid) {
            buf_clear(&line);
            buf_printf(&line, "index %s is INVALID and does not count", ix->name);
            json_array_append_new(warnings, tool_json_text(buf_cstr(&line)));
        }
    }
    if (t->key_index) {
        json_object_set_new(root, "unique_index",
                            json_pack("{s:o, s:o, s:b}", "name", tool_json_text(t->key_index->name),
                                      "predicate", tool_json_text(t->key_index->predicate),
                                      "nulls_not_distinct", t->key_index->nulls_not_distinct));
    } else {
        json_object_set_new(root, "unique_index", json_null());
        buf_clear(&line);
        buf_printf(&line, "no valid unique index covers exactly (%s)%s", KEY_COLUMNS,
                   t->has_deleted_at ? " WHERE deleted_at IS NULL" : "");
        json_array_append_new(problems, tool_json_text(buf_cstr(&line)));
    }
    json_object_set_new(root, "indexes", indexes);

    /* Key columns that allow NULL. */
    json_t *jnull = json_array();
    for (int i = 0; i < n_nullable; i++) {
        buf_printf(&cols, "%s%s", i ? ", " : "", db_value(nullable, i, 0));
        json_array_append_new(jnull, tool_json_text(db_value(nullable, i, 0)));
    }
    if (n_nullable == 0) {
        fprintf(fp, "  key columns that allow NULL: none\n");
    } else {
        fprintf(fp, "  key columns that allow NULL: %s (%s)\n", buf_cstr(&cols),
                nulls_covered ? "covered: the unique index is NULLS NOT DISTINCT"
                              : "no NULLS NOT DISTINCT index covers them: rows with a NULL in the "
                                "key never conflict; idemload rejects such rows, other writers "
                                "may not");
        fprintf(fp, "  active rows with a NULL in the key: %lld\n", null_rows);
        if (!nulls_covered) {
            buf_clear(&line);
            buf_printf(&line, "key columns %s allow NULL and no NULLS NOT DISTINCT index covers "
                              "them (fix: ALTER TABLE %s ALTER COLUMN ... SET NOT NULL)",
                       buf_cstr(&cols), t->display);
            json_array_append_new(warnings, tool_json_text(buf_cstr(&line)));
        }
        if (null_rows > 0) {
            buf_clear(&line);
            buf_printf(&line, "%lld active rows have a NULL in the key", null_rows);
            json_array_append_new(warnings, tool_json_text(buf_cstr(&line)));
        }
    }
    json_object_set_new(root, "nullable_key_columns", jnull);
    json_object_set_new(root, "nulls_not_distinct", json_boolean(nulls_covered));
    json_object_set_new(root, "null_key_rows",
                        null_rows >= 0 ? json_integer(null_rows) : json_null());

    /* Duplicates. */
    if (!counted) {
        fprintf(fp, "  duplicate active keys: none (the unique index guarantees it)\n");
    } else if (dup_keys == 0) {
        fprintf(fp, "  duplicate active keys: none\n");
    } else {
        fprintf(fp, "  duplicate active keys: %lld (%lld surplus rows)%s\n", dup_keys, surplus,
                db_nrows(dups) < dup_keys ? "; the largest:" : ":");
        tool_print_duplicates(fp, "    ", dups);
        if (db_nrows(dups) < dup_keys)
            fprintf(fp, "    (%d of %lld shown; --limit 0 lists all)\n", db_nrows(dups), dup_keys);
        buf_clear(&line);
        buf_printf(&line, "%lld duplicate active keys (%lld surplus rows)", dup_keys, surplus);
        json_array_append_new(problems, tool_json_text(buf_cstr(&line)));
    }
    json_object_set_new(root, "duplicates",
                        json_pack("{s:b, s:I, s:I, s:o}", "counted", counted, "keys",
                                  (json_int_t)dup_keys, "surplus_rows", (json_int_t)surplus,
                                  "sample", dups ? tool_duplicates_json(dups) : json_array()));

    /* Verdict. */
    bool safe = json_array_size(problems) == 0;
    if (safe) {
        fprintf(fp, "verdict: safe for import\n");
    } else {
        fprintf(fp, "verdict: NOT safe for import: ");
        for (size_t k = 0; k < json_array_size(problems); k++)
            fprintf(fp, "%s%s", k ? "; " : "", json_string_value(json_array_get(problems, k)));
        fputc('\n', fp);
        if (dup_keys > 0)
            fprintf(fp, "fix: 'idemload dedupe --apply' keeps the earliest active row of each "
                        "key, then 'idemload create-index' builds the index\n");
        else if (!t->key_index)
            fprintf(fp, "fix: 'idemload create-index' builds the index without blocking writes\n");
    }
    json_object_set_new(root, "safe", json_boolean(safe));
    json_object_set_new(root, "problems", problems);
    json_object_set_new(root, "warnings", warnings);
    code = safe ? EXIT_OK : EXIT_FINDINGS;
    if (cfg->report_path && !tool_write_report(root, cfg->report_path))
        code = exit_worst(code, EXIT_INPUT);
out:
    json_decref(root);
    db_result_free(&nullable);
    db_result_free(&dups);
    buf_free(&line);
    buf_free(&cols);
    tool_close(&c);
    return code;
}
