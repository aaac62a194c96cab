/*
 * outcome.c - the per-row outcome arrays of a chunk (see outcome.h).
 */
#include "load/outcome.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

bool chunk_outcome_reserve(chunk_outcome *o, size_t n)
{
    if (n == 0)
        return true;
    if (n > o->cap) {
        size_t cap = n < 1024 ? 1024 : n;
        uint8_t *a = realloc(o->action, cap);
        if (!a)
            return false;
        o->action = a;
        if (o->details) {
            bool *h = realloc(o->has_before, cap * sizeof *h);
            if (h)
                o->has_before = h;
            row_version *b = h ? realloc(o->before, cap * sizeof *b) : NULL;
            if (b)
                o->before = b;
            row_version *f = b ? realloc(o->after, cap * sizeof *f) : NULL;
            if (!f)
                return false;
            o->after = f;
        }
        o->cap = cap;
    }
    memset(o->action, MERGE_NONE, n);
    if (o->details)
        memset(o->has_before, 0, n * sizeof *o->has_before);
    return true;
}

void chunk_outcome_free(chunk_outcome *o)
{
    free(o->action);
    free(o->has_before);
    free(o->before);
    free(o->after);
    memset(o, 0, sizeof *o);
}

void outcome_fill(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi, merge_action a)
{
    for (size_t i = lo; i <= hi; i++)
        o->action[idx[i]] = (uint8_t)a;
}

/* The chunk row of a staged ord, or SIZE_MAX when ord is not in [lo+1, hi+1]. */
static size_t row_of(const uint32_t *idx, size_t lo, size_t hi, long long ord)
{
    if (ord < (long long)lo + 1 || ord > (long long)hi + 1)
        return SIZE_MAX;
    return idx[ord - 1];
}

bool outcome_apply_ords(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi,
                        const char *ords, merge_action pos, merge_action neg)
{
    if (!ords || !*ords)
        return true;
    const char *p = ords;
    if (*p++ != '{')
        return false;
    while (*p && *p != '}') {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            return false;
        size_t at = row_of(idx, lo, hi, v < 0 ? -v : v);
        if (at == SIZE_MAX)
            return false;
        o->action[at] = (uint8_t)(v < 0 ? neg : pos);
        p = end;
        if (*p == ',')
            p++;
    }
    return *p == '}';
}

static void version_from(row_version *v, const db_result *r, int k, int status_col, int ts_col)
{
    v->status = (int16_t)db_int(r, k, status_col);
    snprintf(v->received_at, sizeof v->received_at, "%s", db_value(r, k, ts_col));
}

bool outcome_apply_detail(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi,
                          const db_result *r, buf *missed, load_counts *c)
{
    buf_clear(missed);
    for (int k = 0; k < db_nrows(r); k++) {
        long long ord = (long long)db_int(r, k, 0);
        size_t at = row_of(idx, lo, hi, ord);
        if (at == SIZE_MAX)
            return false;
        int64_t verdict = db_int(r, k, 1);
        merge_action a;
        if (verdict == 1) {
            a = MERGE_STALE;
        } else if (db_is_null(r, k, 2)) {
            /* Sent, not written: stale or unchanged, SQL_STALE_DETAIL says. */
            buf_printf(missed, "%s%lld", missed->len ? "," : "{", ord);
            o->action[at] = MERGE_UNCHANGED;
            continue;
        } else {
            a = strcmp(db_value(r, k, 2), "t") == 0 ? MERGE_INSERTED : MERGE_UPDATED;
        }
        o->action[at] = (uint8_t)a;
        load_counts_count(c, a);
        /* An inserted row had no active version, whatever the probe saw
         * before a concurrent delete. */
        o->has_before[at] = a != MERGE_INSERTED && !db_is_null(r, k, 3);
        if (o->has_before[at])
            version_from(&o->before[at], r, k, 3, 4);
        version_from(&o->after[at], r, k, 5, 6);
    }
    if (missed->len)
        buf_append_char(missed, '}');
    return true;
}

bool outcome_apply_stale_detail(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi,
                                const db_result *r, load_counts *c)
{
    for (int k = 0; k < db_nrows(r); k++) {
        size_t at = row_of(idx, lo, hi, (long long)db_int(r, k, 0));
        if (at == SIZE_MAX)
            return false;
        o->action[at] = MERGE_STALE;
        c->stale++;
        o->has_before[at] = true;
        version_from(&o->before[at], r, k, 1, 2);
        version_from(&o->after[at], r, k, 3, 4);
    }
    return true;
}

bool outcome_apply_inserted(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi,
                            const db_result *r, load_counts *c)
{
    outcome_fill(o, idx, lo, hi, MERGE_EXISTING);
    for (int k = 0; k < db_nrows(r); k++) {
        size_t at = row_of(idx, lo, hi, (long long)db_int(r, k, 0));
        if (at == SIZE_MAX)
            return false;
        o->action[at] = MERGE_INSERTED;
        o->has_before[at] = false;
        version_from(&o->after[at], r, k, 1, 2);
    }
    c->inserted += (uint64_t)db_nrows(r);
    c->existing += (hi - lo + 1) - (uint64_t)db_nrows(r);
    return true;
}
