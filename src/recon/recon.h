/*
 * recon.h - `idemload reconcile FILE...` (SPEC.md, "Reconcile: the
 * statement against the table, both ways"): the statement's rows are
 * read, validated and staged on the server, compared with the table's
 * active rows in both directions, the verdict kept in the register beside
 * the ledger, and the findings rendered as summary, report, discrepancies
 * file and page section.
 *
 * The coordinator (recon.c) gathers everything into a recon_result
 * (recon_result.h) first, through its parts on one session
 * (recon_session.h): recon_read.c reads and stages the statement,
 * recon_gather.c compares and gathers, recon_register.c keeps the
 * register; then it calls recon_render.c to render it (gather, then
 * render).  Neither the parts nor the renderer call back into it.
 */
#ifndef IDEMLOAD_RECON_H
#define IDEMLOAD_RECON_H

#include "core/config.h"

/*
 * Runs the command for cfg (cmd CMD_RECONCILE): reads and stages the files,
 * compares, writes the register (unless --dry-run), the discrepancies file,
 * the summary, the report and the page; --repair afterwards.  Returns the
 * exit status: 0 balanced, 5 discrepancies, otherwise as import.
 */
int recon_run(const config *cfg);

#endif
