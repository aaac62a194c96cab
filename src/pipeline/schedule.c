/*
 * schedule.c - the files of a run in turn, busy ones last (schedule.h).
 */
#include "pipeline/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "output/log.h"
#include "util/exitcodes.h"
#include "util/signals.h"

/* File i, unless an interrupt came first; *busy when another process
 * holds it and wait is not set. */
static int try_file(const run_ctx *x, size_t i, bool wait, bool *busy)
{
    const config *cfg = x->cfg;
    *busy = false;
    if (signals_interrupted()) {
        file_not_started(cfg, &x->rep->files[i], cfg->files[i], "not started: interrupted");
        return EXIT_INTERRUPTED;
    }
    int c = file_run(x, cfg->files[i], &x->rep->files[i], wait, busy);
    if (*busy)
        file_report_clear(&x->rep->files[i]);
    return c;
}

/*
 * Back to the files that were busy (later[0..n)): each round tries every
 * one without waiting (one whose loader finished is skipped now, one whose
 * loader died is resumed); when a round gets none, wait for the first.  So
 * the process ends only when each of its files is loaded, by it or by
 * another (a backfill's exit status 0 means every file is in), and a loader
 * that dies never leaves a file behind while another lives.
 */
static int run_busy_files(const run_ctx *x, size_t *later, size_t n_later)
{
    int code = EXIT_OK;
    while (n_later > 0) {
        size_t kept = 0;
        for (size_t k = 0; k < n_later; k++) {
            bool busy;
            int c = try_file(x, later[k], false, &busy);
            if (busy)
                later[kept++] = later[k];
            else
                code = exit_worst(code, c);
        }
        if (kept == n_later) {
            /* Nothing moved this round: wait for the first. */
            bool busy;
            code = exit_worst(code, try_file(x, later[0], true, &busy));
            memmove(later, later + 1, (kept - 1) * sizeof *later);
            kept--;
        }
        n_later = kept;
    }
    return code;
}

int schedule_files(const run_ctx *x)
{
    const config *cfg = x->cfg;
    size_t *later = calloc(cfg->n_files ? cfg->n_files : 1, sizeof *later);
    if (!later) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    size_t n_later = 0;
    int code = EXIT_OK;
    for (size_t i = 0; i < cfg->n_files; i++) {
        bool busy;
        int c = try_file(x, i, false, &busy);
        if (busy)
            later[n_later++] = i;
        else
            code = exit_worst(code, c);
    }
    code = exit_worst(code, run_busy_files(x, later, n_later));
    free(later);
    return code;
}
