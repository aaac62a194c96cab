/*
 * json_path.h - what PostgreSQL 15's `payload::jsonb #>> path` (a text[]
 * path) gives, told from the payload's bytes alone, or word that only the
 * server can tell.
 *
 * Why: reconciling a million rows asks for a few facts of each payload;
 * when the bytes settle the answer, the row need not go to the server for
 * it.  The answer is exact or it is JSON_PATH_SERVER, never a guess:
 * whatever jsonb rewrites (escapes, numbers with an exponent, negative
 * zero, objects and arrays) or reads in its own way (escaped keys, array
 * indexes) is left to the server.
 *
 * Nothing here allocates; the text returned points into the caller's
 * payload and lives as long as it does.
 */
#ifndef IDEMLOAD_JSON_PATH_H
#define IDEMLOAD_JSON_PATH_H

#include <stddef.h>

typedef enum json_path_result {
    JSON_PATH_NULL,   /* #>> gives SQL NULL: a member missing on the way, a
                       * string, number, boolean or null where an object was
                       * needed, or a JSON null at the end */
    JSON_PATH_TEXT,   /* #>> gives exactly the bytes [*out, *out + *out_len) */
    JSON_PATH_SERVER  /* the bytes cannot tell: ask the server */
} json_path_result;

/*
 * The value of json::jsonb #>> path, path being n_path NUL-terminated
 * elements (the text[] as the server would get it, in the database's
 * encoding, UTF-8).  json[0..len) must be a text jsonb accepted (valid
 * JSON, valid UTF-8); it needs no terminating NUL.  A text that is not
 * gets JSON_PATH_SERVER, so that the server says what is wrong with it.
 *
 * On JSON_PATH_TEXT, *out and *out_len give the text, a span of json
 * (possibly empty); on the other results *out is NULL and *out_len 0.
 * An empty path (n_path == 0) gets JSON_PATH_SERVER: #>> then prints the
 * whole value, which is jsonb's own rendering.
 */
json_path_result json_path_text(const char *json, size_t len, const char *const *path,
                                size_t n_path, const char **out, size_t *out_len);

#endif
