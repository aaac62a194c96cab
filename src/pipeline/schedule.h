/*
 * schedule.h - the order a run takes its files in: each in turn, and the
 * files another process is loading (SPEC.md "Many importers") left for the
 * end, tried again until each is loaded, by this process or another.
 * Loading thread.
 */
#ifndef IDEMLOAD_SCHEDULE_H
#define IDEMLOAD_SCHEDULE_H

#include "pipeline/file.h"

/* Runs every file of x->cfg into x->rep->files; the most severe status. */
int schedule_files(const run_ctx *x);

#endif
