/*
 * json_path.c - jsonb's #>> for a text[] path, from the payload's bytes,
 * on top of the object splitter of json_scan.h.
 *
 * Each level of the path is one json_scan_object over that level's object
 * (the whole payload first, then the span of the member found in it).
 * json_scan_object checks what it splits again, UTF-8 included, and has no
 * variant that trusts text already validated (json_validate_utf8 only
 * validates; it hands back no members).  We accept that cost rather than
 * grow a second scanner beside it: nearly all of a call is that one scan
 * of the payload (about 125 ns for a typical six-member callback payload,
 * where json_validate_utf8 alone takes 110 ns, so trusting the text could
 * save little), and a one-level path costs about 135 ns, a two-level one
 * 165 ns (test_json_path --bench, optimised build).
 */
#include "rules/json_path.h"

#include <stdbool.h>
#include <string.h>

#include "rules/json_scan.h"

/* What one level's search found. */
typedef enum level_result {
    LEVEL_FOUND,    /* the member, in its last occurrence */
    LEVEL_MISSING,  /* no member has the key */
    LEVEL_SERVER    /* the bytes cannot tell (an escaped key, a bad text) */
} level_result;

typedef struct member_search {
    const char *want;
    size_t want_len;
    json_member found;
    bool have;
    bool escaped_key;
} member_search;

/*
 * jsonb keeps the last of duplicate keys, so every member is looked at and
 * a later match replaces an earlier one.  An escaped key might decode to
 * the key wanted (and, if it does, might come after the plain match), so
 * one ends the search with no answer.
 */
static bool on_member(void *ctx, const json_member *m)
{
    member_search *ms = ctx;

    if (m->key_escaped) {
        ms->escaped_key = true;
        return false;
    }
    if (m->key_len == ms->want_len && memcmp(m->key, ms->want, m->key_len) == 0) {
        ms->found = *m;
        ms->have = true;
    }
    return true;
}

/* The member of the object obj[0..len) whose key is want, in *m. */
static level_result find_member(const char *obj, size_t len, const char *want, json_member *m)
{
    member_search ms;

    ms.want = want;
    ms.want_len = strlen(want);
    ms.have = false;
    ms.escaped_key = false;
    if (!json_scan_object(obj, len, on_member, &ms, NULL))
        return LEVEL_SERVER; /* an escaped key, or not the valid text promised */
    if (!ms.have)
        return LEVEL_MISSING;
    *m = ms.found;
    return LEVEL_FOUND;
}

/*
 * Does jsonb print this number (valid JSON number text) otherwise than as
 * written?  numeric_out keeps the digits and the scale as written, but an
 * exponent is expanded ('1.5e3' -> '1500') and a zero loses its sign
 * ('-0.00' -> '0.00').
 */
static bool number_rewritten(const char *s, size_t n)
{
    bool zero = true;

    for (size_t i = 0; i < n; i++) {
        if (s[i] == 'e' || s[i] == 'E')
            return true;
        if (s[i] >= '1' && s[i] <= '9')
            zero = false;
    }
    return s[0] == '-' && zero;
}

/* #>> of the value the path ends at. */
static json_path_result final_value(const json_member *m, const char **out, size_t *out_len)
{
    switch (m->kind) {
    case JSON_KIND_NULL:
        return JSON_PATH_NULL;
    case JSON_KIND_STRING:
        /* #>> decodes a string; without escapes that is its bytes as they stand */
        if (m->value_escaped)
            return JSON_PATH_SERVER;
        *out = m->value + 1;
        *out_len = m->value_len - 2;
        return JSON_PATH_TEXT;
    case JSON_KIND_NUMBER:
        if (number_rewritten(m->value, m->value_len))
            return JSON_PATH_SERVER;
        break;
    case JSON_KIND_BOOL:
        break; /* "true" or "false", as written */
    default:
        return JSON_PATH_SERVER; /* jsonb prints its own layout of an object or array */
    }
    *out = m->value;
    *out_len = m->value_len;
    return JSON_PATH_TEXT;
}

json_path_result json_path_text(const char *json, size_t len, const char *const *path,
                                size_t n_path, const char **out, size_t *out_len)
{
    const char *cur = json;
    size_t cur_len = len;
    size_t first = 0;
    json_member m;

    *out = NULL;
    *out_len = 0;
    if (n_path == 0)
        return JSON_PATH_SERVER;
    /* The top level: JSON white space, then the value (validated already);
     * only object, array or scalar matters, so any scalar passes as null. */
    while (first < len && (json[first] == ' ' || json[first] == '\t' ||
                           json[first] == '\n' || json[first] == '\r'))
        first++;
    if (first == len)
        return JSON_PATH_SERVER;
    m.kind = json[first] == '{' ? JSON_KIND_OBJECT
           : json[first] == '[' ? JSON_KIND_ARRAY : JSON_KIND_NULL;
    for (size_t i = 0; i < n_path; i++) {
        /* jsonb reads a path element against an array as an index: not
         * worth reproducing.  Against a scalar it finds nothing. */
        if (m.kind == JSON_KIND_ARRAY)
            return JSON_PATH_SERVER;
        if (m.kind != JSON_KIND_OBJECT)
            return JSON_PATH_NULL;
        switch (find_member(cur, cur_len, path[i], &m)) {
        case LEVEL_FOUND:
            break;
        case LEVEL_MISSING:
            return JSON_PATH_NULL;
        default:
            return JSON_PATH_SERVER;
        }
        cur = m.value;
        cur_len = m.value_len;
    }
    return final_value(&m, out, out_len);
}
