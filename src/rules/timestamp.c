/*
 * timestamp.c - received_at text to microseconds since the Unix epoch, and
 * back to a text PostgreSQL reads without ambiguity.
 *
 * Hand-written rather than strptime/timegm: those depend on the locale and
 * the TZ environment, accept loose forms, and are slow for a column read
 * once per row.  Calendar arithmetic is Howard Hinnant's days-from-civil,
 * exact for the proleptic Gregorian calendar PostgreSQL also uses.
 */
#include "rules/timestamp.h"

#include <string.h>

/*
 * Marks the error branches.  The success path is the hot one, but GCC's
 * guessed probabilities over ts_parse's many checks rank it cold and then
 * compile its divisions by constants into division instructions.
 */
#if defined(__GNUC__)
#define unlikely(x) __builtin_expect(!!(x), 0)
#else
#define unlikely(x) (x)
#endif

#define US_PER_SEC INT64_C(1000000)
#define US_PER_DAY (INT64_C(86400) * US_PER_SEC)

/* Days from 0000-03-01, the origin of the era arithmetic, to 1970-01-01. */
#define EPOCH_DAYS_FROM_0000_03_01 719468
#define DAYS_PER_ERA 146097 /* 400 Gregorian years */

static bool is_digit(char c)
{
    return (unsigned char)(c - '0') <= 9;
}

static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Two digits at p as a number, or -1 if either is not a digit. */
static int two_digits(const char *p)
{
    unsigned hi = (unsigned char)p[0] - (unsigned)'0';
    unsigned lo = (unsigned char)p[1] - (unsigned)'0';
    return hi <= 9 && lo <= 9 ? (int)(hi * 10 + lo) : -1;
}

static bool is_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m)
{
    static const unsigned char days[12] = {31, 28, 31, 30, 31, 30,
                                           31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/*
 * Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar, for
 * years 1..9999: counted from 0000-03-01 so that the leap day ends a year,
 * in unsigned arithmetic so that every division is by a constant.
 */
static int32_t days_from_civil(unsigned y, unsigned m, unsigned d)
{
    y -= m <= 2;
    unsigned era = y / 400;
    unsigned yoe = y - era * 400;                        /* [0, 399] */
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return (int32_t)(era * DAYS_PER_ERA + doe) - EPOCH_DAYS_FROM_0000_03_01;
}

void ts_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += EPOCH_DAYS_FROM_0000_03_01;
    int64_t era = (z >= 0 ? z : z - (DAYS_PER_ERA - 1)) / DAYS_PER_ERA;
    int64_t doe = z - era * DAYS_PER_ERA;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/*
 * Parses the offset at [p, end), which starts with '+', '-', 'Z' or 'z', into
 * seconds east of UTC.
 */
static bool parse_offset(const char *p, const char *end, int *out_sec, const char **reason)
{
    if (*p == 'Z' || *p == 'z') {
        if (unlikely(p + 1 != end)) {
            *reason = "unexpected text after UTC offset";
            return false;
        }
        *out_sec = 0;
        return true;
    }

    int sign = *p++ == '-' ? -1 : 1;
    size_t n = (size_t)(end - p);
    int hh, mm = 0;

    if (unlikely(n < 2 || (hh = two_digits(p)) < 0)) {
        *reason = "bad UTC offset";
        return false;
    }
    p += 2;
    n -= 2;
    if (n > 0) {
        if (*p == ':') {
            p++;
            n--;
        }
        if (unlikely(n != 2 || (mm = two_digits(p)) < 0)) {
            *reason = "bad UTC offset";
            return false;
        }
    }
    if (unlikely(hh > 15 || mm > 59)) {
        *reason = "UTC offset out of range";
        return false;
    }
    *out_sec = sign * (hh * 3600 + mm * 60);
    return true;
}

/*
 * The date YYYY-MM-DD at *p, fixed width so that every field is read at a
 * known place, and the separator after it: a 'T' or white space, or both
 * (PostgreSQL reads "2016-05-04  02:18:18", a tab, or " T" as one
 * separator); *p moves past both.
 */
static inline bool parse_date(const char **pp, const char *end, int *year, int *month, int *day,
                              const char **reason)
{
    const char *p = *pp;
    if (unlikely(end - p < 10 || p[4] != '-' || p[7] != '-')) {
        *reason = "expected a date as YYYY-MM-DD";
        return false;
    }
    int hi = two_digits(p), lo = two_digits(p + 2);
    *month = two_digits(p + 5);
    *day = two_digits(p + 8);
    if (unlikely(hi < 0 || lo < 0 || *month < 0 || *day < 0)) {
        *reason = "expected a date as YYYY-MM-DD";
        return false;
    }
    *year = hi * 100 + lo;
    if (unlikely(*year < 1)) {
        *reason = "year out of range";
        return false;
    }
    if (unlikely(*month < 1 || *month > 12)) {
        *reason = "month out of range";
        return false;
    }
    if (unlikely(*day < 1 || *day > days_in_month(*year, *month))) {
        *reason = "day out of range for month";
        return false;
    }
    p += 10;

    if (unlikely(p == end)) {
        *reason = "no time of day";
        return false;
    }
    const char *sep = p;
    while (p < end && is_space(*p))
        p++;
    if (p < end && (*p == 'T' || *p == 't'))
        p++;
    while (p < end && is_space(*p))
        p++;
    if (unlikely(p == sep)) {
        *reason = is_digit(*p) ? "expected a date as YYYY-MM-DD"
                               : "expected 'T' or a space after the date";
        return false;
    }
    *pp = p;
    return true;
}

/*
 * The time of day HH:MM[:SS] at *p, as seconds since midnight (a leap
 * second counts as the next minute's first); *p moves past it.
 * *has_seconds says whether a fraction may follow.
 */
static inline bool parse_time(const char **pp, const char *end, int *out_sec, bool *has_seconds,
                              const char **reason)
{
    const char *p = *pp;
    int hour, minute, second = 0;
    *has_seconds = false;
    if (unlikely(end - p < 5 || (hour = two_digits(p)) < 0 || p[2] != ':' ||
                 (minute = two_digits(p + 3)) < 0)) {
        *reason = "expected a time as HH:MM or HH:MM:SS";
        return false;
    }
    p += 5;
    if (p < end && *p == ':') {
        if (unlikely(end - p < 3 || (second = two_digits(p + 1)) < 0)) {
            *reason = "expected a time as HH:MM or HH:MM:SS";
            return false;
        }
        p += 3;
        *has_seconds = true;
    }
    if (unlikely(p < end && is_digit(*p))) {
        *reason = "expected a time as HH:MM or HH:MM:SS";
        return false;
    }
    if (unlikely(hour > 23)) {
        *reason = "hour out of range";
        return false;
    }
    if (unlikely(minute > 59)) {
        *reason = "minute out of range";
        return false;
    }
    if (unlikely(second > 60)) {
        *reason = "second out of range";
        return false;
    }
    *out_sec = hour * 3600 + minute * 60 + second;
    *pp = p;
    return true;
}

/*
 * The fraction of a second after '.' or ',' at *p, if there is one, as
 * microseconds; *p moves past it.  The first six digits are the
 * microseconds; the seventh alone decides rounding half up, since the
 * digits after it can only add less than half a microsecond.  Rounding may
 * give 1000000, which the caller's arithmetic absorbs like a leap second.
 */
static inline bool parse_fraction(const char **pp, const char *end, int64_t *out_us,
                                  const char **reason)
{
    static const int32_t scale[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
    const char *p = *pp;
    int64_t frac_us = 0;
    *out_us = 0;
    if (p == end || (*p != '.' && *p != ','))
        return true;
    const char *digits = ++p;
    const char *six_end = end - p > 6 ? p + 6 : end;
    while (p < six_end && is_digit(*p))
        frac_us = frac_us * 10 + (*p++ - '0');
    size_t ndigits = (size_t)(p - digits);
    if (unlikely(ndigits == 0)) {
        *reason = "no digits after the decimal point";
        return false;
    }
    frac_us *= scale[ndigits];
    if (p < end && is_digit(*p)) {
        if (*p >= '5')
            frac_us++;
        while (p < end && is_digit(*p))
            p++;
    }
    *out_us = frac_us;
    *pp = p;
    return true;
}

/*
 * The UTC offset that ends the text at p, after any white space (as
 * PostgreSQL reads it), as seconds east of UTC.  A text without one is
 * refused: its instant would depend on the server's TimeZone.
 */
static inline bool parse_zone(const char *p, const char *end, int *out_sec, const char **reason)
{
    while (p < end && is_space(*p))
        p++;
    if (unlikely(p == end)) {
        *reason = "no UTC offset";
        return false;
    }
    if (unlikely(*p != 'Z' && *p != 'z' && *p != '+' && *p != '-')) {
        *reason = "unexpected text after the time";
        return false;
    }
    return parse_offset(p, end, out_sec, reason);
}

bool ts_parse(const char *s, size_t len, int64_t *out_us, const char **reason)
{
    const char *p = s;
    const char *end = s + len;

    while (p < end && is_space(*p))
        p++;
    while (end > p && is_space(end[-1]))
        end--;
    if (unlikely(p == end)) {
        *reason = "empty timestamp";
        return false;
    }

    int year, month, day, sec_of_day, offset_sec;
    bool has_seconds;
    int64_t frac_us = 0;
    if (unlikely(!parse_date(&p, end, &year, &month, &day, reason)) ||
        unlikely(!parse_time(&p, end, &sec_of_day, &has_seconds, reason)) ||
        unlikely(has_seconds && !parse_fraction(&p, end, &frac_us, reason)) ||
        unlikely(!parse_zone(p, end, &offset_sec, reason)))
        return false;

    int64_t days = days_from_civil((unsigned)year, (unsigned)month, (unsigned)day);
    int64_t secs = days * 86400 + sec_of_day - offset_sec;
    *out_us = secs * US_PER_SEC + frac_us;
    return true;
}

/* Writes v (0..99) as two digits at p; returns the next free place. */
static char *put2(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
    return p + 2;
}

int64_t ts_day(int64_t us)
{
    return us / US_PER_DAY - (us % US_PER_DAY < 0);
}

size_t ts_format(int64_t us, char *out)
{
    /* Floor division: instants before 1970 still get a time of day >= 0. */
    int64_t days = ts_day(us);
    int64_t rem = us % US_PER_DAY;
    if (rem < 0)
        rem += US_PER_DAY;

    int64_t year;
    int month, day;
    ts_civil_from_days(days, &year, &month, &day);

    unsigned sec_of_day = (unsigned)(rem / US_PER_SEC);
    unsigned micro = (unsigned)(rem % US_PER_SEC);

    /* PostgreSQL has no year 0: astronomical year y <= 0 is 1-y BC. */
    bool bc = year <= 0;
    uint64_t uyear = (uint64_t)(bc ? 1 - year : year);

    char *p = out;
    if (uyear < 10000) {
        p = put2(p, (unsigned)uyear / 100);
        p = put2(p, (unsigned)uyear % 100);
    } else {
        char digits[20];
        int ndigits = 0;
        for (; uyear > 0; uyear /= 10)
            digits[ndigits++] = (char)('0' + uyear % 10);
        while (ndigits > 0)
            *p++ = digits[--ndigits];
    }
    *p++ = '-';
    p = put2(p, (unsigned)month);
    *p++ = '-';
    p = put2(p, (unsigned)day);
    *p++ = ' ';
    p = put2(p, sec_of_day / 3600);
    *p++ = ':';
    p = put2(p, sec_of_day / 60 % 60);
    *p++ = ':';
    p = put2(p, sec_of_day % 60);
    *p++ = '.';
    p = put2(p, micro / 10000);
    p = put2(p, micro / 100 % 100);
    p = put2(p, micro % 100);
    memcpy(p, "+00", 3);
    p += 3;
    if (bc) {
        memcpy(p, " BC", 3);
        p += 3;
    }
    *p = '\0';
    return (size_t)(p - out);
}
