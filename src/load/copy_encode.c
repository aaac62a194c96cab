/*
 * copy_encode.c - COPY binary format (see copy_encode.h).
 */
#include "load/copy_encode.h"

#include <stddef.h>
#include <string.h>

#include "core/columns.h"

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

/* A jsonb field: its length, jsonb's binary format version (1), then the
 * JSON text exactly as written. */
static char *put_jsonb(char *d, const char *s, size_t n)
{
    put32(d, (uint32_t)(1 + n));
    d[4] = 1;
    memcpy(d + 5, s, n);
    return d + 5 + n;
}

/*
 * The field loop, generated from the column table (core/columns.h): for
 * each column in order, what its field takes at most, whether it is too
 * long for COPY, and how it is written (integers big-endian, a TIME as
 * PostgreSQL's microseconds since 2000, a JSON value as text or jsonb).
 */
#define FIELD_SIZE_INT64(m) +(4 + 8)
#define FIELD_SIZE_INT16(m) +(4 + 2)
#define FIELD_SIZE_TEXT(m) +(4 + r->m##_len)
#define FIELD_SIZE_JSON(m) +(4 + 1 + r->m##_len)
#define FIELD_SIZE_TIME(m) +(4 + 8)
#define FIELD_SIZE_1(ID, name, member, kind, key, pos, dflt, A, B) FIELD_SIZE_##kind(member)
#define FIELD_TOO_LONG_INT64(m)
#define FIELD_TOO_LONG_INT16(m)
#define FIELD_TOO_LONG_TEXT(m) || r->m##_len > max_text
#define FIELD_TOO_LONG_JSON(m) || r->m##_len > max_text
#define FIELD_TOO_LONG_TIME(m)
#define FIELD_TOO_LONG_1(ID, name, member, kind, key, pos, dflt, A, B) \
    FIELD_TOO_LONG_##kind(member)
#define FIELD_PUT_INT64(m) \
    put32(d, 8); \
    put64(d + 4, (uint64_t)r->m); \
    d += 12;
#define FIELD_PUT_INT16(m) \
    put32(d, 2); \
    put16(d + 4, (uint16_t)r->m); \
    d += 6;
#define FIELD_PUT_TEXT(m) d = put_text(d, r->m, r->m##_len);
#define FIELD_PUT_JSON(m) d = jsonb ? put_jsonb(d, r->m, r->m##_len) : put_text(d, r->m, r->m##_len);
#define FIELD_PUT_TIME(m) \
    put32(d, 8); \
    put64(d + 4, (uint64_t)(r->m - PG_EPOCH_OFFSET_US)); \
    d += 12;
#define FIELD_PUT_1(ID, name, member, kind, key, pos, dflt, A, B) FIELD_PUT_##kind(member)

enum { N_FIELDS = 0 IDEMLOAD_COLUMNS(COLUMN_ONE, ~, ~) };

/* Row r as a tuple: ord first when with_ord, the payload in jsonb's
 * binary form when jsonb. */
static bool encode(buf *out, bool with_ord, int32_t ord, const row *r, bool jsonb)
{
    const size_t max_text = (size_t)1 << 30;
    if (false IDEMLOAD_COLUMNS(FIELD_TOO_LONG_1, ~, ~))
        return false;
    size_t need = 2 + (4 + 4) IDEMLOAD_COLUMNS(FIELD_SIZE_1, ~, ~);
    if (!buf_reserve(out, need))
        return false;
    char *d = out->data + out->len;
    put16(d, with_ord ? N_FIELDS + 1 : N_FIELDS);
    d += 2;
    if (with_ord) {
        put32(d, 4);
        put32(d + 4, (uint32_t)ord);
        d += 8;
    }
    IDEMLOAD_COLUMNS(FIELD_PUT_1, ~, ~)
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

/* A field that may be NULL (s NULL: length -1, no bytes). */
static bool put_nullable(buf *out, const char *s, size_t n)
{
    if (n > (size_t)1 << 30 || !buf_reserve(out, 4 + (s ? n : 0)))
        return false;
    char *d = out->data + out->len;
    if (!s) {
        put32(d, UINT32_MAX);
        out->len += 4;
    } else {
        out->len = (size_t)(put_text(d, s, n) - out->data);
    }
    return true;
}

bool copy_plain_decimal(const char *s, size_t n)
{
    size_t i = n && s[0] == '-', digits = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (!digits || n > COPY_PLAIN_MAX)
        return false;
    if (i == n)
        return true;
    if (s[i++] != '.' || i == n)
        return false;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* Digit i (0: the first) of the plain decimal [s, s + n), '0' outside it. */
static int digit_at(const char *s, size_t n, ptrdiff_t i)
{
    return i >= 0 && (size_t)i < n ? s[i] - '0' : 0;
}

/* A plain decimal (copy_plain_decimal) as numeric's binary form, as
 * numeric_send writes it: the count of base-10000 digits, the weight of
 * the first (10000^weight), the sign, the display scale (the digits after
 * the point, which numeric_in keeps), then the digits.  Zero groups at
 * either end are left out, and zero is positive, as the server stores
 * them. */
static bool put_numeric(buf *out, const char *s, size_t n, bool magnitude)
{
    bool negative = s[0] == '-';
    const char *p = s + negative, *end = s + n, *dot = memchr(p, '.', (size_t)(end - p));
    const char *int_end = dot ? dot : end;
    while (p < int_end && *p == '0')
        p++;
    size_t n_int = (size_t)(int_end - p), n_frac = dot ? (size_t)(end - dot - 1) : 0;
    /* the digits, the integer part's then the fraction's, padded to whole
     * groups: the first group starts pad digits before them */
    size_t pad = (4 - n_int % 4) % 4, groups = (pad + n_int + n_frac + 3) / 4;
    int weight = (int)((pad + n_int) / 4) - 1;
    char digits[COPY_PLAIN_MAX + 8];
    memcpy(digits, p, n_int);
    if (n_frac)
        memcpy(digits + n_int, dot + 1, n_frac);
    size_t first = 0, last = groups;
    uint16_t g[(COPY_PLAIN_MAX + 8) / 4 + 1];
    for (size_t k = 0; k < groups; k++) {
        ptrdiff_t at = (ptrdiff_t)(4 * k) - (ptrdiff_t)pad;
        g[k] = (uint16_t)(digit_at(digits, n_int + n_frac, at) * 1000 +
                          digit_at(digits, n_int + n_frac, at + 1) * 100 +
                          digit_at(digits, n_int + n_frac, at + 2) * 10 +
                          digit_at(digits, n_int + n_frac, at + 3));
    }
    while (first < last && g[first] == 0) {
        first++;
        weight--;
    }
    while (last > first && g[last - 1] == 0)
        last--;
    if (first == last) {
        weight = 0;
        negative = false;
    }
    size_t nd = last - first, len = 8 + 2 * nd;
    if (!buf_reserve(out, 4 + len))
        return false;
    char *d = out->data + out->len;
    put32(d, (uint32_t)len);
    put16(d + 4, (uint16_t)nd);
    put16(d + 6, (uint16_t)(int16_t)weight);
    put16(d + 8, negative && !magnitude ? 0x4000 : 0x0000);
    put16(d + 10, (uint16_t)n_frac);
    for (size_t k = 0; k < nd; k++)
        put16(d + 12 + 2 * k, g[first + k]);
    out->len += 4 + len;
    return true;
}

bool copy_binary_recon_row(buf *out, const copy_recon_lead *lead, const row *r)
{
    /* The lead's fields first, then the tuple copy_binary_target_row
     * writes (the payload as text: its facts are the lead's texts, and
     * the server parses it only for a row it reads itself), whose field
     * count (N_FIELDS) grows by the lead's. */
    size_t start = out->len;
    if (!buf_reserve(out, 2 + 8 + 12 + 5 + 6 + 5))
        return false;
    char *d = out->data + out->len;
    put16(d, N_FIELDS + 5 + COPY_RECON_TEXTS + COPY_RECON_NUMBERS + 2);
    put32(d + 2, 4);
    put32(d + 6, (uint32_t)lead->file_no);
    put32(d + 10, 8);
    put64(d + 14, (uint64_t)lead->line);
    put32(d + 22, 1);
    d[26] = lead->maybe_again ? 1 : 0;
    out->len += 27;
    bool ok = true;
    if (lead->level < 0) {
        ok = put_nullable(out, NULL, 0);
    } else {
        d = out->data + out->len;
        put32(d, 2);
        put16(d + 4, (uint16_t)lead->level);
        out->len += 6;
    }
    d = out->data + out->len;
    put32(d, 1);
    d[4] = lead->server ? 1 : 0;
    out->len += 5;
    for (int k = 0; ok && k < COPY_RECON_TEXTS; k++)
        ok = put_nullable(out, lead->text[k], lead->len[k]);
    for (int k = 0; ok && k < COPY_RECON_NUMBERS; k++)
        ok = lead->num[k] ? put_numeric(out, lead->num[k], lead->num_len[k], lead->magnitude[k])
                          : put_nullable(out, NULL, 0);
    if (ok && lead->has_day && (ok = buf_reserve(out, 8))) {
        put32(out->data + out->len, 4);
        put32(out->data + out->len + 4, (uint32_t)lead->day);
        out->len += 8;
    } else if (ok) {
        ok = put_nullable(out, NULL, 0);
    }
    if (ok && (ok = buf_reserve(out, 5))) {
        put32(out->data + out->len, 1);
        out->data[out->len + 4] = lead->currency_clean ? 1 : 0;
        out->len += 5;
    }
    size_t body = out->len;
    if (!ok || !encode(out, false, 0, r, false)) {
        out->len = start;
        return false;
    }
    /* Drop the field count encode() wrote: ours leads the tuple. */
    memmove(out->data + body, out->data + body + 2, out->len - body - 2);
    out->len -= 2;
    out->data[out->len] = '\0';
    return true;
}
