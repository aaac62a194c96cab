/*
 * outcome.h - what the merge did with each row of a chunk, as the loader
 * hands it back to the pipeline: the action of every row (for the figures
 * per group) and, when asked (--changes), the versions before and after.
 * Indexed like the chunk (chunk_get), whatever lanes the rows went through.
 *
 * Ownership: the caller owns the arrays (chunk_outcome_reserve() grows
 * them, chunk_outcome_free() releases them); the loader only fills them.
 */
#ifndef IDEMLOAD_OUTCOME_H
#define IDEMLOAD_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/figures.h"
#include "db/db.h"
#include "output/changes.h"

typedef struct chunk_outcome {
    uint8_t *action;        /* merge_action of each row */
    bool details;           /* fill before/after (--changes) */
    bool *has_before;       /* details: was there an active row before? */
    row_version *before;    /* details */
    row_version *after;     /* details */
    size_t cap;
} chunk_outcome;

/* Room for n rows, every action MERGE_NONE.  False when out of memory. */
bool chunk_outcome_reserve(chunk_outcome *o, size_t n);
void chunk_outcome_free(chunk_outcome *o);

/*
 * For a lane of the loader, which merges the rows idx[lo..hi] of the chunk
 * (ord = position in idx + 1, as staged).  Each returns false when the
 * server's answer does not fit the rows staged (a bug, not data).
 */
/* Every row of the range: action a. */
void outcome_fill(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi, merge_action a);

/* An int[] of ords as the server writes it ("{3,-5,7}", NULL or "" for
 * none): a positive ord's row gets pos, a negative one's neg. */
bool outcome_apply_ords(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi,
                        const char *ords, merge_action pos, merge_action neg);

/* The rows of SQL_MERGE_DETAIL: actions and versions.  The ords of rows
 * sent to the INSERT but not written are appended to *missed as an int[]
 * text ("" when none), for SQL_STALE_DETAIL; those rows are left unchanged
 * until it says otherwise.  Adds inserted, updated and stale to *c. */
bool outcome_apply_detail(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi,
                          const db_result *r, buf *missed, load_counts *c);

/* The rows of SQL_STALE_DETAIL: stale, with the newer active version as
 * before.  Adds them to c->stale (and takes them from c->unchanged). */
bool outcome_apply_stale_detail(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi,
                                const db_result *r, load_counts *c);

/* The inserted rows of SQL_MERGE_DETAIL_NOTHING (ord, status, received_at):
 * inserted with that version after; the other rows of the range existing.
 * Adds the figures to *c. */
bool outcome_apply_inserted(chunk_outcome *o, const uint32_t *idx, size_t lo, size_t hi,
                            const db_result *r, load_counts *c);

#endif
