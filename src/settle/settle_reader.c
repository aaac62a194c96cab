/*
 * settle_reader.c - opens the reader a settlement-side file needs
 * (settle_row.h): a file with a profile is read through it, any other is a
 * bank statement told by its content.
 */
#include "settle/settle_row.h"

#include <stdlib.h>
#include <string.h>

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
