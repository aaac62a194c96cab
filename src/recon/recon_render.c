/*
 * recon_render.c - a recon_result as the summary and the report's JSON
 * (see recon_render.h), and every output of a run; the discrepancies file
 * is recon_disc.c's, the page's section recon_page.c's.  Nothing here
 * queries: the result is complete.
 */
#include "recon/recon_render.h"
#include "output/text_escape.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output/html.h"
#include "output/log.h"
#include "rules/dec_total.h"
#include "recon/recon_render_parts.h"
#include "util/exitcodes.h"

/* ---- the bill's own stated totals --------------------------------------- */

static json_t *stated_json(const recon_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_stated; i++) {
        const recon_stated *st = &r->stated[i];
        const recon_side *k = recon_stated_compared(r, st);
        int d = recon_stated_differs(k, st);
        json_t *o = json_object();
        recon_file_json(o, st->file);
        json_object_set_new(o, "label", recon_json_str(st->label));
        json_object_set_new(o, "column", recon_json_str(st->column));
        json_object_set_new(o, "kind", recon_json_str(st->kind));
        json_object_set_new(o, "stated", recon_json_str(st->stated));
        json_object_set_new(o, "rows_sum", recon_json_str(st->rows_sum));
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
            json_object_set_new(e, "sides", recon_json_str(d->ccy_sides));
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
    json_object_set_new(o, "out_trade_no", recon_json_str(c->out_trade_no));
    json_object_set_new(o, "callback_type", recon_json_str(c->callback_type));
    json_object_set_new(o, "day", json_string(c->day));
    json_object_set_new(o, "age_days", json_integer(c->age_days));
    json_object_set_new(o, "difference", recon_json_str(c->difference));
    json_object_set_new(o, "first_seen", recon_json_str(c->first_seen));
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
        json_object_set_new(e, "channel", recon_json_str(k->channel));
        json_object_set_new(e, "out_trade_no", recon_json_str(k->out_trade_no));
        json_object_set_new(e, "callback_type", recon_json_str(k->callback_type));
        json_object_set_new(e, "file", recon_json_str(k->file));
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
    json_object_set_new(o, "zone", recon_json_str(r->zone));
    json_object_set_new(o, "verdict", json_string(recon_verdict(r)));
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
            if (recon_category_money_text(&t, d, c) && t.len) {
                fputs(" (", fp);
                text_fput_term(fp, buf_cstr(&t));
                fputc(')', fp);
            }
        }
    buf_clear(&t);
    if (recon_day_money_text(&t, d) && t.len) {
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
        const recon_side *k = recon_stated_compared(r, st);
        int d = recon_stated_differs(k, st);
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
    fprintf(fp, "): %s\n", recon_verdict(r));
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
