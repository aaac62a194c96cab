/*
 * buf.h - a growable byte buffer.
 *
 * A buf owns its memory; buf_free() releases it.  The bytes are always
 * followed by a NUL (not counted in len) so they can be passed as C strings
 * when they hold no NUL themselves.  Every function that grows the buffer
 * returns false when memory runs out, leaving the content unchanged.
 */
#ifndef IDEMLOAD_BUF_H
#define IDEMLOAD_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct buf {
    char *data;
    size_t len;
    size_t cap;
} buf;

#define BUF_INIT {NULL, 0, 0}

bool buf_reserve(buf *b, size_t extra);
bool buf_append(buf *b, const void *p, size_t n);
bool buf_append_str(buf *b, const char *s);
bool buf_append_char(buf *b, char c);
bool buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties the buffer, keeping its memory for reuse. */
void buf_clear(buf *b);
void buf_free(buf *b);
/* data is never NULL: "" for an empty buffer. */
const char *buf_cstr(const buf *b);

#endif
