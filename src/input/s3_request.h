/*
 * s3_request.h - one blocking request to S3-compatible storage, shared by
 * s3.c (HEAD, and the setup whose configuration it holds) and s3_list.c
 * (ListObjectsV2 pages).
 */
#ifndef IDEMLOAD_INPUT_S3_REQUEST_H
#define IDEMLOAD_INPUT_S3_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input/s3_conf.h"
#include "util/buf.h"

/* What the server answered, from its headers and (for an error) body. */
typedef struct s3_response {
    long status;
    char etag[256];
    char region[64];        /* x-amz-bucket-region */
    int64_t length;         /* Content-Length, -1 when absent */
    int64_t range_start;    /* Content-Range's first byte, -1 when absent */
    buf body;               /* an error's body, or a listing */
    size_t body_max;
} s3_response;

/* A listing page's body at most. */
#define S3_LIST_BODY_MAX ((size_t)64 << 20)

/* The configuration s3_setup() read. */
const s3_conf *s3_request_conf(void);
/* Splits "s3://BUCKET/KEY" into bucket and key (both malloc'd; key may be
 * ""); false with *err when url is no object URL or memory runs out. */
bool s3_split_url(const char *url, char **bucket, char **key, buf *err);
/* Text between <tag> and </tag> in xml after *from (NULL: the start;
 * entities decoded) into out; *from moves past it.  False when there is
 * none. */
bool s3_xml_text(const char *xml, const char **from, const char *tag, buf *out);
/* Runs one blocking request (HEAD or a listing page) with its retries;
 * the answer in *r.  False with *err when it failed for good. */
bool s3_perform(const char *url, const char *what, bool head, s3_response *r, buf *err);

#endif
