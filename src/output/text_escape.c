/*
 * text_escape.c - control characters shown as their codes (see
 * text_escape.h).
 */
#include "output/text_escape.h"

#include <string.h>

#include "rules/utf8.h"

size_t text_control_width(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
        return 0;
    if (u[0] < 0x20 || u[0] == 0x7F)
        return 1;
    if (n >= 2 && u[0] == 0xC2 && u[1] >= 0x80 && u[1] <= 0x9F)
        return 2; /* C1: U+0080-U+009F (0x9B is CSI on some terminals) */
    if (n >= 3 && u[0] == 0xE2 &&
        ((u[1] == 0x80 && (u[2] == 0x8E || u[2] == 0x8F)) ||
         (u[1] == 0x80 && u[2] >= 0xA8 && u[2] <= 0xAE) ||
         (u[1] == 0x81 && u[2] >= 0xA6 && u[2] <= 0xA9)))
        return 3; /* U+200E-U+200F (LRM, RLM), U+2028-U+2029 (line and
                   * paragraph separators: a log
                   * viewer or a mail may break the line there), U+202A-U+202E,
                   * U+2066-U+2069 */
    return 0;
}

unsigned text_control_code(const char *s, size_t w)
{
    const unsigned char *u = (const unsigned char *)s;
    if (w == 1)
        return u[0];
    if (w == 2)
        return ((unsigned)(u[0] & 0x1F) << 6) | (u[1] & 0x3F);
    return ((unsigned)(u[0] & 0x0F) << 12) | ((unsigned)(u[1] & 0x3F) << 6) | (u[2] & 0x3F);
}

bool text_escape_walk(buf *out, const char *s, size_t n, text_escape_one one,
                      text_escape_bad bad)
{
    bool ok = true;
    while (n > 0) {
        size_t good = n, bad_at;
        bool is_nul;
        if (!utf8_check(s, n, &bad_at, &is_nul))
            good = bad_at;
        size_t start = 0;
        for (size_t i = 0; i < good;) {
            char tmp[16];
            const char *instead = NULL;
            size_t w = one(s + i, good - i, tmp, &instead);
            if (w == 0) {
                i++;
                continue;
            }
            ok = buf_append(out, s + start, i - start) && buf_append_str(out, instead) && ok;
            i += w;
            start = i;
        }
        ok = buf_append(out, s + start, good - start) && ok;
        if (good == n)
            break;
        char tmp[16];
        ok = buf_append_str(out, bad((unsigned char)s[good], is_nul, tmp)) && ok;
        s += good + 1;
        n -= good + 1;
    }
    return ok;
}

static size_t term_one(const char *s, size_t n, char tmp[16], const char **instead)
{
    size_t w = text_control_width(s, n);
    if (w > 0) {
        snprintf(tmp, 16, "\\u%04X", text_control_code(s, w));
        *instead = tmp;
    }
    return w;
}

/* A NUL is valid UTF-8 but utf8_check stops at it: a control. */
const char *text_escape_bad_code(unsigned char c, bool is_nul, char tmp[16])
{
    snprintf(tmp, 16, is_nul ? "\\u%04X" : "\\x%02X", c);
    return tmp;
}

bool text_escape_term(buf *out, const char *s, size_t n)
{
    return text_escape_walk(out, s, n, term_one, text_escape_bad_code);
}

bool text_utf8_or_escaped(buf *out, const char *s)
{
    size_t n = strlen(s), bad;
    bool is_nul, valid = true, ok = true;
    while (!utf8_check(s, n, &bad, &is_nul)) {
        char code[8];
        snprintf(code, sizeof code, "\\x%02X", (unsigned char)s[bad]);
        ok = buf_append(out, s, bad) && buf_append_str(out, code) && ok;
        s += bad + 1;
        n -= bad + 1;
        valid = false;
    }
    ok = buf_append(out, s, n) && ok;
    return valid && ok;
}

bool text_base64(buf *out, const void *p, size_t n)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *u = p;
    bool ok = buf_reserve(out, (n + 2) / 3 * 4);
    for (size_t i = 0; i < n && ok; i += 3) {
        unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) |
                     (i + 2 < n ? u[i + 2] : 0);
        char q[4] = {digits[v >> 18 & 63], digits[v >> 12 & 63],
                     i + 1 < n ? digits[v >> 6 & 63] : '=', i + 2 < n ? digits[v & 63] : '='};
        ok = buf_append(out, q, 4);
    }
    return ok;
}

void text_fput_term(FILE *fp, const char *s)
{
    if (!s)
        return;
    buf b = BUF_INIT;
    if (text_escape_term(&b, s, strlen(s)) && b.data)
        fputs(b.data, fp);
    buf_free(&b);
}
