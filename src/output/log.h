/*
 * log.h - messages to stderr, each one line prefixed "idemload: ".
 *
 * log_error() reports a failure where it happens, with its context; callers
 * that receive the failure pass it up without logging it again.  Nothing
 * here exits.  log_set_quiet() silences log_info() only.
 */
#ifndef IDEMLOAD_LOG_H
#define IDEMLOAD_LOG_H

#include <stdbool.h>

void log_set_quiet(bool quiet);
bool log_is_quiet(void);
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Clears a progress line on stderr, if one is shown, before a message. */
void log_set_progress_shown(bool shown);

#endif
