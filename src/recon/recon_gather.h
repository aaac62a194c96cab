/*
 * recon_gather.h - the comparison of `idemload reconcile` and the
 * gathering of what it found into the recon_result: the statement's keys
 * and the table's rows joined both ways on the server, the figures per
 * day and over the period, and the discrepancy lines fetched through a
 * cursor.  Internal to src/recon/.
 */
#ifndef IDEMLOAD_RECON_GATHER_H
#define IDEMLOAD_RECON_GATHER_H

#include <stdbool.h>

#include "core/config.h"
#include "output/report.h"
#include "recon/recon_render.h"
#include "recon/recon_result.h"
#include "recon/recon_session.h"

/* The names a kind of the profile's vocabulary has in the table's: kind
 * itself and every --kind rename of it, as a JSON array's text (NULL when
 * out of memory): the refunds subtracted from a side's net amounts, the
 * revocations left apart (SQL_RECON_DAY_AMOUNTS).  The caller's to free;
 * recon_compare reads both kinds' from x->net_kinds. */
char *recon_kind_names_json(const config *cfg, const char *kind);

/* The comparison: facts, keys, the period, both joins, the outcomes and
 * the lines; then the figures back.  In the run's transaction, every file
 * staged (recon_stage_file) and the session's zone settled.  True with
 * res->compared set once the figures are in, or with it unset when no
 * valid row gave a period; false after logging (as recon_exec). */
bool recon_compare(recon_ctx *x, recon_result *res, run_report *rep);

/* Every discrepancy line, fetched through a cursor: each written to the
 * --discrepancies file (when asked; *wp, for the caller to publish once the
 * register is committed, or to discard), the first RECON_EXAMPLES of each
 * category kept in res->lines.  The file is complete and durable when this
 * returns true.  *io_failed: the file, not the database, failed.  After
 * recon_compare, and recon_write_register or recon_read_register when it
 * compared; none are fetched when it did not. */
bool recon_stream_lines(recon_ctx *x, recon_result *res, recon_disc **wp, bool *io_failed);

#endif
