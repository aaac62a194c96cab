/*
 * reader_common.c - what the format readers share (see reader_impl.h): the
 * error a reader records, closing any reader through its own close, and the
 * line splitter every format reads through.
 */
#include "input/reader_impl.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The read window.  The fuzz build (fuzz/CMakeLists.txt) makes it tiny, so
 * that line breaks, CRLF pairs and record starts land on its edges often. */
#ifndef IDEMLOAD_READ_WINDOW
#define IDEMLOAD_READ_WINDOW (256 * 1024)
#endif
#define WINDOW IDEMLOAD_READ_WINDOW

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
