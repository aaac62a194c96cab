/*
 * fuzz_text_escape.c - libFuzzer target: the escaping at the terminal and
 * page boundaries (output/text_escape.c, html_escape) and the --table
 * name parser (target_parse_arg), on arbitrary bytes.
 *
 * Invariants: the terminal text is valid UTF-8 with no C0, DEL, C1 or
 * bidirectional control; the page text is valid UTF-8 with no '<', '>',
 * '"', '\'' or control other than tab and newline, and no bidirectional
 * control; a name the parser takes, quoted again part by part, parses back
 * to the same parts.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/target.h"
#include "fuzz_input.h"
#include "output/html.h"
#include "output/text_escape.h"
#include "rules/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void no_controls(const buf *b, bool page)
{
    fuzz_check(utf8_check(buf_cstr(b), b->len, NULL, NULL));
    for (size_t i = 0; i < b->len; i++) {
        const char *s = b->data + i;
        unsigned char c = (unsigned char)*s;
        size_t w = text_control_width(s, b->len - i);
        if (page) {
            fuzz_check(c != '<' && c != '>' && c != '"' && c != '\'');
            fuzz_check(w == 0 || c == '\t' || c == '\n');
        } else {
            fuzz_check(w == 0);
        }
    }
}

static void quote_part(buf *out, const char *s)
{
    buf_append_char(out, '"');
    for (; *s; s++) {
        if (*s == '"')
            buf_append_char(out, '"');
        buf_append_char(out, *s);
    }
    buf_append_char(out, '"');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    buf term = BUF_INIT, page = BUF_INIT, err = BUF_INIT;
    fuzz_check(text_escape_term(&term, s, size));
    no_controls(&term, false);
    fuzz_check(html_escape(&page, s, size));
    no_controls(&page, true);

    char *arg = strndup(s, size);
    fuzz_check(arg != NULL);
    char *schema, *name;
    if (target_parse_arg(arg, &schema, &name, &err)) {
        fuzz_check(name && *name && (!schema || *schema));
        buf again = BUF_INIT;
        if (schema) {
            quote_part(&again, schema);
            buf_append_char(&again, '.');
        }
        quote_part(&again, name);
        char *s2, *n2;
        fuzz_check(target_parse_arg(buf_cstr(&again), &s2, &n2, &err));
        fuzz_check(strcmp(n2, name) == 0 && (!schema) == (!s2) && (!schema || strcmp(s2, schema) == 0));
        free(s2);
        free(n2);
        buf_free(&again);
        free(schema);
        free(name);
    } else {
        fuzz_check(err.len > 0 && !schema && !name);
    }
    free(arg);
    buf_free(&term);
    buf_free(&page);
    buf_free(&err);
    return 0;
}
