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

#include "core/figures.h"
#include "util/buf.h"
#include "output/rejects.h"
#include "output/timeline.h"

typedef enum file_status { FILE_OK, FILE_PARTIAL, FILE_FAILED, FILE_SKIPPED } file_status;

typedef struct file_report {
    const char *path;       /* as given (argv, which outlives the report); NULL: not set */
    const char *format;      /* static text */
    file_status status;
    char *error;             /* NULL when none */
    char *note;              /* NULL, or e.g. "resumed after chunk 12" */
    char *reload_reason;     /* NULL, or why a file the ledger knew is loaded again */
    char digest[65];         /* SHA-256 hex; "" when not computed (stdin, a file not read) */
    double elapsed_s;        /* time spent on the file; < 0 when not started */
    load_counts counts;
} file_report;

/* The figures of one (tenant, channel, callback kind) over every file
 * (SPEC.md "Reconciliation"); kind is callback_type up to its first ':'. */
typedef struct group_report {
    int64_t tenant_id;
    char *channel;
    char *kind;
    load_counts counts;      /* inserted, updated, unchanged, stale, existing */
} group_report;

typedef struct run_report {
    bool dry_run;
    bool validate_only;
    bool reconcile;          /* the command was reconcile (recon.h), or settle */
    bool settle;             /* the command was settle (settle.h): reconcile's
                              * shape, its own name and its "settlement" object */
    const char *repair;      /* reconcile: "missing" or "merge" (--repair); NULL: none */
    double elapsed_s;
    file_report *files;
    size_t n_files;
    load_counts totals;
    /* Facts for the HTML report (html.h), beyond the figures. */
    char *target;            /* the table as given; NULL for validate */
    char *database;          /* user@host:port/dbname; NULL for validate */
    int exit_code;           /* set by main before rendering */
    int64_t started_at;      /* Unix seconds */
    timeline *timeline;      /* received_at of valid rows per channel */
    reject_summary rejects;  /* rejects by reason */
    group_report *groups;    /* sorted by tenant, channel, kind */
    size_t n_groups;
    /* reconcile: the report's "reconciliation" object and the page's
     * section, rendered by recon_render.c (owned; NULL: none). */
    struct json_t *reconciliation;
    struct json_t *settlement;  /* settle's object (settle_render.c); NULL: none */
    char *html_section;
} run_report;

/* The meaning of an exit status, for people ("some rows were rejected"). */
const char *exit_status_meaning(const run_report *rep, int code);

/* Allocates room for n files and an empty timeline; false when out of
 * memory. */
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

/* Writes the JSON report to path ("-": stdout), whole or not at all
 * (outfile.h).  False with *err on failure. */
bool report_write_json(const run_report *rep, const char *path, buf *err);

/* Writes any JSON document (a tool's report) to path the same way, indented,
 * in its keys' order.  False with *err on failure. */
bool report_dump_json(const struct json_t *root, const char *path, buf *err);

#endif
