/*
 * pipeline.h - runs `validate` and `import` over the files of a config:
 * source -> reader -> validate -> chunk -> (loader) -> report.
 * Returns the process exit status; logs its own errors once.
 */
#ifndef IDEMLOAD_PIPELINE_H
#define IDEMLOAD_PIPELINE_H

#include "core/config.h"
#include "load/loader.h"
#include "output/report.h"

/*
 * Processes every file of cfg in turn; with ld NULL only validates.  Fills
 * *rep (initialized by the caller for cfg->n_files files).  One failing file
 * does not stop the others; the result is the most severe status.
 */
int pipeline_run(const config *cfg, loader *ld, run_report *rep);

/* Fills fr (cleared first) as a file the run did not start: its path, the
 * format it would have been read as (the profile's name, --format's, or
 * the one its name chooses), status failed, and why as its error. */
void pipeline_not_started(const config *cfg, file_report *fr, const char *path, const char *why);

#endif
