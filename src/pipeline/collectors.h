/*
 * collectors.h - today's collectors of a run as sinks (sink.h), and the
 * one table that says which a run opens and in what order.
 *
 * In order: the progress line (output/progress.h), the rejects file
 * (output/rejects.h), the timeline of received_at (output/timeline.h), the
 * figures per group (output/groups.h, import only) and the --changes file
 * (output/changes.h, import with --changes).  Their hooks, and so their
 * threads:
 *
 *   progress   on_file_start (loading), on_read_progress (reading),
 *              on_run_end: erases the line (loading)
 *   rejects    on_reject (reading), before_commit and before_file_completed:
 *              flush and fsync (loading), on_run_end: the summary by reason
 *              into the report, closed (loading).  The loader's lanes write
 *              the rows the server refuses into the same file: its lock
 *              serializes them with the reading thread.
 *   timeline   on_row_read (reading); the report owns it and the page reads
 *              it after the run.
 *   groups     on_row_merged (loading, after commit), on_run_end: sorted
 *              into the report.
 *   changes    on_file_resumed: the lines an earlier run committed, from the
 *              ledger (loading), on_row_merged (loading, after commit),
 *              before_file_completed: fsync, on_run_end: closed.
 */
#ifndef IDEMLOAD_COLLECTORS_H
#define IDEMLOAD_COLLECTORS_H

#include "core/config.h"
#include "load/loader.h"
#include "output/progress.h"
#include "output/rejects.h"
#include "output/report.h"
#include "pipeline/sink.h"

/* What a collector may need to open for a run. */
typedef struct collector_setup {
    const config *cfg;
    const loader *ld;           /* NULL: validate */
    run_report *rep;
    rejects **rj;               /* the pipeline's, open; closed by the sink's on_run_end */
    progress *prog;             /* the pipeline's, initialized */
    bool reading_only;          /* reconcile: the progress line and the rejects only */
} collector_setup;

/*
 * Opens the collectors the run wants, in the table's order, into set (on
 * the loading thread, before any file).  EXIT_OK, or the status after
 * logging why; the sinks opened before the failure are in set, and
 * sinks_run_end closes them either way.
 */
int collectors_open(sink_set *set, const collector_setup *x);

#endif
