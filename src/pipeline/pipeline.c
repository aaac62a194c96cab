/*
 * pipeline.c - the coordinator of `validate` and `import` (see pipeline.h):
 * opens the run's collectors (collectors.h), hands the files to the
 * schedule (schedule.h), which runs each through its state machine
 * (file.h: the ledger plan, the pre-pass, the reading thread, the loader,
 * the exit mapping), then ends the run and the collectors.
 */
#include "pipeline/pipeline.h"

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

void pipeline_not_started(const config *cfg, file_report *fr, const char *path, const char *why)
{
    file_not_started(cfg, fr, path, why);
}

int pipeline_run(const config *cfg, loader *ld, run_report *rep)
{
    progress prog;
    progress_init(&prog, cfg->quiet);
    rejects *rj = rejects_open(cfg->rejects_path);
    if (!rj) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    double t0 = now_seconds();
    sink_set sinks;
    sink_set_init(&sinks);
    /* The progress line and the rejects file open first and cannot fail,
     * so sinks_run_end always closes the rejects file. */
    int code = collectors_open(&sinks, &(collector_setup){cfg, ld, rep, &rj, &prog});
    chunk_outcome out = {.details = sinks_want_versions(&sinks)};
    run_ctx x = {cfg, ld, rj, &sinks, &out, rep, NULL};
    if (code == EXIT_OK && cfg->profile && cfg->profile->refund_of &&
        !(x.links = key_links_new())) {
        log_error("out of memory");
        code = EXIT_INPUT;
    }
    if (code == EXIT_OK) {
        code = schedule_files(&x);
    } else {
        /* Nothing can be loaded without its sinks; no file is touched. */
        for (size_t k = 0; k < cfg->n_files; k++)
            file_not_started(cfg, &rep->files[k], cfg->files[k],
                             "not started (see the error above)");
    }
    if (ld)
        code = exit_worst(code, loader_finish(ld));
    code = exit_worst(code, sinks_run_end(&sinks, rep));
    chunk_outcome_free(&out);
    key_links_free(&x.links);
    rep->elapsed_s = now_seconds() - t0;
    run_report_total(rep);
    return code;
}
