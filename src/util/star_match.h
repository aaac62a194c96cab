/*
 * star_match.h - a profile's value patterns: '*' stands for any run of
 * characters, every other byte for itself ('?', '[' and '\' included, so
 * not fnmatch(3)).  Used by the bill reader's maps (input/profile_row.c)
 * and settle's kind map (settle/settle_channel.c).
 */
#ifndef IDEMLOAD_UTIL_STAR_MATCH_H
#define IDEMLOAD_UTIL_STAR_MATCH_H

#include <stdbool.h>
#include <stddef.h>

/* Whether pat (NUL-terminated) matches the n bytes at v whole. */
bool star_match(const char *pat, const char *v, size_t n);

#endif
