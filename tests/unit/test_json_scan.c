/*
 * test_json_scan.c - json_validate and json_scan_object against the rules of
 * PostgreSQL 15's jsonb input.  Every verdict in the tables below was checked
 * against a live PostgreSQL 15 (`SELECT $1::jsonb`), except the nesting limit,
 * where we refuse on purpose what jsonb would still take.
 *
 * Each text is copied into a heap buffer of exactly its length, so ASan
 * catches any read past the end (the scanner must not rely on a NUL).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/json_scan.h"

/* Copies [text, text+len) into a buffer of exactly len bytes. */
static char *exact_copy(const char *text, size_t len)
{
    char *buf = malloc(len > 0 ? len : 1);

    assert_non_null(buf);
    if (len > 0)
        memcpy(buf, text, len);
    return buf;
}

static bool validate_exact(const char *text, size_t len, json_kind *kind, json_error *err)
{
    char *buf = exact_copy(text, len);
    bool ok = json_validate(buf, len, kind, err);

    free(buf);
    return ok;
}

/* ---- json_validate: accepted texts -------------------------------------- */

typedef struct valid_case {
    const char *text;
    size_t len; /* 0: strlen(text) */
    json_kind kind;
} valid_case;

#define V(t, k) {t, sizeof(t) - 1, k}

static const valid_case valid_cases[] = {
    V("0", JSON_KIND_NUMBER),
    V("-0", JSON_KIND_NUMBER),
    V("-0.0", JSON_KIND_NUMBER),
    V("1", JSON_KIND_NUMBER),
    V("-1", JSON_KIND_NUMBER),
    V("168.90", JSON_KIND_NUMBER),
    V("0.5e-3", JSON_KIND_NUMBER),
    V("123456789012345678901234567890", JSON_KIND_NUMBER),
    V("-123456789012345678901234567890.000000000000000000001", JSON_KIND_NUMBER),
    V("1e400", JSON_KIND_NUMBER),
    V("1E+400", JSON_KIND_NUMBER),
    V("1e-400", JSON_KIND_NUMBER),
    V("1e0000000000000000000000005", JSON_KIND_NUMBER),
    /* numeric's range edges, as PostgreSQL 15 draws them */
    V("1e131071", JSON_KIND_NUMBER),
    V("0.01e131073", JSON_KIND_NUMBER),
    V("1e-16383", JSON_KIND_NUMBER),
    V("0e-16383", JSON_KIND_NUMBER),
    V("1.5e-16382", JSON_KIND_NUMBER),
    V("0e1073741822", JSON_KIND_NUMBER),
    V("0e99999", JSON_KIND_NUMBER),
    V("true", JSON_KIND_BOOL),
    V("false", JSON_KIND_BOOL),
    V("null", JSON_KIND_NULL),
    V("\"\"", JSON_KIND_STRING),
    V("\"abc\"", JSON_KIND_STRING),
    V("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", JSON_KIND_STRING),
    V("\"\\u0041\\u00e9\\u20AC\\uFFFF\"", JSON_KIND_STRING),
    V("\"\\ud83d\\ude00\"", JSON_KIND_STRING),
    V("\"\\uDBFF\\uDFFF\"", JSON_KIND_STRING),
    V("\"\x7f\"", JSON_KIND_STRING),
    V("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", JSON_KIND_STRING),
    V("\"\xf4\x8f\xbf\xbf\"", JSON_KIND_STRING),   /* U+10FFFF */
    V("\"\xef\xbf\xbf\"", JSON_KIND_STRING),       /* U+FFFF */
    V("\"\xed\x9f\xbf\"", JSON_KIND_STRING),       /* U+D7FF */
    V("\"\xee\x80\x80\"", JSON_KIND_STRING),       /* U+E000 */
    V("\"a long string that crosses several eight-byte words\"", JSON_KIND_STRING),
    V("[]", JSON_KIND_ARRAY),
    V("{}", JSON_KIND_OBJECT),
    V("[ ]", JSON_KIND_ARRAY),
    V("{ }", JSON_KIND_OBJECT),
    V("[1,[2,{\"a\":[]}],{}]", JSON_KIND_ARRAY),
    V("{\"a\":{\"b\":{\"c\":[null,true,false]}}}", JSON_KIND_OBJECT),
    V(" \t\r\n[ 1 , 2 ]\n", JSON_KIND_ARRAY),
    V("{\"a\":1,\"a\":2}", JSON_KIND_OBJECT),       /* duplicate keys: last wins */
    V("{\"\":0}", JSON_KIND_OBJECT),
    V("{\"k\\u00e9y\" : \"v\" }", JSON_KIND_OBJECT),
    V("[-0,0.0,1e5,1E-5,2.5e+10]", JSON_KIND_ARRAY),
    V("{\"id\":\"p-1\",\"amount\":168.90,\"currency\":\"EUR\",\"ok\":true}", JSON_KIND_OBJECT),
};

static void test_valid_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof valid_cases / sizeof valid_cases[0]; i++) {
        const valid_case *c = &valid_cases[i];
        json_kind kind = (json_kind)-1;
        json_error err = {NULL, 0};

        if (!validate_exact(c->text, c->len, &kind, &err))
            fail_msg("case %zu (%s) refused: %s at %zu", i, c->text, err.reason, err.offset);
        assert_int_equal(kind, c->kind);
        /* kind and err may be NULL */
        assert_true(validate_exact(c->text, c->len, NULL, NULL));
    }
}

/* ---- json_validate: refused texts --------------------------------------- */

typedef struct invalid_case {
    const char *text;
    size_t len;
    const char *reason; /* exact reason, or NULL for "any" */
    size_t offset;      /* checked when reason is set */
} invalid_case;

#define X(t, r, o) {t, sizeof(t) - 1, r, o}
#define XA(t) {t, sizeof(t) - 1, NULL, 0}

static const invalid_case invalid_cases[] = {
    X("", "empty input", 0),
    X(" \n\t\r", "empty input", 4),
    /* numbers */
    X("01", "leading zero in number", 0),
    X("-01", "leading zero in number", 0),
    X("[00]", "leading zero in number", 1),
    X("1.", "unexpected end of input", 2),
    X("1.e5", "digit expected after '.'", 2),
    X(".5", "expected a value", 0),
    X("+1", "expected a value", 0),
    X("-", "unexpected end of input", 1),
    X("-a", "digit expected in number", 1),
    X("1e", "unexpected end of input", 2),
    X("1e+", "unexpected end of input", 3),
    X("1ex", "digit expected in exponent", 2),
    X("0x10", "trailing characters after the value", 1),
    X("1.5.3", "trailing characters after the value", 3),
    XA("NaN"),
    XA("Infinity"),
    XA("-Infinity"),
    X("[1true]", "expected ',' or ']'", 2),
    /* numeric overflow in PostgreSQL ("value overflows numeric format") */
    X("1e131072", "number out of numeric range", 0),
    X("10e131071", "number out of numeric range", 0),
    X("0.01e131074", "number out of numeric range", 0),
    X("1e1000000", "number out of numeric range", 0),
    X("1e-16384", "number out of numeric range", 0),
    X("0e-16384", "number out of numeric range", 0),
    X("0.0e-16383", "number out of numeric range", 0),
    X("1.5e-16383", "number out of numeric range", 0),
    X("100e-16385", "number out of numeric range", 0),
    X("1e-1000000", "number out of numeric range", 0),
    X("0e1073741823", "number out of numeric range", 0),
    X("[1,0e99999999999999999999]", "number out of numeric range", 3),
    /* literals */
    X("tru", "invalid literal", 0),
    X("True", "expected a value", 0),
    X("nul", "invalid literal", 0),
    X("nulll", "trailing characters after the value", 4),
    X("falsey", "trailing characters after the value", 5),
    /* structure */
    X("[1,]", "expected a value", 3),
    X("[1 2]", "expected ',' or ']'", 3),
    X("[,1]", "expected a value", 1),
    X("{\"a\":1,}", "expected a string key", 7),
    X("{,}", "expected a string key", 1),
    X("{\"a\"}", "expected ':'", 4),
    X("{\"a\" 1}", "expected ':'", 5),
    X("{\"a\":}", "expected a value", 5),
    X("{a:1}", "expected a string key", 1),
    X("{1:1}", "expected a string key", 1),
    X("{\"a\":1 \"b\":2}", "expected ',' or '}'", 7),
    X("[1}", "expected ',' or ']'", 2),
    X("{\"a\":1]", "expected ',' or '}'", 6),
    X("[", "unexpected end of input", 1),
    X("[1", "unexpected end of input", 2),
    X("{\"a\":[1,2]", "unexpected end of input", 10),
    X("'a'", "expected a value", 0),
    X("1 2", "trailing characters after the value", 2),
    X("{} x", "trailing characters after the value", 3),
    X("[]]", "trailing characters after the value", 2),
    X("\f1", "expected a value", 0),                  /* form feed is not JSON space */
    X("\v1", "expected a value", 0),
    X("\xc2\xa0" "1", "expected a value", 0),         /* no-break space */
    /* strings */
    X("\"abc", "unterminated string", 0),
    X("\"a\\\"", "unterminated string", 0),
    X("\"a\\", "unterminated string", 2),
    X("\"\\x\"", "invalid escape in string", 1),
    X("\"\\U0041\"", "invalid escape in string", 1),
    X("\"\\'\"", "invalid escape in string", 1),
    X("\"\\u12\"", "invalid \\u escape", 1),
    X("\"\\u12G4\"", "invalid \\u escape", 1),
    X("\"\\u0000\"", "\\u0000 is not allowed", 1),
    X("{\"a\\u0000\":1}", "\\u0000 is not allowed", 3),
    X("\"\\ud800\"", "unpaired high surrogate escape", 1),
    X("\"\\udc00\"", "unpaired low surrogate escape", 1),
    X("\"\\udc00\\ud800\"", "unpaired low surrogate escape", 1),
    X("\"\\ud800\\u0041\"", "unpaired high surrogate escape", 1),
    X("\"\\ud800\\ud800\"", "unpaired high surrogate escape", 1),
    X("\"\\ud800x\"", "unpaired high surrogate escape", 1),
    X("\"\\ud800\\n\"", "unpaired high surrogate escape", 1),
    X("\"\\ud83d\\ude0\"", "unpaired high surrogate escape", 1),
    X("\"a\tb\"", "control character in string", 2),
    X("\"a\nb\"", "control character in string", 2),
    X("\"\x1f\"", "control character in string", 1),
    /* UTF-8 */
    X("\"\x80\"", "invalid UTF-8", 1),
    X("\"\xbf\"", "invalid UTF-8", 1),
    X("\"\xc0\xaf\"", "invalid UTF-8", 1),             /* overlong '/' */
    X("\"\xc1\xbf\"", "invalid UTF-8", 1),
    X("\"\xe0\x80\xaf\"", "invalid UTF-8", 1),         /* overlong, 3 bytes */
    X("\"\xe0\x9f\xbf\"", "invalid UTF-8", 1),
    X("\"\xf0\x80\x80\xaf\"", "invalid UTF-8", 1),     /* overlong, 4 bytes */
    X("\"\xf0\x8f\xbf\xbf\"", "invalid UTF-8", 1),
    X("\"\xed\xa0\x80\"", "invalid UTF-8", 1),         /* U+D800 encoded */
    X("\"\xed\xbf\xbf\"", "invalid UTF-8", 1),         /* U+DFFF encoded */
    X("\"\xf4\x90\x80\x80\"", "invalid UTF-8", 1),     /* U+110000 */
    X("\"\xf5\x80\x80\x80\"", "invalid UTF-8", 1),
    X("\"\xff\"", "invalid UTF-8", 1),
    X("\"\xfe\"", "invalid UTF-8", 1),
    X("\"\xe2\x82\"", "invalid UTF-8", 1),             /* truncated by the quote */
    X("\"\xe2\x82", "invalid UTF-8", 1),               /* truncated by the end */
    X("\"\xf0\x9f\x98", "invalid UTF-8", 1),
    X("\"\xc3", "invalid UTF-8", 1),
    X("\"\xc3\x28\"", "invalid UTF-8", 1),
    X("\xc3\xa9", "expected a value", 0),              /* non-ASCII outside strings */
    X("[\xef\xbb\xbf]", "expected a value", 1),
    X("\xef\xbb\xbf{}", "expected a value", 0),        /* a BOM is not white space */
    /* NUL bytes */
    X("\0", "NUL byte", 0),
    X("\"a\0b\"", "NUL byte", 2),
    X("1\0", "NUL byte", 1),
    X("[1,\0]", "NUL byte", 3),
    X("{\"a\"\0:1}", "NUL byte", 4),
    X("{} \0", "NUL byte", 3),
    X("tr\0e", "invalid literal", 0),
};

static void test_invalid_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof invalid_cases / sizeof invalid_cases[0]; i++) {
        const invalid_case *c = &invalid_cases[i];
        json_kind kind = (json_kind)-1;
        json_error err = {NULL, (size_t)-1};

        if (validate_exact(c->text, c->len, &kind, &err))
            fail_msg("case %zu (%s) accepted", i, c->text);
        assert_int_equal(kind, (json_kind)-1); /* untouched on failure */
        assert_non_null(err.reason);
        assert_true(err.offset <= c->len);
        if (c->reason != NULL) {
            if (strcmp(err.reason, c->reason) != 0 || err.offset != c->offset)
                fail_msg("case %zu (%s): got \"%s\" at %zu, want \"%s\" at %zu", i, c->text,
                         err.reason, err.offset, c->reason, c->offset);
        }
        assert_false(validate_exact(c->text, c->len, NULL, NULL));
    }
}

/*
 * Every special byte at every position of strings around the 8-byte fast
 * path: the word-at-a-time skip must stop exactly where the byte loop would.
 */
static void test_string_fast_path_boundaries(void **state)
{
    static const struct {
        const char *bytes;
        size_t n;
        bool ok;
    } inserts[] = {
        {"\t", 1, false}, {"\x01", 1, false}, {"\0", 1, false}, {"\x1f", 1, false},
        {" ", 1, true}, {"\x7f", 1, true}, {"\\n", 2, true}, {"\\u0000", 6, false},
        {"\\q", 2, false}, {"\xc3\xa9", 2, true}, {"\xc3", 1, false}, {"\x80", 1, false},
        {"\xed\xa0\x80", 3, false}, {"\xf0\x9f\x98\x80", 4, true}, {"\"", 1, false},
    };
    char buf[64];

    (void)state;
    for (size_t k = 0; k < sizeof inserts / sizeof inserts[0]; k++) {
        for (size_t total = 0; total <= 20; total++) {
            for (size_t at = 0; at <= total; at++) {
                size_t len = 0;

                buf[len++] = '"';
                for (size_t i = 0; i < at; i++)
                    buf[len++] = 'a';
                memcpy(buf + len, inserts[k].bytes, inserts[k].n);
                len += inserts[k].n;
                for (size_t i = at; i < total; i++)
                    buf[len++] = 'b';
                buf[len++] = '"';
                if (validate_exact(buf, len, NULL, NULL) != inserts[k].ok)
                    fail_msg("insert %zu at %zu of %zu: wrong verdict", k, at, total);
            }
        }
    }
}

/* ---- nesting ----------------------------------------------------------- */

/* n arrays or n objects {"a":...} around 0; `unclosed` leaves them open. */
static char *nested(size_t n, bool objects, bool unclosed, size_t *len)
{
    const char *open = objects ? "{\"a\":" : "[";
    size_t open_len = strlen(open);
    char *buf = malloc(n * (open_len + 1) + 1);
    size_t p = 0;

    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        memcpy(buf + p, open, open_len);
        p += open_len;
    }
    buf[p++] = '0';
    if (!unclosed) {
        for (size_t i = 0; i < n; i++)
            buf[p++] = objects ? '}' : ']';
    }
    *len = p;
    return buf;
}

static void test_nesting(void **state)
{
    static const struct {
        size_t depth;
        bool objects;
        bool unclosed;
        bool ok;
    } cases[] = {
        {1, false, false, true},
        {JSON_MAX_DEPTH - 1, false, false, true},
        {JSON_MAX_DEPTH, false, false, true},
        {JSON_MAX_DEPTH, true, false, true},
        {JSON_MAX_DEPTH + 1, false, false, false},
        {JSON_MAX_DEPTH + 1, true, false, false},
        {JSON_MAX_DEPTH, false, true, false},
        {1000000, false, true, false},
        {1000000, true, false, false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        char *text = nested(cases[i].depth, cases[i].objects, cases[i].unclosed, &len);
        json_error err = {NULL, 0};
        bool ok = json_validate(text, len, NULL, &err);

        if (ok != cases[i].ok)
            fail_msg("nesting case %zu: got %d (%s)", i, ok, ok ? "" : err.reason);
        if (!ok && cases[i].depth > JSON_MAX_DEPTH)
            assert_string_equal(err.reason, "nesting too deep");
        free(text);
    }
}

/* Mixed nesting: arrays and objects alternating, closed in the right order. */
static void test_nesting_mixed(void **state)
{
    const char *good = "[{\"a\":[{\"b\":[[{}],{\"c\":[1,{\"d\":[]}]}]}]}]";
    const char *bad = "[{\"a\":[{\"b\":[[{}],{\"c\":[1,{\"d\":[]]}]}]}]";

    (void)state;
    assert_true(validate_exact(good, strlen(good), NULL, NULL));
    assert_false(validate_exact(bad, strlen(bad), NULL, NULL));

    /* An empty container is a level too: JSON_MAX_DEPTH of them nest, one more does not. */
    for (size_t levels = JSON_MAX_DEPTH; levels <= JSON_MAX_DEPTH + 1; levels++) {
        char *text = malloc(2 * levels);

        assert_non_null(text);
        memset(text, '[', levels);
        memset(text + levels, ']', levels);
        assert_int_equal(json_validate(text, 2 * levels, NULL, NULL), levels == JSON_MAX_DEPTH);
        free(text);
    }
}

/* ---- big payloads -------------------------------------------------------- */

#define BIG_MEMBER \
    "\"id%07zu\":{\"amount\":168.90,\"currency\":\"EUR\",\"note\":\"caf\xc3\xa9 \\u20ac\"},"

static char *big_object(size_t target, size_t *len, size_t *members)
{
    char *buf = malloc(target + 256);
    size_t p = 0;
    size_t n = 0;

    assert_non_null(buf);
    buf[p++] = '{';
    while (p < target) {
        p += (size_t)snprintf(buf + p, 256, BIG_MEMBER, n);
        n++;
    }
    buf[p - 1] = '}';
    *len = p;
    *members = n;
    return buf;
}

static bool count_member(void *ctx, const json_member *m)
{
    size_t *count = ctx;

    assert_int_equal(m->kind, JSON_KIND_OBJECT);
    assert_int_equal(m->key_len, 9);
    (*count)++;
    return true;
}

static void test_one_megabyte(void **state)
{
    size_t len, members, seen = 0;
    char *text = big_object(1 << 20, &len, &members);
    json_kind kind;
    json_error err = {NULL, 0};

    (void)state;
    assert_true(len >= (1 << 20));
    assert_true(json_validate(text, len, &kind, &err));
    assert_int_equal(kind, JSON_KIND_OBJECT);
    assert_true(json_scan_object(text, len, count_member, &seen, &err));
    assert_int_equal(seen, members);

    /* One bad byte at the very end is still found. */
    text[len - 2] = '\x01';
    assert_false(json_validate(text, len, NULL, &err));
    free(text);

    /* A single 1 MB string. */
    len = 1 << 20;
    text = malloc(len);
    assert_non_null(text);
    memset(text, 'x', len);
    text[0] = '"';
    text[len - 1] = '"';
    assert_true(json_validate(text, len, &kind, &err));
    assert_int_equal(kind, JSON_KIND_STRING);
    free(text);
}

/* A number with 200,000 digits: fine grammar, beyond numeric's range. */
static void test_huge_numbers(void **state)
{
    size_t len = 200000;
    char *text = malloc(len);

    (void)state;
    assert_non_null(text);
    memset(text, '9', len);
    assert_false(json_validate(text, len, NULL, NULL));
    assert_true(json_validate(text, 131072, NULL, NULL)); /* weight 32767 */
    assert_false(json_validate(text, 131073, NULL, NULL));
    /* 0.<16383 digits> fits, one more digit does not */
    memcpy(text, "0.", 2);
    assert_true(json_validate(text, 2 + 16383, NULL, NULL));
    assert_false(json_validate(text, 2 + 16384, NULL, NULL));
    free(text);
}

/* ---- json_scan_object ------------------------------------------------------ */

typedef struct want_member {
    const char *key;
    bool key_escaped;
    const char *value;
    json_kind kind;
    bool value_escaped;
} want_member;

typedef struct collect {
    const char *text;
    const want_member *want;
    size_t n_want;
    size_t seen;
    size_t stop_after; /* 0: never stop */
} collect;

static bool check_member(void *ctx, const json_member *m)
{
    collect *c = ctx;
    const want_member *w;

    assert_true(c->seen < c->n_want);
    w = &c->want[c->seen];
    assert_int_equal(m->key_len, strlen(w->key));
    assert_memory_equal(m->key, w->key, m->key_len);
    assert_int_equal(m->key_escaped, w->key_escaped);
    assert_int_equal(m->value_len, strlen(w->value));
    assert_memory_equal(m->value, w->value, m->value_len);
    assert_int_equal(m->kind, w->kind);
    assert_int_equal(m->value_escaped, w->value_escaped);
    /* spans point into the caller's text */
    assert_true(m->key > c->text && m->value > m->key);
    c->seen++;
    return c->stop_after == 0 || c->seen < c->stop_after;
}

static const char scan_text[] =
    " {\"a\": 1, \"b\\n\" : \"x\\\"y\",\"c\":[1, {\"d\":2}] ,\n"
    "  \"e\":{}, \"f\":null,\"g\":true, \"h\":-1.5e3, \"i\":\"plain\", \"\":false,"
    " \"\xc3\xa9\":\"\\ud83d\\ude00\", \"a\":{\"x\":[\"\\\"\"]}} \n";

static const want_member scan_want[] = {
    {"a", false, "1", JSON_KIND_NUMBER, false},
    {"b\\n", true, "\"x\\\"y\"", JSON_KIND_STRING, true},
    {"c", false, "[1, {\"d\":2}]", JSON_KIND_ARRAY, false},
    {"e", false, "{}", JSON_KIND_OBJECT, false},
    {"f", false, "null", JSON_KIND_NULL, false},
    {"g", false, "true", JSON_KIND_BOOL, false},
    {"h", false, "-1.5e3", JSON_KIND_NUMBER, false},
    {"i", false, "\"plain\"", JSON_KIND_STRING, false},
    {"", false, "false", JSON_KIND_BOOL, false},
    {"\xc3\xa9", false, "\"\\ud83d\\ude00\"", JSON_KIND_STRING, true},
    /* escapes nested inside a container do not set value_escaped */
    {"a", false, "{\"x\":[\"\\\"\"]}", JSON_KIND_OBJECT, false},
};

static void test_scan_members(void **state)
{
    size_t len = sizeof scan_text - 1;
    char *buf = exact_copy(scan_text, len);
    collect c = {buf, scan_want, sizeof scan_want / sizeof scan_want[0], 0, 0};
    json_error err = {NULL, 0};

    (void)state;
    if (!json_scan_object(buf, len, check_member, &c, &err))
        fail_msg("scan failed: %s at %zu", err.reason, err.offset);
    assert_int_equal(c.seen, c.n_want);
    free(buf);
}

static void test_scan_stop(void **state)
{
    size_t len = sizeof scan_text - 1;
    char *buf = exact_copy(scan_text, len);
    collect c = {buf, scan_want, sizeof scan_want / sizeof scan_want[0], 0, 2};
    json_error err = {NULL, 0};

    (void)state;
    assert_false(json_scan_object(buf, len, check_member, &c, &err));
    assert_int_equal(c.seen, 2);
    assert_string_equal(err.reason, "stopped");
    assert_int_equal(err.offset, 10); /* the opening quote of "b\n" */
    free(buf);
}

static bool count_only(void *ctx, const json_member *m)
{
    (void)m;
    (*(size_t *)ctx)++;
    return true;
}

static void test_scan_object_cases(void **state)
{
    static const struct {
        const char *text;
        bool ok;
        size_t calls;
        const char *reason;
    } cases[] = {
        {"{}", true, 0, NULL},
        {" { } ", true, 0, NULL},
        {"{\"a\":1}", true, 1, NULL},
        {"{\"a\":1,\"a\":2}", true, 2, NULL},
        {"[1]", false, 0, "not a JSON object"},
        {"1", false, 0, "not a JSON object"},
        {"\"{}\"", false, 0, "not a JSON object"},
        {"null", false, 0, "not a JSON object"},
        {"[1,", false, 0, "unexpected end of input"},
        {"", false, 0, "empty input"},
        {"  ", false, 0, "empty input"},
        {"{} {}", false, 0, "trailing characters after the value"},
        {"{\"a\":1} x", false, 1, "trailing characters after the value"},
        {"{\"a\":1,}", false, 1, "expected a string key"},
        {"{\"a\":1,\"b\":}", false, 1, "expected a value"},
        {"{\"a\":1 \"b\":2}", false, 1, "expected ',' or '}'"},
        {"{\"a\":1", false, 1, "unexpected end of input"},
        {"{\"a\":\"\\u0000\"}", false, 0, "\\u0000 is not allowed"},
        {"{\"a\\ud800\":1}", false, 0, "unpaired high surrogate escape"},
        {"{\"a\":1e131072}", false, 0, "number out of numeric range"},
        {"{\"a\":[1,2}", false, 0, "expected ',' or ']'"},
        {"{\"a\":1}\xc3\xa9", false, 1, "trailing characters after the value"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].text);
        char *buf = exact_copy(cases[i].text, len);
        size_t calls = 0;
        json_error err = {NULL, 0};
        bool ok = json_scan_object(buf, len, count_only, &calls, &err);

        if (ok != cases[i].ok || calls != cases[i].calls)
            fail_msg("scan case %zu (%s): ok=%d calls=%zu", i, cases[i].text, ok, calls);
        if (!ok && strcmp(err.reason, cases[i].reason) != 0)
            fail_msg("scan case %zu (%s): reason \"%s\"", i, cases[i].text, err.reason);
        free(buf);
    }
}

/* Deep nesting below a member: the top-level object counts as one level. */
static void test_scan_nesting(void **state)
{
    size_t len;
    char *inner = nested(JSON_MAX_DEPTH, false, false, &len);
    char *text = malloc(len + 8);
    size_t calls = 0;
    json_error err = {NULL, 0};

    (void)state;
    assert_non_null(text);
    memcpy(text, "{\"a\":", 5);
    memcpy(text + 5, inner + 1, len - 2); /* JSON_MAX_DEPTH - 1 arrays */
    text[5 + len - 2] = '}';
    assert_true(json_scan_object(text, len + 4, count_only, &calls, &err));
    assert_int_equal(calls, 1);
    memcpy(text + 5, inner, len); /* one level more */
    text[5 + len] = '}';
    assert_false(json_scan_object(text, len + 6, count_only, &calls, &err));
    assert_string_equal(err.reason, "nesting too deep");
    free(inner);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_table),
        cmocka_unit_test(test_invalid_table),
        cmocka_unit_test(test_string_fast_path_boundaries),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_nesting_mixed),
        cmocka_unit_test(test_one_megabyte),
        cmocka_unit_test(test_huge_numbers),
        cmocka_unit_test(test_scan_members),
        cmocka_unit_test(test_scan_stop),
        cmocka_unit_test(test_scan_object_cases),
        cmocka_unit_test(test_scan_nesting),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
