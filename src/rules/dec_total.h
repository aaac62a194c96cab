/*
 * dec_total.h - exact sums of decimal text, for the money totals a channel
 * bill states (SPEC.md, "Money facts"): "99.00", "-0.02000", "25", "-0.5",
 * "1234567890123456789012.10" are added as scaled integers, never through
 * a binary float.  Up to DECT_SCALE decimals and about 28 integer digits.
 */
#ifndef IDEMLOAD_DEC_TOTAL_H
#define IDEMLOAD_DEC_TOTAL_H

#include <stdbool.h>
#include <stddef.h>

#define DECT_SCALE 10
/* Room for the longest text dect_format writes, NUL included. */
#define DECT_TEXT_MAX 48

typedef struct dect {
    __int128 v;   /* the value times 10^DECT_SCALE */
    int scale;    /* the most decimals any added text had (for printing) */
} dect;

/* s[0..n): an optional sign, digits, optionally '.' and digits (at least
 * one digit in all).  False when it is not such a number or is out of
 * range. */
bool dect_parse(const char *s, size_t n, dect *out);

/* *acc += x; false on overflow (acc unchanged). */
bool dect_add(dect *acc, const dect *x);

bool dect_equal(const dect *a, const dect *b);

/* Writes a as decimal text with `scale` decimals (at most DECT_SCALE) into
 * out (DECT_TEXT_MAX bytes). */
void dect_format(const dect *a, int scale, char *out);

#endif
