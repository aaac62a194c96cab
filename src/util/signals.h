/*
 * signals.h - SIGINT and SIGTERM become a flag the pipeline polls between
 * rows and chunks, plus an optional async-signal-safe hook (the loader
 * uses it to cancel the statement in flight, so a long merge stops at once).
 */
#ifndef IDEMLOAD_SIGNALS_H
#define IDEMLOAD_SIGNALS_H

#include <stdbool.h>

void signals_install(void);
bool signals_interrupted(void);
/*
 * Sets (fn non-NULL) or removes the hook; one at a time: the loader holds it
 * while it loads, a table tool while it runs.  fn runs inside the signal
 * handler: it must be async-signal-safe.  Call from the main thread only
 * (the one the signals are delivered to: other threads block them).
 */
void signals_set_hook(void (*fn)(void *arg), void *arg);

#endif
