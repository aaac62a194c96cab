/*
 * settle_reader.c - opens the reader a settlement-side file needs
 * (settle_row.h): a file with a profile is read through it, any other is a
 * bank statement told by its content.
 */
#include "settle/settle_row.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[SETTLE_KIND_COUNT] = {
    [SETTLE_PAYMENT] = "payment",       [SETTLE_REFUND] = "refund",
    [SETTLE_DISPUTE] = "dispute",       [SETTLE_FEE] = "fee",
    [SETTLE_ADJUSTMENT] = "adjustment", [SETTLE_PAYOUT] = "payout",
    [SETTLE_BANK_CREDIT] = "bank_credit", [SETTLE_BANK_DEBIT] = "bank_debit",
};

const char *settle_kind_name(settle_kind k)
{
    return (unsigned)k < SETTLE_KIND_COUNT ? kind_names[k] : "?";
}

int settle_kind_lookup(const char *name)
{
    for (int k = 0; k < SETTLE_KIND_COUNT; k++)
        if (strcmp(kind_names[k], name) == 0)
            return k;
    return -1;
}

settle_reader *settle_reader_open(source *src, const char *path,
                                  const settle_read_options *opt, buf *err)
{
    if (opt->profile)
        return settle_profile_open(src, path, opt, err);
    return bank_statement_open(src, path, opt, err);
}

read_result settle_reader_next(settle_reader *r, settle_row *out)
{
    return r->next(r, out);
}

const char *settle_reader_error(const settle_reader *r)
{
    return r->err.len ? r->err.data : "";
}

void settle_reader_close(settle_reader **r)
{
    if (!*r)
        return;
    (*r)->close(*r);
    *r = NULL;
}
