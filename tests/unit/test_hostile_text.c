/*
 * test_hostile_text.c - the pure parts of SPEC.md "Hostile input", table
 * driven: --table's [schema.]name parser (target_parse_arg), the terminal
 * escaping of control and bidirectional characters (text_escape_term), the
 * page's (html_escape), file names as UTF-8 or escaped, base64, and the
 * duplicate check of a header (name_set_first_repeat).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "db/target.h"
#include "output/html.h"
#include "output/text_escape.h"
#include "util/name_set.h"

static void test_table_names(void **state)
{
    (void)state;
    static const struct {
        const char *arg, *schema, *name; /* name NULL: refused */
    } cases[] = {
        {"payment_callback", NULL, "payment_callback"},
        {"s.t", "s", "t"},
        {"s.\"T\"", "s", "T"},
        {"\"S\".\"T\"", "S", "T"},
        {"\"a.b\"", NULL, "a.b"},
        {"\"we\"\"ird\"", NULL, "we\"ird"},
        {"Mixed", NULL, "Mixed"},          /* bare: as typed */
        {"\"rt_t2\"(id int); DROP TABLE rt_victim; COMMIT; --", NULL, NULL},
        {"\"x\"; DROP TABLE v; --", NULL, NULL},
        {"\"unclosed", NULL, NULL},
        {"a\"b", NULL, NULL},
        {"\"\"", NULL, NULL},
        {"", NULL, NULL},
        {"s.", NULL, NULL},
        {".t", NULL, NULL},
        {"a.b.c", NULL, NULL},
        {"\"a\".", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *schema = (char *)1, *name = (char *)1;
        buf err = BUF_INIT;
        bool ok = target_parse_arg(cases[i].arg, &schema, &name, &err);
        if (ok != (cases[i].name != NULL))
            fail_msg("%s: %s", cases[i].arg, ok ? "accepted" : buf_cstr(&err));
        if (ok) {
            assert_string_equal(name, cases[i].name);
            if (cases[i].schema)
                assert_string_equal(schema, cases[i].schema);
            else
                assert_null(schema);
        } else {
            assert_null(schema);
            assert_null(name);
            assert_true(err.len > 0);
        }
        free(schema);
        free(name);
        buf_free(&err);
    }
}

static void expect_term(const char *in, size_t n, const char *want)
{
    buf b = BUF_INIT;
    assert_true(text_escape_term(&b, in, n));
    assert_string_equal(buf_cstr(&b), want);
    buf_free(&b);
}

static void test_terminal_escaping(void **state)
{
    (void)state;
    expect_term("plain ÄÖ 汇总", strlen("plain ÄÖ 汇总"), "plain ÄÖ 汇总");
    expect_term("x\033[2J\033]0;TITLE\007", 15, "x\\u001B[2J\\u001B]0;TITLE\\u0007");
    expect_term("a\r\nidemload: forged", 19, "a\\u000D\\u000Aidemload: forged");
    expect_term("\x7f\t", 2, "\\u007F\\u0009");
    expect_term("\xc2\x9b" "31m", 5, "\\u009B31m");           /* C1 CSI */
    expect_term("\xe2\x80\xae" "gnp.exe", 10, "\\u202Egnp.exe"); /* U+202E */
    expect_term("\xe2\x81\xa6" "x\xe2\x81\xa9", 7, "\\u2066x\\u2069");
    expect_term("\xe2\x80\x8f" "a\xe2\x80\x8e", 7, "\\u200Fa\\u200E"); /* RLM, LRM */
    expect_term("\xe2\x80\x8d\xe2\x80\x90", 6, "\xe2\x80\x8d\xe2\x80\x90"); /* ZWJ, hyphen */
    expect_term("a\xe2\x80\xa8" "b\xe2\x80\xa9", 8, "a\\u2028b\\u2029"); /* line separators */
    expect_term("\xe2\x80\xa7\xe2\x80\xaf", 6, "\xe2\x80\xa7\xe2\x80\xaf"); /* beside them: text */
    expect_term("bill-\xb6\xd4.csv", 11, "bill-\\xB6\\xD4.csv");
    expect_term("a\0b", 3, "a\\u0000b");
}

static void test_page_escaping(void **state)
{
    (void)state;
    buf b = BUF_INIT;
    const char *in = "<meta http-equiv=refresh>\xe2\x80\xae" "exe'\"&\033\tok\n";
    assert_true(html_escape(&b, in, strlen(in)));
    /* a tab and a line break too: a name must not read as two words (a
     * rejected row's raw text keeps its own, in the page's <pre>) */
    assert_string_equal(buf_cstr(&b), "&lt;meta http-equiv=refresh&gt;\\u202Eexe&#39;&quot;&amp;"
                                      "\\u001B\\u0009ok\\u000A");
    buf_free(&b);
}

static void test_names_and_base64(void **state)
{
    (void)state;
    buf b = BUF_INIT;
    assert_true(text_utf8_or_escaped(&b, "ok-汇总.csv"));
    assert_string_equal(buf_cstr(&b), "ok-汇总.csv");
    buf_clear(&b);
    assert_false(text_utf8_or_escaped(&b, "bill-\xb6\xd4.csv"));
    assert_string_equal(buf_cstr(&b), "bill-\\xB6\\xD4.csv");
    buf_clear(&b);
    /* RFC 4648's test vectors */
    static const char *const v[][2] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
                                       {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                       {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        buf_clear(&b);
        assert_true(text_base64(&b, v[i][0], strlen(v[i][0])));
        assert_string_equal(buf_cstr(&b), v[i][1]);
    }
    buf_free(&b);
}

static void test_header_repeats(void **state)
{
    (void)state;
    const char *base = "abcab";
    size_t off[] = {0, 1, 2, 3, 4, 0}, len[] = {1, 1, 1, 1, 1, 2};
    size_t at;
    bool oom;
    assert_false(name_set_first_repeat(base, off, len, 3, &at, &oom));
    assert_false(oom);
    assert_true(name_set_first_repeat(base, off, len, 4, &at, &oom));
    assert_int_equal(at, 3);
    /* "ab" (off 0, len 2) differs from "a" */
    size_t off2[] = {0, 0}, len2[] = {1, 2};
    assert_false(name_set_first_repeat(base, off2, len2, 2, &at, &oom));
    /* many names, the repeat last */
    enum { N = 100000 };
    char *names = malloc(N * 8);
    size_t *o = malloc(N * sizeof *o), *l = malloc(N * sizeof *l);
    assert_true(names && o && l);
    for (size_t i = 0; i < N; i++) {
        o[i] = i * 8;
        l[i] = (size_t)snprintf(names + i * 8, 8, "c%zu", i == N - 1 ? (size_t)12345 : i);
    }
    assert_true(name_set_first_repeat(names, o, l, N, &at, &oom));
    assert_int_equal(at, N - 1);
    assert_false(name_set_first_repeat(names, o, l, N - 1, &at, &oom));
    free(names);
    free(o);
    free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_names),
        cmocka_unit_test(test_terminal_escaping),
        cmocka_unit_test(test_page_escaping),
        cmocka_unit_test(test_names_and_base64),
        cmocka_unit_test(test_header_repeats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
