/*
 * advice.h - the target the user named, as the options of an idemload
 * command a message advises ("fix: 'idemload dedupe --apply -d pay
 * --table billing.callbacks' ..."), so that the command pasted acts on
 * that table in that database, not on the defaults.
 */
#ifndef IDEMLOAD_ADVICE_H
#define IDEMLOAD_ADVICE_H

#include <stdbool.h>

#include "core/config.h"
#include "util/buf.h"

/*
 * Appends " -d DB" when the user gave -d (a password in it left out:
 * db_conninfo_shown), " --table NAME" when --table names another table
 * than the default, and " --index-name NAME" when index_name is not NULL
 * (pass it only for a command that takes it: create-index, init); each
 * value shell-quoted when it needs to be.  Appends nothing when the user
 * named neither, so the advice reads as it always did.  False: out of
 * memory (out may then hold part of it).
 */
bool advice_target_args(buf *out, const config *cfg, const char *index_name);

#endif
