/*
 * name_set.c - a hash index over a header's names, by open addressing
 * (see name_set.h).
 */
#include "util/name_set.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

/* The slot holding s[0..n), or the empty slot where it would go. */
static size_t probe(const name_index *ix, const char *s, size_t n)
{
    size_t k = (size_t)hash_fnv1a(HASH_FNV1A_INIT, s, n) & (ix->cap - 1);
    for (; ix->slot[k]; k = (k + 1) & (ix->cap - 1)) {
        size_t j = ix->slot[k] - 1;
        if (ix->len[j] == n && memcmp(ix->base + ix->off[j], s, n) == 0)
            break;
    }
    return k;
}

bool name_index_build(name_index *ix, const char *base, const size_t *off, const size_t *len,
                      size_t n, bool *has_repeat, size_t *repeat)
{
    name_index_free(ix);
    *has_repeat = false;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    ix->slot = calloc(cap, sizeof *ix->slot);
    if (!ix->slot)
        return false;
    ix->cap = cap;
    ix->base = base;
    ix->off = off;
    ix->len = len;
    for (size_t i = 0; i < n; i++) {
        size_t k = probe(ix, base + off[i], len[i]);
        if (ix->slot[k]) {
            if (!*has_repeat && repeat)
                *repeat = i;
            *has_repeat = true;
            continue;
        }
        ix->slot[k] = i + 1;
    }
    return true;
}

long name_index_find(const name_index *ix, const char *s, size_t n)
{
    if (!ix->slot)
        return -1;
    size_t k = probe(ix, s, n);
    return ix->slot[k] ? (long)(ix->slot[k] - 1) : -1;
}

void name_index_free(name_index *ix)
{
    free(ix->slot);
    *ix = (name_index){0};
}

bool name_set_first_repeat(const char *base, const size_t *off, const size_t *len, size_t n,
                           size_t *at, bool *oom)
{
    name_index ix = {0};
    bool repeat = false;
    *oom = !name_index_build(&ix, base, off, len, n, &repeat, at);
    name_index_free(&ix);
    return repeat;
}
