/*
 * profile.c - the profile model: built-ins, profile files, and printing a
 * profile back as a file (see profile.h).
 *
 * The built-ins are written here as profile files and go through the same
 * parser as a user's file, so `idemload profiles NAME` prints exactly what
 * `--profile NAME` runs, and a printed profile loads back unchanged.
 */
#include "input/profile.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct builtin {
    const char *name;
    const char *summary;
    const char *json;
} builtin;

static const builtin builtins[] = {
    {"wechat-trade", "WeChat Pay trade bill (ALL, SUCCESS, REFUND; 27/20/29 and older 24 columns)",
     "{\"name\": \"wechat-trade\","
     " \"description\": \"WeChat Pay trade bill (ALL, SUCCESS or REFUND; current and older "
     "layouts): UTF-8, fields prefixed with a backtick, summary after the rows\","
     " \"encoding\": \"utf-8\", \"timezone\": \"+08:00\", \"delimiter\": \",\","
     " \"framing\": {\"end_prefix\": \"总交易单数\"},"
     " \"cleanup\": {\"strip_prefix\": \"`\", \"trim\": true},"
     " \"trailer\": {\"count_column\": \"总交易单数\"},"
     " \"columns\": {"
     "  \"channel\": {\"value\": \"wechat\"},"
     "  \"out_trade_no\": {\"from\": [\"商户订单号\"]},"
     "  \"callback_type\": {\"from\": [\"交易状态\"], \"map\": {\"SUCCESS\": \"pay\", "
     "\"REVOKED\": \"revoked\", \"REFUND\": \"refund:{商户退款单号}\"}, \"unmapped\": \"reject\"},"
     "  \"received_at\": {\"from\": [\"退款成功时间\", \"交易时间\"]},"
     "  \"status\": {\"value\": \"2\"}}}"},
    {"alipay-trade", "Alipay trade bill 业务明细 (the .zip as downloaded, or the GBK detail CSV)",
     "{\"name\": \"alipay-trade\","
     " \"description\": \"Alipay trade bill (业务明细): GBK, # lines before and after the rows, "
     "fields may end in a TAB; the .zip as downloaded or the detail CSV alone\","
     " \"encoding\": \"gbk\", \"timezone\": \"+08:00\", \"delimiter\": \",\","
     " \"framing\": {\"skip_prefix\": [\"#\"]},"
     " \"cleanup\": {\"strip_suffix\": \"\\t\", \"trim\": true},"
     " \"trailer\": {\"count_lines\": [\"#交易合计\", \"#退款合计\"]},"
     " \"columns\": {"
     "  \"channel\": {\"value\": \"alipay\"},"
     "  \"out_trade_no\": {\"from\": [\"商户订单号\"]},"
     "  \"callback_type\": {\"from\": [\"业务类型\"], \"map\": {\"交易\": \"pay\", "
     "\"退款\": \"refund:{退款批次号/请求号}\"}, \"unmapped\": \"reject\"},"
     "  \"received_at\": {\"from\": [\"完成时间\"]},"
     "  \"status\": {\"value\": \"2\"}}}"},
    {"stripe-balance", "Stripe itemized balance change report (charge and refund rows)",
     "{\"name\": \"stripe-balance\","
     " \"description\": \"Stripe itemized balance change report, columns by name; categories "
     "other than charge and refund are skipped\","
     " \"encoding\": \"utf-8\", \"timezone\": \"Z\", \"delimiter\": \",\","
     " \"cleanup\": {\"trim\": true},"
     " \"columns\": {"
     "  \"channel\": {\"value\": \"stripe\"},"
     "  \"out_trade_no\": {\"from\": [\"payment_metadata[order_id]\", \"charge_id\"]},"
     "  \"callback_type\": {\"from\": [\"reporting_category\"], \"map\": {\"charge\": \"pay\", "
     "\"refund\": \"refund:{source_id}\"}, \"unmapped\": \"skip\"},"
     "  \"received_at\": {\"from\": [\"created_utc\"]},"
     "  \"status\": {\"value\": \"2\"}}}"},
    {"paypal-stl", "PayPal settlement report (STL): SB rows, columns named by the CH row",
     "{\"name\": \"paypal-stl\","
     " \"description\": \"PayPal settlement report (STL): row types in the first column, CH "
     "names the columns, SB rows are transactions; T00xx payments and T1107 refunds, other "
     "codes skipped\","
     " \"encoding\": \"utf-8\", \"delimiter\": \",\","
     " \"framing\": {\"row_type\": {\"header\": \"CH\", \"data\": [\"SB\"]}},"
     " \"cleanup\": {\"trim\": true},"
     " \"columns\": {"
     "  \"channel\": {\"value\": \"paypal\"},"
     "  \"out_trade_no\": {\"from\": [\"Invoice ID\", \"Custom Field\"]},"
     "  \"callback_type\": {\"from\": [\"Transaction Event Code\"], \"map\": {\"T00*\": \"pay\", "
     "\"T1107\": \"refund:{Transaction ID}\"}, \"unmapped\": \"skip\"},"
     "  \"received_at\": {\"from\": [\"Transaction Completion Date\"]},"
     "  \"status\": {\"value\": \"2\"}}}"},
};

#define N_BUILTINS (sizeof builtins / sizeof builtins[0])

const char *const profile_builtin_names[] = {"wechat-trade", "alipay-trade", "stripe-balance",
                                             "paypal-stl", NULL};

const char *profile_builtin_summary(const char *name)
{
    for (size_t i = 0; i < N_BUILTINS; i++)
        if (strcmp(builtins[i].name, name) == 0)
            return builtins[i].summary;
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
    free_strv(p->row_type_data, p->n_row_type_data);
    free(p->end_prefix);
    free(p->strip_prefix);
    free(p->strip_suffix);
    free(p->count_column);
    free_strv(p->count_lines, p->n_count_lines);
    for (int c = 0; c < COL_COUNT; c++) {
        column_rule *r = &p->col[c];
        free_strv(r->from, r->n_from);
        for (size_t i = 0; i < r->n_map; i++) {
            free(r->map[i].match);
            free(r->map[i].result);
        }
        free(r->map);
        free(r->value);
    }
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

static bool parse_rule(parse_ctx *cx, json_t *v, column c, column_rule *r)
{
    char path[96];
    snprintf(path, sizeof path, "columns.%s", column_name(c));
    if (!json_is_object(v))
        return bad(cx, path, "must be an object (from, map, unmapped, value)");
    static const char *const allowed[] = {"from", "map", "unmapped", "value", NULL};
    if (!only_members(cx, v, path, allowed))
        return false;
    char sub[128];
    snprintf(sub, sizeof sub, "%s.from", path);
    if (!get_strv(cx, v, "from", sub, &r->from, &r->n_from))
        return false;
    snprintf(sub, sizeof sub, "%s.value", path);
    if (!get_str(cx, v, "value", sub, false, false, &r->value))
        return false;
    if (r->value && !check_template(cx, r->value, sub))
        return false;
    json_t *map = json_object_get(v, "map");
    snprintf(sub, sizeof sub, "%s.map", path);
    if (map && !json_is_null(map)) {
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
            if (!json_is_string(res) || json_string_length(res) == 0 ||
                strlen(json_string_value(res)) != json_string_length(res))
                return bad(cx, m, "must be a non-empty string (a template)");
            if (!check_template(cx, json_string_value(res), m))
                return false;
            map_entry *e = &r->map[r->n_map];
            if (!dup_str(cx, key, &e->match) || !dup_str(cx, json_string_value(res), &e->result))
                return false;
            r->n_map++;
        }
    }
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
    if (r->value && r->n_from > 0)
        return bad(cx, path, "has both \"from\" and \"value\": a constant or template goes in "
                             "\"value\", mapped results in \"map\"");
    if (!r->value && r->n_from == 0)
        return bad(cx, path, "needs \"from\" (source columns) or \"value\" (a constant or "
                             "template)");
    r->set = true;
    return true;
}

static bool parse_root(parse_ctx *cx, json_t *root, profile *p)
{
    if (!json_is_object(root)) {
        buf_printf(cx->err, "%s: a profile is a JSON object", cx->origin);
        return false;
    }
    static const char *const top[] = {"name", "description", "encoding", "timezone",
                                      "delimiter", "framing", "cleanup", "trailer",
                                      "columns", NULL};
    if (!only_members(cx, root, "", top))
        return false;
    if (!get_str(cx, root, "name", "name", true, false, &p->name) ||
        !get_str(cx, root, "description", "description", false, true, &p->description) ||
        !get_str(cx, root, "timezone", "timezone", false, false, &p->timezone))
        return false;
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
    if (p->timezone) {
        buf why = BUF_INIT;
        bool ok = tz_resolve(p->timezone, &p->tz, &why);
        if (!ok)
            bad(cx, "timezone", buf_cstr(&why));
        buf_free(&why);
        if (!ok)
            return false;
    }

    json_t *fr = json_object_get(root, "framing");
    if (fr && !json_is_null(fr)) {
        if (!json_is_object(fr))
            return bad(cx, "framing", "must be an object");
        static const char *const allowed[] = {"skip_prefix", "row_type", "end_prefix", NULL};
        if (!only_members(cx, fr, "framing", allowed) ||
            !get_strv(cx, fr, "skip_prefix", "framing.skip_prefix", &p->skip_prefix,
                      &p->n_skip_prefix) ||
            !get_str(cx, fr, "end_prefix", "framing.end_prefix", false, false, &p->end_prefix))
            return false;
        json_t *rt = json_object_get(fr, "row_type");
        if (rt && !json_is_null(rt)) {
            static const char *const rt_allowed[] = {"header", "data", NULL};
            if (!json_is_object(rt))
                return bad(cx, "framing.row_type", "must be an object (header, data)");
            if (!only_members(cx, rt, "framing.row_type", rt_allowed) ||
                !get_str(cx, rt, "header", "framing.row_type.header", true, false,
                         &p->row_type_header) ||
                !get_strv(cx, rt, "data", "framing.row_type.data", &p->row_type_data,
                          &p->n_row_type_data))
                return false;
            if (p->n_row_type_data == 0)
                return bad(cx, "framing.row_type.data", "is required");
        }
    }
    json_t *cl = json_object_get(root, "cleanup");
    if (cl && !json_is_null(cl)) {
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
    }
    json_t *tr = json_object_get(root, "trailer");
    if (tr && !json_is_null(tr)) {
        if (!json_is_object(tr))
            return bad(cx, "trailer", "must be an object");
        static const char *const allowed[] = {"count_column", "count_lines", NULL};
        if (!only_members(cx, tr, "trailer", allowed) ||
            !get_str(cx, tr, "count_column", "trailer.count_column", false, false,
                     &p->count_column) ||
            !get_strv(cx, tr, "count_lines", "trailer.count_lines", &p->count_lines,
                      &p->n_count_lines))
            return false;
        if (p->count_column && !p->end_prefix)
            return bad(cx, "trailer.count_column",
                       "needs framing.end_prefix (the summary header that holds the column)");
        if (p->count_column && p->count_lines)
            return bad(cx, "trailer", "has both count_column and count_lines; choose one");
    }
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
        if (!parse_rule(cx, v, (column)c, &p->col[c]))
            return false;
    }
    static const column needed[] = {COL_OUT_TRADE_NO, COL_CALLBACK_TYPE, COL_RECEIVED_AT};
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
        if (!p->col[needed[i]].set) {
            char m[96];
            snprintf(m, sizeof m, "columns.%s", column_name(needed[i]));
            return bad(cx, m, "is required");
        }
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
    for (size_t i = 0; i < N_BUILTINS; i++)
        if (strcmp(builtins[i].name, name) == 0)
            return profile_parse(builtins[i].json, strlen(builtins[i].json), name, err);
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

profile *profile_load(const char *name_or_path, buf *err)
{
    size_t n = strlen(name_or_path);
    if (strchr(name_or_path, '/') || (n > 5 && strcmp(name_or_path + n - 5, ".json") == 0))
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
    return p->count_column != NULL || p->n_count_lines > 0;
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
    json_t *fr = json_object();
    if (p->n_skip_prefix)
        json_object_set_new(fr, "skip_prefix", strv_json(p->skip_prefix, p->n_skip_prefix));
    if (p->row_type_header) {
        json_t *rt = json_object();
        set_str(rt, "header", p->row_type_header);
        json_object_set_new(rt, "data", strv_json(p->row_type_data, p->n_row_type_data));
        json_object_set_new(fr, "row_type", rt);
    }
    set_str(fr, "end_prefix", p->end_prefix);
    if (json_object_size(fr))
        json_object_set_new(o, "framing", fr);
    else
        json_decref(fr);
    json_t *cl = json_object();
    set_str(cl, "strip_prefix", p->strip_prefix);
    set_str(cl, "strip_suffix", p->strip_suffix);
    json_object_set_new(cl, "trim", json_boolean(p->trim));
    json_object_set_new(o, "cleanup", cl);
    if (profile_has_trailer(p)) {
        json_t *tr = json_object();
        set_str(tr, "count_column", p->count_column);
        if (p->n_count_lines)
            json_object_set_new(tr, "count_lines", strv_json(p->count_lines, p->n_count_lines));
        json_object_set_new(o, "trailer", tr);
    }
    json_t *cols = json_object();
    for (int c = 0; c < COL_COUNT; c++) {
        const column_rule *r = &p->col[c];
        if (!r->set)
            continue;
        json_t *rj = json_object();
        if (r->n_from)
            json_object_set_new(rj, "from", strv_json(r->from, r->n_from));
        if (r->n_map) {
            json_t *m = json_object();
            for (size_t i = 0; i < r->n_map; i++)
                json_object_set_new(m, r->map[i].match, json_string(r->map[i].result));
            json_object_set_new(rj, "map", m);
            set_str(rj, "unmapped", r->unmapped == UNMAPPED_SKIP ? "skip" : "reject");
        }
        set_str(rj, "value", r->value);
        json_object_set_new(cols, column_name((column)c), rj);
    }
    json_object_set_new(o, "columns", cols);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s)
        return false;
    bool ok = buf_append_str(out, s) && buf_append_char(out, '\n');
    free(s);
    return ok;
}
