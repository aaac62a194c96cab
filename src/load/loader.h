/*
 * loader.h - chunks into PostgreSQL: COPY into a staging table, one merge
 * per chunk, the ledger row, commit; retries on lost connections, deadlocks
 * and serialization failures; row-by-row isolation of rows the server
 * refuses.  The pipeline sees only this interface, never libpq.
 *
 * Ownership: loader_open() returns a loader freed by loader_close(), which
 * sets the caller's pointer to NULL.  Every function returns an exit_code
 * (EXIT_OK on success) and logs its own failure once.
 */
#ifndef IDEMLOAD_LOADER_H
#define IDEMLOAD_LOADER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/buf.h"
#include "chunk/chunk.h"
#include "core/config.h"
#include "core/figures.h"
#include "load/outcome.h"
#include "output/rejects.h"
#include "load/ledger.h"

typedef struct loader loader;

/*
 * Connects (libpq conventions), reads the target's unique index on the
 * business key and prepares the merge.  On failure returns NULL and stores
 * the exit code (2 for configuration, 4 for the database) in *code.
 */
loader *loader_open(const config *cfg, int *code);
void loader_close(loader **ld);

/*
 * Looks the file up in the ledger and takes the file's advisory lock (so
 * two processes never load one file at once).  Fills *plan.  When another
 * process holds the lock: wait for it, or (wait false) set plan->busy and
 * return at once, having taken nothing (loader_end_file is not needed).
 */
int loader_begin_file(loader *ld, const file_identity *id, size_t chunk_rows, bool wait,
                      file_plan *plan);

/*
 * Loads one chunk as one transaction per lane (in a dry run: one savepoint
 * of the run's single transaction).  Sorts the chunk's rows by key first,
 * so concurrent loaders lock keys in the same order.  Rows the server refuses go to rj (written and
 * synced before their lane commits; a failure to write them fails the chunk, exit 3) and move from
 * merged to rejected in *counts; the merge figures are added to *counts.
 * chunk_no counts from 1.  *out (room for the chunk's rows:
 * chunk_outcome_reserve) receives what the merge did with each row, indexed
 * like the sorted chunk, and with out->details their versions before and
 * after; rows of lanes an earlier run committed stay MERGE_NONE.
 * A lane the split leaves without rows is not run: no transaction, no
 * ledger row, nothing committed.
 * *lanes_committed: some lane of the chunk committed (by this run or an
 * earlier one); when the chunk failed, *counts then holds the figures of
 * those lanes (chunks 0; their rows read being the rows they merged or
 * refused), so a report never understates committed work, and the rows of
 * the lanes rolled back are MERGE_NONE in *out.
 */
int loader_load_chunk(loader *ld, chunk *ch, uint64_t chunk_no, const char *file, rejects *rj,
                      load_counts *counts, chunk_outcome *out, bool *lanes_committed);

/* The --changes lines an earlier run committed for chunk chunk_no of the
 * current file (ledger_chunk_changes), into *out; *without: lanes it
 * committed without them.  An exit code (logged). */
int loader_committed_changes(loader *ld, uint64_t chunk_no, buf *out, int *without);

/* Why the last chunk's load failed, as logged (the first lane that gave
 * up), for the report; NULL when no lane said. */
const char *loader_error(const loader *ld);

/* Records the file as completed (complete) or leaves it resumable; releases
 * the file's lock. */
int loader_end_file(loader *ld, bool complete);

/* Ends the run: in a dry run rolls everything back. */
int loader_finish(loader *ld);

/* The database the loader is connected to, as user@host:port/dbname (for
 * the report and the page). */
const char *loader_database(loader *ld);

#endif
