/*
 * json_scan.h - validate JSON text the way PostgreSQL's jsonb accepts it, and
 * split one JSON object into its members, without decoding anything.
 *
 * Why not jansson here: jansson parses numbers into doubles and refuses
 * integers beyond 64 bits and reals beyond a double's range (30-digit
 * integers, 1e400), which jsonb accepts as numeric.  This scanner only checks
 * the grammar and hands back byte spans, so a payload reaches PostgreSQL
 * exactly as written.  It allocates nothing; every pointer it returns points
 * into the caller's text.
 */
#ifndef IDEMLOAD_JSON_SCAN_H
#define IDEMLOAD_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/json_kind.h"

/*
 * Deeper nesting than this is refused.  jsonb itself goes on until its stack
 * limit (with the default max_stack_depth, 12,000 levels pass on PostgreSQL
 * 15 and 15,000 do not), so a payload jsonb takes by default is not refused
 * here; a fixed bound keeps this scanner's state small (a bit per level).
 * Every object or array is a level, empty ones included.
 */
#define JSON_MAX_DEPTH 10000

typedef struct json_error {
    const char *reason; /* static text, e.g. "unterminated string" */
    size_t offset;      /* byte offset of the fault within the text */
} json_error;

/*
 * Is [text, text+len) exactly one JSON value, optionally surrounded by JSON
 * white space, that jsonb would accept?  Refuses bad grammar, invalid UTF-8,
 * NUL bytes, raw control characters in strings, \u0000, unpaired surrogate
 * escapes, numbers outside numeric's range (1e131072, 1e-16384: jsonb says
 * "value overflows numeric format") and nesting deeper than JSON_MAX_DEPTH.
 * The text needs no terminating NUL.  On success stores the value's kind in
 * *kind (may be NULL) and returns true; on failure fills *err (may be NULL),
 * leaves *kind alone and returns false.
 */
bool json_validate(const char *text, size_t len, json_kind *kind, json_error *err);

/*
 * json_validate for a text the caller knows to be valid UTF-8 (utf8_check
 * passed on it, or on a text it is cut from with only ASCII bytes taken
 * out): the same answer, the same reason and offset, without checking the
 * UTF-8 of its strings again.  On invalid UTF-8 the answer is undefined
 * (it may accept).
 */
bool json_validate_utf8(const char *text, size_t len, json_kind *kind, json_error *err);

/* One top-level member of an object, as spans into the scanned text. */
typedef struct json_member {
    const char *key;     /* key without its quotes, still escaped if key_escaped */
    size_t key_len;
    bool key_escaped;    /* the key holds at least one backslash escape */
    const char *value;   /* the value's exact text (quotes included for strings) */
    size_t value_len;
    json_kind kind;
    bool value_escaped;  /* for strings: holds at least one backslash escape */
} json_member;

/* Called once per member in order, duplicates included; return false to stop
 * the scan (the scan then returns false with err->reason set to "stopped").
 * The member and its spans are valid while the caller's text is. */
typedef bool (*json_member_fn)(void *ctx, const json_member *member);

/*
 * Validates [text, text+len) as one JSON object (same rules as
 * json_validate) and calls fn (may be NULL) for each of its top-level
 * members.  A text that is valid JSON but not an object fails with reason
 * "not a JSON object".  Returns true when the whole text was valid and every
 * call returned true.
 *
 * The scan is a single pass: fn sees each member as soon as that member has
 * been checked, so a fault further on can fail the scan after fn already ran
 * for earlier members.  On false, throw away whatever fn gathered.  When fn
 * stops the scan, err->offset is the offset of that member's key, and the
 * rest of the text is not checked.
 */
bool json_scan_object(const char *text, size_t len, json_member_fn fn, void *ctx,
                      json_error *err);

#endif
