/*
 * ndjson_reader.c - one JSON object per line, members by name.
 *
 * The line is validated and split by json_scan (which accepts every number
 * jsonb accepts and keeps each value's exact text); only strings holding
 * backslash escapes are decoded, through jansson, which does that well.
 * A payload member keeps its exact JSON text.
 */
#include "input/reader_impl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/json_scan.h"
#include "rules/utf8.h"

typedef struct ndjson_reader {
    reader base;
    line_feed lf;
    reader_options opt;
    bool at_eof;
    buf line;               /* the current line */
    buf decoded;            /* decoded escaped strings of the current line */
    size_t dec_off[COL_COUNT];
    bool dec_used[COL_COUNT];
    raw_record *out;
    const char *reason;     /* why the current line is rejected */
    char msg[160];
} ndjson_reader;

static bool is_blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
            return false;
    return true;
}

/* Decodes a JSON string (quotes included) that holds escapes, appending the
 * text to n->decoded.  The scanner has validated it already, so jansson can
 * only fail on memory. */
static bool decode_string(ndjson_reader *n, const char *json, size_t len, size_t *off, size_t *out_len)
{
    json_error_t jerr;
    json_t *v = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!v || !json_is_string(v)) {
        json_decref(v);
        return false;
    }
    *off = n->decoded.len;
    *out_len = json_string_length(v);
    bool ok = buf_append(&n->decoded, json_string_value(v), *out_len);
    json_decref(v);
    return ok;
}

static bool on_member(void *ctx, const json_member *m)
{
    ndjson_reader *n = ctx;
    const char *key = m->key;
    size_t key_len = m->key_len;
    size_t key_off = 0;
    if (m->key_escaped) {
        /* Rare: an escaped member name.  Decode it to compare. */
        size_t save = n->decoded.len;
        if (!decode_string(n, key - 1, key_len + 2, &key_off, &key_len)) {
            n->reason = "cannot decode a member name";
            return false;
        }
        int col = column_lookup(n->decoded.data + key_off, key_len);
        n->decoded.len = save;
        if (col < 0)
            return true;
        key = column_name((column)col);
        key_len = strlen(key);
    }
    int col = column_lookup(key, key_len);
    if (col < 0)
        return true;    /* extra members are ignored */
    field *f = &n->out->fields[col];
    if (f->kind != FIELD_ABSENT) {
        snprintf(n->msg, sizeof n->msg, "member %s appears twice", column_name((column)col));
        n->reason = n->msg;
        return false;
    }
    f->jkind = m->kind;
    switch (m->kind) {
    case JSON_KIND_NULL:
        f->kind = FIELD_NULL;
        break;
    case JSON_KIND_STRING:
        f->kind = FIELD_TEXT;
        f->json = m->value;
        f->json_len = m->value_len;
        if (m->value_escaped) {
            size_t off, len;
            if (!decode_string(n, m->value, m->value_len, &off, &len)) {
                n->reason = "cannot decode a string";
                return false;
            }
            n->dec_off[col] = off;
            n->dec_used[col] = true;
            f->len = len;
        } else {
            f->text = m->value + 1;
            f->len = m->value_len - 2;
        }
        break;
    default:
        f->kind = FIELD_JSON;
        f->text = m->value;
        f->len = m->value_len;
        f->json = m->value;
        f->json_len = m->value_len;
        break;
    }
    return true;
}

/*
 * Reads the next line that is not blank into n->line, without its line
 * break, and its first line number into *start_line.  Returns READ_RECORD,
 * READ_EOF (n->at_eof set) or READ_FAILED.
 */
static read_result read_line(ndjson_reader *n, uint64_t *start_line)
{
    reader *r = &n->base;
    buf_clear(&n->line);
    bool open = false;
    for (;;) {
        const char *p;
        size_t len;
        uint64_t line;
        int got = line_feed_next(&n->lf, &p, &len, &line);
        if (got < 0)
            return reader_fail(r, "%s", source_error(n->lf.src));
        if (got == 0) {
            n->at_eof = true;
            if (!open || is_blank(n->line.data, n->line.len))
                return READ_EOF;
            break;
        }
        if (!open) {
            open = true;
            *start_line = line;
        }
        if (n->line.len + len > READER_MAX_RECORD)
            return reader_fail(r, "%s: line %llu: longer than %zu MiB", r->path,
                               (unsigned long long)*start_line, READER_MAX_RECORD >> 20);
        if (!buf_append(&n->line, p, len))
            return reader_fail(r, "%s: out of memory", r->path);
        /* Only LF ends a line (see ndjson_reader_open); a piece can also
         * end with a CR, at the window's end. */
        if (len > 0 && p[len - 1] == '\n') {
            if (is_blank(n->line.data, n->line.len)) {
                buf_clear(&n->line);
                open = false;
                continue;
            }
            break;
        }
    }
    /* The raw text goes without its line break, LF or CRLF. */
    if (n->line.len > 0 && n->line.data[n->line.len - 1] == '\n')
        n->line.data[--n->line.len] = '\0';
    if (n->line.len > 0 && n->line.data[n->line.len - 1] == '\r')
        n->line.data[--n->line.len] = '\0';
    return READ_RECORD;
}

/* Splits n->line into out's fields, or sets out->error with the reason the
 * line is rejected. */
static void split_line(ndjson_reader *n, raw_record *out)
{
    size_t bad;
    bool is_nul;
    if (!utf8_check(n->line.data, n->line.len, &bad, &is_nul)) {
        snprintf(n->msg, sizeof n->msg, is_nul ? "NUL byte at byte %zu of the line"
                                               : "invalid UTF-8 at byte %zu of the line",
                 bad + 1);
        out->error = n->msg;
        return;
    }
    buf_clear(&n->decoded);
    memset(n->dec_used, 0, sizeof n->dec_used);
    n->out = out;
    n->reason = NULL;
    json_error jerr;
    if (!json_scan_object(n->line.data, n->line.len, on_member, n, &jerr)) {
        if (!n->reason) {
            snprintf(n->msg, sizeof n->msg, "not a valid JSON object: %s at byte %zu",
                     jerr.reason, jerr.offset + 1);
            n->reason = n->msg;
        }
        memset(out->fields, 0, sizeof out->fields);
        out->error = n->reason;
        return;
    }
    /* The decoded buffer is complete now; point into it. */
    for (int col = 0; col < COL_COUNT; col++)
        if (n->dec_used[col])
            out->fields[col].text = n->decoded.data + n->dec_off[col];
}

static read_result ndjson_next(reader *r, raw_record *out)
{
    ndjson_reader *n = (ndjson_reader *)r;
    if (n->at_eof)
        return READ_EOF;
    uint64_t start_line = 0;
    read_result rr = read_line(n, &start_line);
    if (rr != READ_RECORD)
        return rr;
    memset(out, 0, sizeof *out);
    out->line = start_line;
    out->raw = n->line.data;
    out->raw_len = n->line.len;
    split_line(n, out);
    return READ_RECORD;
}

static void ndjson_close(reader *r)
{
    ndjson_reader *n = (ndjson_reader *)r;
    line_feed_free(&n->lf);
    buf_free(&n->line);
    buf_free(&n->decoded);
    free(n);
}

reader *ndjson_reader_open(source *src, const char *path, const reader_options *opt, buf *err)
{
    ndjson_reader *n = calloc(1, sizeof *n);
    if (!n) {
        buf_printf(err, "%s: out of memory", path);
        return NULL;
    }
    n->base.next = ndjson_next;
    n->base.close = ndjson_close;
    n->base.checks_utf8 = true;
    n->base.path = path;
    n->opt = *opt;
    if (!line_feed_init(&n->lf, src)) {
        reader *r = &n->base;
        buf_printf(err, "%s: out of memory", path);
        reader_close(&r);
        return NULL;
    }
    /* NDJSON lines end with LF (or CRLF); a lone CR is white space. */
    n->lf.lone_cr = false;
    return &n->base;
}
