/*
 * params.h - the parameters that shape a file's rows, as one canonical
 * text: the ledger keeps it with the file's entry, and an entry holds only
 * for the parameters it was written with (SPEC.md, "Crash safety, reruns
 * and concurrency").  One line "name=value" per parameter, in a fixed
 * order, each value in a canonical form (sorted --set and --kind, a
 * content digest for the profile and the tenant map), so the same
 * parameters always give the same text and a change names itself.
 *
 * Ownership: the caller owns the bufs.
 */
#ifndef IDEMLOAD_PARAMS_H
#define IDEMLOAD_PARAMS_H

#include <stdbool.h>

#include "core/config.h"
#include "util/buf.h"

/*
 * Writes the canonical text of cfg's row-shaping parameters for a file of
 * format fmt (as the file is read: never FORMAT_AUTO) into *out (cleared
 * first).  Reads the profile and the tenant map for their content.  False
 * with *err when one of them cannot be read, or out of memory.
 */
bool params_describe(const config *cfg, input_format fmt, buf *out, buf *err);

/*
 * What differs between two such texts, for a message: "--timezone (was
 * +00:00, now +08:00), --set (was tenant_id=8, now tenant_id=9)" into *out
 * (appended).  Values longer than a line are left out.
 */
bool params_diff(const char *was, const char *now, buf *out);

#endif
