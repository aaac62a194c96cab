/*
 * s3.c - HEAD and streamed GET with resume against S3-compatible storage
 * (s3.h); the listing is s3_list.c's, through the request of
 * s3_request.h.
 *
 * Every request is signed by libcurl (CURLOPT_AWS_SIGV4).  libcurl 7.88
 * does not send x-amz-content-sha256, which S3 requires, so it is added
 * here (the hash of the empty body: no request here has one); and it signs
 * the path and query exactly as given, so both are passed canonical
 * (s3_conf_url, s3_query_append).
 *
 * The GET is driven through a curl multi handle so that the caller pulls
 * bytes (s3_object_read) instead of curl pushing them: the body callback
 * appends to a buffer that the caller empties, and the transfer is pumped
 * only while that buffer is empty, so it holds at most what one pump
 * receives.
 */
#include "input/s3.h"

#include <ctype.h>
#include <curl/curl.h>
#include <fnmatch.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "input/s3_conf.h"
#include "input/s3_request.h"
#include "util/digest.h"
#include "util/signals.h"

/* The SHA-256 of an empty body: every request here has none. */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* An error body kept for its <Code> and <Message>. */
#define ERROR_BODY_MAX 8192

static s3_conf conf;
static bool set_up;

bool s3_is_url(const char *path)
{
    return strncmp(path, "s3://", 5) == 0;
}

bool s3_any_url(char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s3_is_url(paths[i]))
            return true;
    return false;
}

bool s3_setup(int retries, buf *err)
{
    if (set_up)
        return true;
    if (!s3_conf_load(&conf, retries, err))
        return false;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        buf_printf(err, "cannot start libcurl");
        s3_conf_free(&conf);
        return false;
    }
    set_up = true;
    return true;
}

void s3_teardown(void)
{
    if (!set_up)
        return;
    curl_global_cleanup();
    s3_conf_free(&conf);
    set_up = false;
}

const s3_conf *s3_request_conf(void)
{
    return &conf;
}

/* Splits "s3://BUCKET/KEY" into bucket and key (both malloc'd; key may be
 * ""). */
bool s3_split_url(const char *url, char **bucket, char **key, buf *err)
{
    *bucket = *key = NULL;
    const char *b = url + 5;
    size_t bn = strcspn(b, "/");
    if (!s3_is_url(url) || bn == 0) {
        buf_printf(err, "%s: not an object URL: s3://BUCKET/KEY", url);
        return false;
    }
    *bucket = strndup(b, bn);
    *key = strdup(b[bn] ? b + bn + 1 : "");
    if (!*bucket || !*key) {
        free(*bucket);
        free(*key);
        *bucket = *key = NULL;
        buf_printf(err, "%s: out of memory", url);
        return false;
    }
    return true;
}

/* ---- one request ------------------------------------------------------- */


static void response_reset(s3_response *r)
{
    r->status = 0;
    r->etag[0] = r->region[0] = '\0';
    r->length = r->range_start = -1;
    buf_clear(&r->body);
}

/* Copies a header's value (trimmed) into dst. */
static void header_value(const char *v, size_t n, char *dst, size_t cap)
{
    while (n > 0 && isspace((unsigned char)*v))
        v++, n--;
    while (n > 0 && isspace((unsigned char)v[n - 1]))
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    s3_response *r = ud;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        /* A new response (after a 100 Continue, say): forget the last. */
        response_reset(r);
        const char *sp = memchr(p, ' ', n);
        if (sp)
            r->status = strtol(sp + 1, NULL, 10);
        return n;
    }
    const char *colon = memchr(p, ':', n);
    if (!colon)
        return n;
    size_t nn = (size_t)(colon - p), vn = n - nn - 1;
    const char *v = colon + 1;
    char tmp[64];
    if (nn == 4 && strncasecmp(p, "etag", 4) == 0) {
        header_value(v, vn, r->etag, sizeof r->etag);
    } else if (nn == 19 && strncasecmp(p, "x-amz-bucket-region", 19) == 0) {
        header_value(v, vn, r->region, sizeof r->region);
    } else if (nn == 14 && strncasecmp(p, "content-length", 14) == 0) {
        header_value(v, vn, tmp, sizeof tmp);
        r->length = strtoll(tmp, NULL, 10);
    } else if (nn == 13 && strncasecmp(p, "content-range", 13) == 0) {
        /* bytes FIRST-LAST/TOTAL */
        header_value(v, vn, tmp, sizeof tmp);
        const char *d = tmp + strcspn(tmp, "0123456789");
        if (*d)
            r->range_start = strtoll(d, NULL, 10);
    }
    return n;
}

/* Collects a body (an error's, or a listing page) up to body_max. */
static size_t on_collect(char *p, size_t size, size_t nmemb, void *ud)
{
    s3_response *r = ud;
    size_t n = size * nmemb;
    size_t room = r->body.len < r->body_max ? r->body_max - r->body.len : 0;
    if (!buf_append(&r->body, p, n < room ? n : room))
        return 0;
    return n;
}

/* Stops a transfer when the process is interrupted or the reader stops. */
static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    const atomic_bool *stop = ud;
    return signals_interrupted() || (stop && atomic_load(stop)) ? 1 : 0;
}

/* A handle for url with the signing, the protocols and the timeouts set;
 * extra: headers beyond those every request has (may be NULL).  *hdrs is
 * the caller's to free after the transfer. */
static CURL *new_handle(const char *url, const char *const *extra, struct curl_slist **hdrs,
                        s3_response *r, char *errbuf, atomic_bool *stop)
{
    CURL *h = curl_easy_init();
    if (!h)
        return NULL;
    *hdrs = NULL;
    buf line = BUF_INIT;
    bool ok = true;
    struct curl_slist *l = curl_slist_append(NULL, "x-amz-content-sha256: " EMPTY_SHA256);
    ok = l != NULL;
    if (ok && conf.session_token) {
        ok = buf_printf(&line, "x-amz-security-token: %s", conf.session_token);
        struct curl_slist *t = ok ? curl_slist_append(l, buf_cstr(&line)) : NULL;
        ok = t != NULL;
        if (ok)
            l = t;
        if (line.data)
            memset(line.data, 0, line.len);
    }
    for (size_t i = 0; ok && extra && extra[i]; i++) {
        struct curl_slist *t = curl_slist_append(l, extra[i]);
        ok = t != NULL;
        if (ok)
            l = t;
    }
    buf_free(&line);
    *hdrs = l;
    char sigv4[128];
    snprintf(sigv4, sizeof sigv4, "aws:amz:%s:s3", conf.region);
    ok = ok && curl_easy_setopt(h, CURLOPT_URL, url) == CURLE_OK &&
         /* Only the endpoint's own scheme: https unless it says http. */
         curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, conf.scheme) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_USERNAME, conf.access_key) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_PASSWORD, conf.secret_key) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_HTTPHEADER, l) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 20L) == CURLE_OK &&
         /* A connection that stalls is a dropped one: resumed. */
         curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_USERAGENT, "idemload/" IDEMLOAD_VERSION) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_HEADERDATA, r) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress) == CURLE_OK &&
         curl_easy_setopt(h, CURLOPT_XFERINFODATA, stop) == CURLE_OK;
    errbuf[0] = '\0';
    if (!ok) {
        curl_easy_cleanup(h);
        curl_slist_free_all(l);
        *hdrs = NULL;
        return NULL;
    }
    return h;
}

/* Text between <tag> and </tag> in xml after *from (entities decoded) into
 * out; *from moves past it.  False when there is none. */
bool s3_xml_text(const char *xml, const char **from, const char *tag, buf *out)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = strstr(*from ? *from : xml, open);
    if (!a)
        return false;
    a += strlen(open);
    const char *b = strstr(a, close);
    if (!b)
        return false;
    *from = b + strlen(close);
    buf_clear(out);
    for (const char *p = a; p < b; p++) {
        if (*p != '&') {
            buf_append_char(out, *p);
            continue;
        }
        static const struct { const char *name; char c; } ents[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        bool done = false;
        for (size_t e = 0; e < sizeof ents / sizeof ents[0] && !done; e++)
            if (strncmp(p, ents[e].name, strlen(ents[e].name)) == 0) {
                buf_append_char(out, ents[e].c);
                p += strlen(ents[e].name) - 1;
                done = true;
            }
        if (!done && p[1] == '#') {
            /* &#NN; or &#xNN; : a byte, or a code point in UTF-8. */
            char *end;
            unsigned long cp = p[2] == 'x' ? strtoul(p + 3, &end, 16) : strtoul(p + 2, &end, 10);
            if (*end == ';' && cp > 0 && cp < 0x110000) {
                char u[4];
                size_t un = 0;
                if (cp < 0x80) {
                    u[un++] = (char)cp;
                } else if (cp < 0x800) {
                    u[un++] = (char)(0xc0 | cp >> 6);
                    u[un++] = (char)(0x80 | (cp & 0x3f));
                } else if (cp < 0x10000) {
                    u[un++] = (char)(0xe0 | cp >> 12);
                    u[un++] = (char)(0x80 | (cp >> 6 & 0x3f));
                    u[un++] = (char)(0x80 | (cp & 0x3f));
                } else {
                    u[un++] = (char)(0xf0 | cp >> 18);
                    u[un++] = (char)(0x80 | (cp >> 12 & 0x3f));
                    u[un++] = (char)(0x80 | (cp >> 6 & 0x3f));
                    u[un++] = (char)(0x80 | (cp & 0x3f));
                }
                buf_append(out, u, un);
                p = end;
                done = true;
            }
        }
        if (!done)
            buf_append_char(out, '&');
    }
    return true;
}

/* Is this failure worth another try: the connection dropped or timed out,
 * or the server had a passing fault (5xx)? */
static bool transient(CURLcode rc, long status)
{
    if (rc == CURLE_OK)
        return status >= 500 || status == 0;
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    default:
        return false;
    }
}

/* Says in *err what an HTTP failure of the request for `what` means, and
 * what to check. */
static void http_failure(buf *err, const char *what, const s3_response *r)
{
    buf code = BUF_INIT, msg = BUF_INIT;
    const char *from = NULL;
    bool has_code = r->body.len && s3_xml_text(buf_cstr(&r->body), &from, "Code", &code);
    from = NULL;
    if (r->body.len)
        s3_xml_text(buf_cstr(&r->body), &from, "Message", &msg);
    buf region = BUF_INIT;
    from = NULL;
    if (r->region[0])
        buf_append_str(&region, r->region);
    else if (r->body.len)
        s3_xml_text(buf_cstr(&r->body), &from, "Region", &region);
    buf_printf(err, "%s: HTTP %ld", what, r->status);
    if (has_code)
        buf_printf(err, " %s", buf_cstr(&code));
    if (msg.len)
        buf_printf(err, " (%s)", buf_cstr(&msg));
    if (region.len && strcmp(buf_cstr(&region), conf.region) != 0) {
        buf_printf(err, ": the bucket is in region %s, not %s: set AWS_REGION=%s",
                   buf_cstr(&region), conf.region, buf_cstr(&region));
    } else if (r->status == 404) {
        bool bucket = has_code && strcmp(buf_cstr(&code), "NoSuchBucket") == 0;
        buf_printf(err, ": %s; check the bucket and key names",
                   bucket ? "no such bucket" : "no such bucket or object");
    } else if (r->status == 403 || r->status == 401) {
        buf_printf(err, ": access denied; check the credentials (AWS_ACCESS_KEY_ID, or profile "
                        "'%s' of the AWS shared files), that they may read it, the region (%s) "
                        "and the clock",
                   conf.profile, conf.region);
    } else if (r->status == 301 || r->status == 307 || r->status == 400) {
        buf_printf(err, ": check the region (%s) and the endpoint", conf.region);
    }
    buf bits = BUF_INIT;
    s3_conf_describe(&conf, &bits);
    buf_printf(err, " [%s]", buf_cstr(&bits));
    buf_free(&bits);
    buf_free(&code);
    buf_free(&msg);
    buf_free(&region);
}

/* Sleeps before try n (1, 2, ...): 0.2 s doubling up to 10 s; false when
 * interrupted or stopped meanwhile. */
static bool backoff(int n, const atomic_bool *stop)
{
    long ms = 200;
    for (int i = 1; i < n && ms < 10000; i++)
        ms *= 2;
    if (ms > 10000)
        ms = 10000;
    for (long waited = 0; waited < ms; waited += 50) {
        if (signals_interrupted() || (stop && atomic_load(stop)))
            return false;
        poll(NULL, 0, 50);
    }
    return true;
}

/* Runs one blocking request (HEAD or a listing page) with its retries;
 * the answer in *r.  False with *err when it failed for good. */
bool s3_perform(const char *url, const char *what, bool head, s3_response *r, buf *err)
{
    char errbuf[CURL_ERROR_SIZE];
    for (int attempt = 0;; attempt++) {
        if (attempt > 0 && !backoff(attempt, NULL)) {
            buf_printf(err, "%s: interrupted", what);
            return false;
        }
        struct curl_slist *hdrs = NULL;
        response_reset(r);
        CURL *h = new_handle(url, NULL, &hdrs, r, errbuf, NULL);
        if (!h) {
            buf_printf(err, "%s: out of memory", what);
            return false;
        }
        if (head)
            curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_collect);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
        CURLcode rc = curl_easy_perform(h);
        curl_easy_cleanup(h);
        curl_slist_free_all(hdrs);
        if (rc == CURLE_OK && r->status >= 200 && r->status < 300)
            return true;
        if (rc == CURLE_ABORTED_BY_CALLBACK) {
            buf_printf(err, "%s: interrupted", what);
            return false;
        }
        if (transient(rc, r->status) && attempt < conf.retries)
            continue;
        if (rc != CURLE_OK) {
            buf mine = BUF_INIT;
            s3_conf_describe(&conf, &mine);
            buf_printf(err, "%s: %s%s%s [%s]", what, curl_easy_strerror(rc),
                       errbuf[0] ? ": " : "", errbuf, buf_cstr(&mine));
            buf_free(&mine);
        } else {
            http_failure(err, what, r);
        }
        if (transient(rc, r->status))
            buf_printf(err, "; gave up after %d %s (--retries)", attempt + 1,
                       attempt == 0 ? "try" : "tries");
        return false;
    }
}

bool s3_head_object(const char *url, s3_head *h, buf *err)
{
    char *bucket, *key;
    if (!s3_split_url(url, &bucket, &key, err))
        return false;
    buf http = BUF_INIT;
    s3_response r = {.body = BUF_INIT, .body_max = ERROR_BODY_MAX};
    bool ok = s3_conf_url(&conf, bucket, key, NULL, &http);
    if (!ok)
        buf_printf(err, "%s: out of memory", url);
    if (ok && !*key) {
        buf_printf(err, "%s: names a bucket, not an object: end it with '/' to load every "
                        "object in the bucket", url);
        ok = false;
    }
    ok = ok && s3_perform(buf_cstr(&http), url, true, &r, err);
    if (ok && (r.length < 0 || !r.etag[0])) {
        buf_printf(err, "%s: the server sent no %s for the object", url,
                   r.length < 0 ? "Content-Length" : "ETag");
        ok = false;
    }
    if (ok) {
        h->size = r.length;
        snprintf(h->etag, sizeof h->etag, "%s", r.etag);
    }
    buf_free(&r.body);
    buf_free(&http);
    free(bucket);
    free(key);
    return ok;
}

bool s3_identity_digest(const char *url, const s3_head *h, char hex[65])
{
    char *bucket, *key;
    buf err = BUF_INIT;
    if (!s3_split_url(url, &bucket, &key, &err)) {
        buf_free(&err);
        return false;
    }
    sha256_ctx c;
    bool ok = sha256_init(&c);
    if (ok) {
        char size[32];
        snprintf(size, sizeof size, "%lld", (long long)h->size);
        /* NUL-separated: no field can run into the next. */
        const char *parts[] = {"s3-object", bucket, key, size, h->etag};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            sha256_update(&c, parts[i], strlen(parts[i]) + 1);
        ok = sha256_final_hex(&c, hex);
    }
    free(bucket);
    free(key);
    buf_free(&err);
    return ok;
}

/* ---- the streamed GET ------------------------------------------------- */

struct s3_object {
    char *url;              /* s3://... for messages */
    buf http;               /* the request URL */
    s3_head pin;
    CURLM *multi;
    CURL *easy;             /* the request in flight, or NULL */
    struct curl_slist *hdrs;
    char errbuf[CURL_ERROR_SIZE];
    s3_response resp;
    buf data;               /* bytes received, not yet handed out, from pos */
    size_t pos;
    uint64_t skip;          /* bytes of this response already handed out */
    uint64_t handed;        /* bytes handed out: the next Range starts here */
    uint64_t at_last_failure;
    int failures;           /* in a row without progress */
    bool began;             /* the response in flight has sent body bytes */
    bool bad_range;         /* ... from another byte than asked for */
    bool replaced;          /* another ETag answered */
    bool failed, done;
    buf err;
    sha256_ctx sha;
    char sha_hex[65];
    atomic_bool stop;
};

s3_object *s3_object_open(const char *url, const s3_head *pin, buf *err)
{
    s3_object *o = calloc(1, sizeof *o);
    char *bucket = NULL, *key = NULL;
    if (!o || !(o->url = strdup(url)) || !s3_split_url(url, &bucket, &key, err) ||
        !s3_conf_url(&conf, bucket, key, NULL, &o->http) || !sha256_init(&o->sha) ||
        !(o->multi = curl_multi_init())) {
        if (!err->len)
            buf_printf(err, "%s: out of memory", url);
        free(bucket);
        free(key);
        s3_object_close(&o);
        return NULL;
    }
    free(bucket);
    free(key);
    o->pin = *pin;
    o->resp.body_max = ERROR_BODY_MAX;
    atomic_init(&o->stop, false);
    return o;
}

static void end_request(s3_object *o)
{
    if (o->easy) {
        curl_multi_remove_handle(o->multi, o->easy);
        curl_easy_cleanup(o->easy);
        o->easy = NULL;
    }
    curl_slist_free_all(o->hdrs);
    o->hdrs = NULL;
}

static ssize_t fail(s3_object *o)
{
    o->failed = true;
    end_request(o);
    return -1;
}

static void say_replaced(s3_object *o)
{
    buf_clear(&o->err);
    buf_printf(&o->err, "%s: the object was replaced while it was read (ETag %s when it "
                        "started%s%s); nothing of two versions is stitched together: run the "
                        "command again to load the new one",
               o->url, o->pin.etag, o->resp.etag[0] ? ", now " : "", o->resp.etag);
}

/* Body bytes of the response in flight: appended for the reader when the
 * response is the object (200/206, same ETag), else kept as the error. */
static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    s3_object *o = ud;
    size_t n = size * nmemb;
    s3_response *r = &o->resp;
    if (r->status != 200 && r->status != 206)
        return on_collect(p, size, nmemb, r);
    if (r->etag[0] && strcmp(r->etag, o->pin.etag) != 0) {
        o->replaced = true;
        return 0;   /* stops the transfer */
    }
    if (!o->began) {
        o->began = true;
        if (r->status == 200 && o->handed > 0)
            o->skip = o->handed;    /* Range ignored: the whole object again */
        if (r->status == 206 && r->range_start >= 0 && (uint64_t)r->range_start != o->handed) {
            o->bad_range = true;
            return 0;
        }
    }
    size_t from = 0;
    if (o->skip > 0) {
        from = o->skip < n ? (size_t)o->skip : n;
        o->skip -= from;
    }
    return buf_append(&o->data, p + from, n - from) ? n : 0;
}

/* Starts the request for the bytes from o->handed on. */
static bool start_request(s3_object *o)
{
    char range[64], match[300];
    snprintf(range, sizeof range, "Range: bytes=%llu-", (unsigned long long)o->handed);
    snprintf(match, sizeof match, "If-Match: %s", o->pin.etag);
    const char *extra[] = {match, o->handed > 0 ? range : NULL, NULL};
    response_reset(&o->resp);
    o->skip = 0;
    o->began = false;
    o->easy = new_handle(buf_cstr(&o->http), extra, &o->hdrs, &o->resp, o->errbuf, &o->stop);
    if (!o->easy || curl_easy_setopt(o->easy, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
        curl_easy_setopt(o->easy, CURLOPT_WRITEDATA, o) != CURLE_OK ||
        curl_multi_add_handle(o->multi, o->easy) != CURLM_OK) {
        buf_printf(&o->err, "%s: out of memory", o->url);
        return false;
    }
    return true;
}

/* The request in flight ended with rc: done, to be resumed, or failed
 * (message set).  Returns -1 on failure, 0 to go on. */
static int request_ended(s3_object *o, CURLcode rc)
{
    s3_response *r = &o->resp;
    uint64_t have = o->handed + (o->data.len - o->pos);
    bool ours = r->status == 200 || r->status == 206;
    if (o->replaced || r->status == 412) {
        say_replaced(o);
        return -1;
    }
    if (o->bad_range) {
        /* A 206 must start where asked: anything else cannot be resumed. */
        buf_printf(&o->err, "%s: asked for the bytes from %llu, the server sent them from "
                            "%lld", o->url, (unsigned long long)o->handed,
                   (long long)r->range_start);
        return -1;
    }
    if (rc == CURLE_ABORTED_BY_CALLBACK) {
        buf_printf(&o->err, "%s: interrupted after %llu of %lld bytes", o->url,
                   (unsigned long long)have, (long long)o->pin.size);
        return -1;
    }
    if (rc == CURLE_OK && ours && have >= (uint64_t)o->pin.size) {
        o->done = true;
        return 0;
    }
    /* Cut short (a clean close before the end counts too), timed out, or a
     * passing server fault: resume from the first byte not handed out. */
    bool short_read = rc == CURLE_OK && ours;
    if (short_read || transient(rc, r->status)) {
        if (have > o->at_last_failure)
            o->failures = 0;
        o->at_last_failure = have;
        if (++o->failures <= conf.retries)
            return 0;
        buf mine = BUF_INIT;
        s3_conf_describe(&conf, &mine);
        buf_printf(&o->err, "%s: the transfer broke off after %llu of %lld bytes (%s%s%s) and "
                            "%d tries in a row made no progress (--retries %d) [%s]",
                   o->url, (unsigned long long)have, (long long)o->pin.size,
                   rc != CURLE_OK ? curl_easy_strerror(rc) : "HTTP",
                   rc != CURLE_OK && o->errbuf[0] ? ": " : "",
                   rc != CURLE_OK ? o->errbuf : "", o->failures, conf.retries,
                   buf_cstr(&mine));
        if (rc == CURLE_OK)
            buf_printf(&o->err, " HTTP %ld", r->status);
        buf_free(&mine);
        return -1;
    }
    if (rc != CURLE_OK) {
        buf_printf(&o->err, "%s: %s%s%s", o->url, curl_easy_strerror(rc),
                   o->errbuf[0] ? ": " : "", o->errbuf);
        return -1;
    }
    http_failure(&o->err, o->url, r);
    return -1;
}

/* Pumps the transfer until bytes are buffered, it ends, or it fails.
 * Returns -1 on failure, 0 otherwise. */
static int pump(s3_object *o)
{
    while (o->pos == o->data.len && !o->done) {
        if (atomic_load(&o->stop) || signals_interrupted()) {
            buf_printf(&o->err, "%s: interrupted", o->url);
            return -1;
        }
        if (!o->easy) {
            if (o->failures > 0 && !backoff(o->failures, &o->stop)) {
                buf_printf(&o->err, "%s: interrupted", o->url);
                return -1;
            }
            if (!start_request(o))
                return -1;
        }
        int running = 0;
        if (curl_multi_perform(o->multi, &running) != CURLM_OK) {
            buf_printf(&o->err, "%s: libcurl failed", o->url);
            return -1;
        }
        int left;
        CURLMsg *m;
        while ((m = curl_multi_info_read(o->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            CURLcode rc = m->data.result;
            if (request_ended(o, rc) < 0)
                return -1;
            end_request(o);
            break;
        }
        if (o->easy && o->pos == o->data.len && running)
            curl_multi_poll(o->multi, NULL, 0, 200, NULL);
    }
    return 0;
}

ssize_t s3_object_read(s3_object *o, void *dst, size_t cap)
{
    if (o->failed)
        return -1;
    if (o->pos == o->data.len) {
        buf_clear(&o->data);
        o->pos = 0;
        if (!o->done && pump(o) < 0)
            return fail(o);
    }
    size_t avail = o->data.len - o->pos;
    if (avail == 0) {
        /* The end: every byte of the pinned size, not one more. */
        if (o->handed != (uint64_t)o->pin.size) {
            buf_printf(&o->err, "%s: the object ended after %llu bytes, its size is %lld",
                       o->url, (unsigned long long)o->handed, (long long)o->pin.size);
            return fail(o);
        }
        if (!o->sha_hex[0] && !sha256_final_hex(&o->sha, o->sha_hex)) {
            buf_printf(&o->err, "%s: out of memory", o->url);
            return fail(o);
        }
        return 0;
    }
    if (o->handed + avail > (uint64_t)o->pin.size) {
        buf_printf(&o->err, "%s: the object holds more than its %lld bytes: it was replaced "
                            "while read", o->url, (long long)o->pin.size);
        return fail(o);
    }
    size_t n = avail < cap ? avail : cap;
    memcpy(dst, o->data.data + o->pos, n);
    sha256_update(&o->sha, dst, n);
    o->pos += n;
    o->handed += n;
    return (ssize_t)n;
}

const char *s3_object_error(const s3_object *o)
{
    return buf_cstr(&o->err);
}

void s3_object_stop(s3_object *o)
{
    atomic_store(&o->stop, true);
}

const char *s3_object_sha256(const s3_object *o)
{
    return o->sha_hex;
}

void s3_object_close(s3_object **op)
{
    s3_object *o = *op;
    if (!o)
        return;
    end_request(o);
    if (o->multi)
        curl_multi_cleanup(o->multi);
    if (!o->sha_hex[0]) {
        char scrap[65];
        sha256_final_hex(&o->sha, scrap);
    }
    buf_free(&o->resp.body);
    buf_free(&o->data);
    buf_free(&o->http);
    buf_free(&o->err);
    free(o->url);
    free(o);
    *op = NULL;
}
