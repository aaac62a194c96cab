/*
 * changes.h - the --changes file (SPEC.md "Reconciliation"): one JSON
 * object per line for every row the merge inserted or updated (or would,
 * in a dry run) and every stale row:
 *   {"file", "line", "action", "tenant_id", "channel", "out_trade_no",
 *    "callback_type", "before": {"status", "received_at"} or null,
 *    "after": {"status", "received_at"}}
 * received_at as UTC text (db/sql.h SQL_TS_TEXT), both versions written by
 * the server in one format.  For a stale row, "after" is the incoming
 * version that lost and "before" the newer active one.
 * Ownership: changes_open() returns an object freed by changes_close().
 */
#ifndef IDEMLOAD_CHANGES_H
#define IDEMLOAD_CHANGES_H

#include <stdbool.h>
#include <stdint.h>

#include "chunk/chunk.h"
#include "output/report.h"
#include "util/buf.h"

/* A version of a row as --changes shows it. */
typedef struct row_version {
    int16_t status;
    char received_at[48];   /* "2026-11-28T02:00:00.000000Z", or "infinity" */
} row_version;

typedef struct changes changes;

/* Creates (truncates) path, "-" for standard output.  NULL with *err. */
changes *changes_open(const char *path, buf *err);

/* Does action a make a line (inserted, updated, stale)? */
bool changes_wanted(merge_action a);

/* Writes one line for row r of file; before NULL: no active row before.
 * False with *err when the file cannot be written. */
bool changes_write(changes *c, const char *file, const row *r, merge_action a,
                   const row_version *before, const row_version *after, buf *err);

/* Lines written so far. */
uint64_t changes_count(const changes *c);

/* Flushes and closes; false with *err when the last writes failed. */
bool changes_close(changes **c, buf *err);

#endif
