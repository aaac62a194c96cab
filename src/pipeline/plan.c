/*
 * plan.c - a file's place in the ledger (plan.h).
 */
#include "pipeline/plan.h"

#include "load/params.h"
#include "output/log.h"
#include "util/exitcodes.h"

/* What the ledger's plan means for the file's report: why it loads again,
 * where it resumes, and the figures an earlier run committed. */
static void report_plan(file_report *rep, const char *path, const file_plan *plan)
{
    load_counts *counts = &rep->counts;
    if (plan->ledger_unknown)
        file_report_set_note(rep, "this role may not read the ledger: whether the file was "
                                  "loaded before (and would be skipped) is not known");
    if (plan->reload_reason[0]) {
        file_report_set_reload_reason(rep, plan->reload_reason);
        log_info("%s: %s", path, plan->reload_reason);
    }
    if (plan->resume_after > 0 || plan->next_partial) {
        buf note = BUF_INIT;
        if (plan->resume_after > 0)
            buf_printf(&note, "resumed after chunk %llu committed by an earlier run%s",
                       (unsigned long long)plan->resume_after,
                       plan->next_partial ? " (and some lanes of the next chunk)" : "");
        else
            buf_printf(&note, "resumed: some lanes of chunk 1 were committed by an earlier run");
        file_report_set_note(rep, buf_cstr(&note));
        log_info("%s: %s", path, buf_cstr(&note));
        buf_free(&note);
        *counts = plan->previous;
        /* The ledger keeps no rows_skipped; the identity gives it. */
        uint64_t accounted = counts->rows_rejected + counts->rows_deduplicated +
                             load_counts_merged(counts);
        counts->rows_skipped = counts->rows_read > accounted ? counts->rows_read - accounted
                                                             : 0;
    }
}

int ledger_begin(loader *ld, const config *cfg, input_format fmt, file_identity *id, bool wait,
                 ledger_place *lp, file_report *rep)
{
    /* The ledger entry holds only for the parameters that shape the rows
     * (params.h). */
    buf err = BUF_INIT;
    bool described = params_describe(cfg, fmt, &lp->params, &err);
    if (!described) {
        log_error("%s: %s", id->path, buf_cstr(&err));
        file_report_set_error(rep, buf_cstr(&err));
    }
    buf_free(&err);
    if (!described)
        return EXIT_INPUT;
    id->params = buf_cstr(&lp->params);
    int code = loader_begin_file(ld, id, cfg->chunk_rows, wait, &lp->plan);
    if (code != EXIT_OK) {
        file_report_set_error(rep, "the ledger could not be read (see the log)");
        return code;
    }
    if (lp->plan.busy)
        return EXIT_OK;
    lp->begun = true;
    if (lp->plan.skip) {
        /* Nothing is read in this run: the figures stay zero, so the
         * totals say what this run did. */
        rep->status = FILE_SKIPPED;
        file_report_set_note(rep, "already loaded completely (ledger); --force loads it again");
        log_info("%s: skipped: the ledger holds it as completed (use --force to load again)",
                 id->path);
        return EXIT_OK;
    }
    report_plan(rep, id->path, &lp->plan);
    return EXIT_OK;
}

int ledger_end(loader *ld, ledger_place *lp, file_report *rep, int code)
{
    if (ld && lp->begun && !lp->plan.skip) {
        int end = loader_end_file(ld, rep->status == FILE_OK);
        if (end != EXIT_OK && rep->status == FILE_OK) {
            /* Its chunks committed, but the file is not completed (the
             * table changed under it, or the ledger failed). */
            rep->status = FILE_PARTIAL;
            file_report_set_error(rep, "the file could not be completed in the ledger (see "
                                       "the log); run the same command again");
        }
        code = exit_worst(code, end);
    } else if (ld && lp->begun) {
        loader_end_file(ld, false);
    }
    buf_free(&lp->params);
    return code;
}
