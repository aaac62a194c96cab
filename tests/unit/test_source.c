/*
 * test_source.c - source_open/source_read on plain and gzip input: magic-byte
 * detection, multi-member streams read to their end (empty members too),
 * truncation and trailing garbage reported with how far the read got,
 * member boundaries at the edges of the 256 KiB raw buffer, every read size,
 * and standard input fed through a pipe a few bytes at a time.  Every test
 * runs once per inflater the build has (zlib; ISA-L when built with it), and
 * test_inflaters_agree holds ISA-L to zlib's results on damaged members.
 *
 * Inputs are written into a mkdtemp directory by the test itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "input/source.h"

#define RAW_CHUNK (256 * 1024) /* source.c's raw buffer */

/* The inflater the tests of this run open sources with (see main). */
static source_inflate inflater = SOURCE_INFLATE_ZLIB;

/* Deterministic, poorly compressible bytes. */
static unsigned char *noise(size_t n, uint32_t seed)
{
    unsigned char *p = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;

    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)x;
    }
    return p;
}

/* Text lines, compressible. */
static char *text_lines(size_t n)
{
    char *p = malloc(n ? n : 1);

    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (i % 61 == 60) ? '\n' : (char)('a' + (i * 7 + i / 61) % 26);
    return p;
}

typedef struct drained {
    unsigned char *data;
    size_t len;
    ssize_t last;       /* 0 (clean end) or -1 */
    char *error;        /* source_error() at the end */
    bool gzip;
    uint64_t raw_offset;
    uint64_t decoded;
    int64_t raw_size;
} drained;

/* Reads src to its end with reads of `cap` bytes (cycling through caps when
 * cap is 0), checking the stickiness of the final result. */
static void drain(source *src, size_t cap, drained *d)
{
    static const size_t caps[] = {1, 3, 4096, 7, 65536, 262144, 1 << 20, 2};
    size_t k = 0, bufcap = 1 << 16;
    char *tmp = malloc(1 << 20);

    assert_non_null(tmp);
    memset(d, 0, sizeof *d);
    d->data = malloc(bufcap);
    assert_non_null(d->data);
    for (;;) {
        size_t want = cap ? cap : caps[k++ % (sizeof caps / sizeof caps[0])];
        ssize_t n = source_read(src, tmp, want);

        if (n <= 0) {
            d->last = n;
            assert_true(n == 0 || n == -1);
            /* sticky */
            assert_int_equal(source_read(src, tmp, want), n);
            assert_int_equal(source_read(src, tmp, 1 << 20), n);
            break;
        }
        assert_true((size_t)n <= want);
        if (d->len + (size_t)n > bufcap) {
            while (d->len + (size_t)n > bufcap)
                bufcap *= 2;
            d->data = realloc(d->data, bufcap);
            assert_non_null(d->data);
        }
        memcpy(d->data + d->len, tmp, (size_t)n);
        d->len += (size_t)n;
        assert_int_equal(source_decoded_offset(src), d->len);
    }
    d->error = strdup(source_error(src));
    d->gzip = source_is_gzip(src);
    d->raw_offset = source_raw_offset(src);
    d->decoded = source_decoded_offset(src);
    d->raw_size = source_raw_size(src);
    free(tmp);
}

static void drained_free(drained *d)
{
    free(d->data);
    free(d->error);
}

/* Opens path (must succeed) and drains it. */
static void drain_path(const char *path, size_t cap, drained *d)
{
    buf err = BUF_INIT;
    source *src = source_open_with(path, inflater, &err);

    if (src == NULL)
        fail_msg("source_open(%s): %s", path, buf_cstr(&err));
    assert_int_equal(err.len, 0);
    drain(src, cap, d);
    source_close(&src);
    assert_null(src);
    source_close(&src); /* closing NULL is a no-op */
    buf_free(&err);
}

static void drain_bytes(const char *name, const void *bytes, size_t n, size_t cap, drained *d)
{
    char *p = path_in(test_dir, name);

    write_bytes(p, bytes, n);
    drain_path(p, cap, d);
    free(p);
}

static void assert_contains(const char *hay, const char *needle)
{
    if (strstr(hay, needle) == NULL)
        fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

/* ---- plain input --------------------------------------------------------- */

static void test_plain_sizes(void **state)
{
    static const size_t sizes[] = {0, 1, 2, 3, 4095, RAW_CHUNK - 1, RAW_CHUNK,
                                   RAW_CHUNK + 1, 3 * RAW_CHUNK + 17};
    static const size_t caps[] = {0, 1, 5, 65536, 1 << 20};

    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *data = noise(sizes[i], (uint32_t)i);

        if (sizes[i] >= 2 && data[0] == 0x1f && data[1] == 0x8b)
            data[0] = 'x';
        for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
            drained d;

            if (caps[k] == 1 && sizes[i] > RAW_CHUNK)
                continue; /* byte-by-byte over megabytes adds nothing */
            drain_bytes("plain.bin", data, sizes[i], caps[k], &d);
            assert_int_equal(d.last, 0);
            assert_false(d.gzip);
            assert_int_equal(d.len, sizes[i]);
            if (sizes[i] > 0)
                assert_memory_equal(d.data, data, sizes[i]);
            assert_string_equal(d.error, "");
            assert_int_equal(d.raw_offset, sizes[i]);
            assert_int_equal(d.decoded, sizes[i]);
            assert_int_equal(d.raw_size, (int64_t)sizes[i]);
            drained_free(&d);
        }
        free(data);
    }
}

/* A lone 0x1f, or 0x1f followed by something else, is plain text. */
static void test_plain_near_magic(void **state)
{
    static const struct {
        const char *bytes;
        size_t n;
    } cases[] = {{"\x1f", 1}, {"\x1f\x8a", 2}, {"\x8b\x1f", 2}, {"\x1f" "abc", 4}};

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        drained d;

        drain_bytes("near.bin", cases[i].bytes, cases[i].n, 0, &d);
        assert_int_equal(d.last, 0);
        assert_false(d.gzip);
        assert_int_equal(d.len, cases[i].n);
        assert_memory_equal(d.data, cases[i].bytes, cases[i].n);
        drained_free(&d);
    }
}

static void test_open_errors(void **state)
{
    buf err = BUF_INIT;
    char *missing = path_in(test_dir, "no-such-file.csv");
    source *src;

    (void)state;
    src = source_open(missing, &err);
    assert_null(src);
    assert_contains(buf_cstr(&err), missing);
    assert_contains(buf_cstr(&err), "cannot open");
    buf_clear(&err);

    src = source_open(test_dir, &err);
    assert_null(src);
    assert_contains(buf_cstr(&err), test_dir);
    assert_contains(buf_cstr(&err), "directory");
    buf_free(&err);
    free(missing);
}

/* ---- gzip: whole members ------------------------------------------------- */

static void test_gzip_single_member(void **state)
{
    static const size_t sizes[] = {1, 100, RAW_CHUNK, 5 * RAW_CHUNK + 3};
    static const int levels[] = {0, 1, 9};

    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
            char *text = text_lines(sizes[i]);
            char *p = path_in(test_dir, "one.csv.gz");
            drained d;
            int64_t size;

            write_gzip_file(p, text, sizes[i], levels[l]);
            {
                size_t n;
                unsigned char *bytes = read_bytes(p, &n);

                size = (int64_t)n;
                free(bytes);
            }
            drain_path(p, l == 0 ? 0 : 1 << 20, &d);
            assert_int_equal(d.last, 0);
            assert_true(d.gzip);
            assert_int_equal(d.len, sizes[i]);
            assert_memory_equal(d.data, text, sizes[i]);
            assert_string_equal(d.error, "");
            assert_int_equal(d.raw_offset, (uint64_t)size);
            assert_int_equal(d.raw_size, size);
            drained_free(&d);
            free(p);
            free(text);
        }
    }
}

/* Members as `cat a.gz b.gz ...` makes them, empty ones anywhere. */
static void test_gzip_members(void **state)
{
    static const struct {
        const char *parts[5];
    } cases[] = {
        {{"", NULL}},                            /* one empty member */
        {{"", "", "", NULL}},                    /* only empty members */
        {{"a,b\n", "c,d\n", NULL}},
        {{"a,b\n", "", "c,d\n", NULL}},          /* empty member in the middle */
        {{"", "a,b\n", NULL}},                   /* ... at the start */
        {{"a,b\n", "", NULL}},                   /* ... at the end */
        {{"x", "y", "z", "w", NULL}},            /* a record split over members */
        {{"header\nrow 1\nro", "w 2\n", "", "row 3\n", NULL}},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *all = NULL;
        size_t all_len = 0;
        char want[256] = "";
        drained d;

        for (size_t k = 0; cases[i].parts[k] != NULL; k++) {
            size_t n;
            unsigned char *m = gzip_member(test_dir, cases[i].parts[k], strlen(cases[i].parts[k]), &n);

            all = realloc(all, all_len + n);
            assert_non_null(all);
            memcpy(all + all_len, m, n);
            all_len += n;
            free(m);
            strcat(want, cases[i].parts[k]);
        }
        for (size_t cap = 0; cap <= 3; cap += 3) {
            drain_bytes("multi.gz", all, all_len, cap == 0 ? 0 : 1, &d);
            if (d.last != 0)
                fail_msg("case %zu: %s", i, d.error);
            assert_true(d.gzip);
            assert_int_equal(d.len, strlen(want));
            assert_memory_equal(d.data, want, d.len);
            assert_int_equal(d.raw_offset, all_len);
            drained_free(&d);
        }
        free(all);
    }
}

/* Many members of real size, mixing zlib-made and stored members. */
static void test_gzip_many_members(void **state)
{
    unsigned char *all = NULL, *want = NULL;
    size_t all_len = 0, want_len = 0;
    drained d;

    (void)state;
    for (size_t k = 0; k < 40; k++) {
        size_t n = (k * 7919) % 50000;
        unsigned char *data = noise(n, (uint32_t)k + 100);
        size_t mlen;
        unsigned char *m = (k % 2) ? gzip_member(test_dir, data, n, &mlen)
                                   : stored_member(data, n, 1 + (k * 131) % 65535, &mlen);

        all = realloc(all, all_len + mlen);
        want = realloc(want, want_len + n + 1);
        assert_non_null(all);
        assert_non_null(want);
        memcpy(all + all_len, m, mlen);
        all_len += mlen;
        if (n > 0)
            memcpy(want + want_len, data, n);
        want_len += n;
        free(m);
        free(data);
    }
    drain_bytes("many.gz", all, all_len, 0, &d);
    if (d.last != 0)
        fail_msg("%s", d.error);
    assert_int_equal(d.len, want_len);
    assert_memory_equal(d.data, want, want_len);
    drained_free(&d);
    free(all);
    free(want);
}

/*
 * A member boundary (and the next member's two magic bytes) right at the end
 * of the 256 KiB raw buffer: the first member is crafted to end at offsets
 * around RAW_CHUNK, so the next magic is split across two raw reads.
 */
static void test_member_boundary_at_raw_chunk(void **state)
{
    (void)state;
    for (long delta = -3; delta <= 3; delta++) {
        size_t end = (size_t)((long)RAW_CHUNK + delta); /* first member's size */
        size_t n1 = end - stored_member_size(0, 65535) + 5; /* guess, then fix */
        size_t block = 65535;
        unsigned char *d1, *m1, *m2, *all;
        size_t l1, l2;
        const char *second = "second member\n";
        drained d;

        while (stored_member_size(n1, block) > end)
            n1--;
        while (stored_member_size(n1, block) < end)
            n1++;
        assert_int_equal(stored_member_size(n1, block), end);
        d1 = noise(n1, 7);
        m1 = stored_member(d1, n1, block, &l1);
        m2 = gzip_member(test_dir, second, strlen(second), &l2);
        assert_int_equal(l1, end);
        all = malloc(l1 + l2);
        assert_non_null(all);
        memcpy(all, m1, l1);
        memcpy(all + l1, m2, l2);

        drain_bytes("boundary.gz", all, l1 + l2, 0, &d);
        if (d.last != 0)
            fail_msg("delta %ld: %s", delta, d.error);
        assert_int_equal(d.len, n1 + strlen(second));
        assert_memory_equal(d.data, d1, n1);
        assert_memory_equal(d.data + n1, second, strlen(second));
        drained_free(&d);

        /* The same with one garbage byte instead of the second member. */
        all[l1] = 'G';
        drain_bytes("boundary-garbage.gz", all, l1 + 1, 0, &d);
        assert_int_equal(d.last, -1);
        assert_int_equal(d.len, n1);
        assert_contains(d.error, "corrupt gzip");
        drained_free(&d);

        free(d1);
        free(m1);
        free(m2);
        free(all);
    }
}

/* ---- gzip: faults -------------------------------------------------------- */

/* Cut a member at every length: detected as gzip from 2 bytes on, always an
 * error, never a silent short file; the message names the member and how far
 * the read got, and what was decoded before is a prefix of the content. */
static void test_truncated_every_length(void **state)
{
    const char *text = "tenant_id,channel\n1,wechat\n2,alipay\n";
    size_t n;
    unsigned char *m;

    (void)state;
    m = gzip_member(test_dir, text, strlen(text), &n);
    for (size_t cut = 2; cut < n; cut++) {
        drained d;

        drain_bytes("cut.gz", m, cut, 0, &d);
        assert_true(d.gzip);
        if (d.last != -1)
            fail_msg("cut at %zu of %zu: no error", cut, n);
        assert_true(strstr(d.error, "truncated gzip") != NULL ||
                    strstr(d.error, "corrupt gzip") != NULL);
        assert_contains(d.error, "cut.gz");
        assert_contains(d.error, "member 1");
        assert_true(d.len <= strlen(text));
        if (d.len > 0)
            assert_memory_equal(d.data, text, d.len);
        drained_free(&d);
    }
    free(m);
}

/* A big file cut in the middle of its second member: the error says where. */
static void test_truncated_big(void **state)
{
    size_t n1, n2, len = 3 * RAW_CHUNK;
    char *t1 = text_lines(len);
    unsigned char *d2 = noise(len, 3);
    unsigned char *m1 = gzip_member(test_dir, t1, len, &n1);
    unsigned char *m2 = gzip_member(test_dir, d2, len, &n2);
    unsigned char *all = malloc(n1 + n2);
    drained d;
    char want[128];

    (void)state;
    assert_non_null(all);
    memcpy(all, m1, n1);
    memcpy(all + n1, m2, n2);
    drain_bytes("big-cut.csv.gz", all, n1 + n2 / 2, 0, &d);
    assert_int_equal(d.last, -1);
    assert_contains(d.error, "big-cut.csv.gz");
    assert_contains(d.error, "truncated gzip");
    assert_contains(d.error, "member 2");
    snprintf(want, sizeof want, "after %zu compressed bytes", n1 + n2 / 2);
    assert_contains(d.error, want);
    snprintf(want, sizeof want, "(%zu bytes decoded)", (size_t)d.decoded);
    assert_contains(d.error, want);
    assert_true(d.len > len && d.len < 2 * len);
    assert_memory_equal(d.data, t1, len);
    assert_memory_equal(d.data + len, d2, d.len - len);
    drained_free(&d);

    /* Cut exactly at the member boundary: a clean, shorter file. */
    drain_bytes("big-cut.csv.gz", all, n1, 0, &d);
    assert_int_equal(d.last, 0);
    assert_int_equal(d.len, len);
    drained_free(&d);
    free(t1);
    free(d2);
    free(m1);
    free(m2);
    free(all);
}

static void test_trailing_garbage(void **state)
{
    static const struct {
        const char *tail;
        size_t n;
        const char *want; /* substring of the error */
    } cases[] = {
        {"x", 1, "unexpected data after member 1"},
        {"hello world\n", 12, "unexpected data after member 1"},
        {"\0", 1, "unexpected data after member 1"},
        {"\0\0\0\0\0\0\0\0", 8, "unexpected data after member 1"}, /* tar-style padding */
        {"\x1f", 1, "unexpected data after member 1"},
        {"\x8b\x1f", 2, "unexpected data after member 1"},
        {"\x1f\x8b", 2, "truncated gzip"},                   /* a member that stops at once */
        {"\x1f\x8b\x08\0\0\0\0\0\0\x03", 10, "truncated gzip"}, /* header only */
        {"\x1f\x8bnot deflate at all", 19, "corrupt gzip"},
    };
    const char *text = "a,b\n1,2\n";
    size_t n;
    unsigned char *m;

    (void)state;
    m = gzip_member(test_dir, text, strlen(text), &n);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *all = malloc(n + cases[i].n);
        drained d;

        assert_non_null(all);
        memcpy(all, m, n);
        memcpy(all + n, cases[i].tail, cases[i].n);
        drain_bytes("tail.gz", all, n + cases[i].n, 0, &d);
        if (d.last != -1)
            fail_msg("case %zu: no error", i);
        if (strstr(d.error, cases[i].want) == NULL)
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, d.error, cases[i].want);
        /* the first member came out whole before the error */
        assert_int_equal(d.len, strlen(text));
        assert_memory_equal(d.data, text, d.len);
        drained_free(&d);
        free(all);
    }
    /* Garbage after the second of two members names member 2. */
    {
        unsigned char *all = malloc(2 * n + 3);
        drained d;

        assert_non_null(all);
        memcpy(all, m, n);
        memcpy(all + n, m, n);
        memcpy(all + 2 * n, "abc", 3);
        drain_bytes("tail2.gz", all, 2 * n + 3, 0, &d);
        assert_int_equal(d.last, -1);
        assert_contains(d.error, "after member 2");
        assert_int_equal(d.len, 2 * strlen(text));
        drained_free(&d);
        free(all);
    }
    free(m);
}

/* Damaged bytes inside a member: the CRC or length check or the deflate
 * data itself must catch them. */
static void test_corrupt_member(void **state)
{
    size_t len = 20000, n;
    char *text = text_lines(len);
    unsigned char *m = gzip_member(test_dir, text, len, &n);
    const size_t spots[] = {n - 1, n - 5, n - 8, n / 2, 12};

    (void)state;
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        drained d;

        m[spots[i]] ^= 0x55;
        drain_bytes("bad.gz", m, n, 0, &d);
        if (d.last != -1)
            fail_msg("flip at %zu: no error", spots[i]);
        if (spots[i] >= n - 8) /* trailer: the CRC or length check */
            assert_contains(d.error, "corrupt gzip");
        assert_contains(d.error, "member 1");
        m[spots[i]] ^= 0x55;
        drained_free(&d);
    }
    free(m);
    free(text);
}

/* ---- standard input -------------------------------------------------------- */

/* Drains source "-" while a child feeds stdin `piece` bytes at a time. */
static void drain_stdin(const unsigned char *bytes, size_t n, size_t piece, drained *d)
{
    stdin_feed feed;
    buf err = BUF_INIT;
    source *src;

    stdin_feed_start(&feed, bytes, n, 0, piece);
    src = source_open_with("-", inflater, &err);
    if (src == NULL)
        fail_msg("source_open(-): %s", buf_cstr(&err));
    drain(src, 0, d);
    assert_int_equal(d->raw_size, -1);
    source_close(&src);
    buf_free(&err);
    stdin_feed_end(&feed);
}

static void test_stdin(void **state)
{
    const char *text = "tenant_id,channel\n1,wechat\n";
    size_t n;
    unsigned char *m = gzip_member(test_dir, text, strlen(text), &n);
    unsigned char *two = malloc(2 * n + 1);
    drained d;

    (void)state;
    assert_non_null(two);
    /* plain, byte by byte */
    drain_stdin((const unsigned char *)text, strlen(text), 1, &d);
    assert_int_equal(d.last, 0);
    assert_false(d.gzip);
    assert_int_equal(d.len, strlen(text));
    assert_memory_equal(d.data, text, d.len);
    drained_free(&d);
    /* gzip, two members, byte by byte: the magic arrives in two reads */
    memcpy(two, m, n);
    memcpy(two + n, m, n);
    drain_stdin(two, 2 * n, 1, &d);
    assert_int_equal(d.last, 0);
    assert_true(d.gzip);
    assert_int_equal(d.len, 2 * strlen(text));
    drained_free(&d);
    /* gzip then one stray byte: named as standard input */
    two[n] = '!';
    drain_stdin(two, n + 1, 3, &d);
    assert_int_equal(d.last, -1);
    assert_contains(d.error, "standard input");
    assert_contains(d.error, "unexpected data after member 1");
    drained_free(&d);
    /* truncated, from a pipe */
    drain_stdin(m, n - 3, 5, &d);
    assert_int_equal(d.last, -1);
    assert_contains(d.error, "standard input");
    assert_contains(d.error, "truncated gzip");
    drained_free(&d);
    /* empty stdin */
    drain_stdin(m, 0, 1, &d);
    assert_int_equal(d.last, 0);
    assert_int_equal(d.len, 0);
    drained_free(&d);
    free(two);
    free(m);
}

/* ---- gzip headers and the two inflaters ---------------------------------- */

/* One member with a hand-made header (flags, extra, name, comment, header
 * CRC) in front of the deflate data and trailer zlib made for text. */
static unsigned char *member_with_header(const char *text, unsigned char cm, unsigned char flg,
                                         size_t name_len, bool good_hcrc, size_t *out_len)
{
    size_t n, p = 0;
    unsigned char *m = gzip_member(test_dir, text, strlen(text), &n);
    unsigned char *h = malloc(n + name_len + 64);

    assert_non_null(h);
    memcpy(h, "\x1f\x8b", 2);
    h[2] = cm;
    h[3] = flg;
    memcpy(h + 4, "\1\2\3\4\0\3", 6); /* mtime, xfl, os */
    p = 10;
    if (flg & 4) { /* FEXTRA: one 4-byte subfield */
        memcpy(h + p, "\x08\0AB\x04\0wxyz", 10);
        p += 10;
    }
    if (flg & 8) { /* FNAME */
        for (size_t i = 0; i < name_len; i++)
            h[p++] = (unsigned char)('a' + i % 26);
        h[p++] = 0;
    }
    if (flg & 16) { /* FCOMMENT */
        memcpy(h + p, "a comment", 10);
        p += 10;
    }
    if (flg & 2) { /* FHCRC: the low 16 bits of the header's CRC-32 */
        uLong crc = crc32(0L, h, (uInt)p) ^ (good_hcrc ? 0 : 1);

        h[p++] = (unsigned char)(crc & 0xff);
        h[p++] = (unsigned char)((crc >> 8) & 0xff);
    }
    memcpy(h + p, m + 10, n - 10);
    *out_len = p + n - 10;
    free(m);
    return h;
}

/* The header fields a gzip member may carry, and what zlib refuses in one. */
static void test_gzip_headers(void **state)
{
    static const struct {
        unsigned char cm, flg;
        size_t name_len;
        bool good_hcrc;
        const char *want; /* NULL: read whole; else a substring of the error */
    } cases[] = {
        {8, 1, 0, true, NULL},                          /* FTEXT */
        {8, 4, 0, true, NULL},                          /* FEXTRA */
        {8, 8, 3, true, NULL},                          /* FNAME */
        {8, 8, 5000, true, NULL},                       /* a name across refills */
        {8, 16, 0, true, NULL},                         /* FCOMMENT */
        {8, 2 | 4 | 8 | 16, 7, true, NULL},             /* all, header CRC right */
        {8, 2, 0, false, "header crc mismatch"},
        {8, 2 | 8, 9, false, "header crc mismatch"},
        {8, 0x20, 0, true, "unknown header flags set"}, /* reserved bits */
        {8, 0x40 | 8, 3, true, "unknown header flags set"},
        {8, 0x80, 0, true, "unknown header flags set"},
        {7, 0, 0, true, "unknown compression method"},
        {0, 8, 3, true, "unknown compression method"},
    };
    const char *text = "tenant_id,channel\n1,wechat\n2,alipay\n";

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n, plain_n;
        unsigned char *m = member_with_header(text, cases[i].cm, cases[i].flg,
                                              cases[i].name_len, cases[i].good_hcrc, &n);
        unsigned char *plain = gzip_member(test_dir, text, strlen(text), &plain_n);
        unsigned char *two = malloc(plain_n + n);
        drained d;

        assert_non_null(two);
        /* alone, and as the second member after a plain one */
        memcpy(two, plain, plain_n);
        memcpy(two + plain_n, m, n);
        for (int second = 0; second <= 1; second++) {
            size_t base = second ? strlen(text) : 0;

            drain_bytes("hdr.gz", second ? two : m, second ? plain_n + n : n, 0, &d);
            if (cases[i].want == NULL) {
                if (d.last != 0)
                    fail_msg("case %zu (%s): %s", i, source_inflate_name(inflater), d.error);
                assert_int_equal(d.len, base + strlen(text));
                assert_memory_equal(d.data + base, text, strlen(text));
            } else {
                if (d.last != -1)
                    fail_msg("case %zu (%s): no error", i, source_inflate_name(inflater));
                if (strstr(d.error, cases[i].want) == NULL)
                    fail_msg("case %zu (%s): \"%s\" lacks \"%s\"", i,
                             source_inflate_name(inflater), d.error, cases[i].want);
                assert_contains(d.error, second ? "member 2" : "member 1");
                assert_int_equal(d.len, base);
            }
            drained_free(&d);
        }
        free(two);
        free(plain);
        free(m);
    }
}

/* The kind of an error, without the offsets (which differ by inflater). */
static void error_kind(const char *e, char *kind, size_t cap)
{
    const char *p = strstr(e, "truncated gzip");
    const char *member;

    if (!p)
        p = strstr(e, "corrupt gzip");
    assert_non_null(p);
    member = strstr(p, "member ");
    assert_non_null(member);
    snprintf(kind, cap, "%.*s %u", (int)(strstr(p, ":") ? 14 : 12), p,
             (unsigned)strtoul(member + 7, NULL, 10));
}

/* Drains bytes with both inflaters and holds ISA-L to zlib's verdict: the
 * same bytes when zlib reads to the end; an error of the same kind in the
 * same member otherwise, with what each decoded a prefix of the other. */
static void assert_agree(const unsigned char *bytes, size_t n, const char *what, size_t at)
{
    drained z, i;
    source_inflate saved = inflater;

    inflater = SOURCE_INFLATE_ZLIB;
    drain_bytes("diff.gz", bytes, n, 0, &z);
    inflater = SOURCE_INFLATE_ISAL;
    drain_bytes("diff.gz", bytes, n, 0, &i);
    inflater = saved;
    if (z.last != i.last)
        fail_msg("%s at %zu: zlib %s, isa-l %s", what, at, z.last ? z.error : "ok",
                 i.last ? i.error : "ok");
    if (z.last == 0) {
        assert_int_equal(z.len, i.len);
        assert_memory_equal(z.data, i.data, z.len);
    } else {
        char kz[64], ki[64];
        size_t common = z.len < i.len ? z.len : i.len;

        error_kind(z.error, kz, sizeof kz);
        error_kind(i.error, ki, sizeof ki);
        if (strcmp(kz, ki) != 0)
            fail_msg("%s at %zu: zlib \"%s\", isa-l \"%s\"", what, at, z.error, i.error);
        if (common > 0)
            assert_memory_equal(z.data, i.data, common);
    }
    drained_free(&z);
    drained_free(&i);
}

/* Every byte of a four-member file flipped, every cut, and members glued to
 * garbage: ISA-L must say what zlib says. */
static void test_inflaters_agree(void **state)
{
    char *t1 = text_lines(3000);
    unsigned char *n2 = noise(700, 11);
    size_t l1, l2, l3, l4, len;
    unsigned char *m1 = gzip_member(test_dir, t1, 3000, &l1);
    unsigned char *m2 = stored_member(n2, 700, 300, &l2);
    unsigned char *m3 = gzip_member(test_dir, "a,b\n", 4, &l3);
    unsigned char *m4 = member_with_header("x,y\n1,2\n", 8, 2 | 8 | 16, 5, true, &l4);
    unsigned char *all;

    (void)state;
    if (!source_inflate_built(SOURCE_INFLATE_ISAL)) {
        print_message("    (no ISA-L in this build: nothing to compare)\n");
        goto out;
    }
    len = l1 + l2 + l3 + l4;
    all = malloc(len + 8);
    assert_non_null(all);
    memcpy(all, m1, l1);
    memcpy(all + l1, m2, l2);
    memcpy(all + l1 + l2, m3, l3);
    memcpy(all + l1 + l2 + l3, m4, l4);
    assert_agree(all, len, "whole", 0);
    for (size_t at = 0; at < len; at++) {
        for (int bit = 0; bit < 8; bit += 3) {
            all[at] ^= (unsigned char)(1u << ((at + (size_t)bit) % 8));
            assert_agree(all, len, "flip", at);
            all[at] ^= (unsigned char)(1u << ((at + (size_t)bit) % 8));
        }
    }
    for (size_t cut = 1; cut < len; cut += 7)
        assert_agree(all, cut, "cut", cut);
    memcpy(all + len, "\x1f\x8b\x08\0garb", 8);
    for (size_t tail = 1; tail <= 8; tail++)
        assert_agree(all, len + tail, "tail", tail);
    free(all);
out:
    free(t1);
    free(n2);
    free(m1);
    free(m2);
    free(m3);
    free(m4);
}

/* The default inflater is ISA-L's exactly when the build has it. */
static void test_default_inflater(void **state)
{
    (void)state;
    assert_true(source_inflate_built(SOURCE_INFLATE_ZLIB));
    assert_true(source_inflate_built(SOURCE_INFLATE_DEFAULT));
    assert_string_equal(source_inflate_name(SOURCE_INFLATE_ZLIB), "zlib");
    assert_string_equal(source_inflate_name(SOURCE_INFLATE_DEFAULT),
                        source_inflate_built(SOURCE_INFLATE_ISAL) ? "isa-l" : "zlib");
#ifdef IDEMLOAD_HAVE_ISAL
    assert_true(source_inflate_built(SOURCE_INFLATE_ISAL));
#else
    {
        buf err = BUF_INIT;
        char *p = path_in(test_dir, "any.gz");

        write_bytes(p, "x", 1);
        assert_null(source_open_with(p, SOURCE_INFLATE_ISAL, &err));
        assert_contains(buf_cstr(&err), "no isa-l inflater");
        buf_free(&err);
        free(p);
    }
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_sizes),
        cmocka_unit_test(test_plain_near_magic),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_gzip_single_member),
        cmocka_unit_test(test_gzip_members),
        cmocka_unit_test(test_gzip_many_members),
        cmocka_unit_test(test_member_boundary_at_raw_chunk),
        cmocka_unit_test(test_truncated_every_length),
        cmocka_unit_test(test_truncated_big),
        cmocka_unit_test(test_trailing_garbage),
        cmocka_unit_test(test_corrupt_member),
        cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_gzip_headers),
    };
    const struct CMUnitTest once[] = {
        cmocka_unit_test(test_default_inflater),
        cmocka_unit_test(test_inflaters_agree),
    };
    static const source_inflate each[] = {SOURCE_INFLATE_ZLIB, SOURCE_INFLATE_ISAL};
    int failed = 0;

    signal(SIGPIPE, SIG_IGN);
    for (size_t k = 0; k < sizeof each / sizeof each[0]; k++) {
        if (!source_inflate_built(each[k]))
            continue;
        inflater = each[k];
        print_message("inflater: %s\n", source_inflate_name(inflater));
        failed += _cmocka_run_group_tests(source_inflate_name(inflater), tests,
                                          sizeof tests / sizeof tests[0], tmpdir_setup,
                                          tmpdir_teardown);
    }
    failed += cmocka_run_group_tests_name("both", once, tmpdir_setup, tmpdir_teardown);
    return failed;
}
