/*
 * copy_encode.h - rows of a chunk in COPY's binary format for
 * idemload_stage (ord, then the columns of the column table,
 * core/columns.h, in its order: tenant_id, channel, out_trade_no,
 * callback_type, status, payload, received_at), or for the target itself
 * (the same without ord, the payload as jsonb).
 *
 * Binary rather than text (BENCHMARKS.md): the server parses no number and
 * no timestamp text, and no text value needs escaping.  Integers are
 * big-endian; texts are their UTF-8 bytes (checked valid, without NUL, by
 * validate.c; the server verifies the encoding again); received_at is
 * microseconds since 2000-01-01 00:00 UTC, PostgreSQL's own timestamptz.
 */
#ifndef IDEMLOAD_COPY_ENCODE_H
#define IDEMLOAD_COPY_ENCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/buf.h"
#include "chunk/chunk.h"

/* Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC). */
#define PG_EPOCH_OFFSET_US INT64_C(946684800000000)

/* The 19-byte file header that starts a COPY ... (FORMAT binary) stream. */
bool copy_binary_header(buf *out);
/* One tuple: ord and the columns above.  False when out of memory or when a
 * text is too long for COPY (over 1 GB). */
bool copy_binary_row(buf *out, int32_t ord, const row *r);
/* One tuple for a COPY straight into the target (SQL_APPEND, the same
 * columns): no ord, and the payload in jsonb's binary form (a version byte, 1, then
 * the JSON text exactly as written, which the server parses as jsonb_in
 * would). */
bool copy_binary_target_row(buf *out, const row *r);
/* What leads a tuple for reconcile's idemload_recon_raw (recon_sql.h):
 * file_no, line, maybe_again (the row's key may have been listed before
 * in the run), the row's level of the statement's facts (-1: none: NULL),
 * whether the server reads its texts from its payload, its amount,
 * currency, fee and record texts (NULL: SQL NULL; recon/stmt_texts.h),
 * then its amount and fee as numbers: each a plain decimal text
 * (-?[0-9]+(.[0-9]+)?, at most COPY_PLAIN_MAX characters; the caller
 * checks it, copy_plain_decimal), without its sign when magnitude, sent
 * as numeric's binary form with exactly the value and scale numeric_in
 * would give the text (NULL: SQL NULL), then its day in the period's zone
 * when has_day (PostgreSQL's date: days since 2000-01-01; else NULL), and
 * whether its currency text is already as the server cleans it. */
#define COPY_RECON_TEXTS 4
#define COPY_RECON_NUMBERS 2
#define COPY_PLAIN_MAX 1000
typedef struct copy_recon_lead {
    int32_t file_no;
    int64_t line;
    bool maybe_again;
    int level;
    bool server;
    const char *text[COPY_RECON_TEXTS];
    size_t len[COPY_RECON_TEXTS];
    const char *num[COPY_RECON_NUMBERS];
    size_t num_len[COPY_RECON_NUMBERS];
    bool magnitude[COPY_RECON_NUMBERS];
    bool has_day;
    int32_t day;
    bool currency_clean;
} copy_recon_lead;
/* Is [s, s + n) a plain decimal text, as copy_recon_lead's numbers must
 * be? */
bool copy_plain_decimal(const char *s, size_t n);
/* The lead, then the columns of copy_binary_target_row, the payload as
 * text.  False when out of memory or a text is too long for COPY. */
bool copy_binary_recon_row(buf *out, const copy_recon_lead *lead, const row *r);
/* The trailer (a tuple count of -1) that ends the stream. */
bool copy_binary_trailer(buf *out);

#endif
