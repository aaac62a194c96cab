/*
 * test_timestamp.c - ts_parse and ts_format against instants computed
 * independently (GNU `date -u -d ... +%s`), and the calendar checked day by
 * day over the whole accepted range.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/timestamp.h"

#define S INT64_C(1000000)

/* 2026-03-01T02:00:00Z; `date -u -d 2026-03-01T02:00:00Z +%s` = 1772330400 */
#define T0 (INT64_C(1772330400) * S)

typedef struct good_case {
    const char *in;
    int64_t us;
} good_case;

static const good_case good[] = {
    /* Offset forms, all the same instant. */
    {"2026-03-01T10:00:00+08:00", T0},
    {"2026-03-01T10:00:00+0800", T0},
    {"2026-03-01T10:00:00+08", T0},
    {"2026-03-01T02:00:00Z", T0},
    {"2026-03-01T02:00:00z", T0},
    {"2026-03-01T02:00:00+00:00", T0},
    {"2026-03-01T02:00:00-00:00", T0},
    {"2026-03-01T02:00:00+00", T0},
    {"2026-02-28T20:30:00-05:30", T0},
    {"2026-02-28T20:30:00-0530", T0},
    {"2026-03-01T17:59:00+15:59", T0},
    {"2026-02-28T10:01:00-15:59", T0},
    /* Separators, optional seconds, space before the offset. */
    {"2026-03-01 10:00:00+08:00", T0},
    {"2026-03-01t10:00:00+08:00", T0},
    {"2026-03-01T10:00+08:00", T0},
    {"2026-03-01 10:00 +08", T0},
    {"2026-03-01 02:00:00 Z", T0},
    {"2026-03-01 10:00:00 +08:00", T0},
    /* White space as PostgreSQL reads it: any run of it between the date
     * and the time (a bill's "2016-05-04  02:18:18"), around a 'T', and
     * before the offset (each checked against PostgreSQL 15's input). */
    {"2026-03-01  10:00:00+08:00", T0},
    {"2026-03-01\t10:00:00+08", T0},
    {"2026-03-01 \t 10:00:00+08", T0},
    {"2026-03-01 T10:00:00+08", T0},
    {"2026-03-01T  10:00:00+08", T0},
    {"2026-03-01  10:00+08", T0},
    {"2026-03-01T02:00:00  Z", T0},
    {"2026-03-01 10:00:00  +08", T0},
    /* Surrounding ASCII white space. */
    {"  2026-03-01T02:00:00Z  ", T0},
    {"\t\r\n2026-03-01T02:00:00Z\n\v\f", T0},
    /* Fractions: any length, '.' or ',', rounded half up to microseconds. */
    {"2026-03-01T02:00:00.1Z", T0 + 100000},
    {"2026-03-01T02:00:00,1Z", T0 + 100000},
    {"2026-03-01T02:00:00.000001Z", T0 + 1},
    {"2026-03-01T02:00:00.123456Z", T0 + 123456},
    {"2026-03-01T02:00:00.1234564Z", T0 + 123456},
    {"2026-03-01T02:00:00.1234565Z", T0 + 123457},
    {"2026-03-01T02:00:00.12345649999999Z", T0 + 123456},
    {"2026-03-01T02:00:00.1234569999Z", T0 + 123457},
    {"2026-03-01T02:00:00.0000005Z", T0 + 1},
    {"2026-03-01T02:00:00.0000004999Z", T0},
    {"2026-03-01T02:00:00.9999994Z", T0 + 999999},
    {"2026-03-01T02:00:00.9999995Z", T0 + S},
    {"2026-03-01T01:59:59.9999999Z", T0},
    {"2026-03-01T02:00:00.000000000000000000000000000000Z", T0},
    {"2026-03-01T10:00:00.5 +08:00", T0 + 500000},
    /* Rounding carries through minute, day, month and year. */
    {"2026-12-31T23:59:59.99999951Z", INT64_C(1798761600) * S},
    /* Leap second rolls into the next minute, as in PostgreSQL. */
    {"2026-03-01T01:59:60Z", T0},
    {"2026-03-01T01:59:60.5Z", T0 + 500000},
    {"2026-12-31T23:59:60Z", INT64_C(1798761600) * S},
    {"2026-03-01T10:15:60+08:00", T0 + 16 * 60 * S},
    /* Calendar. */
    {"1970-01-01T00:00:00Z", 0},
    {"1970-01-01T00:00:00.000001Z", 1},
    {"1969-12-31T23:59:59.999999Z", -1},
    {"1969-12-31T23:59:59Z", -S},
    {"2024-02-29T12:34:56Z", INT64_C(1709210096) * S},
    {"2000-02-29T00:00:00Z", INT64_C(951782400) * S},
    {"1600-02-29T00:00:00Z", INT64_C(-11670998400) * S},
    {"1900-03-01T00:00:00Z", INT64_C(-2203891200) * S},
    {"1901-12-13T20:45:52Z", INT64_C(-2147483648) * S},
    {"2038-01-19T03:14:08Z", INT64_C(2147483648) * S},
    {"1066-10-14T09:00:00Z", INT64_C(-28502722800) * S},
    {"0001-01-01T00:00:00Z", INT64_C(-62135596800) * S},
    {"0001-01-01T00:00:00+15:59", INT64_C(-62135654340) * S},
    {"9999-12-31T23:59:59Z", INT64_C(253402300799) * S},
    {"9999-12-31T23:59:59.999999Z", INT64_C(253402300799) * S + 999999},
    {"9999-12-31T23:59:59-15:59", INT64_C(253402358339) * S},
};

typedef struct bad_case {
    const char *in;
    const char *reason;
} bad_case;

static const bad_case bad[] = {
    {"", "empty timestamp"},
    {"   \t\n", "empty timestamp"},
    /* No offset: the instant would depend on the server's TimeZone. */
    {"2026-03-01T10:00:00", "no UTC offset"},
    {"2026-03-01T10:00", "no UTC offset"},
    {"2026-03-01 10:00:00.123", "no UTC offset"},
    {"2026-03-01 10:00:00 ", "no UTC offset"},
    {"2026-03-01", "no time of day"},
    {"2026-03-01Z", "expected 'T' or a space after the date"},
    {"2026-03-01T", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01TZ", "expected a time as HH:MM or HH:MM:SS"},
    /* Calendar. */
    {"2026-02-29T00:00:00Z", "day out of range for month"},
    {"2026-02-30T00:00:00Z", "day out of range for month"},
    {"1900-02-29T00:00:00Z", "day out of range for month"},
    {"2100-02-29T00:00:00Z", "day out of range for month"},
    {"2026-04-31T00:00:00Z", "day out of range for month"},
    {"2026-01-32T00:00:00Z", "day out of range for month"},
    {"2026-01-00T00:00:00Z", "day out of range for month"},
    {"2026-00-10T00:00:00Z", "month out of range"},
    {"2026-13-10T00:00:00Z", "month out of range"},
    {"0000-01-01T00:00:00Z", "year out of range"},
    /* Clock. */
    {"2026-03-01T24:00:00Z", "hour out of range"},
    {"2026-03-01T24:00Z", "hour out of range"},
    {"2026-03-01T10:60:00Z", "minute out of range"},
    {"2026-03-01T10:00:61Z", "second out of range"},
    {"2026-03-01T10:00:00.Z", "no digits after the decimal point"},
    {"2026-03-01T10:00:00.", "no digits after the decimal point"},
    {"2026-03-01T10:00:00.+08", "no digits after the decimal point"},
    /* Offsets. */
    {"2026-03-01T10:00:00+16:00", "UTC offset out of range"},
    {"2026-03-01T10:00:00-16", "UTC offset out of range"},
    {"2026-03-01T10:00:00+08:60", "UTC offset out of range"},
    {"2026-03-01T10:00:00+8", "bad UTC offset"},
    {"2026-03-01T10:00:00+080", "bad UTC offset"},
    {"2026-03-01T10:00:00+08:0", "bad UTC offset"},
    {"2026-03-01T10:00:00+08:", "bad UTC offset"},
    {"2026-03-01T10:00:00+08:000", "bad UTC offset"},
    {"2026-03-01T10:00:00+08:00:00", "bad UTC offset"},
    {"2026-03-01T10:00:00+", "bad UTC offset"},
    {"2026-03-01T10:00:00+0a", "bad UTC offset"},
    {"2026-03-01T10:00:00++08", "bad UTC offset"},
    {"2026-03-01T10:00:00+-8", "bad UTC offset"},
    {"2026-03-01T10:00:00Zjunk", "unexpected text after UTC offset"},
    {"2026-03-01T10:00:00ZZ", "unexpected text after UTC offset"},
    {"2026-03-01T10:00:00 Z Z", "unexpected text after UTC offset"},
    {"2026-03-01T10:00:00UTC", "unexpected text after the time"},
    {"2026-03-01T10:00:00 UTC", "unexpected text after the time"},
    {"2026-03-01T10:00:00 America/New_York", "unexpected text after the time"},
    {"2026-03-01T10:00:00.5.5Z", "unexpected text after the time"},
    {"2026-03-01T10:00.5Z", "unexpected text after the time"},
    {"2026-03-01T10:00:00+08:00 junk", "bad UTC offset"},
    {"2026-03-01T10:00:00+08:00\x01", "bad UTC offset"},
    /* Malformed fields: widths, signs, non-digits. */
    {"26-03-01T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"02026-03-01T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"+2026-03-01T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"-2026-03-01T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"2026-3-01T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"2026-03-1T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"2026-03-011T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"2026-+3-01T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"2026-03- 1T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"2026/03/01T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"20260301T100000Z", "expected a date as YYYY-MM-DD"},
    {"2O26-03-01T10:00:00Z", "expected a date as YYYY-MM-DD"},
    {"2026-03-01T1:00:00Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01T+1:00:00Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01T10:0:00Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01T10:00:0Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01T10:00:000Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01T10:00:-1Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01T10:00:", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01T10.00.00Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01T100000Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01TT10:00:00Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01 T T10:00:00Z", "expected a time as HH:MM or HH:MM:SS"},
    {"2026-03-01_10:00:00Z", "expected 'T' or a space after the date"},
    {"garbage", "expected a date as YYYY-MM-DD"},
    {"now", "expected a date as YYYY-MM-DD"},
    {"1772330400", "expected a date as YYYY-MM-DD"},
};

static void
test_good(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    {
        int64_t us = INT64_MIN;
        const char *reason = NULL;
        bool ok = ts_parse(good[i].in, strlen(good[i].in), &us, &reason);
        if (!ok || us != good[i].us)
            fail_msg("\"%s\": ok=%d reason=%s got %lld want %lld", good[i].in,
                     ok, reason ? reason : "-", (long long) us,
                     (long long) good[i].us);
    }
}

static void
test_bad(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
        int64_t us = 0;
        const char *reason = NULL;
        bool ok = ts_parse(bad[i].in, strlen(bad[i].in), &us, &reason);
        if (ok || reason == NULL || strcmp(reason, bad[i].reason) != 0)
            fail_msg("\"%s\": ok=%d reason \"%s\", want \"%s\"", bad[i].in, ok,
                     reason ? reason : "(null)", bad[i].reason);
    }
}

/* The length is the end: nothing past it is read, no NUL is needed. */
static void
test_length_bounds(void **state)
{
    (void) state;
    const char *text = "2026-03-01T02:00:00Zjunk";
    int64_t us = 0;
    const char *reason = NULL;

    assert_true(ts_parse(text, 20, &us, &reason));
    assert_int_equal(us, T0);
    assert_false(ts_parse(text, 19, &us, &reason));
    assert_string_equal(reason, "no UTC offset");
    assert_false(ts_parse(text, 0, &us, &reason));
    assert_string_equal(reason, "empty timestamp");

    /* An embedded NUL is just an unexpected byte. */
    const char nul[] = "2026-03-01T02:00:00Z\0";
    assert_false(ts_parse(nul, sizeof nul - 1, &us, &reason));

    /* Every proper prefix of a valid text, in an exact-size heap copy so
     * ASan catches any read past the end, is refused without a crash. */
    const char *full = "2026-03-01T10:00:00.123456789+08:00";
    size_t full_len = strlen(full);
    for (size_t n = 0; n <= full_len; n++)
    {
        char *copy = malloc(n ? n : 1);
        assert_non_null(copy);
        memcpy(copy, full, n);
        bool ok = ts_parse(copy, n, &us, &reason);
        /* Valid prefixes: ...+08 and the full text. */
        bool want = n == full_len || n == full_len - 3;
        if (ok != want)
            fail_msg("prefix of length %zu: ok=%d", n, ok);
        free(copy);
    }
}

typedef struct format_case {
    int64_t us;
    const char *out;
} format_case;

static const format_case formats[] = {
    {0, "1970-01-01 00:00:00.000000+00"},
    {1, "1970-01-01 00:00:00.000001+00"},
    {-1, "1969-12-31 23:59:59.999999+00"},
    {-S, "1969-12-31 23:59:59.000000+00"},
    {T0, "2026-03-01 02:00:00.000000+00"},
    {T0 + 123457, "2026-03-01 02:00:00.123457+00"},
    {INT64_C(1709210096) * S, "2024-02-29 12:34:56.000000+00"},
    {INT64_C(-2203891200) * S - 1, "1900-02-28 23:59:59.999999+00"},
    {INT64_C(-11670998400) * S, "1600-02-29 00:00:00.000000+00"},
    {INT64_C(-28502722800) * S, "1066-10-14 09:00:00.000000+00"},
    {INT64_C(-62135596800) * S, "0001-01-01 00:00:00.000000+00"},
    {INT64_C(253402300799) * S + 999999, "9999-12-31 23:59:59.999999+00"},
    /* Beyond ts_parse's years but reachable through its offsets. */
    {INT64_C(-62135654340) * S, "0001-12-31 08:01:00.000000+00 BC"},
    {INT64_C(253402358339) * S, "10000-01-01 15:58:59.000000+00"},
    /* The int64 extremes (PostgreSQL itself stops at 4714 BC / 294276 AD). */
    {INT64_MAX, "294247-01-10 04:00:54.775807+00"},
    {INT64_MIN, "290309-12-21 19:59:05.224192+00 BC"},
};

static void
test_format(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    {
        char buf[TS_FORMAT_MAX];
        memset(buf, 'x', sizeof buf);
        size_t n = ts_format(formats[i].us, buf);
        assert_true(n < TS_FORMAT_MAX);
        assert_int_equal(n, strlen(buf));
        if (strcmp(buf, formats[i].out) != 0)
            fail_msg("%lld: got \"%s\" want \"%s\"", (long long) formats[i].us,
                     buf, formats[i].out);
    }
}

static void
round_trip(int64_t us)
{
    char buf[TS_FORMAT_MAX];
    size_t n = ts_format(us, buf);
    int64_t back = 0;
    const char *reason = NULL;
    if (!ts_parse(buf, n, &back, &reason) || back != us)
        fail_msg("%lld -> \"%s\" -> %s %lld", (long long) us, buf,
                 reason ? reason : "", (long long) back);
}

/* ts_format's text parses back to the same instant across years 1..9999. */
static void
test_round_trip(void **state)
{
    (void) state;
    const int64_t lo = INT64_C(-62135596800) * S;               /* 0001-01-01 */
    const int64_t hi = INT64_C(253402300799) * S + 999999;      /* 9999-12-31 */

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (good[i].us >= lo && good[i].us <= hi)
            round_trip(good[i].us);
    for (int64_t d = -3; d <= 3; d++)
    {
        round_trip(d);
        round_trip(d * S);
        round_trip(lo + d * d);
        round_trip(hi - d * d);
    }

    /* A deterministic spread over the whole range (64-bit LCG). */
    uint64_t x = 12345;
    for (int i = 0; i < 200000; i++)
    {
        x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        round_trip(lo + (int64_t) ((x >> 1) % (uint64_t) (hi - lo + 1)));
    }
}

/*
 * Every date from 0001-01-01 to 9999-12-31, built from a plain day counter
 * that knows nothing but month lengths: each must parse to exactly one day
 * after the previous, and ts_format must print it back; ts_day must count
 * it and ts_civil_from_days name it.  Dates one past the month's end must
 * be refused.
 */
static void
test_every_day(void **state)
{
    (void) state;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
    int64_t want = INT64_C(-62135596800) * S;
    const int64_t day_us = INT64_C(86400) * S;
    char in[64], out[TS_FORMAT_MAX], expect[64];
    int64_t us;
    const char *reason;

    for (int y = 1; y <= 9999; y++)
    {
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        for (int m = 1; m <= 12; m++)
        {
            int last = mdays[m - 1] + (m == 2 && leap);
            for (int d = 1; d <= last + 1; d++)
            {
                int n = snprintf(in, sizeof in, "%04d-%02d-%02dT00:00Z", y, m, d);
                bool ok = ts_parse(in, (size_t) n, &us, &reason);
                if (d > last)
                {
                    if (ok)
                        fail_msg("\"%s\" accepted", in);
                    continue;
                }
                if (!ok || us != want)
                    fail_msg("\"%s\": %lld want %lld", in, (long long) us,
                             (long long) want);
                ts_format(us, out);
                snprintf(expect, sizeof expect,
                         "%04d-%02d-%02d 00:00:00.000000+00", y, m, d);
                if (strcmp(out, expect) != 0)
                    fail_msg("%lld: \"%s\" want \"%s\"", (long long) us, out,
                             expect);
                /* The day's first and last microsecond are in the day. */
                int64_t cy;
                int cm, cd;
                ts_civil_from_days(ts_day(us + day_us - 1), &cy, &cm, &cd);
                if (cy != y || cm != m || cd != d)
                    fail_msg("%s: day %lld is %lld-%d-%d", in,
                             (long long) ts_day(us), (long long) cy, cm, cd);
                if (ts_day(us) != ts_day(us + day_us - 1) ||
                    ts_day(us - 1) != ts_day(us) - 1)
                    fail_msg("%s: day boundaries", in);
                want += day_us;
            }
        }
    }
    /* The counter ended exactly at 10000-01-01. */
    assert_int_equal(want, (INT64_C(253402300799) + 1) * S);
}

/* Every hour/minute/second combination of one day, valid and not. */
static void
test_every_clock(void **state)
{
    (void) state;
    char in[64];
    int64_t us;
    const char *reason;
    const int64_t base = INT64_C(1772323200) * S; /* 2026-03-01T00:00:00Z */

    for (int h = 0; h <= 25; h++)
        for (int mi = 0; mi <= 61; mi++)
            for (int se = 0; se <= 61; se++)
            {
                int n = snprintf(in, sizeof in, "2026-03-01T%02d:%02d:%02dZ",
                                 h, mi, se);
                bool ok = ts_parse(in, (size_t) n, &us, &reason);
                bool valid = h <= 23 && mi <= 59 && se <= 60;
                if (ok != valid)
                    fail_msg("\"%s\": ok=%d", in, ok);
                if (ok && us != base + ((int64_t) h * 3600 + mi * 60 + se) * S)
                    fail_msg("\"%s\": %lld", in, (long long) us);
            }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_length_bounds),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_every_day),
        cmocka_unit_test(test_every_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
