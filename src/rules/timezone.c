/*
 * timezone.c - fixed offsets and IANA zones for local bill timestamps
 * (see timezone.h).
 */
#include "rules/timezone.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* "+HH:MM", "+HHMM", "+HH" (or '-'), "Z", "UTC": false when not one. */
bool tz_fixed_offset(const char *s, int32_t *out)
{
    if (strcmp(s, "Z") == 0 || strcmp(s, "z") == 0 || strcmp(s, "UTC") == 0) {
        *out = 0;
        return true;
    }
    if (s[0] != '+' && s[0] != '-')
        return false;
    const char *p = s + 1;
    int d[4];
    int nd = 0;
    for (; *p && nd < 4; p++) {
        if (*p == ':' && nd == 2)
            continue;
        if (*p < '0' || *p > '9')
            return false;
        d[nd++] = *p - '0';
    }
    if (*p || (nd != 2 && nd != 4) || (nd == 2 && strchr(s, ':')))
        return false;
    int hh = d[0] * 10 + d[1];
    int mm = nd == 4 ? d[2] * 10 + d[3] : 0;
    if (hh > 15 || mm > 59)
        return false;
    int32_t v = (int32_t)(hh * 3600 + mm * 60);
    *out = s[0] == '-' ? -v : v;
    return true;
}

/* A name the tz database could hold: letters, digits, '_', '-', '+', '/',
 * no "..", not absolute.  Keeps TZ from reading an arbitrary file. */
static bool plausible_iana(const char *s)
{
    if (!*s || *s == '/' || strstr(s, "..") || strlen(s) >= 64)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '+' || *p == '/'))
            return false;
    return true;
}

static int32_t gmtoff_at(time_t t)
{
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return 0;
    return (int32_t)tm.tm_gmtoff;
}

static bool push(tz_zone *z, size_t *cap, int64_t from, int32_t off)
{
    if (z->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        int64_t *f = realloc(z->from, nc * sizeof *f);
        if (!f)
            return false;
        z->from = f;
        int32_t *o = realloc(z->off, nc * sizeof *o);
        if (!o)
            return false;
        z->off = o;
        *cap = nc;
    }
    z->from[z->n] = from;
    z->off[z->n] = off;
    z->n++;
    return true;
}

/* Builds the offset table with TZ set to the zone (see timezone.h). */
static bool build_table(tz_zone *z)
{
    const int64_t start = -2208988800LL;  /* 1900-01-01 UTC */
    const int64_t end = 4102444800LL;     /* 2100-01-01 UTC */
    size_t cap = 0;
    int32_t cur = gmtoff_at((time_t)start);
    if (!push(z, &cap, INT64_MIN, cur))
        return false;
    for (int64_t t = start + 86400; t <= end; t += 86400) {
        int32_t o = gmtoff_at((time_t)t);
        if (o == cur)
            continue;
        int64_t lo = t - 86400, hi = t; /* lo has cur, hi has o */
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (gmtoff_at((time_t)mid) == cur)
                lo = mid;
            else
                hi = mid;
        }
        if (!push(z, &cap, hi, o))
            return false;
        cur = o;
    }
    return true;
}

bool tz_resolve(const char *name, tz_zone *z, buf *err)
{
    memset(z, 0, sizeof *z);
    snprintf(z->name, sizeof z->name, "%s", name);
    if (tz_fixed_offset(name, &z->offset_s)) {
        z->fixed = true;
        return true;
    }
    if (name[0] == '+' || name[0] == '-' || !plausible_iana(name)) {
        buf_printf(err, "time zone '%s' is neither an offset (+08:00, Z) nor an IANA name "
                        "(Asia/Shanghai)", name);
        return false;
    }
    const char *dir = getenv("TZDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        buf_printf(err, "time zone '%s' is not in the tz database (%s); is tzdata installed?",
                   name, path);
        return false;
    }
    const char *old = getenv("TZ");
    char *saved = old ? strdup(old) : NULL;
    if (old && !saved) {
        buf_printf(err, "out of memory");
        return false;
    }
    char tzval[80];
    snprintf(tzval, sizeof tzval, ":%s", name);
    setenv("TZ", tzval, 1);
    tzset();
    bool ok = build_table(z);
    if (saved) {
        setenv("TZ", saved, 1);
        free(saved);
    } else {
        unsetenv("TZ");
    }
    tzset();
    if (!ok) {
        tz_free(z);
        buf_printf(err, "out of memory");
        return false;
    }
    return true;
}

void tz_free(tz_zone *z)
{
    free(z->from);
    free(z->off);
    z->from = NULL;
    z->off = NULL;
    z->n = 0;
}

/* The offset in force at UTC second t. */
static int32_t offset_at_utc(const tz_zone *z, int64_t t)
{
    size_t lo = 0, hi = z->n; /* last i with from[i] <= t; from[0] is INT64_MIN */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->from[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return z->off[lo];
}

int32_t tz_offset_at_local(const tz_zone *z, int64_t local_s)
{
    if (z->fixed || z->n == 0)
        return z->offset_s;
    /* The offsets in force a day before and a day after are the
     * candidates; one fits when the instant it gives has that offset.
     * PostgreSQL's rule (DetermineTimeZoneOffset; its docs, "Handling of
     * Invalid or Ambiguous Timestamps"): a time in a spring-forward gap
     * (neither fits) takes the offset in force before the transition, an
     * ambiguous time in a fall-back overlap (both fit) the offset after
     * it, so that idemload and '...'::timestamptz never disagree. */
    int32_t before = offset_at_utc(z, local_s - 86400);
    int32_t after = offset_at_utc(z, local_s + 86400);
    bool before_fits = offset_at_utc(z, local_s - before) == before;
    bool after_fits = offset_at_utc(z, local_s - after) == after;
    if (before_fits && !after_fits)
        return before;
    if (after_fits)
        return after;
    return before;
}

void tz_format_offset(int32_t off, char out[8])
{
    char sign = off < 0 ? '-' : '+';
    if (off < 0)
        off = -off;
    off /= 60; /* ts_parse takes minutes; pre-1900 local mean times lose their seconds */
    /* unsigned, each below 100: the compiler sees that seven bytes hold it */
    unsigned hours = (unsigned)(off / 60) % 100u, minutes = (unsigned)(off % 60);
    snprintf(out, 8, "%c%02u:%02u", sign, hours, minutes % 100u);
}
