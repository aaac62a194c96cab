/*
 * fuzz_white_space.h - an independent reference for the trimming rule of
 * SPEC.md "Validation" (validate.h, trim_white_space), for the fuzz targets
 * to check the real one against: decode UTF-8 from bit patterns, then
 * compare code points with a list, instead of matching byte patterns.
 *
 * ref_trim trims whole well-formed characters of the list from both ends;
 * on valid UTF-8 it must agree with trim_white_space exactly.
 */
#ifndef IDEMLOAD_FUZZ_WHITE_SPACE_H
#define IDEMLOAD_FUZZ_WHITE_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Unicode White_Space, and the zero-width characters the rule adds. */
static inline bool ref_is_trimmed(uint32_t cp)
{
    static const uint32_t list[] = {
        0x0009, 0x000A, 0x000B, 0x000C, 0x000D, 0x0020, 0x0085, 0x00A0, 0x1680,
        0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
        0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
        0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF,
    };

    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        if (list[i] == cp)
            return true;
    return false;
}

/*
 * Decodes the well-formed character that starts at s[0] within s[0..n):
 * its length (1..4), with the code point in *cp, or 0 when none starts
 * there.  Works from the bit patterns and then rejects overlong forms,
 * surrogates and values above U+10FFFF by value.
 */
static inline size_t ref_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t need;
    uint32_t v;

    if (n == 0)
        return 0;
    if ((s[0] & 0x80) == 0) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xE0) == 0xC0)
        need = 2, v = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0)
        need = 3, v = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0)
        need = 4, v = s[0] & 0x07;
    else
        return 0;
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if ((need == 2 && v < 0x80) || (need == 3 && v < 0x800) || (need == 4 && v < 0x10000) ||
        (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
        return 0;
    *cp = v;
    return need;
}

/* Length of the listed character starting at s[0], or 0. */
static inline size_t ref_trimmed_at(const unsigned char *s, size_t n)
{
    uint32_t cp;
    size_t k = ref_decode(s, n, &cp);

    return k > 0 && ref_is_trimmed(cp) ? k : 0;
}

/* Length of the listed character ending at s[n - 1], or 0: the one whose
 * decoding from some start within the last four bytes ends exactly there. */
static inline size_t ref_trimmed_before(const unsigned char *s, size_t n)
{
    for (size_t k = 1; k <= 4 && k <= n; k++) {
        uint32_t cp;

        if (ref_decode(s + n - k, k, &cp) == k)
            return ref_is_trimmed(cp) ? k : 0;
    }
    return 0;
}

/* Trims listed characters from both ends of s[0..n): offset and length of
 * what is left. */
static inline void ref_trim(const unsigned char *s, size_t n, size_t *off, size_t *len)
{
    size_t a = 0, b = n, k;

    while (a < b && (k = ref_trimmed_at(s + a, b - a)) > 0)
        a += k;
    while (a < b && (k = ref_trimmed_before(s + a, b - a)) > 0)
        b -= k;
    *off = a;
    *len = b - a;
}

/* Is s[0..n) a run of listed characters (the part a trim took away)? */
static inline bool ref_all_trimmed(const unsigned char *s, size_t n)
{
    size_t i = 0, k;

    while (i < n && (k = ref_trimmed_at(s + i, n - i)) > 0)
        i += k;
    return i == n;
}

#endif
