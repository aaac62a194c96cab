/*
 * fuzz_template.c - libFuzzer target: profile templates ("{column}" to a
 * value, "{{" and "}}" for braces) checked by the profile parser, compiled
 * against a bill's header and expanded for its rows.
 *
 * The input is a template, a NUL, then a bill (a header and rows) read with
 * a profile whose callback_type is that template.  Invariants: a template
 * the parser refuses has a message; one it takes compiles against any
 * header; a row is rejected with a reason or has a callback_type, and when
 * the template names no column, every row's callback_type is the template
 * with its doubled braces made single (computed here independently).
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_input.h"
#include "input/profile.h"
#include "input/reader.h"
#include "input/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The template's text when it names no column ("{{" -> "{", "}}" -> "}"),
 * or NULL when it names one. */
static char *literal_of(const char *t)
{
    size_t n = strlen(t);
    char *o = malloc(n + 1), *q = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if ((t[i] == '{' || t[i] == '}') && t[i + 1] == t[i]) {
            *q++ = t[i++];
            continue;
        }
        if (t[i] == '{') {
            free(o);
            return NULL;
        }
        *q++ = t[i];
    }
    *q = '\0';
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    if (!nul)
        return 0;
    size_t tlen = (size_t)(nul - data);
    char *tmpl = strndup((const char *)data, tlen);
    fuzz_check(tmpl != NULL);
    json_t *t = json_stringn(tmpl, tlen);
    if (!t) { /* not UTF-8: JSON cannot hold it, nor can a profile */
        free(tmpl);
        return 0;
    }
    json_t *pj = json_pack("{s:s, s:s, s:s, s:s, s:{s:{s:s}, s:{s:[s]}, s:{s:O}, s:{s:s}, "
                           "s:{s:[s]}, s:{s:s}}}",
                           "name", "fz", "encoding", "utf-8", "timezone", "+00:00",
                           "delimiter", ",", "columns",
                           "channel", "value", "fz", "out_trade_no", "from", "a",
                           "callback_type", "value", t, "status", "value", "0",
                           "received_at", "from", "t", "tenant_id", "value", "1");
    json_decref(t);
    fuzz_check(pj != NULL);
    char *text = json_dumps(pj, JSON_COMPACT);
    json_decref(pj);
    fuzz_check(text != NULL);
    buf err = BUF_INIT;
    profile *pf = profile_parse(text, strlen(text), "fuzz.json", &err);
    free(text);
    if (!pf) {
        fuzz_check(err.len > 0);
        free(tmpl);
        buf_free(&err);
        return 0;
    }
    char *lit = literal_of(tmpl);
    reader_options opt;
    memset(&opt, 0, sizeof opt);
    opt.profile = pf;
    source *src = source_open(fuzz_input_file(nul + 1, size - tlen - 1), &err);
    if (!src)
        fuzz_fail("source_open: %s", buf_cstr(&err));
    reader *r = reader_open(src, "fuzz-input", &opt, &err);
    if (!r) {
        fuzz_check(err.len > 0);
    } else {
        raw_record rec;
        read_result rr;
        while ((rr = reader_next(r, &rec)) == READ_RECORD) {
            if (rec.error || rec.skipped) {
                fuzz_check(!rec.error || rec.error[0] != '\0');
                continue;
            }
            const field *ct = &rec.fields[COL_CALLBACK_TYPE];
            fuzz_check(ct->kind != FIELD_ABSENT);
            if (lit)
                fuzz_check(ct->len == strlen(lit) && memcmp(ct->text, lit, ct->len) == 0);
        }
        fuzz_check(rr == READ_EOF || rr == READ_FAILED);
        if (rr == READ_FAILED)
            fuzz_check(reader_error(r)[0] != '\0');
        reader_close(&r);
    }
    source_close(&src);
    profile_free(&pf);
    free(lit);
    free(tmpl);
    buf_free(&err);
    return 0;
}
