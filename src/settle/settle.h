/*
 * settle.h - `idemload settle FILE...` (SPEC.md, "Settle: the money that
 * arrives"; doc/settle.md): the channels' settlement-side files and the
 * bank's statements read through the settle readers (settle_row.h),
 * staged on the server, checked there (fees, payouts, balances, bank
 * credits, payments never paid out), the findings kept in a register
 * beside reconcile's and rendered as reconcile renders its own.
 *
 * The coordinator (settle.c) gathers everything into a settle_result
 * (settle_result.h) through its parts on one session (reconcile's,
 * recon_session.h): settle_stage.c reads and stages the files,
 * settle_check.c runs the checks, keeps the register and gathers; then
 * settle_render.c renders (gather, then render).
 */
#ifndef IDEMLOAD_SETTLE_H
#define IDEMLOAD_SETTLE_H

#include "core/config.h"

/* Runs the command for cfg (cmd CMD_SETTLE).  Returns the exit status: 0
 * everything settled (pending included), 5 discrepancies, otherwise as
 * import (2 usage, 3 a file unreadable or its own totals wrong, 4 the
 * database). */
int settle_run(const config *cfg);

#endif
