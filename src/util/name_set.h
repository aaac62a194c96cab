/*
 * name_set.h - is any name given twice?  In time linear in the names (a
 * hash set), for headers of any width (SPEC.md "Hostile input": a header
 * of 80,000 columns is read in well under a second).
 */
#ifndef IDEMLOAD_NAME_SET_H
#define IDEMLOAD_NAME_SET_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The names are base + off[i], len[i] bytes each, i in [0, n).  Returns
 * true and stores in *at the first i whose name equals an earlier one;
 * false when all differ (or, *oom set, when out of memory).
 */
bool name_set_first_repeat(const char *base, const size_t *off, const size_t *len, size_t n,
                           size_t *at, bool *oom);

#endif
