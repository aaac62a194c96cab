/*
 * profile.c - the profile model: built-ins, profile files, and printing a
 * profile back as a file (see profile.h).
 *
 * The built-ins are written here as profile files and go through the same
 * parser as a user's file, so `idemload profiles NAME` prints exactly what
 * `--profile NAME` runs, and a printed profile loads back unchanged.
 */
#include "input/profile.h"
#include "input/profile_settle.h"
#include "input/profiles_json.h"

#include "input/tenant_map.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The built-in profiles: their names in the order `profiles` lists them,
 * each with its one-line summary.  The profiles themselves are JSON files,
 * src/input/profiles/NAME.json, compiled in by cmake/embed_profiles.cmake
 * (profile_json_files); a unit test holds the two lists to each other. */
typedef struct builtin {
    const char *name;
    const char *summary;
} builtin;

static const builtin builtins[] = {
    {"wechat-trade",
     "WeChat Pay trade bill (ALL, SUCCESS, REFUND; 27/20/29 and older 24/26 columns); "
     "status from 退款状态; totals checked; merchant column for --tenant-map"},
    {"alipay-trade",
     "Alipay trade bill 业务明细 (the .zip as downloaded, or the GBK detail CSV); "
     "#交易合计/#退款合计 counts and amounts checked"},
    {"stripe-balance",
     "Stripe itemized balance change report (charge and refund rows; created_utc, or "
     "created in --timezone; the Dashboard download too)"},
    {"paypal-stl",
     "PayPal settlement report (STL): SB rows, columns named by the CH row; payments "
     "received (CR) only; SC/RC/FF record counts checked (SF/RF too where they hold "
     "one)"},
    {"stripe-payout",
     "Stripe itemized payout reconciliation report (automatic_payout_id, gross, fee, net); "
     "settle only"},
    {"wechat-fund",
     "WeChat Pay fund-flow bill 资金账单 (BASIC); summary counts and amounts checked; "
     "settle only"},
    {"alipay-account",
     "Alipay account ledger 账务明细 (signcustomer, GBK); #收入合计/#支出合计 checked; "
     "settle only"},
};

#define N_BUILTINS (sizeof builtins / sizeof builtins[0])

const char *const profile_builtin_names[] = {"wechat-trade", "alipay-trade", "stripe-balance",
                                             "paypal-stl", "stripe-payout", "wechat-fund",
                                             "alipay-account", NULL};

const char *profile_builtin_summary(const char *name)
{
    for (size_t i = 0; i < N_BUILTINS; i++)
        if (strcmp(builtins[i].name, name) == 0)
            return builtins[i].summary;
    return NULL;
}

const char *profile_builtin_source(const char *name)
{
    for (size_t i = 0; i < N_BUILTINS; i++)
        if (strcmp(builtins[i].name, name) == 0)
            for (const profile_json *f = profile_json_files; f->name; f++)
                if (strcmp(f->name, name) == 0)
                    return f->text;
    return NULL;
}

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

/* --- parsing ------------------------------------------------------------ */

typedef struct parse_ctx {
    const char *origin;
    buf *err;
    bool oom;
} parse_ctx;

static bool bad(parse_ctx *cx, const char *member, const char *what)
{
    buf_printf(cx->err, "%s: member \"%s\" %s", cx->origin, member, what);
    return false;
}

/* Refuses members of obj not in allowed (NULL-terminated). */
static bool only_members(parse_ctx *cx, json_t *obj, const char *where,
                         const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            ok = ok || strcmp(*a, key) == 0;
        if (!ok) {
            char m[160];
            snprintf(m, sizeof m, "%s%s%s", where, *where ? "." : "", key);
            return bad(cx, m, "is not a member a profile has (misspelt?)");
        }
    }
    return true;
}

static bool dup_str(parse_ctx *cx, const char *s, char **out)
{
    *out = strdup(s);
    if (!*out) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    return true;
}

/* A non-empty string member (or absent when optional). */
static bool get_str(parse_ctx *cx, json_t *obj, const char *key, const char *path,
                    bool required, bool allow_empty, char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            return bad(cx, path, "is required");
        return true;
    }
    if (!json_is_string(v))
        return bad(cx, path, "must be a string");
    if (!allow_empty && json_string_length(v) == 0)
        return bad(cx, path, "must not be empty");
    if (strlen(json_string_value(v)) != json_string_length(v))
        return bad(cx, path, "must not hold a NUL character");
    return dup_str(cx, json_string_value(v), out);
}

/* A string or an array of non-empty strings. */
static bool get_strv(parse_ctx *cx, json_t *obj, const char *key, const char *path,
                     char ***out, size_t *n)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return true;
    size_t count = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_string(v))
        return bad(cx, path, "must be a string or an array of strings");
    if (count == 0)
        return bad(cx, path, "must not be an empty array");
    *out = calloc(count, sizeof **out);
    if (!*out) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *s = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(s) || json_string_length(s) == 0 ||
            strlen(json_string_value(s)) != json_string_length(s))
            return bad(cx, path, "must hold only non-empty strings");
        if (!dup_str(cx, json_string_value(s), &(*out)[i]))
            return false;
        (*n)++;
    }
    return true;
}

/* Checks a template's braces: "{name}" with a non-empty name, "{{", "}}". */
static bool check_template(parse_ctx *cx, const char *t, const char *path)
{
    for (const char *p = t; *p; p++) {
        if (p[0] == '{' && p[1] == '{') {
            p++;
            continue;
        }
        if (p[0] == '}' && p[1] == '}') {
            p++;
            continue;
        }
        if (*p == '}')
            return bad(cx, path, "has a '}' without its '{' (write }} for a brace)");
        if (*p == '{') {
            const char *end = strchr(p + 1, '}');
            if (!end || end == p + 1 || memchr(p + 1, '{', (size_t)(end - p - 1)))
                return bad(cx, path, "has a '{' without a column name and its '}' "
                                     "(write {{ for a brace)");
            p = end;
        }
    }
    return true;
}

/* A rule's "map": each source value to the template (or first-non-empty list of
 * templates) it becomes.  SUB is the member's path for messages. */
static bool parse_rule_map(parse_ctx *cx, json_t *map, const char *sub, column_rule *r)
{
    if (!map || json_is_null(map))
        return true;
    if (!json_is_object(map) || json_object_size(map) == 0)
        return bad(cx, sub, "must be a non-empty object of value -> template");
    if (r->n_from == 0)
        return bad(cx, sub, "needs \"from\": the column whose values it maps");
    r->map = calloc(json_object_size(map), sizeof *r->map);
    if (!r->map) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    const char *key;
    json_t *res;
    json_object_foreach(map, key, res) {
        char m[192];
        snprintf(m, sizeof m, "%s.%s", sub, key);
        map_entry *e = &r->map[r->n_map++];
        if (!dup_str(cx, key, &e->match))
            return false;
        if (!json_is_string(res) && !json_is_array(res))
            return bad(cx, m, "must be a template or an array of templates (the first "
                              "whose columns hold values)");
        json_t *one = json_object();
        if (!one) {
            cx->oom = true;
            return false;
        }
        json_object_set(one, "r", res);
        bool ok = get_strv(cx, one, "r", m, &e->result, &e->n_result);
        json_decref(one);
        if (!ok)
            return false;
        for (size_t i = 0; i < e->n_result; i++)
            if (!check_template(cx, e->result[i], m))
                return false;
    }
    return true;
}

/* A rule's "unmapped": what a value outside its map does (reject its row, or skip it). */
static bool parse_rule_unmapped(parse_ctx *cx, json_t *v, const char *path, column_rule *r)
{
    char sub[128];
    json_t *um = json_object_get(v, "unmapped");
    snprintf(sub, sizeof sub, "%s.unmapped", path);
    r->unmapped = UNMAPPED_REJECT;
    if (um && !json_is_null(um)) {
        if (!r->map)
            return bad(cx, sub, "goes with \"map\"");
        if (json_is_string(um) && strcmp(json_string_value(um), "skip") == 0)
            r->unmapped = UNMAPPED_SKIP;
        else if (!json_is_string(um) || strcmp(json_string_value(um), "reject") != 0)
            return bad(cx, sub, "must be \"reject\" or \"skip\"");
    }
    return true;
}

static bool parse_rule(parse_ctx *cx, json_t *v, column c, column_rule *r)
{
    char path[96];
    snprintf(path, sizeof path, "columns.%s", column_name(c));
    if (!json_is_object(v))
        return bad(cx, path, "must be an object (from, with, map, unmapped, default, value)");
    static const char *const allowed[] = {"from", "with", "map", "unmapped", "default", "value",
                                          NULL};
    if (!only_members(cx, v, path, allowed))
        return false;
    char sub[128];
    snprintf(sub, sizeof sub, "%s.from", path);
    if (!get_strv(cx, v, "from", sub, &r->from, &r->n_from))
        return false;
    snprintf(sub, sizeof sub, "%s.with", path);
    if (!get_strv(cx, v, "with", sub, &r->with, &r->n_with))
        return false;
    snprintf(sub, sizeof sub, "%s.value", path);
    if (!get_str(cx, v, "value", sub, false, false, &r->value))
        return false;
    if (r->value && !check_template(cx, r->value, sub))
        return false;
    snprintf(sub, sizeof sub, "%s.default", path);
    if (!get_str(cx, v, "default", sub, false, false, &r->fallback))
        return false;
    if (r->fallback && !check_template(cx, r->fallback, sub))
        return false;
    if (r->fallback && r->n_from == 0)
        return bad(cx, sub, "goes with \"from\": it is used when no source column holds a value");
    snprintf(sub, sizeof sub, "%s.with", path);
    if (r->n_with && !json_object_get(v, "map"))
        return bad(cx, sub, "goes with \"map\"");
    snprintf(sub, sizeof sub, "%s.map", path);
    if (!parse_rule_map(cx, json_object_get(v, "map"), sub, r))
        return false;
    if (!parse_rule_unmapped(cx, v, path, r))
        return false;
    if (r->value && r->n_from > 0)
        return bad(cx, path, "has both \"from\" and \"value\": a constant or template goes in "
                             "\"value\", mapped results in \"map\"");
    if (!r->value && r->n_from == 0)
        return bad(cx, path, "needs \"from\" (source columns) or \"value\" (a constant or "
                             "template)");
    r->set = true;
    return true;
}

/* --- the profile's members, one parser each ------------------------------ */

static bool parse_name(parse_ctx *cx, json_t *root, profile *p)
{
    return get_str(cx, root, "name", "name", true, false, &p->name);
}

static bool parse_description(parse_ctx *cx, json_t *root, profile *p)
{
    return get_str(cx, root, "description", "description", false, true, &p->description);
}

/* The zone's text only: it is resolved after the encoding and delimiter. */
static bool parse_timezone(parse_ctx *cx, json_t *root, profile *p)
{
    return get_str(cx, root, "timezone", "timezone", false, false, &p->timezone);
}

static bool parse_encoding(parse_ctx *cx, json_t *root, profile *p)
{
    char *enc = NULL;
    if (!get_str(cx, root, "encoding", "encoding", false, false, &enc))
        return false;
    p->encoding = PROFILE_UTF8;
    if (enc) {
        bool gbk = strcmp(enc, "gbk") == 0 || strcmp(enc, "GBK") == 0;
        bool utf8 = strcmp(enc, "utf-8") == 0 || strcmp(enc, "UTF-8") == 0;
        free(enc);
        if (!gbk && !utf8)
            return bad(cx, "encoding", "must be \"utf-8\" or \"gbk\"");
        p->encoding = gbk ? PROFILE_GBK : PROFILE_UTF8;
    }
    return true;
}

static bool parse_delimiter(parse_ctx *cx, json_t *root, profile *p)
{
    char *delim = NULL;
    if (!get_str(cx, root, "delimiter", "delimiter", false, false, &delim))
        return false;
    p->delimiter = ',';
    if (delim) {
        bool one = strlen(delim) == 1 && delim[0] != '"' && delim[0] != '\n' && delim[0] != '\r';
        p->delimiter = delim[0];
        free(delim);
        if (!one)
            return bad(cx, "delimiter", "must be one character other than a quote or line break");
    }
    return true;
}

/* The zone named by the timezone member (read by parse_timezone), if any. */
static bool resolve_timezone(parse_ctx *cx, json_t *root, profile *p)
{
    (void)root;
    if (!p->timezone)
        return true;
    buf why = BUF_INIT;
    bool ok = tz_resolve(p->timezone, &p->tz, &why);
    if (!ok)
        bad(cx, "timezone", buf_cstr(&why));
    buf_free(&why);
    return ok;
}

/* framing.row_type: the first column names the row's type. */
static bool parse_row_type(parse_ctx *cx, json_t *fr, profile *p)
{
    json_t *rt = json_object_get(fr, "row_type");
    if (!rt || json_is_null(rt))
        return true;
    static const char *const rt_allowed[] = {"header", "data", "zone", NULL};
    if (!json_is_object(rt))
        return bad(cx, "framing.row_type", "must be an object (header, data)");
    if (!only_members(cx, rt, "framing.row_type", rt_allowed) ||
        !get_str(cx, rt, "header", "framing.row_type.header", true, false,
                 &p->row_type_header) ||
        !get_strv(cx, rt, "data", "framing.row_type.data", &p->row_type_data,
                  &p->n_row_type_data) ||
        !get_str(cx, rt, "zone", "framing.row_type.zone", false, false, &p->zone_row))
        return false;
    if (p->n_row_type_data == 0)
        return bad(cx, "framing.row_type.data", "is required");
    return true;
}

static bool parse_framing(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *fr = json_object_get(root, "framing");
    if (!fr || json_is_null(fr))
        return true;
    if (!json_is_object(fr))
        return bad(cx, "framing", "must be an object");
    static const char *const allowed[] = {"skip_prefix", "row_type", "end_prefix", NULL};
    if (!only_members(cx, fr, "framing", allowed) ||
        !get_strv(cx, fr, "skip_prefix", "framing.skip_prefix", &p->skip_prefix,
                  &p->n_skip_prefix) ||
        !get_str(cx, fr, "end_prefix", "framing.end_prefix", false, false, &p->end_prefix))
        return false;
    return parse_row_type(cx, fr, p);
}

static bool parse_cleanup(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *cl = json_object_get(root, "cleanup");
    if (!cl || json_is_null(cl))
        return true;
    if (!json_is_object(cl))
        return bad(cx, "cleanup", "must be an object");
    static const char *const allowed[] = {"strip_prefix", "strip_suffix", "trim", NULL};
    if (!only_members(cx, cl, "cleanup", allowed) ||
        !get_str(cx, cl, "strip_prefix", "cleanup.strip_prefix", false, false,
                 &p->strip_prefix) ||
        !get_str(cx, cl, "strip_suffix", "cleanup.strip_suffix", false, false,
                 &p->strip_suffix))
        return false;
    json_t *t = json_object_get(cl, "trim");
    if (t && !json_is_boolean(t))
        return bad(cx, "cleanup.trim", "must be true or false");
    p->trim = t && json_is_true(t);
    return true;
}

/* trailer.totals: [{"summary": COLUMN | "line": PREFIX, "label": TEXT,
 * "sum": COLUMN, "kind": KIND}]. */
static bool parse_totals(parse_ctx *cx, json_t *tr, profile *p)
{
    json_t *a = json_object_get(tr, "totals");
    if (!a || json_is_null(a))
        return true;
    if (!json_is_array(a) || json_array_size(a) == 0)
        return bad(cx, "trailer.totals", "must be a non-empty array of totals");
    p->totals = calloc(json_array_size(a), sizeof *p->totals);
    if (!p->totals) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    static const char *const allowed[] = {"summary", "line", "label", "sum", "kind", "count",
                                          NULL};
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *t = json_array_get(a, i);
        char path[64], sub[96];
        snprintf(path, sizeof path, "trailer.totals[%zu]", i);
        if (!json_is_object(t))
            return bad(cx, path, "must be an object (summary or line and label, sum, kind)");
        money_total *m = &p->totals[p->n_totals++];
#define TOTAL_STR(name, field, req)                                                    \
    (snprintf(sub, sizeof sub, "%s.%s", path, name),                                   \
     get_str(cx, t, name, sub, req, false, &m->field))
        json_t *cnt = json_object_get(t, "count");
        if (cnt && !json_is_boolean(cnt))
            return bad(cx, (snprintf(sub, sizeof sub, "%s.count", path), sub),
                       "must be true or false");
        m->count = json_is_true(cnt);
        json_t *sum = json_object_get(t, "sum");
        if (!only_members(cx, t, path, allowed) || !TOTAL_STR("summary", summary, false) ||
            !TOTAL_STR("line", line, false) || !TOTAL_STR("label", label, false) ||
            !TOTAL_STR("kind", kind, false))
            return false;
        if (m->count && sum)
            return bad(cx, path, "counts rows (\"count\": true): it has no \"sum\"");
        if (json_is_array(sum)) {
            /* [C, ALT]: the column an older layout names instead. */
            snprintf(sub, sizeof sub, "%s.sum", path);
            json_t *c = json_array_get(sum, 0), *alt = json_array_get(sum, 1);
            if (json_array_size(sum) != 2 || !json_is_string(c) || !json_is_string(alt) ||
                json_string_length(c) == 0 || json_string_length(alt) == 0)
                return bad(cx, sub, "must be a column, or [column, the older layout's column]");
            if (!dup_str(cx, json_string_value(c), &m->sum) ||
                !dup_str(cx, json_string_value(alt), &m->sum_alt))
                return false;
        } else if (!m->count && !TOTAL_STR("sum", sum, true)) {
            return false;
        }
#undef TOTAL_STR
        if (!m->summary == !m->line)
            return bad(cx, path, "needs one of \"summary\" (a summary column) or \"line\" (a "
                                 "framing line's prefix, with \"label\")");
        if (m->summary && !p->end_prefix)
            return bad(cx, path, "\"summary\" needs framing.end_prefix (the summary header)");
        if (m->line && !m->label)
            return bad(cx, path, "\"line\" needs \"label\": the text before the amount");
        if (m->label && !m->line)
            return bad(cx, path, "\"label\" goes with \"line\"");
    }
    return true;
}

/* trailer.footers: [{"row_type": "SC", "counts": "section|report|file",
 * "optional": true|false}],
 * with trailer.section_start and trailer.file_start. */
static bool parse_footers(parse_ctx *cx, json_t *tr, profile *p)
{
    if (!get_str(cx, tr, "section_start", "trailer.section_start", false, false,
                 &p->section_start) ||
        !get_str(cx, tr, "report_start", "trailer.report_start", false, false,
                 &p->report_start) ||
        !get_str(cx, tr, "file_start", "trailer.file_start", false, false, &p->file_start))
        return false;
    json_t *a = json_object_get(tr, "footers");
    if (!a || json_is_null(a)) {
        if (p->section_start || p->report_start || p->file_start)
            return bad(cx, p->section_start  ? "trailer.section_start"
                           : p->report_start ? "trailer.report_start"
                                             : "trailer.file_start",
                       "goes with trailer.footers");
        return true;
    }
    if (!p->row_type_header)
        return bad(cx, "trailer.footers", "needs framing.row_type (footers are row types)");
    if (!json_is_array(a) || json_array_size(a) == 0)
        return bad(cx, "trailer.footers", "must be a non-empty array");
    p->footers = calloc(json_array_size(a), sizeof *p->footers);
    if (!p->footers) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    static const char *const allowed[] = {"row_type", "counts", "optional", NULL};
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *f = json_array_get(a, i);
        char path[64], sub[96];
        snprintf(path, sizeof path, "trailer.footers[%zu]", i);
        if (!json_is_object(f))
            return bad(cx, path, "must be an object (row_type, counts)");
        footer_count *fc = &p->footers[p->n_footers++];
        char *counts = NULL;
        snprintf(sub, sizeof sub, "%s.row_type", path);
        if (!only_members(cx, f, path, allowed) ||
            !get_str(cx, f, "row_type", sub, true, false, &fc->row_type))
            return false;
        snprintf(sub, sizeof sub, "%s.counts", path);
        if (!get_str(cx, f, "counts", sub, true, false, &counts))
            return false;
        bool known = true;
        if (strcmp(counts, "section") == 0)
            fc->scope = FOOTER_SECTION;
        else if (strcmp(counts, "report") == 0)
            fc->scope = FOOTER_REPORT;
        else if (strcmp(counts, "file") == 0)
            fc->scope = FOOTER_FILE;
        else
            known = false;
        free(counts);
        if (!known)
            return bad(cx, sub, "must be \"section\", \"report\" or \"file\"");
        json_t *opt = json_object_get(f, "optional");
        snprintf(sub, sizeof sub, "%s.optional", path);
        if (opt && !json_is_boolean(opt))
            return bad(cx, sub, "must be true or false");
        fc->optional = opt && json_is_true(opt);
        if (fc->scope == FOOTER_SECTION && !p->section_start)
            return bad(cx, sub, "\"section\" needs trailer.section_start (the row type "
                                "that starts a section)");
    }
    return true;
}

/* Needs framing parsed first: count_column goes with framing.end_prefix. */
static bool parse_trailer(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *tr = json_object_get(root, "trailer");
    if (!tr || json_is_null(tr))
        return true;
    if (!json_is_object(tr))
        return bad(cx, "trailer", "must be an object");
    static const char *const allowed[] = {"count_column", "count_lines", "totals", "footers",
                                          "section_start", "report_start", "file_start", NULL};
    if (!only_members(cx, tr, "trailer", allowed) ||
        !get_str(cx, tr, "count_column", "trailer.count_column", false, false,
                 &p->count_column) ||
        !get_strv(cx, tr, "count_lines", "trailer.count_lines", &p->count_lines,
                  &p->n_count_lines) ||
        !parse_totals(cx, tr, p) || !parse_footers(cx, tr, p))
        return false;
    if (p->count_column && !p->end_prefix)
        return bad(cx, "trailer.count_column",
                   "needs framing.end_prefix (the summary header that holds the column)");
    if (p->count_column && p->count_lines)
        return bad(cx, "trailer", "has both count_column and count_lines; choose one");
    return true;
}

static bool parse_columns(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *cols = json_object_get(root, "columns");
    if (!cols)
        return bad(cx, "columns", "is required");
    if (!json_is_object(cols))
        return bad(cx, "columns", "must be an object, one member per target column");
    const char *key;
    json_t *v;
    json_object_foreach(cols, key, v) {
        int c = column_lookup(key, strlen(key));
        if (c < 0 || c == COL_PAYLOAD) {
            char m[160];
            snprintf(m, sizeof m, "columns.%s", key);
            return bad(cx, m, c == COL_PAYLOAD
                                  ? "cannot be mapped: the payload is always every source column"
                                  : "is not a column idemload fills (tenant_id, channel, "
                                    "out_trade_no, callback_type, status, received_at)");
        }
        if (p->col[c].set) {
            /* "channel" and "Channel": one column named twice (a second
             * rule would replace the first, unseen). */
            char m[160];
            snprintf(m, sizeof m, "columns.%s", key);
            return bad(cx, m, "names a column already given a rule (names are case-insensitive)");
        }
        if (!parse_rule(cx, v, (column)c, &p->col[c]))
            return false;
    }
    /* A profile only `settle` reads (a WeChat 资金账单) maps no key; one
     * that maps a key loads rows, and needs all three. */
    bool settle_only = p->settle && !p->col[COL_OUT_TRADE_NO].set;
    static const column needed[] = {COL_OUT_TRADE_NO, COL_CALLBACK_TYPE, COL_RECEIVED_AT};
    for (size_t i = 0; !settle_only && i < sizeof needed / sizeof needed[0]; i++)
        if (!p->col[needed[i]].set) {
            char m[96];
            snprintf(m, sizeof m, "columns.%s", column_name(needed[i]));
            return bad(cx, m, "is required");
        }
    return true;
}

static bool parse_utc_columns(parse_ctx *cx, json_t *root, profile *p)
{
    return get_strv(cx, root, "utc_columns", "utc_columns", &p->utc_columns,
                    &p->n_utc_columns);
}

static bool parse_refund_of(parse_ctx *cx, json_t *root, profile *p)
{
    return get_str(cx, root, "refund_of", "refund_of", false, false, &p->refund_of);
}

/* merchant: {"from": [...], "none": [...]}: the row's merchant, for
 * --tenant-map. */
static bool parse_merchant(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *m = json_object_get(root, "merchant");
    if (!m || json_is_null(m))
        return true;
    static const char *const allowed[] = {"from", "none", NULL};
    if (!json_is_object(m))
        return bad(cx, "merchant", "must be an object (from, none)");
    if (!only_members(cx, m, "merchant", allowed) ||
        !get_strv(cx, m, "from", "merchant.from", &p->merchant_from, &p->n_merchant_from) ||
        !get_strv(cx, m, "none", "merchant.none", &p->merchant_none, &p->n_merchant_none))
        return false;
    if (p->n_merchant_from == 0)
        return bad(cx, "merchant.from", "is required");
    return true;
}

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
        return bad(cx, sub, "must be an object (column or value, unit, magnitude)");
    char s2[160];
    if (!only_members(cx, o, sub, allowed))
        return false;
    snprintf(s2, sizeof s2, "%s.column", sub);
    char **cols = NULL;
    size_t n_cols = 0;
    bool got = get_strv(cx, o, "column", s2, &cols, &n_cols);
    if (got && n_cols > 2)
        got = bad(cx, s2, "names at most two columns: the bill's, and the one an older layout "
                          "names instead");
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
    if (!get_str(cx, o, "value", s2, false, false, &f->value))
        return false;
    if (!f->column == !f->value)
        return bad(cx, sub, "needs one of \"column\" (a source column) or \"value\" (a "
                            "constant)");
    json_t *u = json_object_get(o, "unit");
    snprintf(s2, sizeof s2, "%s.unit", sub);
    if (u && !json_is_null(u)) {
        if (!json_is_string(u) || (strcmp(json_string_value(u), "minor") != 0 &&
                                   strcmp(json_string_value(u), "major") != 0))
            return bad(cx, s2, "must be \"major\" or \"minor\"");
        f->minor = strcmp(json_string_value(u), "minor") == 0;
    }
    json_t *mg = json_object_get(o, "magnitude");
    snprintf(s2, sizeof s2, "%s.magnitude", sub);
    if (mg && !json_is_null(mg)) {
        if (!json_is_boolean(mg))
            return bad(cx, s2, "must be true or false");
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
        return bad(cx, sub, "must be an object (amount, fee)");
    static const char *const allowed[] = {"amount", "fee", NULL};
    return only_members(cx, o, sub, allowed) &&
           parse_money_fact(cx, o, "amount", sub, &m->settlement.amount) &&
           parse_money_fact(cx, o, "fee", sub, &m->settlement.fee);
}

/* covers: [{"header_has": [COLUMN...], "kinds": [KIND...]}]: the kinds a
 * file lists, by the first rule whose columns its header has; a rule
 * without header_has matches every header and must be the last. */
static bool parse_covers(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *a = json_object_get(root, "covers");
    if (!a || json_is_null(a))
        return true;
    if (!json_is_array(a) || json_array_size(a) == 0)
        return bad(cx, "covers", "must be a non-empty array of rules ({\"header_has\": "
                                 "[COLUMN...], \"kinds\": [KIND...]})");
    if (json_array_size(a) > PROFILE_MAX_COVERS) {
        char m[64];
        snprintf(m, sizeof m, "holds at most %d rules", PROFILE_MAX_COVERS);
        return bad(cx, "covers", m);
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
            return bad(cx, path, "must be an object (header_has, kinds)");
        cover_rule *c = &p->covers[p->n_covers++];
        if (!only_members(cx, r, path, allowed))
            return false;
        snprintf(sub, sizeof sub, "%s.header_has", path);
        if (!get_strv(cx, r, "header_has", sub, &c->header_has, &c->n_header_has))
            return false;
        if (!c->n_header_has && i + 1 < json_array_size(a))
            return bad(cx, path, "matches every header (no header_has), so the rules after it "
                                 "are never used: it must be the last");
        snprintf(sub, sizeof sub, "%s.kinds", path);
        if (!json_object_get(r, "kinds") || json_is_null(json_object_get(r, "kinds")))
            return bad(cx, sub, "is required: the kinds a file with that header lists");
        if (!get_strv(cx, r, "kinds", sub, &c->kinds, &c->n_kinds))
            return false;
        for (size_t k = 0; k < c->n_kinds; k++)
            if (strchr(c->kinds[k], ':'))
                return bad(cx, sub, "holds kinds without ':' (\"refund\", not "
                                    "\"refund:{...}\")");
    }
    return true;
}

/* money: [{"kind": K, "amount": FACT, "currency": FACT, "fee": FACT,
 * "settlement": {"amount": FACT, "fee": FACT}, "record": {"column": C}}]. */
static bool parse_money(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *a = json_object_get(root, "money");
    if (!a || json_is_null(a))
        return true;
    if (!json_is_array(a))
        return bad(cx, "money", "must be an array, one entry per kind");
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
            return bad(cx, path, "must be an object (kind, amount, currency, fee, settlement)");
        money_kind *m = &p->money[p->n_money++];
        snprintf(sub, sizeof sub, "%s.kind", path);
        if (!only_members(cx, k, path, allowed) ||
            !get_str(cx, k, "kind", sub, false, false, &m->kind) ||
            !parse_money_fact(cx, k, "amount", path, &m->amount) ||
            !parse_money_fact(cx, k, "currency", path, &m->currency) ||
            !parse_money_fact(cx, k, "fee", path, &m->fee) ||
            !parse_settlement(cx, k, path, m) ||
            !parse_money_fact(cx, k, "record", path, &m->record))
            return false;
        if (m->record.value || m->record.minor || m->record.magnitude)
            return bad(cx, path, "record names a column (the row's own transaction id), "
                                 "nothing else");
        if (m->kind && strchr(m->kind, ':'))
            return bad(cx, sub, "is a kind without ':' (\"refund\", not \"refund:{...}\")");
        for (size_t j = 0; j + 1 < p->n_money; j++)
            if ((!m->kind && !p->money[j].kind) ||
                (m->kind && p->money[j].kind && strcmp(m->kind, p->money[j].kind) == 0))
                return bad(cx, sub, "names a kind twice");
    }
    return true;
}

/* settle: how a row becomes a settle row (profile_settle.c); before
 * columns, which a profile only settle reads need not map. */
static bool parse_settle(parse_ctx *cx, json_t *root, profile *p)
{
    return profile_settle_parse(json_object_get(root, "settle"), p, cx->origin, cx->err);
}

/*
 * A profile's members and their parsers, run in this order: the first
 * error is the one reported, and a parser may rely on those before it.
 * timezone appears twice: its text is read with the other texts, the zone
 * resolved after them.
 */
static const struct root_member {
    const char *name;
    bool (*parse)(parse_ctx *cx, json_t *root, profile *p);
} root_members[] = {
    {"name", parse_name},
    {"description", parse_description},
    {"timezone", parse_timezone},
    {"encoding", parse_encoding},
    {"delimiter", parse_delimiter},
    {"timezone", resolve_timezone},
    {"framing", parse_framing},
    {"cleanup", parse_cleanup},
    {"trailer", parse_trailer},
    {"settle", parse_settle},
    {"columns", parse_columns},
    {"utc_columns", parse_utc_columns},
    {"refund_of", parse_refund_of},
    {"merchant", parse_merchant},
    {"covers", parse_covers},
    {"money", parse_money},
};

#define N_ROOT_MEMBERS (sizeof root_members / sizeof root_members[0])

static bool parse_root(parse_ctx *cx, json_t *root, profile *p)
{
    if (!json_is_object(root)) {
        buf_printf(cx->err, "%s: a profile is a JSON object", cx->origin);
        return false;
    }
    const char *top[N_ROOT_MEMBERS + 1];
    for (size_t i = 0; i < N_ROOT_MEMBERS; i++)
        top[i] = root_members[i].name;
    top[N_ROOT_MEMBERS] = NULL;
    if (!only_members(cx, root, "", top))
        return false;
    for (size_t i = 0; i < N_ROOT_MEMBERS; i++)
        if (!root_members[i].parse(cx, root, p))
            return false;
    return true;
}

profile *profile_parse(const char *json, size_t len, const char *origin, buf *err)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        buf_printf(err, "%s: not a valid profile file: line %d: %s", origin, je.line, je.text);
        return NULL;
    }
    profile *p = calloc(1, sizeof *p);
    if (!p) {
        json_decref(root);
        buf_printf(err, "out of memory");
        return NULL;
    }
    parse_ctx cx = {.origin = origin, .err = err};
    bool ok = parse_root(&cx, root, p);
    json_decref(root);
    if (!ok) {
        profile_free(&p);
        return NULL;
    }
    return p;
}

profile *profile_builtin(const char *name, buf *err)
{
    const char *json = profile_builtin_source(name);
    if (json)
        return profile_parse(json, strlen(json), name, err);
    buf_printf(err, "no built-in profile '%s' (built-in:", name);
    for (size_t i = 0; i < N_BUILTINS; i++)
        buf_printf(err, " %s", builtins[i].name);
    buf_printf(err, "; or give a profile file PATH.json)");
    return NULL;
}

profile *profile_load_file(const char *path, buf *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        buf_printf(err, "%s: cannot open the profile file: %s", path, strerror(errno));
        return NULL;
    }
    buf text = BUF_INIT;
    char tmp[8192];
    size_t n;
    bool ok = true;
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0) {
        if (text.len + n > (1u << 20) || !buf_append(&text, tmp, n)) {
            ok = false;
            break;
        }
    }
    bool rerr = ferror(fp);
    fclose(fp);
    profile *p = NULL;
    if (!ok)
        buf_printf(err, "%s: a profile file is at most 1 MiB", path);
    else if (rerr)
        buf_printf(err, "%s: cannot read the profile file", path);
    else
        p = profile_parse(buf_cstr(&text), text.len, path, err);
    buf_free(&text);
    return p;
}

bool profile_names_file(const char *name_or_path)
{
    size_t n = strlen(name_or_path);
    return strchr(name_or_path, '/') || (n > 5 && strcmp(name_or_path + n - 5, ".json") == 0);
}

profile *profile_load(const char *name_or_path, buf *err)
{
    if (profile_names_file(name_or_path))
        return profile_load_file(name_or_path, err);
    return profile_builtin(name_or_path, err);
}

bool profile_override(profile *p, const char *encoding, const char *timezone, buf *err)
{
    if (encoding) {
        if (strcmp(encoding, "gbk") == 0 || strcmp(encoding, "GBK") == 0)
            p->encoding = PROFILE_GBK;
        else if (strcmp(encoding, "utf-8") == 0 || strcmp(encoding, "UTF-8") == 0 ||
                 strcmp(encoding, "utf8") == 0)
            p->encoding = PROFILE_UTF8;
        else {
            buf_printf(err, "--encoding must be utf-8 or gbk, not '%s'", encoding);
            return false;
        }
    }
    if (timezone) {
        tz_zone z;
        buf why = BUF_INIT;
        if (!tz_resolve(timezone, &z, &why)) {
            buf_printf(err, "--timezone: %s", buf_cstr(&why));
            buf_free(&why);
            return false;
        }
        buf_free(&why);
        char *copy = strdup(timezone);
        if (!copy) {
            tz_free(&z);
            buf_printf(err, "out of memory");
            return false;
        }
        tz_free(&p->tz);
        free(p->timezone);
        p->tz = z;
        p->timezone = copy;
    }
    return true;
}

bool profile_has_trailer(const profile *p)
{
    return p->count_column != NULL || p->n_count_lines > 0 || p->n_totals > 0 ||
           p->n_footers > 0;
}

void profile_override_delimiter(profile *p, char delimiter)
{
    p->delimiter = delimiter;
}

bool profile_add_kind_rename(profile *p, const char *from, const char *to, buf *err)
{
    if (!*from || strchr(from, ':') || !*to) {
        buf_printf(err, "--kind takes FROM=TO, a kind without ':' and its new name (--kind "
                        "pay=pay_success); got '%s=%s'", from, to);
        return false;
    }
    for (size_t i = 0; i < p->n_renames; i++)
        if (strcmp(p->renames[i].from, from) == 0) {
            buf_printf(err, "--kind %s is given twice", from);
            return false;
        }
    profile_kind_rename *n = realloc(p->renames, (p->n_renames + 1) * sizeof *n);
    if (!n) {
        buf_printf(err, "out of memory");
        return false;
    }
    p->renames = n;
    char *f = strdup(from), *t = strdup(to);
    if (!f || !t) {
        free(f);
        free(t);
        buf_printf(err, "out of memory");
        return false;
    }
    p->renames[p->n_renames++] = (profile_kind_rename){f, t};
    return true;
}

bool profile_set_tenant_map(profile *p, struct tenant_map *map, const char *path, buf *err)
{
    if (p->n_merchant_from == 0) {
        tenant_map_free(&map);
        buf_printf(err, "--tenant-map: profile %s names no merchant column (add a \"merchant\" "
                        "member to a custom profile)", p->name);
        return false;
    }
    char *copy = strdup(path);
    if (!copy) {
        tenant_map_free(&map);
        buf_printf(err, "out of memory");
        return false;
    }
    tenant_map_free(&p->tenants);
    free(p->tenant_map_path);
    p->tenants = map;
    p->tenant_map_path = copy;
    return true;
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

/* --- printing ----------------------------------------------------------- */

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
