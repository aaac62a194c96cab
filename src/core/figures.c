/*
 * figures.c - the figures of a load and the merge's actions (see figures.h).
 */
#include "core/figures.h"

void load_counts_add(load_counts *to, const load_counts *from)
{
    to->rows_read += from->rows_read;
    to->rows_rejected += from->rows_rejected;
    to->rows_skipped += from->rows_skipped;
    to->rows_deduplicated += from->rows_deduplicated;
    to->inserted += from->inserted;
    to->updated += from->updated;
    to->unchanged += from->unchanged;
    to->stale += from->stale;
    to->existing += from->existing;
    to->chunks += from->chunks;
}

const char *merge_action_name(merge_action a)
{
    switch (a) {
    case MERGE_UNCHANGED:
        return "unchanged";
    case MERGE_INSERTED:
        return "inserted";
    case MERGE_UPDATED:
        return "updated";
    case MERGE_STALE:
        return "stale";
    case MERGE_EXISTING:
        return "existing";
    case MERGE_REFUSED:
        return "refused";
    case MERGE_NONE:
        break;
    }
    return "none";
}

void load_counts_count(load_counts *c, merge_action a)
{
    switch (a) {
    case MERGE_UNCHANGED:
        c->unchanged++;
        break;
    case MERGE_INSERTED:
        c->inserted++;
        break;
    case MERGE_UPDATED:
        c->updated++;
        break;
    case MERGE_STALE:
        c->stale++;
        break;
    case MERGE_EXISTING:
        c->existing++;
        break;
    case MERGE_REFUSED:
    case MERGE_NONE:
        break;
    }
}

uint64_t load_counts_merged(const load_counts *c)
{
    return c->inserted + c->updated + c->unchanged + c->stale + c->existing;
}

uint64_t load_counts_kept(const load_counts *c)
{
    return c->rows_read - c->rows_rejected - c->rows_skipped - c->rows_deduplicated;
}
