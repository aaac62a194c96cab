/*
 * tenant_map.c - the merchant -> tenant_id map of --tenant-map (see
 * tenant_map.h): parsed once, sorted, looked up by binary search.
 */
#include "input/tenant_map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/record.h"
#include "rules/validate.h"

typedef struct tm_entry {
    char *merchant;
    char *tenant;
} tm_entry;

struct tenant_map {
    tm_entry *e;
    size_t n;
};

void tenant_map_free(tenant_map **tp)
{
    tenant_map *t = *tp;
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->e[i].merchant);
        free(t->e[i].tenant);
    }
    free(t->e);
    free(t);
    *tp = NULL;
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const tm_entry *)a)->merchant, ((const tm_entry *)b)->merchant);
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* Field k (0 or 1) of a line split at its one comma, trimmed, with the
 * quotes of a quoted field taken off. */
static void field_of(const char *s, size_t n, const char **p, size_t *len)
{
    trim_white_space(&s, &n);
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    *p = s;
    *len = n;
}

/* Appends MERCHANT -> TENANT (TENANT already allocated: taken over, also on
 * failure). False: out of memory. */
static bool add_entry(tenant_map *t, size_t *cap, const char *m, size_t mn, char *tenant)
{
    if (t->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        tm_entry *ne = realloc(t->e, nc * sizeof *ne);
        if (!ne) {
            free(tenant);
            return false;
        }
        t->e = ne;
        *cap = nc;
    }
    char *mv = dup_n(m, mn);
    if (!mv) {
        free(tenant);
        return false;
    }
    t->e[t->n++] = (tm_entry){mv, tenant};
    return true;
}

/* One non-blank line LINE (N bytes, without its line end), number LINENO:
 * the header if *HEADER is still false, else an entry.  False: ERR says why. */
static bool parse_line(tenant_map *t, size_t *cap, bool *header, const char *line, size_t n,
                       size_t lineno, const char *origin, buf *err)
{
    if (memchr(line, '\0', n)) {
        buf_printf(err, "%s: line %zu: a NUL byte", origin, lineno);
        return false;
    }
    const char *comma = memchr(line, ',', n);
    if (!comma || memchr(comma + 1, ',', n - (size_t)(comma + 1 - line))) {
        buf_printf(err, "%s: line %zu: expected two fields, merchant,tenant_id", origin, lineno);
        return false;
    }
    const char *m, *v;
    size_t mn, vn;
    field_of(line, (size_t)(comma - line), &m, &mn);
    field_of(comma + 1, n - (size_t)(comma + 1 - line), &v, &vn);
    if (!*header) {
        *header = true;
        if (mn == 8 && memcmp(m, "merchant", 8) == 0 && vn == 9 && memcmp(v, "tenant_id", 9) == 0)
            return true;
        buf_printf(err, "%s: line %zu: the header must be merchant,tenant_id", origin, lineno);
        return false;
    }
    if (mn == 0) {
        buf_printf(err, "%s: line %zu: an empty merchant", origin, lineno);
        return false;
    }
    char *tv = dup_n(v, vn);
    if (!tv) {
        buf_printf(err, "out of memory");
        return false;
    }
    buf why = BUF_INIT;
    bool valid = validate_preset(COL_TENANT_ID, tv, &why);
    if (!valid)
        buf_printf(err, "%s: line %zu: %s", origin, lineno, buf_cstr(&why));
    buf_free(&why);
    if (!valid) {
        free(tv);
        return false;
    }
    if (!add_entry(t, cap, m, mn, tv)) {
        buf_printf(err, "out of memory");
        return false;
    }
    return true;
}

/* Sorts the entries; false (ERR says which) where one merchant has two tenants. */
static bool sort_and_check(tenant_map *t, const char *origin, buf *err)
{
    if (t->n)
        qsort(t->e, t->n, sizeof *t->e, entry_cmp);
    for (size_t i = 1; i < t->n; i++)
        if (strcmp(t->e[i].merchant, t->e[i - 1].merchant) == 0 &&
            strcmp(t->e[i].tenant, t->e[i - 1].tenant) != 0) {
            buf_printf(err, "%s: merchant %s is given two tenants (%s and %s)", origin,
                       t->e[i].merchant, t->e[i - 1].tenant, t->e[i].tenant);
            return false;
        }
    return true;
}

tenant_map *tenant_map_parse(const char *text, size_t len, const char *origin, buf *err)
{
    tenant_map *t = calloc(1, sizeof *t);
    if (!t) {
        buf_printf(err, "out of memory");
        return NULL;
    }
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        text += 3;
        len -= 3;
    }
    size_t cap = 0, lineno = 0;
    bool header = false, ok = true;
    for (size_t at = 0; at < len && ok;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *line = text + at;
        size_t n = end - at;
        at = end + 1;
        lineno++;
        if (n && line[n - 1] == '\r')
            n--;
        const char *q = line;
        size_t qn = n;
        trim_white_space(&q, &qn);
        if (qn > 0)
            ok = parse_line(t, &cap, &header, line, n, lineno, origin, err);
    }
    if (ok && !header) {
        buf_printf(err, "%s: empty: expected the header merchant,tenant_id", origin);
        ok = false;
    }
    if (ok)
        ok = sort_and_check(t, origin, err);
    if (!ok)
        tenant_map_free(&t);
    return t;
}

tenant_map *tenant_map_load(const char *path, buf *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        buf_printf(err, "--tenant-map %s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    buf text = BUF_INIT;
    char tmp[8192];
    size_t n;
    bool ok = true;
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
        if (!buf_append(&text, tmp, n)) {
            ok = false;
            break;
        }
    bool rerr = ferror(fp);
    fclose(fp);
    tenant_map *t = NULL;
    if (!ok)
        buf_printf(err, "out of memory");
    else if (rerr)
        buf_printf(err, "--tenant-map %s: cannot read", path);
    else
        t = tenant_map_parse(text.data ? text.data : "", text.len, path, err);
    buf_free(&text);
    return t;
}

const char *tenant_map_get(const tenant_map *t, const char *m, size_t n)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *k = t->e[mid].merchant;
        size_t kn = strlen(k);
        int c = memcmp(k, m, kn < n ? kn : n);
        if (c == 0)
            c = kn < n ? -1 : kn > n;
        if (c == 0)
            return t->e[mid].tenant;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
