/*
 * test_final_status.c - the final statuses written out (core/final_status.h):
 * the smallint[] literal every statement gets as a parameter, the text
 * people read, and membership; none, one and several statuses, negative
 * and the int16 extremes, and appending after existing text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/final_status.h"

static void test_forms(void **state)
{
    (void)state;
    static const struct {
        int16_t st[4];
        size_t n;
        const char *array, *text, *option;
    } cases[] = {
        {{0}, 0, "{}", "", ""},
        {{2}, 1, "{2}", "2", "2"},
        {{2, 3}, 2, "{2,3}", "2, 3", "2,3"},
        {{-1, 0, 32767, -32768}, 4, "{-1,0,32767,-32768}", "-1, 0, 32767, -32768",
         "-1,0,32767,-32768"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf a = BUF_INIT, t = BUF_INIT, o = BUF_INIT;
        assert_true(final_status_array(cases[i].st, cases[i].n, &a));
        assert_true(final_status_text(cases[i].st, cases[i].n, &t));
        assert_true(final_status_option(cases[i].st, cases[i].n, &o));
        assert_string_equal(buf_cstr(&a), cases[i].array);
        assert_string_equal(buf_cstr(&t), cases[i].text);
        assert_string_equal(buf_cstr(&o), cases[i].option);
        buf_free(&a);
        buf_free(&t);
        buf_free(&o);
    }
}

static void test_appends(void **state)
{
    (void)state;
    const int16_t st[] = {2, 3};
    buf b = BUF_INIT;
    assert_true(buf_append_str(&b, "final: "));
    assert_true(final_status_array(st, 2, &b));
    assert_string_equal(buf_cstr(&b), "final: {2,3}");
    buf_free(&b);
}

static void test_has(void **state)
{
    (void)state;
    const int16_t st[] = {2, 3};
    assert_true(final_status_has(st, 2, 2));
    assert_true(final_status_has(st, 2, 3));
    assert_false(final_status_has(st, 2, 0));
    assert_false(final_status_has(st, 1, 3)); /* only the first n count */
    assert_false(final_status_has(st, 0, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_appends),
        cmocka_unit_test(test_has),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
