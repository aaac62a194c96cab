/*
 * profile_settle.c - a profile's "settle" member: parsed, printed back the
 * same, freed (profile_settle.h).
 */
#include "input/profile_settle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/profile.h"
#include "core/settle_kind.h"

typedef struct sctx {
    const char *origin;
    buf *err;
} sctx;

static bool bad(sctx *cx, const char *member, const char *what)
{
    buf_printf(cx->err, "%s: member \"%s\" %s", cx->origin, member, what);
    return false;
}

static bool oom(sctx *cx)
{
    buf_printf(cx->err, "out of memory");
    return false;
}

static bool only(sctx *cx, json_t *o, const char *where, const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, key) == 0;
        if (!ok) {
            char m[160];
            snprintf(m, sizeof m, "%s.%s", where, key);
            return bad(cx, m, "is not a member a profile has (misspelt?)");
        }
    }
    return true;
}

static bool str_ok(json_t *s)
{
    return json_is_string(s) && json_string_length(s) > 0 &&
           strlen(json_string_value(s)) == json_string_length(s);
}

/* A non-empty string member, or absent. */
static bool get_str(sctx *cx, json_t *o, const char *key, const char *path, char **out)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return true;
    if (!str_ok(v))
        return bad(cx, path, "must be a non-empty string");
    *out = strdup(json_string_value(v));
    return *out ? true : oom(cx);
}

/* A string or a non-empty array of strings, or absent. */
static bool get_strv(sctx *cx, json_t *o, const char *key, const char *path, char ***out,
                     size_t *n)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return true;
    if (!json_is_array(v) && !json_is_string(v))
        return bad(cx, path, "must be a string or an array of strings");
    size_t count = json_is_array(v) ? json_array_size(v) : 1;
    if (count == 0)
        return bad(cx, path, "must not be an empty array");
    *out = calloc(count, sizeof **out);
    if (!*out)
        return oom(cx);
    for (size_t i = 0; i < count; i++) {
        json_t *s = json_is_array(v) ? json_array_get(v, i) : v;
        if (!str_ok(s))
            return bad(cx, path, "must hold only non-empty strings");
        (*out)[i] = strdup(json_string_value(s));
        if (!(*out)[i])
            return oom(cx);
        (*n)++;
    }
    return true;
}

static const char *const money_facts[] = {"amount", "fee", "currency", "record",
                                          "settlement.amount", "settlement.fee", NULL};

static bool is_amount(const char *name)
{
    return strcmp(name, "gross") == 0 || strcmp(name, "fee") == 0 ||
           strcmp(name, "net") == 0 || strcmp(name, "balance") == 0;
}

static bool parse_sign(sctx *cx, json_t *o, const char *path, settle_field *f)
{
    json_t *s = json_object_get(o, "sign");
    if (!s || json_is_null(s))
        return true;
    char sub[160];
    snprintf(sub, sizeof sub, "%s.sign", path);
    static const char *const allowed[] = {"column", "plus", "minus", NULL};
    if (!json_is_object(s))
        return bad(cx, sub, "must be an object (column, plus, minus)");
    char c[176], pl[176], mi[176];
    snprintf(c, sizeof c, "%s.column", sub);
    snprintf(pl, sizeof pl, "%s.plus", sub);
    snprintf(mi, sizeof mi, "%s.minus", sub);
    if (!only(cx, s, sub, allowed) || !get_strv(cx, s, "column", c, &f->sign, &f->n_sign) ||
        !get_strv(cx, s, "plus", pl, &f->plus, &f->n_plus) ||
        !get_strv(cx, s, "minus", mi, &f->minus, &f->n_minus))
        return false;
    if (!f->n_sign || !f->n_plus || !f->n_minus)
        return bad(cx, sub, "needs column, plus and minus");
    return true;
}

/* One field: {"column"}, {"value"}, {"money"}; an amount also {"in", "out"}
 * and "sign". */
static bool parse_field(sctx *cx, json_t *st, const char *name, settle_field *f)
{
    json_t *o = json_object_get(st, name);
    char path[96], sub[128];
    snprintf(path, sizeof path, "settle.%s", name);
    if (!o || json_is_null(o))
        return true;
    if (!json_is_object(o))
        return bad(cx, path, "must be an object (column, value or money)");
    static const char *const text_members[] = {"column", "value", "money", NULL};
    static const char *const amount_members[] = {"column", "value", "money", "sign",
                                                 "in", "out", NULL};
    bool amount = is_amount(name);
    if (!only(cx, o, path, amount ? amount_members : text_members))
        return false;
#define SUB(m) (snprintf(sub, sizeof sub, "%s.%s", path, m), sub)
    if (!get_strv(cx, o, "column", SUB("column"), &f->column, &f->n_column) ||
        !get_str(cx, o, "value", SUB("value"), &f->value) ||
        !get_str(cx, o, "money", SUB("money"), &f->money) ||
        !get_strv(cx, o, "in", SUB("in"), &f->in, &f->n_in) ||
        !get_strv(cx, o, "out", SUB("out"), &f->out, &f->n_out) || !parse_sign(cx, o, path, f))
        return false;
#undef SUB
    int ways = (f->n_column > 0) + (f->value != NULL) + (f->money != NULL) + (f->n_in > 0);
    if (ways != 1)
        return bad(cx, path, "needs exactly one of column, value, money or in/out");
    if ((f->n_in > 0) != (f->n_out > 0))
        return bad(cx, path, "needs both in and out");
    if (f->n_sign && !f->n_column)
        return bad(cx, path, "\"sign\" goes with \"column\"");
    if (f->money) {
        bool known = false;
        for (const char *const *m = money_facts; *m && !known; m++)
            known = strcmp(*m, f->money) == 0;
        if (!known)
            return bad(cx, path, "names no money fact (amount, fee, currency, record, "
                                 "settlement.amount, settlement.fee)");
    }
    return true;
}

int profile_settle_kind(const char *name)
{
    if (strcmp(name, "skip") == 0)
        return -2;
    int k = settle_kind_lookup(name);
    /* A channel's rows: payment .. payout; the bank's kinds come from a
     * bank entry's direction, never from a map. */
    return k >= SETTLE_PAYMENT && k <= SETTLE_PAYOUT ? k : -1;
}

static bool parse_kind(sctx *cx, json_t *st, profile_settle *s)
{
    json_t *k = json_object_get(st, "kind");
    if (!k || json_is_null(k)) {
        if (!s->bank)
            return bad(cx, "settle.kind", "is required (a channel file's rows have kinds)");
        return true;
    }
    if (s->bank)
        return bad(cx, "settle.kind", "is not for a bank file: its entries are credits or "
                                      "debits by their sign");
    static const char *const allowed[] = {"from", "with", "map", NULL};
    if (!json_is_object(k))
        return bad(cx, "settle.kind", "must be an object (from, with, map)");
    if (!only(cx, k, "settle.kind", allowed) ||
        !get_strv(cx, k, "from", "settle.kind.from", &s->kind_from, &s->n_kind_from) ||
        !get_strv(cx, k, "with", "settle.kind.with", &s->kind_with, &s->n_kind_with))
        return false;
    if (s->n_kind_with && !s->n_kind_from)
        return bad(cx, "settle.kind.with", "goes with \"from\"");
    json_t *m = json_object_get(k, "map");
    if (!json_is_object(m) || json_object_size(m) == 0)
        return bad(cx, "settle.kind.map", "is required: an object from the file's values to "
                                          "payment, refund, dispute, fee, adjustment, payout "
                                          "or skip");
    s->kind_map = calloc(json_object_size(m), sizeof *s->kind_map);
    if (!s->kind_map)
        return oom(cx);
    const char *key;
    json_t *v;
    json_object_foreach(m, key, v) {
        char path[160];
        snprintf(path, sizeof path, "settle.kind.map.%s", key);
        if (!json_is_string(v) || profile_settle_kind(json_string_value(v)) == -1)
            return bad(cx, path, "must be one of payment, refund, dispute, fee, adjustment, "
                                 "payout, skip");
        settle_kind_map *e = &s->kind_map[s->n_kind_map++];
        e->match = strdup(key);
        e->kind = strdup(json_string_value(v));
        if (!e->match || !e->kind)
            return oom(cx);
    }
    return true;
}

static bool parse_settle(sctx *cx, json_t *st, profile_settle *s)
{
    static const char *const allowed[] = {"side", "kind", "unit", "txn_id", "order_key",
                                          "batch_id", "payout_id", "batch_date", "time", "currency",
                                          "gross", "fee",
                                          "net", "balance", "text", "account",
                                          "footer_money", NULL};
    if (!json_is_object(st))
        return bad(cx, "settle", "must be an object (side, kind, unit and the fields)");
    if (!only(cx, st, "settle", allowed))
        return false;
    json_t *side = json_object_get(st, "side");
    if (!json_is_string(side) || (strcmp(json_string_value(side), "channel") != 0 &&
                                  strcmp(json_string_value(side), "bank") != 0))
        return bad(cx, "settle.side", "is required: \"channel\" or \"bank\"");
    s->bank = strcmp(json_string_value(side), "bank") == 0;
    json_t *unit = json_object_get(st, "unit");
    if (unit && !json_is_null(unit)) {
        if (!json_is_string(unit) || (strcmp(json_string_value(unit), "minor") != 0 &&
                                      strcmp(json_string_value(unit), "major") != 0))
            return bad(cx, "settle.unit", "must be \"minor\" or \"major\"");
        s->minor = strcmp(json_string_value(unit), "minor") == 0;
    }
    if (!parse_kind(cx, st, s))
        return false;
#define PARSE_FIELD(f) \
    if (!parse_field(cx, st, #f, &s->f)) \
        return false;
    PROFILE_SETTLE_FIELDS(PARSE_FIELD)
#undef PARSE_FIELD
    if (!settle_field_set(&s->txn_id))
        return bad(cx, "settle.txn_id", "is required (the row's own id)");
    if (!settle_field_set(&s->time))
        return bad(cx, "settle.time", "is required (when the row was booked)");
    if (!settle_field_set(&s->currency))
        return bad(cx, "settle.currency", "is required (a column, or a constant value)");
    if (!settle_field_set(&s->net) && !settle_field_set(&s->gross))
        return bad(cx, "settle.net", "is required unless settle.gross is given (net = gross "
                                     "- fee)");
    json_t *fm = json_object_get(st, "footer_money");
    if (fm && !json_is_null(fm)) {
        static const char *const fm_allowed[] = {"section", "report", NULL};
        if (!json_is_object(fm))
            return bad(cx, "settle.footer_money", "must be an object (section, report)");
        if (!only(cx, fm, "settle.footer_money", fm_allowed) ||
            !get_str(cx, fm, "section", "settle.footer_money.section", &s->footer_section) ||
            !get_str(cx, fm, "report", "settle.footer_money.report", &s->footer_report))
            return false;
        if (!s->footer_section && !s->footer_report)
            return bad(cx, "settle.footer_money", "needs section or report (a row type)");
    }
    if (s->txn_id.n_in || s->time.n_in || s->currency.n_in || s->order_key.n_in)
        return bad(cx, "settle", "\"in\"/\"out\" are for amounts only");
    return true;
}

bool profile_settle_parse(json_t *v, profile *p, const char *origin, buf *err)
{
    if (!v || json_is_null(v))
        return true;
    sctx cx = {.origin = origin, .err = err};
    p->settle = calloc(1, sizeof *p->settle);
    if (!p->settle)
        return oom(&cx);
    return parse_settle(&cx, v, p->settle);
}

bool profile_settle_only(const profile *p)
{
    return p->settle && !p->col[COL_OUT_TRADE_NO].set;
}

/* --- printing --------------------------------------------------------------- */

/* One string, or an array when there are several (as parsed). */
static json_t *strv_json(char **v, size_t n)
{
    if (n == 1)
        return json_string(v[0]);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *list_json(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static void field_json(json_t *o, const char *name, const settle_field *f)
{
    if (!settle_field_set(f))
        return;
    json_t *fj = json_object();
    if (f->n_column)
        json_object_set_new(fj, "column", strv_json(f->column, f->n_column));
    if (f->value)
        json_object_set_new(fj, "value", json_string(f->value));
    if (f->money)
        json_object_set_new(fj, "money", json_string(f->money));
    if (f->n_in) {
        json_object_set_new(fj, "in", strv_json(f->in, f->n_in));
        json_object_set_new(fj, "out", strv_json(f->out, f->n_out));
    }
    if (f->n_sign) {
        json_t *sj = json_object();
        json_object_set_new(sj, "column", strv_json(f->sign, f->n_sign));
        json_object_set_new(sj, "plus", list_json(f->plus, f->n_plus));
        json_object_set_new(sj, "minus", list_json(f->minus, f->n_minus));
        json_object_set_new(fj, "sign", sj);
    }
    json_object_set_new(o, name, fj);
}

json_t *profile_settle_json(const profile *p)
{
    const profile_settle *s = p->settle;
    if (!s)
        return NULL;
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "side", json_string(s->bank ? "bank" : "channel"));
    if (s->n_kind_map) {
        json_t *k = json_object();
        if (s->n_kind_from)
            json_object_set_new(k, "from", list_json(s->kind_from, s->n_kind_from));
        if (s->n_kind_with)
            json_object_set_new(k, "with", list_json(s->kind_with, s->n_kind_with));
        json_t *m = json_object();
        for (size_t i = 0; i < s->n_kind_map; i++)
            json_object_set_new(m, s->kind_map[i].match, json_string(s->kind_map[i].kind));
        json_object_set_new(k, "map", m);
        json_object_set_new(o, "kind", k);
    }
    if (s->minor)
        json_object_set_new(o, "unit", json_string("minor"));
#define FIELD_JSON(f) field_json(o, #f, &s->f);
    PROFILE_SETTLE_FIELDS(FIELD_JSON)
#undef FIELD_JSON
    if (s->footer_section || s->footer_report) {
        json_t *fm = json_object();
        if (s->footer_section)
            json_object_set_new(fm, "section", json_string(s->footer_section));
        if (s->footer_report)
            json_object_set_new(fm, "report", json_string(s->footer_report));
        json_object_set_new(o, "footer_money", fm);
    }
    return o;
}

/* --- freeing ---------------------------------------------------------------- */

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void field_free(settle_field *f)
{
    free_strv(f->column, f->n_column);
    free(f->value);
    free(f->money);
    free_strv(f->sign, f->n_sign);
    free_strv(f->plus, f->n_plus);
    free_strv(f->minus, f->n_minus);
    free_strv(f->in, f->n_in);
    free_strv(f->out, f->n_out);
}

void profile_settle_free(profile_settle **sp)
{
    profile_settle *s = *sp;
    if (!s)
        return;
    free_strv(s->kind_from, s->n_kind_from);
    free_strv(s->kind_with, s->n_kind_with);
    for (size_t i = 0; i < s->n_kind_map; i++) {
        free(s->kind_map[i].match);
        free(s->kind_map[i].kind);
    }
    free(s->kind_map);
    free(s->footer_section);
    free(s->footer_report);
#define FIELD_FREE(f) field_free(&s->f);
    PROFILE_SETTLE_FIELDS(FIELD_FREE)
#undef FIELD_FREE
    free(s);
    *sp = NULL;
}
