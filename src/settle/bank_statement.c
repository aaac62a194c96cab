/*
 * bank_statement.c - a bank statement without a profile: tells ISO 20022
 * camt.053 (XML) from SWIFT MT940 (text) by the first bytes of its content,
 * never by its name, and hands the bytes on to the reader of that format
 * (bank_camt.c, bank_mt940.c).  Also what both readers share: the day and
 * amount checks.
 *
 * Neither format is read whole: both readers stream the source, so memory
 * is bounded by the longest value they keep (BANK_MAX_VALUE) and by
 * libxml2's own limits, not by the file.
 */
#include "settle/bank_impl.h"

#include <stdlib.h>
#include <string.h>

#include "recon/facts.h"

/* Enough to see past a byte-order mark, an XML declaration and comments, or
 * an MT940's SWIFT headers ({1:...}{2:...}{3:...}{4:) or a bank's banner
 * lines to its first :20: field. */

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

/* Does the head begin an MT940: a line starting with a SWIFT block "{1:"
 * or with the field :20: (after whatever banner lines a bank puts first)? */
static bool looks_mt940(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i != 0 && p[i - 1] != '\n')
            continue;
        if (n - i >= 3 && memcmp(p + i, "{1:", 3) == 0)
            return true;
        if (n - i >= 4 && memcmp(p + i, ":20:", 4) == 0)
            return true;
    }
    return false;
}

bank_format bank_statement_sniff(const char *head, size_t n)
{
    size_t i = 0;
    if (n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < n && strchr(" \t\r\n", head[i]))
        i++;
    if (i == n)
        return BANK_EMPTY;
    if (head[i] == '<')
        return BANK_CAMT;
    return looks_mt940(head + i, n - i) ? BANK_MT940 : BANK_NONE;
}

settle_reader *bank_statement_open(source *src, const char *path,
                                   const settle_read_options *opt, buf *err)
{
    (void)opt;
    bank_input in = {src, malloc(BANK_SNIFF_BYTES), 0, 0};
    if (!in.head) {
        buf_printf(err, "%s: out of memory", path);
        return NULL;
    }
    while (in.head_len < BANK_SNIFF_BYTES) {
        ssize_t got = source_read(src, in.head + in.head_len, BANK_SNIFF_BYTES - in.head_len);
        if (got < 0) {
            buf_printf(err, "%s", source_error(src));
            bank_input_free(&in);
            return NULL;
        }
        if (got == 0)
            break;
        in.head_len += (size_t)got;
    }
    switch (bank_statement_sniff(in.head, in.head_len)) {
    case BANK_EMPTY:
        buf_printf(err, "%s: empty: no bank statement in it", path);
        bank_input_free(&in);
        return NULL;
    case BANK_CAMT:
        return bank_camt_open(&in, path, err);
    case BANK_MT940:
        return bank_mt940_open(&in, path, err);
    case BANK_NONE:
        break;
    }
    buf_printf(err, "%s: neither a camt.053 statement (XML) nor an MT940 one "
                    "(no :20: field in its first %d bytes); a bank CSV needs --profile",
               path, BANK_SNIFF_BYTES);
    bank_input_free(&in);
    return NULL;
}
