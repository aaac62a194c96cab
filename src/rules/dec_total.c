/*
 * dec_total.c - exact decimal sums (see dec_total.h).
 */
#include "rules/dec_total.h"

#include <string.h>

/* 10^28 * 10^10 stays well inside a signed 128-bit integer (1.7e38). */
#define DECT_MAX_INT_DIGITS 28

bool dect_parse(const char *s, size_t n, dect *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    __int128 v = 0;
    int int_digits = 0, frac = 0;
    bool any = false;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (int_digits > 0 || s[i] != '0')
            int_digits++;
        if (int_digits > DECT_MAX_INT_DIGITS)
            return false;
        v = v * 10 + (s[i++] - '0');
        any = true;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (frac == DECT_SCALE)
                return false;
            v = v * 10 + (s[i++] - '0');
            frac++;
            any = true;
        }
    }
    if (!any || i != n)
        return false;
    for (int k = frac; k < DECT_SCALE; k++)
        v *= 10;
    out->v = neg ? -v : v;
    out->scale = frac;
    return true;
}

bool dect_add(dect *acc, const dect *x)
{
    __int128 r;
    if (__builtin_add_overflow(acc->v, x->v, &r))
        return false;
    acc->v = r;
    if (x->scale > acc->scale)
        acc->scale = x->scale;
    return true;
}

bool dect_equal(const dect *a, const dect *b)
{
    return a->v == b->v;
}

void dect_format(const dect *a, int scale, char *out)
{
    if (scale < 0)
        scale = 0;
    if (scale > DECT_SCALE)
        scale = DECT_SCALE;
    unsigned __int128 m = a->v < 0 ? (unsigned __int128)0 - (unsigned __int128)a->v
                                   : (unsigned __int128)a->v;
    char digits[DECT_TEXT_MAX];
    size_t nd = 0;
    do {
        digits[nd++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    while (nd <= DECT_SCALE)
        digits[nd++] = '0';
    /* digits holds the scaled value, least significant first; drop the
     * decimals beyond `scale` (they are zero when scale covers the text's). */
    size_t o = 0;
    if (a->v < 0)
        out[o++] = '-';
    for (size_t k = nd; k-- > DECT_SCALE;)
        out[o++] = digits[k];
    if (scale > 0) {
        out[o++] = '.';
        for (int k = 0; k < scale; k++)
            out[o++] = digits[DECT_SCALE - 1 - (size_t)k];
    }
    out[o] = '\0';
}
