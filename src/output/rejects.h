/*
 * rejects.h - the rejects file: one JSON object per rejected row,
 * {"file", "line", "reason", "raw"}, appended.
 *
 * The file is opened (for appending) at the first reject, so a clean run
 * leaves no empty file behind.  A torn last line an interrupted run left is
 * cut when the run starts (rejects_open), or completed when it is a whole
 * JSON object, so every line stays one JSON object; lines go out whole, one
 * write() of whole lines at a time, under a shared flock that the mending
 * of another starting run waits for.  A raw text that is not valid UTF-8 cannot be
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

/* Prepares to write to path ("-" is stdout; a path naming the file standard
 * output or error is redirected to is written through that stream, never
 * mended: outfile_std_stream); nothing is created yet, but a torn last line
 * of an existing file is mended now. */
rejects *rejects_open(const char *path);

/*
 * Appends one reject.  Returns false when the file cannot be opened or
 * written; the message is then in *err.  A reject that cannot be recorded
 * must stop the load, since the row would otherwise be lost silently.
 */
bool rejects_write(rejects *rj, const char *file, uint64_t line, const char *reason,
                   const char *raw, size_t raw_len, buf *err);

/*
 * The same for a row whose raw text is a conversion (raw_record's orig):
 * "raw" is the text (its invalid bytes as U+FFFD), "raw_base64" the bytes
 * as the file wrote them, so the row can be fixed and loaded again in its
 * own encoding.  orig NULL: as rejects_write.
 */
bool rejects_write_converted(rejects *rj, const char *file, uint64_t line, const char *reason,
                             const char *raw, size_t raw_len, const char *orig,
                             size_t orig_len, buf *err);

/*
 * Pushes buffered rejects to the file and the file to the disk (fflush,
 * fsync): called before every commit, so a committed chunk never has its
 * rejects still in memory or in the page cache (STYLE.md practice 19).
 * False with *err when they cannot be written: the commit must not happen.
 */
bool rejects_sync(rejects *rj, buf *err);

/* Rows written so far. */
uint64_t rejects_count(const rejects *rj);

/*
 * The rejects grouped by reason, for the HTML report: a reason's quoted
 * value and byte position are left out of its group (reject_reason_group),
 * so "status is not an integer ...: \"x\"" and "...: \"y\"" are one group.
 * Each group keeps its count and its first REJECT_EXAMPLES rows (file,
 * line, the raw text cut at REJECT_EXAMPLE_BYTES).  At most
 * REJECT_MAX_GROUPS groups; the rows of further reasons count in a last
 * group REJECT_OTHER_REASONS.
 */
#define REJECT_EXAMPLES 3
#define REJECT_EXAMPLE_BYTES 2000
#define REJECT_MAX_GROUPS 100
#define REJECT_OTHER_REASONS "(other reasons)"

typedef struct reject_example {
    char *file;
    uint64_t line;
    char *raw;              /* NUL-terminated copy, cut (raw_cut) */
    size_t raw_len;
    bool raw_cut;
} reject_example;

typedef struct reject_group {
    char *reason;
    uint64_t count;
    reject_example example[REJECT_EXAMPLES];
    size_t n_examples;
} reject_group;

typedef struct reject_summary {
    reject_group *groups;   /* in order of first appearance */
    size_t n_groups;
} reject_summary;

/* The group a reason text belongs to, written into *out. */
void reject_reason_group(const char *reason, buf *out);

/* Moves the groups gathered so far into *out (which the caller then owns:
 * reject_summary_free); rj starts a new summary. */
void rejects_take_summary(rejects *rj, reject_summary *out);
void reject_summary_free(reject_summary *s);

/* Flushes and closes; false (with *err) if the final flush failed. */
bool rejects_close(rejects **rj, buf *err);

#endif
