/*
 * byte_scan.h - finds the first byte of a small set in a span: the CSV
 * fast path's delimiters and quotes, the JSON scanner's string ends, the
 * UTF-8 check's non-ASCII bytes (issue 31: these loops were most of the
 * reader thread).
 *
 * Sixteen bytes at a time with SSE2, the x86_64 baseline, and one byte at
 * a time everywhere else.  glibc's memchr is vectorised too, but it finds
 * one byte value, and a call per short field or string costs more than the
 * search; these are inline.  The portable form is always compiled: it is
 * what the SSE2 form must equal, and tests/unit/test_byte_scan.c and
 * fuzz/fuzz_json_scan.c compare the two on every input.  Building with
 * -DIDEMLOAD_NO_SIMD=ON uses the portable form throughout.
 *
 * Nothing here allocates or reads outside p[0..n).
 */
#ifndef IDEMLOAD_BYTE_SCAN_H
#define IDEMLOAD_BYTE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#if defined(__SSE2__) && !defined(IDEMLOAD_NO_SIMD)
#include <emmintrin.h>
#define BYTE_SCAN_SSE2 1
#endif

/*
 * A set of bytes: three values (repeat one to name fewer), every byte
 * below `below` (0: none) and, when `high`, every byte from 0x80 up.
 */
typedef struct byte_set {
    unsigned char a, b, c;
    unsigned char below;
    bool high;
} byte_set;

static inline bool byte_set_has(byte_set s, unsigned char x)
{
    return x == s.a || x == s.b || x == s.c || x < s.below || (s.high && x >= 0x80);
}

/*
 * The index of the first byte of p[0..n) in s, or n; when dst is not
 * NULL, p[0..index) is copied to dst[0..index) too, and dst[index..n) may
 * be overwritten with p's bytes (the caller gives dst room for n bytes,
 * not overlapping p).  The reference the SSE2 form is held to.
 */
static inline size_t byte_scan_portable(char *dst, const char *p, size_t n, byte_set s)
{
    size_t i = 0;

    while (i < n && !byte_set_has(s, (unsigned char)p[i]))
        i++;
    if (dst != NULL)
        for (size_t j = 0; j < i; j++)
            dst[j] = p[j];
    return i;
}

#ifdef BYTE_SCAN_SSE2
/* One bit per byte of x that is in s. */
static inline unsigned byte_set_mask16(__m128i x, byte_set s)
{
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8((char)s.a)),
                               _mm_cmpeq_epi8(x, _mm_set1_epi8((char)s.b)));

    hit = _mm_or_si128(hit, _mm_cmpeq_epi8(x, _mm_set1_epi8((char)s.c)));
    if (s.below > 0) /* x <= below - 1, unsigned */
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(
                                    _mm_min_epu8(x, _mm_set1_epi8((char)(s.below - 1))), x));
    if (s.high)
        hit = _mm_or_si128(hit, x);
    return (unsigned)_mm_movemask_epi8(hit);
}

/*
 * byte_scan_portable, sixteen bytes a step from p[i] on (i <= n - 16,
 * p[0..i) holding none of s).  The last step reads the final sixteen bytes,
 * overlapping bytes already seen (which hold none of s), rather than going
 * byte by byte.
 */
static inline size_t byte_scan_sse2_from(char *dst, const char *p, size_t n, size_t i,
                                         byte_set s)
{
    for (;;) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        if (dst != NULL)
            _mm_storeu_si128((__m128i *)(void *)(dst + i), x);
        unsigned m = byte_set_mask16(x, s);
        if (m)
            return i + (size_t)__builtin_ctz(m);
        i += 16;
        if (i == n)
            return n;
        if (n - i < 16)
            i = n - 16;
    }
}

/* byte_scan_portable by SSE2.  The first sixteen bytes are looked at
 * inline: most fields and strings end in them. */
static inline size_t byte_scan_sse2(char *dst, const char *p, size_t n, byte_set s)
{
    if (n < 16)
        return byte_scan_portable(dst, p, n, s);
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    if (dst != NULL)
        _mm_storeu_si128((__m128i *)(void *)dst, x);
    unsigned m = byte_set_mask16(x, s);
    if (m)
        return (size_t)__builtin_ctz(m);
    return n == 16 ? 16 : byte_scan_sse2_from(dst, p, n, n - 16 < 16 ? n - 16 : 16, s);
}
#endif

/* byte_scan_portable, by the fastest form this build has. */
static inline size_t byte_scan(char *dst, const char *p, size_t n, byte_set s)
{
#ifdef BYTE_SCAN_SSE2
    return byte_scan_sse2(dst, p, n, s);
#else
    return byte_scan_portable(dst, p, n, s);
#endif
}

#endif
