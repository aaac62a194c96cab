/*
 * text_escape.h - data text made safe for a terminal, a log line or a page:
 * control characters (C0, DEL, C1) and the bidirectional controls
 * (U+202A-U+202E, U+2066-U+2069) are shown as their codes ("\u001B",
 * "\u202E"), never applied, so data cannot move the cursor, retitle a
 * terminal, forge a log line or reorder what a reader sees (SPEC.md
 * "Hostile input").  Every renderer that writes data to stderr goes
 * through here (log.c's messages, the summary); html.c uses the same
 * classification.  Pure functions; no allocation beyond the buf.
 */
#ifndef IDEMLOAD_TEXT_ESCAPE_H
#define IDEMLOAD_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/buf.h"

/* The length in bytes of the control character s[0..n) starts with, or 0
 * when it starts with none (s must hold valid UTF-8 from s on for a
 * multibyte one to be seen). */
size_t text_control_width(const char *s, size_t n);

/* The code point of the control character of width w at s (w from
 * text_control_width, > 0). */
unsigned text_control_code(const char *s, size_t w);

/* One escaper of text_escape_walk: at s (n > 0 bytes of valid UTF-8 left),
 * either 0 (copy s[0] as it is) or the number of bytes to replace, with
 * *instead set to their replacement (which may be written into tmp). */
typedef size_t (*text_escape_one)(const char *s, size_t n, char tmp[16], const char **instead);

/* What text_escape_walk writes for byte c that is not valid UTF-8 (is_nul:
 * a NUL, which is valid UTF-8 but never data); may be written into tmp. */
typedef const char *(*text_escape_bad)(unsigned char c, bool is_nul, char tmp[16]);

/* The bad of the terminal and the page: a byte that is not UTF-8 as
 * "\xHH", a NUL as "\u0000". */
const char *text_escape_bad_code(unsigned char c, bool is_nul, char tmp[16]);

/* Appends s[0..n) to out: its valid UTF-8 through one, each byte that breaks
 * it through bad.  The one walk that the terminal and the page share.  False
 * when out of memory. */
bool text_escape_walk(buf *out, const char *s, size_t n, text_escape_one one,
                      text_escape_bad bad);

/* Appends s[0..n) to out with every control character as "\uXXXX" and
 * every byte that is not valid UTF-8 as "\xHH".  False when out of memory. */
bool text_escape_term(buf *out, const char *s, size_t n);

/* Appends s to out as valid UTF-8 for a JSON string or a text column: s
 * itself when it is valid UTF-8 without NUL, else with each byte that
 * breaks UTF-8 as "\xHH" (a file name can be any bytes).  Returns whether s
 * was valid as it is (false also when out of memory). */
bool text_utf8_or_escaped(buf *out, const char *s);

/* Appends the standard base64 of p[0..n) to out; false out of memory. */
bool text_base64(buf *out, const void *p, size_t n);

/* Writes s (NULL: nothing) to fp escaped as text_escape_term does. */
void text_fput_term(FILE *fp, const char *s);

#endif
