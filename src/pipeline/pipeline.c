/*
 * pipeline.c - the coordinator of `validate` and `import` (see pipeline.h):
 * opens the run's collectors (collectors.h), hands the files to the
 * schedule (schedule.h), which runs each through its state machine
 * (file.h: the ledger plan, the pre-pass, the reading thread, the loader,
 * the exit mapping), then ends the run and the collectors.  Reconcile's
 * reading (pipeline_reading_open) opens the same collectors, but for the
 * progress line and the rejects, and runs its files one by one through the
 * same state machine.
 */
#include "pipeline/pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "input/key_links.h"
#include "input/profile.h"
#include "output/log.h"
#include "output/progress.h"
#include "pipeline/collectors.h"
#include "pipeline/file.h"
#include "pipeline/schedule.h"
#include "pipeline/sink.h"
#include "util/clock.h"
#include "util/exitcodes.h"

/* What a run reads its files with; x points into it, so it stays put. */
struct statement_reading {
    progress prog;
    rejects *rj;
    sink_set sinks;
    chunk_outcome out;
    run_ctx x;
};

/* Opens r's progress line, rejects file, collectors and the payments'
 * keys for refunds.  EXIT_OK or the status (logged); r->rj NULL: nothing
 * was opened (out of memory), otherwise close_reading must follow. */
static int open_reading(struct statement_reading *r, const config *cfg, loader *ld,
                        run_report *rep, bool reading_only)
{
    memset(r, 0, sizeof *r);
    progress_init(&r->prog, cfg->quiet);
    r->rj = rejects_open(cfg->rejects_path);
    if (!r->rj) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    sink_set_init(&r->sinks);
    /* The progress line and the rejects file open first and cannot fail,
     * so sinks_run_end always closes the rejects file. */
    int code = collectors_open(&r->sinks,
                               &(collector_setup){cfg, ld, rep, &r->rj, &r->prog, reading_only});
    r->out = (chunk_outcome){.details = sinks_want_versions(&r->sinks)};
    r->x = (run_ctx){cfg, ld, r->rj, &r->sinks, &r->out, rep, NULL, NULL};
    if (code == EXIT_OK && cfg->profile && cfg->profile->refund_of &&
        !(r->x.links = key_links_new())) {
        log_error("out of memory");
        code = EXIT_INPUT;
    }
    return code;
}

/* Ends r's collectors (the rejects file closed, its summary into the
 * report); code is the status so far, returned worsened by theirs. */
static int close_reading(struct statement_reading *r, int code)
{
    code = exit_worst(code, sinks_run_end(&r->sinks, r->x.rep));
    chunk_outcome_free(&r->out);
    key_links_free(&r->x.links);
    return code;
}

void pipeline_not_started(const config *cfg, file_report *fr, const char *path, const char *why)
{
    file_not_started(cfg, fr, path, why);
}

int pipeline_run(const config *cfg, loader *ld, run_report *rep)
{
    struct statement_reading r;
    int code = open_reading(&r, cfg, ld, rep, false);
    if (!r.rj)
        return code;
    double t0 = now_seconds();
    if (code == EXIT_OK) {
        code = schedule_files(&r.x);
    } else {
        /* Nothing can be loaded without its sinks; no file is touched. */
        for (size_t k = 0; k < cfg->n_files; k++)
            file_not_started(cfg, &rep->files[k], cfg->files[k],
                             "not started (see the error above)");
    }
    if (ld)
        code = exit_worst(code, loader_finish(ld));
    code = close_reading(&r, code);
    rep->elapsed_s = now_seconds() - t0;
    run_report_total(rep);
    return code;
}

int pipeline_import(const config *cfg, run_report *rep)
{
    int code = EXIT_OK;
    loader *ld = loader_open(cfg, &code);
    if (!ld)
        return code;
    code = pipeline_run(cfg, ld, rep);
    loader_close(&ld);
    return code;
}

statement_reading *pipeline_reading_open(const config *cfg, run_report *rep)
{
    statement_reading *r = malloc(sizeof *r);
    if (!r) {
        log_error("out of memory");
        return NULL;
    }
    int code = open_reading(r, cfg, NULL, rep, true);
    if (code != EXIT_OK) {
        if (r->rj)
            close_reading(r, code);
        free(r);
        return NULL;
    }
    return r;
}

int pipeline_read_file(statement_reading *r, size_t i, const row_consumer *use)
{
    run_ctx x = r->x;
    x.use = use;
    bool busy;
    return file_run(&x, x.cfg->files[i], &x.rep->files[i], true, &busy);
}

void pipeline_reading_step(statement_reading *r, const char *what)
{
    if (r)
        progress_step(&r->prog, what);
}

int pipeline_reading_close(statement_reading **r)
{
    if (!*r)
        return EXIT_OK;
    int code = close_reading(*r, EXIT_OK);
    free(*r);
    *r = NULL;
    return code;
}
