/*
 * file.h - one file of a run, from its report entry to its end in the
 * ledger: refused before it is opened, opened (and hashed), taken in the
 * ledger, read a first time when its profile checks its count, its chunks
 * read and loaded (or, in validate, counted), its side outputs made
 * durable, completed in the ledger.  Loading thread.
 */
#ifndef IDEMLOAD_FILE_H
#define IDEMLOAD_FILE_H

#include <stdbool.h>

#include "core/config.h"
#include "input/key_links.h"
#include "input/reader.h"
#include "load/loader.h"
#include "load/outcome.h"
#include "output/rejects.h"
#include "output/report.h"
#include "pipeline/pipeline.h"
#include "pipeline/sink.h"

/* What every file of a run shares; the files are run one at a time. */
typedef struct run_ctx {
    const config *cfg;
    loader *ld;             /* NULL: validate */
    rejects *rj;            /* for the rows the server refuses (the loader's lanes) */
    const sink_set *sinks;
    chunk_outcome *out;     /* the merge's answer for one chunk, reused */
    run_report *rep;
    key_links *links;       /* the payments' keys for refunds (profile
                               refund_of); NULL when the profile has none */
    const row_consumer *use;/* reconcile: takes every row (ld NULL); NULL
                               for import and validate */
} run_ctx;

/* Loads (or validates, or hands to x->use) one file; fills rep; returns its exit status.  wait:
 * when another process holds the file, wait for it; otherwise return at
 * once with *busy set and nothing read (rep then to be cleared). */
int file_run(const run_ctx *x, const char *path, file_report *rep, bool wait, bool *busy);

/* Fills fr (cleared first) as a file the run did not start: its path, the
 * format it would have been read as, status failed, and why as its error. */
void file_not_started(const config *cfg, file_report *fr, const char *path, const char *why);

/* Warns, once per column, about each --set value the file does not take
 * because its header has that column (SPEC.md: --set supplies a column the
 * file does not have): the user asked for a value the rows will not get. */
void file_warn_unused_presets(const config *cfg, const reader *rdr, const char *path);

/* Warns (and notes on rep, unless it has a note) when a bill's stated money
 * totals could not be checked (reader_money_unchecked): a user would take
 * the file for checked. */
void file_warn_money_unchecked(const reader *rdr, const char *path, file_report *rep);

#endif
