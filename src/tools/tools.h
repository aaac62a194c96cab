/*
 * tools.h - the table commands: init, check, dedupe, create-index
 * (SPEC.md "Table safety tools").  Each returns the exit status and logs
 * its own errors once.
 */
#ifndef IDEMLOAD_TOOLS_H
#define IDEMLOAD_TOOLS_H

#include "core/config.h"

int tools_init(const config *cfg);
int tools_check(const config *cfg);
int tools_dedupe(const config *cfg);
int tools_create_index(const config *cfg);
/* idemload status: the ledger of the target (tools_status.c). */
int tools_status(const config *cfg);

#endif
