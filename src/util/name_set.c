/*
 * name_set.c - the first repeated name, by open addressing (see
 * name_set.h).
 */
#include "util/name_set.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bits. */
static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

bool name_set_first_repeat(const char *base, const size_t *off, const size_t *len, size_t n,
                           size_t *at, bool *oom)
{
    *oom = false;
    if (n < 2)
        return false;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = malloc(cap * sizeof *slot); /* index + 1; 0: empty */
    if (!slot) {
        *oom = true;
        return false;
    }
    memset(slot, 0, cap * sizeof *slot);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) {
        const char *s = base + off[i];
        size_t k = (size_t)hash(s, len[i]) & (cap - 1);
        for (; slot[k]; k = (k + 1) & (cap - 1)) {
            size_t j = slot[k] - 1;
            if (len[j] == len[i] && memcmp(base + off[j], s, len[i]) == 0) {
                *at = i;
                found = true;
                break;
            }
        }
        if (!found)
            slot[k] = i + 1;
    }
    free(slot);
    return found;
}
