/*
 * fault.h - fault injection for the tests: a fault the suite cannot cause
 * from outside (the client out of memory at one place) is asked for by
 * name in the environment, IDEMLOAD_FAULT=NAME.  Unset (always, outside
 * the tests), nothing changes.  The names are those of fault_injected's
 * callers: copy-oom (a lane's COPY buffer), changes-oom (a chunk's
 * --changes lines), connect-oom (a connection's handle, db_connect),
 * recon-oom (reconcile's zone and kind names, before its staging);
 * recon-server-texts is no fault: every statement row's money texts are
 * read by the server from its payload rather than by the client
 * (recon/stmt_texts.h), so that a test compares the two readings.
 */
#ifndef IDEMLOAD_FAULT_H
#define IDEMLOAD_FAULT_H

#include <stdbool.h>

/* Is the fault named name asked for?  Reads the environment: call it once
 * per chunk, not per row. */
bool fault_injected(const char *name);

#endif
