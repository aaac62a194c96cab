/*
 * test_ndjson_reader.c - the NDJSON reader: one JSON object per line,
 * members by name, blank lines skipped, escaped strings decoded, duplicate
 * members refused, lines that are not objects (arrays, scalars, invalid
 * JSON, \u0000, invalid UTF-8, NUL bytes) handed out as records with an
 * error and their line, payload text kept byte for byte (30-digit integers,
 * 1e400), CRLF split across the 256 KiB window, 1 MB payloads, and the
 * record size limit.
 *
 * Table cases run from a plain file, a gzip file and a pipe on stdin.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "input/reader.h"

#define WINDOW (256 * 1024) /* reader.c's read window */
#define TS "2026-03-01T10:00:00+08:00"
#define OBJ(n) "{\"tenant_id\":" n ",\"channel\":\"wechat\",\"out_trade_no\":\"T" n \
               "\",\"callback_type\":\"pay\",\"payload\":{\"n\":" n "},\"received_at\":\"" TS "\"}"

/* Field expectations: NULL = unchecked; ABSENT, NUL_; "\x02..." = FIELD_JSON
 * with that text; anything else = FIELD_TEXT with that (decoded) text. */
#define ABSENT "\x01" "absent"
#define NUL_ "\x01" "null"
#define J "\x02"

typedef struct want_rec {
    uint64_t line;
    const char *raw;
    const char *error;          /* substring; NULL: none */
    const char *f[COL_COUNT];
    const char *payload_json;   /* expected field.json of payload; NULL: unchecked */
    json_kind payload_kind;     /* checked with payload_json */
} want_rec;

typedef struct nd_case {
    const char *name;
    const char *input;
    size_t len;                 /* 0: strlen */
    want_rec want[8];
} nd_case;

#define TN(s) [COL_TENANT_ID] = s
#define CH(s) [COL_CHANNEL] = s
#define OT(s) [COL_OUT_TRADE_NO] = s
#define CB(s) [COL_CALLBACK_TYPE] = s
#define ST(s) [COL_STATUS] = s
#define PL(s) [COL_PAYLOAD] = s
#define RA(s) [COL_RECEIVED_AT] = s

#define BAD_BYTES "{\"channel\":\"a\xff\"}\n{\"channel\":\"a\0b\"}\n{\"ch\xc3\xa9\":\"\xc3\xa9\"}\n"

static const nd_case cases[] = {
    {"basic", OBJ("1") "\n" OBJ("2") "\n", 0,
     {{1, OBJ("1"), NULL,
       {TN(J "1"), CH("wechat"), OT("T1"), CB("pay"), ST(ABSENT), PL(J "{\"n\":1}"), RA(TS)},
       "{\"n\":1}", JSON_KIND_OBJECT},
      {2, OBJ("2"), NULL, {TN(J "2"), OT("T2")}, NULL, 0}}},
    {"tenant_id and status as strings and numbers",
     "{\"tenant_id\":\"42\",\"status\":\"2\"}\n{\"tenant_id\":-7,\"status\":3}\n"
     "{\"tenant_id\":9223372036854775808,\"status\":32768}\n"
     "{\"tenant_id\":1.5e3,\"status\":true}\n", 0,
     {{1, NULL, NULL, {TN("42"), ST("2")}, NULL, 0},
      {2, NULL, NULL, {TN(J "-7"), ST(J "3")}, NULL, 0},
      {3, NULL, NULL, {TN(J "9223372036854775808"), ST(J "32768")}, NULL, 0},
      {4, NULL, NULL, {TN(J "1.5e3"), ST(J "true")}, NULL, 0}}},
    {"any order, extra members, nested names ignored, case-insensitive names",
     "{\"x\":{\"tenant_id\":9,\"channel\":\"no\"},\"received_at\":\"" TS "\",\"Channel\":\"c\","
     "\"payload\":[{\"tenant_id\":8}],\"TENANT_ID\":5,\"extra\":null}\n", 0,
     {{1, NULL, NULL,
       {TN(J "5"), CH("c"), OT(ABSENT), CB(ABSENT), ST(ABSENT), PL(J "[{\"tenant_id\":8}]"),
        RA(TS)},
       "[{\"tenant_id\":8}]", JSON_KIND_ARRAY}}},
    {"null members", "{\"tenant_id\":null,\"channel\":null,\"payload\":null,\"status\":null}\n", 0,
     {{1, NULL, NULL, {TN(NUL_), CH(NUL_), PL(NUL_), ST(NUL_), RA(ABSENT)}, NULL, 0}}},
    {"escaped strings are decoded", 
     "{\"out_trade_no\":\"a\\\"b\\u00e9\\n\\t\\\\\\/\",\"channel\":\"\\ud83d\\ude00\","
     "\"callback_type\":\"plain\"}\n", 0,
     {{1, NULL, NULL, {OT("a\"b\xc3\xa9\n\t\\/"), CH("\xf0\x9f\x98\x80"), CB("plain")}, NULL, 0}}},
    {"escaped member names", "{\"chann\\u0065l\":\"x\",\"\\u0074enant_id\":3,\"p\\u0061y\":1}\n", 0,
     {{1, NULL, NULL, {CH("x"), TN(J "3")}, NULL, 0}}},
    {"duplicate members", 
     "{\"channel\":\"a\",\"channel\":\"b\"}\n"
     "{\"channel\":null,\"channel\":\"b\"}\n"
     "{\"channel\":\"a\",\"chann\\u0065l\":\"b\"}\n"
     "{\"Channel\":\"a\",\"CHANNEL\":\"b\"}\n"
     "{\"extra\":1,\"extra\":2,\"channel\":\"ok\"}\n", 0,
     {{1, NULL, "member channel appears twice", {0}, NULL, 0},
      {2, NULL, "member channel appears twice", {0}, NULL, 0},
      {3, NULL, "member channel appears twice", {0}, NULL, 0},
      {4, NULL, "member channel appears twice", {0}, NULL, 0},
      {5, NULL, NULL, {CH("ok")}, NULL, 0}}},
    {"payload as a string and as other values",
     "{\"payload\":\"{\\\"a\\\":1}\"}\n{\"payload\":\"plain\"}\n{\"payload\":168.90}\n"
     "{\"payload\":true}\n{\"payload\":{ \"a\" : [1, 2.50] }}\n", 0,
     {{1, NULL, NULL, {PL("{\"a\":1}")}, "\"{\\\"a\\\":1}\"", JSON_KIND_STRING},
      {2, NULL, NULL, {PL("plain")}, "\"plain\"", JSON_KIND_STRING},
      {3, NULL, NULL, {PL(J "168.90")}, "168.90", JSON_KIND_NUMBER},
      {4, NULL, NULL, {PL(J "true")}, "true", JSON_KIND_BOOL},
      {5, NULL, NULL, {PL(J "{ \"a\" : [1, 2.50] }")}, "{ \"a\" : [1, 2.50] }",
       JSON_KIND_OBJECT}}},
    {"big numbers kept as written",
     "{\"payload\":{\"n\":123456789012345678901234567890,\"x\":1e400,\"y\":-0.000e-5}}\n", 0,
     {{1, NULL, NULL, {PL(J "{\"n\":123456789012345678901234567890,\"x\":1e400,\"y\":-0.000e-5}")},
       "{\"n\":123456789012345678901234567890,\"x\":1e400,\"y\":-0.000e-5}", JSON_KIND_OBJECT}}},
    {"blank lines", "\n  \n\t\r\n" OBJ("1") "\n\n \n" OBJ("2") "\r\n\r\n  ", 0,
     {{4, OBJ("1"), NULL, {TN(J "1")}, NULL, 0}, {7, OBJ("2"), NULL, {TN(J "2")}, NULL, 0}}},
    {"CRLF, no final break", OBJ("1") "\r\n" OBJ("2") "\r\n" OBJ("3"), 0,
     {{1, OBJ("1"), NULL, {TN(J "1")}, NULL, 0},
      {2, OBJ("2"), NULL, {TN(J "2")}, NULL, 0},
      {3, OBJ("3"), NULL, {TN(J "3"), RA(TS)}, NULL, 0}}},
    {"a lone CR is white space, not a line break",
     "{\"tenant_id\":1,\r\"channel\":\"x\"\r}\r\n" OBJ("2") "\r" OBJ("3") "\n" OBJ("4") "\n", 0,
     {{1, "{\"tenant_id\":1,\r\"channel\":\"x\"\r}", NULL, {TN(J "1"), CH("x")}, NULL, 0},
      {2, OBJ("2") "\r" OBJ("3"), "trailing characters", {0}, NULL, 0},
      {3, OBJ("4"), NULL, {TN(J "4")}, NULL, 0}}},
    {"white space around the object", "  {\"channel\" : \"a\" }\t \r\n", 0,
     {{1, "  {\"channel\" : \"a\" }\t ", NULL, {CH("a")}, NULL, 0}}},
    {"BOM", "\xEF\xBB\xBF" OBJ("1") "\n", 0, {{1, OBJ("1"), NULL, {TN(J "1")}, NULL, 0}}},
    {"lines that are not objects, then good rows",
     "[1,2]\n42\n\"str\"\nnull\n" OBJ("5") "\n{\"a\":}\n{\"a\":1\n{} {}\n", 0,
     {{1, "[1,2]", "not a JSON object", {0}, NULL, 0},
      {2, "42", "not a JSON object", {0}, NULL, 0},
      {3, "\"str\"", "not a JSON object", {0}, NULL, 0},
      {4, "null", "not a JSON object", {0}, NULL, 0},
      {5, OBJ("5"), NULL, {TN(J "5")}, NULL, 0},
      {6, "{\"a\":}", "expected a value at byte 6", {0}, NULL, 0},
      {7, "{\"a\":1", "unexpected end of input", {0}, NULL, 0},
      {8, "{} {}", "trailing characters", {0}, NULL, 0}}},
    {"more invalid lines", "{\"channel\":\"x\"}]\n{'a':1}\n" OBJ("3") "\n", 0,
     {{1, NULL, "trailing characters", {0}, NULL, 0},
      {2, "{'a':1}", "not a valid JSON object", {0}, NULL, 0},
      {3, OBJ("3"), NULL, {TN(J "3")}, NULL, 0}}},
    {"\\u0000 refused as jsonb refuses it",
     "{\"payload\":{\"a\":\"x\\u0000y\"}}\n{\"channel\":\"\\u0000\"}\n" OBJ("3") "\n", 0,
     {{1, "{\"payload\":{\"a\":\"x\\u0000y\"}}", "\\u0000 is not allowed", {0}, NULL, 0},
      {2, NULL, "\\u0000 is not allowed", {0}, NULL, 0},
      {3, OBJ("3"), NULL, {TN(J "3")}, NULL, 0}}},
    {"invalid UTF-8 and NUL bytes",
     BAD_BYTES, sizeof BAD_BYTES - 1,
     {{1, "{\"channel\":\"a\xff\"}", "invalid UTF-8 at byte 14", {0}, NULL, 0},
      {2, NULL, "NUL byte at byte 14", {0}, NULL, 0},
      {3, NULL, NULL, {CH(ABSENT)}, NULL, 0}}},
    {"other rejected JSON", "{\"a\":01}\n{\"a\":NaN}\n{\"a\":\"\\ud800\"}\n{\"a\":1e131072}\n", 0,
     {{1, NULL, "leading zero", {0}, NULL, 0},
      {2, NULL, "expected a value", {0}, NULL, 0},
      {3, NULL, "unpaired high surrogate", {0}, NULL, 0},
      {4, NULL, "out of numeric range", {0}, NULL, 0}}},
    {"empty object, empty file", "{}\n", 0,
     {{1, "{}", NULL, {TN(ABSENT), CH(ABSENT), PL(ABSENT)}, NULL, 0}}},
    {"empty input", "", 0, {{0}}},
    {"only blank lines", "\n\r\n   \n\t", 0, {{0}}},
};

static void check_field(const char *name, size_t r, int col, const rec_copy *g, const char *want)
{
    field_kind kind = FIELD_TEXT;

    if (want == NULL)
        return;
    if (strcmp(want, ABSENT) == 0 || strcmp(want, NUL_) == 0) {
        kind = want[1] == 'a' ? FIELD_ABSENT : FIELD_NULL;
        if (g->f[col].kind != kind)
            fail_msg("%s: record %zu: %s is kind %d, want %d", name, r, column_name(col),
                     g->f[col].kind, kind);
        return;
    }
    if (want[0] == J[0]) {
        kind = FIELD_JSON;
        want++;
    }
    if (g->f[col].kind != kind || g->f[col].len != strlen(want) ||
        memcmp(g->f[col].text, want, g->f[col].len) != 0)
        fail_msg("%s: record %zu: %s is kind %d \"%s\", want kind %d \"%s\"", name, r,
                 column_name(col), g->f[col].kind, g->f[col].text ? g->f[col].text : "", kind,
                 want);
    if (kind == FIELD_JSON) {
        /* the JSON text is the text, and the kind matches it */
        assert_non_null(g->f[col].json);
        assert_string_equal(g->f[col].json, want);
        assert_int_equal(g->f[col].jkind, want[0] == '{'   ? JSON_KIND_OBJECT
                                          : want[0] == '[' ? JSON_KIND_ARRAY
                                          : want[0] == 't' || want[0] == 'f' ? JSON_KIND_BOOL
                                                                             : JSON_KIND_NUMBER);
    } else {
        /* a string: json holds it quoted, as written */
        assert_non_null(g->f[col].json);
        assert_int_equal(g->f[col].jkind, JSON_KIND_STRING);
        assert_true(g->f[col].json_len >= 2);
        assert_int_equal(g->f[col].json[0], '"');
        assert_int_equal(g->f[col].json[g->f[col].json_len - 1], '"');
    }
}

static void check_records(const nd_case *c, const char *how, const read_all_result *res)
{
    size_t n_want = 0;

    while (n_want < 8 && c->want[n_want].line != 0)
        n_want++;
    check_record_count(c->name, how, res, n_want);
    for (size_t i = 0; i < n_want; i++) {
        const want_rec *w = &c->want[i];
        const rec_copy *g = &res->recs[i];

        if (!check_record_head(c->name, how, i, g, w->line, w->raw, w->error))
            continue;
        for (int col = 0; col < COL_COUNT; col++)
            check_field(c->name, i, col, g, w->f[col]);
        if (w->payload_json != NULL) {
            assert_non_null(g->f[COL_PAYLOAD].json);
            assert_string_equal(g->f[COL_PAYLOAD].json, w->payload_json);
            assert_int_equal(g->f[COL_PAYLOAD].jkind, w->payload_kind);
        }
    }
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const nd_case *c = &cases[i];
        size_t len = c->len ? c->len : strlen(c->input);
        read_all_result res;
        char *err;

        for (int gz = 0; gz <= 1; gz++) {
            char *p = path_in(test_dir, gz ? "case.ndjson.gz" : "case.ndjson");

            if (gz)
                write_gzip_file(p, c->input, len, 6);
            else
                write_bytes(p, c->input, len);
            if (!read_file(p, FORMAT_NDJSON, 0, NULL, &res, &err))
                fail_msg("%s: open failed: %s", c->name, err);
            check_records(c, gz ? "gzip" : "plain", &res);
            read_all_free(&res);
            free(p);
        }
        {
            stdin_feed feed;

            stdin_feed_start(&feed, c->input, len, 1, 2);
            if (!read_file("-", FORMAT_NDJSON, 0, NULL, &res, &err))
                fail_msg("%s: open failed: %s", c->name, err);
            check_records(c, "stdin", &res);
            read_all_free(&res);
            stdin_feed_end(&feed);
        }
    }
}

/* ---- window edge and big lines --------------------------------------------- */

/* The first line's CRLF starts at cr_at (the CR), around the window edge. */
static void test_crlf_across_window(void **state)
{
    (void)state;
    for (size_t cr_at = WINDOW - 3; cr_at <= WINDOW + 2; cr_at++) {
        for (int gz = 0; gz <= 1; gz++) {
            const char *head = "{\"channel\":\"wechat\",\"payload\":\"";
            const char *tail = "\"}";
            size_t hl = strlen(head), len;
            char *input = malloc(WINDOW + 4096);
            char *p = path_in(test_dir, gz ? "w.ndjson.gz" : "w.ndjson");
            read_all_result res;
            char *err;

            assert_non_null(input);
            memcpy(input, head, hl);
            memset(input + hl, 'z', cr_at - hl - strlen(tail));
            memcpy(input + cr_at - strlen(tail), tail, strlen(tail));
            len = cr_at;
            len += (size_t)sprintf(input + len, "\r\n\r\n%s\r\n", OBJ("2"));
            if (gz)
                write_gzip_file(p, input, len, 1);
            else
                write_bytes(p, input, len);
            if (!read_file(p, FORMAT_NDJSON, 0, NULL, &res, &err))
                fail_msg("open: %s", err);
            assert_int_equal(res.last, READ_EOF);
            assert_int_equal(res.n, 2);
            assert_null(res.recs[0].error);
            assert_int_equal(res.recs[0].line, 1);
            assert_int_equal(res.recs[0].raw_len, cr_at);
            assert_int_equal(res.recs[0].f[COL_PAYLOAD].len, cr_at - hl - strlen(tail));
            assert_int_equal(res.recs[1].line, 3);
            assert_string_equal(res.recs[1].raw, OBJ("2"));
            read_all_free(&res);
            free(p);
            free(input);
        }
    }
}

/* A lone CR (JSON white space) as the last byte of a window, and a CRLF
 * whose CR is: neither may end the line early. */
static void test_lone_cr_at_window_edge(void **state)
{
    (void)state;
    for (size_t at = WINDOW - 4; at <= WINDOW; at++) {
        const char *head = "{\"payload\":\"";
        size_t hl = strlen(head), len;
        char *input = malloc(WINDOW + 4096);
        char *p = path_in(test_dir, "cr.ndjson");
        read_all_result res;
        char *err;

        assert_non_null(input);
        memcpy(input, head, hl);
        memset(input + hl, 'z', at - 1 - hl);
        memcpy(input + at - 1, "\",\r\r\"channel\":\"x\"\r}\r\r\n", 22);
        len = at - 1 + 22;
        len += (size_t)sprintf(input + len, "%s\n", OBJ("2"));
        write_bytes(p, input, len);
        if (!read_file(p, FORMAT_NDJSON, 0, NULL, &res, &err))
            fail_msg("open: %s", err);
        assert_int_equal(res.n, 2);
        if (res.recs[0].error != NULL)
            fail_msg("at %zu: %s", at, res.recs[0].error);
        assert_int_equal(res.recs[0].line, 1);
        assert_string_equal(res.recs[0].f[COL_CHANNEL].text, "x");
        /* raw: everything but the final CRLF; the CR before it is white space */
        assert_int_equal(res.recs[0].raw_len, len - strlen(OBJ("2")) - 1 - 2);
        assert_int_equal(res.recs[1].line, 2);
        read_all_free(&res);
        free(input);
        free(p);
    }
}

static void test_megabyte_payloads(void **state)
{
    (void)state;
    for (int gz = 0; gz <= 1; gz++) {
        size_t n = (1 << 20) + 777, len = 0;
        char *input = malloc(3 * n + 1024);
        char *pl_obj = malloc(n + 64), *p = path_in(test_dir, gz ? "big.ndjson.gz" : "big.ndjson");
        size_t ol;
        read_all_result res;
        char *err;

        assert_non_null(input);
        assert_non_null(pl_obj);
        /* line 1: an object payload with a 1 MB string and an escape */
        ol = (size_t)sprintf(pl_obj, "{\"blob\":\"\\u00e9");
        memset(pl_obj + ol, 'b', n);
        ol += n;
        ol += (size_t)sprintf(pl_obj + ol, "\",\"n\":123456789012345678901234567890}");
        len = (size_t)sprintf(input, "{\"tenant_id\":1,\"payload\":");
        memcpy(input + len, pl_obj, ol);
        len += ol;
        len += (size_t)sprintf(input + len, ",\"received_at\":\"" TS "\"}\n");
        /* line 2: a 1 MB string payload with escapes to decode */
        len += (size_t)sprintf(input + len, "{\"payload\":\"");
        for (size_t i = 0; i < n / 2; i++) {
            input[len++] = '\\';
            input[len++] = 'n';
        }
        len += (size_t)sprintf(input + len, "\",\"tenant_id\":2}\n" OBJ("3") "\n");
        if (gz)
            write_gzip_file(p, input, len, 6);
        else
            write_bytes(p, input, len);
        if (!read_file(p, FORMAT_NDJSON, 0, NULL, &res, &err))
            fail_msg("open: %s", err);
        assert_int_equal(res.last, READ_EOF);
        assert_int_equal(res.n, 3);
        assert_null(res.recs[0].error);
        assert_int_equal(res.recs[0].f[COL_PAYLOAD].kind, FIELD_JSON);
        assert_int_equal(res.recs[0].f[COL_PAYLOAD].len, ol);
        assert_memory_equal(res.recs[0].f[COL_PAYLOAD].text, pl_obj, ol);
        assert_string_equal(res.recs[0].f[COL_RECEIVED_AT].text, TS);
        assert_null(res.recs[1].error);
        assert_int_equal(res.recs[1].line, 2);
        assert_int_equal(res.recs[1].f[COL_PAYLOAD].kind, FIELD_TEXT);
        assert_int_equal(res.recs[1].f[COL_PAYLOAD].len, n / 2);
        for (size_t i = 0; i < n / 2; i++)
            if (res.recs[1].f[COL_PAYLOAD].text[i] != '\n')
                fail_msg("decoded byte %zu", i);
        assert_int_equal(res.recs[1].f[COL_PAYLOAD].json_len, n / 2 * 2 + 2);
        assert_string_equal(res.recs[1].f[COL_TENANT_ID].text, "2");
        assert_int_equal(res.recs[2].line, 3);
        read_all_free(&res);
        free(input);
        free(pl_obj);
        free(p);
    }
}

static void test_record_limit(void **state)
{
    char *p = path_in(test_dir, "huge.ndjson.gz");
    size_t n = READER_MAX_RECORD + 4096;
    char *input = malloc(n);
    size_t hl;
    read_all_result res;
    char *err;

    (void)state;
    assert_non_null(input);
    hl = (size_t)sprintf(input, OBJ("1") "\n\n{\"payload\":\"");
    memset(input + hl, 'q', n - hl);
    write_gzip_file(p, input, n, 1);
    free(input);
    if (!read_file(p, FORMAT_NDJSON, 0, NULL, &res, &err))
        fail_msg("open: %s", err);
    assert_int_equal(res.n, 1);
    assert_int_equal(res.last, READ_FAILED);
    assert_non_null(strstr(res.error, "line 3"));
    assert_non_null(strstr(res.error, "32 MiB"));
    read_all_free(&res);
    free(p);
}

static void test_truncated_gzip(void **state)
{
    char *p = path_in(test_dir, "cut.ndjson.gz");
    size_t cap = 500000, len = 0, gzlen;
    char *input = malloc(cap);
    unsigned char *gz;
    read_all_result res;
    char *err;
    int rows = 0;

    (void)state;
    assert_non_null(input);
    while (len + 300 < cap) {
        len += (size_t)sprintf(input + len, "{\"tenant_id\":%d,\"payload\":{\"k\":%d}}\n", rows,
                               rows * 31);
        rows++;
    }
    write_gzip_file(p, input, len, 6);
    gz = read_bytes(p, &gzlen);
    write_bytes(p, gz, gzlen / 2);
    if (!read_file(p, FORMAT_NDJSON, 0, NULL, &res, &err))
        fail_msg("open: %s", err);
    assert_int_equal(res.last, READ_FAILED);
    assert_non_null(strstr(res.error, "truncated gzip"));
    assert_true(res.n > 100 && res.n < (size_t)rows);
    for (size_t i = 0; i < res.n; i++) {
        char want[32];

        assert_int_equal(res.recs[i].line, i + 1);
        assert_null(res.recs[i].error);
        snprintf(want, sizeof want, "%zu", i);
        assert_string_equal(res.recs[i].f[COL_TENANT_ID].text, want);
    }
    read_all_free(&res);
    free(gz);
    free(input);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_crlf_across_window),
        cmocka_unit_test(test_lone_cr_at_window_edge),
        cmocka_unit_test(test_megabyte_payloads),
        cmocka_unit_test(test_record_limit),
        cmocka_unit_test(test_truncated_gzip),
    };

    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
