/*
 * timestamp.h - parse the received_at column into an instant.
 *
 * Accepted: RFC 3339 / ISO 8601 "YYYY-MM-DD", 'T', 't' or white space
 * (any run of it, around a 'T' too, as PostgreSQL reads
 * "2016-05-04  02:18:18"), then "HH:MM" or "HH:MM:SS", the latter with an
 * optional fraction ('.' or ',', any number of digits, rounded half up to
 * microseconds), then a mandatory offset: 'Z'/'z', "+HH", "+HHMM" or
 * "+HH:MM" (or '-'), optionally preceded by white space.  Every field has exactly its width in digits.  Leading and
 * trailing ASCII white space is ignored.  Dates are checked against the
 * calendar (2026-02-30 is refused); years 0001..9999; hours 00..23 (24:00,
 * which PostgreSQL takes, is refused); offsets up to 15:59; a leap second
 * (:60) is accepted and, as PostgreSQL does, rolls into the next minute.
 *
 * Stricter than PostgreSQL's own input on purpose, with three differences
 * the other way: ',' as the decimal mark and a fraction on second 60 of a
 * day's last minute are taken here and refused there, and the fraction is
 * rounded half up here but through a double there (.1234565 gives .123457
 * here, .123456 there).  Otherwise both agree on every text both accept.
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
 * into out (TS_FORMAT_MAX bytes) and returns its length.  Takes any value:
 * years past 9999 get more digits, and years before 1 (which ts_parse can
 * yield from 0001-01-01 with a positive offset) are written as PostgreSQL
 * writes them, "0001-12-31 ...+00 BC" for the year before 1.
 */
size_t ts_format(int64_t us, char *out);

/* The day of the instant us (microseconds since 1970-01-01 UTC), as days
 * since 1970-01-01, rounded down: an instant before 1970 is in a day
 * before it, as PostgreSQL's ::date takes it. */
int64_t ts_day(int64_t us);

/* The civil date (proleptic Gregorian; year 0 is 1 BC) of day z, counted
 * from 1970-01-01 as ts_day counts it: the inverse of the day count ts_parse
 * works with, for any day an int64_t of microseconds holds. */
void ts_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

#endif
