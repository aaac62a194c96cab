/*
 * test_unicode_trim.c - trim_white_space, the one trimming rule of values
 * (SPEC.md "Validation", first rule; issue 12), and validate_record and
 * validate_preset around it: every listed white space and invisible code
 * point alone (a key then rejected), around a key (trimmed) and inside a key
 * (kept as written); its neighbours never trimmed; every code point of
 * Unicode checked against a reference list; invalid UTF-8 never split and
 * still rejected.
 *
 * trim_white_space always runs on an exact-size heap copy, so that ASan
 * reports any read before or past the text.
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

/* The characters the rule trims: Unicode's White_Space property, and the
 * zero-width ones exports leave where nothing shows. */
static const uint32_t trimmed[] = {
    0x0009, 0x000A, 0x000B, 0x000C, 0x000D, 0x0020, 0x0085, 0x00A0, 0x1680,
    0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
    0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
    0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF,
};
#define N_TRIMMED (sizeof trimmed / sizeof trimmed[0])

/* Neighbours in code point or in bytes that must stay: ASCII controls that
 * are not White_Space, DEL, C1 controls, the other bytes after C2/E1/E2/
 * E3/EF, bidi marks, the former white space U+180E, and non-characters. */
static const uint32_t kept[] = {
    0x001C, 0x001D, 0x001E, 0x001F, 0x007F, 0x0084, 0x0086, 0x009F,
    0x00A1, 0x00AD, 0x1681, 0x167F, 0x180E, 0x1FFF, 0x200E, 0x200F, 0x2010,
    0x2027, 0x202A, 0x202E, 0x2030, 0x205E, 0x2061, 0x2063, 0x2FFF, 0x3001,
    0x3002, 0xFEFE, 0xFF00, 0xFFEF, 0xFFFE, 0xFFFF, 0x10000, 0x10FFFF,
};
#define N_KEPT (sizeof kept / sizeof kept[0])

static bool in_trimmed(uint32_t cp)
{
    for (size_t i = 0; i < N_TRIMMED; i++)
        if (trimmed[i] == cp)
            return true;
    return false;
}

/* UTF-8 of cp into out (at least 4 bytes); returns its length. */
static size_t enc(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;

    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A small text assembled piece by piece. */
typedef struct text {
    char s[256];
    size_t n;
} text;

static void add_cp(text *t, uint32_t cp)
{
    assert_true(t->n + 4 <= sizeof t->s);
    t->n += enc(cp, t->s + t->n);
}

static void add_str(text *t, const char *s)
{
    size_t k = strlen(s);

    assert_true(t->n + k <= sizeof t->s);
    memcpy(t->s + t->n, s, k);
    t->n += k;
}

/* Trims s[0..n) from an exact-size heap copy; returns the offset and length
 * of what is left, relative to s. */
static void trim_copy(const char *s, size_t n, size_t *off, size_t *len)
{
    char *copy = malloc(n ? n : 1);
    const char *p;

    assert_non_null(copy);
    memcpy(copy, s, n);
    p = copy;
    *len = n;
    trim_white_space(&p, len);
    assert_true(p >= copy && p + *len <= copy + n);
    *off = (size_t)(p - copy);
    free(copy);
}

/* Trimming t leaves exactly want[0..want_len) at the end of a whitespace
 * prefix of pre bytes. */
static void expect_trim(const text *t, size_t pre, const char *want, size_t want_len,
                        const char *what, uint32_t cp)
{
    size_t off, len;

    trim_copy(t->s, t->n, &off, &len);
    if (off != pre || len != want_len || memcmp(t->s + off, want, len) != 0)
        fail_msg("%s U+%04X: left [%zu, +%zu), want [%zu, +%zu)", what, (unsigned)cp, off,
                 len, pre, want_len);
}

/* Every listed character alone, repeated, before, after and around a key,
 * and inside one (kept); and the neighbours, which are never trimmed. */
static void test_each_code_point(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_TRIMMED; i++) {
        uint32_t cp = trimmed[i];
        char one[4];
        size_t w = enc(cp, one);
        text t;

        t.n = 0, add_cp(&t, cp);
        expect_trim(&t, t.n, "", 0, "alone", cp);
        t.n = 0, add_cp(&t, cp), add_cp(&t, cp), add_cp(&t, cp);
        expect_trim(&t, t.n, "", 0, "three", cp);
        t.n = 0, add_cp(&t, cp), add_str(&t, "ORD1");
        expect_trim(&t, w, "ORD1", 4, "before", cp);
        t.n = 0, add_str(&t, "ORD1"), add_cp(&t, cp);
        expect_trim(&t, 0, "ORD1", 4, "after", cp);
        t.n = 0, add_cp(&t, cp), add_cp(&t, cp), add_str(&t, "ORD1"), add_cp(&t, cp);
        expect_trim(&t, 2 * w, "ORD1", 4, "around", cp);
        /* a multibyte key: the trim must not eat into its first or last character */
        t.n = 0, add_cp(&t, cp), add_str(&t, "\xe8\xae\xa2\xe5\x8d\x95"), add_cp(&t, cp);
        expect_trim(&t, w, "\xe8\xae\xa2\xe5\x8d\x95", 6, "around a CJK key", cp);
        t.n = 0, add_str(&t, "OR"), add_cp(&t, cp), add_str(&t, "D1");
        expect_trim(&t, 0, t.s, t.n, "inside", cp);
        t.n = 0, add_cp(&t, cp), add_str(&t, "O"), add_cp(&t, cp), add_cp(&t, cp),
        add_str(&t, "1"), add_cp(&t, cp);
        expect_trim(&t, w, t.s + w, 2 + 2 * w, "inside and around", cp);
    }
    for (size_t i = 0; i < N_KEPT; i++) {
        uint32_t cp = kept[i];
        text t;

        t.n = 0, add_cp(&t, cp);
        expect_trim(&t, 0, t.s, t.n, "kept alone", cp);
        t.n = 0, add_str(&t, " "), add_cp(&t, cp), add_str(&t, "K"), add_cp(&t, cp),
        add_str(&t, "\xe3\x80\x80");
        expect_trim(&t, 1, t.s + 1, t.n - 4, "kept at the ends", cp);
    }
    /* all of them at once, in both orders */
    {
        text t, want;
        size_t pre;

        t.n = 0;
        for (size_t i = 0; i < N_TRIMMED; i++)
            add_cp(&t, trimmed[i]);
        pre = t.n;
        want.n = 0, add_str(&want, "K"), add_cp(&want, 0x3000), add_str(&want, "1");
        add_str(&t, "K\xe3\x80\x80" "1");
        for (size_t i = N_TRIMMED; i-- > 0;)
            add_cp(&t, trimmed[i]);
        expect_trim(&t, pre, want.s, want.n, "all listed around", 0);
    }
}

/* Every scalar value of Unicode, alone and around a key, against the list. */
static void test_every_code_point(void **state)
{
    (void)state;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        text t;
        size_t w, off, len;

        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        t.n = 0, add_cp(&t, cp);
        w = t.n;
        trim_copy(t.s, t.n, &off, &len);
        if (in_trimmed(cp) ? len != 0 : (off != 0 || len != w))
            fail_msg("U+%04X alone: left [%zu, +%zu)", (unsigned)cp, off, len);
        add_str(&t, "x");
        add_cp(&t, cp);
        trim_copy(t.s, t.n, &off, &len);
        if (in_trimmed(cp) ? (off != w || len != 1) : (off != 0 || len != t.n))
            fail_msg("U+%04X around x: left [%zu, +%zu)", (unsigned)cp, off, len);
    }
}

/* Invalid UTF-8 is never split: only whole sequences of the list go.  The
 * record is then rejected by the UTF-8 check, as before. */
static void test_invalid_utf8(void **state)
{
    static const struct {
        const char *s;
        size_t off, len; /* what is left */
    } cases[] = {
        {"\xe3\x80", 0, 2},                 /* U+3000 cut short */
        {"\xe3", 0, 1},
        {"\xc2", 0, 1},                     /* U+00A0 cut short */
        {"\x80\x80", 0, 2},                 /* the tail of U+3000 */
        {"\xa0", 0, 1},                     /* the tail of U+00A0 */
        {"\xbb\xbf", 0, 2},                 /* the tail of U+FEFF */
        {"\xc0\xa0", 0, 2},                 /* overlong space */
        {"\xe0\x80\xa0", 0, 3},             /* overlong space */
        {"\xe0\x82\x85", 0, 3},             /* overlong U+0085 */
        {"ORD1\xe3\x80", 0, 6},
        {"\x80\x80ORD1", 0, 6},
        {"\xe3\x80\x80\xff", 3, 1},         /* U+3000 goes, the bad byte stays */
        {"\xff\xe3\x80\x80", 0, 1},
        {"\xe3\xe3\x80\x80", 0, 1},         /* a lone lead byte before U+3000 */
        {"\xe3\x80\x80\x80", 3, 1},         /* U+3000 goes, a stray continuation stays */
        {"\xc2\xc2\xa0", 0, 1},
        {"\xef\xbb", 0, 2},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].s), off, len;

        trim_copy(cases[i].s, n, &off, &len);
        if (off != cases[i].off || len != cases[i].len)
            fail_msg("invalid case %zu: left [%zu, +%zu), want [%zu, +%zu)", i, off, len,
                     cases[i].off, cases[i].len);
    }
    /* empty input: nothing read */
    {
        const char *p = NULL;
        size_t n = 0;

        trim_white_space(&p, &n);
        assert_null(p);
        assert_int_equal(n, 0);
    }
}

/* ---- through validate_record ---------------------------------------------- */

static const char *const good[COL_COUNT] = {
    [COL_TENANT_ID] = "42",
    [COL_CHANNEL] = "wechat",
    [COL_OUT_TRADE_NO] = "ORD1",
    [COL_CALLBACK_TYPE] = "pay",
    [COL_STATUS] = "1",
    [COL_PAYLOAD] = "{}",
    [COL_RECEIVED_AT] = "2026-03-01T02:00:00Z",
};

/* Validates the good row with column c replaced by v[0..n), as a CSV field
 * (raw = the field, checked for UTF-8) or as an NDJSON string (not). */
static bool validate_with(column c, const char *v, size_t n, bool ndjson, row *r, buf *reason)
{
    raw_record rec;

    memset(&rec, 0, sizeof rec);
    rec.line = 2;
    rec.raw = v;
    rec.raw_len = n;
    for (int k = 0; k < COL_COUNT; k++) {
        rec.fields[k].kind = FIELD_TEXT;
        rec.fields[k].jkind = JSON_KIND_STRING;
        rec.fields[k].text = k == (int)c ? v : good[k];
        rec.fields[k].len = k == (int)c ? n : strlen(good[k]);
    }
    buf_clear(reason);
    return validate_record(&rec, NULL, !ndjson, r, reason);
}

static void key_of(const row *r, column c, const char **p, size_t *n)
{
    switch (c) {
    case COL_CHANNEL:
        *p = r->channel, *n = r->channel_len;
        break;
    case COL_OUT_TRADE_NO:
        *p = r->out_trade_no, *n = r->out_trade_no_len;
        break;
    default:
        *p = r->callback_type, *n = r->callback_type_len;
        break;
    }
}

static const column key_cols[] = {COL_CHANNEL, COL_OUT_TRADE_NO, COL_CALLBACK_TYPE};

/* Each listed code point alone is a blank key, rejected with a clear reason
 * by validate_record (CSV and NDJSON) and validate_preset; around a key it
 * is trimmed; inside a key it is kept. */
static void test_keys(void **state)
{
    buf reason = BUF_INIT;

    (void)state;
    for (size_t i = 0; i < N_TRIMMED; i++) {
        uint32_t cp = trimmed[i];

        for (size_t k = 0; k < sizeof key_cols / sizeof key_cols[0]; k++) {
            column c = key_cols[k];
            char want[64];
            text t;
            row r;
            const char *p;
            size_t n;

            for (int nd = 0; nd < 2; nd++) {
                t.n = 0, add_cp(&t, cp);
                if (validate_with(c, t.s, t.n, nd, &r, &reason))
                    fail_msg("U+%04X alone as %s accepted", (unsigned)cp, column_name(c));
                snprintf(want, sizeof want, "%s is empty or blank", column_name(c));
                if (strstr(buf_cstr(&reason), want) == NULL)
                    fail_msg("U+%04X alone as %s: \"%s\"", (unsigned)cp, column_name(c),
                             buf_cstr(&reason));

                t.n = 0, add_cp(&t, cp), add_str(&t, "ORD1"), add_cp(&t, cp);
                if (!validate_with(c, t.s, t.n, nd, &r, &reason))
                    fail_msg("U+%04X around ORD1 as %s: %s", (unsigned)cp, column_name(c),
                             buf_cstr(&reason));
                key_of(&r, c, &p, &n);
                if (n != 4 || memcmp(p, "ORD1", 4) != 0)
                    fail_msg("U+%04X around ORD1 as %s: \"%.*s\"", (unsigned)cp,
                             column_name(c), (int)n, p);

                t.n = 0, add_str(&t, "OR"), add_cp(&t, cp), add_str(&t, "D1");
                if (!validate_with(c, t.s, t.n, nd, &r, &reason))
                    fail_msg("U+%04X inside as %s: %s", (unsigned)cp, column_name(c),
                             buf_cstr(&reason));
                key_of(&r, c, &p, &n);
                assert_int_equal(n, t.n);
                assert_memory_equal(p, t.s, n);

                /* the literal NULL, dressed in it, is still taken for a NULL */
                t.n = 0, add_cp(&t, cp), add_str(&t, "NULL"), add_cp(&t, cp);
                assert_false(validate_with(c, t.s, t.n, nd, &r, &reason));
                assert_non_null(strstr(buf_cstr(&reason), "taken for a NULL"));
            }

            /* --set: the same rule */
            t.n = 0, add_cp(&t, cp), add_cp(&t, cp);
            t.s[t.n] = '\0';
            buf_clear(&reason);
            if (validate_preset(c, t.s, &reason))
                fail_msg("--set %s=U+%04X accepted", column_name(c), (unsigned)cp);
            assert_non_null(strstr(buf_cstr(&reason), "is empty or blank"));
            t.n = 0, add_cp(&t, cp), add_str(&t, "wechat");
            t.s[t.n] = '\0';
            buf_clear(&reason);
            if (!validate_preset(c, t.s, &reason))
                fail_msg("--set %s=U+%04X wechat: %s", column_name(c), (unsigned)cp,
                         buf_cstr(&reason));
        }
    }
    buf_free(&reason);
}

/* The numbers and the timestamp are trimmed by the same rule. */
static void test_other_values(void **state)
{
    buf reason = BUF_INIT;
    row r;

    (void)state;
    for (size_t i = 0; i < N_TRIMMED; i++) {
        text t;

        t.n = 0, add_cp(&t, trimmed[i]), add_str(&t, "-7"), add_cp(&t, trimmed[i]);
        if (!validate_with(COL_TENANT_ID, t.s, t.n, false, &r, &reason))
            fail_msg("tenant_id around U+%04X: %s", (unsigned)trimmed[i], buf_cstr(&reason));
        assert_int_equal(r.tenant_id, -7);
        if (!validate_with(COL_STATUS, t.s, t.n, false, &r, &reason))
            fail_msg("status around U+%04X: %s", (unsigned)trimmed[i], buf_cstr(&reason));
        assert_int_equal(r.status, -7);
        t.n = 0, add_cp(&t, trimmed[i]), add_str(&t, "2026-03-01T02:00:00Z");
        add_cp(&t, trimmed[i]);
        if (!validate_with(COL_RECEIVED_AT, t.s, t.n, false, &r, &reason))
            fail_msg("received_at around U+%04X: %s", (unsigned)trimmed[i], buf_cstr(&reason));
        assert_int_equal(r.received_us, INT64_C(1772330400) * 1000000);
        /* inside a number it is not a digit */
        t.n = 0, add_str(&t, "4"), add_cp(&t, trimmed[i]), add_str(&t, "2");
        assert_false(validate_with(COL_TENANT_ID, t.s, t.n, false, &r, &reason));
        assert_non_null(strstr(buf_cstr(&reason), "tenant_id is not an integer"));
        /* alone: a required tenant_id is not an integer */
        t.n = 0, add_cp(&t, trimmed[i]);
        assert_false(validate_with(COL_TENANT_ID, t.s, t.n, false, &r, &reason));
    }
    /* the payload is JSON, kept as written: U+3000 around it is not JSON */
    assert_false(validate_with(COL_PAYLOAD, "\xe3\x80\x80{}", 5, false, &r, &reason));
    assert_non_null(strstr(buf_cstr(&reason), "payload is not valid JSON"));
    {
        int64_t v;

        assert_true(parse_int_in_range("\xe3\x80\x80 5\xc2\xa0", 7, 0, 10, &v));
        assert_int_equal(v, 5);
    }
    buf_free(&reason);
}

/* A key that is invalid UTF-8 is rejected as before, whatever white space
 * it is dressed in. */
static void test_invalid_key_rejected(void **state)
{
    static const char *const bad[] = {
        "\xe3\x80", "\xe3\x80\x80\xff", "\xff\xe3\x80\x80", "ORD1\xc2", "\xc0\xa0",
        "\xe3\x80\x80\x80",
    };
    buf reason = BUF_INIT;
    row r;

    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (validate_with(COL_OUT_TRADE_NO, bad[i], strlen(bad[i]), false, &r, &reason))
            fail_msg("invalid key %zu accepted", i);
        if (strstr(buf_cstr(&reason), "invalid UTF-8") == NULL)
            fail_msg("invalid key %zu: \"%s\"", i, buf_cstr(&reason));
        buf_clear(&reason);
        if (validate_preset(COL_OUT_TRADE_NO, bad[i], &reason))
            fail_msg("--set invalid key %zu accepted", i);
        assert_non_null(strstr(buf_cstr(&reason), "invalid UTF-8"));
    }
    buf_free(&reason);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_code_point),
        cmocka_unit_test(test_every_code_point),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_other_values),
        cmocka_unit_test(test_invalid_key_rejected),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
