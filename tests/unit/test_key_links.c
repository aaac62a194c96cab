/*
 * test_key_links.c - the payments' keys a refund takes (key_links.h): the
 * key put under an id is the one got back, the first key of an id stays,
 * ids that differ only in length or in a last byte are apart, an unknown
 * id gives NULL, and a hundred thousand entries (many growths of the
 * table) all come back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "input/key_links.h"

static void expect_key(const key_links *kl, const char *id, const char *want)
{
    size_t n = 0;
    const char *k = key_links_get(kl, id, strlen(id), &n);
    if (!want) {
        assert_null(k);
        return;
    }
    assert_non_null(k);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(k, want, n);
}

static void test_put_get(void **state)
{
    (void)state;
    key_links *kl = key_links_new();
    assert_non_null(kl);
    expect_key(kl, "ch_123", NULL);
    assert_true(key_links_put(kl, "ch_123", 6, "24315.1", 7));
    assert_true(key_links_put(kl, "ch_12", 5, "other", 5));
    assert_true(key_links_put(kl, "ch_123", 6, "later", 5));
    assert_true(key_links_put(kl, "ch_124", 6, "", 0));
    expect_key(kl, "ch_123", "24315.1");
    expect_key(kl, "ch_12", "other");
    expect_key(kl, "ch_124", "");
    expect_key(kl, "ch_1234", NULL);
    /* An id with a NUL byte inside is its bytes, not a C string. */
    assert_true(key_links_put(kl, "a\0b", 3, "nul", 3));
    size_t n = 0;
    const char *k = key_links_get(kl, "a\0b", 3, &n);
    assert_non_null(k);
    assert_int_equal(n, 3);
    assert_null(key_links_get(kl, "a", 1, &n));
    key_links_free(&kl);
    assert_null(kl);
    key_links_free(&kl);
}

static void test_many(void **state)
{
    (void)state;
    key_links *kl = key_links_new();
    assert_non_null(kl);
    char id[32], key[32];
    for (int i = 0; i < 100000; i++) {
        int a = snprintf(id, sizeof id, "ch_%d", i);
        int b = snprintf(key, sizeof key, "order-%d", i * 7);
        assert_true(key_links_put(kl, id, (size_t)a, key, (size_t)b));
    }
    for (int i = 0; i < 100000; i++) {
        snprintf(id, sizeof id, "ch_%d", i);
        snprintf(key, sizeof key, "order-%d", i * 7);
        expect_key(kl, id, key);
    }
    expect_key(kl, "ch_100000", NULL);
    key_links_free(&kl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get),
        cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
