/*
 * clock.h - monotonic time, for elapsed times and waits (never wall time:
 * the clock may be set back while a load runs).
 */
#ifndef IDEMLOAD_CLOCK_H
#define IDEMLOAD_CLOCK_H

/* Seconds on CLOCK_MONOTONIC (a fixed but unspecified origin). */
double now_seconds(void);

#endif
