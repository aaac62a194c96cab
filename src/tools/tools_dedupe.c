/*
 * tools_dedupe.c - idemload dedupe: list the duplicate active keys of the
 * target table, or with --apply soft-delete all but the earliest active
 * row of each (received_at, then id).  (SPEC.md "Table safety tools".)
 *
 * --apply works in batches of --batch-size keys, each one statement and so
 * one short transaction (SQL_DEDUPE_BATCH), walking the keys in order, so
 * it never holds row locks on many keys at once and an interrupt loses at
 * most the batch in flight.  It keeps a key whole when a row it would
 * soft-delete holds a final status, unless --include-final: a later row
 * with a final status is usually the one that tells the truth.
 *
 * Exit status: listing: 0 no duplicates, 1 some (like check).  --apply: 0
 * when every duplicate key was resolved (or there was none), 1 when some
 * keys were refused for their final status.  2/4/130 as everywhere.
 */
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

#include "output/log.h"
#include "util/signals.h"
#include "db/sql.h"
#include "tools/tools_distributed.h"
#include "tools/tools_shared.h"

/* Retries of one batch after a deadlock or serialization failure with
 * another writer; the batch rolled back whole, so running it again is
 * safe. */
#define BATCH_RETRIES 5

static int dedupe_list(const config *cfg, tool_ctx *c)
{
    const target *t = &c->t;
    FILE *fp = c->human;
    long long keys = 0, surplus = 0;
    db_result *dups = NULL, *blocked = NULL;
    json_t *root = NULL;
    buf sql = BUF_INIT, finals = BUF_INIT, line = BUF_INIT;
    int code = EXIT_OK;

    dups = tool_duplicates(c, cfg->limit, &keys, &surplus);
    if (!dups) {
        code = tool_db_failure(c->d, "cannot list duplicate keys");
        goto out;
    }
    json_t *jblocked = json_array();
    root = json_pack("{s:s, s:o, s:b, s:I, s:I, s:o, s:o}", "command", "dedupe", "table",
                     tool_json_text(t->display), "apply", 0, "duplicate_keys",
                     (json_int_t)keys, "surplus_rows", (json_int_t)surplus, "duplicates",
                     tool_duplicates_json(dups), "final_blocked", jblocked);
    if (keys == 0) {
        fprintf(fp, "no duplicate active keys in %s\n", t->display);
        json_object_set_new(root, "final_blocked_keys", json_integer(0));
        goto report;
    }
    code = EXIT_FINDINGS;
    fprintf(fp, "duplicate active keys in %s: %lld (%lld surplus rows)\n", t->display, keys,
            surplus);
    tool_print_duplicates(fp, "  ", dups);
    if (db_nrows(dups) < keys)
        fprintf(fp, "  (%d of %lld shown; --limit 0 lists all)\n", db_nrows(dups), keys);

    /* Which of them --apply would refuse, so the operator is not surprised. */
    tool_final_array(cfg, &finals);
    tool_final_text(cfg, &line);
    const char *params[] = {buf_cstr(&finals)};
    if (!tool_render(&sql, SQL_DEDUPE_FINAL_BLOCKED, t, NULL, NULL) ||
        !(blocked = db_query(c->d, buf_cstr(&sql), 1, params))) {
        code = tool_db_failure(c->d, "cannot list keys holding a final status");
        goto out;
    }
    int nb = db_nrows(blocked);
    json_object_set_new(root, "final_blocked_keys", json_integer(nb));
    if (nb > 0)
        fprintf(fp, "%d of these keys hold a final status (%s) in a row other than the earliest; "
                    "--apply leaves them whole unless --include-final:\n",
                nb, buf_cstr(&line));
    for (int i = 0; i < nb; i++) {
        if (cfg->limit == 0 || (size_t)i < cfg->limit) {
            buf_clear(&line);
            tool_key_to_text(&line, blocked, i, 0);
            fprintf(fp, "  %s: final row ids %s\n", buf_cstr(&line), db_value(blocked, i, 5));
        } else if ((size_t)i == cfg->limit) {
            fprintf(fp, "  (%zu of %d shown; --limit 0 lists all)\n", cfg->limit, nb);
        }
        json_t *o = json_object();
        tool_key_to_json(o, blocked, i, 0);
        json_object_set_new(o, "final_ids", tool_json_text(db_value(blocked, i, 5)));
        json_array_append_new(jblocked, o);
    }
    fprintf(fp, "'idemload dedupe --apply' soft-deletes all but the earliest active row of each "
                "key (by received_at, then id)\n");
report:
    if (cfg->report_path && !tool_write_report(root, cfg->report_path))
        code = exit_worst(code, EXIT_INPUT);
out:
    json_decref(root);
    db_result_free(&dups);
    db_result_free(&blocked);
    buf_free(&sql);
    buf_free(&finals);
    buf_free(&line);
    return code;
}

/* The rows of one key in a batch result, gathered for one output line. */
typedef struct key_group {
    int first_row;          /* a row holding the key */
    const char *kept_id;
    buf deleted;            /* "5, 9" */
    buf refused;            /* "5 (status 2), 9 (status 0)" */
    int n_deleted;
    int n_refused;
    json_t *jrefused;
} key_group;

static bool same_key(const db_result *r, int a, int b)
{
    for (int k = 1; k <= 4; k++)
        if (strcmp(db_value(r, a, k), db_value(r, b, k)) != 0)
            return false;
    return true;
}

static bool is_final(const config *cfg, long status)
{
    for (size_t k = 0; k < cfg->n_final_status; k++)
        if (cfg->final_status[k] == status)
            return true;
    return false;
}

typedef struct apply_totals {
    long long batches;
    long long keys_fixed;
    long long rows;
    long long refused;
    json_t *jrefused;       /* refused keys, for the report */
} apply_totals;

/* Prints what happened to one key and adds it to the totals. */
static void key_done(tool_ctx *c, const db_result *r, key_group *g, apply_totals *tot,
                     buf *line)
{
    buf_clear(line);
    tool_key_to_text(line, r, g->first_row, 1);
    if (g->n_deleted > 0) {
        fprintf(c->human, "soft-deleted id%s %s of %s; kept id %s\n", g->n_deleted > 1 ? "s" : "",
                buf_cstr(&g->deleted), buf_cstr(line), g->kept_id ? g->kept_id : "?");
        tot->keys_fixed++;
        tot->rows += g->n_deleted;
    }
    if (g->n_refused > 0) {
        fprintf(c->human, "REFUSED %s: left whole, as the rows to soft-delete include a final "
                          "status: id%s %s; kept id %s\n",
                buf_cstr(line), g->n_refused > 1 ? "s" : "", buf_cstr(&g->refused),
                g->kept_id ? g->kept_id : "?");
        tot->refused++;
        json_t *o = json_object();
        tool_key_to_json(o, r, g->first_row, 1);
        json_object_set_new(o, "kept_id",
                            g->kept_id ? json_integer(strtoll(g->kept_id, NULL, 10)) : json_null());
        json_object_set_new(o, "ids", g->jrefused);
        g->jrefused = NULL;
        json_array_append_new(tot->jrefused, o);
    }
    json_decref(g->jrefused);
    buf_free(&g->deleted);
    buf_free(&g->refused);
    memset(g, 0, sizeof *g);
}

/* Walks the rows of one batch result; returns whether a 'last' row (the
 * cursor for the next batch) was seen, copying it into cursor[0..3]. */
static bool batch_report(const config *cfg, tool_ctx *c, const db_result *r, buf cursor[4],
                         apply_totals *tot, long long *b_rows, long long *b_keys,
                         long long *b_refused)
{
    bool more = false;
    key_group g;
    memset(&g, 0, sizeof g);
    bool open = false;
    buf line = BUF_INIT;
    long long rows0 = tot->rows, keys0 = tot->keys_fixed, ref0 = tot->refused;
    for (int i = 0; i < db_nrows(r); i++) {
        const char *kind = db_value(r, i, 0);
        if (strcmp(kind, "last") == 0) {
            for (int k = 0; k < 4; k++) {
                buf_clear(&cursor[k]);
                buf_append_str(&cursor[k], db_value(r, i, k + 1));
            }
            more = true;
            continue;
        }
        if (open && !same_key(r, g.first_row, i)) {
            key_done(c, r, &g, tot, &line);
            open = false;
        }
        if (!open) {
            g.first_row = i;
            g.jrefused = json_array();
            open = true;
        }
        const char *id = db_value(r, i, 5);
        if (strcmp(kind, "keep") == 0) {
            g.kept_id = id;
        } else if (strcmp(kind, "delete") == 0) {
            buf_printf(&g.deleted, "%s%s", g.n_deleted++ ? ", " : "", id);
        } else {
            long status = (long)db_int(r, i, 6);
            buf_printf(&g.refused, "%s%s (status %ld%s)", g.n_refused++ ? ", " : "", id, status,
                       is_final(cfg, status) ? ", final" : "");
            json_array_append_new(g.jrefused, json_pack("{s:I, s:i, s:b}", "id",
                                                         (json_int_t)db_int(r, i, 5), "status",
                                                         (int)status, "final",
                                                         is_final(cfg, status)));
        }
    }
    if (open)
        key_done(c, r, &g, tot, &line);
    buf_free(&line);
    *b_rows = tot->rows - rows0;
    *b_keys = tot->keys_fixed - keys0;
    *b_refused = tot->refused - ref0;
    return more;
}

static int dedupe_apply(const config *cfg, tool_ctx *c)
{
    const target *t = &c->t;
    FILE *fp = c->human;
    if (!t->has_deleted_at) {
        log_error("table %s has no deleted_at column: dedupe soft-deletes rows by setting it",
                  t->display);
        return EXIT_USAGE;
    }
    buf sql = BUF_INIT, finals = BUF_INIT, size = BUF_INIT, what = BUF_INIT;
    buf cursor[4] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    apply_totals tot = {0, 0, 0, 0, json_array()};
    int code = EXIT_OK;
    bool started = false;

    if (!tool_dedupe_batch_sql(&sql, t)) {
        log_error("out of memory");
        code = EXIT_DATABASE;
        goto out;
    }
    tool_final_array(cfg, &finals);
    buf_printf(&size, "%zu", cfg->batch_size);
    for (;;) {
        if (signals_interrupted()) {
            log_error("dedupe interrupted after %lld batches; they stay committed, and running "
                      "dedupe --apply again continues", tot.batches);
            code = EXIT_INTERRUPTED;
            goto out;
        }
        const char *params[7] = {buf_cstr(&size), buf_cstr(&finals),
                                 cfg->include_final ? "true" : "false"};
        for (int k = 0; k < 4; k++)
            params[3 + k] = started ? buf_cstr(&cursor[k]) : NULL;
        db_result *r = NULL;
        for (int attempt = 0;; attempt++) {
            r = db_query(c->d, buf_cstr(&sql), 7, params);
            if (r || db_error_class_of(c->d) != DBE_RETRY || attempt == BATCH_RETRIES ||
                signals_interrupted())
                break;
            log_warn("dedupe batch %lld: %s; retrying", tot.batches + 1, db_message(c->d));
        }
        if (!r) {
            buf_clear(&what);
            buf_printf(&what, "dedupe batch %lld failed (the %lld batches before it are "
                              "committed; running dedupe --apply again continues)",
                       tot.batches + 1, tot.batches);
            code = tool_db_failure(c->d, buf_cstr(&what));
            goto out;
        }
        long long b_rows, b_keys, b_refused;
        bool more = batch_report(cfg, c, r, cursor, &tot, &b_rows, &b_keys, &b_refused);
        db_result_free(&r);
        if (!more)
            break;
        started = true;
        tot.batches++;
        log_info("batch %lld: %lld keys deduplicated, %lld rows soft-deleted, %lld keys refused",
                 tot.batches, b_keys, b_rows, b_refused);
    }
    if (tot.keys_fixed == 0 && tot.refused == 0)
        fprintf(fp, "no duplicate active keys in %s; nothing changed\n", t->display);
    else
        fprintf(fp, "dedupe of %s: %lld rows soft-deleted, %lld keys deduplicated, %lld keys "
                    "refused, in %lld batches\n",
                t->display, tot.rows, tot.keys_fixed, tot.refused, tot.batches);
    if (tot.refused > 0) {
        buf_clear(&what);
        tool_final_text(cfg, &what);
        fprintf(fp, "the %lld refused keys (listed above) hold a final status (%s) in a row that "
                    "would be soft-deleted; review them, then run again with --include-final to "
                    "soft-delete those rows too\n",
                tot.refused, buf_cstr(&what));
        code = EXIT_FINDINGS;
    } else if (tot.keys_fixed > 0) {
        fprintf(fp, "every active key is now unique; 'idemload create-index' can build the "
                    "index\n");
    }
out:
    if (cfg->report_path) {
        json_t *root = json_pack("{s:s, s:o, s:b, s:b, s:I, s:I, s:I, s:I, s:O}", "command",
                                 "dedupe", "table", tool_json_text(t->display), "apply", 1,
                                 "include_final", cfg->include_final, "batches",
                                 (json_int_t)tot.batches, "keys_deduplicated",
                                 (json_int_t)tot.keys_fixed, "rows_soft_deleted",
                                 (json_int_t)tot.rows, "refused_keys", (json_int_t)tot.refused,
                                 "refused", tot.jrefused);
        if (root)
            json_object_set_new(root, "complete", json_boolean(code == EXIT_OK ||
                                                               code == EXIT_FINDINGS));
        if (!tool_write_report(root, cfg->report_path))
            code = exit_worst(code, EXIT_INPUT);
        json_decref(root);
    }
    json_decref(tot.jrefused);
    for (int k = 0; k < 4; k++)
        buf_free(&cursor[k]);
    buf_free(&sql);
    buf_free(&finals);
    buf_free(&size);
    buf_free(&what);
    return code;
}

int tools_dedupe(const config *cfg)
{
    tool_ctx c;
    int code = tool_open(cfg, &c);
    if (code == EXIT_OK)
        code = cfg->apply ? dedupe_apply(cfg, &c) : dedupe_list(cfg, &c);
    tool_close(&c);
    return code;
}
