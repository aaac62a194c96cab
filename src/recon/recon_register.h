/*
 * recon_register.h - the register of `idemload reconcile` (SPEC.md,
 * "Across days"): its tables' names on the target's schema, whether this
 * role may read it, and this run written into it (in the comparison's
 * transaction) or, on a dry run, only read.  Internal to src/recon/.
 */
#ifndef IDEMLOAD_RECON_REGISTER_H
#define IDEMLOAD_RECON_REGISTER_H

#include <stdbool.h>

#include "output/report.h"
#include "recon/recon_result.h"
#include "recon/recon_session.h"

/* The register's names, quoted on the target's schema, into x (item, run,
 * their indexes, and item_name and run_name as text for to_regclass); x's
 * tool is open (the target known).  False when out of memory (logged). */
bool recon_register_names(recon_ctx *x);

/* The register's state, as SQL_RECON_REGISTER_READABLE gives it: "absent",
 * "readable" or "denied", asked once per run (the comparison and a dry
 * run's carried-over items both need it, in one transaction); NULL
 * (logged) when the query failed.  Owned by x. */
const char *recon_register_state(recon_ctx *x);

/* Writes this run into the register (same transaction as the comparison):
 * resolves, supersedes, escalates, opens; the runs; then reads back the
 * first_seen of each line and what is carried over.  After recon_compare
 * compared (res->compared); sets res->run_id, res->registered and what
 * appeared, was resolved and is carried over.  False after logging (as
 * recon_exec). */
bool recon_write_register(recon_ctx *x, recon_result *res, const run_report *rep);

/* A dry run writes no register but reads it: what a run would carry over.
 * No register yet: nothing is open.  A role that may not read it: said,
 * and the count stays 0 (res->carried_unknown).  After recon_compare
 * compared; false after logging (as recon_exec). */
bool recon_read_register(recon_ctx *x, recon_result *res);

#endif
