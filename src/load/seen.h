/*
 * seen.h - the business keys an import has met so far, as a Bloom filter
 * of fixed size: "maybe seen" can be wrong (then the row takes the merge,
 * which is always right), "not seen" never is.  The loader asks it, in
 * file order, which rows of a chunk carry a key no earlier chunk of the
 * run carried: only those may be appended to the target without a merge
 * (lane.h), since a key of an earlier chunk is in the table by now.
 *
 * Its memory is fixed (SEEN_BYTES), whatever the size of the files, so the
 * import's peak memory stays flat; past SEEN_MAX_KEYS keys it starts over
 * (false positives would climb), which only sends more rows to the merge
 * until the appends that conflict turn themselves off.
 * Ownership: seen_new() returns a filter freed with seen_free(), which sets
 * the caller's pointer to NULL.
 */
#ifndef IDEMLOAD_SEEN_H
#define IDEMLOAD_SEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEEN_BYTES ((size_t)8 << 20)     /* 64 Mi bits */
#define SEEN_MAX_KEYS ((uint64_t)12000000) /* then about one new key in ten reads as seen */

typedef struct seen_filter seen_filter;

/* NULL when out of memory. */
seen_filter *seen_new(void);
void seen_free(seen_filter **f);

/* Records the key of hash h (row_key_hash64); true when it may have been
 * recorded before, false when it certainly was not. */
bool seen_add(seen_filter *f, uint64_t h);

/* Keys recorded since the filter last started over. */
uint64_t seen_count(const seen_filter *f);

#endif
