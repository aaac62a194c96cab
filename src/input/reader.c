/*
 * reader.c - the dispatch to the CSV, NDJSON or profile reader (see
 * reader.h; the formats' names and endings are core/formats.c's); what
 * those readers share is in reader_common.c, so the dispatch calls its
 * parts and no part calls back into it.
 */
#include "input/reader_impl.h"

typedef reader *(*reader_open_fn)(source *src, const char *path, const reader_options *opt,
                                  buf *err);

/* The dispatch: each format's reader, from the formats' table (formats.h). */
static const struct format_reader {
    input_format format;
    reader_open_fn open;
} formats[] = {
#define INPUT_FORMAT_ROW(id, nm, al, ends, fn) {FORMAT_##id, fn},
    INPUT_FORMATS(INPUT_FORMAT_ROW)
#undef INPUT_FORMAT_ROW
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

reader *reader_open(source *src, const char *path, const reader_options *opt, buf *err)
{
    if (opt->profile)
        return profile_reader_open(src, path, opt, err);
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].format == opt->format)
            return formats[i].open(src, path, opt, err);
    format_unknown(err, path);
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

bool reader_header_names(const reader *r, column c)
{
    return r->header_names[c];
}

uint64_t reader_money_unchecked(const reader *r)
{
    return r->money_unchecked;
}

const char *reader_window_zone(const reader *r)
{
    return r->window_zone[0] ? r->window_zone : NULL;
}

int reader_source_column(const reader *r, const char *name)
{
    return r->source_column ? r->source_column(r, name) : -1;
}

const char *reader_source_value(const reader *r, int idx, size_t *len)
{
    *len = 0;
    return r->source_value && idx >= 0 ? r->source_value(r, idx, len) : NULL;
}

bool reader_scope_here(const reader *r, bool report)
{
    return r->scope_here && r->scope_here(r, report);
}

uint32_t reader_covers_matched(const reader *r)
{
    return r->covers_matched;
}

bool reader_stated_total(const reader *r, size_t i, reader_total *out)
{
    return r && r->stated_total && r->stated_total(r, i, out);
}

