/*
 * s3_conf.c - endpoint, region and credentials for S3-compatible storage
 * (s3_conf.h), from the environment and the AWS shared files.
 */
#include "input/s3_conf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An environment variable, or NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = v ? strdup(v) : NULL;
    return !v || *dst;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* The keys the shared files may give, for one profile. */
typedef struct file_keys {
    char *access_key, *secret_key, *session_token, *region, *endpoint, *s3_endpoint,
        *addressing;
} file_keys;

static void file_keys_free(file_keys *k)
{
    free(k->access_key);
    free(k->secret_key);
    free(k->session_token);
    free(k->region);
    free(k->endpoint);
    free(k->s3_endpoint);
    free(k->addressing);
}

/*
 * Reads section `section` of the INI file at path into k (keys already set
 * are kept: the first source wins).  A missing file is no error; a file
 * that cannot be read is.  Indented lines after `s3 =` are that nested
 * section's keys (the AWS config file's form).
 */
static bool read_ini(const char *path, const char *section, file_keys *k, buf *err)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        if (errno == ENOENT)
            return true;
        buf_printf(err, "%s: cannot read: %s", path, strerror(errno));
        return false;
    }
    char line[4096];
    bool in_section = false, in_s3 = false, ok = true;
    while (ok && fgets(line, sizeof line, fp)) {
        bool indented = line[0] == ' ' || line[0] == '\t';
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (end)
                *end = '\0';
            in_section = strcmp(trim(s + 1), section) == 0;
            in_s3 = false;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!in_section || !eq)
            continue;
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1);
        if (!indented)
            in_s3 = strcmp(key, "s3") == 0 && !*val;
        char **dst = NULL;
        if (indented && in_s3) {
            if (strcmp(key, "addressing_style") == 0)
                dst = &k->addressing;
            else if (strcmp(key, "endpoint_url") == 0)
                dst = &k->s3_endpoint;
        } else if (!indented) {
            if (strcmp(key, "aws_access_key_id") == 0)
                dst = &k->access_key;
            else if (strcmp(key, "aws_secret_access_key") == 0)
                dst = &k->secret_key;
            else if (strcmp(key, "aws_session_token") == 0)
                dst = &k->session_token;
            else if (strcmp(key, "region") == 0)
                dst = &k->region;
            else if (strcmp(key, "endpoint_url") == 0)
                dst = &k->endpoint;
        }
        if (dst && !*dst && *val) {
            *dst = strdup(val);
            ok = *dst != NULL;
        }
    }
    if (ferror(fp)) {
        buf_printf(err, "%s: read error", path);
        ok = false;
    } else if (!ok) {
        buf_printf(err, "out of memory reading %s", path);
    }
    fclose(fp);
    return ok;
}

/* The shared files' keys for profile p: ~/.aws/credentials ([p]) first,
 * then ~/.aws/config ([profile p], or [default]). */
static bool read_files(const char *p, file_keys *k, buf *err)
{
    const char *home = env("HOME");
    buf path = BUF_INIT, section = BUF_INIT;
    bool ok = true;
    const char *cred = env("AWS_SHARED_CREDENTIALS_FILE");
    if (!cred && home) {
        buf_printf(&path, "%s/.aws/credentials", home);
        cred = buf_cstr(&path);
    }
    if (cred)
        ok = read_ini(cred, p, k, err);
    buf_clear(&path);
    const char *conf = env("AWS_CONFIG_FILE");
    if (!conf && home) {
        buf_printf(&path, "%s/.aws/config", home);
        conf = buf_cstr(&path);
    }
    if (strcmp(p, "default") == 0)
        buf_append_str(&section, "default");
    else
        buf_printf(&section, "profile %s", p);
    if (ok && conf)
        ok = read_ini(conf, buf_cstr(&section), k, err);
    buf_free(&path);
    buf_free(&section);
    return ok;
}

/* Is host (without a port) an IPv4 or bracketed IPv6 address? */
static bool host_is_ip(const char *host)
{
    if (host[0] == '[')
        return true;
    size_t n = strcspn(host, ":");
    int dots = 0;
    for (size_t i = 0; i < n; i++) {
        if (host[i] == '.')
            dots++;
        else if (!isdigit((unsigned char)host[i]))
            return false;
    }
    return dots == 3;
}

/* Splits an endpoint URL into scheme, host[:port] and path. */
static bool parse_endpoint(s3_conf *c, const char *url, const char *from, buf *err)
{
    const char *sep = strstr(url, "://");
    if (!sep || (strncmp(url, "https", 5) != 0 && strncmp(url, "http", 4) != 0) ||
        !(sep - url == 4 || sep - url == 5) || !sep[3] || sep[3] == '/') {
        buf_printf(err, "%s: the endpoint URL '%s' is not http://HOST[:PORT] or "
                        "https://HOST[:PORT]", from, url);
        return false;
    }
    c->scheme = strndup(url, (size_t)(sep - url));
    const char *h = sep + 3;
    size_t hn = strcspn(h, "/?#");
    c->host = strndup(h, hn);
    const char *p = h + hn;
    size_t pn = strcspn(p, "?#");
    while (pn > 0 && p[pn - 1] == '/')
        pn--;
    c->base_path = strndup(p, pn);
    if (!c->scheme || !c->host || !c->base_path) {
        buf_printf(err, "out of memory");
        return false;
    }
    if (strchr(c->host, '@')) {
        /* Credentials in the URL would end up in messages. */
        buf_printf(err, "%s: the endpoint URL must not hold a user name or password; give "
                        "the credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", from);
        return false;
    }
    return true;
}

/* The key pair: the environment's wins over any profile's, as for the AWS
 * CLI; a half pair is an error rather than a silent mix.  False with
 * err set. */
static bool take_credentials(s3_conf *c, const file_keys *k, buf *err)
{
    bool ok;
    if (env("AWS_ACCESS_KEY_ID") || env("AWS_SECRET_ACCESS_KEY")) {
        if (!env("AWS_ACCESS_KEY_ID") || !env("AWS_SECRET_ACCESS_KEY")) {
            buf_printf(err, "%s is set but %s is not: set both (or neither, to use profile "
                            "'%s' of the AWS shared files)",
                       env("AWS_ACCESS_KEY_ID") ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                       env("AWS_ACCESS_KEY_ID") ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID",
                       c->profile);
            return false;
        }
        ok = set_str(&c->access_key, env("AWS_ACCESS_KEY_ID")) &&
             set_str(&c->secret_key, env("AWS_SECRET_ACCESS_KEY")) &&
             set_str(&c->session_token, env("AWS_SESSION_TOKEN"));
    } else {
        ok = set_str(&c->access_key, k->access_key) && set_str(&c->secret_key, k->secret_key) &&
             set_str(&c->session_token, k->session_token);
    }
    if (!ok) {
        buf_printf(err, "out of memory");
        return false;
    }
    if (!c->access_key || !c->secret_key) {
        buf_printf(err, "no credentials for object storage: set AWS_ACCESS_KEY_ID and "
                        "AWS_SECRET_ACCESS_KEY, or give profile '%s' aws_access_key_id and "
                        "aws_secret_access_key in ~/.aws/credentials (AWS_PROFILE chooses the "
                        "profile)", c->profile);
        return false;
    }
    return true;
}

/* The region: AWS_REGION, AWS_DEFAULT_REGION, the profile's, else
 * us-east-1; a name of letters, digits and '-'.  False with err set. */
static bool take_region(s3_conf *c, const file_keys *k, buf *err)
{
    const char *region = env("AWS_REGION") ? env("AWS_REGION")
                         : env("AWS_DEFAULT_REGION") ? env("AWS_DEFAULT_REGION")
                         : k->region ? k->region : "us-east-1";
    if (!set_str(&c->region, region)) {
        buf_printf(err, "out of memory");
        return false;
    }
    for (const char *r = c->region; *r; r++)
        if (!isalnum((unsigned char)*r) && *r != '-') {
            buf_printf(err, "the region '%s' is not a region name (letters, digits and '-')",
                       c->region);
            return false;
        }
    return true;
}

bool s3_conf_load(s3_conf *c, int retries, buf *err)
{
    memset(c, 0, sizeof *c);
    c->retries = retries;
    file_keys k = {0};
    bool ok = set_str(&c->profile, env("AWS_PROFILE") ? env("AWS_PROFILE") : "default") &&
              read_files(c->profile, &k, err);
    if (!ok && !err->len)
        buf_printf(err, "out of memory");
    if (!ok)
        goto out;
    ok = take_credentials(c, &k, err) && take_region(c, &k, err);
    if (!ok)
        goto out;
    const char *from = env("AWS_ENDPOINT_URL_S3") ? "AWS_ENDPOINT_URL_S3"
                       : env("AWS_ENDPOINT_URL") ? "AWS_ENDPOINT_URL"
                       : k.s3_endpoint ? "the AWS config file's s3 endpoint_url"
                       : k.endpoint ? "the AWS config file's endpoint_url" : NULL;
    const char *url = env("AWS_ENDPOINT_URL_S3") ? env("AWS_ENDPOINT_URL_S3")
                      : env("AWS_ENDPOINT_URL") ? env("AWS_ENDPOINT_URL")
                      : k.s3_endpoint ? k.s3_endpoint : k.endpoint;
    buf aws = BUF_INIT;
    if (!url) {
        buf_printf(&aws, "https://s3.%s.amazonaws.com", c->region);
        url = buf_cstr(&aws);
        from = "the default endpoint";
        c->default_endpoint = true;
    }
    ok = parse_endpoint(c, url, from, err);
    buf_free(&aws);
    if (!ok)
        goto out;
    if (k.addressing && strcmp(k.addressing, "path") != 0 &&
        strcmp(k.addressing, "virtual") != 0 && strcmp(k.addressing, "auto") != 0) {
        buf_printf(err, "the AWS config file's s3 addressing_style is '%s', not path, virtual "
                        "or auto", k.addressing);
        ok = false;
        goto out;
    }
    c->path_style = host_is_ip(c->host) || (k.addressing && strcmp(k.addressing, "path") == 0);
out:
    file_keys_free(&k);
    if (!ok)
        s3_conf_free(c);
    return ok;
}

void s3_conf_free(s3_conf *c)
{
    free(c->access_key);
    if (c->secret_key)
        memset(c->secret_key, 0, strlen(c->secret_key));
    free(c->secret_key);
    if (c->session_token)
        memset(c->session_token, 0, strlen(c->session_token));
    free(c->session_token);
    free(c->region);
    free(c->profile);
    free(c->scheme);
    free(c->host);
    free(c->base_path);
    memset(c, 0, sizeof *c);
}

/* Appends s URI-encoded: unreserved bytes as they are, '/' too when
 * keep_slash, everything else %XX (upper-case hex, as SigV4 wants). */
static bool uri_encode(buf *out, const char *s, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool plain = isalnum(*p) || *p == '-' || *p == '.' || *p == '_' || *p == '~' ||
                     (keep_slash && *p == '/');
        char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
        if (!(plain ? buf_append_char(out, (char)*p) : buf_append(out, e, 3)))
            return false;
    }
    return true;
}

bool s3_query_append(buf *q, const char *name, const char *value)
{
    return (!q->len || buf_append_char(q, '&')) && uri_encode(q, name, false) &&
           buf_append_char(q, '=') && uri_encode(q, value, false);
}

bool s3_conf_url(const s3_conf *c, const char *bucket, const char *key, const char *query,
                 buf *out)
{
    bool ok;
    if (c->path_style)
        ok = buf_printf(out, "%s://%s%s/%s%s", c->scheme, c->host, c->base_path, bucket,
                        *key ? "/" : "");
    else
        ok = buf_printf(out, "%s://%s.%s%s/", c->scheme, bucket, c->host, c->base_path);
    ok = ok && uri_encode(out, key, true);
    if (ok && query)
        ok = buf_append_char(out, '?') && buf_append_str(out, query);
    return ok;
}

void s3_conf_describe(const s3_conf *c, buf *out)
{
    buf_printf(out, "endpoint %s://%s%s (%s style), region %s", c->scheme, c->host,
               c->base_path, c->path_style ? "path" : "virtual-hosted", c->region);
}
