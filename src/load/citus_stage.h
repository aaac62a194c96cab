/*
 * citus_stage.h - the loader on a Citus-distributed target (SPEC.md "A
 * distributed target: Citus").
 *
 * Each connection stages its rows in an UNLOGGED table of its own, named
 * after its coordinator backend's pid, distributed by tenant_id and
 * colocated with the target, so every statement of the merge joins two
 * colocated tables on the distribution column and Citus runs it on the
 * workers, one task per shard (SQL_CITUS_* in sql.c says why each has its
 * shape).  One lane of one chunk:
 *   BEGIN; TRUNCATE stage; COPY stage (new_id from the id sequence);
 *   [UPDATE stage SET verdict (the probe); count the verdicts;]
 *   INSERT INTO target SELECT ... FROM stage WHERE verdict = 0
 *     ON CONFLICT ... RETURNING inserted, id;
 *   [the rows it did not write: stale or unchanged]; ledger row; COMMIT.
 * The ledger and the file locks stay on the coordinator (ledger.c).
 * Staging tables are dropped when the loader closes; those of a killed
 * loader (their backend gone) are swept when the next one opens.
 *
 * Ownership: citus_stage_free() releases what citus_stage_open() filled.
 */
#ifndef IDEMLOAD_CITUS_STAGE_H
#define IDEMLOAD_CITUS_STAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"
#include "core/figures.h"
#include "db/db.h"
#include "util/buf.h"

/* The target as the distributed statements name it, fixed for the run. */
typedef struct citus_names {
    const char *schema;     /* as in the catalog */
    const char *table;      /* "schema"."name" */
    const char *display;    /* for messages */
    const char *active;     /* the active-row predicate */
    const char *extra_cols; /* ", col, ..." of --set, or "" */
    const char *extra_vals; /* ", $4::type, ..." */
    const char *action;     /* the conflict action and its RETURNING (lane_sql.h) */
    buf seq;                /* the id sequence, a quoted literal (citus_target_open) */
} citus_names;

/* One connection's staging table and its statements. */
typedef struct citus_stage {
    buf name;               /* quoted; "" when none */
    buf copy, truncate, verdict, verdicts, merge, missed;
} citus_stage;

/*
 * Once per import, on the control connection: checks the target has an id
 * column filled by a sequence (the staged rows take their ids from it) and
 * drops the staging tables of sessions that are gone.  An exit code
 * (logged).
 */
int citus_target_open(citus_names *n, db *d);

/* Creates the staging table of session d and renders its statements. */
bool citus_stage_open(citus_stage *st, const citus_names *n, db *d);

/*
 * The merge of staged rows [lo, hi] (ords lo+1..hi+1) on conn, as the
 * single-server merge: final statuses final_array, --set values extra
 * (n_extra), update or nothing; *probe chooses the probe and is updated as
 * there.  Adds the figures to *c; false on a database error (left on conn).
 */
bool citus_stage_merge(const citus_stage *st, db *conn, const char *final_array,
                       const column_set *extra, size_t n_extra, bool update, bool *probe,
                       size_t lo, size_t hi, load_counts *c);

/* Drops the staging table through d (its own session, or another when that
 * one is gone); a failure is a warning. */
void citus_stage_drop(citus_stage *st, db *d);

/* Drops the staging tables of sessions that are gone (logged). */
void citus_sweep(const citus_names *n, db *d);

void citus_stage_free(citus_stage *st);
void citus_names_free(citus_names *n);

#endif
