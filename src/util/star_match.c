/*
 * star_match.c - '*' patterns (see star_match.h).
 */
#include "util/star_match.h"

bool star_match(const char *pat, const char *v, size_t n)
{
    if (*pat == '\0')
        return n == 0;
    if (*pat == '*') {
        for (size_t k = 0; k <= n; k++)
            if (star_match(pat + 1, v + k, n - k))
                return true;
        return false;
    }
    return n > 0 && *pat == *v && star_match(pat + 1, v + 1, n - 1);
}
