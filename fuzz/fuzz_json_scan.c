/*
 * fuzz_json_scan.c - libFuzzer target: json_validate and json_scan_object
 * on arbitrary bytes (an exact-size buffer, so ASan sees any read past the
 * end), checked against each other and against jansson.
 *
 * Checked: the two functions agree (scan_object succeeds exactly when
 * validate says "object"); every member's key and value spans lie inside
 * the text, each value validates alone with the kind the scan reported,
 * the escaped flags match the presence of a backslash, and every string
 * with escapes decodes through jansson (the NDJSON reader relies on that).
 * Against jansson (JSON_DECODE_ANY): where one accepts and the other
 * refuses, the reason must be one of the documented differences: numbers
 * jansson cannot hold (beyond int64 or a double) or numeric cannot (out of
 * range), \u0000, nesting beyond JSON_MAX_DEPTH, and a NUL byte (which
 * jansson takes for the end of the text).
 *
 * Also differential (issue 31): on valid UTF-8, json_validate_utf8 gives
 * json_validate's answer, reason and offset; and byte_scan's SSE2 form
 * finds (and copies) what the portable one does, for the scanner's sets,
 * from every start in the text.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "rules/json_scan.h"
#include "rules/utf8.h"
#include "util/byte_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct scan_ctx {
    const char *text;
    size_t len;
    size_t members;
} scan_ctx;

static bool in_text(const scan_ctx *c, const char *p, size_t n)
{
    return p >= c->text && n <= c->len && (size_t)(p - c->text) <= c->len - n;
}

static void check_decodes(const char *quoted, size_t n)
{
    json_error_t jerr;
    json_t *v = json_loadb(quoted, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);

    if (v == NULL || !json_is_string(v))
        fuzz_fail("jansson cannot decode a string the scanner took: %s", jerr.text);
    json_decref(v);
}

static bool on_member(void *ctx, const json_member *m)
{
    scan_ctx *c = ctx;
    json_kind k;

    c->members++;
    fuzz_check(in_text(c, m->key, m->key_len));
    fuzz_check(m->key > c->text && m->key[-1] == '"' && m->key[m->key_len] == '"');
    fuzz_check(m->key_escaped == (memchr(m->key, '\\', m->key_len) != NULL));
    if (m->key_escaped)
        check_decodes(m->key - 1, m->key_len + 2);
    fuzz_check(in_text(c, m->value, m->value_len));
    fuzz_check(m->value > m->key + m->key_len);
    fuzz_check(json_validate(m->value, m->value_len, &k, NULL));
    fuzz_check(k == m->kind);
    if (m->kind == JSON_KIND_STRING) {
        fuzz_check(m->value_escaped == (memchr(m->value, '\\', m->value_len) != NULL));
        if (m->value_escaped)
            check_decodes(m->value, m->value_len);
    } else {
        fuzz_check(!m->value_escaped);
    }
    return true;
}

static bool allowed_difference(const char *reason)
{
    /* jansson also stops at a NUL byte as if the text ended there */
    return strcmp(reason, "number out of numeric range") == 0 ||
           strcmp(reason, "NUL byte") == 0 ||
           strcmp(reason, "\\u0000 is not allowed") == 0 ||
           strcmp(reason, "nesting too deep") == 0;
}

/* json_validate_utf8 against json_validate, where it applies. */
static void check_utf8_known(const char *text, size_t size, bool valid, json_kind kind,
                             const json_error *err)
{
    json_kind k = (json_kind)-1;
    json_error e = {NULL, 0};

    if (!utf8_check(text, size, NULL, NULL))
        return;
    fuzz_check(json_validate_utf8(text, size, &k, &e) == valid);
    if (valid)
        fuzz_check(k == kind);
    else
        fuzz_check(strcmp(e.reason, err->reason) == 0 && e.offset == err->offset);
}

/* byte_scan against byte_scan_portable from each start of the text. */
static void check_byte_scan(const char *text, size_t size)
{
    static const byte_set sets[] = {
        {'"', '\\', '\\', 0x20, true}, {'"', '\\', '\\', 0x20, false},
        {0, 0, 0, 0, true}, {',', '"', '\r', 0, false}, {'"', '\r', '\r', 0, false},
    };
    char *d1 = malloc(size ? size : 1);
    char *d2 = malloc(size ? size : 1);

    fuzz_check(d1 != NULL && d2 != NULL);
    for (size_t k = 0; k < sizeof sets / sizeof *sets; k++)
        for (size_t at = 0; at < size && at < 64; at++) {
            size_t want = byte_scan_portable(d1, text + at, size - at, sets[k]);
            fuzz_check(byte_scan(NULL, text + at, size - at, sets[k]) == want);
            fuzz_check(byte_scan(d2, text + at, size - at, sets[k]) == want);
            fuzz_check(want == 0 || memcmp(d1, d2, want) == 0);
        }
    free(d1);
    free(d2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    json_kind kind = (json_kind)-1;
    json_error err = {NULL, 0};
    bool valid = json_validate(text, size, &kind, &err);
    scan_ctx c = {text, size, 0};
    json_error serr = {NULL, 0};
    bool scanned = json_scan_object(text, size, on_member, &c, &serr);
    json_error_t jerr;
    json_t *j;

    if (valid) {
        fuzz_check(kind <= JSON_KIND_OBJECT);
    } else {
        fuzz_check(err.reason != NULL && err.offset <= size);
        fuzz_check(kind == (json_kind)-1);
    }
    fuzz_check(scanned == (valid && kind == JSON_KIND_OBJECT));
    if (!scanned) {
        fuzz_check(serr.reason != NULL && serr.offset <= size);
        if (valid)
            fuzz_check(strcmp(serr.reason, "not a JSON object") == 0);
    }
    /* validate with NULL outputs gives the same verdict */
    fuzz_check(json_validate(text, size, NULL, NULL) == valid);
    check_utf8_known(text, size, valid, kind, &err);
    check_byte_scan(text, size);

    j = json_loadb(text, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (valid && j == NULL) {
        /* jansson refuses numbers it cannot hold; nothing else */
        if (strstr(jerr.text, "too big") == NULL && strstr(jerr.text, "overflow") == NULL)
            fuzz_fail("jansson refuses what jsonb takes: %s", jerr.text);
    }
    if (!valid && j != NULL) {
        if (!allowed_difference(err.reason))
            fuzz_fail("refused \"%s\" at %zu, but jansson takes it", err.reason, err.offset);
    }
    json_decref(j);
    return 0;
}
