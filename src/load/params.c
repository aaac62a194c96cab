/*
 * params.c - the row-shaping parameters as one canonical text (see
 * params.h).  The one list of them is params_describe(): a parameter that
 * shapes rows and is not written there would let the ledger skip a file
 * that the new parameters would load differently.
 */
#include "load/params.h"

#include <stdlib.h>
#include <string.h>

#include "input/profile.h"
#include "core/record.h"
#include "util/digest.h"

/* Appends value with '\', ';' and newlines escaped, so the text is one
 * line per parameter and a list's separator is never a value's. */
static bool put_escaped(buf *out, const char *v)
{
    bool ok = true;
    for (; ok && v && *v; v++) {
        if (*v == '\\' || *v == ';')
            ok = buf_append_char(out, '\\') && buf_append_char(out, *v);
        else if (*v == '\n')
            ok = buf_append_str(out, "\\n");
        else
            ok = buf_append_char(out, *v);
    }
    return ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_i16(const void *a, const void *b)
{
    return *(const int16_t *)a - *(const int16_t *)b;
}

/* "--set": idemload's own columns and the others, as "col=value" sorted. */
static bool put_sets(const config *cfg, buf *out)
{
    buf items[COL_COUNT + MAX_EXTRA_SETS];
    const char *sorted[COL_COUNT + MAX_EXTRA_SETS];
    size_t n = 0;
    bool ok = true;
    for (int c = 0; c < COL_COUNT; c++) {
        if (!cfg->presets.value[c])
            continue;
        items[n] = (buf)BUF_INIT;
        ok = ok && put_escaped(&items[n], column_name((column)c)) &&
             buf_append_char(&items[n], '=') && put_escaped(&items[n], cfg->presets.value[c]);
        n++;
    }
    for (size_t i = 0; i < cfg->n_extra_set; i++) {
        items[n] = (buf)BUF_INIT;
        ok = ok && put_escaped(&items[n], cfg->extra_set[i].name) &&
             buf_append_char(&items[n], '=') && put_escaped(&items[n], cfg->extra_set[i].value);
        n++;
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = buf_cstr(&items[i]);
    qsort(sorted, n, sizeof sorted[0], cmp_str);
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || buf_append_char(out, ';')) && buf_append_str(out, sorted[i]);
    for (size_t i = 0; i < n; i++)
        buf_free(&items[i]);
    return ok;
}

/* "--kind": the renames as "from=to" sorted. */
static bool put_kinds(const config *cfg, buf *out)
{
    buf items[MAX_KIND_RENAMES];
    const char *sorted[MAX_KIND_RENAMES];
    size_t n = cfg->n_kind_rename;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        items[i] = (buf)BUF_INIT;
        ok = ok && put_escaped(&items[i], cfg->kind_rename[i].from) &&
             buf_append_char(&items[i], '=') && put_escaped(&items[i], cfg->kind_rename[i].to);
        sorted[i] = buf_cstr(&items[i]);
    }
    qsort(sorted, n, sizeof sorted[0], cmp_str);
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || buf_append_char(out, ';')) && buf_append_str(out, sorted[i]);
    for (size_t i = 0; i < n; i++)
        buf_free(&items[i]);
    return ok;
}

/* "--profile": the content of the profile as given (before --encoding and
 * --timezone, which have their own lines), as a digest of its canonical
 * JSON, so a file reformatted is the same profile. */
static bool put_profile(const config *cfg, buf *out, buf *err)
{
    if (!cfg->profile_name)
        return buf_append_str(out, "none");
    profile *p = profile_load(cfg->profile_name, err);
    if (!p)
        return false;
    buf json = BUF_INIT;
    sha256_ctx h;
    char hex[65] = "";
    bool ok = profile_to_json(p, &json) && sha256_init(&h);
    if (ok) {
        sha256_update(&h, json.data, json.len);
        ok = sha256_final_hex(&h, hex);
    }
    ok = ok && buf_printf(out, "sha256:%s", hex);
    if (!ok && !err->len)
        buf_printf(err, "--profile %s: out of memory", cfg->profile_name);
    buf_free(&json);
    profile_free(&p);
    return ok;
}

/* "--tenant-map": the content of the file, as a digest. */
static bool put_tenant_map(const config *cfg, buf *out, buf *err)
{
    if (!cfg->tenant_map_path)
        return buf_append_str(out, "none");
    char hex[65];
    int64_t size;
    buf why = BUF_INIT;
    bool ok = digest_file(cfg->tenant_map_path, hex, &size, &why);
    if (ok)
        ok = buf_printf(out, "sha256:%s", hex);
    else
        buf_printf(err, "--tenant-map %s: %s", cfg->tenant_map_path, buf_cstr(&why));
    buf_free(&why);
    return ok;
}

bool params_describe(const config *cfg, input_format fmt, buf *out, buf *err)
{
    int16_t finals[MAX_FINAL_STATUSES];
    size_t nf = cfg->n_final_status;
    memcpy(finals, cfg->final_status, nf * sizeof finals[0]);
    qsort(finals, nf, sizeof finals[0], cmp_i16);
    char delim[2] = {cfg->delimiter, '\0'};
    buf_clear(out);
    /* The list: every parameter that shapes rows, one line each. */
    bool ok = buf_append_str(out, "profile=") && put_profile(cfg, out, err) &&
              buf_append_str(out, "\nset=") && put_sets(cfg, out) &&
              buf_append_str(out, "\nkind=") && put_kinds(cfg, out) &&
              buf_append_str(out, "\ntenant-map=") && put_tenant_map(cfg, out, err) &&
              buf_append_str(out, "\ntimezone=") &&
              put_escaped(out, cfg->timezone ? cfg->timezone : "(the profile's)") &&
              buf_append_str(out, "\nencoding=") &&
              put_escaped(out, cfg->encoding ? cfg->encoding : "(the profile's)") &&
              buf_append_str(out, "\ndelimiter=") && put_escaped(out, delim) &&
              buf_append_str(out, "\nformat=") &&
              buf_append_str(out, cfg->profile_name ? "(the profile's)" : format_name(fmt)) &&
              buf_append_str(out, "\non-conflict=") &&
              buf_append_str(out, cfg->conflict == CONFLICT_UPDATE ? "update" : "nothing") &&
              buf_append_str(out, "\nfinal-status=");
    for (size_t i = 0; ok && i < nf; i++)
        if (i == 0 || finals[i] != finals[i - 1])
            ok = buf_printf(out, "%s%d", i ? "," : "", finals[i]);
    if (!ok && !err->len)
        buf_append_str(err, "out of memory");
    return ok;
}

/* The value of parameter name (its line's rest, up to the newline) in
 * text, or NULL; *len its length. */
static const char *value_of(const char *text, const char *name, size_t nlen, size_t *len)
{
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t line = nl ? (size_t)(nl - p) : strlen(p);
        if (line > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
            *len = line - nlen - 1;
            return p + nlen + 1;
        }
        p = nl ? nl + 1 : NULL;
    }
    return NULL;
}

bool params_diff(const char *was, const char *now, buf *out)
{
    bool ok = true, first = true;
    for (const char *p = now; ok && p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t line = nl ? (size_t)(nl - p) : strlen(p);
        const char *eq = memchr(p, '=', line);
        if (eq) {
            size_t nlen = (size_t)(eq - p), wlen = 0, vlen = line - nlen - 1;
            const char *w = value_of(was, p, nlen, &wlen);
            if (!w || wlen != vlen || memcmp(w, eq + 1, vlen) != 0) {
                ok = buf_printf(out, "%s--%.*s", first ? "" : ", ", (int)nlen, p);
                if (ok && w && strncmp(w, "sha256:", 7) == 0 && strncmp(eq + 1, "sha256:", 7) == 0)
                    ok = buf_append_str(out, " (its content)");
                else if (ok && w && wlen <= 80 && vlen <= 80)
                    ok = buf_printf(out, " (was '%.*s', now '%.*s')", (int)wlen, w, (int)vlen,
                                    eq + 1);
                first = false;
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    return ok;
}
