/*
 * profile_totals.c - what a bill states of itself, for the profile reader
 * (profile_reader_parts.h): its row count (a count line, or the summary's
 * count column), its money totals per kind (a framing line, or summary
 * columns), its footers' record counts per section, report and file, and
 * its window's zone.  The rows are added up as they are read, and the
 * figures checked at the end of input: a missing or different one fails
 * the file.
 */
#include "input/profile_reader_parts.h"

#include <stdio.h>
#include <string.h>

#include "rules/timezone.h"
#include "rules/validate.h"

/* reader_stated_total: the i-th total the bill stated, once every row
 * was summed and the totals checked (at_end). */
bool pr_stated_total(const reader *r, size_t i, reader_total *out)
{
    const profile_reader *pr = (const profile_reader *)r;
    if (!pr->at_eof || pr->unsummed > 0 || pr->totals_bad[0] || !pr->tot)
        return false;
    for (size_t k = 0; k < pr->pf->n_totals; k++) {
        const total_rt *tr = &pr->tot[k];
        const money_total *t = &pr->pf->totals[k];
        if (!tr->stated || t->count || i-- > 0)
            continue; /* a count is no money total */
        out->label = t->summary ? t->summary : t->label;
        out->column = t->sum;
        out->kind = t->kind;
        out->stated = tr->stated_text;
        int scale = tr->stated_v.scale > tr->sum.scale ? tr->stated_v.scale : tr->sum.scale;
        _Static_assert(sizeof out->rows_sum >= DECT_TEXT_MAX, "room for a sum");
        dect_format(&tr->sum, scale, out->rows_sum);
        return true;
    }
    return false;
}

/* The end of input: the stated money totals against the rows' sums. */
static read_result check_totals(profile_reader *pr)
{
    const profile *pf = pr->pf;
    /* A row that could not be read is rejected, its amounts unknown: the
     * totals cannot be checked (the row count still is). */
    if (pr->unsummed > 0) {
        for (size_t i = 0; i < pf->n_totals; i++)
            if (pr->tot[i].stated)
                pr->base.money_unchecked = pr->unsummed;
        return READ_EOF;
    }
    if (pr->totals_bad[0])
        return reader_fail(&pr->base, "%s: %s: the bill's money totals cannot be checked; "
                                      "nothing is loaded from it", pr->base.path, pr->totals_bad);
    for (size_t i = 0; i < pf->n_totals; i++) {
        const money_total *t = &pf->totals[i];
        const total_rt *tr = &pr->tot[i];
        if (!tr->stated)
            continue;
        const char *where = t->summary ? t->summary : t->label;
        /* Rows without the column add up to zero: a SUCCESS bill (no
         * 退款金额 column) states 退款总金额 0.00 in its summary. */
        if (dect_equal(&tr->stated_v, &tr->sum))
            continue;
        if (t->count) {
            char got[DECT_TEXT_MAX];
            dect_format(&tr->sum, 0, got);
            return reader_fail(&pr->base, "%s: the bill states %s %s but holds %s %s%srows: "
                                          "truncated or edited; nothing is loaded from it",
                               pr->base.path, where, tr->stated_text, got,
                               t->kind ? t->kind : "", t->kind ? " " : "");
        }
        if (tr->row_idx < 0)
            return reader_fail(&pr->base, "%s: the bill states %s %s but its rows have no %s "
                                          "column; nothing is loaded from it", pr->base.path,
                               where, tr->stated_text, t->sum);
        char got[DECT_TEXT_MAX];
        int scale = tr->stated_v.scale > tr->sum.scale ? tr->stated_v.scale : tr->sum.scale;
        dect_format(&tr->sum, scale, got);
        return reader_fail(&pr->base, "%s: the bill states %s %s but its %s%srows' %s add up "
                                      "to %s: truncated or edited; nothing is loaded from it",
                           pr->base.path, where, tr->stated_text, t->kind ? t->kind : "",
                           t->kind ? " " : "", t->sum, got);
    }
    return READ_EOF;
}

/* The row type of the profile's footer that states the count of scope
 * (the one that closes it: PayPal's SC, RC, FF; else one that may state
 * it, SF or RF), NULL when none does. */
static const char *closing_footer(const profile *pf, footer_scope scope)
{
    const char *maybe = NULL;
    for (size_t i = 0; i < pf->n_footers; i++) {
        if (pf->footers[i].scope != scope)
            continue;
        if (!pf->footers[i].optional)
            return pf->footers[i].row_type;
        if (!maybe)
            maybe = pf->footers[i].row_type;
    }
    return maybe;
}

/* A file whose framing opened a file, a report or (in a whole report) a
 * section that its count footer never closed: cut after an inner footer
 * (PayPal's SC or RC), the rest of the report lost.  A file of a split
 * report (file_start seen) answers for its own FF only: its report and
 * section may close in a later file. */
static bool footers_closed(profile_reader *pr, read_result *rr)
{
    const profile *pf = pr->pf;
    const char *opened = NULL, *closer = NULL;
    if (pr->saw_file_start) {
        if (pr->file_open && (closer = closing_footer(pf, FOOTER_FILE)))
            opened = pf->file_start;
    } else if (pr->report_open && (closer = closing_footer(pf, FOOTER_REPORT))) {
        opened = pf->report_start;
    } else if (pr->section_open && (closer = closing_footer(pf, FOOTER_SECTION))) {
        opened = pf->section_start;
    }
    if (!opened)
        return true;
    *rr = reader_fail(&pr->base, "%s: the bill ends after a %s row without its %s footer: "
                                 "truncated? nothing is loaded from it",
                      pr->base.path, opened, closer);
    return false;
}

/* The end of input: checks the stated row count, money totals, footers. */
read_result pr_at_end(profile_reader *pr)
{
    pr->at_eof = true;
    const profile *pf = pr->pf;
    if (pf->n_footers && !pr->saw_footer)
        return reader_fail(&pr->base, "%s: the bill ends without a footer stating its record "
                                      "count (%s...): truncated? nothing is loaded from it",
                           pr->base.path, pf->footers[0].row_type);
    read_result rr;
    if (pf->n_footers && !footers_closed(pr, &rr))
        return rr;
    if (!pf->count_column && pf->n_count_lines == 0)
        return check_totals(pr);
    char what[160] = "";
    if (pf->count_column)
        snprintf(what, sizeof what, "%s", pf->count_column);
    for (size_t i = 0; i < pf->n_count_lines; i++)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", i ? " + " : "",
                 pf->count_lines[i]);
    if (!pr->have_count)
        return reader_fail(&pr->base, "%s: the bill ends without stating its row count (%s): "
                                      "truncated? nothing is loaded from it", pr->base.path, what);
    if (pr->stated != pr->data_rows)
        return reader_fail(&pr->base, "%s: the bill states %llu rows (%s) but holds %llu: "
                                      "truncated or edited; nothing is loaded from it",
                           pr->base.path, (unsigned long long)pr->stated, what,
                           (unsigned long long)pr->data_rows);
    return check_totals(pr);
}

/* A framing line stating total i ("#交易合计：2笔，商家实收共99.00元"): the
 * amount after its label (and a colon), if the line has the label.  False
 * with the reader failed when what follows the label is not an amount. */
bool pr_line_total(profile_reader *pr, size_t i, const char *t, size_t n, uint64_t line)
{
    const money_total *mt = &pr->pf->totals[i];
    total_rt *tr = &pr->tot[i];
    size_t ln = strlen(mt->label);
    const char *at = NULL;
    for (size_t k = 0; !at && ln && k + ln <= n; k++)
        if (memcmp(t + k, mt->label, ln) == 0)
            at = t + k;
    if (!at)
        return true; /* not stated: not checked */
    size_t k = (size_t)(at - t) + ln;
    if (k + 3 <= n && memcmp(t + k, "\xef\xbc\x9a", 3) == 0)
        k += 3; /* a full-width colon */
    else if (k < n && t[k] == ':')
        k++;
    while (k < n && t[k] == ' ')
        k++;
    size_t e = k;
    while (e < n && ((t[e] >= '0' && t[e] <= '9') || t[e] == '.' || t[e] == '-' || t[e] == '+'))
        e++;
    if (!dect_parse(t + k, e - k, &tr->stated_v) || e - k >= sizeof tr->stated_text) {
        reader_fail(&pr->base, "%s: line %llu: no amount after %s", pr->base.path,
                    (unsigned long long)line, mt->label);
        return false;
    }
    memcpy(tr->stated_text, t + k, e - k);
    tr->stated_text[e - k] = '\0';
    tr->stated = true;
    return true;
}

/* The summary's data line: takes the row count from its count column. */
static line_step take_summary_count(profile_reader *pr, uint64_t line, read_result *rr)
{
    pr->state = ST_AFTER_SUMMARY;
    for (size_t t = 0; t < pr->pf->n_totals; t++) {
        total_rt *tr = &pr->tot[t];
        if (tr->summary_idx < 0 || (size_t)tr->summary_idx >= pr->nvals)
            continue;
        pr_clean_value(pr, (size_t)tr->summary_idx);
        const char *v = pr->vals.data + pr->voff[tr->summary_idx];
        size_t vn = pr->vlen[tr->summary_idx];
        if (!dect_parse(v, vn, &tr->stated_v) || vn >= sizeof tr->stated_text)
            return stop(rr, reader_fail(&pr->base, "%s: line %llu: the summary's %s is not an "
                                                   "amount: \"%.*s\"", pr->base.path,
                                        (unsigned long long)line, pr->pf->totals[t].summary,
                                        (int)(vn > 40 ? 40 : vn), v));
        memcpy(tr->stated_text, v, vn);
        tr->stated_text[vn] = '\0';
        tr->stated = true;
    }
    if (pr->count_idx < 0 || (size_t)pr->count_idx >= pr->nvals)
        return LINE_TAKEN;
    pr_clean_value(pr, (size_t)pr->count_idx);
    const char *v = pr->vals.data + pr->voff[pr->count_idx];
    size_t vn = pr->vlen[pr->count_idx];
    int64_t c;
    /* WeChat's own example of a fund bill writes its counts "20.0". */
    size_t cn = vn;
    const char *dot = memchr(v, '.', vn);
    if (dot) {
        size_t k = (size_t)(dot - v) + 1;
        while (k < vn && v[k] == '0')
            k++;
        if (k == vn && dot > v)
            cn = (size_t)(dot - v);
    }
    if (!parse_int_in_range(v, cn, 0, INT64_MAX, &c))
        return stop(rr, reader_fail(&pr->base, "%s: line %llu: the summary's %s is not a "
                                               "count: \"%.*s\"", pr->base.path,
                                    (unsigned long long)line, pr->pf->count_column,
                                    (int)(vn > 40 ? 40 : vn), v));
    pr->stated = (uint64_t)c;
    pr->have_count = true;
    return LINE_TAKEN;
}

/* The summary's header line (end_prefix): finds its count column. */
static line_step start_summary(profile_reader *pr, uint64_t line, read_result *rr)
{
    const profile *pf = pr->pf;
    pr->state = ST_SUMMARY_DATA;
    pr->count_idx = -1;
    for (size_t i = 0; pf->count_column && i < pr->nvals; i++) {
        pr_clean_value(pr, i);
        if (pr->vlen[i] == strlen(pf->count_column) &&
            memcmp(pr->vals.data + pr->voff[i], pf->count_column, pr->vlen[i]) == 0)
            pr->count_idx = (int)i;
    }
    if (pf->count_column && pr->count_idx < 0)
        return stop(rr, reader_fail(&pr->base, "%s: line %llu: the summary header has no %s "
                                               "column", pr->base.path,
                                    (unsigned long long)line, pf->count_column));
    for (size_t t = 0; t < pf->n_totals; t++) {
        pr->tot[t].summary_idx = -1;
        const char *name = pf->totals[t].summary;
        for (size_t i = 0; name && i < pr->nvals; i++)
            if (pr->vlen[i] == strlen(name) && memcmp(pr->vals.data + pr->voff[i], name,
                                                      pr->vlen[i]) == 0)
                pr->tot[t].summary_idx = (int)i;
    }
    return LINE_TAKEN;
}

/* The summary: its header line, then its data line. */
line_step pr_summary_line(profile_reader *pr, uint64_t line, read_result *rr)
{
    const profile *pf = pr->pf;
    if (pr->state == ST_SUMMARY_DATA)
        return take_summary_count(pr, line, rr);
    /* Reading on may have moved the text: look at it only now. */
    if (pf->end_prefix && pr->have_header &&
        pr_starts_with(pr->text.data, pr->text.len, pf->end_prefix))
        return start_summary(pr, line, rr);
    return LINE_UNDECIDED;
}

/* A framing row type (rt[0..rn)) of a profile with footer counts: notes
 * where a section, the report and the file start; checks a footer's count
 * against the data rows it covers.  False (*rr set) on a mismatch. */
bool pr_footer_row(profile_reader *pr, const char *rt, size_t rn, read_result *rr)
{
    const profile *pf = pr->pf;
    if (pr_is_type(rt, rn, pf->section_start)) {
        pr->section_here = true;
        pr->section_open = true;
        pr->section_base = pr->data_rows;
    }
    if (pr_is_type(rt, rn, pf->report_start))
        pr->saw_report_start = pr->report_open = true;
    if (pr_is_type(rt, rn, pf->file_start))
        pr->saw_file_start = pr->file_open = true;
    for (size_t i = 0; i < pf->n_footers; i++) {
        const footer_count *fc = &pf->footers[i];
        if (!pr_is_type(rt, rn, fc->row_type))
            continue;
        uint64_t held;
        const char *what;
        if (fc->scope == FOOTER_SECTION) {
            if (!pr->section_here)
                return true; /* its section began in an earlier file */
            held = pr->data_rows - pr->section_base;
            what = "its section";
        } else if (fc->scope == FOOTER_REPORT) {
            if (!pr->saw_report_start && pr->saw_file_start)
                return true; /* a later file of a split report */
            held = pr->data_rows;
            what = "the report";
        } else {
            held = pr->data_rows;
            what = "the file";
        }
        int64_t c;
        const char *v = "";
        size_t vn = 0;
        if (pr->nvals > 1) {
            pr_clean_value(pr, 1);
            v = pr->vals.data + pr->voff[1];
            vn = pr->vlen[1];
        }
        bool count = parse_int_in_range(v, vn, 0, INT64_MAX, &c);
        if (!count && fc->optional)
            continue; /* this file states money there, not a count */
        pr->saw_footer = true;
        /* a count footer closes its section, report or file */
        if (fc->scope == FOOTER_SECTION)
            pr->section_open = false;
        else if (fc->scope == FOOTER_REPORT)
            pr->report_open = false;
        else
            pr->file_open = false;
        if (!count) {
            *rr = reader_fail(&pr->base, "%s: line %llu: the %s footer holds no record count: "
                                         "\"%.*s\"", pr->base.path,
                              (unsigned long long)pr->rec_line, fc->row_type,
                              (int)(vn > 40 ? 40 : vn), v);
            return false;
        }
        if ((uint64_t)c != held) {
            *rr = reader_fail(&pr->base, "%s: line %llu: the %s footer states %lld records but "
                                         "%s holds %llu: truncated or edited; nothing is loaded "
                                         "from it", pr->base.path,
                              (unsigned long long)pr->rec_line, fc->row_type, (long long)c, what,
                              (unsigned long long)held);
            return false;
        }
    }
    return true;
}

/* The profile's zone row (PayPal's SH): the offset that ends the time in
 * its first field ("2024/08/20 00:00:00 -0700") is the bill's window's
 * zone, kept from the first such row; a field without one leaves none. */
void pr_zone_row(profile_reader *pr)
{
    if (pr->base.window_zone[0] || pr->nvals < 2)
        return;
    pr_clean_value(pr, 1);
    const char *v = pr->vals.data + pr->voff[1];
    size_t n = pr->vlen[1], k = n;
    while (k > 0 && v[k - 1] != ' ')
        k--;
    char off[8];
    int32_t east;
    if (k == 0 || n - k >= sizeof off || (v[k] != '+' && v[k] != '-'))
        return;
    memcpy(off, v + k, n - k);
    off[n - k] = '\0';
    if (tz_fixed_offset(off, &east))
        tz_format_offset(east, pr->base.window_zone);
}

/* Adds the row's amounts to the totals of its kind; a cell that is not an
 * amount is noted (the totals cannot be checked). */
void pr_add_to_totals(profile_reader *pr, uint64_t line)
{
    const profile *pf = pr->pf;
    for (size_t i = 0; i < pf->n_totals; i++) {
        const money_total *t = &pf->totals[i];
        total_rt *tr = &pr->tot[i];
        if (t->kind && strcmp(t->kind, pr->row_kind) != 0)
            continue;
        if (t->count) {
            dect one;
            if (dect_parse("1", 1, &one))
                (void)dect_add(&tr->sum, &one);
            continue;
        }
        if (tr->row_idx < 0)
            continue;
        const char *v = pr->vals.data + pr->voff[tr->row_idx];
        size_t n = pr->vlen[tr->row_idx];
        dect d;
        if (n == 0)
            continue; /* an empty cell adds nothing */
        if ((!dect_parse(v, n, &d) || !dect_add(&tr->sum, &d)) && !pr->totals_bad[0])
            snprintf(pr->totals_bad, sizeof pr->totals_bad, "line %llu: %s \"%.*s\" is not "
                     "an amount", (unsigned long long)line, t->sum, (int)(n > 40 ? 40 : n), v);
    }
}
