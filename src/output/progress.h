/*
 * progress.h - the progress line on stderr: bytes and rows done, rate, ETA.
 * Shown only while stderr is a terminal and --quiet is not given; redrawn
 * at most five times a second.
 */
#ifndef IDEMLOAD_PROGRESS_H
#define IDEMLOAD_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct progress {
    bool enabled;
    double started;
    double run_started;   /* progress_init's time: a step's elapsed */
    double last_draw;
    const char *label;
    uint64_t rows;
    uint64_t bytes;
    int64_t total_bytes;  /* -1: unknown */
} progress;


void progress_init(progress *p, bool quiet);
void progress_file(progress *p, const char *label, int64_t total_bytes);
void progress_update(progress *p, uint64_t bytes, uint64_t rows);
/* Redraws the line as the step the run has come to after its reading
 * (reconcile's comparison, statement by statement): what, and the time
 * since the run began; so the line does not stand still at "ETA 0s"
 * while the server works. */
void progress_step(progress *p, const char *what);
/* Erases the line (before the summary). */
void progress_done(progress *p);

#endif
