/*
 * test_byte_scan.c - the SSE2 form of byte_scan against the portable one
 * (util/byte_scan.h): for every set the readers and rules use, on spans of
 * every length up to 80 with a hit at every position, and on random bytes;
 * the index and the copied bytes must agree.  Then json_validate_utf8
 * against json_validate on valid UTF-8 texts: same answer, reason, offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "rules/json_scan.h"
#include "rules/utf8.h"
#include "util/byte_scan.h"

static const byte_set sets[] = {
    {',', '"', '\r', 0, false},      /* csv unquoted field */
    {'"', '\r', '\r', 0, false},     /* csv quoted field */
    {'"', '\\', '\\', 0x20, true},   /* json string, UTF-8 unchecked */
    {'"', '\\', '\\', 0x20, false},  /* json string, UTF-8 known */
    {0, 0, 0, 0, true},              /* utf8_check */
};

/* Scans p[0..n) (an exact-size heap copy, for ASan) both ways, with and
 * without copying, and fails on any difference. */
static void compare(const char *p, size_t n, byte_set s)
{
    char *src = malloc(n ? n : 1);
    char *d1 = malloc(n ? n : 1);
    char *d2 = malloc(n ? n : 1);
    assert_true(src && d1 && d2);
    memcpy(src, p, n);
    size_t want = byte_scan_portable(NULL, src, n, s);
    size_t got = byte_scan(NULL, src, n, s);
    if (got != want)
        fail_msg("len %zu: byte_scan %zu, portable %zu", n, got, want);
    assert_int_equal(byte_scan_portable(d1, src, n, s), want);
    assert_int_equal(byte_scan(d2, src, n, s), want);
    assert_memory_equal(d1, src, want);
    if (want > 0)
        assert_memory_equal(d2, src, want);
    free(src);
    free(d1);
    free(d2);
}

static void test_every_position(void **state)
{
    (void)state;
    char buf[80];
    for (size_t k = 0; k < sizeof sets / sizeof *sets; k++) {
        const byte_set s = sets[k];
        const unsigned char hits[] = {s.a, s.b, s.c, 0x1f, 0x80, 0xff, 0x7f, 0x20};
        for (size_t n = 0; n <= sizeof buf; n++) {
            memset(buf, 'a', sizeof buf);
            compare(buf, n, s); /* no hit at all */
            for (size_t at = 0; at < n; at++)
                for (size_t h = 0; h < sizeof hits; h++) {
                    memset(buf, 'a', sizeof buf);
                    buf[at] = (char)hits[h];
                    compare(buf, n, s);
                }
        }
    }
}

static void test_random(void **state)
{
    (void)state;
    char buf[200];
    srand(31);
    for (int round = 0; round < 200000; round++) {
        size_t n = (size_t)rand() % sizeof buf;
        int sparse = rand() % 64 + 1; /* one odd byte in about `sparse` */
        for (size_t i = 0; i < n; i++)
            buf[i] = rand() % sparse ? (char)('a' + rand() % 26) : (char)(rand() % 256);
        compare(buf, n, sets[round % (sizeof sets / sizeof *sets)]);
    }
}

/* json_validate_utf8 says what json_validate says, for a valid UTF-8 text. */
static void same_json(const char *t, size_t n)
{
    json_kind k1 = JSON_KIND_NULL, k2 = JSON_KIND_NULL;
    json_error e1 = {0}, e2 = {0};
    bool ok1 = json_validate(t, n, &k1, &e1);
    bool ok2 = json_validate_utf8(t, n, &k2, &e2);
    if (ok1 != ok2 || (ok1 && k1 != k2) ||
        (!ok1 && (strcmp(e1.reason, e2.reason) != 0 || e1.offset != e2.offset)))
        fail_msg("json_validate and json_validate_utf8 differ on %.*s", (int)n, t);
}

static void test_json_utf8_known(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{\"amount\":771.23,\"currency\":\"CNY\",\"payer\":{\"buyer_id\":\"2088\"},\"a\":1}",
        "\"h\xc3\xa9llo w\xe2\x82\xacrld and a longer tail \xf0\x9f\x98\x80 to pass 16\"",
        "[\"\\u00e9\\ud83d\\ude00\", \"tab\there\", \"\\x\"]",
        "{\"k\xc3\xa9y\": \"\x01\"}",
        "{\"unterminated \xe4\xb8\xad\xe6\x96\x87 string that is long enough",
        "[1, 2, \"\\u0000\"]",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        size_t n = strlen(texts[i]);
        assert_true(utf8_check(texts[i], n, NULL, NULL));
        for (size_t cut = 0; cut <= n; cut++)
            if (utf8_check(texts[i], cut, NULL, NULL))
                same_json(texts[i], cut);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_position),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_json_utf8_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
