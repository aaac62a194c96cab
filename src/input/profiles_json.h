/*
 * profiles_json.h - the built-in profiles' JSON texts, exactly the bytes of
 * src/input/profiles/NAME.json, compiled in at build time
 * (cmake/embed_profiles.cmake writes the table).  profile_load.c names and
 * parses them; nothing else reads this table.
 */
#ifndef IDEMLOAD_PROFILES_JSON_H
#define IDEMLOAD_PROFILES_JSON_H

#include <stddef.h>

typedef struct profile_json {
    const char *name;   /* NAME of NAME.json */
    const char *text;   /* the file's bytes, NUL-terminated */
    size_t len;         /* strlen(text) */
} profile_json;

/* Every file, by name in byte order, ended by an entry whose name is NULL. */
extern const profile_json profile_json_files[];

#endif
