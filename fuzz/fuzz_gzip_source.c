/*
 * fuzz_gzip_source.c - libFuzzer target: the gzip path of the byte source
 * (member walk, trailing garbage, truncation, the read-ahead thread) on
 * arbitrary bytes, through every inflater the build has: when it has ISA-L,
 * each input is read with zlib and with ISA-L and the two must agree.
 *
 * The first byte is an option byte: its low three bits pick the read size;
 * bits 6-7 how the rest becomes the file:
 *   0  as it is (seeds: gzip files, several members, damaged ones);
 *   1  behind a gzip header whose flag byte is the rest's first byte (the
 *      rest is then the header's fields, deflate data and trailer);
 *   2  a member: the rest's first byte gives the header's reserved and FTEXT
 *      flag bits, the others are raw deflate data, the CRC-32 and length
 *      those of what zlib (or, when zlib refuses it, ISA-L) makes of it;
 *      then the same member again: so that a stream one inflater accepts
 *      and the other refuses cannot hide behind a wrong CRC;
 *   3  as 2, then 1 to 8 bytes of garbage (the option byte's bits 3-5).
 *
 * Invariants, for each inflater: a read returns > 0 (at most its size), 0
 * or -1 with a message, and the end and a failure are sticky.  Between
 * zlib and ISA-L: the same verdict; on success the same bytes; on failure
 * an error in the same member (or after the same member), and what each
 * handed out a prefix of what the other did.  Reads stop at OUT_CAP bytes (a deflate
 * bomb inflates 1032 to 1); up to there the bytes must match.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef IDEMLOAD_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "fuzz_input.h"
#include "input/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OUT_CAP (1u << 20)

typedef struct result {
    unsigned char *data;
    size_t len;
    ssize_t last;       /* 0, -1, or 1 when stopped at OUT_CAP */
    char kind[80];      /* "bad member N", "data after member N" */
} result;

/* The error's kind and member number, without the offsets.  Inside a
 * member, "truncated" and "corrupt" are one kind here: on a damaged dynamic
 * block header ISA-L may call corrupt what zlib, which checks it bit by
 * bit, still waits on (and then calls truncated); both are errors in the
 * same member, and tests/unit/test_source.c holds them to the exact kind
 * on every flipped bit and cut of real members. */
static void error_kind(const char *e, char *kind, size_t cap)
{
    const char *after = strstr(e, "unexpected data after member ");
    const char *in = strstr(e, "truncated gzip: input ends inside member ");
    if (!in)
        in = strstr(e, "corrupt gzip in member ");
    if (after)
        snprintf(kind, cap, "data after member %lu",
                 strtoul(after + strlen("unexpected data after member "), NULL, 10));
    else if (in)
        snprintf(kind, cap, "bad member %lu", strtoul(strstr(in, "member ") + 7, NULL, 10));
    else
        snprintf(kind, cap, "other: %.50s", e);
}

static void drain(const char *path, source_inflate which, size_t cap, result *r)
{
    buf err = BUF_INIT;
    source *src = source_open_with(path, which, &err);
    memset(r, 0, sizeof *r);
    if (!src) {
        /* only a read error could do this: the memfd is there */
        fuzz_fail("source_open_with: %s", buf_cstr(&err));
    }
    r->data = malloc(OUT_CAP);
    fuzz_check(r->data != NULL);
    ssize_t n;
    for (;;) {
        size_t want = cap < OUT_CAP - r->len ? cap : OUT_CAP - r->len;
        if (want == 0) {
            r->last = 1;
            break;
        }
        n = source_read(src, (char *)r->data + r->len, want);
        if (n <= 0) {
            fuzz_check(n == 0 || n == -1);
            fuzz_check(source_read(src, (char *)r->data, 1) == n);
            r->last = n;
            break;
        }
        fuzz_check((size_t)n <= want);
        r->len += (size_t)n;
        fuzz_check(source_decoded_offset(src) == r->len);
    }
    if (r->last == -1) {
        fuzz_check(source_error(src)[0] != '\0');
        error_kind(source_error(src), r->kind, sizeof r->kind);
    }
    source_close(&src);
    fuzz_check(src == NULL);
    buf_free(&err);
}

/* What raw deflate data inflates to, for a trailer that matches it: zlib's
 * output when zlib reads the stream to its end (so ISA-L must too), else
 * ISA-L's (so a stream only ISA-L accepts is not refused for its CRC). */
static size_t raw_inflate(const uint8_t *in, size_t n, unsigned char *out, size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    fuzz_check(inflateInit2(&zs, -MAX_WBITS) == Z_OK);
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    int rc = inflate(&zs, Z_FINISH);
    size_t made = cap - zs.avail_out;
    inflateEnd(&zs);
#ifdef IDEMLOAD_HAVE_ISAL
    if (rc != Z_STREAM_END) {
        struct inflate_state *st = malloc(sizeof *st);
        fuzz_check(st != NULL);
        isal_inflate_init(st);
        st->next_in = (uint8_t *)in;
        st->avail_in = (uint32_t)n;
        st->next_out = out;
        st->avail_out = (uint32_t)cap;
        (void)isal_inflate(st);
        made = cap - st->avail_out;
        free(st);
    }
#else
    (void)rc;
#endif
    return made;
}

static const unsigned char gzip_header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

/* Appends one member: header, raw deflate data, the trailer of `plain`. */
static size_t put_member(unsigned char *f, unsigned char flg, const uint8_t *deflate, size_t n,
                         const unsigned char *plain, size_t plain_len)
{
    uLong crc = crc32(crc32(0L, Z_NULL, 0), plain, (uInt)plain_len);
    memcpy(f, gzip_header, sizeof gzip_header);
    f[3] = flg;
    memcpy(f + 10, deflate, n);
    for (int i = 0; i < 4; i++) {
        f[10 + n + (size_t)i] = (unsigned char)(crc >> (8 * i));
        f[14 + n + (size_t)i] = (unsigned char)((uint64_t)plain_len >> (8 * i));
    }
    return n + 18;
}

/* The file the option byte's mode makes of the rest; *len its size. */
static unsigned char *make_file(uint8_t opt, const uint8_t *rest, size_t n, size_t *len)
{
    unsigned mode = opt >> 6;
    unsigned char *f = malloc(2 * (n + 18) + 8);
    fuzz_check(f != NULL);
    if (mode == 0) {
        memcpy(f, rest, n);
        *len = n;
    } else if (n == 0) {
        *len = 0;
    } else if (mode == 1) {
        memcpy(f, gzip_header, sizeof gzip_header);
        f[3] = rest[0];
        memcpy(f + 10, rest + 1, n - 1);
        *len = n + 9;
    } else {
        unsigned char *plain = malloc(OUT_CAP);
        fuzz_check(plain != NULL);
        unsigned char flg = rest[0] & 0xe1;
        size_t plain_len = raw_inflate(rest + 1, n - 1, plain, OUT_CAP);
        size_t at = put_member(f, flg, rest + 1, n - 1, plain, plain_len);
        at += put_member(f + at, 0, rest + 1, n - 1, plain, plain_len);
        if (mode == 3) {
            /* garbage: 1 to 8 bytes, one of them a lone magic byte */
            size_t g = (size_t)(opt >> 3 & 7) + 1;
            memcpy(f + at, "\x1f\x8b\x08\x00\x1f" "abc", g);
            at += g;
        }
        free(plain);
        *len = at;
    }
    return f;
}

static void agree(const result *z, const result *i)
{
    size_t common = z->len < i->len ? z->len : i->len;
    if (common > 0 && memcmp(z->data, i->data, common) != 0)
        fuzz_fail("zlib and isa-l handed out different bytes");
    if (z->last == 1 || i->last == 1)
        return; /* a bomb: stopped at OUT_CAP, compared up to there */
    if (z->last != i->last)
        fuzz_fail("zlib %s, isa-l %s", z->last ? z->kind : "read it all",
                  i->last ? i->kind : "read it all");
    if (z->last == 0 && z->len != i->len)
        fuzz_fail("zlib read %zu bytes, isa-l %zu", z->len, i->len);
    if (z->last == -1 && strcmp(z->kind, i->kind) != 0)
        fuzz_fail("zlib \"%s\", isa-l \"%s\"", z->kind, i->kind);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t caps[8] = {1, 7, 48, 49, 4096, 65536, 262144, 1 << 20};
    if (size < 1)
        return 0;
    size_t len;
    unsigned char *file = make_file(data[0], data + 1, size - 1, &len);
    const char *path = fuzz_input_file(file, len);
    size_t cap = caps[data[0] & 7];
    result z, i;

    drain(path, SOURCE_INFLATE_ZLIB, cap, &z);
    if (source_inflate_built(SOURCE_INFLATE_ISAL)) {
        drain(path, SOURCE_INFLATE_ISAL, cap, &i);
        agree(&z, &i);
        free(i.data);
    }
    free(z.data);
    free(file);
    return 0;
}
