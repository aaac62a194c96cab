/*
 * timestamp.h - parse the received_at column into an instant.
 *
 * Accepted: RFC 3339 / ISO 8601 "YYYY-MM-DD", 'T', 't' or one space, then
 * "HH:MM" or "HH:MM:SS" with an optional fraction ('.' or ',', any number of
 * digits, rounded to microseconds), then a mandatory offset: 'Z'/'z', "+HH",
 * "+HHMM" or "+HH:MM" (or '-'), optionally preceded by one space.  Leading
 * and trailing ASCII white space is ignored.  Dates are checked against the
 * calendar (2026-02-30 is refused); years 0001..9999; offsets up to 15:59;
 * a leap second (:60) is accepted and, as PostgreSQL does, rolls into the
 * next minute.
 */
#ifndef IDEMLOAD_TIMESTAMP_H
#define IDEMLOAD_TIMESTAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Enough for ts_format's output and its NUL. */
#define TS_FORMAT_MAX 40

/*
 * Parses s[0..len) and stores microseconds since 1970-01-01 00:00:00 UTC in
 * *out_us.  On failure returns false and sets *reason to a static text
 * ("no UTC offset", "day out of range for month", ...).
 */
bool ts_parse(const char *s, size_t len, int64_t *out_us, const char **reason);

/*
 * Writes the instant as "YYYY-MM-DD HH:MM:SS.ffffff+00" (UTC, always six
 * fraction digits), a form PostgreSQL's timestamptz input reads exactly,
 * into out (TS_FORMAT_MAX bytes) and returns its length.
 */
size_t ts_format(int64_t us, char *out);

#endif
