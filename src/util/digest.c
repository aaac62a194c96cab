/*
 * digest.c - SHA-256 and file hashing (see digest.h), over OpenSSL's
 * libcrypto.
 */
#include "util/digest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

bool sha256_init(sha256_ctx *c)
{
    c->md = EVP_MD_CTX_new();
    if (c->md && EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) == 1)
        return true;
    EVP_MD_CTX_free(c->md);
    c->md = NULL;
    return false;
}

void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
    if (c->md && n > 0 && EVP_DigestUpdate(c->md, data, n) != 1) {
        EVP_MD_CTX_free(c->md);
        c->md = NULL;
    }
}

bool sha256_final_hex(sha256_ctx *c, char hex[65])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    bool ok = c->md && EVP_DigestFinal_ex(c->md, d, &n) == 1 && n == 32;
    EVP_MD_CTX_free(c->md);
    c->md = NULL;
    hex[0] = '\0';
    for (unsigned int i = 0; ok && i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return ok;
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
    bool ok = sha256_init(&c);
    int64_t total = 0;
    if (!ok)
        buf_printf(err, "%s: cannot start SHA-256 (libcrypto)", path);
    while (ok) {
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
        total += n;
    }
    free(b);
    close(fd);
    if (ok) {
        *size = total;
        ok = sha256_final_hex(&c, hex);
        if (!ok)
            buf_printf(err, "%s: SHA-256 failed (libcrypto)", path);
    } else if (c.md) {
        sha256_final_hex(&c, hex); /* frees the context */
    }
    return ok;
}
