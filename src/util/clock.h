/*
 * clock.h - monotonic time, for elapsed times and waits (never wall time:
 * the clock may be set back while a load runs).
 */
#ifndef IDEMLOAD_CLOCK_H
#define IDEMLOAD_CLOCK_H

/* Seconds on CLOCK_MONOTONIC (a fixed but unspecified origin). */
double now_seconds(void);

/* For tests only: the time reconcile takes as "now" (its grace, the ages
 * of carried-over items, escalation, the register's last_seen and
 * resolved_at, the time of its discrepancy lines), from the environment
 * variable IDEMLOAD_NOW (a timestamptz literal with its zone,
 * 2026-12-02T12:00:00Z), so that a test means the same days whenever it
 * runs; NULL when unset or empty (the server's now()).  The one place the
 * variable is read. */
const char *clock_test_now(void);

#endif
