/*
 * test_validate.c - validate_record, validate_preset and parse_int_in_range
 * against the rules of SPEC.md "Validation": keys trimmed and never blank,
 * NULL, "NULL" or "\N"; tenant_id in int64 and status in int16, given as
 * text (CSV, JSON string) or as a JSON number; received_at with an explicit
 * offset and a real calendar date; payload as jsonb takes it, not null,
 * kept byte for byte; UTF-8 and NUL checks; --set presets.
 *
 * Each case starts from a good row and changes one column.  Field specs:
 * ABSENT, NUL_ (FIELD_NULL), J "..." (FIELD_JSON, NDJSON's non-string
 * value), S "..." (an NDJSON string: decoded text plus its quoted JSON),
 * anything else a CSV field (FIELD_TEXT without JSON text).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/validate.h"

#define ABSENT "\x01" "absent"
#define NUL_ "\x01" "null"
#define J "\x02"
#define S "\x03"

#define TS "2026-03-01T10:00:00+08:00"
/* 2026-03-01T02:00:00Z, as in test_timestamp.c */
#define T0 (INT64_C(1772330400) * 1000000)
#define NOCHECK INT64_C(0x7eadbeefdeadbeef)

static const char *const good_row[COL_COUNT] = {
    [COL_TENANT_ID] = "42",
    [COL_CHANNEL] = "wechat",
    [COL_OUT_TRADE_NO] = "T-1",
    [COL_CALLBACK_TYPE] = "pay",
    [COL_STATUS] = "1",
    [COL_PAYLOAD] = "{\"amount\":168.90}",
    [COL_RECEIVED_AT] = TS,
};

/* Storage for one built record: quoted JSON texts of S fields. */
typedef struct built {
    raw_record rec;
    char json[COL_COUNT][256];
} built;

static json_kind kind_of(const char *t)
{
    switch (t[0]) {
    case '{':
        return JSON_KIND_OBJECT;
    case '[':
        return JSON_KIND_ARRAY;
    case 't':
    case 'f':
        return JSON_KIND_BOOL;
    case 'n':
        return JSON_KIND_NULL;
    case '"':
        return JSON_KIND_STRING;
    default:
        return JSON_KIND_NUMBER;
    }
}

static void set_field(built *b, int col, const char *spec)
{
    field *f = &b->rec.fields[col];

    memset(f, 0, sizeof *f);
    if (spec == NULL || strcmp(spec, ABSENT) == 0) {
        f->kind = FIELD_ABSENT;
    } else if (strcmp(spec, NUL_) == 0) {
        f->kind = FIELD_NULL;
        f->jkind = JSON_KIND_NULL;
    } else if (spec[0] == J[0]) {
        f->kind = FIELD_JSON;
        f->text = f->json = spec + 1;
        f->len = f->json_len = strlen(spec + 1);
        f->jkind = kind_of(spec + 1);
    } else if (spec[0] == S[0]) {
        f->kind = FIELD_TEXT;
        f->jkind = JSON_KIND_STRING;
        f->text = spec + 1;
        f->len = strlen(spec + 1);
        snprintf(b->json[col], sizeof b->json[col], "\"%s\"", spec + 1);
        f->json = b->json[col];
        f->json_len = strlen(b->json[col]);
    } else {
        f->kind = FIELD_TEXT;
        f->text = spec;
        f->len = strlen(spec);
    }
}

static void build(built *b, const char *const spec[COL_COUNT], const char *raw, size_t raw_len)
{
    memset(b, 0, sizeof *b);
    b->rec.line = 7;
    b->rec.raw = raw;
    b->rec.raw_len = raw_len;
    for (int col = 0; col < COL_COUNT; col++)
        set_field(b, col, spec[col]);
}

typedef struct vcase {
    int col;                /* the column changed from good_row */
    const char *value;
    const char *reason;     /* substring of the reason; NULL: accepted */
    int64_t want;           /* accepted: tenant_id, status or received_at
                               microseconds (NOCHECK: not checked) */
    const char *want_text;  /* accepted: the key text or payload (NULL: not checked) */
} vcase;

#define OK_INT(c, v, w) {c, v, NULL, w, NULL}
#define OK_TEXT(c, v, t) {c, v, NULL, NOCHECK, t}
#define BAD(c, v, r) {c, v, r, 0, NULL}

static const vcase cases[] = {
    /* tenant_id as text */
    OK_INT(COL_TENANT_ID, "42", 42),
    OK_INT(COL_TENANT_ID, " 42 ", 42),
    OK_INT(COL_TENANT_ID, "\t42\r\n", 42),
    OK_INT(COL_TENANT_ID, "+42", 42),
    OK_INT(COL_TENANT_ID, "0042", 42),
    OK_INT(COL_TENANT_ID, "-1", -1),
    OK_INT(COL_TENANT_ID, "-0", 0),
    OK_INT(COL_TENANT_ID, "9223372036854775807", INT64_MAX),
    OK_INT(COL_TENANT_ID, "-9223372036854775808", INT64_MIN),
    OK_INT(COL_TENANT_ID, "00000000000000000000000000009", 9),
    BAD(COL_TENANT_ID, "9223372036854775808", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "-9223372036854775809", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "18446744073709551616", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "123456789012345678901234567890", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "1.0", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "1e3", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "0x10", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "abc", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "4 2", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "--1", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "+-1", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "-", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "+", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "   ", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, "\xd9\xa4\xd9\xa2", "tenant_id is not an integer"), /* Arabic-Indic 42 */
    BAD(COL_TENANT_ID, "42abc", "\"42abc\""),
    BAD(COL_TENANT_ID, "", "tenant_id is empty"),
    BAD(COL_TENANT_ID, NUL_, "tenant_id is empty"),
    BAD(COL_TENANT_ID, ABSENT, "tenant_id is missing"),
    /* tenant_id from NDJSON */
    OK_INT(COL_TENANT_ID, J "42", 42),
    OK_INT(COL_TENANT_ID, J "-9223372036854775808", INT64_MIN),
    OK_INT(COL_TENANT_ID, S "42", 42),
    BAD(COL_TENANT_ID, J "9223372036854775808", "tenant_id is not an integer in [-9223372036854775808, 9223372036854775807]"),
    BAD(COL_TENANT_ID, S "9223372036854775808", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, J "1e3", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, J "42.0", "tenant_id is not an integer"),
    BAD(COL_TENANT_ID, J "true", "tenant_id must be an integer"),
    BAD(COL_TENANT_ID, J "{}", "tenant_id must be an integer"),
    BAD(COL_TENANT_ID, J "[42]", "tenant_id must be an integer"),
    /* status */
    OK_INT(COL_STATUS, ABSENT, 0),
    OK_INT(COL_STATUS, NUL_, 0),
    OK_INT(COL_STATUS, "", 0),
    OK_INT(COL_STATUS, "2", 2),
    OK_INT(COL_STATUS, " 2 ", 2),
    OK_INT(COL_STATUS, "32767", 32767),
    OK_INT(COL_STATUS, "-32768", -32768),
    OK_INT(COL_STATUS, J "3", 3),
    OK_INT(COL_STATUS, S "3", 3),
    BAD(COL_STATUS, "32768", "status is not an integer in [-32768, 32767]"),
    BAD(COL_STATUS, "-32769", "status is not an integer in [-32768, 32767]"),
    BAD(COL_STATUS, "65538", "status is not an integer"),
    BAD(COL_STATUS, J "32768", "status is not an integer"),
    BAD(COL_STATUS, "1.5", "status is not an integer"),
    BAD(COL_STATUS, "paid", "status is not an integer"),
    BAD(COL_STATUS, J "true", "status must be an integer"),
    /* key texts */
    OK_TEXT(COL_CHANNEL, " wechat ", "wechat"),
    OK_TEXT(COL_CHANNEL, "\twechat\r\n", "wechat"),
    OK_TEXT(COL_CHANNEL, "we chat", "we chat"),
    OK_TEXT(COL_CHANNEL, "\xe5\xbe\xae\xe4\xbf\xa1", "\xe5\xbe\xae\xe4\xbf\xa1"),
    OK_TEXT(COL_CHANNEL, "N", "N"),
    OK_TEXT(COL_CHANNEL, "NULLS", "NULLS"),
    OK_TEXT(COL_CHANNEL, "nil", "nil"),
    OK_TEXT(COL_CHANNEL, "\\n", "\\n"),
    OK_TEXT(COL_CHANNEL, "\\\\N", "\\\\N"),
    OK_TEXT(COL_CHANNEL, S " x ", "x"),
    OK_TEXT(COL_OUT_TRADE_NO, J "12345", "12345"),
    OK_TEXT(COL_OUT_TRADE_NO, J "123456789012345678901234567890", "123456789012345678901234567890"),
    BAD(COL_CHANNEL, "", "channel is empty or blank"),
    BAD(COL_CHANNEL, "   ", "channel is empty or blank"),
    BAD(COL_CHANNEL, " \t\n\v\f\r ", "channel is empty or blank"),
    BAD(COL_CHANNEL, S "  ", "channel is empty or blank"),
    BAD(COL_CHANNEL, NUL_, "channel is empty or null"),
    BAD(COL_CHANNEL, ABSENT, "channel is missing"),
    BAD(COL_CHANNEL, "NULL", "taken for a NULL"),
    BAD(COL_CHANNEL, "null", "taken for a NULL"),
    BAD(COL_CHANNEL, "Null", "taken for a NULL"),
    BAD(COL_CHANNEL, " NULL\t", "taken for a NULL"),
    BAD(COL_CHANNEL, S "NULL", "taken for a NULL"),
    BAD(COL_CHANNEL, "\\N", "taken for a NULL"),
    BAD(COL_CHANNEL, " \\N ", "taken for a NULL"),
    BAD(COL_CHANNEL, J "true", "channel must be a string"),
    BAD(COL_CHANNEL, J "{\"a\":1}", "channel must be a string"),
    BAD(COL_OUT_TRADE_NO, "null", "out_trade_no is the text null, taken for a NULL"),
    BAD(COL_OUT_TRADE_NO, " ", "out_trade_no is empty or blank"),
    BAD(COL_OUT_TRADE_NO, J "[]", "out_trade_no must be a string"),
    BAD(COL_CALLBACK_TYPE, NUL_, "callback_type is empty or null"),
    BAD(COL_CALLBACK_TYPE, ABSENT, "callback_type is missing"),
    BAD(COL_CALLBACK_TYPE, "\\N", "callback_type is the text \\N, taken for a NULL"),
    /* received_at */
    OK_INT(COL_RECEIVED_AT, TS, T0),
    OK_INT(COL_RECEIVED_AT, "2026-03-01T10:00:00+0800", T0),
    OK_INT(COL_RECEIVED_AT, "2026-03-01T10:00:00+08", T0),
    OK_INT(COL_RECEIVED_AT, "2026-03-01T02:00:00Z", T0),
    OK_INT(COL_RECEIVED_AT, "2026-03-01 02:00:00Z", T0),
    OK_INT(COL_RECEIVED_AT, "2026-02-28T21:00:00-05:00", T0),
    OK_INT(COL_RECEIVED_AT, " 2026-03-01T02:00:00.000000Z ", T0),
    OK_INT(COL_RECEIVED_AT, "2026-03-01T02:00:00.5Z", T0 + 500000),
    OK_INT(COL_RECEIVED_AT, S "2026-03-01T10:00:00+08:00", T0),
    OK_INT(COL_RECEIVED_AT, "2024-02-29T00:00:00Z", INT64_C(1709164800) * 1000000),
    BAD(COL_RECEIVED_AT, "2026-03-01T02:00:00", "received_at: no UTC offset"),
    BAD(COL_RECEIVED_AT, "2026-02-30T00:00:00Z", "received_at: day out of range for month"),
    BAD(COL_RECEIVED_AT, "2026-02-29T00:00:00Z", "day out of range for month"),
    BAD(COL_RECEIVED_AT, "2026-04-31T00:00:00Z", "day out of range for month"),
    BAD(COL_RECEIVED_AT, "2026-13-01T00:00:00Z", "month out of range"),
    BAD(COL_RECEIVED_AT, "2026-03-01T24:00:00Z", "hour out of range"),
    BAD(COL_RECEIVED_AT, "2026-03-01", "received_at:"),
    BAD(COL_RECEIVED_AT, "yesterday", "\"yesterday\""),
    BAD(COL_RECEIVED_AT, "2026-03-01T10:00:00+08:00:00", "received_at:"),
    BAD(COL_RECEIVED_AT, "", "received_at is missing"),
    BAD(COL_RECEIVED_AT, NUL_, "received_at is missing"),
    BAD(COL_RECEIVED_AT, ABSENT, "received_at is missing"),
    BAD(COL_RECEIVED_AT, J "1772330400", "received_at must be a string"),
    /* payload from CSV: JSON text checked as jsonb, kept byte for byte */
    OK_TEXT(COL_PAYLOAD, "{\"a\":1}", "{\"a\":1}"),
    OK_TEXT(COL_PAYLOAD, " { \"a\" : 1 }\n", " { \"a\" : 1 }\n"),
    OK_TEXT(COL_PAYLOAD, "123456789012345678901234567890", "123456789012345678901234567890"),
    OK_TEXT(COL_PAYLOAD, "{\"n\":123456789012345678901234567890,\"x\":1e400}",
            "{\"n\":123456789012345678901234567890,\"x\":1e400}"),
    OK_TEXT(COL_PAYLOAD, "168.90", "168.90"),
    OK_TEXT(COL_PAYLOAD, "\"str\"", "\"str\""),
    OK_TEXT(COL_PAYLOAD, "[]", "[]"),
    OK_TEXT(COL_PAYLOAD, "false", "false"),
    OK_TEXT(COL_PAYLOAD, "{\"a\":1,\"a\":2}", "{\"a\":1,\"a\":2}"),
    BAD(COL_PAYLOAD, "null", "payload is JSON null"),
    BAD(COL_PAYLOAD, " null\n", "payload is JSON null"),
    BAD(COL_PAYLOAD, "", "payload is not valid JSON: empty input"),
    BAD(COL_PAYLOAD, "  ", "payload is not valid JSON: empty input"),
    BAD(COL_PAYLOAD, "{", "payload is not valid JSON: unexpected end of input at byte 2"),
    BAD(COL_PAYLOAD, "{\"a\":\"\\u0000\"}", "\\u0000 is not allowed"),
    BAD(COL_PAYLOAD, "{'a':1}", "payload is not valid JSON"),
    BAD(COL_PAYLOAD, "NaN", "payload is not valid JSON"),
    BAD(COL_PAYLOAD, "{\"a\":01}", "leading zero"),
    BAD(COL_PAYLOAD, "1e131072", "number out of numeric range"),
    BAD(COL_PAYLOAD, "{\"a\":1} x", "trailing characters"),
    BAD(COL_PAYLOAD, "plain text", "payload is not valid JSON"),
    BAD(COL_PAYLOAD, NUL_, "payload is null"),
    BAD(COL_PAYLOAD, ABSENT, "payload is missing"),
    /* payload from NDJSON: the member's own text */
    OK_TEXT(COL_PAYLOAD, J "{ \"a\": 1e400 }", "{ \"a\": 1e400 }"),
    OK_TEXT(COL_PAYLOAD, J "123456789012345678901234567890", "123456789012345678901234567890"),
    OK_TEXT(COL_PAYLOAD, S "{\\\"a\\\":1}", "\"{\\\"a\\\":1}\""),
    OK_TEXT(COL_PAYLOAD, S "plain", "\"plain\""),
};

static void check_case(size_t i, const vcase *c, const char *const spec[COL_COUNT])
{
    built b;
    row r;
    buf reason = BUF_INIT;
    bool ok;
    const char *raw = "the raw text";

    build(&b, spec, raw, strlen(raw));
    memset(&r, 0x5a, sizeof r);
    ok = validate_record(&b.rec, NULL, true, &r, &reason);
    /* line and raw are filled in either way, for the rejects file */
    assert_int_equal(r.line, 7);
    assert_ptr_equal(r.raw, raw);
    assert_int_equal(r.raw_len, strlen(raw));
    if (c->reason != NULL) {
        if (ok)
            fail_msg("case %zu (%s=\"%s\"): accepted", i, column_name(c->col), c->value + (c->value[0] < 4));
        if (strstr(buf_cstr(&reason), c->reason) == NULL)
            fail_msg("case %zu (%s=\"%s\"): reason \"%s\", want \"%s\"", i, column_name(c->col),
                     c->value + (c->value[0] < 4), buf_cstr(&reason), c->reason);
        buf_free(&reason);
        return;
    }
    if (!ok)
        fail_msg("case %zu (%s=\"%s\"): refused: %s", i, column_name(c->col),
                 c->value + (c->value[0] < 4), buf_cstr(&reason));
    assert_int_equal(reason.len, 0);
    if (c->want != NOCHECK) {
        int64_t got = c->col == COL_TENANT_ID ? r.tenant_id
                      : c->col == COL_STATUS  ? r.status
                                              : r.received_us;
        if (got != c->want)
            fail_msg("case %zu: got %lld, want %lld", i, (long long)got, (long long)c->want);
    }
    if (c->want_text != NULL) {
        const char *t;
        size_t n;

        switch (c->col) {
        case COL_CHANNEL:
            t = r.channel, n = r.channel_len;
            break;
        case COL_OUT_TRADE_NO:
            t = r.out_trade_no, n = r.out_trade_no_len;
            break;
        case COL_CALLBACK_TYPE:
            t = r.callback_type, n = r.callback_type_len;
            break;
        default:
            t = r.payload, n = r.payload_len;
            break;
        }
        if (n != strlen(c->want_text) || memcmp(t, c->want_text, n) != 0)
            fail_msg("case %zu: text \"%.*s\", want \"%s\"", i, (int)n, t, c->want_text);
    }
    buf_free(&reason);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *spec[COL_COUNT];

        memcpy(spec, good_row, sizeof spec);
        spec[cases[i].col] = cases[i].value;
        check_case(i, &cases[i], spec);
    }
}

/* The good row itself, every output field. */
static void test_good_row(void **state)
{
    built b;
    row r;
    buf reason = BUF_INIT;

    (void)state;
    build(&b, good_row, "raw", 3);
    assert_true(validate_record(&b.rec, NULL, true, &r, &reason));
    assert_int_equal(r.tenant_id, 42);
    assert_int_equal(r.status, 1);
    assert_int_equal(r.received_us, T0);
    assert_int_equal(r.channel_len, 6);
    assert_memory_equal(r.channel, "wechat", 6);
    assert_int_equal(r.out_trade_no_len, 3);
    assert_memory_equal(r.out_trade_no, "T-1", 3);
    assert_int_equal(r.callback_type_len, 3);
    assert_memory_equal(r.callback_type, "pay", 3);
    assert_int_equal(r.payload_len, strlen(good_row[COL_PAYLOAD]));
    assert_memory_equal(r.payload, good_row[COL_PAYLOAD], r.payload_len);
    /* texts point into the record, not into copies */
    assert_ptr_equal(r.channel, good_row[COL_CHANNEL]);
    assert_ptr_equal(r.payload, good_row[COL_PAYLOAD]);
    buf_free(&reason);
}

/* A record the reader could not split is rejected with the reader's reason. */
static void test_reader_error(void **state)
{
    built b;
    row r;
    buf reason = BUF_INIT;

    (void)state;
    build(&b, good_row, "1,\"a\"b", 6);
    b.rec.error = "malformed CSV: whatever";
    assert_false(validate_record(&b.rec, NULL, true, &r, &reason));
    assert_string_equal(buf_cstr(&reason), "malformed CSV: whatever");
    assert_int_equal(r.line, 7);
    assert_int_equal(r.raw_len, 6);
    buf_free(&reason);
}

/* The whole raw text is checked for UTF-8 and NUL when asked to. */
static void test_utf8_and_nul(void **state)
{
    static const struct {
        const char *raw;
        size_t len;
        const char *reason; /* NULL: fine */
    } cases_u[] = {
        {"plain ascii", 11, NULL},
        {"caf\xc3\xa9 \xf0\x9f\x98\x80", 10, NULL},
        {"bad \xff byte", 10, "invalid UTF-8 at byte 5 of the record"},
        {"\xc0\xaf overlong", 11, "invalid UTF-8 at byte 1 of the record"},
        {"\xed\xa0\x80 surrogate", 13, "invalid UTF-8 at byte 1"},
        {"cut \xe2\x82", 6, "invalid UTF-8 at byte 5"},
        {"nul\0here", 8, "NUL byte at byte 4 of the record"},
        {"\0", 1, "NUL byte at byte 1"},
        {"long ascii prefix then \x80", 24, "invalid UTF-8 at byte 24"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases_u / sizeof cases_u[0]; i++) {
        built b;
        row r;
        buf reason = BUF_INIT;
        bool ok;

        build(&b, good_row, cases_u[i].raw, cases_u[i].len);
        ok = validate_record(&b.rec, NULL, true, &r, &reason);
        if (cases_u[i].reason == NULL) {
            if (!ok)
                fail_msg("utf8 case %zu refused: %s", i, buf_cstr(&reason));
        } else {
            if (ok)
                fail_msg("utf8 case %zu accepted", i);
            if (strcmp(buf_cstr(&reason), cases_u[i].reason) != 0 &&
                strstr(buf_cstr(&reason), cases_u[i].reason) == NULL)
                fail_msg("utf8 case %zu: \"%s\", want \"%s\"", i, buf_cstr(&reason),
                         cases_u[i].reason);
        }
        /* without the check (NDJSON: the reader did it) the same row passes */
        buf_clear(&reason);
        assert_true(validate_record(&b.rec, NULL, false, &r, &reason));
        buf_free(&reason);
    }
}

/* --set presets fill columns the file lacks; a column the record has wins. */
static void test_presets(void **state)
{
    presets pre;
    built b;
    row r;
    buf reason = BUF_INIT;
    const char *spec[COL_COUNT];

    (void)state;
    memset(&pre, 0, sizeof pre);
    pre.value[COL_CHANNEL] = "alipay";
    pre.value[COL_TENANT_ID] = "9223372036854775807";
    pre.value[COL_STATUS] = "2";
    pre.value[COL_PAYLOAD] = "{\"from\":\"preset\"}";
    pre.value[COL_RECEIVED_AT] = "2026-03-01T02:00:00Z";

    /* all absent: every preset used */
    memcpy(spec, good_row, sizeof spec);
    spec[COL_CHANNEL] = spec[COL_TENANT_ID] = spec[COL_STATUS] = ABSENT;
    spec[COL_PAYLOAD] = spec[COL_RECEIVED_AT] = ABSENT;
    build(&b, spec, "x", 1);
    if (!validate_record(&b.rec, &pre, true, &r, &reason))
        fail_msg("refused: %s", buf_cstr(&reason));
    assert_int_equal(r.tenant_id, INT64_MAX);
    assert_int_equal(r.status, 2);
    assert_int_equal(r.received_us, T0);
    assert_int_equal(r.channel_len, 6);
    assert_memory_equal(r.channel, "alipay", 6);
    assert_string_equal(r.payload, "{\"from\":\"preset\"}");
    assert_int_equal(r.payload_len, strlen("{\"from\":\"preset\"}"));

    /* present columns win over presets */
    build(&b, good_row, "x", 1);
    assert_true(validate_record(&b.rec, &pre, true, &r, &reason));
    assert_int_equal(r.tenant_id, 42);
    assert_int_equal(r.status, 1);
    assert_memory_equal(r.channel, "wechat", 6);
    assert_memory_equal(r.payload, good_row[COL_PAYLOAD], r.payload_len);

    /* a NULL the file has is not replaced by the preset */
    memcpy(spec, good_row, sizeof spec);
    spec[COL_CHANNEL] = NUL_;
    build(&b, spec, "x", 1);
    assert_false(validate_record(&b.rec, &pre, true, &r, &reason));
    assert_non_null(strstr(buf_cstr(&reason), "channel is empty or null"));
    buf_clear(&reason);

    /* presets only for some columns: the others still missing */
    memset(&pre, 0, sizeof pre);
    pre.value[COL_CHANNEL] = "wechat";
    memcpy(spec, good_row, sizeof spec);
    spec[COL_CHANNEL] = ABSENT;
    spec[COL_CALLBACK_TYPE] = ABSENT;
    build(&b, spec, "x", 1);
    assert_false(validate_record(&b.rec, &pre, true, &r, &reason));
    assert_string_equal(buf_cstr(&reason), "callback_type is missing");
    buf_free(&reason);
}

static void test_validate_preset(void **state)
{
    static const struct {
        int col;
        const char *value;
        const char *reason; /* NULL: accepted */
    } cases_p[] = {
        {COL_TENANT_ID, "42", NULL},
        {COL_TENANT_ID, " -7 ", NULL},
        {COL_TENANT_ID, "x", "--set tenant_id=x: tenant_id is not an integer"},
        {COL_TENANT_ID, "9223372036854775808", "--set tenant_id=9223372036854775808:"},
        {COL_TENANT_ID, "", "--set tenant_id=: tenant_id is empty"},
        {COL_STATUS, "2", NULL},
        {COL_STATUS, "32768", "--set status=32768: status is not an integer"},
        {COL_STATUS, "", "--set status=: status is empty"},
        {COL_CHANNEL, "wechat", NULL},
        {COL_CHANNEL, " ", "--set channel= : channel is empty or blank"},
        {COL_CHANNEL, "NULL", "taken for a NULL"},
        {COL_CHANNEL, "\xff", "--set channel: invalid UTF-8"},
        {COL_OUT_TRADE_NO, "T1", NULL},
        {COL_CALLBACK_TYPE, "\\N", "taken for a NULL"},
        {COL_RECEIVED_AT, TS, NULL},
        {COL_RECEIVED_AT, "2026-03-01", "--set received_at=2026-03-01: received_at:"},
        {COL_RECEIVED_AT, "2026-02-30T00:00:00Z", "day out of range"},
        {COL_PAYLOAD, "{}", NULL},
        {COL_PAYLOAD, "123456789012345678901234567890", NULL},
        {COL_PAYLOAD, "null", "--set payload=null: payload is not valid JSON or is null"},
        {COL_PAYLOAD, "{", "payload is not valid JSON"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases_p / sizeof cases_p[0]; i++) {
        buf reason = BUF_INIT;
        bool ok = validate_preset(cases_p[i].col, cases_p[i].value, &reason);

        if (cases_p[i].reason == NULL && !ok)
            fail_msg("preset %zu refused: %s", i, buf_cstr(&reason));
        if (cases_p[i].reason != NULL) {
            if (ok)
                fail_msg("preset %zu (%s) accepted", i, cases_p[i].value);
            if (strstr(buf_cstr(&reason), cases_p[i].reason) == NULL)
                fail_msg("preset %zu: \"%s\", want \"%s\"", i, buf_cstr(&reason),
                         cases_p[i].reason);
        }
        buf_free(&reason);
    }
}

static void test_parse_int_in_range(void **state)
{
    static const struct {
        const char *s;
        int64_t min, max;
        bool ok;
        int64_t want;
    } cases_i[] = {
        {"0", 0, 0, true, 0},
        {"1", 0, 0, false, 0},
        {"-1", -1, 1, true, -1},
        {"-2", -1, 1, false, 0},
        {"  5\t", 0, 10, true, 5},
        {"9223372036854775807", INT64_MIN, INT64_MAX, true, INT64_MAX},
        {"9223372036854775808", INT64_MIN, INT64_MAX, false, 0},
        {"-9223372036854775808", INT64_MIN, INT64_MAX, true, INT64_MIN},
        {"-9223372036854775808", INT64_MIN + 1, INT64_MAX, false, 0},
        {"-9223372036854775809", INT64_MIN, INT64_MAX, false, 0},
        {"99999999999999999999", INT64_MIN, INT64_MAX, false, 0},
        {"1 0", 0, 100, false, 0},
        {"", 0, 100, false, 0},
        {"-", 0, 100, false, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases_i / sizeof cases_i[0]; i++) {
        int64_t out = 12345;
        bool ok = parse_int_in_range(cases_i[i].s, strlen(cases_i[i].s), cases_i[i].min,
                                     cases_i[i].max, &out);

        if (ok != cases_i[i].ok)
            fail_msg("parse_int case %zu (%s): %d", i, cases_i[i].s, ok);
        if (ok)
            assert_int_equal(out, cases_i[i].want);
    }
    /* only n bytes are read: no NUL needed after the digits */
    {
        int64_t out;

        assert_true(parse_int_in_range("12345", 2, 0, 100, &out));
        assert_int_equal(out, 12);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_good_row),
        cmocka_unit_test(test_reader_error),
        cmocka_unit_test(test_utf8_and_nul),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_validate_preset),
        cmocka_unit_test(test_parse_int_in_range),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
