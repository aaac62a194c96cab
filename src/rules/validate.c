/*
 * validate.c - the row rules of SPEC.md "Validation" (see validate.h).
 */
#include "rules/validate.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "rules/json_scan.h"
#include "rules/timestamp.h"
#include "rules/utf8.h"

static bool is_blank_char(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static void trim(const char **p, size_t *n)
{
    while (*n > 0 && is_blank_char(**p)) {
        (*p)++;
        (*n)--;
    }
    while (*n > 0 && is_blank_char((*p)[*n - 1]))
        (*n)--;
}

bool parse_int_in_range(const char *s, size_t n, int64_t min, int64_t max, int64_t *out)
{
    trim(&s, &n);
    if (n == 0)
        return false;
    bool neg = false;
    size_t i = 0;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return false;
    uint64_t v = 0;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    int64_t r = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    if (r < min || r > max)
        return false;
    *out = r;
    return true;
}

/* The text of field f, or of the preset when the column is absent.  Returns
 * the field kind seen (FIELD_ABSENT when neither). */
static field_kind value_of(const raw_record *rec, const presets *pre, column c,
                           const char **p, size_t *n, json_kind *jkind)
{
    const field *f = &rec->fields[c];
    if (f->kind == FIELD_ABSENT && pre && pre->value[c]) {
        *p = pre->value[c];
        *n = strlen(pre->value[c]);
        *jkind = JSON_KIND_STRING;
        return FIELD_TEXT;
    }
    *p = f->text;
    *n = f->len;
    *jkind = f->jkind;
    return f->kind;
}

static bool key_text(const raw_record *rec, const presets *pre, column c,
                     const char **p, size_t *n, buf *reason)
{
    json_kind jk;
    field_kind k = value_of(rec, pre, c, p, n, &jk);
    const char *name = column_name(c);
    if (k == FIELD_ABSENT) {
        buf_printf(reason, "%s is missing", name);
        return false;
    }
    if (k == FIELD_NULL) {
        buf_printf(reason, "%s is empty or null", name);
        return false;
    }
    if (k == FIELD_JSON && jk != JSON_KIND_NUMBER) {
        buf_printf(reason, "%s must be a string", name);
        return false;
    }
    trim(p, n);
    if (*n == 0) {
        buf_printf(reason, "%s is empty or blank", name);
        return false;
    }
    if ((*n == 4 && strncasecmp(*p, "null", 4) == 0) || (*n == 2 && memcmp(*p, "\\N", 2) == 0)) {
        buf_printf(reason, "%s is the text %.*s, taken for a NULL", name, (int)*n, *p);
        return false;
    }
    return true;
}

static bool int_column(const raw_record *rec, const presets *pre, column c, int64_t min,
                       int64_t max, bool required, int64_t *out, buf *reason)
{
    const char *p;
    size_t n;
    json_kind jk;
    field_kind k = value_of(rec, pre, c, &p, &n, &jk);
    const char *name = column_name(c);
    if (k == FIELD_ABSENT || k == FIELD_NULL || (k == FIELD_TEXT && n == 0)) {
        if (required) {
            buf_printf(reason, "%s is %s", name, k == FIELD_ABSENT ? "missing" : "empty");
            return false;
        }
        *out = 0;
        return true;
    }
    if (k == FIELD_JSON && jk != JSON_KIND_NUMBER) {
        buf_printf(reason, "%s must be an integer", name);
        return false;
    }
    if (!parse_int_in_range(p, n, min, max, out)) {
        const char *q = p;
        size_t m = n;
        trim(&q, &m);
        if (m > 40)
            m = 40;
        buf_printf(reason, "%s is not an integer in [%lld, %lld]: \"%.*s\"", name,
                   (long long)min, (long long)max, (int)m, q);
        return false;
    }
    return true;
}

bool validate_record(const raw_record *rec, const presets *pre, bool check_utf8,
                     row *out, buf *reason)
{
    memset(out, 0, sizeof *out);
    out->line = rec->line;
    out->raw = rec->raw;
    out->raw_len = rec->raw_len;
    if (rec->error) {
        buf_append_str(reason, rec->error);
        return false;
    }
    if (check_utf8) {
        size_t bad;
        bool is_nul;
        if (!utf8_check(rec->raw, rec->raw_len, &bad, &is_nul)) {
            buf_printf(reason, "%s at byte %zu of the record",
                       is_nul ? "NUL byte" : "invalid UTF-8", bad + 1);
            return false;
        }
    }
    int64_t v;
    if (!int_column(rec, pre, COL_TENANT_ID, INT64_MIN, INT64_MAX, true, &v, reason))
        return false;
    out->tenant_id = v;
    if (!key_text(rec, pre, COL_CHANNEL, &out->channel, &out->channel_len, reason) ||
        !key_text(rec, pre, COL_OUT_TRADE_NO, &out->out_trade_no, &out->out_trade_no_len, reason) ||
        !key_text(rec, pre, COL_CALLBACK_TYPE, &out->callback_type, &out->callback_type_len, reason))
        return false;
    if (!int_column(rec, pre, COL_STATUS, INT16_MIN, INT16_MAX, false, &v, reason))
        return false;
    out->status = (int16_t)v;

    const char *p;
    size_t n;
    json_kind jk;
    field_kind k = value_of(rec, pre, COL_RECEIVED_AT, &p, &n, &jk);
    if (k == FIELD_ABSENT || k == FIELD_NULL || (k == FIELD_TEXT && n == 0)) {
        buf_append_str(reason, "received_at is missing");
        return false;
    }
    const char *why;
    if (k != FIELD_TEXT) {
        buf_append_str(reason, "received_at must be a string");
        return false;
    }
    if (!ts_parse(p, n, &out->received_us, &why)) {
        trim(&p, &n);
        buf_printf(reason, "received_at: %s: \"%.*s\"", why, (int)(n > 60 ? 60 : n), p);
        return false;
    }

    const field *pf = &rec->fields[COL_PAYLOAD];
    k = value_of(rec, pre, COL_PAYLOAD, &p, &n, &jk);
    if (k == FIELD_ABSENT) {
        buf_append_str(reason, "payload is missing");
        return false;
    }
    if (k == FIELD_NULL) {
        buf_append_str(reason, "payload is null");
        return false;
    }
    if (pf->kind != FIELD_ABSENT && pf->json) {
        /* NDJSON: the member's own JSON text, validated by the reader. */
        out->payload = pf->json;
        out->payload_len = pf->json_len;
    } else {
        /* CSV field or --set: JSON text to check as jsonb would. */
        json_kind kind;
        json_error jerr;
        if (!json_validate(p, n, &kind, &jerr)) {
            buf_printf(reason, "payload is not valid JSON: %s at byte %zu", jerr.reason,
                       jerr.offset + 1);
            return false;
        }
        if (kind == JSON_KIND_NULL) {
            buf_append_str(reason, "payload is JSON null");
            return false;
        }
        out->payload = p;
        out->payload_len = n;
    }
    return true;
}

bool validate_preset(column c, const char *value, buf *reason)
{
    raw_record rec;
    memset(&rec, 0, sizeof rec);
    presets pre;
    memset(&pre, 0, sizeof pre);
    pre.value[c] = value;
    size_t n = strlen(value);
    size_t bad;
    bool is_nul;
    if (!utf8_check(value, n, &bad, &is_nul)) {
        buf_printf(reason, "--set %s: invalid UTF-8", column_name(c));
        return false;
    }
    row r;
    buf why = BUF_INIT;
    bool ok = true;
    int64_t v;
    switch (c) {
    case COL_TENANT_ID:
        ok = int_column(&rec, &pre, c, INT64_MIN, INT64_MAX, true, &v, &why);
        break;
    case COL_STATUS:
        ok = int_column(&rec, &pre, c, INT16_MIN, INT16_MAX, true, &v, &why);
        break;
    case COL_RECEIVED_AT: {
        const char *w;
        ok = ts_parse(value, n, &r.received_us, &w);
        if (!ok)
            buf_printf(&why, "received_at: %s", w);
        break;
    }
    case COL_PAYLOAD: {
        json_kind kind;
        json_error jerr;
        ok = json_validate(value, n, &kind, &jerr) && kind != JSON_KIND_NULL;
        if (!ok)
            buf_append_str(&why, "payload is not valid JSON or is null");
        break;
    }
    default:
        ok = key_text(&rec, &pre, c, &r.channel, &r.channel_len, &why);
        break;
    }
    if (!ok)
        buf_printf(reason, "--set %s=%s: %s", column_name(c), value, buf_cstr(&why));
    buf_free(&why);
    return ok;
}
