/*
 * exits.h - what the ways a file's load can end mean: the exit status and
 * the message of a chunk that could not be read, of a chunk the loader
 * gave up on, and the file's status once its reading ended.
 */
#ifndef IDEMLOAD_EXITS_H
#define IDEMLOAD_EXITS_H

#include <stdbool.h>

#include "core/config.h"
#include "output/report.h"
#include "pipeline/feed.h"
#include "util/buf.h"

/* The exit status of a chunk that could not be filled, with its message in
 * *err (kept from the reader or the rejects file when they set it). */
int exit_of_fill(const config *cfg, const char *path, fill_result fres, buf *err);

/* The report's error for a chunk the loader gave up on with code (why: the
 * loader's own words, NULL when it said none). */
const char *chunk_failure_text(int code, const char *why);

/* The file's status and exit status once its reading ended with code:
 * loading (an import), committed (some chunk of it committed, in this run
 * or an earlier one).  Leaves rep->status alone when the file read to its
 * end; a file with rejects exits EXIT_REJECTS. */
int exit_of_read(int code, bool loading, bool committed, file_report *rep);

#endif
