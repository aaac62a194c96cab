/*
 * plan.h - a file's place in the ledger for one run: looked up and taken
 * before it is read, what the ledger's plan means for the file's report
 * (skipped, resumed, loaded again and why), and the file ended in the
 * ledger after it is read.  Loading thread only; import only.
 * Ownership: a ledger_place holds the parameters text the loader keeps a
 * pointer to until ledger_end(), which frees it.
 */
#ifndef IDEMLOAD_PLAN_H
#define IDEMLOAD_PLAN_H

#include <stdbool.h>

#include "core/config.h"
#include "input/reader.h"
#include "load/ledger.h"
#include "load/loader.h"
#include "output/report.h"
#include "util/buf.h"

typedef struct ledger_place {
    file_plan plan;
    bool begun;         /* the ledger took the file: ledger_end ends it */
    buf params;         /* the parameters that shape its rows (params.h) */
} ledger_place;

/*
 * Looks the file up in the ledger and takes it (loader_begin_file; wait:
 * for another process that holds it), keyed by id and the parameters that
 * shape its rows; states the plan on rep: a file loaded before is
 * FILE_SKIPPED with its note, a resumed one has its note and the figures
 * an earlier run committed, a known one loaded again says why.  EXIT_OK
 * (lp->plan.busy: another process holds it and nothing was taken;
 * lp->plan.skip: nothing to read), or the status with rep's error set.
 */
int ledger_begin(loader *ld, const config *cfg, input_format fmt, file_identity *id, bool wait,
                 ledger_place *lp, file_report *rep);

/*
 * Ends a file ledger_begin took (ld NULL or not begun: nothing but the
 * parameters freed): completed when rep->status is FILE_OK, else left to
 * resume.  A file whose completion fails becomes FILE_PARTIAL.  Returns
 * code made worse by the ledger's status.
 */
int ledger_end(loader *ld, ledger_place *lp, file_report *rep, int code);

#endif
