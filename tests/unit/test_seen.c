/*
 * test_seen.c - the filter of keys an import has met (src/load/seen.h):
 * a key recorded once always reads as seen after (a miss there would
 * append a key the run already loaded, which the unique index would
 * catch, at the cost of a rolled-back COPY); new keys seldom read as seen
 * (each one that does costs a merge instead of an append); past
 * SEEN_MAX_KEYS it starts over.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>

#include "chunk/chunk.h"
#include "load/seen.h"

/* Distinct keys' hashes as the loader computes them (row_key_hash64). */
static uint64_t key_hash(uint64_t i)
{
    char no[32];
    int n = snprintf(no, sizeof no, "T%020llu", (unsigned long long)i);
    row r = {.tenant_id = (int64_t)(i % 20), .channel = "wechat", .channel_len = 6,
             .out_trade_no = no, .out_trade_no_len = (size_t)n, .callback_type = "pay",
             .callback_type_len = 3};
    return row_key_hash64(&r);
}

static void test_no_false_negative(void **state)
{
    (void)state;
    seen_filter *f = seen_new();
    assert_non_null(f);
    uint64_t fresh_seen = 0;
    for (uint64_t i = 0; i < 1000000; i++)
        fresh_seen += seen_add(f, key_hash(i));
    /* one in 10,000 is the design at 1M keys; allow ten times that */
    assert_true(fresh_seen < 1000);
    assert_true(seen_count(f) >= 1000000 - fresh_seen);
    for (uint64_t i = 0; i < 1000000; i += 7)
        if (!seen_add(f, key_hash(i)))
            fail_msg("key %llu recorded, then read as new", (unsigned long long)i);
    /* Other keys, never recorded: mostly new. */
    uint64_t other_seen = 0;
    for (uint64_t i = 2000000; i < 2100000; i++)
        other_seen += seen_add(f, key_hash(i));
    assert_true(other_seen < 100);
    seen_free(&f);
    assert_null(f);
}

static void test_starts_over(void **state)
{
    (void)state;
    seen_filter *f = seen_new();
    assert_non_null(f);
    /* Fill to the limit with hashes (no rows needed), then one more key:
     * the filter starts over, so a key of the first batch reads as new. */
    for (uint64_t i = 0; seen_count(f) < SEEN_MAX_KEYS; i++)
        seen_add(f, i * 0x9e3779b97f4a7c15ULL);
    uint64_t at_limit = seen_count(f);
    assert_int_equal(at_limit, SEEN_MAX_KEYS);
    seen_add(f, 0xdeadbeefULL);
    assert_int_equal(seen_count(f), 1);
    assert_false(seen_add(f, 1 * 0x9e3779b97f4a7c15ULL));
    seen_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_false_negative),
        cmocka_unit_test(test_starts_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
