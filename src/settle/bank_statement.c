/*
 * bank_statement.c - a bank statement without a profile: tells ISO 20022
 * camt.053 (XML) from SWIFT MT940 (text) by the first bytes of its content,
 * never by its name, and hands the bytes on to the reader of that format
 * (bank_camt.c, bank_mt940.c; what both share is bank_common.c).
 *
 * Neither format is read whole: both readers stream the source, so memory
 * is bounded by the longest value they keep (BANK_MAX_VALUE) and by
 * libxml2's own limits, not by the file.
 */
#include "settle/bank_impl.h"

#include <stdlib.h>
#include <string.h>

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
