/*
 * rejects.h - the rejects file: one JSON object per rejected row,
 * {"file", "line", "reason", "raw"}, appended.
 *
 * The file is opened (for appending) at the first reject, so a clean run
 * leaves no empty file behind.  A raw text that is not valid UTF-8 cannot be
 * a JSON string as is: "raw" then holds it with each bad byte replaced by
 * U+FFFD and "raw_base64" holds the exact bytes.  Writes are serialized by
 * a lock, so a reading thread and a loading thread may both report.
 * Ownership: rejects_open() returns an object freed by rejects_close().
 */
#ifndef IDEMLOAD_REJECTS_H
#define IDEMLOAD_REJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct rejects rejects;

/* Prepares to write to path ("-" is stdout); nothing is opened yet. */
rejects *rejects_open(const char *path);

/*
 * Appends one reject.  Returns false when the file cannot be opened or
 * written; the message is then in *err.  A reject that cannot be recorded
 * must stop the load, since the row would otherwise be lost silently.
 */
bool rejects_write(rejects *rj, const char *file, uint64_t line, const char *reason,
                   const char *raw, size_t raw_len, buf *err);

/* Pushes buffered rejects to the file; called before a chunk commits, so a
 * committed chunk never has its rejects still in memory. */
bool rejects_flush(rejects *rj, buf *err);

/* Rows written so far. */
uint64_t rejects_count(const rejects *rj);

/* Flushes and closes; false (with *err) if the final flush failed. */
bool rejects_close(rejects **rj, buf *err);

#endif
