/*
 * lane.h - one lane of one chunk on one connection, as one transaction:
 *   BEGIN; TRUNCATE idemload_stage; [append;] COPY; merge; [count stale];
 *   ledger row (chunk, lane); COMMIT
 * (in a dry run a savepoint of the run's transaction instead).
 *
 * The append: rows whose key no earlier chunk of the run carried (the
 * job's fresh rows) are most often new to the table too, as in a first
 * load; they are COPYed straight into the target under a savepoint, which
 * is all a new key needs: no staging, no conflict check, no RETURNING.
 * First a read-only probe (SQL_APPEND_PROBE) asks which of those keys the
 * table holds as active: those rows take the merge, so a COPY never meets
 * a key the table has and never leaves the dead heap tuples of a batch it
 * could not finish (SPEC.md, "Nothing written means nothing written").
 * When more than a twentieth of the probed keys are present (a
 * re-import, a nightly file of many known keys), or the COPY
 * still fails (a concurrent load got to a key first), the lane merges its
 * next 1, 2, 4 ... chunks (doubling, up to APPEND_MAX_WAIT) before probing
 * again, so a file of keys the table has costs a few probes.  When the
 * server refuses a row, the lane is redone in isolation: ranges of rows,
 * each under a savepoint, halved on failure until the single refused row is
 * found; the other rows load.  Lost connections, deadlocks and
 * serialization failures redo the lane with backoff, reconnecting through
 * the caller's reopen function, up to `retries` times.
 *
 * A lane knows the gate, the ledger and the database, never who runs it:
 * what it needs from above comes in a lane_env (fixed for the run), a
 * lane_job (the rows of this chunk) and a reopen function.
 * Ownership: the caller owns every struct; lane_free() releases a lane's
 * buffers, lane_result_clear() a result's refused rows.
 */
#ifndef IDEMLOAD_LANE_H
#define IDEMLOAD_LANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chunk/chunk.h"
#include "core/config.h"
#include "core/figures.h"
#include "db/db.h"
#include "load/citus_stage.h"
#include "load/gate.h"
#include "load/lane_sql.h"
#include "load/ledger.h"
#include "load/outcome.h"
#include "output/rejects.h"
#include "util/buf.h"

/* The longest a lane leaves its chunks to the merge after an append that
 * conflicted, in lanes. */
#define APPEND_MAX_WAIT 16

/* Fixed for the run, shared read-only by every lane. */
typedef struct lane_env {
    const lane_sql *sql;
    const char *final_array;        /* the final statuses, a smallint[] literal */
    const column_set *extra_set;    /* --set constants of other columns ($4..) */
    size_t n_extra_set;
    bool update;                    /* --on-conflict update */
    bool append;                    /* fresh keys may be COPYed into the target */
    bool probe_append;              /* ... after probing which the table holds (not
                                     * when it held no active row as the run began) */
    bool dry_run;
    bool shadow;                    /* a dry run merging into a copy (sql->shadow_fill) */
    bool distributed;               /* the target is a Citus table (for a hint) */
    int retries;
    gate *gate;
} lane_env;

/*
 * Opens a new session in place of *conn after a lost connection (the old
 * one is closed); false with a message in *err.  *conn is then NULL or the
 * new session, ready for a lane.
 */
typedef bool (*lane_reopen_fn)(void *ctx, db **conn, buf *err);

/* One connection's lane runner, kept across chunks. */
typedef struct lane_runner {
    const lane_env *env;
    db *conn;                   /* the session (the reopen function's to replace) */
    lane_reopen_fn reopen;
    void *reopen_ctx;
    bool holds_file_lock;       /* retake the ledger's file lock after reopening */
    citus_stage *stage;         /* a distributed target: this connection's staging
                                 * table (the reopen function renews it); else NULL */
    bool probe;                 /* next lane: probe first (keys tend to exist) */
    int append_wait;            /* lanes to leave to the merge before appending again */
    int append_backoff;         /* the last such wait (doubles while appends conflict) */
    bool append_off;            /* COPY into the target failed for a reason
                                 * not of the rows: no more appends */
    uint32_t *split;            /* scratch: the fresh rows, then the others */
    size_t cap_split;
    buf probe_keys[4];          /* scratch: the append's keys as array literals */
    buf xids;                   /* the attempt's subtransactions that wrote rows
                                 * ("a,b,..."), for its ledger row (--supersede) */
    buf copybuf;
    buf missed;                 /* scratch: ords for the stale classification */
    char err_state[6];          /* the last error's SQLSTATE and message, kept */
    buf err_msg;                /* past the ROLLBACK that clears the connection's */
    buf changes;                /* scratch: the lane's --changes lines for the ledger */
} lane_runner;

/* The rows of one lane of one chunk. */
typedef struct lane_job {
    const chunk *ch;
    const uint32_t *idx;        /* the lane's row indexes, in key order */
    size_t n;
    uint64_t chunk_no;          /* from 1 */
    int lane, lanes;            /* this lane of how many */
    const char *path;           /* the file, for messages */
    chunk_outcome *out;         /* each row's outcome: the lane writes its rows' */
    load_counts base;           /* figures the lane's row starts with: the chunk's reading
                                 * figures in one lane of it (loader.c), zero in the others */
    uint64_t last_committed;    /* for messages */
    ledger *ledger;             /* the file's ledger, or NULL (a stream) */
    const uint8_t *fresh;       /* by chunk row index: 1 when no earlier chunk of the
                                 * run had the key (seen.h); NULL: merge every row */
    rejects *rj;                /* where the rows the server refuses go, written and
                                 * synced before the lane commits; NULL: nowhere */
} lane_job;

/* A row the server refused, kept until its lane commits (in the rejects
 * file before that: lane_job.rj). */
typedef struct refused {
    size_t index;               /* row index in the chunk */
    char *message;
} refused;

/* What a lane gives back. */
typedef struct lane_result {
    int code;                   /* exit code */
    load_counts counts;         /* as in its ledger row */
    refused *refused;           /* the rows the server refused (committed lanes) */
    size_t n_refused, cap_refused;
    bool arrived;               /* at the commit barrier (or given up) */
    buf error;                  /* why it gave up (code not EXIT_OK), as logged */
} lane_result;

/* A lane on connection conn, with what it needs from above. */
void lane_init(lane_runner *ln, const lane_env *env, db *conn, lane_reopen_fn reopen, void *ctx);
void lane_free(lane_runner *ln);

/*
 * Loads the job's rows as one transaction, retrying as the errors allow.
 * Fills res->counts and res->refused when the lane committed, and the
 * outcome of each of its rows in job->out (with its versions when
 * job->out->details: SQL_MERGE_DETAIL); returns (and
 * stores in res->code) its exit code, logged.  The lane arrives at the
 * commit barrier before committing (res->arrived).
 */
int lane_run(lane_runner *ln, const lane_job *job, lane_result *res);

void lane_result_clear(lane_result *res);
void lane_result_free(lane_result *res);

/* "chunk 7" or "chunk 7, lane 2 of 2", for messages; returns out. */
const char *lane_where(uint64_t chunk_no, int lane, int lanes, char *out, size_t size);

#endif
