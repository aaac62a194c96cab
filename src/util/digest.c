/*
 * digest.c - SHA-256 (FIPS 180-4) and file hashing (see digest.h).
 */
#include "util/digest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void compress_block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

void sha256_init(sha256_ctx *c)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof iv);
    c->total = 0;
    c->fill = 0;
}

void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
    const unsigned char *p = data;
    c->total += n;
    if (c->fill) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->block + c->fill, p, take);
        c->fill += take;
        p += take;
        n -= take;
        if (c->fill < 64)
            return;
        compress_block(c->h, c->block);
        c->fill = 0;
    }
    while (n >= 64) {
        compress_block(c->h, p);
        p += 64;
        n -= 64;
    }
    memcpy(c->block, p, n);
    c->fill = n;
}

void sha256_final_hex(sha256_ctx *c, char hex[65])
{
    uint64_t bits = c->total * 8;
    unsigned char pad = 0x80;
    uint64_t total = c->total;
    sha256_update(c, &pad, 1);
    unsigned char zero = 0;
    while (c->fill != 56)
        sha256_update(c, &zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(c, len, 8);
    c->total = total;
    for (int i = 0; i < 8; i++)
        snprintf(hex + 8 * i, 9, "%08x", c->h[i]);
}

bool digest_file(const char *path, char hex[65], int64_t *size, buf *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        buf_printf(err, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    enum { BLOCK = 1 << 20 };
    unsigned char *b = malloc(BLOCK);
    if (!b) {
        close(fd);
        buf_printf(err, "%s: out of memory", path);
        return false;
    }
    sha256_ctx c;
    sha256_init(&c);
    bool ok = true;
    for (;;) {
        ssize_t n = read(fd, b, BLOCK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            buf_printf(err, "%s: read error: %s", path, strerror(errno));
            ok = false;
            break;
        }
        if (n == 0)
            break;
        sha256_update(&c, b, (size_t)n);
    }
    free(b);
    close(fd);
    if (ok) {
        *size = (int64_t)c.total;
        sha256_final_hex(&c, hex);
    }
    return ok;
}
