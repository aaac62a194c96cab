/*
 * recon_page.c - the page's reconciliation section (see recon_render.h):
 * the days, the bill's stated totals, each category's lines and the
 * register's items, every value escaped.
 */
#include "recon/recon_render.h"

#include <string.h>

#include "output/html.h"
#include "output/text_escape.h"
#include "recon/recon_render_parts.h"

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
              buf_printf(out, "<td class=\"verdict\">%s</td>", recon_verdict(r)) &&
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
                         !r->compared ? "none" : bad ? "bad" : "good", recon_verdict(r));
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
                ok = recon_category_money_text(&t, d, c) &&
                     buf_printf(out, "<span class=\"cat\" data-category=\"%s\">%s %llu",
                                recon_category_name((recon_category)c),
                                recon_category_name((recon_category)c),
                                (unsigned long long)d->cat_count[c]) &&
                     (!t.len || (buf_append_str(out, " (") && esc(out, buf_cstr(&t)) &&
                                 buf_append_char(out, ')'))) &&
                     buf_append_str(out, "</span><br>");
            }
        buf_clear(&t);
        if (ok && recon_day_money_text(&t, d) && t.len)
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
            ok = recon_listings_text(&listed, l, r) && buf_append_str(out, "<br>listed: ") &&
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
        const recon_side *k = recon_stated_compared(r, st);
        int d = recon_stated_differs(k, st);
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
