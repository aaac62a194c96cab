/*
 * reader.c - format choice and the dispatch to the CSV, NDJSON or profile
 * reader (see reader.h); what those readers share is in reader_common.c, so
 * the dispatch calls its parts and no part calls back into it.
 */
#include "input/reader_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

input_format format_from_name(const char *path)
{
    size_t n = strlen(path);
    if (ends_with(path, n, ".gz"))
        n -= 3;
    if (ends_with(path, n, ".csv"))
        return FORMAT_CSV;
    if (ends_with(path, n, ".ndjson") || ends_with(path, n, ".jsonl"))
        return FORMAT_NDJSON;
    return FORMAT_AUTO;
}

const char *format_name(input_format f)
{
    switch (f) {
    case FORMAT_CSV:
        return "csv";
    case FORMAT_NDJSON:
        return "ndjson";
    default:
        return "unknown";
    }
}

reader *reader_open(source *src, const char *path, const reader_options *opt, buf *err)
{
    if (opt->profile)
        return profile_reader_open(src, path, opt, err);
    if (opt->format == FORMAT_CSV)
        return csv_reader_open(src, path, opt, err);
    if (opt->format == FORMAT_NDJSON)
        return ndjson_reader_open(src, path, opt, err);
    buf_printf(err, "%s: cannot tell the format from the name; use --format csv|ndjson", path);
    return NULL;
}

read_result reader_next(reader *r, raw_record *out)
{
    /* A failed reader has lost its place in the input (a record cut by the
     * size limit, a source fault): it stays failed rather than hand out the
     * rest of a broken record as new ones. */
    if (r->err.len > 0)
        return READ_FAILED;
    return r->next(r, out);
}

bool reader_records_need_utf8_check(const reader *r)
{
    return !r->checks_utf8;
}

