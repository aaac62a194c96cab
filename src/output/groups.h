/*
 * groups.h - the figures of a run per (tenant, channel, callback kind),
 * SPEC.md "Reconciliation": tallied row by row from what the merge did with
 * each row (merge_action), then handed to the run_report sorted.
 *
 * The kind is callback_type up to its first ':' (group_kind_len), so each
 * refund ("refund:RF123") does not make a group of its own.
 * Ownership: group_table_new() returns a table freed by group_table_free(),
 * which sets the caller's pointer to NULL.  One thread uses a table.
 */
#ifndef IDEMLOAD_GROUPS_H
#define IDEMLOAD_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/report.h"

typedef struct group_table group_table;

group_table *group_table_new(void);
void group_table_free(group_table **g);

/* Bytes of callback_type that make its kind. */
size_t group_kind_len(const char *callback_type, size_t len);

/* Counts one merged row in its group.  False when memory runs out. */
bool group_table_add(group_table *g, int64_t tenant_id, const char *channel, size_t channel_len,
                     const char *callback_type, size_t callback_type_len, merge_action a);

/* Moves the groups into rep->groups, sorted by tenant, channel and kind
 * (bytewise); the table is left empty.  False when memory runs out. */
bool group_table_move(group_table *g, run_report *rep);

#endif
