/*
 * test_json_path.c - json_path_text against PostgreSQL 15's
 * `payload::jsonb #>> path`.  Every TEXT and NULL answer in the table below
 * was checked against a live PostgreSQL 15, and tests/db/test_json_path_pg.sh
 * checks them again on every run of the database tests, with a few thousand
 * generated payloads besides.
 *
 * Besides the unit tests (no argument), this binary has three modes for
 * that database test and for measuring:
 *   --cases   prints the table below as input lines for --eval;
 *   --eval    reads lines from standard input, each a tab-separated list of
 *             hex fields (the payload, then the path's elements), and
 *             prints one answer a line: "N", "S", or "T " and the text in hex;
 *   --bench   times json_path_text on a typical callback payload.
 *
 * Each payload is copied into a heap buffer of exactly its length, so ASan
 * catches any read past the end (the module must not rely on a NUL).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules/json_path.h"

#define MAX_PATH 4

typedef struct path_case {
    const char *json;
    const char *path[MAX_PATH];
    size_t n_path;
    json_path_result want;
    const char *text; /* for JSON_PATH_TEXT */
} path_case;

#define N_ELEMS(...) (sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *))
#define T(j, t, ...) {j, {__VA_ARGS__}, N_ELEMS(__VA_ARGS__), JSON_PATH_TEXT, t}
#define N(j, ...) {j, {__VA_ARGS__}, N_ELEMS(__VA_ARGS__), JSON_PATH_NULL, NULL}
#define S(j, ...) {j, {__VA_ARGS__}, N_ELEMS(__VA_ARGS__), JSON_PATH_SERVER, NULL}

#define PAY "{\"payer\": {\"buyer_id\": \"2088756353724910\"}, \"amount\": 1638.41, " \
            "\"attempt\": 2, \"currency\": \"CNY\", \"trade_no\": " \
            "\"2026112822005411800000000166\", \"trade_status\": \"TRADE_SUCCESS\"}"

static const path_case cases[] = {
    /* strings, members found and missing */
    T(PAY, "CNY", "currency"),
    T(PAY, "2088756353724910", "payer", "buyer_id"),
    T(PAY, "1638.41", "amount"),
    T(PAY, "2", "attempt"),
    N(PAY, "refund_fee"),
    N(PAY, "payer", "seller_id"),
    N(PAY, "nobody", "buyer_id"),
    N("{}", "a"),
    T("{\"a\":\"\"}", "", "a"),
    T("{\"\":\"e\"}", "e", ""),
    N("{\"ab\":1}", "a"),
    N("{\"a\":1}", "ab"),
    N("{\"A\":1}", "a"),
    T("{\"0\":\"z\"}", "z", "0"),
    T("{\"a b\":\"}{,:[]\"}", "}{,:[]", "a b"),
    /* duplicate keys: the last wins, whatever came before */
    T("{\"a\":1,\"a\":2}", "2", "a"),
    T("{\"a\":1,\"b\":0,\"a\":\"two\",\"c\":0}", "two", "a"),
    N("{\"a\":\"x\",\"a\":null}", "a"),
    T("{\"a\":null,\"a\":\"x\"}", "x", "a"),
    N("{\"a\":{\"b\":1},\"a\":3}", "a", "b"),
    T("{\"a\":3,\"a\":{\"b\":\"y\"}}", "y", "a", "b"),
    T("{\"a\":{\"b\":1,\"b\":\"last\"}}", "last", "a", "b"),
    S("{\"a\":{\"b\":1},\"a\":[1]}", "a", "b"),
    /* escaped keys: at a level searched, no answer; elsewhere, no matter */
    S("{\"\\u0061\":1,\"a\":2}", "a"),
    S("{\"a\":2,\"\\u0062\":1}", "a"),
    S("{\"a\\\"\":1,\"a\":2}", "a"),
    S("{\"\\n\":1}", "x"),
    S("{\"\\u0061\":1,\"b\":{\"c\":\"d\"}}", "b", "c"),
    S("{\"b\":{\"c\":\"d\",\"\\u0063\":\"e\"}}", "b", "c"),
    T("{\"a\":{\"\\u0062\":1},\"c\":\"z\"}", "z", "c"),
    T("{\"b\":{\"c\":\"d\"},\"x\":{\"\\u0063\":1}}", "d", "b", "c"),
    T("{\"a\":{\"b\":{\"\\u0063\":1},\"c\":\"v\"}}", "v", "a", "c"),
    T("{\"a\":[{\"\\u0061\":1}],\"b\":true}", "true", "b"),
    /* nested paths */
    T("{\"a\":{\"b\":{\"c\":\"deep\"}}}", "deep", "a", "b", "c"),
    T("{\"a\":{\"b\":{\"c\":{\"d\":-7}}}}", "-7", "a", "b", "c", "d"),
    N("{\"a\":{\"b\":{\"c\":1}}}", "a", "b", "x"),
    N("{\"a\":{\"b\":{\"c\":1}}}", "a", "x", "c"),
    /* arrays: an element of the path against one is an index */
    S("{\"a\":[1,2]}", "a", "0"),
    S("{\"a\":[1,2]}", "a", "x"),
    S("[1]", "0"),
    S("[{\"a\":1}]", "a"),
    S(" [ ] ", "a"),
    /* objects and arrays at the end: jsonb prints its own layout */
    S("{\"a\":[1]}", "a"),
    S("{\"a\":[]}", "a"),
    S("{\"a\":{}}", "a"),
    S("{\"a\":{\"b\":1}}", "a"),
    /* null at the end, null and other scalars on the way */
    N("{\"a\":null}", "a"),
    N("{\"a\":null}", "a", "b"),
    N("{\"a\":1}", "a", "b"),
    N("{\"a\":\"s\"}", "a", "b"),
    N("{\"a\":\"s\"}", "a", "0"),
    N("{\"a\":true}", "a", "b"),
    N("{\"a\":{\"b\":false}}", "a", "b", "c"),
    N("{\"a\":\"\\u00e9\"}", "a", "b"),
    N("{\"a\":1e5}", "a", "b"),
    /* a scalar at the top */
    N("null", "a"),
    N("1", "a"),
    N("1.5e3", "a"),
    N("\"abc\"", "0"),
    N("\"a\\u00e9\"", "a"),
    N(" true ", "a"),
    /* numbers: as written, unless numeric_out would rewrite them */
    T("{\"n\":0}", "0", "n"),
    T("{\"n\":1.50}", "1.50", "n"),
    T("{\"n\":0.00}", "0.00", "n"),
    T("{\"n\":-0.5}", "-0.5", "n"),
    T("{\"n\":-0.000001}", "-0.000001", "n"),
    T("{\"n\":-1}", "-1", "n"),
    T("{\"n\":-10}", "-10", "n"),
    T("{\"n\":-100.00}", "-100.00", "n"),
    T("{\"n\":123456789012345678901234567890}", "123456789012345678901234567890", "n"),
    T("{\"n\":-123456789012345678901234567890.000000000000000000001}",
      "-123456789012345678901234567890.000000000000000000001", "n"),
    T("{\"n\":0.000000000000000000001}", "0.000000000000000000001", "n"),
    S("{\"n\":-0}", "n"),
    S("{\"n\":-0.0}", "n"),
    S("{\"n\":-0.00}", "n"),
    S("{\"n\":1.5e3}", "n"),
    S("{\"n\":1E5}", "n"),
    S("{\"n\":2.5e+10}", "n"),
    S("{\"n\":5e-1}", "n"),
    S("{\"n\":0e0}", "n"),
    S("{\"n\":-0e5}", "n"),
    /* booleans */
    T("{\"b\":true}", "true", "b"),
    T("{\"b\":false}", "false", "b"),
    /* strings with escapes: jsonb decodes them */
    S("{\"s\":\"\\u00e9\"}", "s"),
    S("{\"s\":\"a\\\"b\"}", "s"),
    S("{\"s\":\"\\\\\"}", "s"),
    S("{\"s\":\"\\/\"}", "s"),
    S("{\"s\":\"\\ud83d\\ude00\"}", "s"),
    T("{\"s\":\"\\u00e9\",\"t\":\"plain\"}", "plain", "t"),
    /* raw Unicode: bytes as they stand, keys compared byte for byte */
    T("{\"s\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}",
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "s"),
    T("{\"cl\xc3\xa9\":\"v\"}", "v", "cl\xc3\xa9"),
    N("{\"cafe\xcc\x81\":1}", "caf\xc3\xa9"),
    T("{\"\xe9\x87\x91\xe9\xa2\x9d\":{\"\xe5\x85\x83\":\"\xe5\x8d\x81\"}}", "\xe5\x8d\x81",
      "\xe9\x87\x91\xe9\xa2\x9d", "\xe5\x85\x83"),
    /* white space around values, colons and the whole text */
    T("{ \"a\" : \"x\" }", "x", "a"),
    T("{\n\t\"a\"\r\n:\n 12 \n}\n", "12", "a"),
    T("  \r\n{\"a\":1}  \t", "1", "a"),
    T(" { \"a\" : { \"b\" : true } , \"c\" : [ ] } ", "true", "a", "b"),
    N(" { \"a\" : { \"b\" : null } } ", "a", "b"),
};

/* Copies [text, text+len) into a buffer of exactly len bytes. */
static char *exact_copy(const char *text, size_t len)
{
    char *buf = malloc(len > 0 ? len : 1);

    assert_non_null(buf);
    if (len > 0)
        memcpy(buf, text, len);
    return buf;
}

static const char *result_name(json_path_result r)
{
    return r == JSON_PATH_TEXT ? "TEXT" : r == JSON_PATH_NULL ? "NULL" : "SERVER";
}

/* json_path_text on an exact copy; checks that a text is a span of it. */
static json_path_result eval_exact(const char *json, size_t len, const char *const *path,
                                   size_t n_path, char *text, size_t *text_len)
{
    char *buf = exact_copy(json, len);
    const char *out = (const char *)&out; /* anything but NULL */
    size_t out_len = 12345;
    json_path_result r = json_path_text(buf, len, path, n_path, &out, &out_len);

    if (r == JSON_PATH_TEXT) {
        assert_true(out >= buf && out_len <= len && out + out_len <= buf + len);
        memcpy(text, out, out_len);
    } else {
        assert_null(out);
        assert_int_equal(out_len, 0);
        out_len = 0;
    }
    text[out_len] = '\0';
    *text_len = out_len;
    free(buf);
    return r;
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const path_case *c = &cases[i];
        size_t len = strlen(c->json);
        char *text = malloc(len + 1);
        size_t text_len;
        json_path_result r;

        assert_non_null(text);
        r = eval_exact(c->json, len, c->path, c->n_path, text, &text_len);
        if (r != c->want)
            fail_msg("case %zu (%s, %s...): %s, want %s", i, c->json, c->path[0],
                     result_name(r), result_name(c->want));
        if (r == JSON_PATH_TEXT &&
            (text_len != strlen(c->text) || memcmp(text, c->text, text_len) != 0))
            fail_msg("case %zu (%s): text [%s], want [%s]", i, c->json, text, c->text);
        free(text);
    }
}

/* An empty path: #>> prints the whole value, jsonb's rendering. */
static void test_empty_path(void **state)
{
    static const char *const none[1] = {"a"};
    char text[16];
    size_t text_len;

    (void)state;
    assert_int_equal(eval_exact("{\"a\":1}", 7, none, 0, text, &text_len), JSON_PATH_SERVER);
    assert_int_equal(eval_exact("\"a\"", 3, none, 0, text, &text_len), JSON_PATH_SERVER);
    assert_int_equal(eval_exact("null", 4, none, 0, text, &text_len), JSON_PATH_SERVER);
}

/* Not the valid JSON promised: the server is left to say so. */
static void test_not_valid(void **state)
{
    static const char *const bad[] = {"", "   ", "{", "{\"a\":1", "{\"a\":1,}", "{\"a\" 1}",
                                      "{\"a\":\"\xff\"}", "{\"a\":01}", "{\"b\":1}x"};
    static const char *const path[1] = {"a"};
    char text[32];
    size_t text_len;

    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (eval_exact(bad[i], strlen(bad[i]), path, 1, text, &text_len) != JSON_PATH_SERVER)
            fail_msg("bad text %zu (%s) not left to the server", i, bad[i]);
}

/* The length of the text counts, not a NUL: a prefix is another text. */
static void test_length_bounds(void **state)
{
    static const char *const path[1] = {"a"};
    const char *json = "{\"a\":\"x\"}{\"a\":\"y\"}";
    char text[8];
    size_t text_len;

    (void)state;
    assert_int_equal(eval_exact(json, 9, path, 1, text, &text_len), JSON_PATH_TEXT);
    assert_string_equal(text, "x");
    assert_int_equal(eval_exact(json, 18, path, 1, text, &text_len), JSON_PATH_SERVER);
}

/* ---- modes for the database test and for measuring ------------------------ */

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes the hex field s[0..n) in place (NUL-terminated); -1 when not hex. */
static long unhex(char *s, size_t n)
{
    if (n % 2 != 0)
        return -1;
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_digit((unsigned char)s[i]), lo = hex_digit((unsigned char)s[i + 1]);

        if (hi < 0 || lo < 0)
            return -1;
        s[i / 2] = (char)(hi * 16 + lo);
    }
    s[n / 2] = '\0';
    return (long)(n / 2);
}

static void print_hex(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", (unsigned char)p[i]);
}

/* One --eval line (its newline taken off): prints the answer; false when
 * the line is not hex fields. */
static bool eval_line(char *line)
{
    const char *path[64];
    size_t n_path = 0;
    char *json = line, *tab = strchr(line, '\t');
    long json_len;
    const char *out;
    size_t out_len;

    while (tab != NULL) {
        char *elem = tab + 1;

        *tab = '\0';
        tab = strchr(elem, '\t');
        if (n_path == sizeof path / sizeof path[0] ||
            unhex(elem, tab ? (size_t)(tab - elem) : strlen(elem)) < 0)
            return false;
        path[n_path++] = elem;
    }
    json_len = unhex(json, strlen(json));
    if (json_len < 0)
        return false;
    switch (json_path_text(json, (size_t)json_len, path, n_path, &out, &out_len)) {
    case JSON_PATH_NULL:
        puts("N");
        break;
    case JSON_PATH_SERVER:
        puts("S");
        break;
    case JSON_PATH_TEXT:
        fputs("T ", stdout);
        print_hex(out, out_len);
        putchar('\n');
        break;
    }
    return true;
}

static int eval_stdin(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long no = 0;

    while ((n = getline(&line, &cap, stdin)) > 0) {
        no++;
        if (line[n - 1] == '\n')
            line[n - 1] = '\0';
        if (!eval_line(line)) {
            fprintf(stderr, "test_json_path --eval: line %lu is not hex fields\n", no);
            free(line);
            return 2;
        }
    }
    free(line);
    return fflush(stdout) == 0 && !ferror(stdin) ? 0 : 2;
}

static int print_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        print_hex(cases[i].json, strlen(cases[i].json));
        for (size_t k = 0; k < cases[i].n_path; k++) {
            putchar('\t');
            print_hex(cases[i].path[k], strlen(cases[i].path[k]));
        }
        putchar('\n');
    }
    return fflush(stdout) == 0 ? 0 : 2;
}

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per call of json_path_text on the typical payload, best of five. */
static int bench(void)
{
    static const char *const paths[][2] = {{"amount"}, {"currency"}, {"payer", "buyer_id"}};
    static const size_t n_paths[] = {1, 1, 2};
    const size_t calls = 1000000;
    volatile size_t sink = 0;

    for (size_t p = 0; p < 3; p++) {
        double best = 0;

        for (int round = 0; round < 5; round++) {
            double t0 = now_ns();

            for (size_t i = 0; i < calls; i++) {
                const char *out;
                size_t out_len;

                json_path_text(PAY, sizeof PAY - 1, paths[p], n_paths[p], &out, &out_len);
                sink += out_len;
            }
            double ns = (now_ns() - t0) / (double)calls;
            if (round == 0 || ns < best)
                best = ns;
        }
        printf("%-16s %6.1f ns/call\n", paths[p][n_paths[p] - 1], best);
    }
    return sink > 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_empty_path),
        cmocka_unit_test(test_not_valid),
        cmocka_unit_test(test_length_bounds),
    };

    if (argc == 2 && strcmp(argv[1], "--eval") == 0)
        return eval_stdin();
    if (argc == 2 && strcmp(argv[1], "--cases") == 0)
        return print_cases();
    if (argc == 2 && strcmp(argv[1], "--bench") == 0)
        return bench();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
