/*
 * csv_field.c - one field of a CSV line as the outputs write it (see
 * csv_field.h): reconcile's and settle's discrepancies files.
 */
#include "output/csv_field.h"

#include <string.h>

/* s as one CSV field's text: quoted when it holds a delimiter, a quote or a
 * line break, quotes doubled. */
static bool csv_quoted(buf *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n"))
        return buf_append_str(out, s);
    bool ok = buf_append_char(out, '"');
    for (const char *p = s; ok && *p; p++)
        ok = (*p == '"' ? buf_append_str(out, "\"\"") : buf_append_char(out, *p));
    return ok && buf_append_char(out, '"');
}

/* One CSV field: quoted when it holds a delimiter, a quote or a line
 * break, quotes doubled.  A text of the data (TEXT) that a spreadsheet
 * would run as a formula (it starts with =, +, -, @, a tab or a carriage
 * return) is written after an apostrophe, which the spreadsheet shows as
 * text (OWASP's "CSV injection"); numbers, dates and our own words never are. */
bool csv_field_append(buf *out, const char *s, bool first, bool text)
{
    bool ok = first || buf_append_char(out, ',');
    if (!s)
        return ok;
    buf guarded = BUF_INIT;
    if (text && s[0] && strchr("=+-@\t\r", s[0])) {
        if (!buf_append_char(&guarded, '\'') || !buf_append_str(&guarded, s)) {
            buf_free(&guarded);
            return false;
        }
        s = buf_cstr(&guarded);
    }
    ok = ok && csv_quoted(out, s);
    buf_free(&guarded);
    return ok;
}

