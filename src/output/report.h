/*
 * report.h - the figures of a run: the human summary on stderr and the
 * --report JSON of SPEC.md "Reports and progress".
 * Ownership: a run_report owns its file entries and their strings;
 * run_report_free() releases them.
 */
#ifndef IDEMLOAD_REPORT_H
#define IDEMLOAD_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/buf.h"

typedef struct load_counts {
    uint64_t rows_read;
    uint64_t rows_rejected;
    uint64_t rows_skipped;      /* rows a channel profile skips on purpose */
    uint64_t rows_deduplicated;
    uint64_t inserted;
    uint64_t updated;
    uint64_t unchanged;
    uint64_t stale;
    uint64_t existing;
    uint64_t chunks;
} load_counts;

void load_counts_add(load_counts *to, const load_counts *from);
/* Rows that reached the merge. */
uint64_t load_counts_merged(const load_counts *c);

typedef enum file_status { FILE_OK, FILE_PARTIAL, FILE_FAILED, FILE_SKIPPED } file_status;

typedef struct file_report {
    const char *path;       /* as given (argv, which outlives the report); NULL: not set */
    const char *format;      /* static text */
    file_status status;
    char *error;             /* NULL when none */
    char *note;              /* NULL, or e.g. "resumed after chunk 12" */
    char *reload_reason;     /* NULL, or why a file the ledger knew is loaded again */
    load_counts counts;
} file_report;

typedef struct run_report {
    bool dry_run;
    bool validate_only;
    double elapsed_s;
    file_report *files;
    size_t n_files;
    load_counts totals;
} run_report;

/* Allocates room for n files; false when out of memory. */
bool run_report_init(run_report *rep, size_t n_files);
void run_report_free(run_report *rep);
/* Empties a file's entry (frees its strings, zeroes its figures). */
void file_report_clear(file_report *fr);
/* Sets a file's error text (copied). */
void file_report_set_error(file_report *fr, const char *msg);
void file_report_set_note(file_report *fr, const char *msg);
void file_report_set_reload_reason(file_report *fr, const char *msg);
const char *file_status_name(file_status s);

/* Sums the files into rep->totals. */
void run_report_total(run_report *rep);

/* Writes the human summary. */
void report_print_summary(const run_report *rep, FILE *fp);

/* Writes the JSON report to path ("-": stdout).  False with *err on failure. */
bool report_write_json(const run_report *rep, const char *path, buf *err);

#endif
