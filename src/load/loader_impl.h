/*
 * loader_impl.h - the inside of the loader (loader.h), shared by its three
 * files: loader.c (connections, threads, splitting a chunk into lanes, the
 * commit gate), loader_lane.c (one lane of one chunk: COPY, merge, retries)
 * and loader_ledger.c (the ledger).  Nothing else includes it.
 */
#ifndef IDEMLOAD_LOADER_IMPL_H
#define IDEMLOAD_LOADER_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "db/db.h"
#include "load/loader.h"
#include "db/target.h"

#define MAX_LANES MAX_JOBS
/* A part left alone because an earlier part on its connection failed. */
#define PART_NOT_RUN (-1)

/*
 * The commit gate of the chunk in flight, so an interrupt leaves whole
 * chunks: the signal hook moves it from RUNNING to CANCELLED and cancels
 * every statement; the first lane ready to commit moves it from RUNNING to
 * COMMITTING, after which an interrupt lets the chunk's lanes finish and
 * commit (the import stops after it).  Compare-and-swap on one word, so it
 * is safe in the signal handler.  CANCELLED is final.
 */
enum { GATE_RUNNING, GATE_COMMITTING, GATE_CANCELLED };

/* Outcome of one attempt at a part. */
typedef enum attempt_result {
    ATTEMPT_OK,
    ATTEMPT_DATA,       /* the server refused a row: isolate */
    ATTEMPT_RETRY,      /* deadlock or serialization failure */
    ATTEMPT_CONNECTION, /* connection lost */
    ATTEMPT_CANCELED,   /* interrupted */
    ATTEMPT_FAILED      /* anything else: give up */
} attempt_result;

/* A row the server refused, kept until its part commits. */
typedef struct refused {
    size_t index;           /* row index in the chunk */
    char *message;
} refused;

/* One lane's share of the chunk in flight. */
typedef struct part {
    const uint32_t *idx;    /* the chunk's row indexes, in key order */
    size_t n;
    bool done;              /* committed by an earlier run (resume) */
    load_counts counts;     /* as in its ledger row (lane 0: with the reading figures) */
    bool arrived;           /* at the commit barrier (or given up) */
    int code;               /* exit code, or PART_NOT_RUN */
} part;

/* A connection and the thread that drives it. */
typedef struct worker {
    loader *ld;
    int no;
    db *conn;               /* read by the signal handler: swapped atomically */
    bool probe;             /* next part: probe first (keys tend to exist) */
    buf sql;                /* scratch */
    buf copybuf;
    refused *refused;
    size_t n_refused, cap_refused;
    pthread_t thread;
    bool started;
    uint64_t seen;          /* the last job taken */
    char err_state[6];      /* the last error's SQLSTATE and message, kept */
    buf err_msg;            /* past the ROLLBACK that clears the connection's */
    /* A distributed target (loader_citus.c): this connection's staging
     * table and its statements. */
    buf stage;              /* quoted name; "" when none */
    buf c_copy, c_truncate, c_verdict, c_verdicts, c_merge, c_missed;
} worker;

struct loader {
    const config *cfg;
    target t;
    buf merge_sql;          /* the probing merge */
    buf merge_direct_sql;   /* the merge without the probe */
    buf stale_sql;
    buf extra_cols;         /* ", col, ..." of --set beyond idemload's columns */
    buf extra_vals;         /* ", $4::type, ..." their parameters */
    buf inserted_expr;      /* {inserted}: SQL_INSERTED_XMAX or _SNAPSHOT */
    buf citus_action;       /* a distributed target: the conflict action, its RETURNING */
    buf seq_literal;        /* ... and the id sequence, as a quoted literal */
    buf ledger_name;        /* quoted, schema-qualified */
    buf ledger_chunk_name;
    char final_array[16 * MAX_FINAL_STATUSES];
    bool ledger_exists;
    bool ledger_lanes;      /* the ledger has its lane columns */
    bool ledger_identity;   /* the ledger records the table's identity */
    bool ledger_loader;     /* the ledger records who loads a file */
    char host[256];         /* this process, as the ledger records it */
    char pid[16];
    bool in_run_txn;        /* dry run: the one transaction is open */
    /* the current file */
    file_identity file;
    bool use_ledger;
    bool locked;
    char table_oid[24];     /* the identity of the table the file's entry */
    buf table_storage;      /* was started for ("" when not known) */
    uint64_t last_committed;    /* every lane committed up to here */
    int lanes;
    uint64_t lane_done[MAX_LANES];
    /* the connections */
    int n_workers;
    worker workers[MAX_LANES];
    /* the chunk in flight, shared read-only with the workers */
    chunk *ch;
    uint64_t chunk_no;
    const char *path;
    rejects *rj;
    load_counts reading;
    part parts[MAX_LANES];
    uint32_t *idx;
    size_t cap_idx;
    /* handing chunks to the worker threads */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool sync_inited;
    uint64_t job;
    int pending;
    bool quit;
    int gate;               /* GATE_*, atomic */
    /* the commit barrier of the chunk in flight (under mu) */
    int arrived, expected;
};

/* SQL of sql.c with the loader's names ({table}, {ledger}, ...) filled in. */
bool ld_render(const loader *ld, buf *out, const char *tmpl);
/* The same with {do_update}, {stage} (a quoted name) and {seq}. */
bool ld_render_stage(const loader *ld, buf *out, const char *tmpl, const char *do_update,
                     const char *stage);

/*
 * A Citus-distributed target (loader_citus.c).  ld_citus_open: checks the
 * target (an id sequence) and sweeps staging tables of dead sessions, once
 * per import; an exit code.  ld_citus_session: creates the staging table of
 * connection d (about to become w's) and renders its statements.  ld_citus_merge:
 * the merge of staged rows [lo, hi], as merge_rows.  ld_citus_close drops
 * the staging tables; ld_citus_free releases a worker's buffers.
 */
int ld_citus_open(loader *ld);
bool ld_citus_session(worker *w, db *d);
bool ld_citus_merge(worker *w, size_t lo, size_t hi, load_counts *c);
void ld_citus_close(loader *ld);
void ld_citus_free(worker *w);

/* The commit gate: has an interrupt cancelled the chunk in flight?  May a
 * lane commit (false once cancelled; the first lane to ask closes the gate
 * to cancelling)? */
bool ld_cancelled(const loader *ld);
bool ld_may_commit(loader *ld);

/*
 * The commit barrier: a lane ready to commit waits (wait = true) until
 * every lane of the chunk is ready, so their COMMITs go out together and a
 * crash can hardly fall between them; a lane that gives up arrives without
 * waiting.  The wait ends after BARRIER_MS whatever happens: a waiting lane
 * holds its row locks, and two imports waiting at their barriers for lanes
 * blocked by each other's locks would otherwise never end.  No barrier in
 * a dry run, with one connection, or when a connection runs several lanes.
 */
#define BARRIER_MS 2000
void ld_arrive(loader *ld, int lane, bool wait);

/* "chunk 7" or "chunk 7, lane 2 of 2", for messages; returns out. */
const char *ld_where(const loader *ld, uint64_t chunk_no, int lane, char *out, size_t size);

/* (Re)opens a worker's session (staging table; in a dry run the run's
 * transaction); false with a message in *err. */
bool ld_connect_session(worker *w, buf *err);

/* Connection 0, which holds the file's lock and writes the file's row. */
db *ld_control(loader *ld);
/* Takes the file's advisory lock on connection 0 (waiting if another
 * process holds it). */
bool ld_file_lock(loader *ld);
/* The figures lane `lane` of chunk chunk_no committed, read on d; false
 * when there is no such ledger row (or the query failed: see db_ok). */
bool ld_lane_figures(loader *ld, db *d, buf *sql, uint64_t chunk_no, int lane, load_counts *c);

/* Loads lane `lane` of the chunk in flight on worker w; fills the part's
 * counts and returns its exit code. */
int ld_load_part(worker *w, int lane);
void ld_clear_refused(worker *w);

#endif
