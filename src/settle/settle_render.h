/*
 * settle_render.h - renders a settle_result (settle_result.h): the summary
 * on stderr, the report's "settlement" object, the --discrepancies file
 * (NDJSON, or CSV with a byte-order mark: the discrepancy line of
 * doc/settle.md) and the page's settlement section, every value escaped.
 * Nothing here queries.
 */
#ifndef IDEMLOAD_SETTLE_RENDER_H
#define IDEMLOAD_SETTLE_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "core/config.h"
#include "output/report.h"
#include "settle/settle_result.h"
#include "util/buf.h"

/* The discrepancies file at path ("-": standard output; ".csv": CSV with a
 * UTF-8 byte-order mark and a header), written whole or not at all as
 * reconcile's (output/outfile.h): open, write each line, finish (flush and
 * fsync), then publish once the register is committed, or discard.  Each
 * returns false with *err; publish and discard free the writer. */
typedef struct settle_disc settle_disc;
settle_disc *settle_disc_open(const char *path, buf *err);
bool settle_disc_write(settle_disc *w, const settle_line *l, buf *err);
bool settle_disc_finish(settle_disc *w, buf *err);
bool settle_disc_publish(settle_disc **w, buf *err);
void settle_disc_discard(settle_disc **w);

/* The report's "settlement" object (a new reference; NULL: out of memory). */
struct json_t *settle_json(const settle_result *r);

/* The summary, after the files' figures. */
void settle_print_summary(const settle_result *r, FILE *fp);

/* The page's section, appended to *out.  False when out of memory. */
bool settle_html_section(const settle_result *r, buf *out);

/* The summary on stderr, the report (--report) and the page (--html,
 * stating exit status code).  EXIT_OK or EXIT_INPUT when an output could
 * not be written. */
int settle_render_outputs(const config *cfg, const settle_result *r, run_report *rep, int code);

#endif
