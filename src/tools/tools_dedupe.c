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
 * Each run gathers its facts (a listing; per batch, what happened to each
 * key; the run's totals) and renders them in text and JSON from the
 * structs of tools_facts.h.  The lines of a batch are printed once the
 * batch has committed, so a long run shows its progress and its memory
 * stays that of one batch plus the refused keys.
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
#include "core/final_status.h"
#include "tools/tools_distributed.h"
#include "tools/tools_facts.h"

/* Retries of one batch after a deadlock or serialization failure with
 * another writer; the batch rolled back whole, so running it again is
 * safe. */
#define BATCH_RETRIES 5

/* ---- listing ------------------------------------------------------------ */

/* The keys --apply would refuse (SQL_DEDUPE_FINAL_BLOCKED).  False: the
 * failure is on c->d. */
static bool gather_blocked(const config *cfg, tool_ctx *c, dedupe_listing *l)
{
    buf sql = BUF_INIT, finals = BUF_INIT;
    db_result *r = NULL;
    bool ok = tool_render(&sql, SQL_DEDUPE_FINAL_BLOCKED, &c->t, NULL, NULL) &&
              final_status_array(cfg->final_status, cfg->n_final_status, &finals);
    if (!ok)
        db_set_out_of_memory(c->d);
    const char *params[] = {buf_cstr(&finals)};
    if (ok && !(r = db_query(c->d, buf_cstr(&sql), 1, params)))
        ok = false;
    if (ok && db_nrows(r) > 0 &&
        !(l->blocked = calloc((size_t)db_nrows(r), sizeof *l->blocked)))
        ok = false;
    for (int i = 0; ok && i < db_nrows(r); i++) {
        blocked_key *b = &l->blocked[i];
        ok = tool_key_copy(&b->key, r, i, 0) && (b->final_ids = strdup(db_value(r, i, 5)));
        l->n_blocked += ok;
    }
    if (!ok && r)
        db_set_out_of_memory(c->d);
    db_result_free(&r);
    buf_free(&sql);
    buf_free(&finals);
    return ok;
}

void dedupe_listing_free(dedupe_listing *l)
{
    dup_list_free(&l->dups);
    for (size_t i = 0; i < l->n_blocked; i++) {
        tool_key_free(&l->blocked[i].key);
        free(l->blocked[i].final_ids);
    }
    free(l->blocked);
    memset(l, 0, sizeof *l);
}

void dedupe_listing_render_text(const dedupe_listing *l, FILE *fp)
{
    if (l->dups.keys == 0) {
        fprintf(fp, "no duplicate active keys in %s\n", l->table);
        return;
    }
    fprintf(fp, "duplicate active keys in %s: %lld (%lld surplus rows)\n", l->table, l->dups.keys,
            l->dups.surplus);
    tool_print_duplicates(fp, "  ", &l->dups);
    if ((long long)l->dups.n < l->dups.keys)
        fprintf(fp, "  (%zu of %lld shown; --limit 0 lists all)\n", l->dups.n, l->dups.keys);
    if (l->n_blocked > 0)
        fprintf(fp, "%zu of these keys hold a final status (%s) in a row other than the earliest; "
                    "--apply leaves them whole unless --include-final:\n",
                l->n_blocked, l->finals);
    buf line = BUF_INIT;
    for (size_t i = 0; i < l->n_blocked; i++) {
        if (l->limit == 0 || i < l->limit) {
            buf_clear(&line);
            tool_key_to_text(&line, &l->blocked[i].key);
            fprintf(fp, "  %s: final row ids %s\n", buf_cstr(&line), l->blocked[i].final_ids);
        } else if (i == l->limit) {
            fprintf(fp, "  (%zu of %zu shown; --limit 0 lists all)\n", l->limit, l->n_blocked);
        }
    }
    buf_free(&line);
    fprintf(fp, "'idemload dedupe --apply%s' soft-deletes all but the earliest active row of each "
                "key (by received_at, then id)\n", tool_args(l->args));
}

json_t *dedupe_listing_render_json(const dedupe_listing *l)
{
    json_t *blocked = json_array();
    for (size_t i = 0; blocked && i < l->n_blocked; i++) {
        json_t *o = json_object();
        tool_key_to_json(o, &l->blocked[i].key);
        json_object_set_new(o, "final_ids", tool_json_text(l->blocked[i].final_ids));
        json_array_append_new(blocked, o);
    }
    return json_pack("{s:s, s:o, s:b, s:I, s:I, s:o, s:o, s:I}", "command", "dedupe", "table",
                     tool_json_text(l->table), "apply", 0, "duplicate_keys",
                     (json_int_t)l->dups.keys, "surplus_rows", (json_int_t)l->dups.surplus,
                     "duplicates", tool_duplicates_json(&l->dups), "final_blocked", blocked,
                     "final_blocked_keys", (json_int_t)l->n_blocked);
}

/* The listing's advised --apply keeps what it listed: the user's target,
 * and the final statuses when they are not the default, which decide
 * what --apply leaves whole. */
static bool apply_args(const config *cfg, const tool_ctx *c, buf *out)
{
    bool ok = buf_append_str(out, buf_cstr(&c->args));
    if (ok && !(cfg->n_final_status == 1 && cfg->final_status[0] == DEFAULT_FINAL_STATUS))
        ok = buf_append_str(out, " --final-status ") &&
             final_status_option(cfg->final_status, cfg->n_final_status, out);
    return ok;
}

static int dedupe_list(const config *cfg, tool_ctx *c)
{
    dedupe_listing l;
    buf finals = BUF_INIT, args = BUF_INIT;
    memset(&l, 0, sizeof l);
    final_status_text(cfg->final_status, cfg->n_final_status, &finals);
    l.table = c->t.display;
    apply_args(cfg, c, &args);
    l.args = buf_cstr(&args);
    l.finals = buf_cstr(&finals);
    l.limit = cfg->limit;
    int code = EXIT_OK;
    if (!tool_duplicates(c, cfg->limit, &l.dups))
        code = tool_db_failure(c->d, "cannot list duplicate keys");
    else if (l.dups.keys > 0 && !gather_blocked(cfg, c, &l))
        code = tool_db_failure(c->d, "cannot list keys holding a final status");
    if (code == EXIT_OK) {
        dedupe_listing_render_text(&l, c->human);
        code = l.dups.keys > 0 ? EXIT_FINDINGS : EXIT_OK;
        if (cfg->report_path) {
            json_t *root = dedupe_listing_render_json(&l);
            if (!tool_write_report(root, cfg->report_path))
                code = exit_worst(code, EXIT_INPUT);
            json_decref(root);
        }
    }
    dedupe_listing_free(&l);
    buf_free(&finals);
    buf_free(&args);
    return code;
}

/* ---- --apply: one batch ------------------------------------------------- */

void key_outcome_free(key_outcome *k)
{
    tool_key_free(&k->key);
    free(k->kept_id);
    strlist_free(&k->deleted);
    free(k->refused);
    memset(k, 0, sizeof *k);
}

void batch_outcome_free(batch_outcome *b)
{
    for (size_t i = 0; i < b->n; i++)
        key_outcome_free(&b->keys[i]);
    free(b->keys);
    tool_key_free(&b->cursor);
    memset(b, 0, sizeof *b);
}

static bool same_key(const db_result *r, int a, int b)
{
    for (int k = 1; k <= KEY_NCOLUMNS; k++)
        if (strcmp(db_value(r, a, k), db_value(r, b, k)) != 0)
            return false;
    return true;
}

/* Adds row i of a batch result (kind keep, delete or refuse) to its key,
 * the last of b->keys or a new one.  False: out of memory. */
static bool batch_add_row(const config *cfg, const db_result *r, int i, int *first_row,
                          batch_outcome *b)
{
    if (b->n == 0 || !same_key(r, *first_row, i)) {
        key_outcome *grown = realloc(b->keys, (b->n + 1) * sizeof *grown);
        if (!grown)
            return false;
        b->keys = grown;
        memset(&b->keys[b->n], 0, sizeof *grown);
        if (!tool_key_copy(&b->keys[b->n].key, r, i, 1))
            return false;
        b->n++;
        *first_row = i;
    }
    key_outcome *k = &b->keys[b->n - 1];
    const char *kind = db_value(r, i, 0), *id = db_value(r, i, 5);
    if (strcmp(kind, "keep") == 0) {
        free(k->kept_id);
        return (k->kept_id = strdup(id)) != NULL;
    }
    if (strcmp(kind, "delete") == 0)
        return strlist_add(&k->deleted, id);
    refused_row *grown = realloc(k->refused, (k->n_refused + 1) * sizeof *grown);
    if (!grown)
        return false;
    k->refused = grown;
    long status = (long)db_int(r, i, 6);
    k->refused[k->n_refused++] = (refused_row){
        (long long)db_int(r, i, 5), (int)status,
        final_status_has(cfg->final_status, cfg->n_final_status, status)};
    return true;
}

/* The rows of one batch result, grouped by key; a 'last' row gives the
 * cursor of the next batch.  False: out of memory. */
static bool batch_gather(const config *cfg, const db_result *r, batch_outcome *b)
{
    memset(b, 0, sizeof *b);
    int first_row = 0;
    for (int i = 0; i < db_nrows(r); i++) {
        bool ok;
        if (strcmp(db_value(r, i, 0), "last") == 0) {
            tool_key_free(&b->cursor);
            ok = b->more = tool_key_copy(&b->cursor, r, i, 1);
        } else {
            ok = batch_add_row(cfg, r, i, &first_row, b);
        }
        if (!ok)
            return false;
    }
    return true;
}

/* "5, 9" or "5 (status 2, final), 9 (status 0)" */
static void refused_text(const key_outcome *k, buf *out)
{
    for (size_t i = 0; i < k->n_refused; i++)
        buf_printf(out, "%s%lld (status %d%s)", i ? ", " : "", k->refused[i].id,
                   k->refused[i].status, k->refused[i].final ? ", final" : "");
}

void batch_render_text(const batch_outcome *b, FILE *fp)
{
    buf key = BUF_INIT, ids = BUF_INIT;
    for (size_t i = 0; i < b->n; i++) {
        const key_outcome *k = &b->keys[i];
        const char *kept = k->kept_id ? k->kept_id : "?";
        buf_clear(&key);
        tool_key_to_text(&key, &k->key);
        if (k->deleted.n > 0) {
            buf_clear(&ids);
            for (size_t j = 0; j < k->deleted.n; j++)
                buf_printf(&ids, "%s%s", j ? ", " : "", k->deleted.v[j]);
            fprintf(fp, "soft-deleted id%s %s of %s; kept id %s\n", k->deleted.n > 1 ? "s" : "",
                    buf_cstr(&ids), buf_cstr(&key), kept);
        }
        if (k->n_refused > 0) {
            buf_clear(&ids);
            refused_text(k, &ids);
            fprintf(fp, "REFUSED %s: left whole, as the rows to soft-delete include a final "
                        "status: id%s %s; kept id %s\n",
                    buf_cstr(&key), k->n_refused > 1 ? "s" : "", buf_cstr(&ids), kept);
        }
    }
    buf_free(&key);
    buf_free(&ids);
}

/* Adds a batch to the run's totals, moving its refused keys into o.
 * Sets *keys, *rows, *refused to the batch's own figures.  False: out of
 * memory. */
static bool outcome_add(dedupe_outcome *o, batch_outcome *b, long long *keys, long long *rows,
                        long long *refused)
{
    *keys = *rows = *refused = 0;
    for (size_t i = 0; i < b->n; i++) {
        key_outcome *k = &b->keys[i];
        *keys += k->deleted.n > 0;
        *rows += (long long)k->deleted.n;
        if (k->n_refused == 0)
            continue;
        key_outcome *grown = realloc(o->refused, (o->n_refused + 1) * sizeof *grown);
        if (!grown)
            return false;
        o->refused = grown;
        o->refused[o->n_refused++] = *k;
        memset(k, 0, sizeof *k);
        (*refused)++;
    }
    o->keys_fixed += *keys;
    o->rows += *rows;
    return true;
}

/* ---- --apply: the run ----------------------------------------------------- */

void dedupe_outcome_free(dedupe_outcome *o)
{
    for (size_t i = 0; i < o->n_refused; i++)
        key_outcome_free(&o->refused[i]);
    free(o->refused);
    memset(o, 0, sizeof *o);
}

void dedupe_outcome_render_text(const dedupe_outcome *o, FILE *fp)
{
    if (!o->complete)
        return;
    if (o->keys_fixed == 0 && o->n_refused == 0)
        fprintf(fp, "no duplicate active keys in %s; nothing changed\n", o->table);
    else
        fprintf(fp, "dedupe of %s: %lld rows soft-deleted, %lld keys deduplicated, %zu keys "
                    "refused, in %lld batches\n",
                o->table, o->rows, o->keys_fixed, o->n_refused, o->batches);
    if (o->n_refused > 0)
        fprintf(fp, "the %zu refused keys (listed above) hold a final status (%s) in a row that "
                    "would be soft-deleted; review them, then run again with --include-final to "
                    "soft-delete those rows too\n",
                o->n_refused, o->finals);
    else if (o->keys_fixed > 0)
        fprintf(fp, "every active key is now unique; 'idemload create-index%s' can build the "
                    "index\n", tool_args(o->args));
}

json_t *dedupe_outcome_render_json(const dedupe_outcome *o)
{
    json_t *refused = json_array();
    for (size_t i = 0; refused && i < o->n_refused; i++) {
        const key_outcome *k = &o->refused[i];
        json_t *ids = json_array();
        for (size_t j = 0; ids && j < k->n_refused; j++)
            json_array_append_new(ids, json_pack("{s:I, s:i, s:b}", "id",
                                                 (json_int_t)k->refused[j].id, "status",
                                                 k->refused[j].status, "final",
                                                 k->refused[j].final));
        json_t *obj = json_object();
        tool_key_to_json(obj, &k->key);
        json_object_set_new(obj, "kept_id", k->kept_id
                                                ? json_integer(strtoll(k->kept_id, NULL, 10))
                                                : json_null());
        json_object_set_new(obj, "ids", ids);
        json_array_append_new(refused, obj);
    }
    return json_pack("{s:s, s:o, s:b, s:b, s:I, s:I, s:I, s:I, s:o, s:b}", "command", "dedupe",
                     "table", tool_json_text(o->table), "apply", 1, "include_final",
                     o->include_final, "batches", (json_int_t)o->batches, "keys_deduplicated",
                     (json_int_t)o->keys_fixed, "rows_soft_deleted", (json_int_t)o->rows,
                     "refused_keys", (json_int_t)o->n_refused, "refused", refused, "complete",
                     o->complete);
}

/* Runs one batch, again after a deadlock or serialization failure.  NULL:
 * the failure is on c->d. */
static db_result *run_batch(tool_ctx *c, const char *sql, const char *const params[7],
                            long long batch)
{
    for (int attempt = 0;; attempt++) {
        db_result *r = db_query(c->d, sql, 7, params);
        if (r || db_error_class_of(c->d) != DBE_RETRY || attempt == BATCH_RETRIES ||
            signals_interrupted())
            return r;
        log_warn("dedupe batch %lld: %s; retrying", batch, db_message(c->d));
    }
}

/* The batch after cursor (NULL: the first): run, gathered, its lines
 * printed, added to o.  Returns EXIT_OK, or the failure's status after
 * logging it; *more: another batch may follow, from *cursor. */
static int apply_batch(const config *cfg, tool_ctx *c, const char *sql, const char *finals,
                       dedupe_outcome *o, tool_key *cursor, bool *more)
{
    char size[24];
    snprintf(size, sizeof size, "%zu", cfg->batch_size);
    const char *params[7] = {size, finals, cfg->include_final ? "true" : "false"};
    for (int k = 0; k < KEY_NCOLUMNS; k++)
        params[3 + k] = cursor->col[k];
    db_result *r = run_batch(c, sql, params, o->batches + 1);
    if (!r) {
        buf what = BUF_INIT;
        buf_printf(&what, "dedupe batch %lld failed (the %lld batches before it are committed; "
                          "running dedupe --apply again continues)",
                   o->batches + 1, o->batches);
        int code = tool_db_failure(c->d, buf_cstr(&what));
        buf_free(&what);
        return code;
    }
    batch_outcome b;
    long long keys, rows, refused;
    bool ok = batch_gather(cfg, r, &b);
    db_result_free(&r);
    if (ok)
        batch_render_text(&b, c->human);
    if (!ok || !outcome_add(o, &b, &keys, &rows, &refused)) {
        batch_outcome_free(&b);
        db_set_out_of_memory(c->d);
        return tool_db_failure(c->d, "dedupe batch results");
    }
    *more = b.more;
    tool_key_free(cursor);
    *cursor = b.cursor;
    memset(&b.cursor, 0, sizeof b.cursor);
    batch_outcome_free(&b);
    if (*more) {
        o->batches++;
        log_info("batch %lld: %lld keys deduplicated, %lld rows soft-deleted, %lld keys refused",
                 o->batches, keys, rows, refused);
    }
    return EXIT_OK;
}

static int dedupe_apply(const config *cfg, tool_ctx *c)
{
    const target *t = &c->t;
    if (!t->has_deleted_at) {
        log_error("table %s has no deleted_at column: dedupe soft-deletes rows by setting it",
                  t->display);
        return EXIT_USAGE;
    }
    buf sql = BUF_INIT, finals = BUF_INIT, finals_text = BUF_INIT;
    tool_key cursor = {{NULL}};
    dedupe_outcome o = {.table = t->display, .args = buf_cstr(&c->args),
                        .include_final = cfg->include_final};
    int code = EXIT_OK;
    if (!tool_dedupe_batch_sql(&sql, t) ||
        !final_status_array(cfg->final_status, cfg->n_final_status, &finals) ||
        !final_status_text(cfg->final_status, cfg->n_final_status, &finals_text)) {
        db_set_out_of_memory(c->d);
        code = tool_db_failure(c->d, "dedupe");
    }
    o.finals = buf_cstr(&finals_text);
    for (bool more = true; code == EXIT_OK && more;) {
        if (signals_interrupted()) {
            log_error("dedupe interrupted after %lld batches; they stay committed, and running "
                      "dedupe --apply again continues", o.batches);
            code = EXIT_INTERRUPTED;
        } else {
            code = apply_batch(cfg, c, buf_cstr(&sql), buf_cstr(&finals), &o, &cursor, &more);
        }
    }
    o.complete = code == EXIT_OK;
    dedupe_outcome_render_text(&o, c->human);
    if (o.complete && o.n_refused > 0)
        code = EXIT_FINDINGS;
    if (cfg->report_path) {
        json_t *root = dedupe_outcome_render_json(&o);
        if (!tool_write_report(root, cfg->report_path))
            code = exit_worst(code, EXIT_INPUT);
        json_decref(root);
    }
    dedupe_outcome_free(&o);
    tool_key_free(&cursor);
    buf_free(&sql);
    buf_free(&finals);
    buf_free(&finals_text);
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
