/*
 * test_copy_encode.c - COPY binary format: the header and trailer bytes of
 * PostgreSQL's documentation, one tuple byte for byte, and random rows
 * decoded back the way COPY FROM reads them (field count, big-endian
 * lengths and values, texts untouched whatever bytes they hold,
 * received_at on PostgreSQL's 2000-01-01 epoch).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "load/copy_encode.h"

static row mkrow(int64_t tenant, const char *ch, const char *otn, const char *cb,
                 int16_t status, const char *payload, int64_t us)
{
    row r;

    memset(&r, 0, sizeof r);
    r.tenant_id = tenant;
    r.channel = ch;
    r.channel_len = strlen(ch);
    r.out_trade_no = otn;
    r.out_trade_no_len = strlen(otn);
    r.callback_type = cb;
    r.callback_type_len = strlen(cb);
    r.status = status;
    r.payload = payload;
    r.payload_len = strlen(payload);
    r.received_us = us;
    return r;
}

static void test_header_and_trailer(void **state)
{
    buf out = BUF_INIT;

    (void)state;
    assert_true(copy_binary_header(&out));
    assert_int_equal(out.len, 19);
    assert_memory_equal(out.data, "PGCOPY\n\377\r\n\0", 11);
    assert_memory_equal(out.data + 11, "\0\0\0\0\0\0\0\0", 8); /* flags, extension */
    assert_true(copy_binary_trailer(&out));
    assert_int_equal(out.len, 21);
    assert_memory_equal(out.data + 19, "\377\377", 2);
    buf_free(&out);
}

static void test_one_row_bytes(void **state)
{
    /* 2026-03-01 02:00:00 UTC = 825645600 s after 2000-01-01 */
    row r = mkrow(42, "wx", "T1", "pay", 2, "{\"a\":1}", INT64_C(1772330400000000));
    static const unsigned char want[] = {
        0, 8,                                           /* fields */
        0, 0, 0, 4, 0, 0, 0, 7,                         /* ord 7 */
        0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 42,            /* tenant 42 */
        0, 0, 0, 2, 'w', 'x',                           /* channel */
        0, 0, 0, 2, 'T', '1',                           /* out_trade_no */
        0, 0, 0, 3, 'p', 'a', 'y',                      /* callback_type */
        0, 0, 0, 2, 0, 2,                               /* status 2 */
        0, 0, 0, 7, '{', '"', 'a', '"', ':', '1', '}',  /* payload as written */
        0, 0, 0, 8, 0, 0x02, 0xee, 0xeb, 0x98, 0xb2, 0xc8, 0x00, /* 825645600000000 us */
    };
    buf out = BUF_INIT;

    (void)state;
    assert_true(copy_binary_row(&out, 7, &r));
    assert_int_equal(out.len, sizeof want);
    assert_memory_equal(out.data, want, sizeof want);
    /* rows append one after another */
    assert_true(copy_binary_row(&out, 7, &r));
    assert_int_equal(out.len, 2 * sizeof want);
    assert_memory_equal(out.data + sizeof want, want, sizeof want);
    buf_free(&out);
}

/* Which texts are plain decimals, the numbers a reconcile row carries. */
static void test_plain_decimals(void **state)
{
    static const char *const plain[] = {"0", "-0", "007.50", "-12.3400", "1.0"};
    static const char *const other[] = {"", "-", "+1", "1.", ".5", "1e3", " 1", "1,000",
                                        "1.2.3", "--1", "0x10", "1.5 "};
    char long_one[COPY_PLAIN_MAX + 2];

    (void)state;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        assert_true(copy_plain_decimal(plain[i], strlen(plain[i])));
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        assert_false(copy_plain_decimal(other[i], strlen(other[i])));
    memset(long_one, '9', sizeof long_one);
    assert_true(copy_plain_decimal(long_one, COPY_PLAIN_MAX));
    assert_false(copy_plain_decimal(long_one, COPY_PLAIN_MAX + 1));
}

/* A reconcile row's amount as numeric's binary form: its field's bytes
 * (after the lead's fields: no level, no texts). */
static void assert_numeric(const char *text, bool magnitude, const unsigned char *want,
                           size_t n)
{
    row r = mkrow(1, "wx", "T1", "pay", 2, "{}", 0);
    copy_recon_lead lead = {.file_no = 1, .line = 1, .level = -1, .num = {text},
                            .num_len = {strlen(text)}, .magnitude = {magnitude}};
    buf out = BUF_INIT;

    assert_true(copy_binary_recon_row(&out, &lead, &r));
    size_t at = 2 + 8 + 12 + 5 + 4 + 5 + 4 * COPY_RECON_TEXTS;
    assert_true(out.len > at + n);
    assert_memory_equal(out.data + at, want, n);
    buf_free(&out);
}

static void test_numeric_fields(void **state)
{
    /* length; digits, weight, sign, display scale; base-10000 digits */
    static const unsigned char neg[] = {0, 0, 0, 12, 0, 2, 0, 0, 0x40, 0, 0, 4, 0, 12, 0x0d, 0x48};
    static const unsigned char tiny[] = {0, 0, 0, 10, 0, 1, 0xff, 0xfe, 0, 0, 0, 8, 0x04, 0xd2};
    static const unsigned char zero[] = {0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 2};
    static const unsigned char abs9[] = {0, 0, 0, 14, 0, 3, 0, 2, 0, 0, 0, 0,
                                         0, 1, 0x09, 0x29, 0x1a, 0x85};
    static const unsigned char round[] = {0, 0, 0, 10, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1};

    (void)state;
    assert_numeric("-0012.3400", false, neg, sizeof neg);
    assert_numeric("0.00001234", false, tiny, sizeof tiny);
    assert_numeric("-0.00", false, zero, sizeof zero);
    assert_numeric("-123456789", true, abs9, sizeof abs9);
    assert_numeric("10000", false, round, sizeof round);
}

/* The day after the numbers: PostgreSQL's date, or NULL; then whether
 * the currency is clean. */
static void test_recon_day_field(void **state)
{
    row r = mkrow(1, "wx", "T1", "pay", 2, "{}", 0);
    copy_recon_lead lead = {.file_no = 1, .line = 1, .level = -1, .has_day = true, .day = -1};
    buf out = BUF_INIT;
    size_t at = 2 + 8 + 12 + 5 + 4 + 5 + 4 * COPY_RECON_TEXTS + 4 * COPY_RECON_NUMBERS;
    static const unsigned char day[] = {0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff};
    static const unsigned char none[] = {0xff, 0xff, 0xff, 0xff};

    (void)state;
    assert_true(copy_binary_recon_row(&out, &lead, &r));
    assert_memory_equal(out.data + at, day, sizeof day);
    assert_memory_equal(out.data + at + sizeof day, "\0\0\0\1\0", 5); /* currency not clean */
    buf_clear(&out);
    lead.has_day = false;
    assert_true(copy_binary_recon_row(&out, &lead, &r));
    assert_memory_equal(out.data + at, none, sizeof none);
    buf_free(&out);
}

/* ---- decoding, as COPY FROM (FORMAT binary) reads a tuple ---- */

static uint64_t get(const unsigned char **p, int bytes)
{
    uint64_t v = 0;

    for (int i = 0; i < bytes; i++)
        v = (v << 8) | (*p)[i];
    *p += bytes;
    return v;
}

/* The next field: returns its bytes and length (asserting it is not NULL). */
static const unsigned char *field(const unsigned char **p, size_t *len)
{
    uint64_t n = get(p, 4);
    const unsigned char *f = *p;

    assert_true(n != 0xffffffffu);
    *len = (size_t)n;
    *p += n;
    return f;
}

static void test_round_trip(void **state)
{
    static const char alphabet[] = "\\\t\n\r\0N.\"{}\xc3\xa9 \xff";
    static const int64_t tenants[] = {0, -1, INT64_MIN, INT64_MAX, 42};
    static const int64_t instants[] = {0, 1, -1, PG_EPOCH_OFFSET_US, INT64_C(253402300799999999),
                                       INT64_C(-62135596800000000)};
    uint32_t x = 99;
    buf out = BUF_INIT;

    (void)state;
    for (int iter = 0; iter < 3000; iter++) {
        char texts[4][40];
        size_t lens[4];
        row r;

        for (int t = 0; t < 4; t++) {
            x = x * 1103515245u + 12345u;
            lens[t] = (x >> 16) % 39;
            for (size_t k = 0; k < lens[t]; k++) {
                x = x * 1103515245u + 12345u;
                texts[t][k] = alphabet[(x >> 16) % (sizeof alphabet - 1)];
            }
        }
        r = mkrow(tenants[iter % 5], "", "", "", (int16_t)(iter * 37 - 32768), "",
                  instants[iter % 6] + iter);
        r.channel = texts[0];
        r.channel_len = lens[0];
        r.out_trade_no = texts[1];
        r.out_trade_no_len = lens[1];
        r.callback_type = texts[2];
        r.callback_type_len = lens[2];
        r.payload = texts[3];
        r.payload_len = lens[3];
        buf_clear(&out);
        assert_true(copy_binary_row(&out, iter - 1500, &r));

        const unsigned char *p = (const unsigned char *)out.data;
        const unsigned char *f;
        size_t n;

        assert_int_equal(get(&p, 2), 8);
        f = field(&p, &n);
        assert_int_equal(n, 4);
        assert_int_equal((int32_t)get(&f, 4), iter - 1500);
        f = field(&p, &n);
        assert_int_equal(n, 8);
        assert_true((int64_t)get(&f, 8) == r.tenant_id);
        for (int t = 0; t < 3; t++) {
            f = field(&p, &n);
            assert_int_equal(n, lens[t]);
            if (n)
                assert_memory_equal(f, texts[t], n);
        }
        f = field(&p, &n);
        assert_int_equal(n, 2);
        assert_int_equal((int16_t)get(&f, 2), r.status);
        f = field(&p, &n);
        assert_int_equal(n, lens[3]);
        if (n)
            assert_memory_equal(f, texts[3], n);
        f = field(&p, &n);
        assert_int_equal(n, 8);
        assert_true((int64_t)get(&f, 8) == r.received_us - PG_EPOCH_OFFSET_US);
        assert_ptr_equal(p, (const unsigned char *)out.data + out.len);
    }
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_and_trailer),
        cmocka_unit_test(test_one_row_bytes),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_plain_decimals),
        cmocka_unit_test(test_numeric_fields),
        cmocka_unit_test(test_recon_day_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
