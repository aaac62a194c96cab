/*
 * test_utf8.c - utf8_check on hand-picked sequences, on NULs and bad bytes at
 * every position around the eight-byte fast path, and exhaustively against a
 * reference decoder that works from bit patterns instead of byte ranges.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "rules/utf8.h"

/*
 * Checks s[0..len) from an exact-size heap copy, so that ASan reports any
 * read past the end, and compares with the expectation (want_off and
 * want_nul are ignored when want_ok).
 */
static void
expect(const char *s, size_t len, bool want_ok, size_t want_off, bool want_nul,
       const char *what)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, s, len);
    size_t off = (size_t) -1;
    bool nul = !want_nul;
    bool ok = utf8_check(copy, len, &off, &nul);
    free(copy);
    if (ok != want_ok)
        fail_msg("%s (len %zu): ok=%d, want %d (off %zu)", what, len, ok,
                 want_ok, off);
    if (!ok && (off != want_off || nul != want_nul))
        fail_msg("%s (len %zu): off %zu nul %d, want off %zu nul %d", what,
                 len, off, nul, want_off, want_nul);
}

typedef struct utf8_case {
    const char *what;
    const char *bytes;
    size_t len;
    bool ok;
    size_t off;
    bool nul;
} utf8_case;

#define OK(what, lit) {what, lit, sizeof lit - 1, true, 0, false}
#define BAD(what, lit, off) {what, lit, sizeof lit - 1, false, off, false}
#define NUL(what, lit, off) {what, lit, sizeof lit - 1, false, off, true}

static const utf8_case cases[] = {
    OK("empty", ""),
    OK("ascii", "hello"),
    OK("ascii 8", "abcdefgh"),
    OK("ascii 17", "abcdefghijklmnopq"),
    OK("all ascii controls but NUL",
       "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"
       "\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"),
    OK("2-byte e acute", "caf\xc3\xa9"),
    OK("3-byte euro", "\xe2\x82\xac 100"),
    OK("4-byte emoji", "\xf0\x9f\x98\x80"),
    OK("mixed", "abcdefgh\xc3\xa9ijklmnop\xe2\x82\xacqrstuvwx\xf0\x9f\x98\x80yz"),
    OK("U+0080", "\xc2\x80"),
    OK("U+07FF", "\xdf\xbf"),
    OK("U+0800", "\xe0\xa0\x80"),
    OK("U+0FFF", "\xe0\xbf\xbf"),
    OK("U+D7FF", "\xed\x9f\xbf"),
    OK("U+E000", "\xee\x80\x80"),
    OK("U+FEFF BOM", "\xef\xbb\xbf"),
    OK("U+FFFF", "\xef\xbf\xbf"),
    OK("U+10000", "\xf0\x90\x80\x80"),
    OK("U+3FFFF", "\xf0\xbf\xbf\xbf"),
    OK("U+40000", "\xf1\x80\x80\x80"),
    OK("U+10FFFF", "\xf4\x8f\xbf\xbf"),
    /* Overlong forms. */
    BAD("overlong NUL C0 80", "\xc0\x80", 0),
    BAD("overlong C1 BF", "\xc1\xbf", 0),
    BAD("overlong E0 80 80", "\xe0\x80\x80", 0),
    BAD("overlong E0 9F BF", "\xe0\x9f\xbf", 0),
    BAD("overlong F0 80 80 80", "\xf0\x80\x80\x80", 0),
    BAD("overlong F0 8F BF BF", "\xf0\x8f\xbf\xbf", 0),
    BAD("overlong after ascii", "abc\xc0\xaf" "def", 3),
    /* Surrogates. */
    BAD("surrogate D800", "\xed\xa0\x80", 0),
    BAD("surrogate DBFF", "\xed\xaf\xbf", 0),
    BAD("surrogate DC00", "\xed\xb0\x80", 0),
    BAD("surrogate DFFF", "\xed\xbf\xbf", 0),
    BAD("CESU pair", "x\xed\xa0\xbd\xed\xb8\x80", 1),
    /* Beyond U+10FFFF and impossible leads. */
    BAD("U+110000", "\xf4\x90\x80\x80", 0),
    BAD("F4 BF", "\xf4\xbf\xbf\xbf", 0),
    BAD("F5", "\xf5\x80\x80\x80", 0),
    BAD("F7", "\xf7\xbf\xbf\xbf", 0),
    BAD("F8 5-byte", "\xf8\x88\x80\x80\x80", 0),
    BAD("FC 6-byte", "\xfc\x84\x80\x80\x80\x80", 0),
    BAD("FE", "ab\xfe", 2),
    BAD("FF", "\xff", 0),
    /* Stray continuation bytes. */
    BAD("lone 80", "\x80", 0),
    BAD("lone BF after ascii", "abcdefghij\xbf", 10),
    BAD("extra continuation", "\xc3\xa9\xa9", 2),
    BAD("latin-1 text", "caf\xe9", 3),
    /* Broken continuation: the fault is the sequence's lead byte. */
    BAD("C3 then ascii", "\xc3(", 0),
    BAD("E2 28 A1", "\xe2\x28\xa1", 0),
    BAD("E2 82 28", "\xe2\x82\x28", 0),
    BAD("F0 9F 98 28", "\xf0\x9f\x98\x28", 0),
    BAD("F0 28 8C BC", "\xf0\x28\x8c\xbc", 0),
    BAD("E2 then C3 A9", "\xe2\xc3\xa9", 0),
    BAD("C3 then NUL", "\xc3\x00", 0),
    /* Truncated at the end. */
    BAD("truncated 2", "abc\xc3", 3),
    BAD("truncated 3 of 1", "abcdefgh\xe2", 8),
    BAD("truncated 3 of 2", "abcdefgh\xe2\x82", 8),
    BAD("truncated 4 of 3", "abcdefghijklmnop\xf0\x9f\x98", 16),
    BAD("truncated 4 of 1", "\xf0", 0),
    /* NUL. */
    NUL("only NUL", "\x00", 0),
    NUL("NUL first of 8", "\x00" "bcdefgh", 0),
    NUL("NUL last of 8", "abcdefg\x00", 7),
    NUL("NUL in second word", "abcdefghij\x00lmnop", 10),
    NUL("NUL in tail", "abcdefghijk\x00", 11),
    NUL("NUL after multibyte", "\xc3\xa9\x00", 2),
    NUL("NUL after multibyte in word", "\xe2\x82\xac" "abc\x00" "defgh", 6),
    NUL("NUL before bad byte", "ab\x00\xff", 2),
    BAD("bad byte before NUL", "ab\xff\x00", 2),
};

static void
test_cases(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(cases[i].bytes, cases[i].len, cases[i].ok, cases[i].off,
               cases[i].nul, cases[i].what);
}

static void
test_null_out_pointers(void **state)
{
    (void) state;
    assert_true(utf8_check("abc", 3, NULL, NULL));
    assert_false(utf8_check("a\0c", 3, NULL, NULL));
    assert_false(utf8_check("a\xff", 2, NULL, NULL));
    assert_true(utf8_check(NULL, 0, NULL, NULL));
}

/* The length is the end: a NUL or bad byte just past it is not seen. */
static void
test_length_bounds(void **state)
{
    (void) state;
    assert_true(utf8_check("abcdefghijklmnop\xff", 16, NULL, NULL));
    assert_true(utf8_check("abcdefg\0", 7, NULL, NULL));
    expect("\xe2\x82\xac", 2, false, 0, false, "euro cut at 2");
}

/*
 * A NUL, and each kind of bad byte, at every position of ASCII texts of
 * every length up to 40 and at every alignment: the fast path, the word that
 * straddles the end, and the byte-wise tail must all report the same offset.
 */
static void
test_every_position(void **state)
{
    (void) state;
    static const unsigned char faults[] = {0x00, 0x80, 0xbf, 0xc0, 0xc1,
                                           0xf5, 0xff, 0xc3, 0xe2, 0xf0};
    char buf[48];

    for (size_t len = 1; len <= 40; len++)
        for (size_t pos = 0; pos < len; pos++)
            for (size_t f = 0; f < sizeof faults; f++)
            {
                for (size_t i = 0; i < len; i++)
                    buf[i] = (char) ('a' + i % 26);
                buf[pos] = (char) faults[f];
                expect(buf, len, false, pos, faults[f] == 0, "fault at pos");
            }

    /* Valid multibyte characters at every position, followed by a NUL. */
    static const char *chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    for (size_t c = 0; c < 3; c++)
    {
        size_t clen = strlen(chars[c]);
        for (size_t pos = 0; pos + clen <= 40; pos++)
        {
            memset(buf, 'x', 40);
            memcpy(buf + pos, chars[c], clen);
            expect(buf, 40, true, 0, false, "char at pos");
            buf[39] = '\0';
            if (pos + clen <= 39)
                expect(buf, 40, false, 39, true, "char then NUL at end");
        }
    }
}

/*
 * Reference: decode by bit patterns into a code point, then refuse what RFC
 * 3629 refuses.  Returns the sequence length, or 0 for a fault.
 */
static size_t
ref_char(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t need;
    uint32_t cp, min;

    if (c < 0x80)
        return c == 0 ? 0 : 1;
    if ((c & 0xe0) == 0xc0)
    {
        need = 2;
        cp = c & 0x1f;
        min = 0x80;
    }
    else if ((c & 0xf0) == 0xe0)
    {
        need = 3;
        cp = c & 0x0f;
        min = 0x800;
    }
    else if ((c & 0xf8) == 0xf0)
    {
        need = 4;
        cp = c & 0x07;
        min = 0x10000;
    }
    else
        return 0;
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++)
    {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return need;
}

static bool
ref_check(const unsigned char *s, size_t len, size_t *off, bool *nul)
{
    for (size_t i = 0; i < len;)
    {
        size_t n = ref_char(s + i, len - i);
        if (n == 0)
        {
            *off = i;
            *nul = s[i] == 0;
            return false;
        }
        i += n;
    }
    return true;
}

static void
compare(const unsigned char *s, size_t len)
{
    size_t off = 0, roff = 0;
    bool nul = false, rnul = false;
    bool ok = utf8_check((const char *) s, len, &off, &nul);
    bool rok = ref_check(s, len, &roff, &rnul);
    if (ok != rok || (!ok && (off != roff || nul != rnul)))
    {
        char hex[3 * 40 + 1] = "";
        for (size_t i = 0; i < len && i < 40; i++)
        {
            static const char digits[] = "0123456789abcdef";
            hex[3 * i] = digits[s[i] >> 4];
            hex[3 * i + 1] = digits[s[i] & 15];
            hex[3 * i + 2] = ' ';
            hex[3 * i + 3] = '\0';
        }
        fail_msg("[%s] len %zu: ok=%d off=%zu nul=%d, reference ok=%d "
                 "off=%zu nul=%d", hex, len, ok, off, nul, rok, roff, rnul);
    }
}

/*
 * Every 1-, 2- and 3-byte string, and every 4-byte string whose last byte
 * is one of a few telling values, each also behind seven ASCII bytes so it
 * straddles the first word.
 */
static void
test_exhaustive(void **state)
{
    (void) state;
    static const unsigned char last[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90,
                                         0xbf, 0xc0, 0xf4, 0xff};
    unsigned char b[12] = "abcdefg";

    for (unsigned x = 0; x < 256; x++)
    {
        b[7] = (unsigned char) x;
        compare(b + 7, 1);
        for (unsigned y = 0; y < 256; y++)
        {
            b[8] = (unsigned char) y;
            compare(b + 7, 2);
            for (unsigned z = 0; z < 256; z++)
            {
                b[9] = (unsigned char) z;
                compare(b + 7, 3);
                if (x >= 0xe0)
                    for (size_t w = 0; w < sizeof last; w++)
                    {
                        b[10] = last[w];
                        compare(b + 7, 4);
                        compare(b, 11);
                    }
            }
        }
    }
}

/* Random texts, mostly ASCII with some UTF-8 and some noise. */
static void
test_random(void **state)
{
    (void) state;
    static const char *pieces[] = {"a", "bcdefghi", "\xc3\xa9", "\xe2\x82\xac",
                                   "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
                                   "\xed\x9f\xbf", "\xee\x80\x80"};
    unsigned char buf[64];
    uint64_t x = 42;

    for (int iter = 0; iter < 300000; iter++)
    {
        size_t len = 0;
        while (len < 50)
        {
            x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            unsigned r = (unsigned) (x >> 33);
            if (r % 40 == 0)
                buf[len++] = (unsigned char) (r >> 8); /* any byte */
            else
            {
                const char *p = pieces[(r >> 8) % 8];
                size_t n = strlen(p);
                memcpy(buf + len, p, n);
                len += n;
            }
        }
        compare(buf, len);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_null_out_pointers),
        cmocka_unit_test(test_length_bounds),
        cmocka_unit_test(test_every_position),
        cmocka_unit_test(test_exhaustive),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
