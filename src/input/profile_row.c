/*
 * profile_row.c - a data row built into a record by the profile's column
 * rules, for the profile reader (profile_reader_parts.h): each column's
 * text (its map's result, its template, or its first non-empty source
 * column), received_at with its offset, callback_type renamed by --kind, a
 * refund keyed by its payment, tenant_id from the row's merchant, and the
 * payload of every column by its header name.
 */
#include "input/profile_reader_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/tenant_map.h"
#include "rules/timestamp.h"
#include "rules/timezone.h"
#include "util/star_match.h"

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
        if (strchr(m, '*') && star_match(m, v, n) && (best < 0 || k > best_len)) {
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
            !pr_json_escape(&pr->out, pr->vals.data + pr->voff[i], pr->vlen[i]))
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
row_outcome pr_build_row(profile_reader *pr, raw_record *out)
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
    if (!(pr->values_only ? buf_append_str(&pr->out, "{}") : append_payload(pr)))
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
