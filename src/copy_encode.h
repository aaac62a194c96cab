/*
 * copy_encode.h - rows of a chunk as COPY text format for idemload_stage.
 *
 * Text format needs backslash, tab, newline and carriage return escaped in
 * every text value; nothing else (the client encoding is UTF8 and the
 * input has been checked to be valid UTF-8 without NUL).
 */
#ifndef IDEMLOAD_COPY_ENCODE_H
#define IDEMLOAD_COPY_ENCODE_H

#include <stdbool.h>

#include "buf.h"
#include "chunk.h"

/* Appends one COPY line: ord, tenant_id, channel, out_trade_no,
 * callback_type, status, payload, received_at.  False when out of memory. */
bool copy_encode_row(buf *out, int ord, const row *r);

/* Appends text with COPY text-format escapes. */
bool copy_escape(buf *out, const char *s, size_t n);

#endif
