/*
 * validate.h - turn a raw record into a normalized row, or say why not.
 *
 * The rules of SPEC.md "Validation": key texts trimmed (of Unicode white
 * space and invisible characters, trim_white_space below) and never blank
 * (nor the literal NULL or \N), tenant_id a 64-bit and status a 16-bit integer,
 * received_at an instant with an explicit offset, payload JSON that jsonb
 * accepts and not null, kept byte for byte; valid UTF-8 and no NUL anywhere.
 */
#ifndef IDEMLOAD_VALIDATE_H
#define IDEMLOAD_VALIDATE_H

#include <stdbool.h>

#include "util/buf.h"
#include "chunk/chunk.h"
#include "core/presets.h"
#include "core/record.h"

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

/*
 * The one trimming rule for values (key texts, tenant_id, status,
 * received_at; not payload, which is JSON and kept as written).  Moves *p
 * and shrinks *n past every character at either end of (*p)[0..*n) that is
 * Unicode White_Space or invisible: ASCII TAB LF VT FF CR and space, U+0085,
 * U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000,
 * and the zero-width U+200B, U+200C, U+200D, U+2060, U+FEFF.  Characters
 * inside the text are kept.  *n may become 0: whoever calls this decides
 * what an empty value means (a key text is then rejected).
 *
 * Works on bytes: only complete UTF-8 forms of those characters are
 * trimmed, so invalid UTF-8 is never split or read past *n, and is left for
 * utf8_check to reject.  Costs two comparisons per end when the text
 * begins and ends with printable ASCII.  Any reader, format or channel
 * profile that trims a value must call this, so that one key is one key
 * whatever file it came from.
 */
void trim_white_space(const char **p, size_t *n);

/* Parses a decimal integer in [min, max], surrounding white space
 * (trim_white_space) allowed. */
bool parse_int_in_range(const char *s, size_t n, int64_t min, int64_t max, int64_t *out);

#endif
