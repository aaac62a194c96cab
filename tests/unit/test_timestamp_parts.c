/*
 * test_timestamp_parts.c - ts_parse at the seams between its parts (date,
 * separator, time, fraction, UTC offset): which part's complaint wins when
 * two are wrong, and what a part leaves to the next.  test_timestamp.c
 * checks each part alone; a text wrong in one place only cannot tell
 * whether the parts still run in order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rules/timestamp.h"

#define S INT64_C(1000000)

/* 2026-03-01T02:00:00Z; `date -u -d 2026-03-01T02:00:00Z +%s` = 1772330400 */
#define T0 (INT64_C(1772330400) * S)

typedef struct seam_case {
    const char *in;
    const char *reason; /* NULL: accepted as us */
    int64_t us;
} seam_case;

static const seam_case cases[] = {
    /* The date's ranges before what follows it. */
    {"2026-02-30X10:00Z", "day out of range for month", 0},
    {"2026-13-01T25:00:00Z", "month out of range", 0},
    {"0000-02-30T10:00Z", "year out of range", 0},
    {"2026-02-30", "day out of range for month", 0},
    /* A digit right after the date is a date too long, not a separator. */
    {"2026-03-011", "expected a date as YYYY-MM-DD", 0},
    /* The time's shape before its ranges, its ranges before the rest. */
    {"2026-03-01T25:00:0Z", "expected a time as HH:MM or HH:MM:SS", 0},
    {"2026-03-01T25:61:00Z", "hour out of range", 0},
    {"2026-03-01T23:61:61Z", "minute out of range", 0},
    {"2026-03-01T24:00:00.Z", "hour out of range", 0},
    {"2026-03-01T10:00:61.x", "second out of range", 0},
    {"2026-03-01T24:00", "hour out of range", 0},
    {"2026-03-01T24:00junk", "hour out of range", 0},
    /* A fraction only after seconds; its digits before the offset. */
    {"2026-03-01T10:00,5Z", "unexpected text after the time", 0},
    {"2026-03-01T10:00:00.x+08", "no digits after the decimal point", 0},
    {"2026-03-01T10:00:00,", "no digits after the decimal point", 0},
    {"2026-03-01T10:00:00.5", "no UTC offset", 0},
    {"2026-03-01T10:00:00.5 ", "no UTC offset", 0},
    {"2026-03-01T10:00:00.5x", "unexpected text after the time", 0},
    {"2026-03-01T10:00:00.5+8", "bad UTC offset", 0},
    /* Rounding and a leap second together carry across the minute. */
    {"2026-03-01T01:59:60.9999995Z", NULL, T0 + S},
    {"2026-03-01T09:59:59.9999995+08", NULL, T0},
    /* White space before the offset, after seconds or a fraction (any run
     * of it, as PostgreSQL reads it). */
    {"2026-03-01T02:00 Z", NULL, T0},
    {"2026-03-01T02:00:00.000 z", NULL, T0},
    {"2026-03-01T02:00:00.0  Z", NULL, T0},
    /* The offset's sign applies to its minutes too. */
    {"2026-03-01T02:00:00.25-00:30", NULL, T0 + 30 * 60 * S + 250000},
    {"2026-03-01T02:00:00+0030", NULL, T0 - 30 * 60 * S},
};

static void test_seams(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const seam_case *c = &cases[i];
        int64_t us = INT64_MIN;
        const char *reason = NULL;
        bool ok = ts_parse(c->in, strlen(c->in), &us, &reason);
        if (c->reason == NULL) {
            if (!ok || us != c->us)
                fail_msg("\"%s\": ok=%d reason=%s got %lld want %lld", c->in, ok,
                         reason ? reason : "-", (long long)us, (long long)c->us);
        } else if (ok || reason == NULL || strcmp(reason, c->reason) != 0) {
            fail_msg("\"%s\": ok=%d reason \"%s\", want \"%s\"", c->in, ok,
                     reason ? reason : "(null)", c->reason);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
