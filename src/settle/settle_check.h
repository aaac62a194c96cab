/*
 * settle_check.h - settle's checks on the server, its register and the
 * gathering of what they found into the settle_result (settle_sql.h).
 * Internal to src/settle/; every function runs on the session's one
 * connection, in the run's transaction, and returns false after logging
 * (as recon_exec).
 */
#ifndef IDEMLOAD_SETTLE_CHECK_H
#define IDEMLOAD_SETTLE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "output/report.h"
#include "recon/recon_session.h"
#include "settle/settle_opts.h"
#include "settle/settle_render.h"
#include "settle/settle_result.h"

/* The register's names on the target's schema, into x (as
 * recon_register_names does for reconcile's).  False when out of memory. */
bool settle_register_names(recon_ctx *x);

/* The session's tables (after recon_stage_setup) and the fee rates. */
bool settle_setup(recon_ctx *x, const fee_rate *rates, size_t n_rates);

/* Every file staged: the rows typed, the period settled (--period, else
 * the rows' days), every check run.  window_*, grace_s: seconds; period:
 * NULL or from/to.  Sets res's period and sides, and compared. */
bool settle_checks(recon_ctx *x, settle_result *res, int64_t window_min, int64_t window_max,
                   int64_t grace_s, const char *from, const char *to);

/* Writes this run into the register (not on a dry run): supersedes the
 * days it covers, resolves what it no longer finds and the batches its
 * credits paid, opens or keeps what it finds, escalates pending items
 * whose window closed; then reads back what is carried over and what it
 * resolved.  Sets res->run_id and res->registered (until a rollback). */
bool settle_register(recon_ctx *x, settle_result *res, const run_report *rep);

/* A dry run reads the register (when it may) for what it would carry over. */
bool settle_read_register(recon_ctx *x, settle_result *res);

/* The per-day figures and every line: each written to the discrepancies
 * file (*wp opened here when asked, for the caller to publish once the
 * register is committed), the first SETTLE_EXAMPLES of each category
 * kept.  *io_failed: the file, not the database, failed. */
bool settle_gather(recon_ctx *x, settle_result *res, settle_disc **wp, bool *io_failed);

#endif
