/*
 * pipeline.h - runs `validate` and `import` over the files of a config:
 * source -> reader -> validate -> chunk -> (loader) -> report.
 * Returns the process exit status; logs its own errors once.
 *
 * The one way a statement is opened, read, validated and its rejects
 * written, for every command: import and validate run it through
 * pipeline_run; reconcile reads its files through the same path
 * (pipeline_reading_open) and takes every row it reads (row_consumer).
 */
#ifndef IDEMLOAD_PIPELINE_H
#define IDEMLOAD_PIPELINE_H

#include <stddef.h>

#include "chunk/chunk.h"
#include "core/config.h"
#include "input/reader.h"
#include "load/loader.h"
#include "output/report.h"

/*
 * Processes every file of cfg in turn; with ld NULL only validates.  Fills
 * *rep (initialized by the caller for cfg->n_files files).  One failing file
 * does not stop the others; the result is the most severe status.
 */
int pipeline_run(const config *cfg, loader *ld, run_report *rep);

/* Fills fr (cleared first) as a file the run did not start: its path, the
 * format it would have been read as (the profile's name, --format's, or
 * the one its name chooses), status failed, and why as its error. */
void pipeline_not_started(const config *cfg, file_report *fr, const char *path, const char *why);

/*
 * Imports cfg's files, as `idemload import` would, on a loader of its own
 * (opened and closed here): reconcile's --repair, with the options it
 * chose.  Fills *rep (initialized by the caller for cfg->n_files files);
 * returns the exit status.
 */
int pipeline_import(const config *cfg, run_report *rep);

/*
 * A command that takes a statement's rows for a purpose of its own
 * (reconcile, which COPYs them): each file is opened, read by the reading
 * thread, validated and its rejects written as import and validate do it,
 * under the same progress line, but every row is kept (no deduplication
 * by key: each row of the statement counts) and handed over chunk by
 * chunk, in file order.  The hooks run on the thread that called
 * pipeline_read_file; each returns EXIT_OK or the status, its failure
 * logged.
 */
typedef struct row_consumer {
    void *st;
    /* The file is open (its header read); before its first row. */
    int (*begin)(void *st, const char *path, file_report *rep);
    /* The file's next rows, in file order (chunk_get). */
    int (*take)(void *st, const chunk *ch, file_report *rep);
    /* After a begin, always: the file's reading ended with code (EXIT_OK,
     * EXIT_REJECTS, or how it failed, rep's error then set); rdr, still
     * open, tells what the file says of itself.  Returns the file's status. */
    int (*end)(void *st, const reader *rdr, int code, file_report *rep);
} row_consumer;

/* The reading of one command's statement files: the progress line, the
 * rejects file (cfg->rejects_path), the payments' keys for refunds. */
typedef struct statement_reading statement_reading;

/* Opens the reading of cfg's files into rep (initialized for cfg->n_files
 * files; its rejects summary is filled at the close).  NULL when out of
 * memory (logged). */
statement_reading *pipeline_reading_open(const config *cfg, run_report *rep);

/* Reads file i of the config into use, filling rep->files[i]; returns its
 * status (EXIT_REJECTS when rows were rejected). */
int pipeline_read_file(statement_reading *sr, size_t i, const row_consumer *use);

/* Shows what the command does next, after the reading, on the progress
 * line (progress_step); sr NULL: nothing. */
void pipeline_reading_step(statement_reading *sr, const char *what);

/* Erases the progress line, closes the rejects file (its summary into the
 * report) and frees *sr (NULL after; NULL is a no-op).  EXIT_OK, or
 * EXIT_INPUT when the rejects file could not be completed (logged). */
int pipeline_reading_close(statement_reading **sr);

#endif
