/*
 * profile_members.c - readers of one member of a profile file, for the
 * member parsers (profile_members.h): each checks the member's type and
 * says once, naming the member by its path, what is wrong with it.
 */
#include "input/profile_members.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool member_bad(parse_ctx *cx, const char *member, const char *what)
{
    buf_printf(cx->err, "%s: member \"%s\" %s", cx->origin, member, what);
    return false;
}

/* Refuses members of obj not in allowed (NULL-terminated). */
bool member_only(parse_ctx *cx, json_t *obj, const char *where, const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            ok = ok || strcmp(*a, key) == 0;
        if (!ok) {
            char m[160];
            snprintf(m, sizeof m, "%s%s%s", where, *where ? "." : "", key);
            return member_bad(cx, m, "is not a member a profile has (misspelt?)");
        }
    }
    return true;
}

bool member_dup(parse_ctx *cx, const char *s, char **out)
{
    *out = strdup(s);
    if (!*out) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    return true;
}

/* A non-empty string member (or absent when optional). */
bool member_str(parse_ctx *cx, json_t *obj, const char *key, const char *path, bool required,
                bool allow_empty, char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            return member_bad(cx, path, "is required");
        return true;
    }
    if (!json_is_string(v))
        return member_bad(cx, path, "must be a string");
    if (!allow_empty && json_string_length(v) == 0)
        return member_bad(cx, path, "must not be empty");
    if (strlen(json_string_value(v)) != json_string_length(v))
        return member_bad(cx, path, "must not hold a NUL character");
    return member_dup(cx, json_string_value(v), out);
}

/* A string or an array of non-empty strings. */
bool member_strv(parse_ctx *cx, json_t *obj, const char *key, const char *path, char ***out,
                 size_t *n)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return true;
    size_t count = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_string(v))
        return member_bad(cx, path, "must be a string or an array of strings");
    if (count == 0)
        return member_bad(cx, path, "must not be an empty array");
    *out = calloc(count, sizeof **out);
    if (!*out) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *s = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(s) || json_string_length(s) == 0 ||
            strlen(json_string_value(s)) != json_string_length(s))
            return member_bad(cx, path, "must hold only non-empty strings");
        if (!member_dup(cx, json_string_value(s), &(*out)[i]))
            return false;
        (*n)++;
    }
    return true;
}
