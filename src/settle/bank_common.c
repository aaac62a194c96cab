/*
 * bank_common.c - what the bank-statement readers (bank_camt.c,
 * bank_mt940.c) share: the statement's bytes after those that told its
 * format, and the day and amount checks (bank_impl.h).
 */
#include "settle/bank_impl.h"

#include <stdlib.h>
#include <string.h>

#include "recon/facts.h"

ssize_t bank_input_read(bank_input *in, char *dst, size_t cap)
{
    if (in->head_pos < in->head_len) {
        size_t n = in->head_len - in->head_pos;
        if (n > cap)
            n = cap;
        memcpy(dst, in->head + in->head_pos, n);
        in->head_pos += n;
        return (ssize_t)n;
    }
    return source_read(in->src, dst, cap);
}

void bank_input_free(bank_input *in)
{
    free(in->head);
    in->head = NULL;
    in->head_len = in->head_pos = 0;
}

bool bank_date_valid(int y, int m, int d)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1900 || y > 2999 || m < 1 || m > 12 || d < 1)
        return false;
    int max = days[m - 1];
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        max = 29;
    return d <= max;
}

bool bank_amount(const char *s, size_t n, char mark, bool negative, buf *out, dect *v)
{
    size_t digits = 0, marks = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == mark)
            marks++;
        else
            return false;
    }
    /* "12,": MT940 writes a whole amount with its comma; ",5" is none. */
    if (digits == 0 || marks > 1 || s[0] == mark || n > 40)
        return false;
    buf_clear(out);
    if (negative && !buf_append_char(out, '-'))
        return false;
    /* MT940 pads with zeros ("000000001000,00"): 1000.00. */
    size_t i0 = 0;
    while (i0 + 1 < n && s[i0] == '0' && s[i0 + 1] != mark)
        i0++;
    for (size_t i = i0; i < n; i++) {
        char c = s[i] == mark ? '.' : s[i];
        if (c == '.' && i + 1 == n)
            break;          /* "107," is 107 */
        if (!buf_append_char(out, c))
            return false;
    }
    return dect_parse(out->data, out->len, v);
}

bool bank_pad_minor(buf *amt, const char *ccy)
{
    int exp = currency_exponent(ccy);
    if (exp <= 0)
        return true;
    const char *dot = memchr(amt->data ? amt->data : "", '.', amt->len);
    int have = dot ? (int)(amt->data + amt->len - dot - 1) : 0;
    if (!dot && !buf_append_char(amt, '.'))
        return false;
    for (; have < exp; have++)
        if (!buf_append_char(amt, '0'))
            return false;
    return true;
}

void bank_dect_text(const dect *v, int scale, char *out)
{
    dect_format(v, v->scale > scale ? v->scale : scale, out);
}
