/*
 * settle_render.c - a settle_result as text, JSON, NDJSON/CSV and HTML
 * (see settle_render.h).  Nothing here queries: the result is complete.
 */
#include "settle/settle_render.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output/csv_field.h"
#include "output/disc_file.h"
#include "output/html.h"
#include "output/log.h"
#include "output/text_escape.h"
#include "util/exitcodes.h"

#define DIFFERENCE_IS "actual minus expected"

static const char *verdict_of(const settle_result *r)
{
    return !r->compared ? "not compared" : settle_has_discrepancies(r) ? "discrepancies" : "settled";
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* A JSON object's text from the database (its members are texts and
 * integers, never money as a number), or null. */
static json_t *detail_json(const char *text)
{
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    return o ? o : json_null();
}

/* "file": a name that is not UTF-8 escaped, its bytes in file_base64. */
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

static json_t *line_json(const settle_line *l)
{
    json_t *o = json_object();
    json_object_set_new(o, "category", json_string(l->category));
    json_object_set_new(o, "tenant", json_integer(l->tenant_id));
    json_object_set_new(o, "channel", str_or_null(l->channel));
    json_object_set_new(o, "day", str_or_null(l->day));
    json_object_set_new(o, "subject", str_or_null(l->subject));
    json_object_set_new(o, "currency", str_or_null(l->currency));
    json_object_set_new(o, "expected", str_or_null(l->expected));
    json_object_set_new(o, "actual", str_or_null(l->actual));
    json_object_set_new(o, "difference", str_or_null(l->difference));
    json_object_set_new(o, "difference_is", json_string(DIFFERENCE_IS));
    file_json(o, l->file);
    json_object_set_new(o, "line", l->file ? json_integer(l->line) : json_null());
    json_object_set_new(o, "first_seen", str_or_null(l->first_seen));
    json_object_set_new(o, "detail", detail_json(l->detail));
    if (l->pending)
        json_object_set_new(o, "pending", json_true());
    if (l->resolution)
        json_object_set_new(o, "resolution", json_string(l->resolution));
    if (l->age_days)
        json_object_set_new(o, "age_days", json_integer(l->age_days));
    return o;
}

/* ---- the discrepancies file ------------------------------------------ */

static const char *const csv_columns[] = {
    "category", "tenant",     "channel", "day",  "subject",    "currency", "expected",
    "actual",   "difference", "file",    "line", "first_seen", "detail",   "difference_is",
};

static bool csv_line(buf *out, const settle_line *l)
{
    char tenant[24], line[24];
    snprintf(tenant, sizeof tenant, "%lld", (long long)l->tenant_id);
    snprintf(line, sizeof line, "%lld", (long long)l->line);
    buf name = BUF_INIT;
    const char *file = l->file;
    if (file && !text_utf8_or_escaped(&name, file))
        file = buf_cstr(&name);
    const char *v[] = {l->category, tenant, l->channel, l->day, l->subject, l->currency,
                       l->expected, l->actual, l->difference, file, l->file ? line : NULL,
                       l->first_seen, l->detail, DIFFERENCE_IS};
    /* the data's texts: channel, subject, currency, file, the detail */
    static const bool text[] = {false, false, true, false, true, true, false,
                                false, false, true, false, false, true, false};
    _Static_assert(sizeof text / sizeof text[0] == sizeof csv_columns / sizeof csv_columns[0],
                   "one flag per column");
    _Static_assert(sizeof v / sizeof v[0] == sizeof csv_columns / sizeof csv_columns[0],
                   "one value per column");
    bool ok = true;
    for (size_t i = 0; ok && i < sizeof v / sizeof v[0]; i++)
        ok = csv_field_append(out, v[i], i == 0, text[i]);
    buf_free(&name);
    return ok && buf_append_str(out, "\r\n");
}

struct settle_disc {
    disc_file *f;
};

settle_disc *settle_disc_open(const char *path, buf *err)
{
    settle_disc *w = calloc(1, sizeof *w);
    if (!w) {
        buf_printf(err, "--discrepancies %s: out of memory", path);
        return NULL;
    }
    w->f = disc_file_open(path, csv_columns, sizeof csv_columns / sizeof csv_columns[0], err);
    if (!w->f) {
        free(w);
        return NULL;
    }
    return w;
}

bool settle_disc_write(settle_disc *w, const settle_line *l, buf *err)
{
    if (disc_file_is_csv(w->f))
        return disc_file_wrote(w->f, csv_line(disc_file_buf(w->f), l), err);
    return disc_file_put_json(w->f, line_json(l), err);
}

bool settle_disc_finish(settle_disc *w, buf *err)
{
    return disc_file_finish(w ? w->f : NULL, err);
}

bool settle_disc_publish(settle_disc **wp, buf *err)
{
    settle_disc *w = *wp;
    if (!w)
        return true;
    bool ok = disc_file_publish(&w->f, err);
    free(w);
    *wp = NULL;
    return ok;
}

void settle_disc_discard(settle_disc **wp)
{
    settle_disc *w = *wp;
    if (!w)
        return;
    *wp = NULL;
    disc_file_discard(&w->f);
    free(w);
}

/* ---- the report -------------------------------------------------------- */

static json_t *lines_json(const settle_lines *ls, bool pending)
{
    json_t *a = json_array();
    for (size_t i = 0; i < ls->n; i++)
        if (ls->v[i].pending == pending)
            json_array_append_new(a, line_json(&ls->v[i]));
    return a;
}

static json_t *day_json(const settle_day *d)
{
    json_t *cats = detail_json(d->categories);
    json_t *o = json_object();
    json_object_set_new(o, "tenant_id", json_integer(d->tenant_id));
    json_object_set_new(o, "channel", json_string(d->channel));
    json_object_set_new(o, "day", json_string(d->day));
    json_object_set_new(o, "verdict", json_string(json_object_size(cats) ? "discrepancies"
                                                                         : "settled"));
    json_object_set_new(o, "rows", json_integer(d->rows));
    json_object_set_new(o, "pending", json_integer(d->pending));
    json_object_set_new(o, "payouts_matched", json_integer(d->matched));
    json_object_set_new(o, "categories", cats);
    json_object_set_new(o, "amounts", detail_json(d->amounts));
    return o;
}

json_t *settle_json(const settle_result *r)
{
    json_t *o = json_object();
    json_t *period = r->from[0] ? json_pack("{s:s, s:s}", "from", r->from, "to", r->to)
                                : json_null();
    json_object_set_new(o, "period", period);
    json_object_set_new(o, "zone", r->zone_given ? str_or_null(r->zone) : json_null());
    json_object_set_new(o, "verdict", json_string(verdict_of(r)));
    json_t *files = json_array();
    for (size_t i = 0; i < r->n_files; i++) {
        const settle_file *f = &r->files[i];
        json_t *fo = json_object();
        file_json(fo, f->path);
        json_object_set_new(fo, "read_as", str_or_null(f->reader));
        json_object_set_new(fo, "picked_by_header", json_boolean(f->picked));
        json_object_set_new(fo, "channel_rows", json_integer((json_int_t)f->channel_rows));
        json_object_set_new(fo, "bank_rows", json_integer((json_int_t)f->bank_rows));
        json_array_append_new(files, fo);
    }
    json_object_set_new(o, "files", files);
    json_t *days = json_array();
    for (size_t i = 0; i < r->n_days; i++)
        json_array_append_new(days, day_json(&r->days[i]));
    json_object_set_new(o, "days", days);
    json_t *cats = json_object();
    for (int c = 0; c < SETTLE_CATEGORY_COUNT; c++)
        json_object_set_new(cats, settle_category_name((settle_category)c),
                            json_integer((json_int_t)r->count[c]));
    json_object_set_new(o, "categories", cats);
    json_object_set_new(o, "pending", json_integer((json_int_t)r->pending));
    json_object_set_new(o, "payouts", json_pack("{s:I, s:I, s:I, s:I, s:I}", "batches",
                                                (json_int_t)r->batches, "by_reference",
                                                (json_int_t)r->matched_reference, "by_amount",
                                                (json_int_t)r->matched_amount, "by_day",
                                                (json_int_t)r->matched_day, "day_credits",
                                                (json_int_t)r->day_credits));
    json_object_set_new(o, "examples", lines_json(&r->examples, false));
    json_object_set_new(o, "pending_items", lines_json(&r->examples, true));
    json_object_set_new(o, "run", r->registered ? json_integer(r->run_id) : json_null());
    json_object_set_new(o, "opened", json_integer((json_int_t)r->opened));
    json_object_set_new(o, "escalated", json_integer((json_int_t)r->escalated));
    json_object_set_new(o, "resolved", json_integer((json_int_t)r->resolved.n));
    json_object_set_new(o, "resolved_items", lines_json(&r->resolved, false));
    json_object_set_new(o, "carried_over", json_integer((json_int_t)r->carried.n));
    json_object_set_new(o, "carried_over_known", json_boolean(!r->carried_unknown));
    json_object_set_new(o, "carried_over_items", lines_json(&r->carried, false));
    return o;
}

/* ---- the summary ------------------------------------------------------- */

/* A day's categories, kept as the JSON object the server built
 * ({"fee_mismatch": 2}), as a reader says them: "fee_mismatch 2,
 * payout_mismatch 1", or "none".  The names are settle's own (no escapes
 * in them) and the counts integers. */
static void print_categories(FILE *fp, const char *json)
{
    bool any = false;
    for (const char *p = json ? json : ""; *p; p++) {
        if (*p == '{' || *p == '}' || *p == '"' || *p == ' ')
            continue;
        if (*p == ':') {
            fputc(' ', fp);
            continue;
        }
        if (*p == ',') {
            fputs(", ", fp);
            continue;
        }
        fputc(*p, fp);
        any = true;
    }
    fputs(any ? "\n" : "none\n", fp);
}

static void print_line(FILE *fp, const settle_line *l)
{
    fprintf(fp, "    %s tenant %lld ", l->category, (long long)l->tenant_id);
    text_fput_term(fp, l->channel ? l->channel : "");
    fprintf(fp, " %s ", l->day ? l->day : "");
    text_fput_term(fp, l->subject ? l->subject : "");
    fprintf(fp, " %s: expected %s, actual %s", l->currency ? l->currency : "",
            l->expected ? l->expected : "none", l->actual ? l->actual : "none");
    if (l->difference)
        fprintf(fp, ", difference %s", l->difference);
    if (l->resolution) {
        fputs(": ", fp);
        text_fput_term(fp, l->resolution);
    }
    if (l->age_days)
        fprintf(fp, " (%lld days old)", (long long)l->age_days);
    fputc('\n', fp);
}

void settle_print_summary(const settle_result *r, FILE *fp)
{
    for (size_t i = 0; i < r->n_files; i++) {
        const settle_file *f = &r->files[i];
        if (!f->reader)
            continue;
        fputs("  ", fp);
        text_fput_term(fp, f->path);
        fprintf(fp, ": read as %s%s (%llu channel rows, %llu bank entries)\n", f->reader,
                f->picked ? ", picked by its header" : "", (unsigned long long)f->channel_rows,
                (unsigned long long)f->bank_rows);
    }
    if (!r->compared) {
        fprintf(fp, "settlement: not compared\n");
        return;
    }
    if (r->zone_given)
        fprintf(fp, "settlement %s..%s (days in %s): %s\n", r->from[0] ? r->from : "-",
                r->to[0] ? r->to : "-", r->zone, verdict_of(r));
    else
        fprintf(fp, "settlement %s..%s (days in each channel's zone, a bank entry's on its "
                    "booking date): %s\n",
                r->from[0] ? r->from : "-", r->to[0] ? r->to : "-", verdict_of(r));
    for (size_t i = 0; i < r->n_days; i++) {
        const settle_day *d = &r->days[i];
        fprintf(fp, "  tenant %lld ", (long long)d->tenant_id);
        text_fput_term(fp, d->channel);
        fprintf(fp, " %s: %lld rows, %lld payouts matched, %lld pending, discrepancies ", d->day,
                (long long)d->rows, (long long)d->matched, (long long)d->pending);
        print_categories(fp, d->categories);
    }
    for (int c = 0; c < SETTLE_CATEGORY_COUNT; c++)
        if (r->count[c])
            fprintf(fp, "  %s: %llu\n", settle_category_name((settle_category)c),
                    (unsigned long long)r->count[c]);
    fprintf(fp, "  payouts: %llu batches; matched %llu by reference, %llu by amount, %llu as "
                "a day's batches in %llu credits\n",
            (unsigned long long)r->batches, (unsigned long long)r->matched_reference,
            (unsigned long long)r->matched_amount, (unsigned long long)r->matched_day,
            (unsigned long long)r->day_credits);
    fprintf(fp, "  pending: %llu (within their window or delay)\n", (unsigned long long)r->pending);
    for (size_t i = 0; i < r->examples.n; i++)
        print_line(fp, &r->examples.v[i]);
    if (r->resolved.n)
        fprintf(fp, "  resolved: %zu\n", r->resolved.n);
    for (size_t i = 0; i < r->resolved.n; i++)
        print_line(fp, &r->resolved.v[i]);
    if (r->escalated)
        fprintf(fp, "  escalated: %llu pending items of earlier days whose window closed\n",
                (unsigned long long)r->escalated);
    if (r->carried_unknown)
        fprintf(fp, "  carried over: unknown (this role may not read the register)\n");
    else if (r->carried.n)
        fprintf(fp, "  carried over: %zu open from earlier days\n", r->carried.n);
    for (size_t i = 0; i < r->carried.n; i++)
        print_line(fp, &r->carried.v[i]);
}

/* ---- the page ---------------------------------------------------------- */

static bool td(buf *out, const char *s)
{
    return buf_append_str(out, "<td>") && (!s || html_escape(out, s, strlen(s))) &&
           buf_append_str(out, "</td>");
}

static bool html_lines(buf *out, const char *title, const char *id, const settle_lines *ls,
                       int pending)
{
    bool any = false;
    for (size_t i = 0; i < ls->n; i++)
        any = any || pending < 0 || ls->v[i].pending == (pending > 0);
    if (!any)
        return true;
    bool ok = buf_printf(out, "<h3>%s</h3>\n<table id=\"%s\"><tr><th>category</th><th>tenant"
                              "</th><th>channel</th><th>day</th><th>subject</th><th>currency"
                              "</th><th>expected</th><th>actual</th><th>difference</th>"
                              "<th>note</th></tr>\n",
                         title, id);
    for (size_t i = 0; ok && i < ls->n; i++) {
        const settle_line *l = &ls->v[i];
        if (pending >= 0 && l->pending != (pending > 0))
            continue;
        char tenant[24];
        snprintf(tenant, sizeof tenant, "%lld", (long long)l->tenant_id);
        ok = buf_printf(out, "<tr class=\"%s\">", l->category) && td(out, l->category) &&
             td(out, tenant) && td(out, l->channel) && td(out, l->day) && td(out, l->subject) &&
             td(out, l->currency) && td(out, l->expected) && td(out, l->actual) &&
             td(out, l->difference) && td(out, l->resolution ? l->resolution : l->detail) &&
             buf_append_str(out, "</tr>\n");
    }
    return ok && buf_append_str(out, "</table>\n");
}

bool settle_html_section(const settle_result *r, buf *out)
{
    bool ok = buf_append_str(out, "<section id=\"settlement\"><h2>Settlement</h2>\n") &&
              buf_printf(out, "<p>verdict <span id=\"settle-verdict\">%s</span>, period ",
                         verdict_of(r)) &&
              html_escape(out, r->from, strlen(r->from)) && buf_append_str(out, "..") &&
              html_escape(out, r->to, strlen(r->to)) && (r->zone_given
                   ? buf_append_str(out, ", days in ") && html_escape(out, r->zone, strlen(r->zone))
                   : buf_append_str(out, ", days in each channel's zone, a bank entry's on "
                                         "its booking date")) &&
              buf_append_str(out, "</p>\n<table id=\"settle-days\"><tr><th>tenant</th>"
                                  "<th>channel</th><th>day</th><th>rows</th><th>payouts "
                                  "matched</th><th>pending</th><th>discrepancies</th>"
                                  "<th>money</th></tr>\n");
    for (size_t i = 0; ok && i < r->n_days; i++) {
        const settle_day *d = &r->days[i];
        char tenant[24], rows[24], matched[24], pending[24];
        snprintf(tenant, sizeof tenant, "%lld", (long long)d->tenant_id);
        snprintf(rows, sizeof rows, "%lld", (long long)d->rows);
        snprintf(matched, sizeof matched, "%lld", (long long)d->matched);
        snprintf(pending, sizeof pending, "%lld", (long long)d->pending);
        ok = buf_append_str(out, "<tr>") && td(out, tenant) && td(out, d->channel) &&
             td(out, d->day) && td(out, rows) && td(out, matched) && td(out, pending) &&
             td(out, d->categories) && td(out, d->amounts) && buf_append_str(out, "</tr>\n");
    }
    ok = ok && buf_append_str(out, "</table>\n") &&
         html_lines(out, "Discrepancies", "settle-discrepancies", &r->examples, 0) &&
         html_lines(out, "Pending", "settle-pending", &r->examples, 1) &&
         html_lines(out, "Resolved by this run", "settle-resolved", &r->resolved, -1) &&
         html_lines(out, "Carried over from earlier days", "settle-carried", &r->carried, -1);
    return ok && buf_append_str(out, "</section>\n");
}

/* The page's section, as html_report_outputs() builds it. */
static bool build_section(const void *r, buf *out)
{
    return settle_html_section((const settle_result *)r, out);
}

int settle_render_outputs(const config *cfg, const settle_result *r, run_report *rep, int code)
{
    report_print_summary(rep, stderr);
    settle_print_summary(r, stderr);
    rep->settlement = settle_json(r);
    return html_report_outputs(cfg->report_path, cfg->html_path, rep, rep->settlement != NULL,
                               build_section, r, code);
}
