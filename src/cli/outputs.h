/*
 * outputs.h - an output never names an input (SPEC.md "Outputs never touch
 * inputs"): before a command reads or creates anything, every output path of
 * its config (--rejects, the default rejects file included, --report,
 * --changes, --html, --discrepancies) is compared with every input (the
 * files, --tenant-map, --facts, a --profile file) by device and inode, so a hard link, a
 * symbolic link or another spelling of the same path is caught too.  "-"
 * (standard input or output) is never compared.  Nor do two outputs share a
 * regular file (by inode, or, when it does not exist yet, by the path its
 * resolved directory and name spell):
 * the one written last would replace the other.
 */
#ifndef IDEMLOAD_OUTPUTS_H
#define IDEMLOAD_OUTPUTS_H

#include <stdbool.h>

#include "core/config.h"
#include "util/buf.h"

/*
 * True when no output path of cfg is the same file as one of its inputs
 * or as another output; otherwise false with a message naming both in *err (the caller exits 2).
 * An output that does not exist yet cannot be an input.  Reads only the
 * file system's metadata (stat), opens nothing.
 */
bool outputs_check(const config *cfg, buf *err);

/*
 * True when every output path the user gave can be written: a file there
 * that this user may write, or a directory that exists and takes a new
 * file (a dangling symbolic link followed to the name it would create).
 * Otherwise false with a message naming the output and why in *err (the
 * caller exits 3 before reading or loading anything): a report whose
 * directory does not exist is found now, not after the load has committed
 * and the ledger holds the file as completed, when a rerun would skip it
 * and no report would ever carry its figures.  "-", a standard stream's
 * file and the default rejects file (created only when a row is rejected)
 * are not checked.  An existing regular file that permissions say is
 * writable is opened for appending and closed (no byte written): /proc
 * and /sys files refuse there, even to root.  *refused (may be NULL) is
 * set to the path refused, so that it is not tried again at the end.
 */
bool outputs_writable(const config *cfg, buf *err, const char **refused);

#endif
