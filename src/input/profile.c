/*
 * profile.c - the profile model (see profile.h): freeing a profile, and
 * what the rest of idemload asks of one (does the bill state figures of
 * its own, which money facts go with a kind, which kinds a file does not
 * list).  A profile is loaded by profile_load.c, parsed by profile_parse.c
 * and printed back by profile_json.c.
 */
#include "input/profile.h"
#include "input/profile_settle.h"

#include "input/tenant_map.h"

#include <stdlib.h>
#include <string.h>

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void profile_free(profile **pp)
{
    profile *p = *pp;
    if (!p)
        return;
    free(p->name);
    free(p->description);
    free(p->timezone);
    tz_free(&p->tz);
    free_strv(p->skip_prefix, p->n_skip_prefix);
    free(p->row_type_header);
    free(p->zone_row);
    free_strv(p->row_type_data, p->n_row_type_data);
    free(p->end_prefix);
    free(p->strip_prefix);
    free(p->strip_suffix);
    free(p->count_column);
    free_strv(p->count_lines, p->n_count_lines);
    for (int c = 0; c < COL_COUNT; c++) {
        column_rule *r = &p->col[c];
        free_strv(r->from, r->n_from);
        free_strv(r->with, r->n_with);
        for (size_t i = 0; i < r->n_map; i++) {
            free(r->map[i].match);
            free_strv(r->map[i].result, r->map[i].n_result);
        }
        free(r->map);
        free(r->value);
        free(r->fallback);
    }
    for (size_t i = 0; i < p->n_money; i++) {
        money_kind *m = &p->money[i];
        free(m->kind);
        money_fact *f[] = {&m->amount, &m->currency, &m->fee, &m->settlement.amount,
                           &m->settlement.fee, &m->record};
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
            free(f[k]->column);
            free(f[k]->column_alt);
            free(f[k]->value);
        }
    }
    free(p->money);
    for (size_t i = 0; i < p->n_covers; i++) {
        free_strv(p->covers[i].header_has, p->covers[i].n_header_has);
        free_strv(p->covers[i].kinds, p->covers[i].n_kinds);
    }
    free(p->covers);
    for (size_t i = 0; i < p->n_totals; i++) {
        money_total *t = &p->totals[i];
        free(t->summary);
        free(t->line);
        free(t->label);
        free(t->sum);
        free(t->sum_alt);
        free(t->kind);
    }
    free(p->totals);
    free_strv(p->utc_columns, p->n_utc_columns);
    free(p->refund_of);
    free_strv(p->merchant_from, p->n_merchant_from);
    free_strv(p->merchant_none, p->n_merchant_none);
    for (size_t i = 0; i < p->n_footers; i++)
        free(p->footers[i].row_type);
    free(p->footers);
    free(p->section_start);
    free(p->report_start);
    free(p->file_start);
    for (size_t i = 0; i < p->n_renames; i++) {
        free(p->renames[i].from);
        free(p->renames[i].to);
    }
    free(p->renames);
    tenant_map_free(&p->tenants);
    free(p->tenant_map_path);
    profile_settle_free(&p->settle);
    free(p);
    *pp = NULL;
}

bool profile_has_trailer(const profile *p)
{
    return p->count_column != NULL || p->n_count_lines > 0 || p->n_totals > 0 ||
           p->n_footers > 0;
}

const money_kind *profile_money_for(const profile *p, const char *ct, size_t len)
{
    const char *colon = memchr(ct, ':', len);
    size_t kn = colon ? (size_t)(colon - ct) : len;
    const char *kind = ct;
    for (size_t i = 0; i < p->n_renames; i++)
        if (strlen(p->renames[i].to) == kn && memcmp(p->renames[i].to, ct, kn) == 0) {
            kind = p->renames[i].from;
            kn = strlen(kind);
            break;
        }
    const money_kind *any = NULL;
    for (size_t i = 0; i < p->n_money; i++) {
        const char *k = p->money[i].kind;
        if (!k)
            any = &p->money[i];
        else if (strlen(k) == kn && memcmp(k, kind, kn) == 0)
            return &p->money[i];
    }
    return any;
}

/* Is kind among the kinds of the rules in mask? */
static bool rules_list(const profile *p, uint32_t mask, const char *kind)
{
    for (size_t i = 0; i < p->n_covers; i++)
        for (size_t k = 0; (mask & ((uint32_t)1 << i)) && k < p->covers[i].n_kinds; k++)
            if (strcmp(p->covers[i].kinds[k], kind) == 0)
                return true;
    return false;
}

bool profile_excluded_kinds(const profile *p, uint32_t matched, char ***kinds, size_t *n_kinds,
                            bool *oom)
{
    *kinds = NULL;
    *n_kinds = 0;
    size_t cap = 0;
    for (size_t i = 0; i < p->n_covers; i++)
        cap += p->covers[i].n_kinds;
    if (!(matched & (((uint64_t)1 << p->n_covers) - 1)) || cap == 0)
        return false;
    char **out = calloc(cap, sizeof *out);
    if (!out) {
        *oom = true;
        return false;
    }
    size_t n = 0;
    for (size_t i = 0; i < p->n_covers; i++) {
        for (size_t k = 0; k < p->covers[i].n_kinds; k++) {
            const char *kind = p->covers[i].kinds[k];
            if (rules_list(p, matched, kind) || rules_list(p, ((uint32_t)1 << i) - 1, kind))
                continue;   /* covered, or already seen in an earlier rule */
            for (size_t r = 0; r < p->n_renames; r++)
                if (strcmp(p->renames[r].from, kind) == 0) {
                    kind = p->renames[r].to;
                    break;
                }
            if (!(out[n] = strdup(kind))) {
                free_strv(out, n);
                *oom = true;
                return false;
            }
            n++;
        }
    }
    if (n == 0) {
        free(out);
        return false;
    }
    *kinds = out;
    *n_kinds = n;
    return true;
}
