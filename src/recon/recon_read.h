/*
 * recon_read.h - reading the statement for `idemload reconcile`: each file
 * opened, read, validated and its rejects written by import's own reading
 * (pipeline.h, every row kept), the valid rows COPYed into the session's
 * temporary table as they come; and what the file says of itself kept
 * for the comparison (the kinds it cannot list, the totals its bill
 * states, its window's zone).  Internal to src/recon/.
 */
#ifndef IDEMLOAD_RECON_READ_H
#define IDEMLOAD_RECON_READ_H

#include <stddef.h>

#include "output/report.h"
#include "recon/recon_result.h"
#include "recon/recon_session.h"

/* Reads file i through x->reading and COPYs its valid rows.  In the run's
 * transaction, after recon_stage_setup; fr is file i's report, filled
 * here (its figures zeroed when the file fails), res->stated grows by the
 * totals the bill states and x->window_zone takes the first file's own.
 * Returns EXIT_OK, EXIT_INPUT (unreadable, corrupt, its own totals wrong:
 * fr's error set), EXIT_INTERRUPTED or the database's status. */
int recon_stage_file(recon_ctx *x, size_t i, file_report *fr, recon_result *res);

#endif
