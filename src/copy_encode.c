/*
 * copy_encode.c - COPY text-format lines (see copy_encode.h).
 */
#include "copy_encode.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "timestamp.h"

bool copy_escape(buf *out, const char *s, size_t n)
{
    if (!buf_reserve(out, n * 2))
        return false;
    char *d = out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        switch (c) {
        case '\\':
            *d++ = '\\';
            *d++ = '\\';
            break;
        case '\t':
            *d++ = '\\';
            *d++ = 't';
            break;
        case '\n':
            *d++ = '\\';
            *d++ = 'n';
            break;
        case '\r':
            *d++ = '\\';
            *d++ = 'r';
            break;
        default:
            *d++ = c;
        }
    }
    out->len = (size_t)(d - out->data);
    out->data[out->len] = '\0';
    return true;
}

bool copy_encode_row(buf *out, int ord, const row *r)
{
    char ts[TS_FORMAT_MAX];
    ts_format(r->received_us, ts);
    char head[64];
    int hn = snprintf(head, sizeof head, "%d\t%" PRId64 "\t", ord, r->tenant_id);
    char mid[16];
    int mn = snprintf(mid, sizeof mid, "\t%d\t", (int)r->status);
    return buf_append(out, head, (size_t)hn) && copy_escape(out, r->channel, r->channel_len) &&
           buf_append_char(out, '\t') &&
           copy_escape(out, r->out_trade_no, r->out_trade_no_len) &&
           buf_append_char(out, '\t') &&
           copy_escape(out, r->callback_type, r->callback_type_len) &&
           buf_append(out, mid, (size_t)mn) && copy_escape(out, r->payload, r->payload_len) &&
           buf_append_char(out, '\t') && buf_append_str(out, ts) && buf_append_char(out, '\n');
}
