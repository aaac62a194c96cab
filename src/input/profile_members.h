/*
 * profile_members.h - what the parsers of a profile file's members share
 * (profile_parse.c, which runs them in order, profile_parse_trailer.c and
 * profile_parse_money.c; the readers are in profile_members.c): the parse
 * context, and readers of one member that say once, naming the member,
 * what is wrong with it.  Not for use outside these files; profile.h is
 * the interface.
 */
#ifndef IDEMLOAD_PROFILE_MEMBERS_H
#define IDEMLOAD_PROFILE_MEMBERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "input/profile.h"
#include "util/buf.h"

typedef struct parse_ctx {
    const char *origin;
    buf *err;
    bool oom;
} parse_ctx;

/* Reports a member (by its path) as wrong, "ORIGIN: member "M" WHAT"; false. */
bool member_bad(parse_ctx *cx, const char *member, const char *what);
/* Refuses members of obj not in allowed (NULL-terminated); where is obj's
 * path ("" at the top). */
bool member_only(parse_ctx *cx, json_t *obj, const char *where, const char *const *allowed);
/* *out = a copy of s; false out of memory (cx->oom set). */
bool member_dup(parse_ctx *cx, const char *s, char **out);
/* The string member key of obj into *out (path names it in messages):
 * absent or null is an error only when required, empty only with
 * allow_empty. */
bool member_str(parse_ctx *cx, json_t *obj, const char *key, const char *path, bool required,
                bool allow_empty, char **out);
/* The member key of obj, a string or an array of non-empty strings, into
 * *out and *n; absent or null leaves them as they are. */
bool member_strv(parse_ctx *cx, json_t *obj, const char *key, const char *path, char ***out,
                 size_t *n);

/* The parsers of the members in their own files, run by profile_parse.c
 * in the order of its table: trailer (after framing), covers, money. */
bool profile_parse_trailer(parse_ctx *cx, json_t *root, profile *p);
bool profile_parse_covers(parse_ctx *cx, json_t *root, profile *p);
bool profile_parse_money(parse_ctx *cx, json_t *root, profile *p);

#endif
