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


typedef reader *(*reader_open_fn)(source *src, const char *path, const reader_options *opt,
                                  buf *err);

static const struct format_def {
    input_format format;
    const char *name;
    const char *alias;
    const char *endings;
    reader_open_fn open;
} formats[] = {
#define INPUT_FORMAT_ROW(id, nm, al, ends, fn) {FORMAT_##id, nm, al, ends, fn},
    INPUT_FORMATS(INPUT_FORMAT_ROW)
#undef INPUT_FORMAT_ROW
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

static bool ends_with(const char *s, size_t n, const char *suffix, size_t k)
{
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

/* Whether the first n bytes of path end in one of the blank-separated endings. */
static bool ends_in_one_of(const char *path, size_t n, const char *endings)
{
    for (const char *e = endings; *e;) {
        size_t k = strcspn(e, " ");
        if (k > 0 && ends_with(path, n, e, k))
            return true;
        e += k;
        e += strspn(e, " ");
    }
    return false;
}

input_format format_from_name(const char *path)
{
    size_t n = strlen(path);
    if (ends_with(path, n, ".gz", 3))
        n -= 3;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (ends_in_one_of(path, n, formats[i].endings))
            return formats[i].format;
    return FORMAT_AUTO;
}

input_format format_parse(const char *name)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strcmp(name, formats[i].name) == 0 ||
            (formats[i].alias[0] && strcmp(name, formats[i].alias) == 0))
            return formats[i].format;
    return FORMAT_AUTO;
}

const char *format_name(input_format f)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].format == f)
            return formats[i].name;
    return "unknown";
}

bool format_names(buf *out, const char *sep)
{
    bool ok = true;
    for (size_t i = 0; i < N_FORMATS; i++)
        ok = ok && (i == 0 || buf_append_str(out, sep)) && buf_append_str(out, formats[i].name);
    return ok;
}

void format_unknown(buf *err, const char *path)
{
    buf_printf(err, "%s: cannot tell the format from the name; use --format %s",
               strcmp(path, "-") == 0 ? "standard input" : path, INPUT_FORMAT_CHOICES);
}

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

