/*
 * recon_render.c - a recon_result as text, JSON, NDJSON/CSV and HTML (see
 * recon_render.h).  Nothing here queries: the result is complete.
 */
#include "recon/recon_render.h"
#include "output/text_escape.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output/csv_field.h"
#include "output/disc_file.h"
#include "output/html.h"
#include "output/log.h"
#include "rules/dec_total.h"
#include "util/exitcodes.h"

static const char *verdict_of(const recon_result *r)
{
    return !r->compared ? "not compared"
           : recon_has_discrepancies(r) ? "discrepancies"
                                        : "balanced";
}

/* ---- the discrepancies file ------------------------------------------ */

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* What a difference is, wherever a reader sees one. */
#define DIFFERENCE_IS "statement minus table (the channel minus our records)"

/* A side's facts; status_word: the channel's words for its status (the
 * profile's map read backwards), null without them. */
static json_t *facts_json(const recon_facts *f, const recon_result *res)
{
    if (!f->present)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "amount", str_or_null(f->amount));
    json_object_set_new(o, "currency", str_or_null(f->currency));
    json_object_set_new(o, "fee", str_or_null(f->fee));
    json_object_set_new(o, "status", json_integer(f->status));
    json_object_set_new(o, "status_word", str_or_null(recon_status_words(res, f->status)));
    json_object_set_new(o, "time", str_or_null(f->time));
    return o;
}

/* o's "file": a file name is any bytes; one that is not UTF-8 is escaped
 * as in the report, its exact bytes in file_base64 (jansson refuses it as
 * it is).  NULL: null. */
static void file_json(json_t *o, const char *file)
{
    if (!file) {
        json_object_set_new(o, "file", json_null());
        return;
    }
    buf name = BUF_INIT, b64 = BUF_INIT;
    bool exact = text_utf8_or_escaped(&name, file);
    json_object_set_new(o, "file", json_stringn(buf_cstr(&name), name.len));
    if (!exact) {
        text_base64(&b64, file, strlen(file));
        json_object_set_new(o, "file_base64", json_stringn(buf_cstr(&b64), b64.len));
    }
    buf_free(&name);
    buf_free(&b64);
}

static json_t *line_json(const recon_line *l, const recon_result *res)
{
    json_t *o = json_object();
    json_object_set_new(o, "category", json_string(recon_category_name(l->category)));
    json_object_set_new(o, "tenant_id", json_integer(l->tenant_id));
    json_object_set_new(o, "channel", str_or_null(l->channel));
    json_object_set_new(o, "out_trade_no", str_or_null(l->out_trade_no));
    json_object_set_new(o, "callback_type", str_or_null(l->callback_type));
    json_object_set_new(o, "day", json_string(l->day));
    json_object_set_new(o, "statement", facts_json(&l->statement, res));
    json_object_set_new(o, "table", facts_json(&l->table, res));
    json_object_set_new(o, "difference", str_or_null(l->difference));
    file_json(o, l->file);
    json_object_set_new(o, "line", l->file ? json_integer(l->line) : json_null());
    json_object_set_new(o, "first_seen", str_or_null(l->first_seen));
    json_t *listed = l->listed_rows ? json_array() : json_null();
    for (size_t i = 0; i < l->n_listed; i++) {
        const recon_listing *g = &l->listed[i];
        json_t *f = facts_json(&g->facts, res);
        file_json(f, g->file);
        json_object_set_new(f, "line", g->file ? json_integer(g->line) : json_null());
        json_array_append_new(listed, f);
    }
    json_object_set_new(o, "listed", listed);
    json_object_set_new(o, "listed_rows", l->listed_rows ? json_integer(l->listed_rows)
                                                         : json_null());
    return o;
}

/* A listing as a reader sees it: "FILE:LINE CNY 21.00, fee 0.10, status 1,
 * TIME" (a file name that is not UTF-8 escaped). */
static bool listing_text(buf *out, const recon_listing *g, const recon_result *res)
{
    const recon_facts *f = &g->facts;
    char st[96];
    bool ok = true;
    if (g->file) {
        buf name = BUF_INIT;
        text_utf8_or_escaped(&name, g->file);
        ok = buf_append_str(out, buf_cstr(&name)) &&
             buf_printf(out, ":%lld ", (long long)g->line);
        buf_free(&name);
    }
    return ok && buf_printf(out, "%s%s%s", f->currency ? f->currency : "",
                            f->currency ? " " : "", f->amount ? f->amount : "no amount") &&
           (!f->fee || buf_printf(out, ", fee %s", f->fee)) &&
           buf_printf(out, ", status %s", recon_status_text(res, f->status, st, sizeof st)) &&
           (!f->time || buf_printf(out, ", %s", f->time));
}

/* Every listing of a line, "; " between them, and how many more there are. */
static bool listings_text(buf *out, const recon_line *l, const recon_result *res)
{
    bool ok = true;
    for (size_t i = 0; ok && i < l->n_listed; i++)
        ok = (i == 0 || buf_append_str(out, "; ")) && listing_text(out, &l->listed[i], res);
    if (ok && (uint64_t)l->listed_rows > l->n_listed)
        ok = buf_printf(out, "; and %lld more rows", (long long)(l->listed_rows - (int64_t)l->n_listed));
    return ok;
}

static const char *const csv_columns[] = {
    "category",          "tenant_id",       "channel",           "out_trade_no",
    "callback_type",     "day",             "statement_amount",  "statement_currency",
    "statement_fee",     "statement_status", "statement_time",   "table_amount",
    "table_currency",    "table_fee",       "table_status",      "table_time",
    "difference",        "file",            "line",              "first_seen",
    "listed_rows",       "listed",          "statement_status_word", "table_status_word",
    "difference_is",
};

static bool csv_line(buf *out, const recon_line *l, const recon_result *res)
{
    char tenant[24], sst[16], tst[16], line[24], rows[24];
    snprintf(tenant, sizeof tenant, "%lld", (long long)l->tenant_id);
    snprintf(rows, sizeof rows, "%lld", (long long)l->listed_rows);
    buf listed = BUF_INIT;
    if (l->listed_rows && !listings_text(&listed, l, res)) {
        buf_free(&listed);
        return false;
    }
    snprintf(sst, sizeof sst, "%d", l->statement.status);
    snprintf(tst, sizeof tst, "%d", l->table.status);
    snprintf(line, sizeof line, "%lld", (long long)l->line);
    const recon_facts *s = &l->statement, *t = &l->table;
    const char *v[] = {recon_category_name(l->category), tenant, l->channel, l->out_trade_no,
                       l->callback_type, l->day,
                       s->present ? s->amount : NULL, s->present ? s->currency : NULL,
                       s->present ? s->fee : NULL, s->present ? sst : NULL,
                       s->present ? s->time : NULL,
                       t->present ? t->amount : NULL, t->present ? t->currency : NULL,
                       t->present ? t->fee : NULL, t->present ? tst : NULL,
                       t->present ? t->time : NULL,
                       l->difference, l->file, l->file ? line : NULL, l->first_seen,
                       l->listed_rows ? rows : NULL, l->listed_rows ? buf_cstr(&listed) : NULL,
                       s->present ? recon_status_words(res, s->status) : NULL,
                       t->present ? recon_status_words(res, t->status) : NULL,
                       DIFFERENCE_IS};
    /* the data's texts: channel, key, currencies, file, the listings, the
     * profile's status words */
    static const bool text[] = {false, false, true, true, true, false, false, true, false, false,
                                false, false, true, false, false, false, false, true, false, false,
                                false, true, true, true, false};
    _Static_assert(sizeof text / sizeof text[0] == sizeof csv_columns / sizeof csv_columns[0],
                   "one flag per column");
    buf name = BUF_INIT;
    if (l->file && !text_utf8_or_escaped(&name, l->file))
        v[17] = buf_cstr(&name);
    bool ok = true;
    for (size_t i = 0; ok && i < sizeof v / sizeof v[0]; i++)
        ok = csv_field_append(out, v[i], i == 0, text[i]);
    buf_free(&name);
    buf_free(&listed);
    return ok && buf_append_str(out, "\r\n");
}

struct recon_disc {
    disc_file *f;
    const recon_result *res;
};

recon_disc *recon_disc_open(const char *path, const recon_result *res, buf *err)
{
    recon_disc *w = calloc(1, sizeof *w);
    if (!w) {
        buf_printf(err, "--discrepancies %s: out of memory", path);
        return NULL;
    }
    w->res = res;
    w->f = disc_file_open(path, csv_columns, sizeof csv_columns / sizeof csv_columns[0], err);
    if (!w->f) {
        free(w);
        return NULL;
    }
    return w;
}

bool recon_disc_write(recon_disc *w, const recon_line *l, buf *err)
{
    if (disc_file_is_csv(w->f))
        return disc_file_wrote(w->f, csv_line(disc_file_buf(w->f), l, w->res), err);
    return disc_file_put_json(w->f, line_json(l, w->res), err);
}

bool recon_disc_finish(recon_disc *w, buf *err)
{
    return disc_file_finish(w ? w->f : NULL, err);
}

bool recon_disc_publish(recon_disc **wp, buf *err)
{
    recon_disc *w = *wp;
    if (!w)
        return true;
    bool ok = disc_file_publish(&w->f, err);
    free(w);
    *wp = NULL;
    return ok;
}

void recon_disc_discard(recon_disc **wp)
{
    recon_disc *w = *wp;
    if (!w)
        return;
    *wp = NULL;
    disc_file_discard(&w->f);
    free(w);
}

/* ---- the bill's own stated totals --------------------------------------- */

/* The statement's compared amounts of a stated total's kind, over the
 * run (its entry of total_statement's kinds); NULL: no kind, none, or a
 * total of another column than the one compared (recon_stated). */
static const recon_side *stated_compared(const recon_result *r, const recon_stated *st)
{
    for (size_t k = 0; st->comparable && st->kind && k < r->total_statement.n_kinds; k++)
        if (strcmp(r->total_statement.kinds[k].kind, st->kind) == 0)
            return &r->total_statement.kinds[k];
    return NULL;
}

/* 1: the stated figure differs from the statement's compared amount of its
 * kind (one currency); 0: equal; -1: not comparable (no kind, several
 * currencies, a text that is not a number). */
static int stated_differs(const recon_side *k, const recon_stated *st)
{
    dect a, b;
    if (!k || k->n_amounts != 1 || !dect_parse(st->stated, strlen(st->stated), &a) ||
        !dect_parse(k->amounts[0].amount, strlen(k->amounts[0].amount), &b))
        return -1;
    if (st->magnitude && a.v < 0)
        a.v = -a.v;
    return !dect_equal(&a, &b);
}

static json_t *stated_json(const recon_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_stated; i++) {
        const recon_stated *st = &r->stated[i];
        const recon_side *k = stated_compared(r, st);
        int d = stated_differs(k, st);
        json_t *o = json_object();
        file_json(o, st->file);
        json_object_set_new(o, "label", str_or_null(st->label));
        json_object_set_new(o, "column", str_or_null(st->column));
        json_object_set_new(o, "kind", str_or_null(st->kind));
        json_object_set_new(o, "stated", str_or_null(st->stated));
        json_object_set_new(o, "rows_sum", str_or_null(st->rows_sum));
        json_object_set_new(o, "compared", k ? recon_side_json(k) : json_null());
        json_object_set_new(o, "differs", d < 0 ? json_null() : json_boolean(d));
        json_array_append_new(a, o);
    }
    return a;
}

/* ---- the report -------------------------------------------------------- */

json_t *recon_side_json(const recon_side *s)
{
    json_t *a = json_object();
    for (size_t i = 0; i < s->n_amounts; i++)
        json_object_set_new(a, s->amounts[i].currency, json_string(s->amounts[i].amount));
    json_t *o = json_object();
    json_object_set_new(o, "rows", json_integer((json_int_t)s->rows));
    json_object_set_new(o, "amounts", a);
    json_object_set_new(o, "without_amount", json_integer((json_int_t)s->without_amount));
    if (!s->kind) {
        json_t *k = json_object();
        for (size_t i = 0; i < s->n_kinds; i++)
            json_object_set_new(k, s->kinds[i].kind, recon_side_json(&s->kinds[i]));
        json_object_set_new(o, "kinds", k);
    }
    return o;
}

static json_t *day_json(const recon_day *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "tenant_id", json_integer(d->tenant_id));
    json_object_set_new(o, "channel", json_string(d->channel));
    json_object_set_new(o, "day", json_string(d->day));
    json_object_set_new(o, "verdict", json_string(recon_day_balanced(d) ? "balanced" : "discrepancies"));
    json_object_set_new(o, "statement", recon_side_json(&d->statement));
    json_object_set_new(o, "table", recon_side_json(&d->table));
    json_object_set_new(o, "matched", json_integer((json_int_t)d->matched));
    json_object_set_new(o, "unverified", json_integer((json_int_t)d->unverified));
    json_object_set_new(o, "pending", json_integer((json_int_t)d->pending));
    json_t *cats = json_object();
    for (int c = 0; c < CAT_COUNT; c++) {
        json_t *e = json_object();
        json_object_set_new(e, "count", json_integer((json_int_t)d->cat_count[c]));
        /* "amount" only where the category's money is in one currency (or
         * none): two currencies are never added up; "amounts" per currency. */
        json_object_set_new(e, "amount", d->cat_count[c] == 0 ? json_string("0.00")
                                         : d->cat_amount[c] ? json_string(d->cat_amount[c])
                                                            : json_null());
        json_t *per = d->cat_amounts[c] ? json_loads(d->cat_amounts[c], 0, NULL) : NULL;
        json_object_set_new(e, "amounts", per ? per : json_object());
        json_object_set_new(e, "without_amount", json_integer((json_int_t)d->cat_without[c]));
        /* what finance reads beside the net: the absolute differences
         * summed per currency (-0.01 and +0.01: 0.02), and a currency
         * mismatch's two sides */
        json_t *gross = d->cat_gross[c] ? json_loads(d->cat_gross[c], 0, NULL) : NULL;
        json_object_set_new(e, "absolute", gross ? gross : json_object());
        if (c == CAT_CURRENCY_MISMATCH)
            json_object_set_new(e, "sides", str_or_null(d->ccy_sides));
        json_object_set_new(cats, recon_category_name((recon_category)c), e);
    }
    json_object_set_new(o, "categories", cats);
    /* The day's money differences, each key once (a key with two lines,
     * an amount_mismatch and a duplicate_in_statement, is one difference). */
    json_t *net = json_object(), *abs_ = json_object();
    for (size_t i = 0; i < d->n_diffs; i++) {
        json_object_set_new(net, d->diffs[i].currency, json_string(d->diffs[i].net));
        json_object_set_new(abs_, d->diffs[i].currency, json_string(d->diffs[i].gross));
    }
    json_object_set_new(o, "differences",
                        json_pack("{s:o, s:o, s:I, s:s}", "net", net, "absolute", abs_, "keys",
                                  (json_int_t)d->diff_keys, "difference_is", DIFFERENCE_IS));
    return o;
}

static json_t *carried_json(const recon_carried *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "category", json_string(c->category));
    json_object_set_new(o, "tenant_id", json_integer(c->tenant_id));
    json_object_set_new(o, "channel", json_string(c->channel));
    json_object_set_new(o, "out_trade_no", str_or_null(c->out_trade_no));
    json_object_set_new(o, "callback_type", str_or_null(c->callback_type));
    json_object_set_new(o, "day", json_string(c->day));
    json_object_set_new(o, "age_days", json_integer(c->age_days));
    json_object_set_new(o, "difference", str_or_null(c->difference));
    json_object_set_new(o, "first_seen", str_or_null(c->first_seen));
    if (c->resolution)
        json_object_set_new(o, "resolution", json_string(c->resolution));
    return o;
}

/* "NAME": the items listed, "NAME_omitted": how many more. */
static void items_json(json_t *o, const char *name, const recon_items *l)
{
    json_t *items = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(items, carried_json(&l->items[i]));
    json_object_set_new(o, name, items);
    char key[64];
    snprintf(key, sizeof key, "%s_omitted", name);
    json_object_set_new(o, key, json_integer((json_int_t)(l->total - l->n)));
}

/* --repair missing: "repaired_keys", the rows it inserted (the first
 * RECON_REPAIR_LISTED), and "repaired_keys_omitted", how many more. */
static void repaired_json(const recon_result *r, json_t *o)
{
    json_t *keys = json_array();
    for (size_t i = 0; i < r->n_repaired_keys; i++) {
        const recon_key *k = &r->repaired_keys[i];
        json_t *e = json_object();
        json_object_set_new(e, "tenant_id", json_integer(k->tenant_id));
        json_object_set_new(e, "channel", str_or_null(k->channel));
        json_object_set_new(e, "out_trade_no", str_or_null(k->out_trade_no));
        json_object_set_new(e, "callback_type", str_or_null(k->callback_type));
        json_object_set_new(e, "file", str_or_null(k->file));
        json_object_set_new(e, "line", k->file ? json_integer(k->line) : json_null());
        json_array_append_new(keys, e);
    }
    json_object_set_new(o, "repaired_keys", keys);
    uint64_t omitted = r->repaired > r->n_repaired_keys ? r->repaired - r->n_repaired_keys : 0;
    json_object_set_new(o, "repaired_keys_omitted", json_integer((json_int_t)omitted));
}

json_t *recon_json(const recon_result *r)
{
    json_t *o = json_object();
    json_t *period = json_object();
    json_object_set_new(period, "from", r->from[0] ? json_string(r->from) : json_null());
    json_object_set_new(period, "to", r->to[0] ? json_string(r->to) : json_null());
    json_object_set_new(o, "period", period);
    json_object_set_new(o, "zone", str_or_null(r->zone));
    json_object_set_new(o, "verdict", json_string(verdict_of(r)));
    json_object_set_new(o, "difference_is", json_string(DIFFERENCE_IS));
    json_t *days = json_array();
    for (size_t i = 0; i < r->n_days; i++)
        json_array_append_new(days, day_json(&r->days[i]));
    json_object_set_new(o, "days", days);
    json_t *cats = json_object();
    for (int c = 0; c < CAT_COUNT; c++)
        json_object_set_new(cats, recon_category_name((recon_category)c),
                            json_integer((json_int_t)r->cat_count[c]));
    json_object_set_new(o, "categories", cats);
    json_object_set_new(o, "totals", json_pack("{s:o, s:o}", "statement",
                                               recon_side_json(&r->total_statement), "table",
                                               recon_side_json(&r->total_table)));
    json_object_set_new(o, "matched", json_integer((json_int_t)r->matched));
    json_object_set_new(o, "unverified", json_integer((json_int_t)r->unverified));
    json_object_set_new(o, "pending", json_integer((json_int_t)r->pending));
    json_object_set_new(o, "carried_over", json_integer((json_int_t)r->carried_over));
    json_t *items = json_array();
    for (size_t i = 0; i < r->n_carried; i++)
        json_array_append_new(items, carried_json(&r->carried[i]));
    json_object_set_new(o, "carried_over_items", items);
    json_object_set_new(o, "carried_over_items_omitted",
                        json_integer((json_int_t)(r->carried_over - r->n_carried)));
    json_object_set_new(o, "carried_over_known", json_boolean(!r->carried_unknown));
    json_object_set_new(o, "outside_period", json_integer((json_int_t)r->outside_period));
    json_object_set_new(o, "stated_totals", stated_json(r));
    json_object_set_new(o, "registered", json_boolean(r->registered));
    json_object_set_new(o, "run", r->registered ? json_integer(r->run_id) : json_null());
    json_object_set_new(o, "appeared", json_integer((json_int_t)r->appeared));
    json_object_set_new(o, "resolved", json_integer((json_int_t)r->resolved));
    json_object_set_new(o, "escalated", json_integer((json_int_t)r->escalated));
    items_json(o, "appeared_items", &r->appeared_items);
    items_json(o, "resolved_items", &r->resolved_items);
    json_object_set_new(o, "repair",
                        json_string(r->repair == REPAIR_MISSING ? "missing"
                                    : r->repair == REPAIR_MERGE ? "merge"
                                                                : "none"));
    if (r->repair != REPAIR_NONE)
        json_object_set_new(o, "repaired", json_integer((json_int_t)r->repaired));
    if (r->repair == REPAIR_MISSING)
        repaired_json(r, o);
    return o;
}

/* ---- what finance reads ---------------------------------------------- */

/* A sum's text whose amounts are all zero ("CNY 0.00, JPY 0"): a category
 * whose lines differ in no money (a status_mismatch) shows none. */
static bool all_zero(const char *shown)
{
    return !strpbrk(shown, "123456789");
}

/* Category c's money on day d as a reader sees it (plain text, escaped by
 * the caller): the sum of the absolute differences beside the net, per
 * currency ("absolute CNY 0.02, net CNY 0.00"); a currency mismatch's two
 * sides ("statement USD 10.00; table CNY 70.00"); and the lines without an
 * amount.  Nothing when none is known. */
static bool category_money_text(buf *out, const recon_day *d, int c)
{
    bool ok = true, any = false;
    if (c == CAT_CURRENCY_MISMATCH) {
        if (d->ccy_sides) {
            ok = buf_append_str(out, d->ccy_sides);
            any = true;
        }
    } else if (d->cat_shown[c] && !(d->cat_gross_shown[c] && all_zero(d->cat_gross_shown[c]))) {
        ok = (!d->cat_gross_shown[c] || buf_printf(out, "absolute %s, ", d->cat_gross_shown[c])) &&
             buf_printf(out, "net %s", d->cat_shown[c]);
        any = true;
    }
    if (ok && d->cat_without[c])
        ok = buf_printf(out, "%s%llu without an amount", any ? "; " : "",
                        (unsigned long long)d->cat_without[c]);
    return ok;
}

/* A day's money differences, each key once: "absolute CNY 0.02, net CNY
 * 0.00 (2 keys)"; empty when there are none. */
static bool day_money_text(buf *out, const recon_day *d)
{
    bool ok = true;
    for (size_t i = 0; ok && i < d->n_diffs; i++) {
        const recon_money *m = &d->diffs[i];
        const char *ccy = m->currency[0] ? m->currency : "";
        ok = buf_printf(out, "%sabsolute %s%s%s, net %s%s%s", i ? "; " : "", ccy, ccy[0] ? " " : "",
                        m->gross, ccy, ccy[0] ? " " : "", m->net);
    }
    if (ok && d->n_diffs)
        ok = buf_printf(out, " (%llu %s)", (unsigned long long)d->diff_keys,
                        d->diff_keys == 1 ? "key" : "keys");
    return ok;
}

/* ---- the summary ------------------------------------------------------ */

#define SUMMARY_MAX_DAYS 40

/* A side's amounts per currency ("CNY 1.00, USD 2.00") and how many of
 * its rows have none; nothing when it has neither. */
static void print_amounts(FILE *fp, const recon_side *s)
{
    /* A currency is the statement's text: escaped for the terminal. */
    for (size_t i = 0; i < s->n_amounts; i++) {
        fputs(i ? ", " : "", fp);
        text_fput_term(fp, s->amounts[i].currency[0] ? s->amounts[i].currency : "?");
        fprintf(fp, " %s", s->amounts[i].amount);
    }
    if (s->without_amount)
        fprintf(fp, "%s%llu without a readable amount", s->n_amounts ? "; " : "",
                (unsigned long long)s->without_amount);
}

/* "statement 3 rows (CNY 1.00)"; with several kinds, each apart ("statement
 * 3 rows [pay 2 (CNY 1.00), refund 1 (CNY 0.50)]"): a refund is never
 * shown only added to the payments. */
static void print_side(FILE *fp, const char *label, const recon_side *s)
{
    fprintf(fp, "%s %llu rows", label, (unsigned long long)s->rows);
    if (s->n_kinds > 1) {
        for (size_t k = 0; k < s->n_kinds; k++) {
            const recon_side *e = &s->kinds[k];
            fputs(k ? ", " : " [", fp);
            text_fput_term(fp, e->kind);
            fprintf(fp, " %llu", (unsigned long long)e->rows);
            if (e->n_amounts || e->without_amount) {
                fputs(" (", fp);
                print_amounts(fp, e);
                fputc(')', fp);
            }
        }
        fputc(']', fp);
        for (size_t i = 0; i < s->n_amounts; i++) {
            fputs(i ? ", " : " (net ", fp);
            text_fput_term(fp, s->amounts[i].currency[0] ? s->amounts[i].currency : "?");
            fprintf(fp, " %s", s->amounts[i].amount);
        }
        if (s->n_amounts)
            fputc(')', fp);
    } else if (s->n_amounts || s->without_amount) {
        fputs(" (", fp);
        print_amounts(fp, s);
        fputc(')', fp);
    }
}

#define SUMMARY_MAX_KEYS 5

/* The first keys --repair missing inserted, on one line (the data's text,
 * escaped); the report lists up to RECON_REPAIR_LISTED. */
static void print_repaired(const recon_result *r, FILE *fp)
{
    if (!r->n_repaired_keys)
        return;
    fputs("  inserted:", fp);
    for (size_t i = 0; i < r->n_repaired_keys && i < SUMMARY_MAX_KEYS; i++) {
        const recon_key *k = &r->repaired_keys[i];
        fprintf(fp, "%s tenant %lld ", i ? "," : "", (long long)k->tenant_id);
        text_fput_term(fp, k->channel ? k->channel : "");
        fputc(' ', fp);
        text_fput_term(fp, k->out_trade_no ? k->out_trade_no : "");
        fputc(' ', fp);
        text_fput_term(fp, k->callback_type ? k->callback_type : "");
    }
    if (r->repaired > SUMMARY_MAX_KEYS)
        fprintf(fp, " ... (%llu in all; the report's repaired_keys lists the first %d)",
                (unsigned long long)r->repaired, RECON_REPAIR_LISTED);
    fputc('\n', fp);
}

/* One day's line of the summary: its verdict, both sides, its counts and
 * each category's money, then the day's money with each key once. */
static void print_day(FILE *fp, const recon_day *d)
{
    fprintf(fp, "  tenant %lld ", (long long)d->tenant_id);
    text_fput_term(fp, d->channel); /* the data's text, escaped */
    fprintf(fp, " %s: %s; ", d->day, recon_day_balanced(d) ? "balanced" : "discrepancies");
    print_side(fp, "statement", &d->statement);
    print_side(fp, ", table", &d->table);
    fprintf(fp, "; matched %llu, unverified %llu, pending %llu",
            (unsigned long long)d->matched, (unsigned long long)d->unverified,
            (unsigned long long)d->pending);
    /* The shown amounts name currencies, the statement's text: escaped. */
    buf t = BUF_INIT;
    for (int c = 0; c < CAT_COUNT; c++)
        if (d->cat_count[c]) {
            fprintf(fp, ", %s %llu", recon_category_name((recon_category)c),
                    (unsigned long long)d->cat_count[c]);
            buf_clear(&t);
            if (category_money_text(&t, d, c) && t.len) {
                fputs(" (", fp);
                text_fput_term(fp, buf_cstr(&t));
                fputc(')', fp);
            }
        }
    buf_clear(&t);
    if (day_money_text(&t, d) && t.len) {
        fputs("; money differences, each key once: ", fp);
        text_fput_term(fp, buf_cstr(&t));
    }
    buf_free(&t);
    fputc('\n', fp);
}

/* The bills' own stated totals, each beside its rows' sum and, where it
 * adds up the compared column, the statement's compared amounts. */
static void print_stated(const recon_result *r, FILE *fp)
{
    for (size_t i = 0; i < r->n_stated; i++) {
        const recon_stated *st = &r->stated[i];
        const recon_side *k = stated_compared(r, st);
        int d = stated_differs(k, st);
        fputs("  the bill ", fp);
        text_fput_term(fp, st->file);
        fputs(" states ", fp);
        text_fput_term(fp, st->label);
        fprintf(fp, " %s", st->stated);
        fputs(" (its rows' ", fp);
        text_fput_term(fp, st->column);
        fprintf(fp, ": %s)", st->rows_sum);
        if (k) {
            fputs("; the statement's compared ", fp);
            text_fput_term(fp, st->kind);
            fputs(" amounts: ", fp);
            print_amounts(fp, k);
        }
        fputs(d > 0 ? " -- DIFFERS\n" : "\n", fp);
    }
}

void recon_print_summary(const recon_result *r, FILE *fp)
{
    if (!r->compared) {
        fprintf(fp, "reconcile: nothing compared\n");
        return;
    }
    fprintf(fp, "reconcile: period %s..%s (", r->from, r->to);
    text_fput_term(fp, r->zone);
    fprintf(fp, "): %s\n", verdict_of(r));
    for (size_t i = 0; i < r->n_days && i < SUMMARY_MAX_DAYS; i++)
        print_day(fp, &r->days[i]);
    if (r->n_days > 1) {
        fputs("  all days: ", fp);
        print_side(fp, "statement", &r->total_statement);
        print_side(fp, ", table", &r->total_table);
        fputc('\n', fp);
    }
    if (r->n_days > SUMMARY_MAX_DAYS)
        fprintf(fp, "  ... and %zu more days (see --report)\n", r->n_days - SUMMARY_MAX_DAYS);
    fprintf(fp, "  matched %llu, unverified %llu, pending %llu",
            (unsigned long long)r->matched, (unsigned long long)r->unverified,
            (unsigned long long)r->pending);
    for (int c = 0; c < CAT_COUNT; c++)
        fprintf(fp, ", %s %llu", recon_category_name((recon_category)c),
                (unsigned long long)r->cat_count[c]);
    fputc('\n', fp);
    if (recon_has_discrepancies(r))
        fputs("  difference: " DIFFERENCE_IS "\n", fp);
    print_stated(r, fp);
    if (r->outside_period)
        fprintf(fp, "  outside the period (not compared): %llu rows\n",
                (unsigned long long)r->outside_period);
    if (r->carried_over) {
        fprintf(fp, "  carried over: %llu open discrepancies of earlier days (oldest %lld days)\n",
                (unsigned long long)r->carried_over, (long long)r->carried_oldest);
    } else if (r->carried_unknown) {
        fputs("  carried over: not known (this role may not read the register)\n", fp);
    }
    if (r->registered)
        fprintf(fp, "  register: run %lld, %llu appeared, %llu resolved\n", (long long)r->run_id,
                (unsigned long long)r->appeared, (unsigned long long)r->resolved);
    else if (r->dry_run)
        fprintf(fp, "  dry run: nothing written, not even the register\n");
    else
        fprintf(fp, "  the register was not written, nothing was (see the error above)\n");
    if (r->escalated)
        fprintf(fp, "  escalated: %llu %s of earlier days that no statement listed within the "
                    "grace %s missing_in_statement now (carried over; not this run's verdict)\n",
                (unsigned long long)r->escalated, r->escalated == 1 ? "row" : "rows",
                r->escalated == 1 ? "is" : "are");
    if (r->repair != REPAIR_NONE)
        fprintf(fp, "  repair %s: %llu rows inserted\n",
                r->repair == REPAIR_MISSING ? "missing" : "merge", (unsigned long long)r->repaired);
    if (r->repair_resolved)
        fprintf(fp, "  register: %llu %s resolved, their rows inserted%s by the repair\n",
                (unsigned long long)r->repair_resolved,
                r->repair == REPAIR_MISSING ? "missing_in_table items" : "items",
                r->repair == REPAIR_MISSING ? "" : " or updated");
    if (r->repair == REPAIR_MISSING)
        print_repaired(r, fp);
}

/* ---- the page --------------------------------------------------------- */

static bool esc(buf *out, const char *s)
{
    return s ? html_escape(out, s, strlen(s)) : buf_append_str(out, "&#8212;");
}

/* A side's amounts, each on a line, and its rows without one. */
static bool amounts_html(buf *out, const recon_side *s)
{
    bool ok = true;
    for (size_t i = 0; ok && i < s->n_amounts; i++) {
        ok = buf_append_str(out, "<br>") && esc(out, s->amounts[i].currency) &&
             buf_append_char(out, ' ') && esc(out, s->amounts[i].amount);
    }
    if (ok && s->without_amount)
        ok = buf_printf(out, "<br><span class=\"note\">%llu without a readable amount</span>",
                        (unsigned long long)s->without_amount);
    return ok;
}

/* A side's cell: its rows and amounts; with several kinds, each kind's
 * rows and amounts under its name. */
static bool side_html(buf *out, const recon_side *s)
{
    bool ok = buf_printf(out, "<td>%llu", (unsigned long long)s->rows);
    if (s->n_kinds > 1) {
        /* the net (refunds subtracted, revocations apart), then each kind */
        for (size_t i = 0; ok && i < s->n_amounts; i++)
            ok = buf_append_str(out, "<br><span class=\"net\">net ") &&
                 esc(out, s->amounts[i].currency) && buf_append_char(out, ' ') &&
                 esc(out, s->amounts[i].amount) && buf_append_str(out, "</span>");
        for (size_t k = 0; ok && k < s->n_kinds; k++)
            ok = buf_append_str(out, "<div class=\"kind\">") && esc(out, s->kinds[k].kind) &&
                 buf_printf(out, " %llu", (unsigned long long)s->kinds[k].rows) &&
                 amounts_html(out, &s->kinds[k]) && buf_append_str(out, "</div>");
    } else {
        ok = ok && amounts_html(out, s);
    }
    return ok && buf_append_str(out, "</td>");
}

/* A row's two sides, matched, unverified and pending cells, and the start
 * of its discrepancies cell. */
static bool figures_html(buf *out, const recon_side *statement, const recon_side *table,
                         uint64_t matched, uint64_t unverified, uint64_t pending)
{
    return side_html(out, statement) && side_html(out, table) &&
           buf_printf(out, "<td>%llu</td><td>%llu</td><td>%llu</td><td>",
                      (unsigned long long)matched, (unsigned long long)unverified,
                      (unsigned long long)pending);
}

/* Every day of every pair together, in a table apart from the days' (whose
 * rows are the report's days, one for one). */
static bool html_totals(const recon_result *r, buf *out)
{
    bool ok = buf_append_str(out, "<table id=\"recon-totals\"><tr><th>all days</th>"
                                  "<th>statement</th><th>table</th><th>matched</th>"
                                  "<th>unverified</th><th>pending</th><th>discrepancies</th></tr>\n"
                                  "<tr>") &&
              buf_printf(out, "<td class=\"verdict\">%s</td>", verdict_of(r)) &&
              figures_html(out, &r->total_statement, &r->total_table, r->matched, r->unverified,
                           r->pending);
    for (int c = 0; ok && c < CAT_COUNT; c++)
        if (r->cat_count[c])
            ok = buf_printf(out, "%s %llu<br>", recon_category_name((recon_category)c),
                            (unsigned long long)r->cat_count[c]);
    return ok && buf_append_str(out, "</td></tr>\n</table>\n");
}

/* The verdict line and the table of days: tenant, channel, day, verdict,
 * both sides' totals, matched, unverified, pending, the categories. */
static bool html_days(const recon_result *r, buf *out)
{
    bool bad = recon_has_discrepancies(r);
    bool ok = buf_printf(out, "<p class=\"verdict %s\">Verdict: <strong>%s</strong>",
                         !r->compared ? "none" : bad ? "bad" : "good", verdict_of(r));
    if (r->compared) {
        ok = ok && buf_append_str(out, ", period ") && esc(out, r->from) &&
             buf_append_str(out, " to ") && esc(out, r->to) && buf_append_str(out, " (") &&
             esc(out, r->zone) && buf_append_str(out, ")");
        ok = ok && buf_printf(out, "; matched %llu, unverified %llu, pending %llu, "
                                   "outside the period %llu, carried over ",
                              (unsigned long long)r->matched, (unsigned long long)r->unverified,
                              (unsigned long long)r->pending,
                              (unsigned long long)r->outside_period);
        ok = ok && (r->carried_unknown
                        ? buf_append_str(out, "not known (this role may not read the register)")
                        : buf_printf(out, "%llu", (unsigned long long)r->carried_over));
    }
    if (ok && bad)
        ok = buf_append_str(out, "</p>\n<p class=\"note\" id=\"recon-difference-is\">A difference "
                                 "is the " DIFFERENCE_IS ": positive, the channel lists more "
                                 "money than our records hold.");
    ok = ok && buf_append_str(out, "</p>\n<table id=\"recon-days\"><tr><th>tenant</th>"
                                   "<th>channel</th><th>day</th><th>verdict</th>"
                                   "<th>statement</th><th>table</th><th>matched</th>"
                                   "<th>unverified</th><th>pending</th><th>discrepancies</th></tr>\n");
    for (size_t i = 0; ok && i < r->n_days; i++) {
        const recon_day *d = &r->days[i];
        bool b = recon_day_balanced(d);
        ok = buf_printf(out, "<tr class=\"%s\"><td>%lld</td><td class=\"key\">",
                        b ? "balanced" : "discrepancies",
                        (long long)d->tenant_id) &&
             esc(out, d->channel) && buf_append_str(out, "</td><td class=\"whole\">") &&
             esc(out, d->day) &&
             buf_printf(out, "</td><td class=\"verdict\">%s</td>", b ? "balanced" : "discrepancies") &&
             figures_html(out, &d->statement, &d->table, d->matched, d->unverified, d->pending);
        buf t = BUF_INIT;
        for (int c = 0; ok && c < CAT_COUNT; c++)
            if (d->cat_count[c]) {
                buf_clear(&t);
                ok = category_money_text(&t, d, c) &&
                     buf_printf(out, "<span class=\"cat\" data-category=\"%s\">%s %llu",
                                recon_category_name((recon_category)c),
                                recon_category_name((recon_category)c),
                                (unsigned long long)d->cat_count[c]) &&
                     (!t.len || (buf_append_str(out, " (") && esc(out, buf_cstr(&t)) &&
                                 buf_append_char(out, ')'))) &&
                     buf_append_str(out, "</span><br>");
            }
        buf_clear(&t);
        if (ok && day_money_text(&t, d) && t.len)
            ok = buf_append_str(out, "<span class=\"day-money\">money differences, each key "
                                     "once: ") &&
                 esc(out, buf_cstr(&t)) && buf_append_str(out, "</span>");
        buf_free(&t);
        ok = ok && buf_append_str(out, "</td></tr>\n");
    }
    return ok && buf_append_str(out, "</table>\n") && (r->n_days < 2 || html_totals(r, out));
}

/* One example line of a category's table. */
static bool html_line(const recon_result *r, const recon_line *l, buf *out)
{
    char st[96];
    bool ok = buf_printf(out, "<tr><td>%lld</td><td class=\"key\">", (long long)l->tenant_id) &&
              esc(out, l->channel) && buf_append_str(out, "</td><td class=\"key\">") &&
              esc(out, l->out_trade_no) && buf_append_str(out, "</td><td class=\"key\">") &&
              esc(out, l->callback_type) && buf_append_str(out, "</td><td class=\"whole\">") &&
              esc(out, l->day) && buf_append_str(out, "</td><td>");
    const recon_facts *f[2] = {&l->statement, &l->table};
    for (int k = 0; ok && k < 2; k++) {
        if (f[k]->present)
            ok = esc(out, f[k]->currency) && buf_append_char(out, ' ') &&
                 esc(out, f[k]->amount) &&
                 (!f[k]->fee || (buf_append_str(out, ", fee ") && esc(out, f[k]->fee))) &&
                 buf_append_str(out, ", status ") &&
                 esc(out, recon_status_text(r, f[k]->status, st, sizeof st)) &&
                 (!f[k]->time || (buf_append_str(out, ", <span class=\"time\">") &&
                                  esc(out, f[k]->time) && buf_append_str(out, "</span>")));
        else
            ok = buf_append_str(out, "&#8212;");
        if (ok && k == 0 && l->listed_rows) {
            buf listed = BUF_INIT;
            ok = listings_text(&listed, l, r) && buf_append_str(out, "<br>listed: ") &&
                 esc(out, buf_cstr(&listed));
            buf_free(&listed);
        }
        ok = ok && buf_append_str(out, "</td><td>");
    }
    return ok && esc(out, l->difference) && buf_append_str(out, "</td></tr>\n");
}

/* Category c's count and its examples, pointing at the file for the rest. */
static bool html_category(const recon_result *r, recon_category c, buf *out)
{
    bool ok = buf_printf(out, "<h3>%s: %llu</h3>\n<table id=\"recon-%s\"><tr><th>tenant</th>"
                              "<th>channel</th><th>out_trade_no</th><th>callback_type</th>"
                              "<th>day</th><th>statement</th><th>table</th>"
                              "<th title=\"" DIFFERENCE_IS "\">difference</th></tr>\n",
                         recon_category_name(c), (unsigned long long)r->cat_count[c],
                         recon_category_name(c));
    size_t shown = 0;
    for (size_t i = 0; ok && i < r->n_lines && shown < RECON_EXAMPLES; i++) {
        if (r->lines[i].category != c)
            continue;
        shown++;
        ok = html_line(r, &r->lines[i], out);
    }
    ok = ok && buf_append_str(out, "</table>\n");
    if (ok && r->cat_count[c] > shown)
        ok = buf_printf(out, "<p class=\"note\">%llu more in the discrepancies file.</p>\n",
                        (unsigned long long)(r->cat_count[c] - shown));
    return ok;
}

/* Items of the register shown on the page: the first RECON_CARRIED_SHOWN
 * of a list, and how many more the report lists. */
enum { RECON_CARRIED_SHOWN = 20 };

/* One table of register items: title (with its count), the table's id, the
 * report's member that lists them; with_age: an age column (carried over),
 * else the resolution (what this run resolved) or nothing. */
static bool html_items(const char *title, const char *id, const char *member,
                       const recon_items *l, bool with_age, bool with_resolution, buf *out)
{
    bool ok = buf_printf(out, "<h3>%s: %llu</h3>\n<table id=\"%s\"><tr>"
                              "<th>category</th><th>tenant</th><th>channel</th><th>out_trade_no</th>"
                              "<th>callback_type</th><th>day</th>%s"
                              "<th>difference</th><th>first seen</th>%s</tr>\n",
                         title, (unsigned long long)l->total, id,
                         with_age ? "<th>age (days)</th>" : "",
                         with_resolution ? "<th>resolution</th>" : "");
    for (size_t i = 0; ok && i < l->n && i < RECON_CARRIED_SHOWN; i++) {
        const recon_carried *cv = &l->items[i];
        ok = buf_append_str(out, "<tr><td>") && esc(out, cv->category) &&
             buf_printf(out, "</td><td>%lld</td><td class=\"key\">", (long long)cv->tenant_id) &&
             esc(out, cv->channel) && buf_append_str(out, "</td><td class=\"key\">") &&
             esc(out, cv->out_trade_no) && buf_append_str(out, "</td><td class=\"key\">") &&
             esc(out, cv->callback_type) && buf_append_str(out, "</td><td class=\"whole\">") &&
             esc(out, cv->day) &&
             (!with_age || buf_printf(out, "</td><td>%lld", (long long)cv->age_days)) &&
             buf_append_str(out, "</td><td>") && esc(out, cv->difference) &&
             buf_append_str(out, "</td><td class=\"whole\">") && esc(out, cv->first_seen) &&
             (!with_resolution ||
              (buf_append_str(out, "</td><td>") && esc(out, cv->resolution))) &&
             buf_append_str(out, "</td></tr>\n");
    }
    ok = ok && buf_append_str(out, "</table>\n");
    if (ok && l->total > RECON_CARRIED_SHOWN) {
        uint64_t more = l->total - RECON_CARRIED_SHOWN;
        uint64_t listed = l->n > RECON_CARRIED_SHOWN ? l->n - RECON_CARRIED_SHOWN : 0;
        ok = listed == more
                 ? buf_printf(out, "<p class=\"more\">%llu more in the report's %s.</p>\n",
                              (unsigned long long)more, member)
                 : buf_printf(out, "<p class=\"more\">%llu more: the report's %s "
                                   "lists the next %llu, the register holds them all.</p>\n",
                              (unsigned long long)more, member, (unsigned long long)listed);
    }
    return ok;
}

/* The bills' own stated totals beside the sums of their rows and the
 * statement's compared amounts of the kind, marked where they differ. */
static bool html_stated(const recon_result *r, buf *out)
{
    if (!r->n_stated)
        return true;
    bool ok = buf_append_str(out, "<h3>The bills' own totals</h3>\n<table id=\"recon-stated\">"
                                  "<tr><th>file</th><th>stated</th><th>the bill says</th>"
                                  "<th>its rows add up to</th><th>kind</th>"
                                  "<th>the statement compared</th><th>agrees</th></tr>\n");
    for (size_t i = 0; ok && i < r->n_stated; i++) {
        const recon_stated *st = &r->stated[i];
        const recon_side *k = stated_compared(r, st);
        int d = stated_differs(k, st);
        buf name = BUF_INIT;
        text_utf8_or_escaped(&name, st->file);
        ok = buf_printf(out, "<tr class=\"%s\"><td class=\"key\">",
                        d > 0 ? "differs" : "agrees") &&
             esc(out, buf_cstr(&name)) && buf_append_str(out, "</td><td class=\"key\">") &&
             esc(out, st->label) && buf_append_str(out, " (") && esc(out, st->column) &&
             buf_append_str(out, ")</td><td>") && esc(out, st->stated) &&
             buf_append_str(out, "</td><td>") && esc(out, st->rows_sum) &&
             buf_append_str(out, "</td><td class=\"key\">") &&
             (st->kind ? esc(out, st->kind) : buf_append_str(out, "every row")) &&
             buf_append_str(out, "</td><td>");
        for (size_t a = 0; ok && k && a < k->n_amounts; a++)
            ok = (a == 0 || buf_append_str(out, "<br>")) && esc(out, k->amounts[a].currency) &&
                 buf_append_char(out, ' ') && esc(out, k->amounts[a].amount);
        ok = ok && (k || buf_append_str(out, "&#8212;")) &&
             buf_printf(out, "</td><td class=\"mark\">%s</td></tr>\n",
                        d > 0 ? "&#10007; differs" : d == 0 ? "&#10003;" : "&#8212;");
        buf_free(&name);
    }
    return ok && buf_append_str(out, "</table>\n");
}

bool recon_html_section(const recon_result *r, buf *out)
{
    bool ok = buf_append_str(out, "<section id=\"reconciliation\"><h2>Reconciliation</h2>\n") &&
              html_days(r, out) && html_stated(r, out);
    for (int c = 0; ok && c < CAT_COUNT; c++)
        if (r->cat_count[c])
            ok = html_category(r, (recon_category)c, out);
    if (ok && r->appeared_items.total)
        ok = html_items("Appeared in this run", "recon-appeared", "appeared_items",
                        &r->appeared_items, false, false, out);
    if (ok && r->resolved_items.total)
        ok = html_items("Resolved by this run", "recon-resolved", "resolved_items",
                        &r->resolved_items, false, true, out);
    if (ok && r->carried_over) {
        recon_items carried = {r->carried, r->n_carried, r->carried_over};
        ok = html_items("Carried over from earlier days", "recon-carried", "carried_over_items",
                        &carried, true, false, out);
    }
    return ok && buf_append_str(out, "</section>\n");
}

/* The page's section, as html_report_outputs() builds it. */
static bool build_section(const void *r, buf *out)
{
    return recon_html_section((const recon_result *)r, out);
}

int recon_render_outputs(const config *cfg, const recon_result *r, run_report *rep, int code)
{
    report_print_summary(rep, stderr);
    recon_print_summary(r, stderr);
    rep->reconciliation = recon_json(r);
    return html_report_outputs(cfg->report_path, cfg->html_path, rep, rep->reconciliation != NULL,
                               build_section, r, code);
}
