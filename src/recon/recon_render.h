/*
 * recon_render.h - renders a recon_result (recon_result.h), gathered
 * before by the coordinator (recon.c), which it never calls:
 * the summary on stderr, the report's "reconciliation" object, the
 * --discrepancies file (NDJSON, or CSV with a byte-order mark) and the
 * page's reconciliation section (every value escaped).
 */
#ifndef IDEMLOAD_RECON_RENDER_H
#define IDEMLOAD_RECON_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "core/config.h"
#include "output/report.h"
#include "recon/recon_result.h"
#include "util/buf.h"

/*
 * The discrepancies file at path ("-": standard output; ".csv": CSV with a
 * UTF-8 byte-order mark and a header), written line by line as the lines
 * are fetched: open, write each, finish (flushes and, for a file, fsyncs
 * it), then publish once the register it describes is committed, or
 * discard.  Written whole or not at all (output/outfile.h): renamed onto
 * path by publish, so a run that fails leaves path as it was, never a list
 * cut short; standard output, a pipe or a device is written as it goes.  Empty
 * on a balanced run.  Each returns false with *err; publish and discard free
 * the writer (and a file not published is removed) and set *w to NULL.
 */
typedef struct recon_disc recon_disc;
/* res: the run's result, for the channel's words of a status (it must
 * outlive the writer). */
recon_disc *recon_disc_open(const char *path, const recon_result *res, buf *err);
bool recon_disc_write(recon_disc *w, const recon_line *l, buf *err);
bool recon_disc_finish(recon_disc *w, buf *err);
bool recon_disc_publish(recon_disc **w, buf *err);
void recon_disc_discard(recon_disc **w);

/* The report's "reconciliation" object (a new reference; NULL when out of
 * memory). */
struct json_t *recon_json(const recon_result *r);
/* One side's totals, {"rows", "amounts": {CURRENCY: "decimal"},
 * "without_amount"}: the report's and the register's run rows'. */
struct json_t *recon_side_json(const recon_side *s);

/* The summary of the comparison, after the files' figures. */
void recon_print_summary(const recon_result *r, FILE *fp);

/* The page's section, appended to *out.  False when out of memory. */
bool recon_html_section(const recon_result *r, buf *out);

/*
 * Everything a run shows once it is over: the summary on stderr, the
 * report (--report) and the page (--html, stating exit status code).
 * Returns EXIT_OK or EXIT_INPUT when an output could not be written.
 */
int recon_render_outputs(const config *cfg, const recon_result *r, run_report *rep, int code);

#endif
