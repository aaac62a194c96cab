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
 *
 * After a crash (SPEC.md "The side outputs are part of the load"): each
 * lane also renders its lines (changes_render) into its ledger row, in the
 * transaction that makes them true, and a resumed file's run writes the
 * lines of the chunks an earlier run committed from there before its own:
 * the file, created anew by every run, then holds one line per change of
 * the whole file.  Why the ledger and not the file itself: the file is
 * written after the commit (in chunk order, so a dry run and a real run
 * write the same lines whatever the lanes), and a line written before the
 * commit would have to be taken back when the commit fails; the ledger row
 * commits with the rows or not at all, with nothing to repair.  The ledger
 * drops the lines when the file is completed, after changes_sync.
 * Ownership: changes_open() returns an object freed by changes_close().
 */
#ifndef IDEMLOAD_CHANGES_H
#define IDEMLOAD_CHANGES_H

#include <stdbool.h>
#include <stdint.h>

#include "chunk/chunk.h"
#include "core/figures.h"
#include "util/buf.h"

/* A version of a row as --changes shows it. */
typedef struct row_version {
    int16_t status;
    char received_at[48];   /* "2026-11-28T02:00:00.000000Z", or "infinity" */
} row_version;

typedef struct changes changes;

/* Creates (truncates) path, "-" for standard output; a path naming the file
 * standard output or error is redirected to is written through that stream,
 * after what it holds (outfile_std_stream).  NULL with *err. */
changes *changes_open(const char *path, buf *err);

/* Does action a make a line (inserted, updated, stale)? */
bool changes_wanted(merge_action a);

/* Appends to *out the line (newline included) for row r of file; before
 * NULL: no active row before.  False when out of memory. */
bool changes_render(buf *out, const char *file, const row *r, merge_action a,
                    const row_version *before, const row_version *after);

/* Writes one line for row r of file (changes_render).  False with *err
 * when the file cannot be written. */
bool changes_write(changes *c, const char *file, const row *r, merge_action a,
                   const row_version *before, const row_version *after, buf *err);

/* Writes len bytes of whole lines rendered earlier (changes_render: the
 * lines a ledger kept, see below) for file, counting them.  Each line names
 * file as this run does: the run that rendered it may have spelled the same
 * file another way (a relative path from another directory), and the file
 * must read as an uninterrupted run of this command would write it. */
bool changes_write_lines(changes *c, const char *file, const char *text, size_t len, buf *err);

/* Flushes the file and syncs it to disk (fsync), before the ledger marks a
 * file completed; false with *err when the lines cannot be written. */
bool changes_sync(changes *c, buf *err);

/* Flushes and closes; false with *err when the last writes failed. */
bool changes_close(changes **c, buf *err);

#endif
