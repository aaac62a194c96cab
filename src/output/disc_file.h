/*
 * disc_file.h - a --discrepancies file, as reconcile and settle write it
 * (SPEC.md, "Reconcile for finance"): NDJSON, one object a line, or CSV
 * with a UTF-8 byte-order mark and a header when its name ends in .csv;
 * written whole or not at all (outfile.h: it takes its place only when
 * published, after the run's register committed).  The caller formats
 * each line; this module buffers, writes, syncs and publishes.
 *
 * Ownership: disc_file_open() returns a file freed by disc_file_publish()
 * or disc_file_discard(), which set the caller's pointer to NULL.
 */
#ifndef IDEMLOAD_DISC_FILE_H
#define IDEMLOAD_DISC_FILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

typedef struct disc_file disc_file;

/* Opens path ("-": standard output); a CSV starts with the byte-order mark
 * and the n column names.  NULL with the message in *err. */
disc_file *disc_file_open(const char *path, const char *const *columns, size_t n, buf *err);

/* Is it the CSV form (else NDJSON)? */
bool disc_file_is_csv(const disc_file *w);

/* The buffer the caller appends one whole CSV line to (its "\r\n"
 * included), then calls disc_file_wrote(). */
buf *disc_file_buf(disc_file *w);

/* After a CSV line was appended (ok: it was, memory sufficing): writes out
 * what is buffered once it is large.  False with the message in *err. */
bool disc_file_wrote(disc_file *w, bool ok, buf *err);

/* One NDJSON line: o compact, its members in order, then a line break; o
 * is released (NULL: out of memory).  False with the message in *err. */
bool disc_file_put_json(disc_file *w, json_t *o, buf *err);

/* Everything written and synced, before the register commits (NULL: no
 * file asked for).  False with the message in *err. */
bool disc_file_finish(disc_file *w, buf *err);

/* Takes its place at its path, then frees it. */
bool disc_file_publish(disc_file **wp, buf *err);

/* Leaves the path as it was, and frees it. */
void disc_file_discard(disc_file **wp);

#endif
