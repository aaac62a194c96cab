/*
 * profile_header.c - a bill's header, for the profile reader
 * (profile_reader_parts.h): its names, cleaned and indexed, each also as a
 * JSON member name for the payload; and the profile's column rules compiled
 * against it (source columns to header indexes, templates to pieces).  A
 * header that lacks what the rules name is refused with what the profile
 * expects and what the file has.
 */
#include "input/profile_reader_parts.h"

#include <stdlib.h>
#include <string.h>

/* Through the header's hash index (built by header_names_unique): linear
 * in the references, whatever the header's width. */
int pr_header_index(const profile_reader *pr, const char *name, size_t len)
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
        sg.col = pr_header_index(pr, sg.name, sg.name_len);
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

void pr_rules_free(profile_reader *pr)
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
void pr_expected_list(const profile *pf, const bool *preset, buf *b)
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
        pr_clean_value(pr, i);
        const char *name = pr->vals.data + pr->voff[i];
        size_t len = pr->vlen[i];
        pr->hoff[i] = pr->hdr.len;
        pr->hlen[i] = len;
        if (!buf_append(&pr->hdr, name, len) || !buf_append_char(&pr->hdr, '\0'))
            return false;
        pr->hjoff[i] = pr->hjson.len;
        if (!pr_json_escape(&pr->hjson, name, len) || !buf_append_char(&pr->hjson, ':'))
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
            rt->from_idx[i] = pr_header_index(pr, r->from[i], strlen(r->from[i]));
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
            rt->with_idx[i] = pr_header_index(pr, r->with[i], strlen(r->with[i]));
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
    pr_expected_list(pr->pf, pr->preset, &exp);
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
bool pr_take_header(profile_reader *pr)
{
    pr_rules_free(pr);
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
                            ? pr_header_index(pr, pr->pf->refund_of, strlen(pr->pf->refund_of))
                            : -1;
    return ok;
}

/* The first covers rule whose columns the header has: noted, so that
 * reconcile knows which kinds the file lists. */
void pr_note_covers(profile_reader *pr)
{
    const profile *pf = pr->pf;
    for (size_t i = 0; i < pf->n_covers; i++) {
        const cover_rule *c = &pf->covers[i];
        bool all = true;
        for (size_t k = 0; k < c->n_header_has && all; k++)
            all = pr_header_index(pr, c->header_has[k], strlen(c->header_has[k])) >= 0;
        if (all) {
            pr->base.covers_matched |= (uint32_t)1 << i;
            return;
        }
    }
}
