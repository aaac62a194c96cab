/*
 * s3.h - objects in S3-compatible storage: s3://BUCKET/KEY, a prefix
 * (s3://BUCKET/PREFIX/) or a glob in the key, over libcurl with AWS
 * Signature V4 (CURLOPT_AWS_SIGV4; endpoint and credentials: s3_conf.h).
 *
 * An object is identified by one HEAD (size and ETag), then streamed by a
 * GET pinned to that ETag (If-Match): a dropped connection, a timeout or a
 * 5xx resumes with a Range request from the first byte not yet handed out,
 * with backoff, up to --retries times in a row without progress; an object
 * replaced meanwhile (412, or another ETag) fails the read, never stitching
 * two versions.  Nothing of an object is kept beyond what the caller has
 * not yet taken (a bounded buffer).
 *
 * Setup: s3_setup() once in main, before any thread, when a path is an
 * object; then everything here may be used from any thread (the settings
 * are read-only), one s3_object per thread at a time.
 * Errors: functions put their message, naming the object and what to
 * check, into *err or s3_object_error(); they log nothing themselves.
 * Ownership: s3_object_open() returns an object s3_object_close() frees
 * (and sets the caller's pointer to NULL); s3_paths_free() frees an
 * expansion.
 */
#ifndef IDEMLOAD_S3_H
#define IDEMLOAD_S3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"

/* Is path an object URL (s3://...)? */
bool s3_is_url(const char *path);

/* Any of paths an object URL? */
bool s3_any_url(char *const *paths, size_t n);

/* Reads the settings (s3_conf.h) and starts libcurl; retries: of a request
 * (--retries).  False with *err when they are missing or wrong (a
 * configuration error).  Not thread-safe: call once, before threads. */
bool s3_setup(int retries, buf *err);
void s3_teardown(void);

/* What one HEAD says of an object. */
typedef struct s3_head {
    int64_t size;
    char etag[256];         /* as the server sends it, quotes included */
} s3_head;

/* HEADs url.  False with *err (naming the object and the cause: missing,
 * access denied, wrong region, unreachable after retries). */
bool s3_head_object(const char *url, s3_head *h, buf *err);

/* The ledger's name for an object: SHA-256 hex of its bucket, key, size
 * and ETag (another ETag is another file). */
bool s3_identity_digest(const char *url, const s3_head *h, char hex[65]);

typedef struct s3_object s3_object;

/* Starts reading url pinned to *pin (size and ETag from s3_head_object).
 * NULL with *err when out of memory or the URL is not an object's. */
s3_object *s3_object_open(const char *url, const s3_head *pin, buf *err);

/* Up to cap bytes of the object, in order.  The count (> 0), 0 at its
 * end (all pin->size bytes handed out), or -1: s3_object_error() says
 * why.  Blocks while the bytes are on their way (or during a backoff). */
ssize_t s3_object_read(s3_object *o, void *dst, size_t cap);
const char *s3_object_error(const s3_object *o);

/* Makes a read in progress on another thread return -1 soon (source
 * closing early).  Safe from any thread. */
void s3_object_stop(s3_object *o);

/* After the end: the SHA-256 hex of every byte read; "" before. */
const char *s3_object_sha256(const s3_object *o);

void s3_object_close(s3_object **o);

/* The expansion of a command's paths: local paths and object URLs as
 * given, prefixes and globs replaced by the objects they list, in key
 * order. */
typedef struct s3_paths {
    char **v;               /* n paths; v[i] owned when owned[i] */
    bool *owned;
    size_t n;
} s3_paths;

/* Expands in[0..n).  A prefix or glob that cannot be listed (missing
 * bucket, access denied) or that matches no object is reported in *err
 * (one line per pattern, the others still expanded) and left out; returns
 * false only when out of memory.  *failed: how many patterns failed. */
bool s3_expand(char *const *in, size_t n, s3_paths *out, size_t *failed, buf *err);
void s3_paths_free(s3_paths *p);

#endif
