/*
 * timezone.h - the time zone a channel bill's local timestamps are in.
 *
 * Channel bills write "2024-05-01 10:15:02" with no offset; the profile (or
 * --timezone) says which zone that is.  A zone is a fixed offset ("+08:00",
 * "+0800", "+08", "Z", "UTC") or an IANA name ("Asia/Shanghai") from the
 * system's tz database (Debian's tzdata, /usr/share/zoneinfo or $TZDIR).
 *
 * An IANA zone is turned into a table of UTC offsets at resolve time, from
 * glibc's own localtime_r() over 1900..2100 (sampled daily, each change then
 * pinned to the second), so the per-row lookup is a binary search with no
 * global state: tz_resolve() must run before any thread starts (it sets TZ
 * for a moment and restores it).  Two changes of offset within one day are
 * seen as one; no zone has had that since the tz database began.
 *
 * Ownership: tz_resolve() fills a tz_zone the caller releases with tz_free().
 */
#ifndef IDEMLOAD_TIMEZONE_H
#define IDEMLOAD_TIMEZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct tz_zone {
    char name[64];          /* as given */
    bool fixed;
    int32_t offset_s;       /* fixed: seconds east of UTC */
    int64_t *from;          /* IANA: from[i] is the UTC second at which */
    int32_t *off;           /* off[i] starts to apply; from[0] is the earliest */
    size_t n;
} tz_zone;

/* A fixed offset ("+08:00", "+0800", "+08", "Z", "UTC") as seconds east
 * of UTC in *offset_s; false for anything else (an IANA name).  Pure: safe
 * at any time, unlike tz_resolve. */
bool tz_fixed_offset(const char *name, int32_t *offset_s);
/* Resolves name into *z; false with the reason in *err (unknown name,
 * malformed offset). */
bool tz_resolve(const char *name, tz_zone *z, buf *err);
void tz_free(tz_zone *z);

/* The offset (seconds east of UTC) in force at the wall-clock time
 * local_s (seconds since 1970-01-01 00:00 of the zone's clock).  As
 * PostgreSQL resolves it: in the gap of a spring-forward change, the offset
 * before the change; in the overlap of a fall-back change, the offset after
 * it (in most zones: standard time when in doubt). */
int32_t tz_offset_at_local(const tz_zone *z, int64_t local_s);

/* Writes an offset as "+HH:MM" (7 bytes with the NUL) into out. */
void tz_format_offset(int32_t offset_s, char out[8]);

#endif
