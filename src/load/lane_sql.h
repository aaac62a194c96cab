/*
 * lane_sql.h - the statements a lane runs for every chunk (the two merges
 * and the stale count, and their row-by-row forms for --changes), rendered once from sql.c's templates and the
 * target's names.  A pure function: no connection, so a unit test renders
 * exactly the SQL an import sends (tests/golden/).
 *
 * Ownership: lane_sql_free() releases what lane_sql_render() filled.
 */
#ifndef IDEMLOAD_LANE_SQL_H
#define IDEMLOAD_LANE_SQL_H

#include <stdbool.h>

#include "util/buf.h"

/* The target as the merge names it, every identifier already quoted. */
typedef struct lane_sql_names {
    const char *table;      /* "schema"."name" */
    const char *conflict;   /* "(tenant_id, ...) WHERE (deleted_at IS NULL)" */
    const char *active;     /* the active-row predicate, "true" when none */
    const char *extra_cols; /* ", col, ..." of --set beyond idemload's columns, or "" */
    const char *extra_vals; /* ", $4::type, ..." their parameters, or "" */
    bool partitioned;       /* no system columns to return */
    bool update;            /* --on-conflict update (else nothing) */
    const char *shadow_of;  /* table is a dry run's copy of this target (SQL_SHADOW_*),
                             * filled from it before each merge; NULL: none */
} lane_sql_names;

typedef struct lane_sql {
    buf merge_probe;        /* probe the active rows first (keys tend to exist) */
    buf merge_direct;       /* straight to the INSERT (keys tend to be new) */
    buf count_stale;        /* classifies the rows a merge did not write */
    buf merge_detail;       /* --changes: the probing merge, row by row */
    buf stale_detail;       /* --changes: count_stale, row by row */
    buf append;             /* COPY of new keys straight into the target */
    buf shadow_fill;        /* a dry run's copy: the staged keys' rows from the target */
    buf citus_action;       /* a distributed target: the conflict action and its
                             * RETURNING, for SQL_CITUS_MERGE (citus_stage.c) */
    buf append_probe;       /* which keys of an append the table holds after all */
    buf xmin_of_key;        /* the xmin of a key's active row (SQL_XMIN_OF_KEY) */
    buf supersede;          /* --supersede before a merge (SQL_SUPERSEDE) */
} lane_sql;

/* Renders the statements into *out (which starts empty); false when
 * out of memory. */
bool lane_sql_render(const lane_sql_names *names, lane_sql *out);
void lane_sql_free(lane_sql *s);

#endif
