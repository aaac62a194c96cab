/*
 * name_set.h - a header's names looked up and checked for repeats in time
 * linear in the names (a hash index), for headers of any width (SPEC.md
 * "Hostile input": a header of 80,000 columns is read in well under a
 * second, and a template of 140,000 column references compiles against it
 * in linear time).
 *
 * The names are base + off[i], len[i] bytes each, i in [0, n).  The index
 * points into base, off and len, which must stay as they are while it is
 * used.  Ownership: name_index_build() allocates what name_index_free()
 * releases; a zeroed name_index is empty and may be freed.
 */
#ifndef IDEMLOAD_NAME_SET_H
#define IDEMLOAD_NAME_SET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct name_index {
    size_t *slot;           /* index + 1; 0: empty */
    size_t cap;             /* a power of two, at least twice the names */
    const char *base;
    const size_t *off, *len;
} name_index;

/*
 * Indexes the names (replacing what *ix held).  False when out of memory
 * (*ix then empty).  When a name equals an earlier one, *repeat (may be
 * NULL) gets the first such i and *has_repeat is set; the index keeps the
 * earlier one.
 */
bool name_index_build(name_index *ix, const char *base, const size_t *off, const size_t *len,
                      size_t n, bool *has_repeat, size_t *repeat);

/* The index of the name s[0..n), or -1 when it is not there. */
long name_index_find(const name_index *ix, const char *s, size_t n);

void name_index_free(name_index *ix);

/* Returns true and stores in *at the first i whose name equals an earlier
 * one; false when all differ (or, *oom set, when out of memory). */
bool name_set_first_repeat(const char *base, const size_t *off, const size_t *len, size_t n,
                           size_t *at, bool *oom);

#endif
