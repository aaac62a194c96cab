/*
 * s3_conf.h - where objects in S3-compatible storage are and how requests
 * to them are signed, read as the AWS tools read it: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION /
 * AWS_DEFAULT_REGION, AWS_PROFILE with ~/.aws/credentials and
 * ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE),
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL or the profile's endpoint_url,
 * and the profile's `s3 = addressing_style = path|virtual`.
 *
 * Addressing: virtual-hosted style (BUCKET.HOST/KEY) unless asked for path
 * style or the endpoint's host is an IP address.  HTTPS with certificate
 * checks; plain http only where the endpoint URL itself says http://.
 *
 * The secret key and the session token are handed to libcurl and to
 * nothing else: no message, log line or output names them.
 *
 * Ownership: s3_conf_load() fills a struct the caller releases with
 * s3_conf_free().  Threads: read-only after loading, shared by every
 * request.
 */
#ifndef IDEMLOAD_S3_CONF_H
#define IDEMLOAD_S3_CONF_H

#include <stdbool.h>

#include "util/buf.h"

typedef struct s3_conf {
    char *access_key;
    char *secret_key;       /* never printed */
    char *session_token;    /* never printed */
    char *region;
    char *profile;          /* AWS_PROFILE or "default" */
    char *scheme;           /* "https" or "http" */
    char *host;             /* the endpoint's host[:port], without the bucket */
    char *base_path;        /* the endpoint URL's path ("" or "/x"), no trailing '/' */
    bool path_style;
    bool default_endpoint;  /* AWS itself (no endpoint URL given) */
    int retries;            /* of a request after a dropped connection or a 5xx */
} s3_conf;

/* Reads the environment and the AWS files.  False with the message in
 * *err (naming the variable or file, never a secret's value) when the
 * credentials or the endpoint are missing or malformed. */
bool s3_conf_load(s3_conf *c, int retries, buf *err);
void s3_conf_free(s3_conf *c);

/* Appends to *out the request URL of key (raw bytes; "" for the bucket
 * itself) in bucket, URI-encoded as SigV4 wants it ('/' kept), and
 * "?query" when query is not NULL (already canonical: see
 * s3_query_append).  False when out of memory. */
bool s3_conf_url(const s3_conf *c, const char *bucket, const char *key, const char *query,
                 buf *out);

/* Appends "name=value" to a canonical query string (&-separated; the
 * caller adds them in byte order of name), value URI-encoded with '/' as
 * %2F: libcurl signs the query exactly as given. */
bool s3_query_append(buf *q, const char *name, const char *value);

/* Readable description of the endpoint and addressing, for messages:
 * "endpoint http://127.0.0.1:9000 (path style), region us-east-1". */
void s3_conf_describe(const s3_conf *c, buf *out);

#endif
