/*
 * utf8.h - byte-level checks every row passes: valid UTF-8 and no NUL.
 */
#ifndef IDEMLOAD_UTF8_H
#define IDEMLOAD_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Is s[0..len) valid UTF-8 (RFC 3629: no overlong forms, no surrogates, no
 * code point above U+10FFFF) without any NUL byte?  On failure stores in
 * *bad_off (may be NULL) the offset of the first byte that does not begin a
 * valid character (for a broken or truncated multibyte sequence, its lead
 * byte) and in *is_nul (may be NULL) whether that byte is NUL, and returns
 * false.  A NUL that follows a broken lead byte is not reached.  Runs at
 * memory speed on ASCII.
 */
bool utf8_check(const char *s, size_t len, size_t *bad_off, bool *is_nul);

#endif
