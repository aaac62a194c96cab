/*
 * log.h - messages to stderr, each one line prefixed "idemload: ".
 *
 * log_error() reports a failure where it happens, with its context; callers
 * that receive the failure pass it up without logging it again.  Nothing
 * here exits.  log_set_quiet() silences log_info() only.
 * Every function may be called from any thread: writes to stderr are
 * serialised, and a message first clears a progress line on screen.
 */
#ifndef IDEMLOAD_LOG_H
#define IDEMLOAD_LOG_H

#include <stdbool.h>

void log_set_quiet(bool quiet);
bool log_is_quiet(void);
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The last message log_error() wrote (escaped, without "idemload: error: "),
 * for a report that must say why a file was not loaded, not only "see the
 * error above" (a report or page mailed by a nightly job has no stderr
 * beside it); "" before any.  The caller owns the copy; NULL when memory
 * runs out. */
char *log_last_error(void);

/* Draws a progress line (no line break; it replaces the one shown), and
 * removes it.  A message logged meanwhile clears it first. */
void log_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_progress_clear(void);
/* For a caller that drew its own line on stderr: records that one is
 * shown (true), or removes it (false). */
void log_set_progress_shown(bool shown);

#endif
