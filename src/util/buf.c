/*
 * buf.c - growable byte buffer (see buf.h).
 */
#include "util/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool buf_reserve(buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1)
        return false;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return false;
    b->data = p;
    b->cap = cap;
    return true;
}

bool buf_append(buf *b, const void *p, size_t n)
{
    if (!buf_reserve(b, n))
        return false;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

bool buf_append_str(buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

bool buf_append_char(buf *b, char c)
{
    return buf_append(b, &c, 1);
}

bool buf_printf(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !buf_reserve(b, (size_t)n))
        return false;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return true;
}

void buf_clear(buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_free(buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

const char *buf_cstr(const buf *b)
{
    return b->data ? b->data : "";
}
