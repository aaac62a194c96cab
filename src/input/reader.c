/*
 * reader.c - format choice, the column table, the shared line splitter, and
 * the dispatch to the CSV or NDJSON reader (see reader.h).
 */
#include "input/reader_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The read window.  The fuzz build (fuzz/CMakeLists.txt) makes it tiny, so
 * that line breaks, CRLF pairs and record starts land on its edges often. */
#ifndef IDEMLOAD_READ_WINDOW
#define IDEMLOAD_READ_WINDOW (256 * 1024)
#endif
#define WINDOW IDEMLOAD_READ_WINDOW

static const char *const column_names[COL_COUNT] = {
    [COL_TENANT_ID] = "tenant_id",
    [COL_CHANNEL] = "channel",
    [COL_OUT_TRADE_NO] = "out_trade_no",
    [COL_CALLBACK_TYPE] = "callback_type",
    [COL_STATUS] = "status",
    [COL_PAYLOAD] = "payload",
    [COL_RECEIVED_AT] = "received_at",
};

const char *column_name(column c)
{
    return column_names[c];
}

int column_lookup(const char *name, size_t len)
{
    for (int c = 0; c < COL_COUNT; c++)
        if (strlen(column_names[c]) == len && strncasecmp(column_names[c], name, len) == 0)
            return c;
    return -1;
}

bool column_required(column c)
{
    return c != COL_STATUS;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

input_format format_from_name(const char *path)
{
    size_t n = strlen(path);
    if (ends_with(path, n, ".gz"))
        n -= 3;
    if (ends_with(path, n, ".csv"))
        return FORMAT_CSV;
    if (ends_with(path, n, ".ndjson") || ends_with(path, n, ".jsonl"))
        return FORMAT_NDJSON;
    return FORMAT_AUTO;
}

const char *format_name(input_format f)
{
    switch (f) {
    case FORMAT_CSV:
        return "csv";
    case FORMAT_NDJSON:
        return "ndjson";
    default:
        return "unknown";
    }
}

reader *reader_open(source *src, const char *path, const reader_options *opt, buf *err)
{
    if (opt->profile)
        return profile_reader_open(src, path, opt, err);
    if (opt->format == FORMAT_CSV)
        return csv_reader_open(src, path, opt, err);
    if (opt->format == FORMAT_NDJSON)
        return ndjson_reader_open(src, path, opt, err);
    buf_printf(err, "%s: cannot tell the format from the name; use --format csv|ndjson", path);
    return NULL;
}

read_result reader_next(reader *r, raw_record *out)
{
    /* A failed reader has lost its place in the input (a record cut by the
     * size limit, a source fault): it stays failed rather than hand out the
     * rest of a broken record as new ones. */
    if (r->err.len > 0)
        return READ_FAILED;
    return r->next(r, out);
}

const char *reader_error(const reader *r)
{
    return buf_cstr(&r->err);
}

void reader_close(reader **rp)
{
    if (*rp) {
        buf_free(&(*rp)->err);
        (*rp)->close(*rp);
        *rp = NULL;
    }
}

read_result reader_fail(reader *r, const char *fmt, ...)
{
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    buf_clear(&r->err);
    buf_append_str(&r->err, msg);
    return READ_FAILED;
}

bool line_feed_init(line_feed *lf, source *src)
{
    memset(lf, 0, sizeof *lf);
    lf->src = src;
    lf->first = true;
    lf->lone_cr = true;
    lf->line = 1;
    lf->win = malloc(WINDOW);
    return lf->win != NULL;
}

void line_feed_free(line_feed *lf)
{
    free(lf->win);
    lf->win = NULL;
}

int line_feed_next(line_feed *lf, const char **p, size_t *n, uint64_t *line)
{
    if (lf->failed)
        return -1;
    if (lf->win_pos == lf->win_len) {
        if (lf->eof)
            return 0;
        ssize_t got = source_read(lf->src, lf->win, WINDOW);
        if (got < 0) {
            lf->failed = true;
            return -1;
        }
        if (got == 0) {
            lf->eof = true;
            return 0;
        }
        lf->win_len = (size_t)got;
        lf->win_pos = 0;
        lf->next_lf = SIZE_MAX;
        if (lf->first) {
            /* A BOM can straddle reads only on an absurdly slow pipe; the
             * first read of a source returns at least 3 bytes when it has them
             * unless it is a pipe fed byte by byte, which we accept to miss. */
            lf->first = false;
            if (lf->win_len >= 3 && memcmp(lf->win, "\xEF\xBB\xBF", 3) == 0)
                lf->win_pos = 3;
            if (lf->win_pos == lf->win_len)
                return line_feed_next(lf, p, n, line);
        }
    }
    const char *start = lf->win + lf->win_pos;
    const char *end = lf->win + lf->win_len;
    if (lf->pending_cr && *start == '\n') {
        /* The second half of a CRLF: same line as the CR ended. */
        lf->pending_cr = false;
        *p = start;
        *n = 1;
        *line = lf->line - 1;
        lf->win_pos++;
        return 1;
    }
    lf->pending_cr = false;
    /* memchr is vectorised; a lone CR (old Mac line ends) is rare, so look
     * for LF first and only then for a CR before it.  The LF found is kept:
     * in a window of CR-only lines, searching again for every line would
     * cost the rest of the window each time. */
    if (lf->next_lf == SIZE_MAX || lf->next_lf < lf->win_pos) {
        const char *nl = memchr(start, '\n', (size_t)(end - start));
        lf->next_lf = nl ? (size_t)(nl - lf->win) : lf->win_len;
    }
    const char *q = lf->win + lf->next_lf;
    const char *cr = lf->lone_cr ? memchr(start, '\r', (size_t)(q - start)) : NULL;
    if (cr)
        q = cr;
    *line = lf->line;
    if (q < end) {
        if (*q == '\r' && q + 1 < end && q[1] == '\n')
            q++;
        else if (*q == '\r' && q + 1 == end)
            lf->pending_cr = true;
        q++;
        lf->line++;
    }
    *p = start;
    *n = (size_t)(q - start);
    lf->win_pos += *n;
    return 1;
}
