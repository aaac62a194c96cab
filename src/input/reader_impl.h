/*
 * reader_impl.h - what csv_reader.c and ndjson_reader.c share with reader.c:
 * the dispatch table every reader starts with, and the line splitter both
 * formats read through.  Not for use outside the readers.
 */
#ifndef IDEMLOAD_READER_IMPL_H
#define IDEMLOAD_READER_IMPL_H

#include "input/reader.h"

struct reader {
    read_result (*next)(reader *r, raw_record *out);
    void (*close)(reader *r);
    const char *path;
    buf err;
    bool checks_utf8;   /* the reader rejects invalid UTF-8 and NUL itself */
    bool header_names[COL_COUNT];   /* a CSV header's columns (else none) */
    uint64_t money_unchecked;       /* a bill's rows that left its stated money
                                       totals unchecked (reader_money_unchecked) */
    char window_zone[8];            /* the offset of a bill's own window, ""
                                       when none (reader_window_zone) */
    uint32_t covers_matched;        /* the profile's covers rules a header of the
                                       file matched (reader_covers_matched) */
    /* reader_stated_total; NULL: the format states no totals */
    bool (*stated_total)(const reader *r, size_t i, reader_total *out);
    /* reader_source_column, reader_source_value; NULL: no named source
     * columns (a channel bill's profile reader has them) */
    int (*source_column)(const reader *r, const char *name);
    const char *(*source_value)(const reader *r, int idx, size_t *len);
    bool (*scope_here)(const reader *r, bool report);  /* reader_scope_here */
};

/*
 * Hands out the input one physical line at a time, each with its line
 * break(s) still attached; a line break is LF, CRLF or, when lone_cr is
 * set, a lone CR.  Lines are handed out in pieces no longer than the window
 * when a line is longer.
 */
typedef struct line_feed {
    source *src;
    char *win;          /* read window */
    size_t win_len, win_pos;
    bool eof;
    bool failed;
    bool first;         /* nothing handed out yet (for the BOM) */
    size_t next_lf;     /* where the next LF in the window is (win_len: none),
                           SIZE_MAX when not looked for yet */
    bool pending_cr;    /* the last piece ended with a CR at the window end */
    bool lone_cr;       /* a CR not followed by LF ends a line (CSV, old Mac
                           files); NDJSON clears it, since there a lone CR is
                           JSON white space inside the line */
    uint64_t line;      /* 1-based line where the next piece starts */
} line_feed;

/* Starts with lone_cr set. */
bool line_feed_init(line_feed *lf, source *src);
void line_feed_free(line_feed *lf);

/*
 * Stores the next piece in *p and *n, and the line it starts on in *line: a
 * piece ends just after a line break, or at the end of the window or input.
 * The LF of a CRLF split across windows comes as a piece of its own that
 * does not start a new line.  A UTF-8 byte-order mark at the very start is
 * skipped.  Returns 1 with a piece, 0 at end of input, -1 on a source error
 * (source_error() says what).
 */
int line_feed_next(line_feed *lf, const char **p, size_t *n, uint64_t *line);

/* Sets r->err from a format string; returns READ_FAILED for convenience. */
read_result reader_fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
