/*
 * utf8.c - strict UTF-8 validation with NUL detection.
 *
 * PostgreSQL refuses invalid UTF-8 and NUL bytes in text, and would fail a
 * whole COPY on the first such row; checking each row here lets the loader
 * reject that one row with its line number instead.  Most statement data is
 * ASCII, so runs of ASCII bytes without a zero byte are skipped sixteen
 * bytes at a time (byte_scan); anything else goes through the byte-wise
 * check of RFC 3629 (the well-formed sequences table of Unicode, chapter
 * 3).
 */
#include "rules/utf8.h"

#include <stdint.h>
#include <string.h>

#include "util/byte_scan.h"

/*
 * Length of the well-formed sequence starting at s[0] (0x80 or above) within
 * s[0..n), or 0 if none starts there.
 */
static size_t
multibyte_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    /* Allowed range of the second byte; later bytes are always 80..BF. */
    unsigned char lo = 0x80, hi = 0xBF;
    size_t need;

    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF)
    {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0;      /* below is an overlong form */
        else if (c == 0xED)
            hi = 0x9F;      /* above are surrogates D800..DFFF */
    }
    else if (c >= 0xF0 && c <= 0xF4)
    {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;      /* below is an overlong form */
        else if (c == 0xF4)
            hi = 0x8F;      /* above is beyond U+10FFFF */
    }
    else
        return 0;           /* stray continuation, C0/C1 or F5..FF */

    if (n < need || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return need;
}

bool
utf8_check(const char *s, size_t len, size_t *bad_off, bool *is_nul)
{
    static const byte_set nul_or_high = {0, 0, 0, 0, true};
    const unsigned char *u = (const unsigned char *) s;
    size_t i = 0;

    for (;;)
    {
        i += byte_scan(NULL, s + i, len - i, nul_or_high);
        if (i >= len)
            break;

        unsigned char c = u[i];
        if (c == 0)
        {
            if (bad_off)
                *bad_off = i;
            if (is_nul)
                *is_nul = true;
            return false;
        }
        size_t n = multibyte_len(u + i, len - i);
        if (n == 0)
        {
            if (bad_off)
                *bad_off = i;
            if (is_nul)
                *is_nul = false;
            return false;
        }
        i += n;
    }
    return true;
}
