/*
 * profile_parse_money.c - a profile file's "money" and "covers" members
 * (see profile_members.h), which reconcile compares by: each kind's
 * amount, currency, fee, settlement and record facts, and the kinds a file
 * lists, by its header.
 */
#include "input/profile_members.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One money fact: {"column": C} (or [C, ALT]: the column an older layout
 * names instead) or {"value": V}, with "unit" and "magnitude". */
static bool parse_money_fact(parse_ctx *cx, json_t *k, const char *name, const char *path,
                             money_fact *f)
{
    json_t *o = json_object_get(k, name);
    char sub[128];
    snprintf(sub, sizeof sub, "%s.%s", path, name);
    if (!o || json_is_null(o))
        return true;
    static const char *const allowed[] = {"column", "value", "unit", "magnitude", NULL};
    if (!json_is_object(o))
        return member_bad(cx, sub, "must be an object (column or value, unit, magnitude)");
    char s2[160];
    if (!member_only(cx, o, sub, allowed))
        return false;
    snprintf(s2, sizeof s2, "%s.column", sub);
    char **cols = NULL;
    size_t n_cols = 0;
    bool got = member_strv(cx, o, "column", s2, &cols, &n_cols);
    if (got && n_cols > 2)
        got = member_bad(cx, s2, "names at most two columns: the bill's, and the one an older "
                                 "layout names instead");
    if (n_cols > 0)
        f->column = cols[0];
    if (n_cols > 1)
        f->column_alt = cols[1];
    for (size_t i = 2; i < n_cols; i++)
        free(cols[i]);
    free(cols);
    if (!got)
        return false;
    snprintf(s2, sizeof s2, "%s.value", sub);
    if (!member_str(cx, o, "value", s2, false, false, &f->value))
        return false;
    if (!f->column == !f->value)
        return member_bad(cx, sub, "needs one of \"column\" (a source column) or \"value\" (a "
                                   "constant)");
    json_t *u = json_object_get(o, "unit");
    snprintf(s2, sizeof s2, "%s.unit", sub);
    if (u && !json_is_null(u)) {
        if (!json_is_string(u) || (strcmp(json_string_value(u), "minor") != 0 &&
                                   strcmp(json_string_value(u), "major") != 0))
            return member_bad(cx, s2, "must be \"major\" or \"minor\"");
        f->minor = strcmp(json_string_value(u), "minor") == 0;
    }
    json_t *mg = json_object_get(o, "magnitude");
    snprintf(s2, sizeof s2, "%s.magnitude", sub);
    if (mg && !json_is_null(mg)) {
        if (!json_is_boolean(mg))
            return member_bad(cx, s2, "must be true or false");
        f->magnitude = json_is_true(mg);
    }
    return true;
}

/* A money kind's "settlement": {"amount": FACT, "fee": FACT}, the money the
 * channel settles (not compared by reconcile). */
static bool parse_settlement(parse_ctx *cx, json_t *k, const char *path, money_kind *m)
{
    json_t *o = json_object_get(k, "settlement");
    if (!o || json_is_null(o))
        return true;
    char sub[96];
    snprintf(sub, sizeof sub, "%s.settlement", path);
    if (!json_is_object(o))
        return member_bad(cx, sub, "must be an object (amount, fee)");
    static const char *const allowed[] = {"amount", "fee", NULL};
    return member_only(cx, o, sub, allowed) &&
           parse_money_fact(cx, o, "amount", sub, &m->settlement.amount) &&
           parse_money_fact(cx, o, "fee", sub, &m->settlement.fee);
}

/* covers: [{"header_has": [COLUMN...], "kinds": [KIND...]}]: the kinds a
 * file lists, by the first rule whose columns its header has; a rule
 * without header_has matches every header and must be the last. */
bool profile_parse_covers(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *a = json_object_get(root, "covers");
    if (!a || json_is_null(a))
        return true;
    if (!json_is_array(a) || json_array_size(a) == 0)
        return member_bad(cx, "covers", "must be a non-empty array of rules ({\"header_has\": "
                                        "[COLUMN...], \"kinds\": [KIND...]})");
    if (json_array_size(a) > PROFILE_MAX_COVERS) {
        char m[64];
        snprintf(m, sizeof m, "holds at most %d rules", PROFILE_MAX_COVERS);
        return member_bad(cx, "covers", m);
    }
    p->covers = calloc(json_array_size(a), sizeof *p->covers);
    if (!p->covers) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    static const char *const allowed[] = {"header_has", "kinds", NULL};
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *r = json_array_get(a, i);
        char path[64], sub[96];
        snprintf(path, sizeof path, "covers[%zu]", i);
        if (!json_is_object(r))
            return member_bad(cx, path, "must be an object (header_has, kinds)");
        cover_rule *c = &p->covers[p->n_covers++];
        if (!member_only(cx, r, path, allowed))
            return false;
        snprintf(sub, sizeof sub, "%s.header_has", path);
        if (!member_strv(cx, r, "header_has", sub, &c->header_has, &c->n_header_has))
            return false;
        if (!c->n_header_has && i + 1 < json_array_size(a))
            return member_bad(cx, path, "matches every header (no header_has), so the rules after "
                                        "it are never used: it must be the last");
        snprintf(sub, sizeof sub, "%s.kinds", path);
        if (!json_object_get(r, "kinds") || json_is_null(json_object_get(r, "kinds")))
            return member_bad(cx, sub, "is required: the kinds a file with that header lists");
        if (!member_strv(cx, r, "kinds", sub, &c->kinds, &c->n_kinds))
            return false;
        for (size_t k = 0; k < c->n_kinds; k++)
            if (strchr(c->kinds[k], ':'))
                return member_bad(cx, sub, "holds kinds without ':' (\"refund\", not "
                                           "\"refund:{...}\")");
    }
    return true;
}

/* money: [{"kind": K, "amount": FACT, "currency": FACT, "fee": FACT,
 * "settlement": {"amount": FACT, "fee": FACT}, "record": {"column": C}}]. */
bool profile_parse_money(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *a = json_object_get(root, "money");
    if (!a || json_is_null(a))
        return true;
    if (!json_is_array(a))
        return member_bad(cx, "money", "must be an array, one entry per kind");
    p->money = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof *p->money);
    if (!p->money) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    static const char *const allowed[] = {"kind", "amount", "currency", "fee", "settlement",
                                          "record", NULL};
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *k = json_array_get(a, i);
        char path[64], sub[96];
        snprintf(path, sizeof path, "money[%zu]", i);
        if (!json_is_object(k))
            return member_bad(cx, path,
                              "must be an object (kind, amount, currency, fee, settlement)");
        money_kind *m = &p->money[p->n_money++];
        snprintf(sub, sizeof sub, "%s.kind", path);
        if (!member_only(cx, k, path, allowed) ||
            !member_str(cx, k, "kind", sub, false, false, &m->kind) ||
            !parse_money_fact(cx, k, "amount", path, &m->amount) ||
            !parse_money_fact(cx, k, "currency", path, &m->currency) ||
            !parse_money_fact(cx, k, "fee", path, &m->fee) ||
            !parse_settlement(cx, k, path, m) ||
            !parse_money_fact(cx, k, "record", path, &m->record))
            return false;
        if (m->record.value || m->record.minor || m->record.magnitude)
            return member_bad(cx, path, "record names a column (the row's own transaction id), "
                                        "nothing else");
        if (m->kind && strchr(m->kind, ':'))
            return member_bad(cx, sub, "is a kind without ':' (\"refund\", not \"refund:{...}\")");
        for (size_t j = 0; j + 1 < p->n_money; j++)
            if ((!m->kind && !p->money[j].kind) ||
                (m->kind && p->money[j].kind && strcmp(m->kind, p->money[j].kind) == 0))
                return member_bad(cx, sub, "names a kind twice");
    }
    return true;
}
