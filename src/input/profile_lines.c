/*
 * profile_lines.c - a bill's lines and fields, for the profile reader
 * (profile_reader_parts.h): a physical line read whole, converted to UTF-8
 * (GBK through iconv) or checked as UTF-8, split into fields (a quote only
 * counts at the start of a field) and cleaned as the profile says; and a
 * value written as a JSON string.
 */
#include "input/profile_reader_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/utf8.h"
#include "rules/validate.h"

bool pr_starts_with(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

size_t pr_break_len(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && (s[n - 1 - k] == '\n' || s[n - 1 - k] == '\r'))
        k++;
    return k;
}

bool pr_is_type(const char *rt, size_t rn, const char *name)
{
    return name && rn == strlen(name) && memcmp(rt, name, rn) == 0;
}

/*
 * Reads one physical line (all its pieces) into pr->raw, appending.
 * Returns 1, 0 at the end of input, -1 on a source fault (reader failed).
 */
int pr_read_line(profile_reader *pr, uint64_t *line)
{
    bool first = true;
    for (;;) {
        const char *p;
        size_t n;
        uint64_t ln;
        int got = line_feed_next(&pr->lf, &p, &n, &ln);
        if (got < 0) {
            reader_fail(&pr->base, "%s", source_error(pr->lf.src));
            return -1;
        }
        if (got == 0)
            return first ? 0 : 1;
        if (first)
            *line = ln;
        first = false;
        if (pr->raw.len + n > READER_MAX_RECORD) {
            reader_fail(&pr->base, "%s: line %llu: record longer than %zu MiB (an unterminated "
                                   "quote?)", pr->base.path, (unsigned long long)*line,
                        READER_MAX_RECORD >> 20);
            return -1;
        }
        if (!buf_append(&pr->raw, p, n)) {
            reader_fail(&pr->base, "%s: out of memory", pr->base.path);
            return -1;
        }
        if (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r'))
            return 1;
    }
}

/*
 * Converts raw[from..] to UTF-8 onto pr->text.  Returns 1, 0 when the bytes
 * are not valid in the file's encoding (pr->msg says where), -1 out of memory.
 */
int pr_to_text(profile_reader *pr, size_t from)
{
    const char *s = pr->raw.data + from;
    size_t n = pr->raw.len - from;
    size_t at = pr->text.len;
    if (pr->tc) {
        size_t bad;
        int r = transcoder_run(pr->tc, s, n, &pr->text, &bad);
        if (r <= 0) {
            if (r == 0)
                snprintf(pr->msg, sizeof pr->msg,
                         "a byte sequence invalid in GBK at byte %zu of the record",
                         from + bad + 1);
            return r;
        }
        if (memchr(pr->text.data + at, '\0', pr->text.len - at)) {
            snprintf(pr->msg, sizeof pr->msg, "NUL byte in the record");
            return 0;
        }
        return 1;
    }
    size_t bad;
    bool is_nul;
    if (!utf8_check(s, n, &bad, &is_nul)) {
        snprintf(pr->msg, sizeof pr->msg, "%s at byte %zu of the record",
                 is_nul ? "NUL byte" : "invalid UTF-8", from + bad + 1);
        return 0;
    }
    return buf_append(&pr->text, s, n) ? 1 : -1;
}

static bool add_value(profile_reader *pr, size_t off, size_t len)
{
    if (pr->nvals >= READER_MAX_FIELDS) {
        /* Refused like a record over READER_MAX_RECORD (out_of_memory
         * keeps this message). */
        reader_fail(&pr->base, "%s: line %llu: record of more than %zu fields", pr->base.path,
                    (unsigned long long)pr->rec_line, READER_MAX_FIELDS);
        pr->too_many_fields = true;
        return false;
    }
    if (pr->nvals == pr->vcap) {
        size_t cap = pr->vcap ? pr->vcap * 2 : 32;
        size_t *o = realloc(pr->voff, cap * sizeof *o);
        if (!o)
            return false;
        pr->voff = o;
        size_t *l = realloc(pr->vlen, cap * sizeof *l);
        if (!l)
            return false;
        pr->vlen = l;
        pr->vcap = cap;
    }
    pr->voff[pr->nvals] = off;
    pr->vlen[pr->nvals] = len;
    pr->nvals++;
    return true;
}

/*
 * Splits s[0..n) into pr->vals.  A field that starts with a quote is quoted
 * ("" inside is one quote) up to its closing quote; anything after that up
 * to the delimiter is kept as written.  Returns 1, 0 when s ends inside a
 * quoted field (the record goes on on the next line), -1 out of memory.
 */
int pr_split_fields(profile_reader *pr, const char *s, size_t n)
{
    char d = pr->pf->delimiter;
    buf_clear(&pr->vals);
    pr->nvals = 0;
    if (!buf_reserve(&pr->vals, n))
        return -1;
    size_t i = 0;
    for (;;) {
        size_t start = pr->vals.len;
        if (i < n && s[i] == '"') {
            i++;
            for (;;) {
                if (i >= n)
                    return 0;
                if (s[i] == '"') {
                    if (i + 1 < n && s[i + 1] == '"') {
                        pr->vals.data[pr->vals.len++] = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                pr->vals.data[pr->vals.len++] = s[i++];
            }
        }
        const char *q = i < n ? memchr(s + i, d, n - i) : NULL;
        size_t e = q ? (size_t)(q - s) : n;
        memcpy(pr->vals.data + pr->vals.len, s + i, e - i);
        pr->vals.len += e - i;
        if (!add_value(pr, start, pr->vals.len - start))
            return -1;
        if (!q)
            break;
        i = e + 1;
    }
    pr->vals.data[pr->vals.len] = '\0';
    return 1;
}

/* The profile's cleanup of value i, in place (offset and length). */
void pr_clean_value(profile_reader *pr, size_t i)
{
    const profile *pf = pr->pf;
    const char *p = pr->vals.data + pr->voff[i];
    size_t n = pr->vlen[i];
    if (pf->trim)
        trim_white_space(&p, &n);
    if (pf->strip_prefix && pr_starts_with(p, n, pf->strip_prefix)) {
        size_t k = strlen(pf->strip_prefix);
        p += k;
        n -= k;
    }
    if (pf->strip_suffix) {
        size_t k = strlen(pf->strip_suffix);
        if (n >= k && memcmp(p + n - k, pf->strip_suffix, k) == 0)
            n -= k;
    }
    if (pf->trim)
        trim_white_space(&p, &n);
    pr->voff[i] = (size_t)(p - pr->vals.data);
    pr->vlen[i] = n;
}

bool pr_json_escape(buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (!buf_reserve(b, n + 2) || !buf_append_char(b, '"'))
        return false;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (!buf_append(b, s + run, i - run))
            return false;
        char e[7] = {'\\', 0, 0, 0, 0, 0, 0};
        size_t k = 2;
        switch (c) {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\n': e[1] = 'n'; break;
        case '\r': e[1] = 'r'; break;
        case '\t': e[1] = 't'; break;
        case '\b': e[1] = 'b'; break;
        case '\f': e[1] = 'f'; break;
        default:
            e[1] = 'u';
            e[2] = '0';
            e[3] = '0';
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            k = 6;
        }
        if (!buf_append(b, e, k))
            return false;
        run = i + 1;
    }
    return buf_append(b, s + run, n - run) && buf_append_char(b, '"');
}
