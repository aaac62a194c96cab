/*
 * prepass.h - the profile pre-pass: a profile whose file states its own
 * row count has the whole file read once, and the count checked, before
 * anything of it is loaded (SPEC.md: "The file checks itself").  Reading is
 * cheap next to loading.  Runs on the loading thread, before the file's
 * reading thread starts.
 */
#ifndef IDEMLOAD_PREPASS_H
#define IDEMLOAD_PREPASS_H

#include <stdbool.h>

#include "core/config.h"
#include "input/reader.h"
#include "input/source.h"
#include "util/buf.h"

/* Is each file read once before it is loaded (an import, loading true,
 * with a profile that checks the file's row count)? */
bool prepass_wanted(const config *cfg, bool loading);

/* Reads path (the version id names: source_open_identified) through to
 * its end, which checks its count (the reader's trailer); false with the
 * message in *err (also when interrupted). */
bool prepass_count(const char *path, const source_identity *id, const reader_options *ropt,
                   buf *err);

#endif
