/*
 * csv_reader.c - RFC 4180 CSV through libcsv, one record at a time.
 *
 * libcsv is a push parser that does not say where in the input a record
 * ends, yet a rejected row must keep its original text and the line it
 * started on.  So the input is fed to libcsv one physical line at a time
 * (line_feed): a record can only end at a line break, so when libcsv reports
 * the end of a record, the lines fed since the previous one are exactly its
 * text.  Quoted line breaks simply make a record span several lines.
 *
 * libcsv costs some 36 instructions a byte, most of the reader thread's
 * time (issue 31).  So a physical line that is a whole record by itself,
 * quoted fields and all, (split_line) is split here, without libcsv, into
 * exactly the fields libcsv would report; anything else goes to libcsv.
 */
#include "input/reader_impl.h"

#include "util/byte_scan.h"

#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct csv_reader {
    reader base;
    line_feed lf;
    struct csv_parser parser;
    bool parser_live;
    reader_options opt;
    int *map;               /* field index -> column, or -1 (ignored) */
    size_t header_fields;
    bool at_eof;
    bool fast;              /* split_line may be used (see csv_reader_open) */

    /* the record being assembled */
    buf raw;
    const char *line_raw;   /* split_line's record: its raw text is its line,
                               in the read window, not copied into raw */
    size_t line_raw_len;
    uint64_t rec_line;
    bool rec_open;
    bool rec_done;          /* libcsv has reported its end */
    bool rec_bad;           /* libcsv refused it (strict mode) */
    bool skip_to_eol;       /* after a parse error: swallow the rest of the line */
    buf values;             /* all field texts, back to back */
    const char **text;      /* a field's text, or NULL: at values + off */
    size_t *off;
    size_t *len;
    bool *null;
    size_t nfields, fields_cap;
    bool oom;
    bool too_many_fields;   /* over READER_MAX_FIELDS: the file stops */
    char msg[96];           /* reason text handed out with a record */
} csv_reader;

static int tab_is_not_space(unsigned char c)
{
    return c == ' ';
}

static bool start_parser(csv_reader *c)
{
    if (c->parser_live)
        csv_free(&c->parser);
    c->parser_live = false;
    if (csv_init(&c->parser, CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL) != 0)
        return false;
    c->parser_live = true;
    csv_set_delim(&c->parser, (unsigned char)c->opt.delimiter);
    /* libcsv's built-in test (space or tab) is inline; a callback per byte
     * costs 5% of a load, so one is set only when tab is the delimiter. */
    if (c->opt.delimiter == '\t')
        csv_set_space_func(&c->parser, tab_is_not_space);
    return true;
}

/*
 * Starts field number c->nfields at the end of c->values.  Returns false
 * when it is not to be kept: over READER_MAX_FIELDS (c->too_many_fields)
 * or out of memory (c->oom).
 */
static bool field_begin(csv_reader *c)
{
    if (c->nfields >= READER_MAX_FIELDS) {
        c->too_many_fields = true; /* nothing more kept: memory stays bounded */
        return false;
    }
    if (c->nfields == c->fields_cap) {
        size_t cap = c->fields_cap ? c->fields_cap * 2 : 16;
        const char **text = realloc(c->text, cap * sizeof *text);
        if (text)
            c->text = text;
        size_t *off = realloc(c->off, cap * sizeof *off);
        if (off)
            c->off = off;
        size_t *len = realloc(c->len, cap * sizeof *len);
        if (len)
            c->len = len;
        bool *null = realloc(c->null, cap * sizeof *null);
        if (null)
            c->null = null;
        if (!text || !off || !len || !null) {
            c->oom = true;
            return false;
        }
        c->fields_cap = cap;
    }
    c->off[c->nfields] = c->values.len;
    return true;
}

/*
 * Ends the field field_begin started: its text is the n bytes at text, or
 * (text NULL) what c->values gained, found by offset at the end since
 * c->values may still move.
 */
static void field_end(csv_reader *c, const char *text, size_t n, bool null)
{
    c->text[c->nfields] = text;
    c->len[c->nfields] = text ? n : c->values.len - c->off[c->nfields];
    c->null[c->nfields] = null;
    c->nfields++;
}

/* The text of field i of the record assembled (its length is c->len[i]). */
static const char *field_text(const csv_reader *c, size_t i)
{
    if (c->text[i])
        return c->text[i];
    return c->values.data ? c->values.data + c->off[i] : "";
}

static void on_field(void *s, size_t n, void *data)
{
    csv_reader *c = data;
    if (!field_begin(c))
        return;
    if (s && !buf_append(&c->values, s, n)) {
        c->oom = true;
        return;
    }
    field_end(c, NULL, 0, s == NULL);
}

static void on_record(int term, void *data)
{
    (void)term;
    csv_reader *c = data;
    c->rec_done = true;
}

static void reset_record(csv_reader *c)
{
    buf_clear(&c->raw);
    c->line_raw = NULL;
    buf_clear(&c->values);
    c->nfields = 0;
    c->rec_open = false;
    c->rec_done = false;
    c->rec_bad = false;
}

/* A blank as libcsv's space test sees it (start_parser): space or tab,
 * except the delimiter, which is tested first. */
static inline bool is_blank(char ch, char delim)
{
    /* The first test alone settles the usual byte, printable. */
    return (unsigned char)ch <= ' ' && (ch == ' ' || ch == '\t') && ch != delim;
}

/*
 * Is this piece one that libcsv, between records, skips without reporting
 * a record: line breaks and blanks (space, or tab unless it delimits)?
 * Such a piece must not open a record, or the next record would be given
 * this line's number and text.  (Blanks cut off by a read's or the
 * window's end before a record's first field are kept for its raw text by
 * keep_blanks; libcsv drops them from the field anyway.)
 */
static bool is_blank_piece(const char *p, size_t n, char delim)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != '\r' && p[i] != '\n' && !is_blank(p[i], delim))
            return false;
    return true;
}

/* Blanks at most kept before a record's first field (keep_blanks). */
#define CSV_MAX_LEAD_BLANKS 4096

/*
 * A blank piece, between records: when it ends its line, a blank line,
 * dropped with any blanks kept before it; when a read or the window cut it,
 * the start of the next record's line, kept as the start of its raw text
 * (a pipe that delivers " " and then "1,wechat,..." must leave the rejects
 * file the line as written).  Past CSV_MAX_LEAD_BLANKS, blanks are dropped:
 * memory stays bounded, and no field changes (they are trimmed).
 */
static void keep_blanks(csv_reader *c, const char *p, size_t n)
{
    if (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r'))
        buf_clear(&c->raw);
    else if (c->raw.len + n <= CSV_MAX_LEAD_BLANKS && !buf_append(&c->raw, p, n))
        buf_clear(&c->raw); /* out of memory: the blanks are not kept, nothing else lost */
}

/* The length of p[0..n) without the record's final line break. */
static size_t without_break(const char *p, size_t n)
{
    while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r'))
        n--;
    return n;
}

/*
 * The quoted field whose opening quote is at q[-1], up to end: its text,
 * doubled quotes made single, goes onto c->values (split_line has made
 * room: the text is never longer than the line, and byte_scan writes no
 * further ahead than it reads).  Returns just past the closing quote, or
 * NULL when the line is libcsv's: no closing quote (a quoted line break)
 * or a CR in the field.
 */
static const byte_set quote_or_cr = {'"', '\r', '\r', 0, false};

#ifdef BYTE_SCAN_SSE2
/*
 * take_quoted's work while 33 bytes or more are left, sixteen at a step: a
 * payload's text is cut by a doubled quote every few bytes, so the quotes
 * of a block are walked from its one mask, each doubled one costing a
 * reload and a store, not a new scan.  Each store of the sixteen bytes
 * from seg to o covers the rest of the block.  Returns as take_quoted
 * does, or with *q_io, *out_io moved on to where fewer bytes are left.
 */
static const char *take_quoted_sse2(const char **q_io, char **out_io, const char *end)
{
    const char *q = *q_io;
    char *o = *out_io;

    while (end - q >= 33) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
        unsigned m = byte_set_mask16(x, quote_or_cr);
        const char *seg = q;

        _mm_storeu_si128((__m128i *)(void *)o, x);
        while (m) {
            const char *h = q + __builtin_ctz(m);

            o += h - seg;
            if (*h == '\r')
                return NULL;
            if (h[1] != '"') {
                *out_io = o;
                return h + 1;
            }
            o++; /* a doubled quote: the first is stored, the second dropped */
            seg = h + 2;
            x = _mm_loadu_si128((const __m128i *)(const void *)seg);
            _mm_storeu_si128((__m128i *)(void *)o, x);
            m &= ~0u << (seg - q); /* seg - q <= 17: bits past 15 are 0 anyway */
        }
        const char *next = seg > q + 16 ? seg : q + 16;
        o += next - seg;
        q = next;
    }
    *q_io = q;
    *out_io = o;
    return end; /* not an answer: go on */
}
#endif

static const char *take_quoted(csv_reader *c, const char *q, const char *end)
{
    /* Kept in a local: a store through a char pointer could change
     * c->values as far as the compiler knows, costing reloads per byte. */
    char *out = c->values.data + c->values.len;

#ifdef BYTE_SCAN_SSE2
    const char *got = take_quoted_sse2(&q, &out, end);
    if (got != end) {
        if (got)
            c->values.len = (size_t)(out - c->values.data);
        return got;
    }
#endif
    for (;;) {
        size_t k = byte_scan(out, q, (size_t)(end - q), quote_or_cr);

        out += k;
        q += k;
        if (q == end || *q == '\r')
            return NULL;
        if (q + 1 < end && q[1] == '"') {
            *out++ = '"';
            q += 2;
            continue;
        }
        c->values.len = (size_t)(out - c->values.data);
        return q + 1;
    }
}

/*
 * The fast path: splits the physical line p[0..n) into fields as libcsv,
 * configured by start_parser, would, when the line is a whole record by
 * itself: it ends in LF or CRLF, holds no other CR, and every field is
 * either
 *   - unquoted: no quote in it; trimmed of blanks (is_blank), and NULL when
 *     that leaves it empty (CSV_EMPTY_IS_NULL), or
 *   - quoted: blanks, a quote, text in which a doubled quote stands for
 *     one, the closing quote, blanks; never NULL, even empty.
 * Anything else (a quoted line break, a quote inside an unquoted field,
 * text after a closing quote: the strict errors) is left to libcsv.  An
 * unquoted field's text stays where it is, in the line; a quoted one's is
 * copied, undoubled, onto c->values.  Every byte of the line is looked at
 * by a blank loop (which passes only blanks) or a byte_scan that stops at
 * a CR, so a CR anywhere sends the line to libcsv.  The caller has checked
 * that the line is not blank (is_blank_piece) and that no record is
 * pending.  Returns true with the fields delivered and c->rec_done set (or
 * c->oom or c->too_many_fields set); false, with no field kept, when
 * libcsv must parse the line.
 */
static bool split_line(csv_reader *c, const char *p, size_t n)
{
    if (n == 0 || p[n - 1] != '\n')
        return false; /* cut by the window end, or the input's end, or a lone CR */
    size_t m = n - 1;
    if (m > 0 && p[m - 1] == '\r')
        m--;
    /* The fields' texts together are never longer than the line. */
    if (!buf_reserve(&c->values, m)) {
        c->oom = true;
        return true;
    }
    const char delim = c->opt.delimiter;
    const byte_set plain_end = {(unsigned char)delim, '"', '\r', 0, false};
    const char *end = p + m;
    const char *s = p;
    for (;;) {
        const char *a = s;
        while (a < end && is_blank(*a, delim))
            a++;
        if (!field_begin(c))
            return true; /* (over READER_MAX_FIELDS needs a line wider than
                            the read window: libcsv's case, in fact) */
        if (a < end && *a == '"') {
            s = take_quoted(c, a + 1, end);
            if (!s)
                goto to_libcsv;
            while (s < end && is_blank(*s, delim))
                s++;
            field_end(c, c->values.data + c->off[c->nfields],
                      c->values.len - c->off[c->nfields], false);
            if (s == end)
                break;
            if (*s != delim)
                goto to_libcsv; /* text after the closing quote, or a CR */
            s++;
            continue;
        }
        const char *d = a + byte_scan(NULL, a, (size_t)(end - a), plain_end);
        if (d < end && *d != delim)
            goto to_libcsv; /* a quote inside an unquoted field, or a CR */
        const char *b = d;
        while (b > a && is_blank(b[-1], delim))
            b--;
        field_end(c, a, (size_t)(b - a), a == b);
        if (d == end)
            break;
        s = d + 1;
    }
    c->values.data[c->values.len] = '\0';
    c->rec_done = true;
    return true;
to_libcsv:
    c->nfields = 0;
    buf_clear(&c->values);
    return false;
}

/* Whether the fields so far were all kept; if not (out of memory, or over
 * READER_MAX_FIELDS), the file stops: returns false with the reason set. */
static bool fields_kept(csv_reader *c)
{
    if (c->oom)
        reader_fail(&c->base, "%s: out of memory", c->base.path);
    else if (c->too_many_fields)
        reader_fail(&c->base, "%s: line %llu: record of more than %zu fields", c->base.path,
                    (unsigned long long)c->rec_line, READER_MAX_FIELDS);
    return !c->oom && !c->too_many_fields;
}

/*
 * Reads until a whole record is assembled.  Returns READ_RECORD with
 * c->rec_done or c->rec_bad set, READ_EOF, or READ_FAILED.
 */
static read_result assemble(csv_reader *c)
{
    for (;;) {
        const char *p;
        size_t n;
        uint64_t line;
        int got = line_feed_next(&c->lf, &p, &n, &line);
        if (got < 0)
            return reader_fail(&c->base, "%s", source_error(c->lf.src));
        if (got == 0) {
            c->at_eof = true;
            if (!c->rec_open)
                return READ_EOF;
            if (c->rec_bad)
                return READ_RECORD;
            if (csv_fini(&c->parser, on_field, on_record, c) != 0) {
                c->rec_bad = true;
                start_parser(c);
                return READ_RECORD;
            }
            if (c->rec_done)
                return READ_RECORD;
            return READ_EOF;
        }
        bool opens = !c->rec_open;
        if (opens) {
            if (is_blank_piece(p, n, c->opt.delimiter)) {
                keep_blanks(c, p, n);
                continue;
            }
            c->rec_open = true;
            c->rec_line = line;
        }
        if (c->raw.len + n > READER_MAX_RECORD)
            return reader_fail(&c->base,
                               "%s: line %llu: record longer than %zu MiB (an unterminated quote?)",
                               c->base.path, (unsigned long long)c->rec_line,
                               READER_MAX_RECORD >> 20);
        /* A record split_line takes whole keeps its line where it is. */
        bool try_fast = opens && c->fast;
        if (try_fast && c->raw.len == 0 && split_line(c, p, n)) {
            c->line_raw = p;
            c->line_raw_len = n;
            return fields_kept(c) ? READ_RECORD : READ_FAILED;
        }
        if (!buf_append(&c->raw, p, n))
            return reader_fail(&c->base, "%s: out of memory", c->base.path);
        bool ends_line = n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r');
        if (c->rec_bad) {
            /* Swallow the rest of the faulty physical line into its text. */
            if (ends_line)
                return READ_RECORD;
            continue;
        }
        /* Blanks kept before the line (keep_blanks) start its raw text. */
        if (try_fast && c->raw.len > n && split_line(c, p, n))
            return fields_kept(c) ? READ_RECORD : READ_FAILED;
        /* libcsv grows its field buffer by a fixed block (128 bytes unless
         * told otherwise): a megabyte field would cost thousands of
         * reallocs, each copying the field so far.  Growing by the size it
         * already has makes that geometric. */
        size_t have = csv_get_buffer_size(&c->parser);
        csv_set_blk_size(&c->parser, have > 4096 ? have : 4096);
        size_t used = csv_parse(&c->parser, p, n, on_field, on_record, c);
        if (!fields_kept(c))
            return READ_FAILED;
        if (used < n) {
            c->rec_bad = true;
            if (!start_parser(c))
                return reader_fail(&c->base, "%s: out of memory", c->base.path);
            if (ends_line)
                return READ_RECORD;
            continue;
        }
        if (c->rec_done)
            return READ_RECORD;
    }
}

static bool read_header(csv_reader *c, buf *err)
{
    read_result rr = assemble(c);
    if (rr == READ_FAILED) {
        buf_append_str(err, reader_error(&c->base));
        return false;
    }
    if (rr == READ_EOF) {
        /* Not even a header: a failed download or export more often than
         * a statement with no rows (which still names its columns). */
        buf_printf(err, "%s: the file is empty: no header row naming its columns (a CSV "
                   "statement with no rows still has one)", c->base.path);
        return false;
    }
    if (c->rec_bad) {
        buf_printf(err, "%s: line %llu: the header row is not valid CSV", c->base.path,
                   (unsigned long long)c->rec_line);
        return false;
    }
    c->header_fields = c->nfields;
    c->map = malloc((c->nfields ? c->nfields : 1) * sizeof *c->map);
    if (!c->map) {
        buf_printf(err, "%s: out of memory", c->base.path);
        return false;
    }
    bool seen[COL_COUNT] = {false};
    for (size_t i = 0; i < c->nfields; i++) {
        const char *name = field_text(c, i);
        size_t len = c->len[i];
        while (len > 0 && (*name == ' ' || *name == '\t')) {
            name++;
            len--;
        }
        while (len > 0 && (name[len - 1] == ' ' || name[len - 1] == '\t'))
            len--;
        int col = column_lookup(name, len);
        c->map[i] = col;
        if (col < 0)
            continue;
        if (seen[col]) {
            buf_printf(err, "%s: the header names column %s twice", c->base.path,
                       column_name((column)col));
            return false;
        }
        seen[col] = true;
        c->base.header_names[col] = true;
    }
    for (int col = 0; col < COL_COUNT; col++) {
        if (!seen[col] && column_required((column)col) && !c->opt.preset[col]) {
            buf_printf(err, "%s: the header has no %s column (it has %zu columns); "
                       "add it to the file or supply it with --set %s=VALUE",
                       c->base.path, column_name((column)col), c->nfields,
                       column_name((column)col));
            return false;
        }
    }
    reset_record(c);
    return true;
}

static read_result csv_next(reader *r, raw_record *out)
{
    csv_reader *c = (csv_reader *)r;
    if (c->at_eof)
        return READ_EOF;
    reset_record(c);
    read_result rr = assemble(c);
    if (rr != READ_RECORD)
        return rr;
    memset(out, 0, sizeof *out);
    out->line = c->rec_line;
    if (c->line_raw) {
        out->raw = c->line_raw;
        out->raw_len = without_break(c->line_raw, c->line_raw_len);
    } else {
        c->raw.len = without_break(c->raw.data, c->raw.len);
        if (c->raw.data)
            c->raw.data[c->raw.len] = '\0';
        out->raw = buf_cstr(&c->raw);
        out->raw_len = c->raw.len;
    }
    if (c->rec_bad) {
        out->error = "malformed CSV: a quote inside an unquoted field, text after a "
                     "closing quote, or an unterminated quote";
        return READ_RECORD;
    }
    if (c->nfields != c->header_fields) {
        snprintf(c->msg, sizeof c->msg, "expected %zu fields as in the header, found %zu",
                 c->header_fields, c->nfields);
        out->error = c->msg;
        return READ_RECORD;
    }
    for (size_t i = 0; i < c->nfields; i++) {
        int col = c->map[i];
        if (col < 0)
            continue;
        field *f = &out->fields[col];
        f->kind = c->null[i] ? FIELD_NULL : FIELD_TEXT;
        f->text = field_text(c, i);
        f->len = c->len[i];
    }
    return READ_RECORD;
}

static void csv_close(reader *r)
{
    csv_reader *c = (csv_reader *)r;
    if (c->parser_live)
        csv_free(&c->parser);
    line_feed_free(&c->lf);
    buf_free(&c->raw);
    buf_free(&c->values);
    free(c->text);
    free(c->off);
    free(c->len);
    free(c->null);
    free(c->map);
    free(c);
}

reader *csv_reader_open(source *src, const char *path, const reader_options *opt, buf *err)
{
    csv_reader *c = calloc(1, sizeof *c);
    if (!c) {
        buf_printf(err, "%s: out of memory", path);
        return NULL;
    }
    c->base.next = csv_next;
    c->base.close = csv_close;
    c->base.path = path;
    c->opt = *opt;
    /* IDEMLOAD_CSV_FASTPATH=0 sends every line through libcsv: for the
     * differential fuzz target (fuzz_csv_fastpath.c), the tests, and to
     * measure the fast path against libcsv.  A delimiter that is a quote
     * or a line break (the options refuse them) has no fast path. */
    const char *fp = getenv("IDEMLOAD_CSV_FASTPATH");
    c->fast = !(fp && strcmp(fp, "0") == 0) && opt->delimiter != '"' &&
              opt->delimiter != '\r' && opt->delimiter != '\n';
    reader *r = &c->base;
    if (!line_feed_init(&c->lf, src) || !start_parser(c)) {
        buf_printf(err, "%s: out of memory", path);
        reader_close(&r);
        return NULL;
    }
    if (!read_header(c, err)) {
        reader_close(&r);
        return NULL;
    }
    return r;
}
