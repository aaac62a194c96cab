/*
 * recon_text.c - what a reader sees of a reconcile result, whichever
 * output shows it (see recon_render_parts.h): the verdict, a day's money
 * as text, and the bill's own stated totals against the compared amounts.
 */
#include "recon/recon_render_parts.h"

#include <string.h>

#include "rules/dec_total.h"

const char *recon_verdict(const recon_result *r)
{
    return !r->compared ? "not compared"
           : recon_has_discrepancies(r) ? "discrepancies"
                                        : "balanced";
}

/* ---- the bill's own stated totals --------------------------------------- */

/* The statement's compared amounts of a stated total's kind, over the
 * run (its entry of total_statement's kinds); NULL: no kind, none, or a
 * total of another column than the one compared (recon_stated). */
const recon_side *recon_stated_compared(const recon_result *r, const recon_stated *st)
{
    for (size_t k = 0; st->comparable && st->kind && k < r->total_statement.n_kinds; k++)
        if (strcmp(r->total_statement.kinds[k].kind, st->kind) == 0)
            return &r->total_statement.kinds[k];
    return NULL;
}

/* 1: the stated figure differs from the statement's compared amount of its
 * kind (one currency); 0: equal; -1: not comparable (no kind, several
 * currencies, a text that is not a number). */
int recon_stated_differs(const recon_side *k, const recon_stated *st)
{
    dect a, b;
    if (!k || k->n_amounts != 1 || !dect_parse(st->stated, strlen(st->stated), &a) ||
        !dect_parse(k->amounts[0].amount, strlen(k->amounts[0].amount), &b))
        return -1;
    if (st->magnitude && a.v < 0)
        a.v = -a.v;
    return !dect_equal(&a, &b);
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
bool recon_category_money_text(buf *out, const recon_day *d, int c)
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
bool recon_day_money_text(buf *out, const recon_day *d)
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
