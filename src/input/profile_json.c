/*
 * profile_json.c - a profile printed back as a profile file (see
 * profile.h, profile_to_json): the members in the order a file lists
 * them, each only where the profile declares it, so that the printed file
 * loads back unchanged.
 */
#include "input/profile.h"
#include "input/profile_settle.h"

#include <jansson.h>
#include <stdlib.h>

static json_t *strv_json(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static void set_str(json_t *o, const char *key, const char *v)
{
    if (v)
        json_object_set_new(o, key, json_string(v));
}

/* The profile's "framing", or NULL where it declares none. */
static json_t *framing_json(const profile *p)
{
    json_t *fr = json_object();
    if (p->n_skip_prefix)
        json_object_set_new(fr, "skip_prefix", strv_json(p->skip_prefix, p->n_skip_prefix));
    if (p->row_type_header) {
        json_t *rt = json_object();
        set_str(rt, "header", p->row_type_header);
        json_object_set_new(rt, "data", strv_json(p->row_type_data, p->n_row_type_data));
        set_str(rt, "zone", p->zone_row);
        json_object_set_new(fr, "row_type", rt);
    }
    set_str(fr, "end_prefix", p->end_prefix);
    if (fr && json_object_size(fr) == 0) {
        json_decref(fr);
        return NULL;
    }
    return fr;
}

/* The profile's "trailer" (counts, money totals, footers); the caller knows it has one. */
static json_t *trailer_json(const profile *p)
{
    json_t *tr = json_object();
    set_str(tr, "count_column", p->count_column);
    if (p->n_count_lines)
        json_object_set_new(tr, "count_lines", strv_json(p->count_lines, p->n_count_lines));
    if (p->n_totals) {
        json_t *a = json_array();
        for (size_t i = 0; i < p->n_totals; i++) {
            const money_total *t = &p->totals[i];
            json_t *tj = json_object();
            set_str(tj, "summary", t->summary);
            set_str(tj, "line", t->line);
            set_str(tj, "label", t->label);
            if (t->sum_alt)
                json_object_set_new(tj, "sum", json_pack("[s, s]", t->sum, t->sum_alt));
            else
                set_str(tj, "sum", t->sum);
            set_str(tj, "kind", t->kind);
            if (t->count)
                json_object_set_new(tj, "count", json_true());
            json_array_append_new(a, tj);
        }
        json_object_set_new(tr, "totals", a);
    }
    if (p->n_footers) {
        static const char *const scope[] = {"section", "report", "file"};
        json_t *a = json_array();
        for (size_t i = 0; i < p->n_footers; i++) {
            json_t *fj = json_object();
            set_str(fj, "row_type", p->footers[i].row_type);
            set_str(fj, "counts", scope[p->footers[i].scope]);
            if (p->footers[i].optional)
                json_object_set_new(fj, "optional", json_true());
            json_array_append_new(a, fj);
        }
        json_object_set_new(tr, "footers", a);
        set_str(tr, "section_start", p->section_start);
        set_str(tr, "report_start", p->report_start);
        set_str(tr, "file_start", p->file_start);
    }
    return tr;
}

/* The profile's "columns": one rule per column it sets. */
static json_t *columns_json(const profile *p)
{
    json_t *cols = json_object();
    for (int c = 0; c < COL_COUNT; c++) {
        const column_rule *r = &p->col[c];
        if (!r->set)
            continue;
        json_t *rj = json_object();
        if (r->n_from)
            json_object_set_new(rj, "from", strv_json(r->from, r->n_from));
        if (r->n_with)
            json_object_set_new(rj, "with", strv_json(r->with, r->n_with));
        if (r->n_map) {
            json_t *m = json_object();
            for (size_t i = 0; i < r->n_map; i++) {
                const map_entry *e = &r->map[i];
                json_object_set_new(m, e->match, e->n_result == 1
                                                     ? json_string(e->result[0])
                                                     : strv_json(e->result, e->n_result));
            }
            json_object_set_new(rj, "map", m);
            set_str(rj, "unmapped", r->unmapped == UNMAPPED_SKIP ? "skip" : "reject");
        }
        set_str(rj, "default", r->fallback);
        set_str(rj, "value", r->value);
        json_object_set_new(cols, column_name((column)c), rj);
    }
    return cols;
}

/* The profile's "merchant" (the caller knows it names source columns). */
static json_t *merchant_json(const profile *p)
{
    json_t *m = json_object();
    json_object_set_new(m, "from", strv_json(p->merchant_from, p->n_merchant_from));
    if (p->n_merchant_none)
        json_object_set_new(m, "none", strv_json(p->merchant_none, p->n_merchant_none));
    return m;
}

/* One money fact as member name of o, when the profile declares it. */
static void money_fact_json(json_t *o, const char *name, const money_fact *f)
{
    if (!f->column && !f->value)
        return;
    json_t *fj = json_object();
    if (f->column_alt)
        json_object_set_new(fj, "column", json_pack("[s, s]", f->column, f->column_alt));
    else
        set_str(fj, "column", f->column);
    set_str(fj, "value", f->value);
    if (f->minor)
        set_str(fj, "unit", "minor");
    if (f->magnitude)
        json_object_set_new(fj, "magnitude", json_true());
    json_object_set_new(o, name, fj);
}

/* The profile's "money" facts, one object per kind (the caller knows it has some). */
static json_t *money_json(const profile *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->n_money; i++) {
        const money_kind *m = &p->money[i];
        json_t *kj = json_object();
        set_str(kj, "kind", m->kind);
        money_fact_json(kj, "amount", &m->amount);
        money_fact_json(kj, "currency", &m->currency);
        money_fact_json(kj, "fee", &m->fee);
        json_t *sj = json_object();
        money_fact_json(sj, "amount", &m->settlement.amount);
        money_fact_json(sj, "fee", &m->settlement.fee);
        if (json_object_size(sj))
            json_object_set_new(kj, "settlement", sj);
        else
            json_decref(sj);
        money_fact_json(kj, "record", &m->record);
        json_array_append_new(a, kj);
    }
    return a;
}

/* The profile's "covers" rules (the caller knows it has some). */
static json_t *covers_json(const profile *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->n_covers; i++) {
        json_t *r = json_object();
        if (p->covers[i].n_header_has)
            json_object_set_new(r, "header_has",
                                strv_json(p->covers[i].header_has, p->covers[i].n_header_has));
        json_object_set_new(r, "kinds", strv_json(p->covers[i].kinds, p->covers[i].n_kinds));
        json_array_append_new(a, r);
    }
    return a;
}

bool profile_to_json(const profile *p, buf *out)
{
    json_t *o = json_object();
    if (!o)
        return false;
    set_str(o, "name", p->name);
    set_str(o, "description", p->description);
    set_str(o, "encoding", p->encoding == PROFILE_GBK ? "gbk" : "utf-8");
    set_str(o, "timezone", p->timezone);
    char d[2] = {p->delimiter, '\0'};
    set_str(o, "delimiter", d);
    json_t *fr = framing_json(p);
    if (fr)
        json_object_set_new(o, "framing", fr);
    json_t *cl = json_object();
    set_str(cl, "strip_prefix", p->strip_prefix);
    set_str(cl, "strip_suffix", p->strip_suffix);
    json_object_set_new(cl, "trim", json_boolean(p->trim));
    json_object_set_new(o, "cleanup", cl);
    if (profile_has_trailer(p))
        json_object_set_new(o, "trailer", trailer_json(p));
    json_object_set_new(o, "columns", columns_json(p));
    if (p->n_utc_columns)
        json_object_set_new(o, "utc_columns", strv_json(p->utc_columns, p->n_utc_columns));
    set_str(o, "refund_of", p->refund_of);
    if (p->n_merchant_from)
        json_object_set_new(o, "merchant", merchant_json(p));
    if (p->n_covers)
        json_object_set_new(o, "covers", covers_json(p));
    if (p->n_money)
        json_object_set_new(o, "money", money_json(p));
    if (p->settle)
        json_object_set_new(o, "settle", profile_settle_json(p));
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s)
        return false;
    bool ok = buf_append_str(out, s) && buf_append_char(out, '\n');
    free(s);
    return ok;
}
