/*
 * json_scan.c - a non-allocating JSON checker that accepts what PostgreSQL
 * 15's jsonb input accepts, plus a splitter for one object's top-level
 * members.
 *
 * The scanner is iterative: nesting is tracked with a depth counter and one
 * bit per open container (object or array), so hostile input cannot grow the
 * C stack.  Strings are skipped sixteen bytes at a time (byte_scan) while
 * they hold plain bytes; UTF-8 is decoded only to be checked, never
 * converted, and not even that when the caller has checked it already
 * (json_validate_utf8).
 *
 * Where we differ from jsonb on purpose:
 *   - nesting deeper than JSON_MAX_DEPTH (10,000) is refused; jsonb recurses
 *     until max_stack_depth (2MB by default: 12,000 levels of objects or
 *     arrays pass on PostgreSQL 15, 15,000 do not), so the two agree up to
 *     10,000 with the default settings; a server set lower refuses a deep
 *     row in the merge (54001), which isolates it as a rejected row;
 *   - jsonb's size limits (about 256MB per document, 2^28 pairs) are not
 *     checked here; PostgreSQL still refuses such a document at load time.
 * Everything else, including numeric's range, matches jsonb exactly (checked
 * against a live PostgreSQL 15 with many thousands of generated strings).
 */
#include "rules/json_scan.h"

#include <stdint.h>
#include <string.h>

#include "util/byte_scan.h"

/*
 * Limits of PostgreSQL's numeric type, which jsonb uses for every number:
 * the base-10000 weight of the first nonzero digit is an int16 (so the
 * decimal weight is at most 4 * 32767 + 3), the display scale is at most
 * 0x3FFF, and numeric_in refuses any exponent of magnitude INT_MAX / 2 or
 * more before looking at the digits.
 */
#define NUMERIC_MAX_DEC_WEIGHT 131071
#define NUMERIC_MAX_DSCALE 16383
#define NUMERIC_MAX_EXPONENT 1073741823 /* INT_MAX / 2, itself refused */

#define WS_MASK ((UINT64_C(1) << ' ') | (UINT64_C(1) << '\t') | \
                 (UINT64_C(1) << '\n') | (UINT64_C(1) << '\r'))

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* One bit per nesting level: set while that level is an object. */
typedef struct nest_bits {
    uint64_t word[JSON_MAX_DEPTH / 64 + 1];
} nest_bits;

static bool fail(json_error *err, const char *reason, size_t offset)
{
    if (err != NULL) {
        err->reason = reason;
        err->offset = offset;
    }
    return false;
}

/* A byte no rule expected: name NUL bytes, which are worth telling apart. */
static bool fail_byte(json_error *err, const unsigned char *s, size_t len, size_t pos,
                      const char *reason)
{
    if (pos >= len)
        return fail(err, "unexpected end of input", pos);
    if (s[pos] == '\0')
        return fail(err, "NUL byte", pos);
    return fail(err, reason, pos);
}

static inline size_t skip_ws(const unsigned char *s, size_t len, size_t pos)
{
    while (pos < len && s[pos] <= ' ' && ((UINT64_C(1) << s[pos]) & WS_MASK) != 0)
        pos++;
    return pos;
}

static inline bool is_digit(unsigned char c)
{
    return (unsigned char)(c - '0') < 10;
}

static inline int hex_value(unsigned char c)
{
    if (is_digit(c))
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Length of the valid UTF-8 sequence (RFC 3629) at s, or 0: refuses
 * continuation bytes on their own, overlong forms, UTF-16 surrogates, code
 * points above U+10FFFF and sequences cut short by the end of the text. */
static size_t utf8_sequence(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;

    if (c < 0xC2)
        return 0;
    if (c < 0xE0)
        return (avail >= 2 && s[1] >= 0x80 && s[1] <= 0xBF) ? 2 : 0;
    if (c < 0xF0) {
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
        if (avail < 3 || s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80)
            return 0;
        return 3;
    }
    if (c < 0xF5) {
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
        if (avail < 4 || s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

/* Reads the four hex digits after "\u" at s[pos]; -1 if they are not there. */
static long read_u_escape(const unsigned char *s, size_t len, size_t pos)
{
    long v = 0;

    if (len - pos < 6 || s[pos] != '\\' || s[pos + 1] != 'u')
        return -1;
    for (size_t i = pos + 2; i < pos + 6; i++) {
        int h = hex_value(s[i]);

        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/*
 * Checks the escape whose backslash is at s[*pos] and moves *pos past it.
 * jsonb decodes every escape, so it refuses \u0000 (text cannot hold it) and
 * any surrogate escape that is not a high one directly followed by a low one.
 */
static bool scan_escape(const unsigned char *s, size_t len, size_t *pos, json_error *err)
{
    size_t at = *pos;
    long cp;

    if (at + 1 >= len)
        return fail(err, "unterminated string", at);
    switch (s[at + 1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        *pos = at + 2;
        return true;
    case 'u':
        break;
    default:
        return fail(err, "invalid escape in string", at);
    }
    cp = read_u_escape(s, len, at);
    if (cp < 0)
        return fail(err, "invalid \\u escape", at);
    if (cp == 0)
        return fail(err, "\\u0000 is not allowed", at);
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail(err, "unpaired low surrogate escape", at);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        long low = read_u_escape(s, len, at + 6);

        if (low < 0xDC00 || low > 0xDFFF)
            return fail(err, "unpaired high surrogate escape", at);
        *pos = at + 12;
        return true;
    }
    *pos = at + 6;
    return true;
}

/* What ends a run of bytes a string holds as themselves: printable ASCII
 * but " and \, and UTF-8 unless it is known to be valid.  Two calls with
 * constant sets, so that each byte_scan is compiled for its own set. */
static inline size_t plain_run(const unsigned char *s, size_t len, size_t p, bool utf8_known)
{
    static const byte_set ends_any = {'"', '\\', '\\', 0x20, true};
    static const byte_set ends_known = {'"', '\\', '\\', 0x20, false};

    if (utf8_known)
        return byte_scan(NULL, (const char *)s + p, len - p, ends_known);
    return byte_scan(NULL, (const char *)s + p, len - p, ends_any);
}

/*
 * scan_string from s[p] on, the first byte there not plain: escapes,
 * control characters and UTF-8.  Kept out of scan_string so that the
 * common string, plain bytes up to its closing quote, costs a short call.
 */
static NOINLINE bool scan_string_rest(const unsigned char *s, size_t len, size_t *pos,
                                      size_t p, bool *escaped, bool utf8_known,
                                      json_error *err)
{
    bool esc = false;

    for (;;) {
        if (p >= len)
            return fail(err, "unterminated string", *pos);

        unsigned char c = s[p];

        if (c == '"')
            break;
        if (c == '\\') {
            if (!scan_escape(s, len, &p, err))
                return false;
            esc = true;
        } else if (c < 0x20) {
            return fail_byte(err, s, len, p, "control character in string");
        } else {
            size_t n = utf8_sequence(s + p, len - p);

            if (n == 0)
                return fail(err, "invalid UTF-8", p);
            p += n;
        }
        p += plain_run(s, len, p, utf8_known);
    }
    *pos = p + 1;
    if (escaped != NULL)
        *escaped = esc;
    return true;
}

/*
 * Checks the string whose opening quote is at s[*pos]; on success moves
 * *pos past the closing quote and tells whether any escape was seen.
 */
static inline bool scan_string(const unsigned char *s, size_t len, size_t *pos, bool *escaped,
                               bool utf8_known, json_error *err)
{
    size_t p = *pos + 1;

    p += plain_run(s, len, p, utf8_known);
    if (p < len && s[p] == '"') {
        *pos = p + 1;
        if (escaped != NULL)
            *escaped = false;
        return true;
    }
    return scan_string_rest(s, len, pos, p, escaped, utf8_known, err);
}

/*
 * Would numeric_in take this number (already known to be grammatical)?
 * Mirrors PostgreSQL 15's set_var_from_str and make_result: the exponent
 * must stay under INT_MAX / 2, the display scale (fraction digits minus
 * exponent) under 0x3FFF even for zero, and the first nonzero digit's
 * base-10000 weight must fit an int16.
 */
static bool numeric_fits(const unsigned char *ip, size_t int_len, const unsigned char *fp,
                         size_t frac_len, const unsigned char *ep, size_t exp_len, bool exp_neg)
{
    int64_t e = 0;
    int64_t dscale;
    int64_t weight;
    size_t i;

    for (i = 0; i < exp_len; i++) {
        e = e * 10 + (ep[i] - '0');
        if (e >= NUMERIC_MAX_EXPONENT)
            return false;
    }
    if (exp_neg)
        e = -e;
    if (frac_len > NUMERIC_MAX_DSCALE + (size_t)NUMERIC_MAX_EXPONENT)
        return false;
    dscale = (int64_t)frac_len - e;
    if (dscale > NUMERIC_MAX_DSCALE)
        return false;

    for (i = 0; i < int_len && ip[i] == '0'; i++)
        ;
    if (i < int_len) {
        weight = (int64_t)(int_len - 1 - i) + e;
    } else {
        for (i = 0; i < frac_len && fp[i] == '0'; i++)
            ;
        if (i == frac_len)
            return true; /* zero: its weight is forced to 0 */
        weight = -(int64_t)(i + 1) + e;
    }
    return weight <= NUMERIC_MAX_DEC_WEIGHT;
}

/*
 * Checks the number starting at s[*pos] (a '-' or a digit) against
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and numeric's range, and
 * moves *pos past it.  What follows is the caller's business.
 */
static bool scan_number(const unsigned char *s, size_t len, size_t *pos, json_error *err)
{
    size_t start = *pos;
    size_t p = start;
    size_t int_start, int_len;
    size_t frac_start = 0, frac_len = 0;
    size_t exp_start = 0, exp_len = 0;
    bool exp_neg = false;
    bool has_exp = false;

    if (s[p] == '-')
        p++;
    int_start = p;
    if (p >= len || !is_digit(s[p]))
        return fail_byte(err, s, len, p, "digit expected in number");
    if (s[p] == '0') {
        p++;
        if (p < len && is_digit(s[p]))
            return fail(err, "leading zero in number", start);
    } else {
        while (p < len && is_digit(s[p]))
            p++;
    }
    int_len = p - int_start;
    if (p < len && s[p] == '.') {
        frac_start = ++p;
        while (p < len && is_digit(s[p]))
            p++;
        frac_len = p - frac_start;
        if (frac_len == 0)
            return fail_byte(err, s, len, p, "digit expected after '.'");
    }
    if (p < len && (s[p] | 0x20) == 'e') {
        has_exp = true;
        p++;
        if (p < len && (s[p] == '+' || s[p] == '-'))
            exp_neg = s[p++] == '-';
        exp_start = p;
        while (p < len && is_digit(s[p]))
            p++;
        exp_len = p - exp_start;
        if (exp_len == 0)
            return fail_byte(err, s, len, p, "digit expected in exponent");
    }
    /* Without an exponent only absurd digit counts can leave numeric's range. */
    if ((has_exp || int_len > NUMERIC_MAX_DEC_WEIGHT + 1 || frac_len > NUMERIC_MAX_DSCALE) &&
        !numeric_fits(s + int_start, int_len, s + frac_start, frac_len, s + exp_start, exp_len,
                      exp_neg))
        return fail(err, "number out of numeric range", start);
    *pos = p;
    return true;
}

static bool scan_literal(const unsigned char *s, size_t len, size_t *pos, const char *word,
                         size_t word_len, json_error *err)
{
    if (len - *pos < word_len || memcmp(s + *pos, word, word_len) != 0)
        return fail_byte(err, s, len, *pos, "invalid literal");
    *pos += word_len;
    return true;
}

/*
 * Checks "key" : at s[*pos] and leaves *pos at the value that follows.
 * *key_end (may be NULL) gets the offset just past the key's closing quote.
 */
static bool scan_key(const unsigned char *s, size_t len, size_t *pos, size_t *key_end,
                     bool *escaped, bool utf8_known, json_error *err)
{
    size_t p = *pos;

    if (p >= len || s[p] != '"')
        return fail_byte(err, s, len, p, "expected a string key");
    if (!scan_string(s, len, &p, escaped, utf8_known, err))
        return false;
    if (key_end != NULL)
        *key_end = p;
    p = skip_ws(s, len, p);
    if (p >= len || s[p] != ':')
        return fail_byte(err, s, len, p, "expected ':'");
    *pos = skip_ws(s, len, p + 1);
    return true;
}

static json_kind kind_of(unsigned char first)
{
    switch (first) {
    case '{': return JSON_KIND_OBJECT;
    case '[': return JSON_KIND_ARRAY;
    case '"': return JSON_KIND_STRING;
    case 't': case 'f': return JSON_KIND_BOOL;
    case 'n': return JSON_KIND_NULL;
    default: return JSON_KIND_NUMBER;
    }
}

/*
 * Checks one complete value starting exactly at s[*pos] (no white space
 * first), nested inside `depth` containers already, and moves *pos just past
 * it.  *escaped tells whether a string value held an escape.
 */
/*
 * The scalar at *p (a string, true, false, null or a number), *p moved past
 * it; *esc, when not NULL, says whether a string held an escape.
 */
static bool scan_scalar(const unsigned char *s, size_t len, size_t *p, bool *esc,
                        bool utf8_known, json_error *err)
{
    switch (s[*p]) {
    case '"':
        return scan_string(s, len, p, esc, utf8_known, err);
    case 't':
        return scan_literal(s, len, p, "true", 4, err);
    case 'f':
        return scan_literal(s, len, p, "false", 5, err);
    case 'n':
        return scan_literal(s, len, p, "null", 4, err);
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return scan_number(s, len, p, err);
    default:
        return fail_byte(err, s, len, *p, "expected a value");
    }
}

/*
 * Opens the object or array at *p.  Returns 1 when it holds elements: one
 * level deeper, its kind noted in *nest, *p at its first value (an object's
 * first key read); 0 when it is empty, *p past it; -1 on an error.
 */
static int open_container(const unsigned char *s, size_t len, size_t *p, unsigned *depth,
                          nest_bits *nest, bool utf8_known, json_error *err)
{
    unsigned char c = s[*p];
    unsigned char close = c == '{' ? '}' : ']';

    if (*depth >= JSON_MAX_DEPTH) {
        fail(err, "nesting too deep", *p);
        return -1;
    }
    *p = skip_ws(s, len, *p + 1);
    if (*p < len && s[*p] == close) {
        (*p)++;
        return 0; /* empty: nothing stays open */
    }
    unsigned d = ++*depth;
    if (c == '{') {
        nest->word[d / 64] |= UINT64_C(1) << (d % 64);
        if (!scan_key(s, len, p, NULL, NULL, utf8_known, err))
            return -1;
    } else {
        nest->word[d / 64] &= ~(UINT64_C(1) << (d % 64));
    }
    return 1;
}

/*
 * After a value: closes containers until one takes another element (1, *p
 * at it, an object's key read) or the depth is back at base (0).  -1 on an
 * error.
 */
static int close_containers(const unsigned char *s, size_t len, size_t *p, unsigned *depth,
                            unsigned base, const nest_bits *nest, bool utf8_known,
                            json_error *err)
{
    for (;;) {
        if (*depth == base)
            return 0;
        unsigned d = *depth;
        bool in_object = (nest->word[d / 64] >> (d % 64)) & 1;
        *p = skip_ws(s, len, *p);
        if (*p < len && s[*p] == ',') {
            *p = skip_ws(s, len, *p + 1);
            if (in_object && !scan_key(s, len, p, NULL, NULL, utf8_known, err))
                return -1;
            return 1;
        }
        if (*p < len && s[*p] == (in_object ? '}' : ']')) {
            (*p)++;
            (*depth)--;
            continue;
        }
        fail_byte(err, s, len, *p, in_object ? "expected ',' or '}'" : "expected ',' or ']'");
        return -1;
    }
}

static bool scan_value(const unsigned char *s, size_t len, size_t *pos, unsigned depth,
                       bool *escaped, bool utf8_known, json_error *err)
{
    const unsigned base = depth;
    nest_bits nest;
    size_t p = *pos;
    bool esc = false;

    for (;;) {
        if (p >= len)
            return fail(err, "unexpected end of input", p);
        if (s[p] == '{' || s[p] == '[') {
            int opened = open_container(s, len, &p, &depth, &nest, utf8_known, err);
            if (opened < 0)
                return false;
            if (opened > 0)
                continue; /* on to the first element */
        } else {
            /* Only a string that is the whole value counts as escaped. */
            if (!scan_scalar(s, len, &p, depth == base ? &esc : NULL, utf8_known, err))
                return false;
        }
        /* A value just ended: close containers until one takes another element. */
        int more = close_containers(s, len, &p, &depth, base, &nest, utf8_known, err);
        if (more < 0)
            return false;
        if (more == 0) {
            *pos = p;
            if (escaped != NULL)
                *escaped = esc;
            return true;
        }
    }
}

/* json_validate and json_validate_utf8: utf8_known skips the UTF-8 check
 * of strings, which is the only place the scanner meets bytes >= 0x80. */
static bool validate_text(const char *text, size_t len, json_kind *kind, bool utf8_known,
                          json_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t p = skip_ws(s, len, 0);
    size_t start = p;

    if (p >= len)
        return fail(err, "empty input", p);
    if (!scan_value(s, len, &p, 0, NULL, utf8_known, err))
        return false;
    p = skip_ws(s, len, p);
    if (p < len)
        return fail_byte(err, s, len, p, "trailing characters after the value");
    if (kind != NULL)
        *kind = kind_of(s[start]);
    return true;
}

bool json_validate(const char *text, size_t len, json_kind *kind, json_error *err)
{
    return validate_text(text, len, kind, false, err);
}

bool json_validate_utf8(const char *text, size_t len, json_kind *kind, json_error *err)
{
    return validate_text(text, len, kind, true, err);
}

bool json_scan_object(const char *text, size_t len, json_member_fn fn, void *ctx,
                      json_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t p = skip_ws(s, len, 0);

    if (p >= len)
        return fail(err, "empty input", p);
    if (s[p] != '{') {
        size_t start = p;

        if (!json_validate(text, len, NULL, err))
            return false;
        return fail(err, "not a JSON object", start);
    }
    p = skip_ws(s, len, p + 1);
    if (p < len && s[p] == '}') {
        p = skip_ws(s, len, p + 1);
        if (p < len)
            return fail_byte(err, s, len, p, "trailing characters after the value");
        return true;
    }
    for (;;) {
        json_member m;
        size_t key_at = p;
        size_t key_end;
        size_t value_at;

        if (!scan_key(s, len, &p, &key_end, &m.key_escaped, false, err))
            return false;
        value_at = p;
        m.value_escaped = false;
        if (!scan_value(s, len, &p, 1, &m.value_escaped, false, err))
            return false;
        m.key = text + key_at + 1;
        m.key_len = key_end - key_at - 2;
        m.value = text + value_at;
        m.value_len = p - value_at;
        m.kind = kind_of(s[value_at]);
        if (fn != NULL && !fn(ctx, &m))
            return fail(err, "stopped", key_at);

        p = skip_ws(s, len, p);
        if (p < len && s[p] == ',') {
            p = skip_ws(s, len, p + 1);
            continue;
        }
        if (p < len && s[p] == '}')
            break;
        return fail_byte(err, s, len, p, "expected ',' or '}'");
    }
    p = skip_ws(s, len, p + 1);
    if (p < len)
        return fail_byte(err, s, len, p, "trailing characters after the value");
    return true;
}
