/*
 * s3_list.c - s3_expand (s3.h): object URLs with a glob or ending in '/'
 * listed (ListObjectsV2, every page), in byte order of their keys.
 */
#include "input/s3.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "input/s3_request.h"

/* ---- listing ------------------------------------------------------------ */

typedef struct listed {
    char *key;
} listed;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const listed *)a)->key, ((const listed *)b)->key);
}

/*
 * Lists every key under prefix in bucket (ListObjectsV2, every page,
 * continuation tokens) whose key matches glob (NULL: all), skipping
 * "folder" keys ending in '/'.  Appends them to *keys / *n (malloc'd).
 */
static bool list_keys(const char *url, const char *bucket, const char *prefix,
                      const char *glob, listed **keys, size_t *n, buf *err)
{
    buf token = BUF_INIT, query = BUF_INIT, http = BUF_INIT, key = BUF_INIT;
    s3_response r = {.body = BUF_INIT, .body_max = S3_LIST_BODY_MAX};
    size_t cap = 0;
    bool ok = true;
    for (bool more = true; ok && more;) {
        buf_clear(&query);
        buf_clear(&http);
        /* In byte order of the names: libcurl signs the query as given. */
        ok = (!token.len || s3_query_append(&query, "continuation-token", buf_cstr(&token))) &&
             s3_query_append(&query, "list-type", "2") &&
             (!*prefix || s3_query_append(&query, "prefix", prefix)) &&
             s3_conf_url(s3_request_conf(), bucket, "", buf_cstr(&query), &http);
        if (!ok) {
            buf_printf(err, "%s: out of memory", url);
            break;
        }
        ok = s3_perform(buf_cstr(&http), url, false, &r, err);
        if (!ok)
            break;
        const char *body = buf_cstr(&r.body), *at = NULL;
        buf contents = BUF_INIT;
        while (ok && s3_xml_text(body, &at, "Contents", &contents)) {
            const char *in = NULL;
            if (!s3_xml_text(buf_cstr(&contents), &in, "Key", &key))
                continue;
            const char *k = buf_cstr(&key);
            if (!*k || k[key.len - 1] == '/')
                continue;
            if (glob && fnmatch(glob, k, FNM_PATHNAME | FNM_PERIOD) != 0)
                continue;
            if (*n == cap) {
                cap = cap ? cap * 2 : 64;
                listed *grown = realloc(*keys, cap * sizeof **keys);
                ok = grown != NULL;
                if (ok)
                    *keys = grown;
            }
            if (ok && !((*keys)[*n].key = strdup(k)))
                ok = false;
            if (ok)
                (*n)++;
            else
                buf_printf(err, "%s: out of memory", url);
        }
        buf_free(&contents);
        at = NULL;
        buf trunc = BUF_INIT;
        more = s3_xml_text(body, &at, "IsTruncated", &trunc) && strcmp(buf_cstr(&trunc), "true") == 0;
        buf_free(&trunc);
        at = NULL;
        if (ok && more && !s3_xml_text(body, &at, "NextContinuationToken", &token)) {
            buf_printf(err, "%s: the listing is truncated but has no NextContinuationToken", url);
            ok = false;
        }
        if (ok && r.body.len >= S3_LIST_BODY_MAX) {
            buf_printf(err, "%s: a listing page of more than %zu bytes", url, S3_LIST_BODY_MAX);
            ok = false;
        }
    }
    buf_free(&token);
    buf_free(&query);
    buf_free(&http);
    buf_free(&key);
    buf_free(&r.body);
    return ok;
}

static bool paths_add(s3_paths *p, char *path, bool owned)
{
    char **v = realloc(p->v, (p->n + 1) * sizeof *v);
    if (v)
        p->v = v;
    bool *o = v ? realloc(p->owned, (p->n + 1) * sizeof *o) : NULL;
    if (o)
        p->owned = o;
    if (!v || !o)
        return false;
    p->v[p->n] = path;
    p->owned[p->n] = owned;
    p->n++;
    return true;
}

/* Expands one prefix or glob URL into p; false with *err (a line) when it
 * cannot be listed or matches nothing. *oom on out of memory. */
static bool expand_one(const char *url, s3_paths *p, buf *err, bool *oom)
{
    char *bucket, *key;
    buf line = BUF_INIT;
    if (!s3_split_url(url, &bucket, &key, &line)) {
        buf_printf(err, "%s\n", buf_cstr(&line));
        buf_free(&line);
        return false;
    }
    size_t lit = strcspn(key, "*?[");
    bool glob = key[lit] != '\0';
    char *prefix = strndup(key, lit);
    listed *keys = NULL;
    size_t n = 0;
    bool ok = prefix && list_keys(url, bucket, prefix, glob ? key : NULL, &keys, &n, &line);
    if (!prefix) {
        *oom = true;
        ok = false;
    }
    if (ok && n == 0) {
        buf_printf(&line, "%s: no object %s (bucket %s)", url,
                   glob ? "matches the pattern" : "under the prefix", bucket);
        ok = false;
    }
    if (ok)
        qsort(keys, n, sizeof *keys, by_key);
    for (size_t i = 0; i < n; i++) {
        char *path = NULL;
        if (ok) {
            buf b = BUF_INIT;
            if (buf_printf(&b, "s3://%s/%s", bucket, keys[i].key))
                path = b.data;
            else
                buf_free(&b);
        }
        if (ok && (!path || !paths_add(p, path, true))) {
            free(path);
            *oom = true;
            ok = false;
        }
        free(keys[i].key);
    }
    if (!ok && line.len)
        buf_printf(err, "%s\n", buf_cstr(&line));
    free(keys);
    free(prefix);
    free(bucket);
    free(key);
    buf_free(&line);
    return ok;
}

bool s3_expand(char *const *in, size_t n, s3_paths *out, size_t *failed, buf *err)
{
    memset(out, 0, sizeof *out);
    *failed = 0;
    bool oom = false;
    for (size_t i = 0; i < n && !oom; i++) {
        const char *a = in[i];
        if (!s3_is_url(a)) {
            oom = !paths_add(out, in[i], false);
            continue;
        }
        const char *key = strchr(a + 5, '/');
        bool many = !key || !key[1] || key[strlen(key) - 1] == '/' || strpbrk(key, "*?[");
        if (!many)
            oom = !paths_add(out, in[i], false);
        else if (!expand_one(a, out, err, &oom))
            (*failed)++;
    }
    return !oom;
}

void s3_paths_free(s3_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->owned[i])
            free(p->v[i]);
    free(p->v);
    free(p->owned);
    memset(p, 0, sizeof *p);
}
