/*
 * validate.h - turn a raw record into a normalized row, or say why not.
 *
 * The rules of SPEC.md "Validation": key texts trimmed and never blank (nor
 * the literal NULL or \N), tenant_id a 64-bit and status a 16-bit integer,
 * received_at an instant with an explicit offset, payload JSON that jsonb
 * accepts and not null, kept byte for byte; valid UTF-8 and no NUL anywhere.
 */
#ifndef IDEMLOAD_VALIDATE_H
#define IDEMLOAD_VALIDATE_H

#include <stdbool.h>

#include "util/buf.h"
#include "chunk/chunk.h"
#include "input/record.h"

/* Values --set supplies for columns a file lacks (NULL: none). */
typedef struct presets {
    const char *value[COL_COUNT];
} presets;

/*
 * Validates rec (with presets filling absent columns) into *out, whose
 * texts then point into rec or the presets.  Returns true when the row is
 * good; otherwise writes the reason into *reason and returns false.
 * When check_utf8 is set, the raw text is checked for UTF-8 and NUL first
 * (the CSV reader does not check; the NDJSON reader already has).
 */
bool validate_record(const raw_record *rec, const presets *pre, bool check_utf8,
                     row *out, buf *reason);

/* Validates one --set value for column c; false with *reason set when bad. */
bool validate_preset(column c, const char *value, buf *reason);

/* Parses a decimal integer in [min, max], surrounding blanks allowed. */
bool parse_int_in_range(const char *s, size_t n, int64_t min, int64_t max, int64_t *out);

#endif
