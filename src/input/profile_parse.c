/*
 * profile_parse.c - a profile file's JSON parsed into a profile (see
 * profile.h): the top-level members in a fixed order (the first error is
 * the one reported, and a member may rely on those before it), the
 * framing, the cleanup, the column rules (from, with, map, unmapped,
 * default, value), the merchant; the trailer, covers and money members
 * have files of their own (profile_members.h).
 */
#include "input/profile_members.h"
#include "input/profile_settle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            return member_bad(cx, path, "has a '}' without its '{' (write }} for a brace)");
        if (*p == '{') {
            const char *end = strchr(p + 1, '}');
            if (!end || end == p + 1 || memchr(p + 1, '{', (size_t)(end - p - 1)))
                return member_bad(cx, path, "has a '{' without a column name and its '}' "
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
        return member_bad(cx, sub, "must be a non-empty object of value -> template");
    if (r->n_from == 0)
        return member_bad(cx, sub, "needs \"from\": the column whose values it maps");
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
        if (!member_dup(cx, key, &e->match))
            return false;
        if (!json_is_string(res) && !json_is_array(res))
            return member_bad(cx, m, "must be a template or an array of templates (the first "
                              "whose columns hold values)");
        json_t *one = json_object();
        if (!one) {
            cx->oom = true;
            return false;
        }
        json_object_set(one, "r", res);
        bool ok = member_strv(cx, one, "r", m, &e->result, &e->n_result);
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
            return member_bad(cx, sub, "goes with \"map\"");
        if (json_is_string(um) && strcmp(json_string_value(um), "skip") == 0)
            r->unmapped = UNMAPPED_SKIP;
        else if (!json_is_string(um) || strcmp(json_string_value(um), "reject") != 0)
            return member_bad(cx, sub, "must be \"reject\" or \"skip\"");
    }
    return true;
}

static bool parse_rule(parse_ctx *cx, json_t *v, column c, column_rule *r)
{
    char path[96];
    snprintf(path, sizeof path, "columns.%s", column_name(c));
    if (!json_is_object(v))
        return member_bad(cx, path,
                          "must be an object (from, with, map, unmapped, default, value)");
    static const char *const allowed[] = {"from", "with", "map", "unmapped", "default", "value",
                                          NULL};
    if (!member_only(cx, v, path, allowed))
        return false;
    char sub[128];
    snprintf(sub, sizeof sub, "%s.from", path);
    if (!member_strv(cx, v, "from", sub, &r->from, &r->n_from))
        return false;
    snprintf(sub, sizeof sub, "%s.with", path);
    if (!member_strv(cx, v, "with", sub, &r->with, &r->n_with))
        return false;
    snprintf(sub, sizeof sub, "%s.value", path);
    if (!member_str(cx, v, "value", sub, false, false, &r->value))
        return false;
    if (r->value && !check_template(cx, r->value, sub))
        return false;
    snprintf(sub, sizeof sub, "%s.default", path);
    if (!member_str(cx, v, "default", sub, false, false, &r->fallback))
        return false;
    if (r->fallback && !check_template(cx, r->fallback, sub))
        return false;
    if (r->fallback && r->n_from == 0)
        return member_bad(cx, sub,
                          "goes with \"from\": it is used when no source column holds a value");
    snprintf(sub, sizeof sub, "%s.with", path);
    if (r->n_with && !json_object_get(v, "map"))
        return member_bad(cx, sub, "goes with \"map\"");
    snprintf(sub, sizeof sub, "%s.map", path);
    if (!parse_rule_map(cx, json_object_get(v, "map"), sub, r))
        return false;
    if (!parse_rule_unmapped(cx, v, path, r))
        return false;
    if (r->value && r->n_from > 0)
        return member_bad(cx, path, "has both \"from\" and \"value\": a constant or template goes "
                                    "in \"value\", mapped results in \"map\"");
    if (!r->value && r->n_from == 0)
        return member_bad(cx, path, "needs \"from\" (source columns) or \"value\" (a constant or "
                                    "template)");
    r->set = true;
    return true;
}

static bool parse_name(parse_ctx *cx, json_t *root, profile *p)
{
    return member_str(cx, root, "name", "name", true, false, &p->name);
}

static bool parse_description(parse_ctx *cx, json_t *root, profile *p)
{
    return member_str(cx, root, "description", "description", false, true, &p->description);
}

/* The zone's text only: it is resolved after the encoding and delimiter. */
static bool parse_timezone(parse_ctx *cx, json_t *root, profile *p)
{
    return member_str(cx, root, "timezone", "timezone", false, false, &p->timezone);
}

static bool parse_encoding(parse_ctx *cx, json_t *root, profile *p)
{
    char *enc = NULL;
    if (!member_str(cx, root, "encoding", "encoding", false, false, &enc))
        return false;
    p->encoding = PROFILE_UTF8;
    if (enc) {
        bool gbk = strcmp(enc, "gbk") == 0 || strcmp(enc, "GBK") == 0;
        bool utf8 = strcmp(enc, "utf-8") == 0 || strcmp(enc, "UTF-8") == 0;
        free(enc);
        if (!gbk && !utf8)
            return member_bad(cx, "encoding", "must be \"utf-8\" or \"gbk\"");
        p->encoding = gbk ? PROFILE_GBK : PROFILE_UTF8;
    }
    return true;
}

static bool parse_delimiter(parse_ctx *cx, json_t *root, profile *p)
{
    char *delim = NULL;
    if (!member_str(cx, root, "delimiter", "delimiter", false, false, &delim))
        return false;
    p->delimiter = ',';
    if (delim) {
        bool one = strlen(delim) == 1 && delim[0] != '"' && delim[0] != '\n' && delim[0] != '\r';
        p->delimiter = delim[0];
        free(delim);
        if (!one)
            return member_bad(cx, "delimiter",
                              "must be one character other than a quote or line break");
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
        member_bad(cx, "timezone", buf_cstr(&why));
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
        return member_bad(cx, "framing.row_type", "must be an object (header, data)");
    if (!member_only(cx, rt, "framing.row_type", rt_allowed) ||
        !member_str(cx, rt, "header", "framing.row_type.header", true, false,
                    &p->row_type_header) ||
        !member_strv(cx, rt, "data", "framing.row_type.data", &p->row_type_data,
                     &p->n_row_type_data) ||
        !member_str(cx, rt, "zone", "framing.row_type.zone", false, false, &p->zone_row))
        return false;
    if (p->n_row_type_data == 0)
        return member_bad(cx, "framing.row_type.data", "is required");
    return true;
}

static bool parse_framing(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *fr = json_object_get(root, "framing");
    if (!fr || json_is_null(fr))
        return true;
    if (!json_is_object(fr))
        return member_bad(cx, "framing", "must be an object");
    static const char *const allowed[] = {"skip_prefix", "row_type", "end_prefix", NULL};
    if (!member_only(cx, fr, "framing", allowed) ||
        !member_strv(cx, fr, "skip_prefix", "framing.skip_prefix", &p->skip_prefix,
                     &p->n_skip_prefix) ||
        !member_str(cx, fr, "end_prefix", "framing.end_prefix", false, false, &p->end_prefix))
        return false;
    return parse_row_type(cx, fr, p);
}

static bool parse_cleanup(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *cl = json_object_get(root, "cleanup");
    if (!cl || json_is_null(cl))
        return true;
    if (!json_is_object(cl))
        return member_bad(cx, "cleanup", "must be an object");
    static const char *const allowed[] = {"strip_prefix", "strip_suffix", "trim", NULL};
    if (!member_only(cx, cl, "cleanup", allowed) ||
        !member_str(cx, cl, "strip_prefix", "cleanup.strip_prefix", false, false,
                    &p->strip_prefix) ||
        !member_str(cx, cl, "strip_suffix", "cleanup.strip_suffix", false, false,
                    &p->strip_suffix))
        return false;
    json_t *t = json_object_get(cl, "trim");
    if (t && !json_is_boolean(t))
        return member_bad(cx, "cleanup.trim", "must be true or false");
    p->trim = t && json_is_true(t);
    return true;
}

static bool parse_columns(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *cols = json_object_get(root, "columns");
    if (!cols)
        return member_bad(cx, "columns", "is required");
    if (!json_is_object(cols))
        return member_bad(cx, "columns", "must be an object, one member per target column");
    const char *key;
    json_t *v;
    json_object_foreach(cols, key, v) {
        int c = column_lookup(key, strlen(key));
        if (c < 0 || c == COL_PAYLOAD) {
            char m[160];
            snprintf(m, sizeof m, "columns.%s", key);
            return member_bad(cx, m,
                              c == COL_PAYLOAD
                                  ? "cannot be mapped: the payload is always every source column"
                                  : "is not a column idemload fills (tenant_id, channel, "
                                    "out_trade_no, callback_type, status, received_at)");
        }
        if (p->col[c].set) {
            /* "channel" and "Channel": one column named twice (a second
             * rule would replace the first, unseen). */
            char m[160];
            snprintf(m, sizeof m, "columns.%s", key);
            return member_bad(cx, m,
                              "names a column already given a rule (names are case-insensitive)");
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
            return member_bad(cx, m, "is required");
        }
    return true;
}

static bool parse_utc_columns(parse_ctx *cx, json_t *root, profile *p)
{
    return member_strv(cx, root, "utc_columns", "utc_columns", &p->utc_columns,
                       &p->n_utc_columns);
}

static bool parse_refund_of(parse_ctx *cx, json_t *root, profile *p)
{
    return member_str(cx, root, "refund_of", "refund_of", false, false, &p->refund_of);
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
        return member_bad(cx, "merchant", "must be an object (from, none)");
    if (!member_only(cx, m, "merchant", allowed) ||
        !member_strv(cx, m, "from", "merchant.from", &p->merchant_from, &p->n_merchant_from) ||
        !member_strv(cx, m, "none", "merchant.none", &p->merchant_none, &p->n_merchant_none))
        return false;
    if (p->n_merchant_from == 0)
        return member_bad(cx, "merchant.from", "is required");
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
    {"trailer", profile_parse_trailer},
    {"settle", parse_settle},
    {"columns", parse_columns},
    {"utc_columns", parse_utc_columns},
    {"refund_of", parse_refund_of},
    {"merchant", parse_merchant},
    {"covers", profile_parse_covers},
    {"money", profile_parse_money},
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
    if (!member_only(cx, root, "", top))
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
