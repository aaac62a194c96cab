/*
 * progress.c - the progress line (see progress.h).
 */
#include "output/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "output/log.h"
#include "util/clock.h"

void progress_init(progress *p, bool quiet)
{
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->started = p->run_started = now_seconds();
    p->last_draw = 0;
    p->label = "";
    p->rows = p->bytes = 0;
    p->total_bytes = -1;
}

void progress_file(progress *p, const char *label, int64_t total_bytes)
{
    p->label = label;
    p->total_bytes = total_bytes;
    p->started = now_seconds();
    p->rows = p->bytes = 0;
}

void progress_update(progress *p, uint64_t bytes, uint64_t rows)
{
    if (!p->enabled)
        return;
    p->rows = rows;
    p->bytes = bytes;
    double t = now_seconds();
    if (t - p->last_draw < 0.2)
        return;
    p->last_draw = t;
    double el = t - p->started;
    double rate = el > 0 ? (double)rows / el : 0;
    char eta[32] = "";
    if (p->total_bytes > 0 && bytes > 0 && el > 0.5) {
        double left = el * ((double)p->total_bytes / (double)bytes - 1.0);
        snprintf(eta, sizeof eta, ", ETA %.0fs", left < 0 ? 0 : left);
    }
    if (p->total_bytes > 0)
        log_progress("%s: %.1f/%.1f MB (%.0f%%), %llu rows, %.0f rows/s%s", p->label,
                     (double)bytes / 1e6, (double)p->total_bytes / 1e6,
                     100.0 * (double)bytes / (double)p->total_bytes, (unsigned long long)rows,
                     rate, eta);
    else
        log_progress("%s: %.1f MB, %llu rows, %.0f rows/s", p->label, (double)bytes / 1e6,
                     (unsigned long long)rows, rate);
}

void progress_step(progress *p, const char *what)
{
    if (!p->enabled)
        return;
    p->last_draw = now_seconds();
    log_progress("%s (%.0fs)", what, p->last_draw - p->run_started);
}

void progress_done(progress *p)
{
    if (p->enabled && p->last_draw > 0)
        log_progress_clear();
}
