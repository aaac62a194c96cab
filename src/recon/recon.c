/*
 * recon.c - the coordinator of `idemload reconcile` (see recon.h).
 *
 * One connection, one transaction: the statement's valid rows are COPYed
 * into a temporary table as they are read (memory stays at one COPY
 * buffer), the comparison is a handful of set-based statements on the
 * server (recon_sql.h), and only its figures and discrepancy lines come
 * back.  Then the register is written in the same transaction, the
 * discrepancies file made durable before that transaction commits, and a
 * dry run rolls everything back instead.  --repair runs the import
 * pipeline afterwards, on its own connection, as import would.
 */
#include "recon/recon.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/final_status.h"
#include "core/formats.h"
#include "db/db.h"
#include "db/recon_sql.h"
#include "db/target.h"
#include "input/key_links.h"
#include "input/profile.h"
#include "load/loader.h"
#include "output/html.h"
#include "output/log.h"
#include "output/progress.h"
#include "output/rejects.h"
#include "output/report.h"
#include "pipeline/pipeline.h"
#include "recon/facts.h"
#include "recon/recon_read.h"
#include "recon/recon_register.h"
#include "recon/recon_render.h"
#include "recon/recon_result.h"
#include "recon/recon_session.h"
#include "rules/timezone.h"
#include "rules/validate.h"
#include "tools/tools_shared.h"
#include "util/clock.h"
#include "util/digest.h"
#include "util/exitcodes.h"
#include "util/signals.h"

/* ---- gathering -------------------------------------------------------- */

static recon_day *find_day(recon_result *res, size_t *from, int64_t tenant, const char *channel,
                           const char *day)
{
    for (size_t k = *from; k < res->n_days; k++) {
        recon_day *d = &res->days[k];
        if (d->tenant_id == tenant && strcmp(d->channel, channel) == 0 && strcmp(d->day, day) == 0) {
            *from = k;
            return d;
        }
    }
    for (size_t k = 0; k < *from && k < res->n_days; k++) {
        recon_day *d = &res->days[k];
        if (d->tenant_id == tenant && strcmp(d->channel, channel) == 0 && strcmp(d->day, day) == 0)
            return d;
    }
    return NULL;
}

/* Appends currency's amount to side s; false when out of memory. */
static bool side_add(recon_side *s, const char *currency, const char *amount)
{
    recon_amount *grown = realloc(s->amounts, (s->n_amounts + 1) * sizeof *grown);
    if (!grown)
        return false;
    s->amounts = grown;
    bool oom = false;
    recon_amount *a = &s->amounts[s->n_amounts++];
    a->currency = recon_dup_or_null(currency, &oom);
    a->amount = recon_dup_or_null(amount, &oom);
    return !oom;
}

/* One row of SQL_RECON_DAY_KINDS or _PERIOD_KINDS, from column c (kind,
 * currency, amount, the kind's rows, those without an amount, how many
 * amounts): into s's entry of that kind (the rows come ordered by kind, so
 * it is the last entry or a new one).  False when memory runs out. */
static bool kind_add(recon_side *s, db_result *r, int i, int c)
{
    const char *kind = db_value(r, i, c);
    recon_side *k = s->n_kinds ? &s->kinds[s->n_kinds - 1] : NULL;
    if (!k || strcmp(k->kind, kind) != 0) {
        recon_side *grown = realloc(s->kinds, (s->n_kinds + 1) * sizeof *grown);
        if (!grown)
            return false;
        s->kinds = grown;
        k = &s->kinds[s->n_kinds++];
        memset(k, 0, sizeof *k);
        k->kind = strdup(kind);
        if (!k->kind)
            return false;
        k->rows = (uint64_t)db_int(r, i, c + 3);
        k->without_amount = (uint64_t)db_int(r, i, c + 4);
    }
    return db_int(r, i, c + 5) == 0 || side_add(k, db_value(r, i, c + 1), db_value(r, i, c + 2));
}

/* The run's two sides over every day: rows summed here, amounts per
 * currency summed by the server (exact numerics). */
static bool gather_period_totals(recon_ctx *x, recon_result *res)
{
    for (size_t i = 0; i < res->n_days; i++) {
        const recon_day *d = &res->days[i];
        res->total_statement.rows += d->statement.rows;
        res->total_statement.without_amount += d->statement.without_amount;
        res->total_table.rows += d->table.rows;
        res->total_table.without_amount += d->table.without_amount;
    }
    db_result *r = recon_query(x, "reconcile: the period's totals", SQL_RECON_PERIOD_AMOUNTS, 2,
                               (const char *const *)x->net_kinds);
    if (!r)
        return false;
    bool ok = true;
    for (int i = 0; ok && i < db_nrows(r); i++)
        ok = side_add(db_value(r, i, 0)[0] == 's' ? &res->total_statement : &res->total_table,
                      db_value(r, i, 1), db_value(r, i, 2));
    db_result_free(&r);
    r = ok ? recon_query(x, "reconcile: the period's totals per kind", SQL_RECON_PERIOD_KINDS, 0,
                         NULL)
           : NULL;
    if (ok && !r)
        return false;
    for (int i = 0; ok && i < db_nrows(r); i++)
        ok = kind_add(db_value(r, i, 0)[0] == 's' ? &res->total_statement : &res->total_table, r,
                      i, 1);
    db_result_free(&r);
    if (!ok)
        log_error("reconcile: out of memory gathering the figures");
    return ok;
}

/* Each day's two sides per kind and currency (SQL_RECON_DAY_KINDS). */
static bool gather_day_kinds(recon_ctx *x, recon_result *res)
{
    db_result *r = recon_query(x, "reconcile: the amounts per day and kind", SQL_RECON_DAY_KINDS, 0,
                               NULL);
    if (!r)
        return false;
    size_t at = 0;
    bool oom = false;
    for (int i = 0; !oom && i < db_nrows(r); i++) {
        recon_day *d = find_day(res, &at, db_int(r, i, 0), db_value(r, i, 1), db_value(r, i, 2));
        if (d)
            oom = !kind_add(db_value(r, i, 3)[0] == 's' ? &d->statement : &d->table, r, i, 4);
    }
    db_result_free(&r);
    if (oom)
        log_error("reconcile: out of memory gathering the figures");
    return !oom;
}

/* The names a kind of the profile's vocabulary has in the table's: kind
 * itself and every --kind rename of it, as a JSON array's text (NULL when
 * out of memory): the refunds subtracted from a side's net amounts, the
 * revocations left apart (SQL_RECON_DAY_AMOUNTS). */
static char *kind_names_json(const config *cfg, const char *kind)
{
    json_t *a = json_array();
    json_array_append_new(a, json_string(kind));
    for (size_t i = 0; i < cfg->n_kind_rename; i++)
        if (strcmp(cfg->kind_rename[i].from, kind) == 0 && cfg->kind_rename[i].to)
            json_array_append_new(a, json_string(cfg->kind_rename[i].to));
    char *text = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return text;
}

/* Each day's currency_mismatch sides and its money differences, each key
 * once (SQL_RECON_DAY_CCY_SIDES, SQL_RECON_DAY_DIFFERENCES).  False when a
 * query failed; *oom when memory ran out. */
static bool gather_day_money(recon_ctx *x, recon_result *res, bool *oom)
{
    db_result *r = recon_query(x, "reconcile: the currency mismatches per day",
                               SQL_RECON_DAY_CCY_SIDES, 0, NULL);
    if (!r)
        return false;
    size_t at = 0;
    for (int i = 0; !*oom && i < db_nrows(r); i++) {
        recon_day *d = find_day(res, &at, db_int(r, i, 0), db_value(r, i, 1), db_value(r, i, 2));
        if (d && !db_is_null(r, i, 3))
            d->ccy_sides = recon_dup_or_null(db_value(r, i, 3), oom);
    }
    db_result_free(&r);
    if (*oom)
        return true;
    r = recon_query(x, "reconcile: the money differences per day", SQL_RECON_DAY_DIFFERENCES, 0,
                    NULL);
    if (!r)
        return false;
    at = 0;
    for (int i = 0; !*oom && i < db_nrows(r); i++) {
        recon_day *d = find_day(res, &at, db_int(r, i, 0), db_value(r, i, 1), db_value(r, i, 2));
        if (!d)
            continue;
        recon_money *grown = realloc(d->diffs, (d->n_diffs + 1) * sizeof *grown);
        if (!grown) {
            *oom = true;
            break;
        }
        d->diffs = grown;
        recon_money *m = &d->diffs[d->n_diffs++];
        m->currency = recon_dup_or_null(db_value(r, i, 3), oom);
        m->net = recon_dup_or_null(db_value(r, i, 4), oom);
        m->gross = recon_dup_or_null(db_value(r, i, 5), oom);
        d->diff_keys += (uint64_t)db_int(r, i, 6);
    }
    db_result_free(&r);
    return true;
}

static bool gather_days(recon_ctx *x, recon_result *res)
{
    db_result *r = recon_query(x, "reconcile: the figures per day", SQL_RECON_DAY_FIGURES, 0, NULL);
    if (!r)
        return false;
    bool oom = false;
    int n = db_nrows(r);
    res->days = calloc(n ? (size_t)n : 1, sizeof *res->days);
    oom = !res->days;
    for (int i = 0; !oom && i < n; i++) {
        recon_day *d = &res->days[res->n_days++];
        d->tenant_id = db_int(r, i, 0);
        d->channel = recon_dup_or_null(db_value(r, i, 1), &oom);
        snprintf(d->day, sizeof d->day, "%s", db_value(r, i, 2));
        d->statement.rows = (uint64_t)db_int(r, i, 3);
        d->table.rows = (uint64_t)db_int(r, i, 4);
        d->matched = (uint64_t)db_int(r, i, 5);
        d->unverified = (uint64_t)db_int(r, i, 6);
        d->pending = (uint64_t)db_int(r, i, 7);
        d->statement.without_amount = (uint64_t)db_int(r, i, 8);
        d->table.without_amount = (uint64_t)db_int(r, i, 9);
        res->matched += d->matched;
        res->unverified += d->unverified;
        res->pending += d->pending;
    }
    db_result_free(&r);
    if (oom)
        goto oom;
    r = recon_query(x, "reconcile: the amounts per day", SQL_RECON_DAY_AMOUNTS, 2, (const char *const *)x->net_kinds);
    if (!r)
        return false;
    size_t at = 0;
    for (int i = 0; !oom && i < db_nrows(r); i++) {
        recon_day *d = find_day(res, &at, db_int(r, i, 0), db_value(r, i, 1), db_value(r, i, 2));
        if (!d)
            continue;
        recon_side *s = db_value(r, i, 3)[0] == 's' ? &d->statement : &d->table;
        oom = !side_add(s, db_value(r, i, 4), db_value(r, i, 5));
    }
    db_result_free(&r);
    if (oom)
        goto oom;
    if (!gather_day_kinds(x, res))
        return false;
    r = recon_query(x, "reconcile: the categories per day", SQL_RECON_DAY_CATEGORIES, 0, NULL);
    if (!r)
        return false;
    at = 0;
    for (int i = 0; !oom && i < db_nrows(r); i++) {
        recon_day *d = find_day(res, &at, db_int(r, i, 0), db_value(r, i, 1), db_value(r, i, 2));
        recon_category c = recon_category_of(db_value(r, i, 3));
        if (!d && c == CAT_NO_STATEMENT)
            continue;
        if (!d || c == CAT_COUNT)
            continue;
        d->cat_count[c] = (uint64_t)db_int(r, i, 4);
        if (!db_is_null(r, i, 5))
            d->cat_amount[c] = recon_dup_or_null(db_value(r, i, 5), &oom);
        d->cat_amounts[c] = recon_dup_or_null(db_value(r, i, 6), &oom);
        if (!db_is_null(r, i, 7))
            d->cat_shown[c] = recon_dup_or_null(db_value(r, i, 7), &oom);
        d->cat_without[c] = (uint64_t)db_int(r, i, 8);
        d->cat_gross[c] = recon_dup_or_null(db_value(r, i, 9), &oom);
        if (!db_is_null(r, i, 10))
            d->cat_gross_shown[c] = recon_dup_or_null(db_value(r, i, 10), &oom);
        res->cat_count[c] += d->cat_count[c];
    }
    db_result_free(&r);
    if (!oom && !gather_day_money(x, res, &oom))
        return false;
    if (!oom)
        return gather_period_totals(x, res);
oom:
    log_error("reconcile: out of memory gathering the figures");
    return false;
}

static void facts_of(db_result *r, int i, int col, recon_facts *f, bool *oom)
{
    f->present = strcmp(db_value(r, i, col), "t") == 0;
    if (!f->present)
        return;
    f->amount = db_is_null(r, i, col + 1) ? NULL : recon_dup_or_null(db_value(r, i, col + 1), oom);
    f->currency =
        db_is_null(r, i, col + 2) ? NULL : recon_dup_or_null(db_value(r, i, col + 2), oom);
    f->status = (int)db_int(r, i, col + 3);
    f->time = db_is_null(r, i, col + 4) ? NULL : recon_dup_or_null(db_value(r, i, col + 4), oom);
    f->fee = db_is_null(r, i, col + 5) ? NULL : recon_dup_or_null(db_value(r, i, col + 5), oom);
}

/* member of a listing as a copy of its text, NULL when absent or null. */
static char *listing_member(json_t *o, const char *member, bool *oom)
{
    const char *v = json_string_value(json_object_get(o, member));
    return v ? recon_dup_or_null(v, oom) : NULL;
}

/* A duplicate_in_statement line's listings, the JSON array text
 * SQL_RECON_LISTED made, into l->listed.  False: out of memory or a text
 * that is not that array (a bug, logged). */
static bool listings_of(const recon_ctx *x, const char *text, recon_line *l)
{
    json_error_t jerr;
    json_t *a = json_loads(text, 0, &jerr);
    if (!json_is_array(a)) {
        log_error("reconcile: the listings of %s are not a JSON array: %s", l->out_trade_no,
                  jerr.text);
        json_decref(a);
        return false;
    }
    size_t n = json_array_size(a);
    bool oom = n > 0 && !(l->listed = calloc(n, sizeof *l->listed));
    for (size_t k = 0; !oom && k < n; k++) {
        json_t *o = json_array_get(a, k);
        recon_listing *g = &l->listed[l->n_listed++];
        g->facts.present = true;
        g->facts.amount = listing_member(o, "amount", &oom);
        g->facts.currency = listing_member(o, "currency", &oom);
        g->facts.fee = listing_member(o, "fee", &oom);
        g->facts.time = listing_member(o, "time", &oom);
        g->facts.status = (int)json_integer_value(json_object_get(o, "status"));
        json_int_t file_no = json_integer_value(json_object_get(o, "file"));
        g->file = file_no > 0 && (size_t)file_no <= x->cfg->n_files ? x->cfg->files[file_no - 1]
                                                                    : NULL;
        g->line = json_integer_value(json_object_get(o, "line"));
    }
    json_decref(a);
    return !oom;
}

/* Row i of a FETCH of the lines cursor as a line (copies). */
static bool line_of(const recon_ctx *x, db_result *r, int i, recon_line *l)
{
    bool oom = false;
    memset(l, 0, sizeof *l);
    l->category = recon_category_of(db_value(r, i, 0));
    l->tenant_id = db_int(r, i, 1);
    l->channel = recon_dup_or_null(db_value(r, i, 2), &oom);
    l->out_trade_no = db_is_null(r, i, 3) ? NULL : recon_dup_or_null(db_value(r, i, 3), &oom);
    l->callback_type = db_is_null(r, i, 4) ? NULL : recon_dup_or_null(db_value(r, i, 4), &oom);
    snprintf(l->day, sizeof l->day, "%s", db_value(r, i, 5));
    facts_of(r, i, 6, &l->statement, &oom);
    facts_of(r, i, 12, &l->table, &oom);
    l->difference = db_is_null(r, i, 18) ? NULL : recon_dup_or_null(db_value(r, i, 18), &oom);
    int64_t file_no = db_is_null(r, i, 19) ? 0 : db_int(r, i, 19);
    l->file = file_no > 0 && (size_t)file_no <= x->cfg->n_files ? x->cfg->files[file_no - 1] : NULL;
    l->line = db_is_null(r, i, 20) ? 0 : db_int(r, i, 20);
    l->listed_rows = db_is_null(r, i, 22) ? 0 : db_int(r, i, 22);
    l->first_seen = db_is_null(r, i, 23) ? NULL : recon_dup_or_null(db_value(r, i, 23), &oom);
    return !oom && (db_is_null(r, i, 21) || listings_of(x, db_value(r, i, 21), l));
}

/* Every discrepancy line, fetched through a cursor: each written to the
 * --discrepancies file (when asked; *wp, for the caller to publish once the
 * register is committed, or to discard), the first RECON_EXAMPLES of each
 * category kept in res->lines.  The file is complete and durable when this
 * returns true.  *io_failed: the file, not the database, failed. */
static bool stream_lines(recon_ctx *x, recon_result *res, recon_disc **wp, bool *io_failed)
{
    buf err = BUF_INIT;
    recon_disc *w = NULL;
    bool ok = true;
    *io_failed = false;
    if (x->cfg->discrepancies_path && !(w = *wp = recon_disc_open(x->cfg->discrepancies_path, res, &err))) {
        log_error("%s", buf_cstr(&err));
        *io_failed = true;
        buf_free(&err);
        return false;
    }
    size_t kept[CAT_COUNT] = {0}, cap = 0;
    if (res->compared)
        ok = recon_exec(x, "reconcile: the discrepancies",
                        !res->registered ? SQL_RECON_LINE_CURSOR
                        : res->seen_again ? SQL_RECON_LINE_CURSOR_REG : SQL_RECON_LINE_CURSOR_NEW,
                        0, NULL);
    while (ok && res->compared) {
        db_result *r =
            recon_query(x, "reconcile: the discrepancies", SQL_RECON_LINE_FETCH, 0, NULL);
        if (!r) {
            ok = false;
            break;
        }
        int n = db_nrows(r);
        for (int i = 0; ok && i < n; i++) {
            recon_line l;
            if (!line_of(x, r, i, &l)) {
                log_error("reconcile: out of memory reading the discrepancies");
                ok = false;
            } else if (w && !recon_disc_write(w, &l, &err)) {
                log_error("%s", buf_cstr(&err));
                *io_failed = true;
                ok = false;
            }
            bool keep = ok && l.category < CAT_COUNT && kept[l.category] < RECON_EXAMPLES;
            if (keep && res->n_lines == cap) {
                size_t c = cap ? 2 * cap : 16;
                recon_line *grown = realloc(res->lines, c * sizeof *grown);
                if (grown) {
                    res->lines = grown;
                    cap = c;
                } else {
                    keep = false;   /* an example fewer on the page, no more */
                }
            }
            if (keep) {
                kept[l.category]++;
                res->lines[res->n_lines++] = l;
            } else {
                recon_line_free(&l);
            }
        }
        db_result_free(&r);
        if (n == 0)
            break;
    }
    if (ok && res->compared)
        ok = recon_exec(x, "reconcile: the discrepancies", SQL_RECON_LINE_CLOSE, 0, NULL);
    buf_clear(&err);
    if (ok && !recon_disc_finish(w, &err)) {
        log_error("%s", buf_cstr(&err));
        *io_failed = true;
        ok = false;
    }
    buf_free(&err);
    return ok;
}

/* Per-file deduplication: rows staged minus the keys each file's row
 * represents. */
static bool gather_dedup(recon_ctx *x, run_report *rep)
{
    db_result *r = recon_query(x, "reconcile: rows per file", SQL_RECON_FILE_DEDUP, 0, NULL);
    if (!r)
        return false;
    for (int i = 0; i < db_nrows(r); i++) {
        int64_t f = db_int(r, i, 0);
        if (f >= 1 && (size_t)f <= rep->n_files)
            rep->files[f - 1].counts.rows_deduplicated = (uint64_t)db_int(r, i, 1);
    }
    db_result_free(&r);
    return true;
}

/* The comparison: facts, keys, the period, both joins, the outcomes and
 * the lines; then the figures back. */
/* The (tenant, channel) pair every row of the statement has whatever it
 * holds: --set tenant_id with --set channel or the profile's constant
 * channel, into tenant and channel (validated and trimmed as a row's
 * values are); false when the options name no such pair. */
static bool preset_pair(const config *cfg, char tenant[24], buf *channel)
{
    const char *t = cfg->presets.value[COL_TENANT_ID];
    const char *c = cfg->presets.value[COL_CHANNEL];
    const column_rule *rule = cfg->profile ? &cfg->profile->col[COL_CHANNEL] : NULL;
    if (!c && rule && rule->set && rule->n_from == 0 && rule->value)
        c = rule->value;
    int64_t id;
    if (!t || !c || !parse_int_in_range(t, strlen(t), INT64_MIN, INT64_MAX, &id))
        return false;
    size_t n = strlen(c);
    trim_white_space(&c, &n);
    snprintf(tenant, 24, "%lld", (long long)id);
    buf_clear(channel);
    return n > 0 && buf_append(channel, c, n);
}

/* The keys of the period a statement of another day listed, by the
 * register (SQL_RECON_RELISTED), for the classification: read when the
 * role may read the register, none when there is no register yet or a dry
 * run's role may not read it (recon_read_register says so). */
static bool stage_relisted(recon_ctx *x, const char *const *period)
{
    const char *state = recon_register_state(x);
    if (!state)
        return false;
    return (strcmp(state, "readable") == 0 ? recon_exec(x, "reconcile: the keys later statements listed (the register)",
                            SQL_RECON_RELISTED, 2, period)
                     : recon_exec(x, "reconcile: the keys later statements listed",
                                  SQL_RECON_RELISTED_NONE, 0, NULL)) &&
           recon_exec(x, "reconcile: analyzing the keys later statements listed",
                      SQL_RECON_ANALYZE_RELISTED, 0, NULL);
}

/* The table's rows of the statement's keys and of its pairs' period into
 * a temporary table (SQL_RECON_TABLE_ROWS: on one server, with no nested
 * loop but the probe's, whatever statistics the target has or lacks). */
static bool read_table_rows(recon_ctx *x, const char *const *rows)
{
    const char *what = "reconcile: reading the table's rows of the statement";
    if (x->tool.t.distributed)
        return recon_exec(x, what, SQL_RECON_TABLE_ROWS_DISTRIBUTED, 3, rows);
    return recon_exec(x, what, SQL_RECON_NESTLOOP_OFF, 0, NULL) &&
           recon_exec(x, what, SQL_RECON_TABLE_ROWS, 3, rows) &&
           recon_exec(x, what, SQL_RECON_NESTLOOP_BACK, 0, NULL);
}

static bool compare(recon_ctx *x, recon_result *res, run_report *rep)
{
    buf finals = BUF_INIT;
    if (!final_status_array(x->cfg->final_status, x->cfg->n_final_status, &finals)) {
        log_error("reconcile: out of memory");
        return false;
    }
    bool keyed = recon_exec(x, "reconcile: the statement's keys and facts", SQL_RECON_KEYS, 1,
                            (const char *const[]){buf_cstr(&finals)});
    buf_free(&finals);
    if (!keyed ||
        !recon_exec(x, "reconcile: analyzing the statement", SQL_RECON_ANALYZE_KEYS, 0, NULL) ||
        !recon_exec(x, "reconcile: the rows of keys listed with different facts", SQL_RECON_LISTED,
                    1, (const char *const[]){RECON_LISTED_MAX_TEXT}) ||
        !gather_dedup(x, rep))
        return false;
    if (!x->cfg->period) {
        db_result *r =
            recon_query(x, "reconcile: the statement's days", SQL_RECON_DAYS_SPAN, 0, NULL);
        if (!r)
            return false;
        if (!db_is_null(r, 0, 0)) {
            snprintf(res->from, sizeof res->from, "%s", db_value(r, 0, 0));
            snprintf(res->to, sizeof res->to, "%s", db_value(r, 0, 1));
        }
        db_result_free(&r);
        if (!res->from[0])
            return true;   /* no valid row: nothing to compare */
    }
    const char *period[] = {res->from, res->to};
    db_result *r =
        recon_query(x, "reconcile: rows outside the period", SQL_RECON_OUTSIDE, 2, period);
    if (!r)
        return false;
    res->outside_period = (uint64_t)db_int(r, 0, 0);
    db_result_free(&r);
    const char *rows[] = {res->from, res->to, x->sql_zone};
    char tenant[24];
    buf channel = BUF_INIT;
    bool preset = preset_pair(x->cfg, tenant, &channel);
    const char *pair[] = {preset ? tenant : NULL, preset ? buf_cstr(&channel) : NULL};
    bool paired = recon_exec(x, "reconcile: the statement's tenants and channels", SQL_RECON_PAIRS,
                             2, pair);
    buf_free(&channel);
    if (!paired ||
        !recon_exec(x, "reconcile: analyzing the pairs", SQL_RECON_ANALYZE_PAIRS, 0, NULL) ||
        !read_table_rows(x, rows) ||
        !recon_exec(x, "reconcile: analyzing the table's rows", SQL_RECON_ANALYZE_ROWS, 0, NULL) ||
        !recon_exec(x, "reconcile: the view of the table's facts", SQL_RECON_TABLE_VIEW, 0, NULL) ||
        !stage_relisted(x, period) ||
        !recon_exec(x, "reconcile: comparing and classifying", SQL_RECON_CLASSIFY, 2, period) ||
        !recon_exec(x, "reconcile: the statement's other rows of its keys", SQL_RECON_EXTRA_ROWS, 0,
                    NULL) ||
        !recon_exec(x, "reconcile: analyzing the other rows", SQL_RECON_ANALYZE_EXTRA_ROWS, 0,
                    NULL) ||
        !recon_exec(x, "reconcile: the other rows' days", SQL_RECON_EXTRA, 2, period) ||
        !recon_exec(x, "reconcile: analyzing the outcomes", SQL_RECON_ANALYZE_OUT, 0, NULL) ||
        !recon_exec(x, "reconcile: the discrepancies", SQL_RECON_LINES, 0, NULL) ||
        !recon_exec(x, "reconcile: analyzing the discrepancies", SQL_RECON_ANALYZE_LINES, 0, NULL))
        return false;
    /* Compared only once the figures are in: a failure gathering them must
     * not leave a verdict ("balanced") standing on partial figures. */
    if (!gather_days(x, res))
        return false;
    res->compared = true;
    return true;
}

/* ---- the command ------------------------------------------------------ */

/* --repair: the import pipeline over the same files, after the comparison
 * committed: missing inserts only keys the table lacks (the merge's
 * --on-conflict nothing: no existing row changes); merge is import.  What
 * it mended is asked of the table afterwards (mend_register), not of the
 * pipeline's account, which a resumed file fills with an earlier run's
 * rows. */
static int repair(const config *cfg, run_report *rep)
{
    config c = *cfg;
    c.cmd = CMD_IMPORT;
    if (cfg->repair == REPAIR_MISSING)
        c.conflict = CONFLICT_NOTHING;
    c.force = true;   /* a file the ledger holds is repaired all the same */
    int code = EXIT_OK;
    loader *ld = loader_open(&c, &code);
    run_report r2;
    if (ld && !run_report_init(&r2, cfg->n_files)) {
        loader_close(&ld);
        log_error("out of memory");
        code = EXIT_INPUT;
    }
    if (ld) {
        code = pipeline_run(&c, ld, &r2);
        loader_close(&ld);
        for (size_t i = 0; i < cfg->n_files; i++) {
            load_counts *to = &rep->files[i].counts;
            const load_counts *from = &r2.files[i].counts;
            to->inserted = from->inserted;
            to->updated = from->updated;
            to->unchanged = from->unchanged;
            to->stale = from->stale;
            to->existing = from->existing;
            to->chunks = from->chunks;
        }
        run_report_free(&r2);
    }
    return code;
}

/* The keys the repair inserted (SQL_RECON_REPAIR_INSERTED): the first
 * RECON_REPAIR_LISTED into res->repaired_keys.  EXIT_OK, the database's
 * status, or EXIT_INPUT out of memory (logged). */
static int gather_inserted(recon_ctx *x, recon_result *res)
{
    char limit[16];
    snprintf(limit, sizeof limit, "%d", RECON_REPAIR_LISTED);
    db_result *r = recon_query(x, "--repair: the rows it inserted", SQL_RECON_REPAIR_INSERTED, 1,
                               (const char *const[]){limit});
    if (!r)
        return db_failure_exit(x->tool.d);
    int n = db_nrows(r);
    bool oom = false;
    res->repaired_keys = calloc(n ? (size_t)n : 1, sizeof *res->repaired_keys);
    oom = !res->repaired_keys;
    for (int i = 0; !oom && i < n; i++) {
        recon_key *k = &res->repaired_keys[res->n_repaired_keys++];
        k->tenant_id = db_int(r, i, 0);
        k->channel = recon_dup_or_null(db_value(r, i, 1), &oom);
        k->out_trade_no = recon_dup_or_null(db_value(r, i, 2), &oom);
        k->callback_type = recon_dup_or_null(db_value(r, i, 3), &oom);
        int64_t file_no = db_is_null(r, i, 4) ? 0 : db_int(r, i, 4);
        k->file = file_no > 0 && (size_t)file_no <= x->cfg->n_files
                      ? recon_dup_or_null(x->cfg->files[file_no - 1], &oom)
                      : NULL;
        k->line = db_is_null(r, i, 5) ? 0 : db_int(r, i, 5);
    }
    db_result_free(&r);
    if (oom)
        log_error("--repair: out of memory listing the inserted rows");
    return oom ? EXIT_INPUT : EXIT_OK;
}

/* After a repair, whole or cut short: the table's rows of this run's
 * missing_in_table and mismatch lines read again and compared with the
 * statement (SQL_RECON_REG_REPAIRED); the items they now agree with are
 * resolved and counted in the run's resolved, the missing keys the table
 * now holds are the rows it inserted (res->repaired, repaired_keys).  The
 * reconcile's own connection, its transaction committed.  EXIT_OK or the
 * database's status. */
static int mend_register(recon_ctx *x, recon_result *res)
{
    if (!res->registered || !x->tool.d)
        return EXIT_OK;
    signals_set_hook(db_cancel, x->tool.d);
    char run_id[32];
    snprintf(run_id, sizeof run_id, "%lld", (long long)res->run_id);
    const char *what = "--repair: the table's rows of the keys it repaired";
    bool ok = recon_exec(x, what, SQL_RECON_REPAIR_KEYS, 0, NULL) &&
              recon_exec(x, what,
                         x->tool.t.distributed ? SQL_RECON_REPAIR_ROWS_DISTRIBUTED
                                               : SQL_RECON_REPAIR_ROWS,
                         0, NULL) &&
              recon_exec(x, "--repair: resolving the register's items it repaired",
                         SQL_RECON_REG_REPAIRED, 1, (const char *const[]){run_id});
    db_result *r = ok ? recon_query(x, what, SQL_RECON_REPAIR_MENDED, 0, NULL) : NULL;
    if (!r)
        return db_failure_exit(x->tool.d);
    res->repaired = (uint64_t)db_int(r, 0, 0);
    uint64_t n = (uint64_t)db_int(r, 0, 1);
    db_result_free(&r);
    res->resolved += n;
    res->resolved_items.total += n;
    res->repair_resolved = n;
    return gather_inserted(x, res);
}

/* Once the run's outputs are written (the summary, and the report, page
 * and discrepancies file asked for): the items they showed as appeared
 * are reported by this run (SQL_RECON_REG_REPORTED), in a transaction of
 * their own.  Until then, or when an output failed or the run was killed,
 * they stay unreported, and the next run of their pair lists them as
 * appeared again: shown at least once, never lost (SPEC "Across days").
 * A failure here only means they are shown again: a warning. */
static void mark_reported(recon_ctx *x, const recon_result *res)
{
    if (!res->registered || !x->tool.d || signals_interrupted())
        return;
    char run_id[32];
    snprintf(run_id, sizeof run_id, "%lld", (long long)res->run_id);
    buf sql = BUF_INIT;
    db_result *r = NULL;
    if (recon_sql_render(x, &sql, SQL_RECON_REG_REPORTED))
        r = db_query(x->tool.d, buf_cstr(&sql), 1, (const char *const[]){run_id});
    if (!r)
        log_warn("reconcile: could not record that run %s's outputs showed what appeared; the "
                 "next run of its pairs lists it as appeared again", run_id);
    db_result_free(&r);
    buf_free(&sql);
}

/* The profile's status map read backwards into res->statuses: for each
 * status number its source values, in the profile's order, "/" between
 * them (WeChat's 2: "SUCCESS/REVOKED").  A status the map yields through
 * a template ("{column}") has no word.  False when out of memory. */
static bool status_words(const profile *pf, recon_result *res)
{
    const column_rule *rule = pf ? &pf->col[COL_STATUS] : NULL;
    for (size_t i = 0; rule && i < rule->n_map; i++) {
        const map_entry *e = &rule->map[i];
        char *end = NULL;
        long v = e->n_result ? strtol(e->result[0], &end, 10) : 0;
        if (!e->n_result || end == e->result[0] || *end || v < INT16_MIN || v > INT16_MAX)
            continue;
        recon_status_word *w = NULL;
        for (size_t k = 0; k < res->n_statuses; k++)
            if (res->statuses[k].status == (int)v)
                w = &res->statuses[k];
        if (!w) {
            recon_status_word *grown =
                realloc(res->statuses, (res->n_statuses + 1) * sizeof *grown);
            if (!grown)
                return false;
            res->statuses = grown;
            w = &res->statuses[res->n_statuses++];
            w->status = (int)v;
            w->words = strdup(e->match);
            if (!w->words)
                return false;
            continue;
        }
        size_t a = strlen(w->words), b = strlen(e->match);
        char *joined = realloc(w->words, a + b + 2);
        if (!joined)
            return false;
        joined[a] = '/';
        memcpy(joined + a + 1, e->match, b + 1);
        w->words = joined;
    }
    return true;
}

/* Reads the configuration the command needs beyond the CLI's checks. */
static int prepare(const config *cfg, recon_result *res, facts_map *tf, stmt_facts *sf,
                   int64_t *grace_s)
{
    buf err = BUF_INIT;
    int code = EXIT_OK;
    const char *zone = cfg->profile ? cfg->profile->timezone : NULL;
    if (cfg->timezone)
        zone = cfg->timezone;
    tz_zone z;
    if (zone && !tz_resolve(zone, &z, &err)) {
        code = EXIT_USAGE;
        goto out;
    }
    if (zone)
        tz_free(&z);
    res->zone = strdup(zone ? zone : "UTC");
    if (!res->zone || !stmt_facts_from_profile(cfg->profile, cfg, sf) ||
        !status_words(cfg->profile, res)) {
        buf_printf(&err, "out of memory");
        code = EXIT_INPUT;
        goto out;
    }
    *grace_s = 2 * 86400;
    if ((cfg->period && !recon_parse_period(cfg->period, res->from, res->to, &err)) ||
        (cfg->grace && !recon_parse_duration(cfg->grace, grace_s, &err)) ||
        !facts_load(cfg->facts_path, tf, &err))
        code = EXIT_USAGE;
    if (cfg->dry_run && cfg->repair != REPAIR_NONE) {
        buf_printf(&err, "--repair writes the table; --dry-run writes nothing: choose one");
        code = EXIT_USAGE;
    }
out:
    if (code != EXIT_OK)
        log_error("%s", buf_cstr(&err));
    buf_free(&err);
    return code;
}

/* Without --timezone or a profile's zone, a bill that states its own
 * window with its offset (PayPal's SH, "2024/08/20 00:00:00 -0700") has
 * its days cut in that offset, not in UTC: the zone becomes the first
 * file's, for the comparison and the report.  False when the database
 * failed or memory ran out. */
static bool window_zone(recon_ctx *x, recon_result *res)
{
    const config *cfg = x->cfg;
    if (!x->window_zone[0] || cfg->timezone || (cfg->profile && cfg->profile->timezone))
        return true;
    char *zone = strdup(x->window_zone);
    char *sql = recon_zone_for_sql(zone);
    if (!zone || !sql) {
        free(zone);
        free(sql);
        log_error("out of memory");
        return false;
    }
    free(res->zone);
    res->zone = zone;
    free(x->sql_zone);
    x->sql_zone = sql;
    const char *set[] = {x->sql_zone};
    return recon_exec(x, "reconcile: the bill's own zone", SQL_RECON_ZONE, 1, set);
}

/* Connects, stages, compares and (unless a dry run) registers, writes the
 * discrepancies file, commits.  Returns the status of the files and the
 * database (not yet the verdict's 5). */
static int reconcile(recon_ctx *x, recon_result *res, run_report *rep, rejects *rj,
                     const facts_map *tf, const stmt_facts *sf, int64_t grace_s)
{
    const config *cfg = x->cfg;
    int code = tool_open(cfg, &x->tool);
    if (code != EXIT_OK)
        return code;
    rep->database = strdup(db_describe(x->tool.d));
    buf err = BUF_INIT;
    if (!target_check_shape(&x->tool.t, &err)) {
        log_error("%s", buf_cstr(&err));
        buf_free(&err);
        return EXIT_USAGE;
    }
    buf_free(&err);
    if (!recon_register_names(x))
        return EXIT_INPUT;
    if (!db_begin(x->tool.d))
        return tool_db_failure(x->tool.d, "reconcile: BEGIN");
    x->sql_zone = recon_zone_for_sql(res->zone);
    x->net_kinds[0] = kind_names_json(cfg, "refund");
    x->net_kinds[1] = kind_names_json(cfg, "revoked");
    bool ok = x->sql_zone && x->net_kinds[0] && x->net_kinds[1] &&
              recon_stage_setup(x, x->sql_zone, grace_s, tf, sf);
    for (size_t i = 0; ok && i < cfg->n_files; i++) {
        int c = recon_stage_file(x, i, rj, &rep->files[i], res);
        if (c != EXIT_OK) {
            code = c;
            ok = false;
            for (size_t k = i + 1; k < cfg->n_files; k++) {
                rep->files[k].path = cfg->files[k];
                rep->files[k].status = FILE_FAILED;
                file_report_set_error(&rep->files[k], "not read: an earlier file failed, so "
                                                      "nothing was compared");
            }
        }
    }
    if (ok)
        ok = window_zone(x, res);
    if (ok)
        ok = compare(x, res, rep);
    /* --repair missing inserts the rows the comparison found missing; a
     * statement row outside an explicit period was never compared, and
     * the merge would insert it all the same (its callback's absence then
     * never shown when its own day is reconciled): refused before
     * anything is written. */
    if (ok && cfg->repair == REPAIR_MISSING && res->outside_period > 0) {
        log_error("reconcile --repair missing: %llu statement %s outside --period %s..%s, never "
                  "compared, and the repair would insert %s; give a period covering the "
                  "statement's days, or repair without --period",
                  (unsigned long long)res->outside_period,
                  res->outside_period == 1 ? "row falls" : "rows fall", res->from, res->to,
                  res->outside_period == 1 ? "it" : "them");
        code = EXIT_USAGE;
        ok = false;
        res->compared = false;
    }
    if (ok && !cfg->dry_run && res->compared)
        ok = recon_write_register(x, res, rep);
    else if (ok && cfg->dry_run && res->compared)
        ok = recon_read_register(x, res);
    recon_disc *disc = NULL;
    if (ok) {
        bool io_failed;
        ok = stream_lines(x, res, &disc, &io_failed);
        if (!ok && io_failed)
            code = EXIT_INPUT;
    }
    /* The last moment an interrupt can stop the run: after it, the
     * register is committed and the run whole. */
    if (ok && recon_interrupted(x, "reconcile"))
        ok = false;
    if (!ok && code == EXIT_OK)
        code = x->failed_logged ? db_failure_exit(x->tool.d) : EXIT_DATABASE;
    if (ok && !cfg->dry_run) {
        if (!db_commit(x->tool.d)) {
            code = tool_db_failure(x->tool.d, "reconcile: COMMIT");
            ok = false;
        }
    } else {
        db_rollback(x->tool.d);
    }
    if (code == EXIT_OK && !ok)
        code = EXIT_DATABASE;
    /* Rolled back: the register holds nothing of this run, and the summary
     * and report must not name a run number or items it opened. */
    if (!ok)
        recon_result_unregister(res);
    /* The file takes its place only beside a committed register (or after a
     * dry run that compared everything); a failure leaves what was there. */
    if (ok && disc) {
        buf perr = BUF_INIT;
        if (!recon_disc_publish(&disc, &perr)) {
            log_error("%s", buf_cstr(&perr));
            code = EXIT_INPUT;
            x->disc_failed = true;
        }
        buf_free(&perr);
    }
    recon_disc_discard(&disc);
    return code;
}

/* A file the run never came to read (an option refused, the database or
 * the table unusable) says so in the report, not only "failed". */
static void explain_unread(run_report *rep, int code)
{
    for (size_t i = 0; i < rep->n_files; i++) {
        file_report *f = &rep->files[i];
        if (f->status == FILE_FAILED && !f->error && f->counts.rows_read == 0) {
            char *logged = log_last_error();
            buf why = BUF_INIT;
            buf_printf(&why, "not read: nothing was compared (exit %d: %s%s%s)", code,
                       exit_status_meaning(rep, code), logged && *logged ? ": " : "",
                       logged ? logged : "");
            file_report_set_error(f, buf_cstr(&why));
            buf_free(&why);
            free(logged);
        }
    }
}

int recon_run(const config *cfg)
{
    recon_result res = {.repair = cfg->repair, .dry_run = cfg->dry_run};
    facts_map tf = {0};
    stmt_facts sf = {0};
    run_report rep;
    if (!run_report_init(&rep, cfg->n_files)) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    rep.validate_only = cfg->repair == REPAIR_NONE;
    rep.reconcile = true;
    rep.repair = cfg->repair == REPAIR_MISSING ? "missing"
                 : cfg->repair == REPAIR_MERGE ? "merge"
                                               : NULL;
    rep.dry_run = cfg->dry_run;
    rep.target = strdup(cfg->table);
    for (size_t i = 0; i < cfg->n_files; i++) {
        input_format fmt = cfg->format != FORMAT_AUTO ? cfg->format : format_from_name(cfg->files[i]);
        rep.files[i].path = cfg->files[i];
        rep.files[i].format = cfg->profile ? cfg->profile->name : format_name(fmt);
        rep.files[i].status = FILE_FAILED;
    }
    recon_ctx x = {.cfg = cfg};
    progress_init(&x.prog, cfg->quiet);
    double t0 = now_seconds();
    int64_t grace_s = 0;
    rejects *rj = NULL;
    int code = prepare(cfg, &res, &tf, &sf, &grace_s);
    if (code == EXIT_OK) {
        rj = rejects_open(cfg->rejects_path);
        if (cfg->profile && cfg->profile->refund_of)
            x.links = key_links_new();
        if (!rj || (cfg->profile && cfg->profile->refund_of && !x.links)) {
            log_error("out of memory");
            code = EXIT_INPUT;
        }
    }
    if (code == EXIT_OK)
        code = reconcile(&x, &res, &rep, rj, &tf, &sf, grace_s);
    progress_done(&x.prog);
    if (code != EXIT_OK)
        explain_unread(&rep, code);
    for (size_t i = 0; i < cfg->n_files; i++)
        if (rep.files[i].counts.rows_rejected > 0)
            code = exit_worst(code, EXIT_REJECTS);
    bool found = res.compared && recon_has_discrepancies(&res);
    if (code == EXIT_OK || code == EXIT_REJECTS) {
        if (cfg->repair != REPAIR_NONE && res.compared) {
            code = exit_worst(code, repair(cfg, &rep));
            code = exit_worst(code, mend_register(&x, &res));
        }
    }
    if (found)
        code = exit_worst(code, EXIT_DISCREPANCIES);
    if (rj) {
        buf e = BUF_INIT;
        rejects_take_summary(rj, &rep.rejects);
        if (!rejects_close(&rj, &e)) {
            log_error("%s", buf_cstr(&e));
            code = exit_worst(code, EXIT_INPUT);
        }
        buf_free(&e);
    }
    rep.elapsed_s = now_seconds() - t0;
    run_report_total(&rep);
    int rendered = recon_render_outputs(cfg, &res, &rep, code);
    code = exit_worst(code, rendered);
    if (rendered == EXIT_OK && !x.disc_failed)
        mark_reported(&x, &res);
    tool_close(&x.tool);
    key_links_free(&x.links);
    run_report_free(&rep);
    recon_result_free(&res);
    facts_free(&tf);
    stmt_facts_free(&sf);
    buf_free(&x.item);
    buf_free(&x.run);
    buf_free(&x.item_index);
    buf_free(&x.run_index);
    buf_free(&x.item_name);
    buf_free(&x.run_name);
    free(x.sql_zone);
    free(x.net_kinds[0]);
    free(x.net_kinds[1]);
    return code;
}
