/*
 * transcode.c - GBK (or another iconv encoding) to UTF-8 (see transcode.h).
 */
#include "input/transcode.h"

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct transcoder {
    iconv_t cd;
};

transcoder *transcoder_open(const char *from, buf *err)
{
    transcoder *t = malloc(sizeof *t);
    if (!t) {
        buf_printf(err, "out of memory");
        return NULL;
    }
    t->cd = iconv_open("UTF-8", from);
    if (t->cd == (iconv_t)-1) {
        buf_printf(err, "cannot convert from %s to UTF-8: %s", from, strerror(errno));
        free(t);
        return NULL;
    }
    return t;
}

static bool all_ascii(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080ULL)
            return false;
    }
    for (; i < n; i++)
        if (p[i] & 0x80)
            return false;
    return true;
}

int transcoder_run(transcoder *t, const char *in, size_t n, buf *out, size_t *bad_off)
{
    if (all_ascii(in, n))
        return buf_append(out, in, n) ? 1 : -1;
    iconv(t->cd, NULL, NULL, NULL, NULL); /* a fresh shift state per call */
    char *ip = (char *)in;
    size_t ileft = n;
    while (ileft > 0) {
        /* GBK's two bytes become at most three in UTF-8. */
        size_t want = ileft * 3 / 2 + 16;
        if (!buf_reserve(out, want))
            return -1;
        char *op = out->data + out->len;
        size_t oleft = out->cap - out->len - 1; /* keep room for buf's NUL */
        size_t r = iconv(t->cd, &ip, &ileft, &op, &oleft);
        out->len = (size_t)(op - out->data);
        out->data[out->len] = '\0';
        if (r == (size_t)-1) {
            if (errno == E2BIG)
                continue;
            *bad_off = (size_t)(ip - in); /* EILSEQ or EINVAL (cut short) */
            return 0;
        }
    }
    return 1;
}

bool transcoder_run_lossy(transcoder *t, const char *in, size_t n, buf *out)
{
    while (n > 0) {
        size_t bad;
        size_t at = out->len;
        int r = transcoder_run(t, in, n, out, &bad);
        if (r < 0)
            return false;
        if (r == 1)
            return true;
        /* What came before the bad byte, converted again on its own (the
         * failed run left an unspecified part), then the replacement. */
        out->len = at;
        if (bad > 0 && transcoder_run(t, in, bad, out, &(size_t){0}) < 0)
            return false;
        if (!buf_append_str(out, "\xEF\xBF\xBD"))
            return false;
        in += bad + 1;
        n -= bad + 1;
    }
    return true;
}

void transcoder_close(transcoder **tp)
{
    if (*tp) {
        iconv_close((*tp)->cd);
        free(*tp);
        *tp = NULL;
    }
}
