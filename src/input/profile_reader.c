/*
 * profile_reader.c - a channel bill, read by its profile, as records of
 * idemload's columns (SPEC.md "Channel exports: profiles").
 *
 * Line by line: each physical line is converted to UTF-8 (GBK through
 * iconv) or checked as UTF-8, then classified: blank, framing (a skip
 * prefix, a row type that is not data), a line stating the row count, the
 * start of the summary (end_prefix) and its data line, the header, or a
 * data row.  A quoted field may span lines (Stripe descriptions); quotes
 * only count at the start of a field, so WeChat's unquoted text with a '"'
 * inside stays as written.
 *
 * A data row becomes a record whose fields are texts this reader builds:
 * the payload (a JSON object of every column by header name, each value a
 * JSON string as written after the profile's cleanup; a row type's column
 * is framing and left out), the columns the profile maps (callback_type
 * renamed by --kind, tenant_id from the row's merchant through
 * --tenant-map), and received_at with an offset appended when the text has
 * none ('Z' for a column the profile declares UTC, else the profile's
 * zone), unless the result is no timestamp at all: then the cell as
 * written, for validation to quote.
 *
 * The file checks itself: every data row counts toward its row count, its
 * amounts toward the money totals of its kind, and footer rows state the
 * counts of their section, report or file.  The counts and totals are
 * checked when the input ends (footers where they stand): a missing or
 * different figure fails the file (READ_FAILED), so the caller must not
 * commit anything before reading to the end (pipeline/prepass.c makes a
 * first pass for that, profile_has_trailer()).
 *
 * This file is the driver: it opens the reader, reads line by line and
 * hands each line to the step that takes it, and hands out records.  The
 * parts it calls (lines and fields, the header, a data row, the bill's
 * stated figures) are named in profile_reader_parts.h.
 */
#include "input/profile_reader_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/timezone.h"

static read_result out_of_memory(profile_reader *pr)
{
    if (pr->too_many_fields)
        return READ_FAILED;
    return reader_fail(&pr->base, "%s: out of memory", pr->base.path);
}

/* Hands out the record read so far as a row rejected with pr->msg, its
 * bytes kept as written. */
static void hand_out_unreadable(profile_reader *pr, raw_record *out, uint64_t line)
{
    pr->row_split = false;
    memset(out, 0, sizeof *out);
    out->line = line;
    out->raw = pr->raw.data;
    out->raw_len = pr->raw.len - pr_break_len(pr->raw.data, pr->raw.len);
    out->error = pr->msg;
    /* A GBK line with a bad byte: its text shows what it says (the bad
     * byte as U+FFFD), where read as UTF-8 every Chinese character would;
     * the bytes go with it.  Out of memory: the bytes alone, as before. */
    buf_clear(&pr->lossy);
    if (pr->tc && transcoder_run_lossy(pr->tc, out->raw, out->raw_len, &pr->lossy)) {
        out->orig = out->raw;
        out->orig_len = out->raw_len;
        out->raw = pr->lossy.data ? pr->lossy.data : "";
        out->raw_len = pr->lossy.len;
    }
}

/* A record's text is its conversion (a GBK bill) when it differs from
 * the bytes: they go with it, for a reject's raw_base64. */
static void keep_original(profile_reader *pr, raw_record *out)
{
    size_t n = pr->raw.len - pr_break_len(pr->raw.data, pr->raw.len);
    if (pr->tc && (n != out->raw_len || memcmp(pr->raw.data, out->raw, n) != 0)) {
        out->orig = pr->raw.data;
        out->orig_len = n;
    }
}

/* Fails the file: a line before the rows or in the summary is not in the
 * profile's encoding (the wrong --encoding or profile, most likely). */
static read_result not_in_encoding(profile_reader *pr, uint64_t line)
{
    const profile *pf = pr->pf;
    const unsigned char *b = (const unsigned char *)pr->raw.data;
    if (line == 1 && pr->raw.len >= 2 &&
        ((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff)))
        /* PayPal's older reports were written in UTF-16: say so, rather
         * than suggest the other encoding read. */
        return reader_fail(&pr->base, "%s: a UTF-16 file (its byte-order mark is %s): "
                                      "profile %s reads %s; convert it first (iconv -f "
                                      "UTF-16 -t UTF-8)", pr->base.path,
                           b[0] == 0xff ? "FF FE" : "FE FF", pf->name,
                           pf->encoding == PROFILE_GBK ? "GBK (or --encoding utf-8)"
                                                       : "UTF-8 (or --encoding gbk)");
    buf exp = BUF_INIT;
    pr_expected_list(pf, pr->preset, &exp);
    buf_clear(&pr->base.err);
    buf_printf(&pr->base.err, "%s: line %llu: %s: not a %s file (try --encoding %s, "
                              "or another profile)%s%s%s",
               pr->base.path, (unsigned long long)line, pr->msg,
               pf->encoding == PROFILE_GBK ? "GBK" : "UTF-8",
               pf->encoding == PROFILE_GBK ? "utf-8" : "gbk",
               pr->have_header ? "" : "; profile ",
               pr->have_header ? "" : pf->name,
               pr->have_header ? "" : " expects the columns ");
    if (!pr->have_header)
        buf_append_str(&pr->base.err, buf_cstr(&exp));
    buf_free(&exp);
    return READ_FAILED;
}

/* A line unreadable in the encoding: framing if its ASCII prefix says so,
 * else a data row rejected with its bytes kept, or a failed file before the
 * rows. */
static line_step unreadable_line(profile_reader *pr, raw_record *out, uint64_t line,
                                 read_result *rr)
{
    const profile *pf = pr->pf;
    bool framing = false;
    for (size_t i = 0; i < pf->n_skip_prefix; i++)
        framing = framing || pr_starts_with(pr->raw.data, pr->raw.len, pf->skip_prefix[i]);
    for (size_t i = 0; i < pf->n_count_lines; i++)
        if (pr_starts_with(pr->raw.data, pr->raw.len, pf->count_lines[i]))
            framing = false;
    if (framing)
        return LINE_TAKEN;
    if (!pr->have_header || pr->state != ST_ROWS)
        return stop(rr, not_in_encoding(pr, line));
    pr->data_rows++;
    pr->unsummed++;
    hand_out_unreadable(pr, out, line);
    return stop(rr, READ_RECORD);
}

/* Reads the next physical line into pr->raw and, as UTF-8, pr->text. */
static line_step read_text_line(profile_reader *pr, raw_record *out, bool want_header,
                                uint64_t *line, read_result *rr)
{
    buf_clear(&pr->raw);
    buf_clear(&pr->text);
    *line = 0;
    int got = pr_read_line(pr, line);
    if (got < 0)
        return stop(rr, READ_FAILED);
    if (got == 0)
        return stop(rr, want_header ? READ_EOF : pr_at_end(pr));
    pr->rec_line = *line;
    int conv = pr_to_text(pr, 0);
    if (conv < 0)
        return stop(rr, out_of_memory(pr));
    if (conv == 0)
        return unreadable_line(pr, out, *line, rr);
    return LINE_UNDECIDED;
}

/* The first integer in s[0..n) after the prefix; false when there is none. */
static bool count_after(const char *s, size_t n, size_t skip, uint64_t *out)
{
    size_t i = skip;
    while (i < n && (s[i] < '0' || s[i] > '9'))
        i++;
    if (i == n)
        return false;
    uint64_t v = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

static bool is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    return true;
}

/* Takes blank lines, lines stating the row count and framing lines; text
 * after the summary fails the file. */
static line_step skip_framing(profile_reader *pr, uint64_t line, read_result *rr)
{
    const profile *pf = pr->pf;
    const char *t = pr->text.data ? pr->text.data : "";
    size_t tn = pr->text.len;
    if (is_blank(t, tn))
        return LINE_TAKEN;
    for (size_t i = 0; i < pf->n_totals; i++)
        if (pf->totals[i].line && pr_starts_with(t, tn, pf->totals[i].line) &&
            !pr_line_total(pr, i, t, tn - pr_break_len(t, tn), line))
            return stop(rr, READ_FAILED);
    bool counted = false;
    for (size_t i = 0; i < pf->n_count_lines; i++) {
        size_t k = strlen(pf->count_lines[i]);
        if (!pr_starts_with(t, tn, pf->count_lines[i]))
            continue;
        uint64_t v;
        if (!count_after(t, tn - pr_break_len(t, tn), k, &v))
            return stop(rr, reader_fail(&pr->base, "%s: line %llu: no count after %s",
                                        pr->base.path, (unsigned long long)line,
                                        pf->count_lines[i]));
        pr->stated += v;
        pr->have_count = true;
        counted = true;
    }
    if (counted)
        return LINE_TAKEN;
    bool framing = false;
    for (size_t i = 0; i < pf->n_skip_prefix && !framing; i++)
        framing = pr_starts_with(t, tn, pf->skip_prefix[i]);
    if (framing)
        return LINE_TAKEN;
    if (pr->state == ST_AFTER_SUMMARY)
        return stop(rr, reader_fail(&pr->base, "%s: line %llu: text after the bill's summary; "
                                               "nothing is loaded from it", pr->base.path,
                                    (unsigned long long)line));
    return LINE_UNDECIDED;
}

/* Splits the record into fields, reading on while a quoted field spans
 * lines; a next line unreadable in the encoding hands the record out as
 * rejected. */
static line_step split_record(profile_reader *pr, raw_record *out, uint64_t line,
                              read_result *rr)
{
    for (;;) {
        size_t body = pr->text.len - pr_break_len(pr->text.data, pr->text.len);
        int sp = pr_split_fields(pr, pr->text.data, body);
        if (sp < 0)
            return stop(rr, out_of_memory(pr));
        if (sp == 1)
            return LINE_UNDECIDED;
        size_t before = pr->raw.len;
        uint64_t more_line;
        int got = pr_read_line(pr, &more_line);
        if (got < 0)
            return stop(rr, READ_FAILED);
        if (got == 0) {
            /* An unterminated quote at the end: the rest as one field. */
            pr->text.len = body;
            if (!buf_append_char(&pr->text, '"'))
                return stop(rr, out_of_memory(pr));
            continue;
        }
        int conv = pr_to_text(pr, before);
        if (conv < 0)
            return stop(rr, out_of_memory(pr));
        if (conv == 0) {
            pr->data_rows += pr->have_header && pr->state == ST_ROWS;
            pr->unsummed += pr->have_header && pr->state == ST_ROWS;
            hand_out_unreadable(pr, out, line);
            return stop(rr, READ_RECORD);
        }
    }
}

/* Takes the split line as the header; with want_header, advance stops
 * there. */
static line_step header_taken(profile_reader *pr, bool want_header, read_result *rr)
{
    if (!pr_take_header(pr))
        return stop(rr, READ_FAILED);
    const profile *pf = pr->pf;
    for (size_t i = 0; i < pf->n_totals; i++) {
        const money_total *t = &pf->totals[i];
        pr->tot[i].row_idx = t->sum ? pr_header_index(pr, t->sum, strlen(t->sum)) : -1;
        if (pr->tot[i].row_idx < 0 && t->sum_alt)
            pr->tot[i].row_idx = pr_header_index(pr, t->sum_alt, strlen(t->sum_alt));
    }
    for (size_t i = 0; i < pf->n_merchant_from; i++)
        pr->merchant_idx[i] = pr_header_index(pr, pf->merchant_from[i],
                                              strlen(pf->merchant_from[i]));
    pr_note_covers(pr);
    if (want_header)
        return stop(rr, READ_RECORD);
    return LINE_TAKEN;
}

/* The header (the first line, or the row type's header line), a row type
 * that is not data (framing), or else a data row (undecided; taken while
 * only the header is wanted). */
static line_step header_line(profile_reader *pr, bool want_header, read_result *rr)
{
    const profile *pf = pr->pf;
    if (pf->row_type_header) {
        pr_clean_value(pr, 0);
        const char *rt = pr->vals.data + pr->voff[0];
        size_t rn = pr->vlen[0];
        bool is_header = rn == strlen(pf->row_type_header) &&
                         memcmp(rt, pf->row_type_header, rn) == 0;
        if (is_header) {
            /* Back to the raw split: take_header cleans every name. */
            if (pr_split_fields(pr, pr->text.data,
                                pr->text.len - pr_break_len(pr->text.data, pr->text.len)) < 0)
                return stop(rr, out_of_memory(pr));
            return header_taken(pr, want_header, rr);
        }
        bool data = false;
        for (size_t i = 0; i < pf->n_row_type_data && !data; i++)
            data = rn == strlen(pf->row_type_data[i]) &&
                   memcmp(rt, pf->row_type_data[i], rn) == 0;
        if (!data && pf->n_footers && !pr_footer_row(pr, rt, rn, rr))
            return LINE_STOP;
        if (!data && pr_is_type(rt, rn, pf->zone_row))
            pr_zone_row(pr);
        if (!data && pr->framing_rows && pr->have_header && !want_header)
            return LINE_FRAMING; /* handed out, skipped (reader_options) */
        if (!data || !pr->have_header)
            return LINE_TAKEN; /* framing: RH, FH, SH, SF, ... */
    } else if (!pr->have_header) {
        return header_taken(pr, want_header, rr);
    }
    return want_header ? LINE_TAKEN : LINE_UNDECIDED;
}

/* A data row: its fields checked against the header, cleaned, built. */
static read_result data_row(profile_reader *pr, raw_record *out, uint64_t line)
{
    pr->data_rows++;
    pr->row_split = false;
    memset(out, 0, sizeof *out);
    out->line = line;
    out->raw = pr->text.data;
    out->raw_len = pr->text.len - pr_break_len(pr->text.data, pr->text.len);
    keep_original(pr, out);
    if (pr->nvals != pr->ncols) {
        snprintf(pr->msg, sizeof pr->msg, "expected %zu fields as in the header, found %zu",
                 pr->ncols, pr->nvals);
        pr->unsummed++;
        out->error = pr->msg;
        return READ_RECORD;
    }
    for (size_t i = 0; i < pr->nvals; i++)
        pr_clean_value(pr, i);
    pr->row_split = true;
    pr->row_kind[0] = '\0';
    row_outcome ro = pr_build_row(pr, out);
    pr_add_to_totals(pr, line);
    /* Rejected before its kind was known (a refund without its refund
     * number): its money belongs to no kind's total, so the totals cannot
     * be checked, as for an unreadable row; checked without it, a genuine
     * bill was refused as "truncated or edited". */
    if (ro == ROW_REJECT && !pr->row_kind[0])
        pr->unsummed++;
    switch (ro) {
    case ROW_OK:
        break;
    case ROW_SKIP:
        out->skipped = true;
        break;
    case ROW_REJECT:
        out->error = pr->msg;
        break;
    case ROW_OOM:
        return out_of_memory(pr);
    }
    return READ_RECORD;
}

/*
 * Reads until a data row (READ_RECORD into *out), the end (READ_EOF), or a
 * fault.  With want_header, returns READ_RECORD as soon as the header is
 * taken instead.  Each line goes through the steps in turn until one takes
 * it or stops.
 */
static read_result advance(profile_reader *pr, raw_record *out, bool want_header)
{
    for (;;) {
        read_result rr = READ_FAILED;
        uint64_t line;
        line_step st = read_text_line(pr, out, want_header, &line, &rr);
        if (st == LINE_UNDECIDED)
            st = skip_framing(pr, line, &rr);
        if (st == LINE_UNDECIDED)
            st = split_record(pr, out, line, &rr);
        if (st == LINE_UNDECIDED)
            st = pr_summary_line(pr, line, &rr);
        if (st == LINE_UNDECIDED)
            st = header_line(pr, want_header, &rr);
        if (st == LINE_UNDECIDED)
            return data_row(pr, out, line);
        if (st == LINE_STOP)
            return rr;
        if (st == LINE_FRAMING) {
            /* A framing row after the header (PayPal's SH, SF, RF...):
             * its values readable by reader_source_value, not a row. */
            memset(out, 0, sizeof *out);
            out->line = line;
            out->raw = pr->text.data;
            out->raw_len = pr->text.len - pr_break_len(pr->text.data, pr->text.len);
            out->skipped = true;
            for (size_t i = 0; i < pr->nvals; i++)
                pr_clean_value(pr, i);
            pr->row_split = true;
            return READ_RECORD;
        }
    }
}

static bool pr_scope_here(const reader *r, bool report)
{
    const profile_reader *pr = (const profile_reader *)r;
    return report ? pr->saw_report_start || !pr->saw_file_start : pr->section_here;
}

static int pr_source_column(const reader *r, const char *name)
{
    const profile_reader *pr = (const profile_reader *)r;
    return pr->have_header ? pr_header_index(pr, name, strlen(name)) : -1;
}

static const char *pr_source_value(const reader *r, int idx, size_t *len)
{
    const profile_reader *pr = (const profile_reader *)r;
    if (!pr->row_split || (size_t)idx >= pr->nvals)
        return NULL;
    *len = pr->vlen[idx];
    return pr->vals.data ? pr->vals.data + pr->voff[idx] : "";
}

static read_result profile_next(reader *r, raw_record *out)
{
    profile_reader *pr = (profile_reader *)r;
    if (pr->at_eof)
        return READ_EOF;
    return advance(pr, out, false);
}

static void profile_close(reader *r)
{
    profile_reader *pr = (profile_reader *)r;
    pr_rules_free(pr);
    line_feed_free(&pr->lf);
    transcoder_close(&pr->tc);
    buf_free(&pr->hdr);
    buf_free(&pr->hjson);
    free(pr->hoff);
    free(pr->hlen);
    free(pr->hjoff);
    free(pr->hjlen);
    name_index_free(&pr->hindex);
    buf_free(&pr->raw);
    buf_free(&pr->text);
    buf_free(&pr->lossy);
    buf_free(&pr->vals);
    free(pr->voff);
    free(pr->vlen);
    buf_free(&pr->out);
    buf_free(&pr->scratch);
    free(pr->tot);
    free(pr->merchant_idx);
    free(pr);
}

reader *profile_reader_open(source *src, const char *path, const reader_options *opt, buf *err)
{
    profile_reader *pr = calloc(1, sizeof *pr);
    if (!pr) {
        buf_printf(err, "%s: out of memory", path);
        return NULL;
    }
    pr->base.next = profile_next;
    pr->base.stated_total = pr_stated_total;
    pr->base.source_column = pr_source_column;
    pr->base.source_value = pr_source_value;
    pr->base.scope_here = pr_scope_here;
    pr->base.close = profile_close;
    pr->base.checks_utf8 = true;
    pr->base.path = path;
    pr->pf = opt->profile;
    pr->count_idx = -1;
    pr->refund_of_idx = -1;
    pr->links = opt->links;
    pr->framing_rows = opt->framing_rows;
    pr->values_only = opt->values_only;
    for (int c = 0; c < COL_COUNT; c++)
        pr->preset[c] = opt->preset[c];
    if (pr->pf->timezone && pr->pf->tz.fixed)
        tz_format_offset(pr->pf->tz.offset_s, pr->offset_text);
    reader *r = &pr->base;
    const profile *pf = pr->pf;
    pr->tot = calloc(pf->n_totals ? pf->n_totals : 1, sizeof *pr->tot);
    pr->merchant_idx = calloc(pf->n_merchant_from ? pf->n_merchant_from : 1,
                              sizeof *pr->merchant_idx);
    for (size_t i = 0; pr->tot && i < pf->n_totals; i++)
        pr->tot[i].row_idx = pr->tot[i].summary_idx = -1;
    if (!pr->tot || !pr->merchant_idx || !line_feed_init(&pr->lf, src)) {
        buf_printf(err, "%s: out of memory", path);
        reader_close(&r);
        return NULL;
    }
    if (pr->pf->encoding == PROFILE_GBK) {
        pr->tc = transcoder_open("GBK", err);
        if (!pr->tc) {
            reader_close(&r);
            return NULL;
        }
    }
    raw_record dummy;
    read_result rr = advance(pr, &dummy, true);
    if (rr == READ_FAILED) {
        buf_append_str(err, reader_error(r));
        reader_close(&r);
        return NULL;
    }
    if (rr == READ_EOF) {
        buf exp = BUF_INIT;
        pr_expected_list(pr->pf, pr->preset, &exp);
        buf_printf(err, "%s: no header found for profile %s (it expects the columns %s)", path,
                   pr->pf->name, buf_cstr(&exp));
        buf_free(&exp);
        reader_close(&r);
        return NULL;
    }
    return r;
}
