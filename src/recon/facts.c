/*
 * facts.c - the --facts file, the statement's money facts, currency
 * exponents, --period and --grace (see facts.h).
 */
#include "recon/facts.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config.h"
#include "input/profile.h"

static const char *const fact_names[FACT_COUNT] = {"amount", "currency", "fee", "time"};

/* ISO 4217 exponents: every code whose minor unit is not 2, and the usual
 * codes of 2 so that a table lookup says "known". */
static const struct {
    const char *code;
    int exponent;
} exponents[] = {
    {"BHD", 3}, {"BIF", 0}, {"CLF", 4}, {"CLP", 0}, {"DJF", 0}, {"GNF", 0}, {"IQD", 3},
    {"ISK", 0}, {"JOD", 3}, {"JPY", 0}, {"KMF", 0}, {"KRW", 0}, {"KWD", 3}, {"LYD", 3},
    {"OMR", 3}, {"PYG", 0}, {"RWF", 0}, {"TND", 3}, {"UGX", 0}, {"UYI", 0}, {"UYW", 4},
    {"VND", 0}, {"VUV", 0}, {"XAF", 0}, {"XOF", 0}, {"XPF", 0},
    {"AUD", 2}, {"CAD", 2}, {"CHF", 2}, {"CNY", 2}, {"EUR", 2}, {"GBP", 2}, {"HKD", 2},
    {"INR", 2}, {"MOP", 2}, {"MYR", 2}, {"NZD", 2}, {"PHP", 2}, {"SGD", 2}, {"THB", 2},
    {"TWD", 2}, {"USD", 2},
};

int currency_exponent(const char *code)
{
    for (size_t i = 0; i < sizeof exponents / sizeof exponents[0]; i++)
        if (strcasecmp(exponents[i].code, code) == 0)
            return exponents[i].exponent;
    return -1;
}

bool currency_exponent_at(size_t i, const char **code, int *exponent)
{
    if (i >= sizeof exponents / sizeof exponents[0])
        return false;
    *code = exponents[i].code;
    *exponent = exponents[i].exponent;
    return true;
}

static void loc_free(fact_loc *l)
{
    free(l->path);
    free(l->path_alt);
    free(l->constant);
    memset(l, 0, sizeof *l);
}

static bool loc_copy(fact_loc *dst, const fact_loc *src)
{
    *dst = (fact_loc){.minor = src->minor, .magnitude = src->magnitude,
                      .one_member = src->one_member};
    if (src->path && !(dst->path = strdup(src->path)))
        return false;
    if (src->path_alt && !(dst->path_alt = strdup(src->path_alt)))
        return false;
    if (src->constant && !(dst->constant = strdup(src->constant)))
        return false;
    return true;
}

void facts_free(facts_map *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->e[i].channel);
        free(m->e[i].kind);
        for (int f = 0; f < FACT_COUNT; f++)
            loc_free(&m->e[i].f[f]);
    }
    free(m->e);
    m->e = NULL;
    m->n = m->cap = 0;
}

/* One fact's object: {"path": "a.b", "unit": "major|minor"} or
 * {"value": "CNY"}, optionally "magnitude": true.  Members that contradict
 * each other ("path" and "value") or mean nothing for the fact ("unit" or
 * "magnitude" on currency or time) are refused, named, rather than one
 * silently winning. */
static bool parse_loc(json_t *o, const char *origin, const char *where, int which,
                      fact_loc *out, buf *err)
{
    if (!json_is_object(o)) {
        buf_printf(err, "%s: %s must be an object such as {\"path\": \"amount\"}", origin, where);
        return false;
    }
    const char *k;
    json_t *v;
    fact_loc l = {0};
    json_object_foreach(o, k, v) {
        if (strcmp(k, "path") == 0 && json_is_string(v) && json_string_length(v) > 0) {
            free(l.path);
            l.path = strdup(json_string_value(v));
        } else if (strcmp(k, "value") == 0 && json_is_string(v)) {
            free(l.constant);
            l.constant = strdup(json_string_value(v));
        } else if ((strcmp(k, "unit") == 0 || strcmp(k, "magnitude") == 0) &&
                   (which == FACT_CURRENCY || which == FACT_TIME)) {
            buf_printf(err, "%s: %s.%s: %s is not an amount: it takes no \"%s\"", origin,
                       where, k, fact_names[which], k);
            loc_free(&l);
            return false;
        } else if (strcmp(k, "unit") == 0 && json_is_string(v) &&
                   (strcmp(json_string_value(v), "major") == 0 ||
                    strcmp(json_string_value(v), "minor") == 0)) {
            l.minor = strcmp(json_string_value(v), "minor") == 0;
        } else if (strcmp(k, "magnitude") == 0 && json_is_boolean(v)) {
            l.magnitude = json_is_true(v);
        } else {
            buf_printf(err, "%s: %s.%s: expected \"path\" (text), \"value\" (text), "
                            "\"unit\" (\"major\" or \"minor\") or \"magnitude\" (boolean)",
                       origin, where, k);
            loc_free(&l);
            return false;
        }
    }
    if (l.path && l.constant) {
        buf_printf(err, "%s: %s.value: a fact takes either \"path\" or \"value\", not both",
                   origin, where);
        loc_free(&l);
        return false;
    }
    if (!l.path && !l.constant) {
        buf_printf(err, "%s: %s names neither a \"path\" nor a \"value\"", origin, where);
        loc_free(&l);
        return false;
    }
    loc_free(out);
    *out = l;
    return true;
}

/* A level's facts ("amount", "currency", "fee", "time", and "kinds" when
 * kinds is non-NULL, which then receives it) over the inherited ones. */
static bool parse_level(json_t *o, const char *origin, const char *where, fact_loc f[FACT_COUNT],
                        json_t **kinds, buf *err)
{
    if (!json_is_object(o)) {
        buf_printf(err, "%s: %s must be an object", origin, where);
        return false;
    }
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        if (kinds && strcmp(k, "kinds") == 0) {
            if (!json_is_object(v)) {
                buf_printf(err, "%s: %s.kinds must be an object of kinds", origin, where);
                return false;
            }
            *kinds = v;
            continue;
        }
        int which = -1;
        for (int i = 0; i < FACT_COUNT; i++)
            if (strcmp(k, fact_names[i]) == 0)
                which = i;
        buf w = BUF_INIT;
        buf_printf(&w, "%s.%s", where, k);
        bool ok = which >= 0 && parse_loc(v, origin, buf_cstr(&w), which, &f[which], err);
        if (which < 0)
            buf_printf(err, "%s: %s: unknown fact (amount, currency, fee, time%s)", origin,
                       buf_cstr(&w), kinds ? ", kinds" : "");
        buf_free(&w);
        if (!ok)
            return false;
    }
    return true;
}

static facts_entry *add_entry(facts_map *m, const char *channel, const char *kind,
                              const fact_loc f[FACT_COUNT])
{
    if (m->n == m->cap) {
        /* Doubling: one realloc per entry made a large file quadratic. */
        size_t cap = m->cap ? m->cap * 2 : 8;
        facts_entry *grown = realloc(m->e, cap * sizeof *m->e);
        if (!grown)
            return NULL;
        m->e = grown;
        m->cap = cap;
    }
    facts_entry *e = &m->e[m->n++];
    memset(e, 0, sizeof *e);
    if ((channel && !(e->channel = strdup(channel))) || (kind && !(e->kind = strdup(kind))))
        return NULL;
    for (int i = 0; i < FACT_COUNT; i++)
        if (!loc_copy(&e->f[i], &f[i]))
            return NULL;
    return e;
}

static void locs_free(fact_loc f[FACT_COUNT])
{
    for (int i = 0; i < FACT_COUNT; i++)
        loc_free(&f[i]);
}

static bool locs_copy(fact_loc dst[FACT_COUNT], const fact_loc src[FACT_COUNT])
{
    for (int i = 0; i < FACT_COUNT; i++)
        if (!loc_copy(&dst[i], &src[i]))
            return false;
    return true;
}

static bool parse_channels(json_t *channels, const char *origin, const fact_loc def[FACT_COUNT],
                           facts_map *out, buf *err)
{
    const char *ch;
    json_t *cv;
    json_object_foreach(channels, ch, cv) {
        fact_loc cf[FACT_COUNT] = {{0}};
        json_t *kinds = NULL;
        buf w = BUF_INIT;
        buf_printf(&w, "channels.%s", ch);
        bool ok = locs_copy(cf, def) && parse_level(cv, origin, buf_cstr(&w), cf, &kinds, err) &&
                  add_entry(out, ch, NULL, cf);
        const char *kn;
        json_t *kv;
        if (ok && kinds) {
            json_object_foreach(kinds, kn, kv) {
                fact_loc kf[FACT_COUNT] = {{0}};
                buf kw = BUF_INIT;
                buf_printf(&kw, "%s.kinds.%s", buf_cstr(&w), kn);
                ok = locs_copy(kf, cf) && parse_level(kv, origin, buf_cstr(&kw), kf, NULL, err) &&
                     add_entry(out, ch, kn, kf);
                locs_free(kf);
                buf_free(&kw);
                if (!ok)
                    break;
            }
        }
        locs_free(cf);
        buf_free(&w);
        if (!ok) {
            if (!err->len)
                buf_printf(err, "%s: out of memory", origin);
            return false;
        }
    }
    return true;
}

bool facts_parse(const char *text, size_t len, const char *origin, facts_map *out, buf *err)
{
    memset(out, 0, sizeof *out);
    fact_loc def[FACT_COUNT] = {{0}};
    def[FACT_AMOUNT].path = strdup("amount");
    def[FACT_CURRENCY].path = strdup("currency");
    bool ok = def[FACT_AMOUNT].path && def[FACT_CURRENCY].path;
    json_t *root = NULL;
    if (ok && text) {
        json_error_t je;
        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
        if (!root || !json_is_object(root)) {
            buf_printf(err, "%s: not a JSON object%s%s", origin, root ? "" : ": ",
                       root ? "" : je.text);
            ok = false;
        }
    }
    json_t *channels = NULL;
    if (ok && root) {
        const char *k;
        json_t *v;
        json_object_foreach(root, k, v) {
            if (strcmp(k, "default") == 0) {
                ok = parse_level(v, origin, "default", def, NULL, err);
            } else if (strcmp(k, "channels") == 0 && json_is_object(v)) {
                channels = v;
            } else {
                buf_printf(err, "%s: %s: expected \"default\" or \"channels\" (an object)",
                           origin, k);
                ok = false;
            }
            if (!ok)
                break;
        }
    }
    ok = ok && add_entry(out, NULL, NULL, def);
    if (ok && channels)
        ok = parse_channels(channels, origin, def, out, err);
    if (!ok && !err->len)
        buf_printf(err, "%s: out of memory", origin);
    if (!ok)
        facts_free(out);
    locs_free(def);
    json_decref(root);
    return ok;
}

bool facts_load(const char *path, facts_map *out, buf *err)
{
    if (!path)
        return facts_parse(NULL, 0, "the default facts", out, err);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        buf_printf(err, "--facts '%s': cannot read it: %s", path, strerror(errno));
        return false;
    }
    buf text = BUF_INIT;
    char block[8192];
    size_t n;
    bool ok = true, big = false;
    while (ok && !big && (n = fread(block, 1, sizeof block, fp)) > 0) {
        big = text.len + n > FACTS_MAX_BYTES;
        ok = big || buf_append(&text, block, n);
    }
    int read_errno = ferror(fp) ? errno : 0;
    if (ferror(fp))
        ok = false;
    fclose(fp);
    if (big) {
        buf_printf(err, "--facts '%s': over %d bytes (1 MiB): a facts file names a few paths "
                        "per channel and kind", path, FACTS_MAX_BYTES);
        buf_free(&text);
        return false;
    }
    if (!ok) {
        buf_printf(err, "--facts '%s': cannot read it%s%s", path, read_errno ? ": " : "",
                   read_errno ? strerror(read_errno) : "");
        buf_free(&text);
        return false;
    }
    buf origin = BUF_INIT;
    buf_printf(&origin, "--facts '%s'", path);
    ok = facts_parse(text.data ? text.data : "", text.len, buf_cstr(&origin), out, err);
    buf_free(&origin);
    buf_free(&text);
    return ok;
}

void stmt_facts_free(stmt_facts *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].kind);
        for (int f = 0; f < FACT_COUNT; f++)
            loc_free(&s->e[i].f[f]);
        loc_free(&s->e[i].record);
    }
    free(s->e);
    s->e = NULL;
    s->n = 0;
}

static bool money_loc(const money_fact *m, fact_loc *out)
{
    *out = (fact_loc){.minor = m->minor, .magnitude = m->magnitude};
    if (m->column && !(out->path = strdup(m->column)))
        return false;
    if (m->column_alt && !(out->path_alt = strdup(m->column_alt)))
        return false;
    if (m->value && !(out->constant = strdup(m->value)))
        return false;
    return true;
}

bool stmt_facts_from_profile(const profile *p, const config *cfg, stmt_facts *out)
{
    memset(out, 0, sizeof *out);
    if (!p) {
        out->e = calloc(1, sizeof *out->e);
        if (!out->e)
            return false;
        out->n = 1;
        out->e[0].f[FACT_AMOUNT].path = strdup("amount");
        out->e[0].f[FACT_CURRENCY].path = strdup("currency");
        return out->e[0].f[FACT_AMOUNT].path && out->e[0].f[FACT_CURRENCY].path;
    }
    out->e = calloc(p->n_money ? p->n_money : 1, sizeof *out->e);
    if (!out->e)
        return false;
    for (size_t i = 0; i < p->n_money; i++) {
        const money_kind *mk = &p->money[i];
        stmt_facts_entry *e = &out->e[out->n++];
        const char *kind = mk->kind;
        for (size_t r = 0; kind && cfg && r < cfg->n_kind_rename; r++)
            if (strcmp(cfg->kind_rename[r].from, kind) == 0)
                kind = cfg->kind_rename[r].to;
        if (kind && !(e->kind = strdup(kind)))
            return false;
        if (!money_loc(&mk->amount, &e->f[FACT_AMOUNT]) ||
            !money_loc(&mk->currency, &e->f[FACT_CURRENCY]) || !money_loc(&mk->fee, &e->f[FACT_FEE]) ||
            !money_loc(&mk->record, &e->record))
            return false;
        e->record.one_member = true;
        /* A profile row's payload holds each source column as one member
         * named by its header, whatever dots the header holds. */
        for (int f = FACT_AMOUNT; f <= FACT_FEE; f++)
            e->f[f].one_member = true;
    }
    return true;
}

static bool parse_day(const char *s, size_t n, char out[11])
{
    if (n != 10 || s[4] != '-' || s[7] != '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
            return false;
    int y = atoi(s), m = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m == 2 && d == 29 && !leap)
        return false;
    memcpy(out, s, 10);
    out[10] = '\0';
    return true;
}

bool recon_parse_period(const char *s, char from[11], char to[11], buf *err)
{
    const char *dots = strstr(s, "..");
    bool ok = dots ? parse_day(s, (size_t)(dots - s), from) && parse_day(dots + 2, strlen(dots + 2), to)
                   : parse_day(s, strlen(s), from) && parse_day(s, strlen(s), to);
    if (!ok) {
        buf_printf(err, "--period takes a day YYYY-MM-DD or FROM..TO, not '%s'", s);
        return false;
    }
    if (strcmp(from, to) > 0) {
        buf_printf(err, "--period %s: FROM is after TO", s);
        return false;
    }
    return true;
}

bool recon_parse_duration(const char *s, int64_t *seconds, buf *err)
{
    size_t n = strlen(s);
    int64_t v = 0;
    bool ok = n >= 2 && n <= 8;
    for (size_t i = 0; ok && i + 1 < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            ok = false;
        else
            v = v * 10 + (s[i] - '0');
    }
    int64_t unit = 0;
    if (ok)
        unit = s[n - 1] == 'd' ? 86400 : s[n - 1] == 'h' ? 3600 : s[n - 1] == 'm' ? 60 : 0;
    if (!ok || unit == 0) {
        buf_printf(err, "--grace takes a duration Nd, Nh or Nm (2d, 36h, 90m), not '%s'", s);
        return false;
    }
    *seconds = v * unit;
    return true;
}

bool fact_path_literal(const fact_loc *l, buf *out)
{
    bool ok = buf_append_str(out, "{\"");
    for (const char *p = l->path; ok && *p; p++) {
        if (*p == '.' && !l->one_member)
            ok = buf_append_str(out, "\",\"");
        else if (*p == '"' || *p == '\\')
            ok = buf_append(out, "\\", 1) && buf_append(out, p, 1);
        else
            ok = buf_append(out, p, 1);
    }
    return ok && buf_append_str(out, "\"}");
}
