/*
 * fuzz_validate.c - libFuzzer target: trim_white_space and the key rules of
 * validate_record and validate_preset on arbitrary bytes (SPEC.md
 * "Validation", first rule).
 *
 * Input: one option byte, then up to seven fields separated by 0xFF (a byte
 * that never occurs in UTF-8), for out_trade_no, channel, callback_type,
 * tenant_id, status, received_at and payload in that order; a column with
 * no field gets a good value.  Option bits: 0, the record is CSV (raw text
 * checked for UTF-8 by validate_record) rather than NDJSON (already valid
 * UTF-8: inputs that are not are skipped); 1..3, out_trade_no, channel,
 * callback_type come as --set values instead of fields.
 *
 * Checked, against the independent reference of fuzz_white_space.h:
 * trim_white_space leaves a slice of its text, takes only whole listed
 * characters, is idempotent, and on valid UTF-8 equals the reference trim;
 * an accepted row's keys are never empty, never begin or end with a listed
 * character, equal the reference trim of their field and are not the text
 * NULL or \N; a key the reference trims to nothing is never accepted; and
 * validate_preset agrees.  Every buffer is an exact-size heap copy, so ASan
 * sees any read past a text.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_input.h"
#include "fuzz_white_space.h"
#include "rules/utf8.h"
#include "rules/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_PARTS 7

static const column part_col[N_PARTS] = {
    COL_OUT_TRADE_NO, COL_CHANNEL, COL_CALLBACK_TYPE, COL_TENANT_ID,
    COL_STATUS, COL_RECEIVED_AT, COL_PAYLOAD,
};

static const char *const good[COL_COUNT] = {
    [COL_TENANT_ID] = "42",
    [COL_CHANNEL] = "wechat",
    [COL_OUT_TRADE_NO] = "T-1",
    [COL_CALLBACK_TYPE] = "pay",
    [COL_STATUS] = "1",
    [COL_PAYLOAD] = "{}",
    [COL_RECEIVED_AT] = "2026-03-01T10:00:00+08:00",
};

static char *copy_of(const void *p, size_t n)
{
    char *c = malloc(n + 1);

    if (c == NULL)
        fuzz_fail("out of memory");
    if (n > 0)
        memcpy(c, p, n);
    c[n] = '\0';
    return c;
}

/* trim_white_space on s[0..n) (an exact-size copy) against the reference. */
static void check_trim(const char *s, size_t n)
{
    char *c = n ? copy_of(s, n) : NULL;
    const char *p = c;
    const char *q;
    size_t len = n, len2, off, roff, rlen;
    bool valid = utf8_check(s, n, NULL, NULL);

    trim_white_space(&p, &len);
    if (n == 0) {
        fuzz_check(p == NULL && len == 0);
        return;
    }
    fuzz_check(p >= c && len <= n && (size_t)(p - c) + len <= n);
    off = (size_t)(p - c);
    /* what went were whole listed characters, at both ends */
    fuzz_check(ref_all_trimmed((const unsigned char *)c, off));
    fuzz_check(ref_all_trimmed((const unsigned char *)p + len, n - off - len));
    /* idempotent */
    q = p;
    len2 = len;
    trim_white_space(&q, &len2);
    fuzz_check(q == p && len2 == len);
    if (valid) {
        ref_trim((const unsigned char *)c, n, &roff, &rlen);
        if (roff != off || rlen != len)
            fuzz_fail("trim left [%zu, +%zu), reference [%zu, +%zu)", off, len, roff, rlen);
        fuzz_check(len == 0 || (ref_trimmed_at((const unsigned char *)p, len) == 0 &&
                                ref_trimmed_before((const unsigned char *)p, len) == 0));
    }
    free(c);
}

static bool taken_for_null(const char *p, size_t n)
{
    return (n == 4 && strncasecmp(p, "null", 4) == 0) || (n == 2 && memcmp(p, "\\N", 2) == 0);
}

static void key_of(const row *r, column c, const char **p, size_t *n)
{
    if (c == COL_CHANNEL)
        *p = r->channel, *n = r->channel_len;
    else if (c == COL_OUT_TRADE_NO)
        *p = r->out_trade_no, *n = r->out_trade_no_len;
    else
        *p = r->callback_type, *n = r->callback_type_len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *part[N_PARTS];
    size_t part_len[N_PARTS];
    char *owned[N_PARTS] = {0};
    size_t nparts = 0;
    bool csv, valid = true;
    raw_record rec;
    presets pre;
    row r;
    buf reason = BUF_INIT, raw = BUF_INIT;

    if (size < 1)
        return 0;
    csv = data[0] & 1;
    /* split on 0xFF into exact-size copies */
    for (size_t i = 1, start = 1; i <= size && nparts < N_PARTS; i++) {
        if (i == size || data[i] == 0xFF) {
            owned[nparts] = copy_of(data + start, i - start);
            part[nparts] = owned[nparts];
            part_len[nparts] = i - start;
            nparts++;
            start = i + 1;
        }
    }
    for (size_t i = 0; i < nparts; i++) {
        check_trim(part[i], part_len[i]);
        valid = valid && utf8_check(part[i], part_len[i], NULL, NULL);
    }
    if (!csv && !valid)
        goto out; /* an NDJSON reader hands over valid UTF-8 only */

    memset(&rec, 0, sizeof rec);
    memset(&pre, 0, sizeof pre);
    rec.line = 1;
    for (size_t k = 0; k < N_PARTS; k++) {
        column c = part_col[k];
        field *f = &rec.fields[c];
        const char *t = k < nparts ? part[k] : good[c];
        size_t n = k < nparts ? part_len[k] : strlen(good[c]);

        if (k < 3 && (data[0] & (2 << k)) && memchr(t, 0, n) == NULL) {
            f->kind = FIELD_ABSENT;
            pre.value[c] = t;
        } else {
            f->kind = FIELD_TEXT;
            f->jkind = JSON_KIND_STRING;
            f->text = t;
            f->len = n;
        }
        if (k > 0 && !buf_append_char(&raw, ','))
            fuzz_fail("out of memory");
        if (!buf_append(&raw, t, n))
            fuzz_fail("out of memory");
    }
    rec.raw = raw.data;
    rec.raw_len = raw.len;

    bool ok = validate_record(&rec, &pre, csv, &r, &reason);

    fuzz_check(ok == (reason.len == 0));
    for (size_t k = 0; k < 3; k++) {
        column c = part_col[k];
        const char *t = pre.value[c] ? pre.value[c] : rec.fields[c].text;
        size_t n = pre.value[c] ? strlen(pre.value[c]) : rec.fields[c].len;
        size_t roff, rlen;
        bool can_pass;

        ref_trim((const unsigned char *)t, n, &roff, &rlen);
        can_pass = rlen > 0 && !taken_for_null(t + roff, rlen);
        /* trimming never leaves an empty (or NULL) key that is accepted */
        if (!can_pass)
            fuzz_check(!ok);
        if (ok) {
            const char *p;
            size_t len;

            key_of(&r, c, &p, &len);
            fuzz_check(len > 0 && p == t + roff && len == rlen);
            fuzz_check(ref_trimmed_at((const unsigned char *)p, len) == 0);
            fuzz_check(ref_trimmed_before((const unsigned char *)p, len) == 0);
        }
        /* --set takes the same value exactly when the key rule does */
        if (memchr(t, 0, n) == NULL) {
            char *v = copy_of(t, n);
            bool pok;

            buf_clear(&reason);
            pok = validate_preset(c, v, &reason);
            fuzz_check(pok == (reason.len == 0));
            fuzz_check(pok == (can_pass && utf8_check(v, n, NULL, NULL)));
            free(v);
        }
    }
out:
    for (size_t i = 0; i < nparts; i++)
        free(owned[i]);
    buf_free(&reason);
    buf_free(&raw);
    return 0;
}
