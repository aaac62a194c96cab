/*
 * utf8.h - byte-level checks every row passes: valid UTF-8 and no NUL.
 */
#ifndef IDEMLOAD_UTF8_H
#define IDEMLOAD_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Is s[0..len) valid UTF-8 (RFC 3629: no overlong forms, no surrogates, no
 * code point above U+10FFFF) without any NUL byte?  On failure stores the
 * offset of the first bad byte in *bad_off (may be NULL) and whether the
 * fault is a NUL byte in *is_nul (may be NULL), and returns false.
 * Runs at memory speed on ASCII.
 */
bool utf8_check(const char *s, size_t len, size_t *bad_off, bool *is_nul);

#endif
