/*
 * hash.h - FNV-1a (64 bits) over bytes, for the in-memory hash indexes
 * (name_set.c, key_links.c, groups.c).  h is HASH_FNV1A_INIT for a new
 * hash, or an earlier result to go on hashing more bytes.  Not for values
 * kept across runs: chunk.c's key hash is its own (the ledger keeps it).
 */
#ifndef IDEMLOAD_HASH_H
#define IDEMLOAD_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_INIT UINT64_C(0xcbf29ce484222325)

static inline uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

#endif
