/*
 * final_status.c - the final statuses as text (see final_status.h).
 */
#include "core/final_status.h"

static bool join(const int16_t *statuses, size_t n, const char *sep, buf *out)
{
    bool ok = true;
    for (size_t k = 0; ok && k < n; k++)
        ok = buf_printf(out, "%s%d", k ? sep : "", (int)statuses[k]);
    return ok;
}

bool final_status_array(const int16_t *statuses, size_t n, buf *out)
{
    return buf_append_char(out, '{') && join(statuses, n, ",", out) && buf_append_char(out, '}');
}

bool final_status_option(const int16_t *statuses, size_t n, buf *out)
{
    return join(statuses, n, ",", out);
}

bool final_status_text(const int16_t *statuses, size_t n, buf *out)
{
    /* An empty buf still reads as "" through buf_cstr. */
    return join(statuses, n, ", ", out);
}

bool final_status_has(const int16_t *statuses, size_t n, long status)
{
    for (size_t k = 0; k < n; k++)
        if (statuses[k] == status)
            return true;
    return false;
}
