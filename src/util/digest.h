/*
 * digest.h - SHA-256 of a file's bytes, the ledger's name for a file.
 *
 * Written here (FIPS 180-4) because none of libpq, jansson, libcsv or zlib
 * exports a cryptographic hash (zlib's crc32 is too weak to name payment
 * files by), and pulling in OpenSSL for one function is not worth it.
 */
#ifndef IDEMLOAD_DIGEST_H
#define IDEMLOAD_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t total;
    unsigned char block[64];
    size_t fill;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);

/* Hashes the file at path; stores its size.  False with *err on I/O error. */
bool digest_file(const char *path, char hex[65], int64_t *size, buf *err);

#endif
