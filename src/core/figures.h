/*
 * figures.h - the figures of a load (rows read, rejected, deduplicated,
 * and what the merge did with the rest) and the merge's action for one
 * row: what the loader counts, the ledger stores, the report and the
 * changes file print.
 */
#ifndef IDEMLOAD_FIGURES_H
#define IDEMLOAD_FIGURES_H

#include <stdint.h>

typedef struct load_counts {
    uint64_t rows_read;
    uint64_t rows_rejected;
    uint64_t rows_skipped;      /* rows a channel profile skips on purpose */
    uint64_t rows_deduplicated;
    uint64_t inserted;
    uint64_t updated;
    uint64_t unchanged;
    uint64_t stale;
    uint64_t existing;
    uint64_t chunks;
} load_counts;

void load_counts_add(load_counts *to, const load_counts *from);

/* What the merge did with one row of a chunk. */
typedef enum merge_action {
    MERGE_UNCHANGED,
    MERGE_INSERTED,
    MERGE_UPDATED,
    MERGE_STALE,
    MERGE_EXISTING,
    MERGE_REFUSED,      /* the server refused it: a reject */
    MERGE_NONE          /* not merged in this run (committed by an earlier one) */
} merge_action;

/* "inserted", "updated", ... */
const char *merge_action_name(merge_action a);
/* Adds one row to the figure of action a (none for REFUSED and NONE). */
void load_counts_count(load_counts *c, merge_action a);
/* Rows that reached the merge. */
uint64_t load_counts_merged(const load_counts *c);
/* Rows a run that merges nothing (validate, reconcile) kept: those read
 * less the rejected, skipped and deduplicated ("would_merge"). */
uint64_t load_counts_kept(const load_counts *c);

#endif
