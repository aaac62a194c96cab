/*
 * test_copy_encode.c - COPY text format: backslash, tab, LF and CR escaped
 * in every text value and nothing else; a text "\N" must not come out as
 * the NULL marker; whole rows with their eight columns; and random texts
 * decoded back the way PostgreSQL's COPY FROM reads them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_encode.h"
#include "timestamp.h"

typedef struct esc_case {
    const char *in;
    size_t in_len;
    const char *out;
} esc_case;

#define E(i, o) {i, sizeof(i) - 1, o}

static const esc_case esc_cases[] = {
    E("", ""),
    E("plain", "plain"),
    E("\\", "\\\\"),
    E("\\N", "\\\\N"),               /* the text \N, not NULL */
    E("\t", "\\t"),
    E("\n", "\\n"),
    E("\r", "\\r"),
    E("\r\n", "\\r\\n"),
    E("a\tb\nc\rd\\e", "a\\tb\\nc\\rd\\\\e"),
    E("\\\\\\", "\\\\\\\\\\\\"),
    E("{\"a\":\"x\\ny\"}", "{\"a\":\"x\\\\ny\"}"), /* a JSON escape stays an escape */
    E("\x01\x08\x0b\x0c\x1f\x7f", "\x01\x08\x0b\x0c\x1f\x7f"), /* other controls pass */
    E("caf\xc3\xa9 \xe5\xbe\xae\xe4\xbf\xa1", "caf\xc3\xa9 \xe5\xbe\xae\xe4\xbf\xa1"),
    E(".", "."),
    E("\\.", "\\\\."),               /* never the end-of-data marker */
};

static void test_escape_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof esc_cases / sizeof esc_cases[0]; i++) {
        buf out = BUF_INIT;

        assert_true(copy_escape(&out, esc_cases[i].in, esc_cases[i].in_len));
        if (out.len != strlen(esc_cases[i].out) ||
            memcmp(out.data, esc_cases[i].out, out.len) != 0)
            fail_msg("case %zu: \"%s\"", i, buf_cstr(&out));
        assert_int_equal(out.data[out.len], '\0');
        /* appending keeps what was there */
        assert_true(copy_escape(&out, "\t", 1));
        assert_int_equal(out.len, strlen(esc_cases[i].out) + 2);
        assert_memory_equal(out.data + out.len - 2, "\\t", 2);
        buf_free(&out);
    }
}

/* Worst case (every byte escaped) on a buffer that must grow a lot. */
static void test_escape_growth(void **state)
{
    size_t n = 1 << 20;
    char *in = malloc(n);
    buf out = BUF_INIT;

    (void)state;
    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
        in[i] = "\\\t\n\r"[i % 4];
    assert_true(buf_append_str(&out, "prefix"));
    assert_true(copy_escape(&out, in, n));
    assert_int_equal(out.len, 6 + 2 * n);
    for (size_t i = 0; i < n; i++) {
        const char *two = out.data + 6 + 2 * i;

        assert_int_equal(two[0], '\\');
        assert_int_equal(two[1], "\\tnr"[i % 4]);
    }
    buf_free(&out);
    free(in);
}

static row mkrow(int64_t tenant, const char *ch, const char *otn, const char *cb, int16_t status,
                 const char *payload, int64_t us)
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

static void test_rows(void **state)
{
    static const struct {
        int ord;
        int64_t tenant;
        const char *ch, *otn, *cb;
        int16_t status;
        const char *payload;
        int64_t us;
        const char *line;
    } cases[] = {
        {0, 42, "wechat", "T1", "pay", 2, "{\"a\":1}", INT64_C(1772330400000000),
         "0\t42\twechat\tT1\tpay\t2\t{\"a\":1}\t2026-03-01 02:00:00.000000+00\n"},
        {7, -1, "a\tb", "x\ny", "c\\d", -32768, "\"s\\n\"", 1,
         "7\t-1\ta\\tb\tx\\ny\tc\\\\d\t-32768\t\"s\\\\n\"\t1970-01-01 00:00:00.000001+00\n"},
        {2147483647, INT64_MIN, "\\N", "\r", ".", 32767, "123456789012345678901234567890", -1,
         "2147483647\t-9223372036854775808\t\\\\N\t\\r\t.\t32767\t"
         "123456789012345678901234567890\t1969-12-31 23:59:59.999999+00\n"},
        {1, INT64_MAX, "\xe5\xbe\xae", "o", "t", 0, "1e400", INT64_C(253402300799999999),
         "1\t9223372036854775807\t\xe5\xbe\xae\to\tt\t0\t1e400\t9999-12-31 23:59:59.999999+00\n"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        row r = mkrow(cases[i].tenant, cases[i].ch, cases[i].otn, cases[i].cb, cases[i].status,
                      cases[i].payload, cases[i].us);
        buf out = BUF_INIT;

        assert_true(copy_encode_row(&out, cases[i].ord, &r));
        if (strcmp(buf_cstr(&out), cases[i].line) != 0)
            fail_msg("row %zu: \"%s\"", i, buf_cstr(&out));
        /* rows append one after another */
        assert_true(copy_encode_row(&out, cases[i].ord, &r));
        assert_int_equal(out.len, 2 * strlen(cases[i].line));
        buf_free(&out);
    }
}

/* ---- round trip ----------------------------------------------------------- */

/* Splits one COPY text line into fields and undoes the escapes, as
 * PostgreSQL's CopyReadAttributesText does; fails on a bare "\N". */
static size_t decode_line(const char *line, size_t len, char **fields, size_t *lens, size_t max)
{
    size_t nf = 0, i = 0;

    assert_true(len > 0 && line[len - 1] == '\n');
    len--;
    while (nf < max) {
        size_t k = 0;
        char *f = malloc(len + 1);

        assert_non_null(f);
        if (len - i >= 2 && line[i] == '\\' && line[i + 1] == 'N' &&
            (i + 2 == len || line[i + 2] == '\t'))
            fail_msg("field %zu would read as NULL", nf);
        while (i < len && line[i] != '\t') {
            char c = line[i++];

            assert_true(c != '\n' && c != '\r'); /* never raw in a line */
            if (c == '\\') {
                assert_true(i < len);
                c = line[i++];
                switch (c) {
                case 't':
                    c = '\t';
                    break;
                case 'n':
                    c = '\n';
                    break;
                case 'r':
                    c = '\r';
                    break;
                case '\\':
                    break;
                default:
                    fail_msg("unexpected escape \\%c", c);
                }
            }
            f[k++] = c;
        }
        fields[nf] = f;
        lens[nf] = k;
        nf++;
        if (i == len)
            break;
        i++; /* the tab */
    }
    return nf;
}

static void test_round_trip(void **state)
{
    static const char alphabet[] = "\\\t\n\rNa.\"{}\xc3\xa9 ";
    uint32_t x = 99;
    buf out = BUF_INIT;

    (void)state;
    for (int iter = 0; iter < 3000; iter++) {
        char texts[4][40];
        size_t lens[4];
        row r;
        char *fields[10];
        size_t flens[10];
        size_t nf;
        char ts[TS_FORMAT_MAX];

        for (int t = 0; t < 4; t++) {
            x = x * 1103515245u + 12345u;
            lens[t] = (x >> 16) % 39;
            for (size_t k = 0; k < lens[t]; k++) {
                x = x * 1103515245u + 12345u;
                texts[t][k] = alphabet[(x >> 16) % (sizeof alphabet - 1)];
            }
            texts[t][lens[t]] = '\0';
        }
        r = mkrow(iter * 7919 - 1000000, texts[0], texts[1], texts[2], (int16_t)(iter - 1500),
                  texts[3], (int64_t)iter * 1000003);
        /* mkrow used strlen; the texts hold no NUL */
        buf_clear(&out);
        assert_true(copy_encode_row(&out, iter, &r));
        nf = decode_line(out.data, out.len, fields, flens, 10);
        assert_int_equal(nf, 8);
        {
            char num[32];

            snprintf(num, sizeof num, "%d", iter);
            assert_int_equal(flens[0], strlen(num));
            assert_memory_equal(fields[0], num, flens[0]);
            snprintf(num, sizeof num, "%d", iter * 7919 - 1000000);
            assert_memory_equal(fields[1], num, flens[1]);
            snprintf(num, sizeof num, "%d", iter - 1500);
            assert_memory_equal(fields[5], num, flens[5]);
        }
        assert_int_equal(flens[2], lens[0]);
        assert_memory_equal(fields[2], texts[0], lens[0]);
        assert_int_equal(flens[3], lens[1]);
        assert_memory_equal(fields[3], texts[1], lens[1]);
        assert_int_equal(flens[4], lens[2]);
        assert_memory_equal(fields[4], texts[2], lens[2]);
        assert_int_equal(flens[6], lens[3]);
        assert_memory_equal(fields[6], texts[3], lens[3]);
        ts_format(r.received_us, ts);
        assert_int_equal(flens[7], strlen(ts));
        assert_memory_equal(fields[7], ts, flens[7]);
        for (size_t f = 0; f < nf; f++)
            free(fields[f]);
    }
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_table),
        cmocka_unit_test(test_escape_growth),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
