/*
 * formats.c - the input formats' names and endings (see formats.h); the
 * dispatch to each format's reader is input/reader.c's.
 */
#include "core/formats.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct format_def {
    input_format format;
    const char *name;
    const char *alias;
    const char *endings;
} formats[] = {
#define INPUT_FORMAT_ROW(id, nm, al, ends, fn) {FORMAT_##id, nm, al, ends},
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
