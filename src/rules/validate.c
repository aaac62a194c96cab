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

/*
 * White space and invisible characters at the ends of a value, as byte
 * patterns of their UTF-8 forms.  Every pattern is a whole well-formed
 * sequence whose lead byte (C2, E1, E2, E3, EF) is never a continuation
 * byte, so on valid UTF-8 a match is always a whole character, from either
 * end; on invalid UTF-8 only complete patterns match and nothing else moves.
 */

/* Length of the trimmable character starting at s[0] (n > 0), or 0. */
static size_t blank_len_at(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];

    if (c < 0x80)
        return c == ' ' || (c >= '\t' && c <= '\r'); /* TAB LF VT FF CR */
    if (c == 0xC2) /* U+0085 NEL, U+00A0 NO-BREAK SPACE */
        return n >= 2 && (s[1] == 0x85 || s[1] == 0xA0) ? 2 : 0;
    if (n < 3)
        return 0;
    switch (c) {
    case 0xE1: /* U+1680 OGHAM SPACE MARK */
        return s[1] == 0x9A && s[2] == 0x80 ? 3 : 0;
    case 0xE2:
        if (s[1] == 0x80) /* U+2000..U+200A spaces, U+200B..U+200D zero-width
                             space, non-joiner, joiner; U+2028, U+2029 line
                             and paragraph separators; U+202F narrow NBSP */
            return (s[2] >= 0x80 && s[2] <= 0x8D) || s[2] == 0xA8 || s[2] == 0xA9 ||
                           s[2] == 0xAF
                       ? 3
                       : 0;
        if (s[1] == 0x81) /* U+205F math space, U+2060 word joiner */
            return s[2] == 0x9F || s[2] == 0xA0 ? 3 : 0;
        return 0;
    case 0xE3: /* U+3000 IDEOGRAPHIC SPACE */
        return s[1] == 0x80 && s[2] == 0x80 ? 3 : 0;
    case 0xEF: /* U+FEFF ZERO WIDTH NO-BREAK SPACE (BOM) */
        return s[1] == 0xBB && s[2] == 0xBF ? 3 : 0;
    default:
        return 0;
    }
}

/* Length of the trimmable character ending at s[n - 1] (n > 0), or 0. */
static size_t blank_len_before(const unsigned char *s, size_t n)
{
    unsigned char c = s[n - 1];

    if (c < 0x80)
        return blank_len_at(s + n - 1, 1);
    if (n >= 2 && s[n - 2] == 0xC2)
        return blank_len_at(s + n - 2, 2);
    if (n >= 3 && blank_len_at(s + n - 3, 3) == 3)
        return 3;
    return 0;
}

void trim_white_space(const char **p, size_t *n)
{
    const unsigned char *s = (const unsigned char *)*p;
    size_t len = *n;
    size_t k;

    /* Fast path: a printable ASCII byte at an end ends the trim there, so
     * most keys cost two comparisons per end. */
    while (len > 0 && !(s[0] > ' ' && s[0] < 0x80) && (k = blank_len_at(s, len)) > 0) {
        s += k;
        len -= k;
    }
    while (len > 0 && !(s[len - 1] > ' ' && s[len - 1] < 0x80) &&
           (k = blank_len_before(s, len)) > 0)
        len -= k;
    *p = (const char *)s;
    *n = len;
}

/* How much of s[0..n) a reason quotes: at most max bytes, ending before a
 * UTF-8 character that would not fit whole, so that the reason stays text. */
static int quote_len(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return (int)n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return (int)max;
}

bool parse_int_in_range(const char *s, size_t n, int64_t min, int64_t max, int64_t *out)
{
    trim_white_space(&s, &n);
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
    trim_white_space(p, n);
    if (*n == 0) {
        buf_printf(reason, "%s is empty or blank (only white space or invisible characters)",
                   name);
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
        trim_white_space(&q, &m);
        buf_printf(reason, "%s is not an integer in [%lld, %lld]: \"%.*s\"", name,
                   (long long)min, (long long)max, quote_len(q, m, 40), q);
        return false;
    }
    return true;
}

/* received_at: a text with its UTC offset, as microseconds since the epoch. */
static bool received_at_column(const raw_record *rec, const presets *pre, int64_t *out_us,
                               buf *reason)
{
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
    trim_white_space(&p, &n);
    if (!ts_parse(p, n, out_us, &why)) {
        buf_printf(reason, "received_at: %s: \"%.*s\"", why, quote_len(p, n, 60), p);
        return false;
    }
    return true;
}

/*
 * payload: any JSON value but null, kept as written.  raw_utf8: the
 * record's raw text passed utf8_check.  A CSV field is that text with only
 * ASCII bytes taken out (quotes, blanks), so it is valid UTF-8 too, and the
 * JSON check need not look at its UTF-8 again (issue 31).
 */
static bool payload_column(const raw_record *rec, const presets *pre, bool raw_utf8, row *out,
                           buf *reason)
{
    const char *p;
    size_t n;
    json_kind jk;
    const field *pf = &rec->fields[COL_PAYLOAD];
    field_kind k = value_of(rec, pre, COL_PAYLOAD, &p, &n, &jk);
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
        return true;
    }
    /* CSV field or --set: JSON text to check as jsonb would. */
    json_kind kind;
    json_error jerr;
    bool utf8_known = raw_utf8 && pf->kind != FIELD_ABSENT;
    if (!(utf8_known ? json_validate_utf8 : json_validate)(p, n, &kind, &jerr)) {
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
#ifdef IDEMLOAD_TEST_EXTRA_COLUMN
    /* The test build's extra fact (core/columns.h), checked as a key's text. */
    if (!key_text(rec, pre, COL_TEST_FACT, &out->test_fact, &out->test_fact_len, reason))
        return false;
#endif
    return received_at_column(rec, pre, &out->received_us, reason) &&
           payload_column(rec, pre, check_utf8, out, reason);
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
        const char *t = value;
        size_t m = n;
        trim_white_space(&t, &m);
        ok = ts_parse(t, m, &r.received_us, &w);
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
