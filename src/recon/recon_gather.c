/*
 * recon_gather.c - the comparison and its gathering (see recon_gather.h):
 * a handful of set-based statements of recon_sql.h on the server, then
 * only their figures and discrepancy lines read back into the
 * recon_result, each amount as PostgreSQL's exact numeric text.
 */
#include "recon/recon_gather.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/final_status.h"
#include "db/recon_sql.h"
#include "input/profile.h"
#include "output/log.h"
#include "recon/recon_register.h"
#include "rules/validate.h"

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

char *recon_kind_names_json(const config *cfg, const char *kind)
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
    if (!recon_exec(x, "reconcile: the sums per kind and currency", SQL_RECON_KIND_TOTALS, 0, NULL))
        return false;
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

bool recon_stream_lines(recon_ctx *x, recon_result *res, recon_disc **wp, bool *io_failed)
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

/* Each file's rows the deduplication took away (the rows its COPY sent
 * less the keys its rows represent), and without --period the days the
 * statement's keys fall in, into res->from and res->to (left empty when
 * there is no key). */
static bool gather_files(recon_ctx *x, run_report *rep, recon_result *res)
{
    const char *what = "reconcile: rows per file";
    db_result *r = recon_exec(x, what, SQL_RECON_KEY_DAYS, 0, NULL) &&
                           recon_exec(x, what, SQL_RECON_ANALYZE_KEY_DAYS, 0, NULL)
                       ? recon_query(x, what, SQL_RECON_FILE_KEYS, 0, NULL)
                       : NULL;
    if (!r)
        return false;
    for (int i = 0; i < db_nrows(r); i++) {
        int64_t f = db_int(r, i, 0);
        if (f >= 1 && (size_t)f <= rep->n_files)
            rep->files[f - 1].counts.rows_deduplicated =
                x->staged[f - 1] - (uint64_t)db_int(r, i, 1);
        const char *from = db_value(r, i, 2), *to = db_value(r, i, 3);
        if (x->cfg->period)
            continue;
        if (!res->from[0] || strcmp(from, res->from) < 0)
            snprintf(res->from, sizeof res->from, "%s", from);
        if (!res->to[0] || strcmp(to, res->to) > 0)
            snprintf(res->to, sizeof res->to, "%s", to);
    }
    db_result_free(&r);
    return true;
}

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

/* The levels of facts of the pairs' channels, the kinds --facts names and
 * the currencies' exponents, as the literals SQL_RECON_TABLE_ROWS is
 * written with (SQL_RECON_LEVELS). */
static bool read_levels(recon_ctx *x)
{
    const char *what = "reconcile: the levels of the table's facts";
    db_result *r = recon_query(x, what, SQL_RECON_LEVELS, 0, NULL);
    if (!r)
        return false;
    buf *to[] = {&x->levels, &x->kinds, &x->ccys, &x->timed};
    bool ok = true;
    for (int i = 0; i < 4; i++) {
        buf_clear(to[i]);
        ok = ok && buf_append_str(to[i], db_value(r, 0, i));
    }
    db_result_free(&r);
    if (!ok) {
        log_error("%s: out of memory", what);
        db_set_out_of_memory(x->tool.d);
        x->failed_logged = true;
    }
    return ok;
}

/* The table's rows of the statement's keys and of its pairs' period, with
 * their facts, into idemload_recon_t.  On one server (SQL_RECON_TABLE_ROWS:
 * with no nested loop but the probe's, whatever statistics the target has
 * or lacks) the rows are read with their facts, the keys the read left
 * are probed, and --repair's table of rows read again starts empty.  On a Citus target the rows are read
 * shard by shard into idemload_recon_traw and their facts worked out
 * here.  Either way idemload_recon_tv shows the facts of
 * idemload_recon_traw's rows. */
static bool read_table_rows(recon_ctx *x, const char *const *rows)
{
    const char *what = "reconcile: reading the table's rows of the statement";
    if (x->tool.t.distributed)
        return recon_exec(x, what, SQL_RECON_TABLE_ROWS_DISTRIBUTED, 3, rows) &&
               recon_exec(x, "reconcile: analyzing the table's rows", SQL_RECON_ANALYZE_ROWS, 0,
                          NULL) &&
               recon_exec(x, "reconcile: the view of the table's facts", SQL_RECON_TABLE_VIEW, 0,
                          NULL) &&
               recon_exec(x, "reconcile: the table's facts", SQL_RECON_TABLE_FACTS, 0, NULL);
    return recon_exec(x, what, SQL_RECON_HASH_ONLY, 0, NULL) && read_levels(x) &&
           recon_exec(x, what, SQL_RECON_TABLE_ROWS, 3, rows) &&
           recon_exec(x, what, SQL_RECON_TABLE_PROBE, 0, NULL) &&
           recon_exec(x, what, SQL_RECON_HASH_BACK, 0, NULL) &&
           recon_exec(x, what, SQL_RECON_TABLE_RAW_EMPTY, 0, NULL) &&
           recon_exec(x, "reconcile: the view of the table's facts", SQL_RECON_TABLE_VIEW, 0,
                      NULL);
}

/* Every unit of the period classified (recon_sql.c): those that differ
 * into idemload_recon_out, all of them summed into idemload_recon_g.
 * Hash joins only: the days each pair lists (a few rows, and the planner
 * takes the rows the statement lacks for a few too) were joined in a
 * nested loop, every such row against every listed day. */
static bool classify(recon_ctx *x, const char *const period[2])
{
    const char *what = "reconcile: comparing and classifying";
    return recon_exec(x, what, SQL_RECON_OUT_TABLE, 2, period) &&
           recon_exec(x, what, SQL_RECON_GROUPS_TABLE, 0, NULL) &&
           recon_exec(x, what, SQL_RECON_HASH_ONLY, 0, NULL) &&
           recon_exec(x, what, SQL_RECON_CLASSIFY, 2, period) &&
           recon_exec(x, "reconcile: the outcomes summed", SQL_RECON_CLASSIFY_SUMS, 2, period) &&
           recon_exec(x, what, SQL_RECON_HASH_BACK, 0, NULL);
}

bool recon_compare(recon_ctx *x, recon_result *res, run_report *rep)
{
    buf finals = BUF_INIT;
    if (!final_status_array(x->cfg->final_status, x->cfg->n_final_status, &finals)) {
        log_error("reconcile: out of memory");
        return false;
    }
    /* analyzed before the keys listed more than once are joined with
     * the rows: a key table never analyzed was taken for 35,000 of them
     * where there were 76, and every row was sorted to merge them; hash
     * joins only, the repeated keys' few rows among a million keys, which
     * a nested loop read once per key (1.3 s at 1M) */
    const char *what = "reconcile: the statement's keys and facts";
    bool keyed = recon_exec(x, what, SQL_RECON_HASH_ONLY, 0, NULL) &&
                 recon_exec(x, what, SQL_RECON_ANALYZE_RAW, 0, NULL) &&
                 recon_exec(x, what, SQL_RECON_REPEATED, 0, NULL) &&
                 recon_exec(x, what, SQL_RECON_ANALYZE_REPEATED, 0, NULL) &&
                 recon_exec(x, "reconcile: the keys listed more than once", SQL_RECON_KEYS_SHARED,
                            1, (const char *const[]){buf_cstr(&finals)}) &&
                 recon_exec(x, what, SQL_RECON_ANALYZE_SHARED, 0, NULL) &&
                 recon_exec(x, what, SQL_RECON_KEYS, 0, NULL) &&
                 recon_exec(x, "reconcile: analyzing the statement", SQL_RECON_ANALYZE_KEYS, 0,
                            NULL) &&
                 recon_exec(x, what, SQL_RECON_HASH_BACK, 0, NULL);
    buf_free(&finals);
    if (!keyed ||
        !recon_exec(x, "reconcile: the rows of keys listed with different facts", SQL_RECON_LISTED,
                    1, (const char *const[]){RECON_LISTED_MAX_TEXT}) ||
        !gather_files(x, rep, res))
        return false;
    if (!x->cfg->period && !res->from[0])
        return true;   /* no valid row: nothing to compare */
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
        !recon_exec(x, "reconcile: analyzing the table's facts", SQL_RECON_ANALYZE_TABLE_FACTS, 0,
                    NULL) ||
        !stage_relisted(x, period) ||
        !classify(x, period) ||
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
