/*
 * test_validate_edges.c - edges of validate.c's reasons that test_validate.c
 * leaves out: a bad tenant_id or status is quoted up to 40 bytes and a bad
 * received_at up to 60, never cutting a UTF-8 character in two (the reason
 * goes to stderr and the rejects file as text), and the quote is what the
 * field holds, trimmed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/utf8.h"
#include "rules/validate.h"

static const char *const good[COL_COUNT] = {
    [COL_TENANT_ID] = "42",
    [COL_CHANNEL] = "wechat",
    [COL_OUT_TRADE_NO] = "T-1",
    [COL_CALLBACK_TYPE] = "pay",
    [COL_STATUS] = "1",
    [COL_PAYLOAD] = "{}",
    [COL_RECEIVED_AT] = "2026-03-01T02:00:00Z",
};

/* Validates the good row with column c set to v (a CSV field); the row must
 * be rejected; returns the quoted part of the reason (between the last two
 * double quotes), in a static buffer. */
static const char *quoted(column c, const char *v)
{
    static char out[256];
    raw_record rec;
    row r;
    buf reason = BUF_INIT;
    const char *end, *start;

    memset(&rec, 0, sizeof rec);
    rec.line = 1;
    rec.raw = v;
    rec.raw_len = strlen(v);
    for (int k = 0; k < COL_COUNT; k++) {
        rec.fields[k].kind = FIELD_TEXT;
        rec.fields[k].text = k == (int)c ? v : good[k];
        rec.fields[k].len = strlen(rec.fields[k].text);
    }
    if (validate_record(&rec, NULL, true, &r, &reason))
        fail_msg("%s=\"%s\" accepted", column_name(c), v);
    if (!utf8_check(reason.data, reason.len, NULL, NULL))
        fail_msg("%s=\"%s\": the reason is not valid UTF-8: %s", column_name(c), v,
                 buf_cstr(&reason));
    end = strrchr(buf_cstr(&reason), '"');
    assert_non_null(end);
    start = end - 1;
    while (start >= reason.data && *start != '"')
        start--;
    assert_true(start >= reason.data);
    assert_true((size_t)(end - start - 1) < sizeof out);
    memcpy(out, start + 1, (size_t)(end - start - 1));
    out[end - start - 1] = '\0';
    buf_free(&reason);
    return out;
}

static char *repeat(const char *unit, size_t times, const char *prefix)
{
    size_t u = strlen(unit), p = strlen(prefix);
    char *s = malloc(p + u * times + 1);

    assert_non_null(s);
    memcpy(s, prefix, p);
    for (size_t i = 0; i < times; i++)
        memcpy(s + p + i * u, unit, u);
    s[p + u * times] = '\0';
    return s;
}

/* ASCII: the first 40 (numbers) or 60 (received_at) bytes, trimmed. */
static void test_ascii_lengths(void **state)
{
    static const struct {
        column col;
        size_t limit;
    } cols[] = {{COL_TENANT_ID, 40}, {COL_STATUS, 40}, {COL_RECEIVED_AT, 60}};

    (void)state;
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        size_t lim = cols[i].limit;
        size_t lens[] = {1, lim - 1, lim, lim + 1, 2 * lim};

        for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
            char *v = repeat("x", lens[j], "");
            char *dressed;
            size_t want = lens[j] < lim ? lens[j] : lim;
            const char *q = quoted(cols[i].col, v);

            if (strlen(q) != want || strncmp(q, v, want) != 0)
                fail_msg("%s of %zu x: quoted \"%s\" (%zu), want %zu bytes",
                         column_name(cols[i].col), lens[j], q, strlen(q), want);
            /* white space around the value is not quoted */
            dressed = malloc(strlen(v) + 8);
            assert_non_null(dressed);
            sprintf(dressed, "\xe3\x80\x80 %s\t\xc2\xa0", v);
            q = quoted(cols[i].col, dressed);
            if (strlen(q) != want || strncmp(q, v, want) != 0)
                fail_msg("%s of %zu x in white space: quoted \"%s\"", column_name(cols[i].col),
                         lens[j], q);
            free(dressed);
            free(v);
        }
    }
}

/* Multibyte characters across the limit: the quote stops before the
 * character that would not fit whole, whatever its length and position. */
static void test_no_cut_character(void **state)
{
    static const char *const units[] = {"\xc3\xa9", "\xe4\xb8\x80", "\xf0\x9f\x98\x80"};
    static const struct {
        column col;
        size_t limit;
    } cols[] = {{COL_TENANT_ID, 40}, {COL_STATUS, 40}, {COL_RECEIVED_AT, 60}};

    (void)state;
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            size_t w = strlen(units[u]);

            for (size_t pre = 0; pre < 4; pre++) {
                char prefix[8];
                char *v;
                const char *q;
                size_t want;

                memset(prefix, 'x', pre);
                prefix[pre] = '\0';
                v = repeat(units[u], cols[i].limit, prefix);
                /* whole characters that fit after the prefix */
                want = pre + (cols[i].limit - pre) / w * w;
                q = quoted(cols[i].col, v);
                if (strlen(q) != want || strncmp(q, v, want) != 0)
                    fail_msg("%s: %zu x then %zu-byte characters: quoted %zu bytes, want %zu",
                             column_name(cols[i].col), pre, w, strlen(q), want);
                free(v);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_lengths),
        cmocka_unit_test(test_no_cut_character),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
