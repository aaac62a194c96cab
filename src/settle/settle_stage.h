/*
 * settle_stage.h - reading settle's files: each told a bank statement (by
 * its content) or a channel's file (read through --profile), read by the
 * settle readers (settle_row.h), each row checked and COPYed as it comes
 * into the session's temporary table.  Internal to src/settle/.
 */
#ifndef IDEMLOAD_SETTLE_STAGE_H
#define IDEMLOAD_SETTLE_STAGE_H

#include <stddef.h>

#include "output/progress.h"
#include "output/report.h"
#include "recon/recon_session.h"
#include "settle/settle_result.h"

/* Reads file i and COPYs its rows, showing it on prog (the run's progress
 * line) (SQL_SETTLE_SETUP made the table, in the
 * run's transaction).  tenant: --set tenant_id, for rows whose file names
 * none (NULL: none given).  fr is file i's report and res->files[i] its
 * entry, filled here.  Returns EXIT_OK; EXIT_USAGE (a file of no format
 * settle reads without a profile, a row without a tenant); EXIT_INPUT
 * (unreadable, a row whose money is no decimal, the file's own counts,
 * totals or balances disagree: fr's error set); EXIT_INTERRUPTED; or the
 * database's status. */
int settle_stage_file(recon_ctx *x, progress *prog, size_t i, const char *tenant,
                      file_report *fr, settle_result *res);

#endif
