/*
 * copy_encode.c - COPY binary format (see copy_encode.h).
 */
#include "load/copy_encode.h"

#include <string.h>

static void put16(char *d, uint16_t v)
{
    d[0] = (char)(v >> 8);
    d[1] = (char)v;
}

static void put32(char *d, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        d[i] = (char)(v >> (24 - 8 * i));
}

static void put64(char *d, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        d[i] = (char)(v >> (56 - 8 * i));
}

bool copy_binary_header(buf *out)
{
    /* signature, flags (no OIDs), header extension length */
    static const char head[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
    return buf_append(out, head, sizeof head);
}

bool copy_binary_trailer(buf *out)
{
    return buf_append(out, "\377\377", 2);
}

/* A field: its length, then its bytes. */
static char *put_text(char *d, const char *s, size_t n)
{
    put32(d, (uint32_t)n);
    memcpy(d + 4, s, n);
    return d + 4 + n;
}

/* Row r as a tuple: ord first when with_ord, the payload in jsonb's
 * binary form when jsonb. */
static bool encode(buf *out, bool with_ord, int32_t ord, const row *r, bool jsonb)
{
    const size_t max_text = (size_t)1 << 30;
    if (r->channel_len > max_text || r->out_trade_no_len > max_text ||
        r->callback_type_len > max_text || r->payload_len > max_text)
        return false;
    size_t need = 2 + (4 + 4) + (4 + 8) + (4 + r->channel_len) + (4 + r->out_trade_no_len) +
                  (4 + r->callback_type_len) + (4 + 2) + (4 + 1 + r->payload_len) + (4 + 8);
    if (!buf_reserve(out, need))
        return false;
    char *d = out->data + out->len;
    put16(d, with_ord ? 8 : 7);
    d += 2;
    if (with_ord) {
        put32(d, 4);
        put32(d + 4, (uint32_t)ord);
        d += 8;
    }
    put32(d, 8);
    put64(d + 4, (uint64_t)r->tenant_id);
    d += 12;
    d = put_text(d, r->channel, r->channel_len);
    d = put_text(d, r->out_trade_no, r->out_trade_no_len);
    d = put_text(d, r->callback_type, r->callback_type_len);
    put32(d, 2);
    put16(d + 4, (uint16_t)r->status);
    d += 6;
    if (jsonb) {
        put32(d, (uint32_t)(1 + r->payload_len));
        d[4] = 1; /* jsonb's binary format version */
        memcpy(d + 5, r->payload, r->payload_len);
        d += 5 + r->payload_len;
    } else {
        d = put_text(d, r->payload, r->payload_len);
    }
    put32(d, 8);
    put64(d + 4, (uint64_t)(r->received_us - PG_EPOCH_OFFSET_US));
    d += 12;
    out->len = (size_t)(d - out->data);
    out->data[out->len] = '\0';
    return true;
}

bool copy_binary_row(buf *out, int32_t ord, const row *r)
{
    return encode(out, true, ord, r, false);
}

bool copy_binary_target_row(buf *out, const row *r)
{
    return encode(out, false, 0, r, true);
}

bool copy_binary_recon_row(buf *out, int32_t file_no, int64_t line, const row *r)
{
    /* file_no and line first, then the tuple copy_binary_target_row
     * writes, whose field count (7) becomes 9. */
    size_t start = out->len;
    if (!buf_reserve(out, 2 + 8 + 12))
        return false;
    char *d = out->data + out->len;
    put16(d, 9);
    put32(d + 2, 4);
    put32(d + 6, (uint32_t)file_no);
    put32(d + 10, 8);
    put64(d + 14, (uint64_t)line);
    out->len += 22;
    size_t body = out->len;
    if (!encode(out, false, 0, r, true)) {
        out->len = start;
        return false;
    }
    /* Drop the field count encode() wrote: ours leads the tuple. */
    memmove(out->data + body, out->data + body + 2, out->len - body - 2);
    out->len -= 2;
    out->data[out->len] = '\0';
    return true;
}
