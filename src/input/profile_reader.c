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
 */
#include "input/reader_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/key_links.h"
#include "input/profile.h"
#include "input/transcode.h"
#include "rules/timestamp.h"
#include "rules/timezone.h"
#include "rules/utf8.h"
#include "rules/dec_total.h"
#include "input/tenant_map.h"
#include "rules/validate.h"
#include "util/name_set.h"

/* One piece of a compiled template: literal text, or a source column. */
typedef struct seg {
    char *lit;          /* owned; NULL for a column */
    size_t len;
    const char *name;   /* the column's name (points into the profile) */
    size_t name_len;
    int col;            /* header index, -1 when the header lacks it */
} seg;

typedef struct tmpl {
    seg *seg;
    size_t n, cap;      /* cap grows geometrically: linear in the segments */
} tmpl;

typedef struct rule_rt {
    const column_rule *r;
    int *from_idx;      /* per r->from: header index or -1 */
    int *with_idx;      /* per r->with: header index or -1 */
    tmpl value;
    tmpl fallback;
    tmpl **map;         /* per r->map: per result alternative */
} rule_rt;

/* A money total the bill states (profile.h, money_total) as it is read. */
typedef struct total_rt {
    int row_idx;        /* the rows' column it adds up; -1: not in the header */
    int summary_idx;    /* its summary column; -1: the summary lacks it */
    bool stated;
    dect stated_v;
    char stated_text[DECT_TEXT_MAX];
    dect sum;
} total_rt;

typedef enum pr_state { ST_ROWS, ST_SUMMARY_DATA, ST_AFTER_SUMMARY } pr_state;

typedef struct profile_reader {
    reader base;
    line_feed lf;
    const profile *pf;
    transcoder *tc;
    bool preset[COL_COUNT];
    bool at_eof;
    pr_state state;

    /* header */
    bool have_header;
    size_t ncols;
    buf hdr;                /* cleaned names, each followed by a NUL */
    size_t *hoff, *hlen;
    name_index hindex;      /* the header's names -> their index */
    buf hjson;              /* "name": for every column, back to back */
    size_t *hjoff, *hjlen;
    rule_rt rt[COL_COUNT];
    int count_idx;          /* summary column holding the count */

    /* the row count */
    uint64_t data_rows;
    uint64_t stated;
    bool have_count;

    /* money totals, merchants, footers (profile.h) */
    total_rt *tot;          /* per pf->totals */
    char totals_bad[256];   /* a row's amount that is not one: the first */
    uint64_t unsummed;      /* data rows unreadable or of the wrong width */
    int *merchant_idx;      /* per pf->merchant_from */
    key_links *links;       /* NULL: refunds keep their own key */
    int refund_of_idx;      /* pf->refund_of's header index; -1: none */
    char row_kind[64];      /* the row's kind (before --kind), "" when none */
    uint64_t section_base;  /* data_rows when the section started */
    bool section_here, saw_report_start, saw_file_start, saw_footer;
    /* a section, report or file opened whose count footer has not come */
    bool section_open, report_open, file_open;
    buf scratch;

    /* the record being read */
    buf raw;                /* original bytes of its lines */
    buf text;               /* the same in UTF-8 */
    buf lossy;              /* an unreadable record in UTF-8, its bad bytes
                               as U+FFFD (a reject's raw text) */
    uint64_t rec_line;
    buf vals;               /* split field values */
    size_t *voff, *vlen;
    size_t nvals, vcap;
    buf out;                /* built texts handed out */
    char msg[256];
    bool too_many_fields;   /* a record over READER_MAX_FIELDS: the file failed */
    char offset_text[8];    /* the fixed offset as "+HH:MM" */
    bool row_split;         /* the record handed out has the header's fields,
                               cleaned (reader_source_value) */
    bool framing_rows;      /* reader_options.framing_rows */
} profile_reader;

/* --- templates -------------------------------------------------------- */

/* Through the header's hash index (built by header_names_unique): linear
 * in the references, whatever the header's width. */
static int header_index(const profile_reader *pr, const char *name, size_t len)
{
    return (int)name_index_find(&pr->hindex, name, len);
}

static void tmpl_free(tmpl *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->seg[i].lit);
    free(t->seg);
    t->seg = NULL;
    t->n = t->cap = 0;
}

static bool tmpl_add(tmpl *t, seg s)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4;
        seg *n = realloc(t->seg, cap * sizeof *n);
        if (!n) {
            free(s.lit);
            return false;
        }
        t->seg = n;
        t->cap = cap;
    }
    t->seg[t->n++] = s;
    return true;
}

/* Compiles template text s (checked by the profile parser) against the
 * current header. */
static bool tmpl_compile(profile_reader *pr, const char *s, tmpl *t)
{
    tmpl_free(t);
    buf lit = BUF_INIT;
    bool ok = true;
    for (const char *p = s; *p && ok;) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            ok = buf_append_char(&lit, p[0]);
            p += 2;
            continue;
        }
        if (*p != '{') {
            ok = buf_append_char(&lit, *p++);
            continue;
        }
        const char *end = strchr(p, '}');
        if (lit.len) {
            seg sg = {.lit = malloc(lit.len + 1), .len = lit.len, .col = -1};
            ok = sg.lit && (memcpy(sg.lit, lit.data, lit.len), tmpl_add(t, sg));
            buf_clear(&lit);
        }
        seg sg = {.name = p + 1, .name_len = (size_t)(end - p - 1)};
        sg.col = header_index(pr, sg.name, sg.name_len);
        ok = ok && tmpl_add(t, sg);
        p = end + 1;
    }
    if (ok && lit.len) {
        seg sg = {.lit = malloc(lit.len + 1), .len = lit.len, .col = -1};
        ok = sg.lit && (memcpy(sg.lit, lit.data, lit.len), tmpl_add(t, sg));
    }
    buf_free(&lit);
    return ok;
}

static void rules_free(profile_reader *pr)
{
    for (int c = 0; c < COL_COUNT; c++) {
        rule_rt *rt = &pr->rt[c];
        free(rt->from_idx);
        rt->from_idx = NULL;
        free(rt->with_idx);
        rt->with_idx = NULL;
        tmpl_free(&rt->value);
        tmpl_free(&rt->fallback);
        if (rt->map && rt->r)
            for (size_t i = 0; i < rt->r->n_map; i++) {
                for (size_t k = 0; rt->map[i] && k < rt->r->map[i].n_result; k++)
                    tmpl_free(&rt->map[i][k]);
                free(rt->map[i]);
            }
        free(rt->map);
        rt->map = NULL;
    }
}

/* --- lines and fields --------------------------------------------------- */

static bool starts_with(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

static size_t break_len(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && (s[n - 1 - k] == '\n' || s[n - 1 - k] == '\r'))
        k++;
    return k;
}

/*
 * Reads one physical line (all its pieces) into pr->raw, appending.
 * Returns 1, 0 at the end of input, -1 on a source fault (reader failed).
 */
static int read_line(profile_reader *pr, uint64_t *line)
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
static int to_text(profile_reader *pr, size_t from)
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
static int split_fields(profile_reader *pr, const char *s, size_t n)
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
static void clean_value(profile_reader *pr, size_t i)
{
    const profile *pf = pr->pf;
    const char *p = pr->vals.data + pr->voff[i];
    size_t n = pr->vlen[i];
    if (pf->trim)
        trim_white_space(&p, &n);
    if (pf->strip_prefix && starts_with(p, n, pf->strip_prefix)) {
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

/* --- JSON text ----------------------------------------------------------- */

static bool json_escape(buf *b, const char *s, size_t n)
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

/* --- header --------------------------------------------------------------- */

static void header_list(const profile_reader *pr, buf *b)
{
    for (size_t i = 0; i < pr->ncols && i < 60; i++)
        buf_printf(b, "%s%s", i ? ", " : "", pr->hdr.data + pr->hoff[i]);
    if (pr->ncols > 60)
        buf_printf(b, ", ... (%zu columns)", pr->ncols);
    if (pr->ncols == 0)
        buf_append_str(b, "(nothing)");
}

/* What the profile expects of a header, for messages. */
static void expected_list(const profile *pf, const bool *preset, buf *b)
{
    bool first = true;
    for (int c = 0; c < COL_COUNT; c++) {
        const column_rule *r = &pf->col[c];
        if (!r->set || preset[c] || r->n_from == 0 || r->fallback) /* optional with a default */
            continue;
        buf_printf(b, "%s", first ? "" : ", ");
        first = false;
        for (size_t i = 0; i < r->n_from; i++)
            buf_printf(b, "%s%s", i ? " or " : "", r->from[i]);
        for (size_t i = 0; i < r->n_with; i++)
            buf_printf(b, "%s%s", i ? " or " : ", ", r->with[i]);
    }
}

/* The header's names (cleaned) into pr->hdr, and each as a JSON member
 * name into pr->hjson; false out of memory. */
static bool store_header_names(profile_reader *pr)
{
    buf_clear(&pr->hdr);
    buf_clear(&pr->hjson);
    free(pr->hoff);
    free(pr->hlen);
    free(pr->hjoff);
    free(pr->hjlen);
    size_t n = pr->nvals ? pr->nvals : 1;
    pr->hoff = malloc(n * sizeof *pr->hoff);
    pr->hlen = malloc(n * sizeof *pr->hlen);
    pr->hjoff = malloc(n * sizeof *pr->hjoff);
    pr->hjlen = malloc(n * sizeof *pr->hjlen);
    pr->ncols = 0;
    if (!pr->hoff || !pr->hlen || !pr->hjoff || !pr->hjlen)
        return false;
    for (size_t i = 0; i < pr->nvals; i++) {
        clean_value(pr, i);
        const char *name = pr->vals.data + pr->voff[i];
        size_t len = pr->vlen[i];
        pr->hoff[i] = pr->hdr.len;
        pr->hlen[i] = len;
        if (!buf_append(&pr->hdr, name, len) || !buf_append_char(&pr->hdr, '\0'))
            return false;
        pr->hjoff[i] = pr->hjson.len;
        if (!json_escape(&pr->hjson, name, len) || !buf_append_char(&pr->hjson, ':'))
            return false;
        pr->hjlen[i] = pr->hjson.len - pr->hjoff[i];
    }
    pr->ncols = pr->nvals;
    return true;
}

/* Fails the reader when the header names a column twice. */
static bool header_names_unique(profile_reader *pr)
{
    size_t i;
    bool repeat;
    if (!name_index_build(&pr->hindex, pr->hdr.data, pr->hoff, pr->hlen, pr->ncols, &repeat,
                          &i)) {
        reader_fail(&pr->base, "%s: out of memory", pr->base.path);
        return false;
    }
    if (repeat) {
        reader_fail(&pr->base, "%s: line %llu: the header names column \"%s\" twice",
                    pr->base.path, (unsigned long long)pr->rec_line, pr->hdr.data + pr->hoff[i]);
        return false;
    }
    return true;
}

/*
 * Compiles column c's rule against the header: the indexes of its source
 * columns and its templates.  Names the header lacks go onto *missing (the
 * source columns only when none of them is there).  False out of memory.
 */
static bool compile_rule(profile_reader *pr, int c, buf *missing)
{
    const column_rule *r = &pr->pf->col[c];
    rule_rt *rt = &pr->rt[c];
    rt->r = r;
    if (!r->set || pr->preset[c])
        return true;
    if (r->n_from) {
        rt->from_idx = malloc(r->n_from * sizeof *rt->from_idx);
        if (!rt->from_idx)
            return false;
        bool any = false;
        for (size_t i = 0; i < r->n_from; i++) {
            rt->from_idx[i] = header_index(pr, r->from[i], strlen(r->from[i]));
            any = any || rt->from_idx[i] >= 0;
        }
        if (!any && !r->fallback)
            for (size_t i = 0; i < r->n_from; i++)
                buf_printf(missing, "%s%s", missing->len ? (i ? " or " : ", ") : "",
                           r->from[i]);
    }
    if (r->n_with) {
        rt->with_idx = malloc(r->n_with * sizeof *rt->with_idx);
        if (!rt->with_idx)
            return false;
        bool any = false;
        for (size_t i = 0; i < r->n_with; i++) {
            rt->with_idx[i] = header_index(pr, r->with[i], strlen(r->with[i]));
            any = any || rt->with_idx[i] >= 0;
        }
        if (!any)
            for (size_t i = 0; i < r->n_with; i++)
                buf_printf(missing, "%s%s", missing->len ? (i ? " or " : ", ") : "",
                           r->with[i]);
    }
    if (r->fallback && !tmpl_compile(pr, r->fallback, &rt->fallback))
        return false;
    if (r->value) {
        if (!tmpl_compile(pr, r->value, &rt->value))
            return false;
        for (size_t i = 0; i < rt->value.n; i++)
            if (rt->value.seg[i].lit == NULL && rt->value.seg[i].col < 0)
                buf_printf(missing, "%s%.*s", missing->len ? ", " : "",
                           (int)rt->value.seg[i].name_len, rt->value.seg[i].name);
    }
    if (r->n_map) {
        rt->map = calloc(r->n_map, sizeof *rt->map);
        if (!rt->map)
            return false;
        for (size_t i = 0; i < r->n_map; i++) {
            rt->map[i] = calloc(r->map[i].n_result, sizeof *rt->map[i]);
            if (!rt->map[i])
                return false;
            for (size_t k = 0; k < r->map[i].n_result; k++)
                if (!tmpl_compile(pr, r->map[i].result[k], &rt->map[i][k]))
                    return false;
        }
    }
    return true;
}

/* Fails the reader with what the header lacks, what the profile expects and
 * what the file has. */
static void header_mismatch(profile_reader *pr, const buf *missing)
{
    buf exp = BUF_INIT, found = BUF_INIT;
    expected_list(pr->pf, pr->preset, &exp);
    header_list(pr, &found);
    /* Not reader_fail: its 512 bytes would cut the lists. */
    buf_clear(&pr->base.err);
    buf_printf(&pr->base.err, "%s: line %llu: the header does not match profile %s "
                              "(missing: %s); the profile expects the columns %s; the file "
                              "has: %s", pr->base.path, (unsigned long long)pr->rec_line,
               pr->pf->name, buf_cstr(missing), buf_cstr(&exp), buf_cstr(&found));
    /* The WeChat sandbox's (or a spreadsheet's) TAB-separated table. */
    if (pr->ncols == 1 && pr->pf->delimiter != '\t' && strchr(pr->hdr.data, '\t'))
        buf_printf(&pr->base.err, " (separated by TABs, not '%c': a table saved by a "
                                  "spreadsheet or a sandbox's export, not a bill as the channel "
                                  "publishes it; --delimiter tab reads it anyway)",
                   pr->pf->delimiter);
    buf_free(&exp);
    buf_free(&found);
}

/* Takes the split values as the header; false with the reader failed. */
static bool take_header(profile_reader *pr)
{
    rules_free(pr);
    if (!store_header_names(pr)) {
        reader_fail(&pr->base, "%s: out of memory", pr->base.path);
        return false;
    }
    if (!header_names_unique(pr))
        return false;
    buf missing = BUF_INIT;
    bool ok = true;
    for (int c = 0; c < COL_COUNT && ok; c++)
        ok = compile_rule(pr, c, &missing);
    if (!ok)
        reader_fail(&pr->base, "%s: out of memory", pr->base.path);
    else if (missing.len) {
        header_mismatch(pr, &missing);
        ok = false;
    }
    buf_free(&missing);
    if (ok)
        pr->have_header = true;
    pr->refund_of_idx = pr->pf->refund_of
                            ? header_index(pr, pr->pf->refund_of, strlen(pr->pf->refund_of))
                            : -1;
    return ok;
}

/* --- a data row ------------------------------------------------------------- */

/* The first non-empty value among the rule's source columns (NULL when
 * none has one). */
static const char *first_value(const profile_reader *pr, const int *idx, size_t n_idx,
                               size_t *n, int *col)
{
    for (size_t i = 0; i < n_idx; i++) {
        int k = idx[i];
        if (k >= 0 && pr->vlen[k] > 0) {
            *n = pr->vlen[k];
            if (col)
                *col = k;
            return pr->vals.data + pr->voff[k];
        }
    }
    *n = 0;
    if (col)
        *col = -1;
    return NULL;
}

/* Whether '*' patterns match: '*' stands for any run of characters. */
static bool glob_match(const char *pat, const char *v, size_t n)
{
    if (*pat == '\0')
        return n == 0;
    if (*pat == '*') {
        for (size_t k = 0; k <= n; k++)
            if (glob_match(pat + 1, v + k, n - k))
                return true;
        return false;
    }
    return n > 0 && *pat == *v && glob_match(pat + 1, v + 1, n - 1);
}

/* Appends template t expanded for this row to pr->out; false with pr->msg
 * set when a column it names is absent or empty. */
static bool expand(profile_reader *pr, const tmpl *t, column c, bool *oom)
{
    for (size_t i = 0; i < t->n; i++) {
        const seg *s = &t->seg[i];
        if (s->lit) {
            if (!buf_append(&pr->out, s->lit, s->len))
                return !(*oom = true);
            continue;
        }
        if (s->col < 0 || pr->vlen[s->col] == 0) {
            snprintf(pr->msg, sizeof pr->msg, "%s: the column %.*s %s", column_name(c),
                     (int)s->name_len, s->name,
                     s->col < 0 ? "is not in this file's header" : "is empty");
            return false;
        }
        if (!buf_append(&pr->out, pr->vals.data + pr->voff[s->col], pr->vlen[s->col]))
            return !(*oom = true);
    }
    return true;
}

/* The map entry for v: an exact match, else the matching pattern with the
 * most characters; -1 when none matches. */
static int map_lookup(const rule_rt *rt, const char *v, size_t n)
{
    const column_rule *r = rt->r;
    int best = -1;
    size_t best_len = 0;
    for (size_t i = 0; i < r->n_map; i++) {
        const char *m = r->map[i].match;
        size_t k = strlen(m);
        if (k == n && memcmp(m, v, n) == 0)
            return (int)i;
        if (strchr(m, '*') && glob_match(m, v, n) && (best < 0 || k > best_len)) {
            best = (int)i;
            best_len = k;
        }
    }
    return best;
}

/* Whether every column template t names holds a value in this row. */
static bool expandable(const profile_reader *pr, const tmpl *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (!t->seg[i].lit && (t->seg[i].col < 0 || pr->vlen[t->seg[i].col] == 0))
            return false;
    return true;
}

typedef enum row_outcome { ROW_OK, ROW_REJECT, ROW_SKIP, ROW_OOM } row_outcome;

/*
 * Appends received_at's offset to its text when it has none: 'Z' for a
 * column the profile declares UTC, else the profile's zone (--timezone).
 * When the result is not a timestamp, the text is left as written (the
 * slashes of 2024/08/20 too), so that validation's reason quotes the cell.
 */
static bool add_offset(profile_reader *pr, size_t start, bool utc)
{
    char *t = pr->out.data + start;
    size_t n = pr->out.len - start;
    bool slashes = n >= 10 && t[4] == '/' && t[7] == '/';
    if (slashes)
        t[4] = t[7] = '-';
    bool has_offset = false;
    for (size_t i = 10; i < n && !has_offset; i++)
        has_offset = t[i] == '+' || t[i] == '-' || t[i] == 'Z' || t[i] == 'z';
    const tz_zone *z = &pr->pf->tz;
    int64_t us;
    const char *why;
    if (has_offset || (!utc && !pr->pf->timezone)) {
        /* nothing to add (validation says when there is no offset) */
    } else if (utc) {
        if (!buf_append_char(&pr->out, 'Z'))
            return false;
    } else if (z->fixed) {
        if (!buf_append_str(&pr->out, pr->offset_text))
            return false;
    } else {
        /* An IANA zone: the wall-clock time read as UTC gives the local second. */
        if (!buf_append_char(&pr->out, 'Z'))
            return false;
        if (ts_parse(pr->out.data + start, n + 1, &us, &why)) {
            int64_t local_s = us / 1000000 - (us % 1000000 < 0);
            char off[8];
            tz_format_offset(tz_offset_at_local(z, local_s), off);
            pr->out.len--;
            if (!buf_append_str(&pr->out, off))
                return false;
        }
    }
    t = pr->out.data + start;
    if (!ts_parse(t, pr->out.len - start, &us, &why)) {
        pr->out.len = start + n;
        pr->out.data[pr->out.len] = '\0';
        if (slashes)
            t[4] = t[7] = '/';
    }
    return true;
}

/* Whether header column k is one the profile declares UTC. */
static bool is_utc_column(const profile_reader *pr, int k)
{
    for (size_t i = 0; k >= 0 && i < pr->pf->n_utc_columns; i++)
        if (pr->hlen[k] == strlen(pr->pf->utc_columns[i]) &&
            memcmp(pr->hdr.data + pr->hoff[k], pr->pf->utc_columns[i], pr->hlen[k]) == 0)
            return true;
    return false;
}

/*
 * Appends column c's text for this row to pr->out: its map's result, its
 * template, or its first non-empty source column as written (with the
 * profile's offset for received_at).  ROW_OK with *have false when every
 * source column is empty; ROW_SKIP, ROW_REJECT (pr->msg says why) or
 * ROW_OOM otherwise.
 */
static row_outcome column_text(profile_reader *pr, column c, bool *have)
{
    const rule_rt *rt = &pr->rt[c];
    const column_rule *r = rt->r;
    size_t start = pr->out.len;
    bool oom = false;
    int src_col = -1;
    *have = false;
    size_t fn = 0;
    const char *fv = r->n_from ? first_value(pr, rt->from_idx, r->n_from, &fn, &src_col) : NULL;
    if (r->fallback && !fv) {
        if (!expand(pr, &rt->fallback, c, &oom))
            return oom ? ROW_OOM : ROW_REJECT;
    } else if (r->n_map) {
        /* The looked-up value: "<from>" or "<from>/<with>". */
        buf *key = &pr->scratch;
        buf_clear(key);
        size_t wn = 0;
        const char *wv = r->n_with ? first_value(pr, rt->with_idx, r->n_with, &wn, NULL) : NULL;
        if (!buf_append(key, fv ? fv : "", fn) ||
            (r->n_with && (!buf_append_char(key, '/') || !buf_append(key, wv ? wv : "", wn))))
            return ROW_OOM;
        int e = map_lookup(rt, key->data ? key->data : "", key->len);
        if (e < 0) {
            if (r->unmapped == UNMAPPED_SKIP)
                return ROW_SKIP;
            const char *name = src_col >= 0 ? pr->hdr.data + pr->hoff[src_col] : r->from[0];
            snprintf(pr->msg, sizeof pr->msg,
                     "%s: %s \"%.*s\" is not a value profile %s maps", column_name(c), name,
                     (int)(key->len > 60 ? 60 : key->len), key->data ? key->data : "",
                     pr->pf->name);
            return ROW_REJECT;
        }
        /* The first alternative whose columns hold values; else the first,
         * whose expansion says what is missing. */
        const map_entry *me = &r->map[e];
        size_t alt = 0;
        for (size_t k = 0; k < me->n_result; k++)
            if (expandable(pr, &rt->map[e][k])) {
                alt = k;
                break;
            }
        if (!expand(pr, &rt->map[e][alt], c, &oom))
            return oom ? ROW_OOM : ROW_REJECT;
    } else if (r->value) {
        if (!expand(pr, &rt->value, c, &oom))
            return oom ? ROW_OOM : ROW_REJECT;
    } else {
        if (!fv)
            return ROW_OK; /* FIELD_NULL: validation names the column */
        if (!buf_append(&pr->out, fv, fn))
            return ROW_OOM;
    }
    if (c == COL_RECEIVED_AT && !add_offset(pr, start, is_utc_column(pr, src_col)))
        return ROW_OOM;
    *have = true;
    return ROW_OK;
}

/* Appends the payload to pr->out: a JSON object of every column by its
 * header name; false out of memory. */
static bool append_payload(profile_reader *pr)
{
    if (!buf_append_char(&pr->out, '{'))
        return false;
    /* A row type's column (PayPal's CH/SB) is framing, not the row's. */
    size_t first = pr->pf->row_type_header ? 1 : 0;
    for (size_t i = first; i < pr->ncols; i++) {
        if ((i > first && !buf_append_char(&pr->out, ',')) ||
            !buf_append(&pr->out, pr->hjson.data + pr->hjoff[i], pr->hjlen[i]) ||
            !json_escape(&pr->out, pr->vals.data + pr->voff[i], pr->vlen[i]))
            return false;
    }
    return buf_append_char(&pr->out, '}');
}

/* The callback_type just appended at pr->out[start..]: its kind (the part
 * before ':') noted for the money totals, then renamed by --kind.  False
 * out of memory. */
static bool rename_kind(profile_reader *pr, size_t start)
{
    const char *t = pr->out.data + start;
    size_t n = pr->out.len - start;
    const char *colon = memchr(t, ':', n);
    size_t kn = colon ? (size_t)(colon - t) : n;
    snprintf(pr->row_kind, sizeof pr->row_kind, "%.*s", (int)kn, t);
    const profile *pf = pr->pf;
    for (size_t i = 0; i < pf->n_renames; i++) {
        if (strlen(pf->renames[i].from) != kn || memcmp(pf->renames[i].from, t, kn) != 0)
            continue;
        buf *rest = &pr->scratch;
        buf_clear(rest);
        if (!buf_append(rest, t + kn, n - kn))
            return false;
        pr->out.len = start;
        return buf_append_str(&pr->out, pf->renames[i].to) &&
               buf_append(&pr->out, rest->data ? rest->data : "", rest->len);
    }
    return true;
}

/* The key just built at pr->out[*off..+*len] recorded under a payment
 * row's refund_of id; a refund row's replaced by its payment's key when
 * that payment was read (by this file or an earlier one of the command).
 * False out of memory. */
static bool link_refund(profile_reader *pr, size_t *off, size_t *len)
{
    int k = pr->refund_of_idx;
    if (!pr->links || k < 0 || pr->vlen[k] == 0)
        return true;
    const char *id = pr->vals.data + pr->voff[k];
    size_t idn = pr->vlen[k];
    if (strcmp(pr->row_kind, "pay") == 0)
        return key_links_put(pr->links, id, idn, pr->out.data + *off, *len);
    if (strcmp(pr->row_kind, "refund") != 0)
        return true;
    size_t kn;
    const char *key = key_links_get(pr->links, id, idn, &kn);
    if (!key)
        return true;
    *off = pr->out.len;
    *len = kn;
    return buf_append(&pr->out, key, kn);
}

/* The row's tenant from its merchant through --tenant-map: *tenant points
 * into the map; ROW_REJECT (pr->msg names the merchant) when the row has
 * none or the map lacks it. */
static row_outcome merchant_tenant(profile_reader *pr, const char **tenant)
{
    const profile *pf = pr->pf;
    for (size_t i = 0; i < pf->n_merchant_from; i++) {
        int k = pr->merchant_idx[i];
        if (k < 0 || pr->vlen[k] == 0)
            continue;
        const char *v = pr->vals.data + pr->voff[k];
        size_t n = pr->vlen[k];
        bool none = false;
        for (size_t j = 0; j < pf->n_merchant_none && !none; j++)
            none = strlen(pf->merchant_none[j]) == n && memcmp(pf->merchant_none[j], v, n) == 0;
        if (none)
            continue;
        *tenant = tenant_map_get(pf->tenants, v, n);
        if (*tenant)
            return ROW_OK;
        snprintf(pr->msg, sizeof pr->msg, "tenant_id: merchant %.*s (%s) is not in the tenant "
                 "map %s", (int)(n > 64 ? 64 : n), v, pf->merchant_from[i], pf->tenant_map_path);
        return ROW_REJECT;
    }
    buf b = BUF_INIT;
    for (size_t i = 0; i < pf->n_merchant_from; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", pf->merchant_from[i]);
    snprintf(pr->msg, sizeof pr->msg, "tenant_id: the row names no merchant (%s)", buf_cstr(&b));
    buf_free(&b);
    return ROW_REJECT;
}

/* Fills the record's fields from the split, cleaned values. */
static row_outcome build_row(profile_reader *pr, raw_record *out)
{
    size_t off[COL_COUNT], len[COL_COUNT];
    bool have[COL_COUNT] = {false};
    buf_clear(&pr->out);
    /* callback_type first: a row its map skips is skipped whatever else it
     * lacks (a Stripe payout has no order number); then the others in the
     * column table's order. */
    for (int k = -1; k < COL_COUNT; k++) {
        column c = k < 0 ? COL_CALLBACK_TYPE : (column)k;
        const rule_rt *rt = &pr->rt[c];
        if ((k >= 0 && c == COL_CALLBACK_TYPE) || c == COL_PAYLOAD || !rt->r || !rt->r->set ||
            pr->preset[c])
            continue;
        off[c] = pr->out.len;
        row_outcome o = column_text(pr, c, &have[c]);
        if (o != ROW_OK)
            return o;
        if (c == COL_CALLBACK_TYPE && have[c] && !rename_kind(pr, off[c]))
            return ROW_OOM;
        len[c] = pr->out.len - off[c];
    }
    if (have[COL_OUT_TRADE_NO] && !pr->preset[COL_OUT_TRADE_NO] &&
        !link_refund(pr, &off[COL_OUT_TRADE_NO], &len[COL_OUT_TRADE_NO]))
        return ROW_OOM;
    const char *tenant = NULL;
    if (pr->pf->tenants && !pr->preset[COL_TENANT_ID]) {
        row_outcome o = merchant_tenant(pr, &tenant);
        if (o != ROW_OK)
            return o;
    }
    size_t pstart = pr->out.len;
    if (!append_payload(pr))
        return ROW_OOM;
    /* Only now: appending may have moved the text. */
    const char *base = buf_cstr(&pr->out);
    for (int c = 0; c < COL_COUNT; c++) {
        const column_rule *r = &pr->pf->col[c];
        if (c == COL_PAYLOAD || !r->set || pr->preset[c])
            continue;
        field *f = &out->fields[c];
        if (!have[c]) {
            f->kind = FIELD_NULL;
            continue;
        }
        f->kind = FIELD_TEXT;
        f->text = base + off[c];
        f->len = len[c];
    }
    if (tenant) {
        field *tf = &out->fields[COL_TENANT_ID];
        tf->kind = FIELD_TEXT;
        tf->text = tenant;
        tf->len = strlen(tenant);
    }
    field *pf = &out->fields[COL_PAYLOAD];
    pf->kind = FIELD_JSON;
    pf->jkind = JSON_KIND_OBJECT;
    pf->text = pf->json = base + pstart;
    pf->len = pf->json_len = pr->out.len - pstart;
    return ROW_OK;
}

/* --- the line loop -------------------------------------------------------- */

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

/* reader_stated_total: the i-th total the bill stated, once every row
 * was summed and the totals checked (at_end). */
static bool pr_stated_total(const reader *r, size_t i, reader_total *out)
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
static read_result at_end(profile_reader *pr)
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

/*
 * What advance's steps make of the current line: not decided yet (the next
 * step looks at it), taken (framing, a count, the header: read the next
 * line), or stop (advance returns the read_result the step set).
 */
typedef enum line_step { LINE_UNDECIDED, LINE_TAKEN, LINE_STOP, LINE_FRAMING } line_step;

static line_step stop(read_result *rr, read_result r)
{
    *rr = r;
    return LINE_STOP;
}

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
    out->raw_len = pr->raw.len - break_len(pr->raw.data, pr->raw.len);
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
    size_t n = pr->raw.len - break_len(pr->raw.data, pr->raw.len);
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
    expected_list(pf, pr->preset, &exp);
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
        framing = framing || starts_with(pr->raw.data, pr->raw.len, pf->skip_prefix[i]);
    for (size_t i = 0; i < pf->n_count_lines; i++)
        if (starts_with(pr->raw.data, pr->raw.len, pf->count_lines[i]))
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
    int got = read_line(pr, line);
    if (got < 0)
        return stop(rr, READ_FAILED);
    if (got == 0)
        return stop(rr, want_header ? READ_EOF : at_end(pr));
    pr->rec_line = *line;
    int conv = to_text(pr, 0);
    if (conv < 0)
        return stop(rr, out_of_memory(pr));
    if (conv == 0)
        return unreadable_line(pr, out, *line, rr);
    return LINE_UNDECIDED;
}

/* A framing line stating total i ("#交易合计：2笔，商家实收共99.00元"): the
 * amount after its label (and a colon), if the line has the label.  False
 * with the reader failed when what follows the label is not an amount. */
static bool line_total(profile_reader *pr, size_t i, const char *t, size_t n, uint64_t line)
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
        if (pf->totals[i].line && starts_with(t, tn, pf->totals[i].line) &&
            !line_total(pr, i, t, tn - break_len(t, tn), line))
            return stop(rr, READ_FAILED);
    bool counted = false;
    for (size_t i = 0; i < pf->n_count_lines; i++) {
        size_t k = strlen(pf->count_lines[i]);
        if (!starts_with(t, tn, pf->count_lines[i]))
            continue;
        uint64_t v;
        if (!count_after(t, tn - break_len(t, tn), k, &v))
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
        framing = starts_with(t, tn, pf->skip_prefix[i]);
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
        size_t body = pr->text.len - break_len(pr->text.data, pr->text.len);
        int sp = split_fields(pr, pr->text.data, body);
        if (sp < 0)
            return stop(rr, out_of_memory(pr));
        if (sp == 1)
            return LINE_UNDECIDED;
        size_t before = pr->raw.len;
        uint64_t more_line;
        int got = read_line(pr, &more_line);
        if (got < 0)
            return stop(rr, READ_FAILED);
        if (got == 0) {
            /* An unterminated quote at the end: the rest as one field. */
            pr->text.len = body;
            if (!buf_append_char(&pr->text, '"'))
                return stop(rr, out_of_memory(pr));
            continue;
        }
        int conv = to_text(pr, before);
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

/* The summary's data line: takes the row count from its count column. */
static line_step take_summary_count(profile_reader *pr, uint64_t line, read_result *rr)
{
    pr->state = ST_AFTER_SUMMARY;
    for (size_t t = 0; t < pr->pf->n_totals; t++) {
        total_rt *tr = &pr->tot[t];
        if (tr->summary_idx < 0 || (size_t)tr->summary_idx >= pr->nvals)
            continue;
        clean_value(pr, (size_t)tr->summary_idx);
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
    clean_value(pr, (size_t)pr->count_idx);
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
        clean_value(pr, i);
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
static line_step summary_line(profile_reader *pr, uint64_t line, read_result *rr)
{
    const profile *pf = pr->pf;
    if (pr->state == ST_SUMMARY_DATA)
        return take_summary_count(pr, line, rr);
    /* Reading on may have moved the text: look at it only now. */
    if (pf->end_prefix && pr->have_header &&
        starts_with(pr->text.data, pr->text.len, pf->end_prefix))
        return start_summary(pr, line, rr);
    return LINE_UNDECIDED;
}

/* The first covers rule whose columns the header has: noted, so that
 * reconcile knows which kinds the file lists. */
static void note_covers(profile_reader *pr)
{
    const profile *pf = pr->pf;
    for (size_t i = 0; i < pf->n_covers; i++) {
        const cover_rule *c = &pf->covers[i];
        bool all = true;
        for (size_t k = 0; k < c->n_header_has && all; k++)
            all = header_index(pr, c->header_has[k], strlen(c->header_has[k])) >= 0;
        if (all) {
            pr->base.covers_matched |= (uint32_t)1 << i;
            return;
        }
    }
}

/* Takes the split line as the header; with want_header, advance stops
 * there. */
static line_step header_taken(profile_reader *pr, bool want_header, read_result *rr)
{
    if (!take_header(pr))
        return stop(rr, READ_FAILED);
    const profile *pf = pr->pf;
    for (size_t i = 0; i < pf->n_totals; i++) {
        const money_total *t = &pf->totals[i];
        pr->tot[i].row_idx = t->sum ? header_index(pr, t->sum, strlen(t->sum)) : -1;
        if (pr->tot[i].row_idx < 0 && t->sum_alt)
            pr->tot[i].row_idx = header_index(pr, t->sum_alt, strlen(t->sum_alt));
    }
    for (size_t i = 0; i < pf->n_merchant_from; i++)
        pr->merchant_idx[i] = header_index(pr, pf->merchant_from[i],
                                           strlen(pf->merchant_from[i]));
    note_covers(pr);
    if (want_header)
        return stop(rr, READ_RECORD);
    return LINE_TAKEN;
}

static bool is_type(const char *rt, size_t rn, const char *name)
{
    return name && rn == strlen(name) && memcmp(rt, name, rn) == 0;
}

/* A framing row type (rt[0..rn)) of a profile with footer counts: notes
 * where a section, the report and the file start; checks a footer's count
 * against the data rows it covers.  False (*rr set) on a mismatch. */
static bool footer_row(profile_reader *pr, const char *rt, size_t rn, read_result *rr)
{
    const profile *pf = pr->pf;
    if (is_type(rt, rn, pf->section_start)) {
        pr->section_here = true;
        pr->section_open = true;
        pr->section_base = pr->data_rows;
    }
    if (is_type(rt, rn, pf->report_start))
        pr->saw_report_start = pr->report_open = true;
    if (is_type(rt, rn, pf->file_start))
        pr->saw_file_start = pr->file_open = true;
    for (size_t i = 0; i < pf->n_footers; i++) {
        const footer_count *fc = &pf->footers[i];
        if (!is_type(rt, rn, fc->row_type))
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
            clean_value(pr, 1);
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
static void zone_row(profile_reader *pr)
{
    if (pr->base.window_zone[0] || pr->nvals < 2)
        return;
    clean_value(pr, 1);
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

/* The header (the first line, or the row type's header line), a row type
 * that is not data (framing), or else a data row (undecided; taken while
 * only the header is wanted). */
static line_step header_line(profile_reader *pr, bool want_header, read_result *rr)
{
    const profile *pf = pr->pf;
    if (pf->row_type_header) {
        clean_value(pr, 0);
        const char *rt = pr->vals.data + pr->voff[0];
        size_t rn = pr->vlen[0];
        bool is_header = rn == strlen(pf->row_type_header) &&
                         memcmp(rt, pf->row_type_header, rn) == 0;
        if (is_header) {
            /* Back to the raw split: take_header cleans every name. */
            if (split_fields(pr, pr->text.data,
                             pr->text.len - break_len(pr->text.data, pr->text.len)) < 0)
                return stop(rr, out_of_memory(pr));
            return header_taken(pr, want_header, rr);
        }
        bool data = false;
        for (size_t i = 0; i < pf->n_row_type_data && !data; i++)
            data = rn == strlen(pf->row_type_data[i]) &&
                   memcmp(rt, pf->row_type_data[i], rn) == 0;
        if (!data && pf->n_footers && !footer_row(pr, rt, rn, rr))
            return LINE_STOP;
        if (!data && is_type(rt, rn, pf->zone_row))
            zone_row(pr);
        if (!data && pr->framing_rows && pr->have_header && !want_header)
            return LINE_FRAMING; /* handed out, skipped (reader_options) */
        if (!data || !pr->have_header)
            return LINE_TAKEN; /* framing: RH, FH, SH, SF, ... */
    } else if (!pr->have_header) {
        return header_taken(pr, want_header, rr);
    }
    return want_header ? LINE_TAKEN : LINE_UNDECIDED;
}

/* Adds the row's amounts to the totals of its kind; a cell that is not an
 * amount is noted (the totals cannot be checked). */
static void add_to_totals(profile_reader *pr, uint64_t line)
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

/* A data row: its fields checked against the header, cleaned, built. */
static read_result data_row(profile_reader *pr, raw_record *out, uint64_t line)
{
    pr->data_rows++;
    pr->row_split = false;
    memset(out, 0, sizeof *out);
    out->line = line;
    out->raw = pr->text.data;
    out->raw_len = pr->text.len - break_len(pr->text.data, pr->text.len);
    keep_original(pr, out);
    if (pr->nvals != pr->ncols) {
        snprintf(pr->msg, sizeof pr->msg, "expected %zu fields as in the header, found %zu",
                 pr->ncols, pr->nvals);
        pr->unsummed++;
        out->error = pr->msg;
        return READ_RECORD;
    }
    for (size_t i = 0; i < pr->nvals; i++)
        clean_value(pr, i);
    pr->row_split = true;
    pr->row_kind[0] = '\0';
    row_outcome ro = build_row(pr, out);
    add_to_totals(pr, line);
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
            st = summary_line(pr, line, &rr);
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
            out->raw_len = pr->text.len - break_len(pr->text.data, pr->text.len);
            out->skipped = true;
            for (size_t i = 0; i < pr->nvals; i++)
                clean_value(pr, i);
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
    return pr->have_header ? header_index(pr, name, strlen(name)) : -1;
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
    rules_free(pr);
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
        expected_list(pr->pf, pr->preset, &exp);
        buf_printf(err, "%s: no header found for profile %s (it expects the columns %s)", path,
                   pr->pf->name, buf_cstr(&exp));
        buf_free(&exp);
        reader_close(&r);
        return NULL;
    }
    return r;
}
