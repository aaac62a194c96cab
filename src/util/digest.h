/*
 * digest.h - SHA-256 of a file's bytes, the ledger's name for a file.
 *
 * None of libpq, jansson, libcsv or zlib exports a cryptographic hash
 * (zlib's crc32 is too weak to name payment files by), so it comes from
 * OpenSSL's libcrypto, which libpq loads into the process anyway: it uses
 * the CPU's SHA instructions where there are some, about four times the
 * speed of the portable code this file held before (BENCHMARKS.md), and the
 * whole file is hashed before its first row is loaded.
 * Ownership: sha256_final_hex() frees what sha256_init() allocated; after a
 * failed update it reports the failure.
 */
#ifndef IDEMLOAD_DIGEST_H
#define IDEMLOAD_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct evp_md_ctx_st EVP_MD_CTX;

typedef struct sha256_ctx {
    EVP_MD_CTX *md;         /* NULL once failed or finished */
} sha256_ctx;

/* False when libcrypto cannot start a hash (out of memory). */
bool sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex; false (hex empty)
 * when a step failed. */
bool sha256_final_hex(sha256_ctx *c, char hex[65]);

/* Hashes the file at path; stores its size.  False with *err on I/O error. */
bool digest_file(const char *path, char hex[65], int64_t *size, buf *err);

#endif
