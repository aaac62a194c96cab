/*
 * shell_quote.c - a word quoted for a POSIX shell (see shell_quote.h).
 */
#include "util/shell_quote.h"

#include <string.h>

/* The bytes a shell reads as part of a plain word anywhere in it: no
 * globbing, expansion, separator, redirection or quoting among them ('='
 * and ':' only matter before a command name or in assignments, and '~'
 * is left out as it expands at the start of a word). */
static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                            "_./:=@-";

bool shell_quote_append(buf *out, const char *word)
{
    if (*word && word[strspn(word, plain)] == '\0')
        return buf_append_str(out, word);
    bool ok = buf_append_char(out, '\'');
    for (const char *p = word; ok && *p; p++)
        ok = *p == '\'' ? buf_append_str(out, "'\\''") : buf_append_char(out, *p);
    return ok && buf_append_char(out, '\'');
}
