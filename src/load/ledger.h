/*
 * ledger.h - the ledger of an import: which files were loaded into which
 * table, how far each lane of an unfinished file got and the figures it
 * committed, and the file's advisory lock.  Every ledger statement is
 * here; the ledger knows its tables' names and the current file, nothing
 * of the connections or threads that use it.
 *
 * Connections: every function takes the connection it runs on.  The file's
 * row and lock live on the coordinator's control connection (connection 0);
 * a lane writes its chunk row on its own connection, inside its own
 * transaction (ledger_chunk_row), and may read lane figures there.
 * Threads: between ledger_begin_file() and ledger_end_file() the lanes call
 * ledger_chunk_row() and ledger_lane_figures() concurrently; they only read
 * the ledger.  Everything else runs on the coordinator's thread between
 * chunks.
 * Errors: functions returning bool leave the server's error on the
 * connection (the caller logs it); those returning an exit code log.
 * Ownership: the caller owns the struct; ledger_free() releases its buffers.
 */
#ifndef IDEMLOAD_LEDGER_H
#define IDEMLOAD_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/figures.h"
#include "db/db.h"
#include "db/ledger_schema.h"
#include "util/buf.h"

/* Lanes a file can be split into (one per connection, --jobs). */
#define MAX_LANES MAX_JOBS

/* Identity of a file for the ledger. */
typedef struct file_identity {
    const char *path;
    char digest[65];        /* SHA-256 hex of the file's bytes; "" if unknown (stdin) */
    int64_t size;
    const char *params;     /* the parameters that shape its rows (params.h) */
} file_identity;

/* What the ledger says to do with a file. */
typedef struct file_plan {
    bool busy;              /* another process holds the file (not waiting): come back later */
    bool skip;              /* completed before: skip (unless --force) */
    bool ledger_unknown;    /* a dry run whose role may not read the ledger:
                               whether it would skip or resume is not known */
    uint64_t resume_after;  /* chunks already committed by an earlier run */
    bool next_partial;      /* ... and some lanes of the chunk after them */
    load_counts previous;   /* their figures */
    /* Not "" when the ledger knew the file but no longer holds it for the
     * table (truncated, rewritten, dropped and recreated, or not known):
     * why it is loaded (again, or from the start), for the summary. */
    char reload_reason[1024];
} file_plan;

typedef struct ledger {
    /* fixed for the run */
    const char *target;         /* the target's display name: the entries' key */
    const char *table_quoted;   /* the target, quoted, for its identity */
    bool dry_run;               /* read the ledger, never write it */
    bool unreadable_said;       /* a dry run said the role may not read it */
    bool force;                 /* --force: load completed files again */
    ledger_names names;         /* quoted, schema-qualified */
    ledger_version version;     /* which migrations it has had (a dry run reads
                                 * an older ledger as it is) */
    bool supersede;             /* --supersede */
    buf prior_xids;             /* the current file's earlier load's transactions, an
                                 * int8[] literal ("" when none or not superseding) */
    char host[256];             /* this process, as the ledger records it */
    char pid[16];
    buf chunk_sql;              /* the lanes' statements, rendered for the */
    buf lane_figures_sql;       /* ledger as it is (read-only during a chunk) */
    buf sql;                    /* scratch of the coordinator's statements */
    /* the current file */
    file_identity file;
    bool use;                   /* the file is in the ledger (not a stream) */
    bool locked;
    char table_oid[24];         /* the identity of the table the file's entry */
    buf table_storage;          /* was started for ("" when not known) */
    int lanes;                  /* the file's split */
    uint64_t lane_done[MAX_LANES];  /* chunks each lane has committed */
    uint64_t last_committed;    /* every lane committed up to here */
    char content_sha256[65];    /* an object's bytes, hashed as read ("": a file) */
} ledger;

/*
 * Names the ledger of the target's schema (schema as in the catalog;
 * target its display name, table_quoted its quoted name) and looks on d
 * whether it exists and in which version.  Creates nothing.  False (logged)
 * on a database error or out of memory.
 */
bool ledger_open(ledger *lg, db *d, const char *schema, const char *target,
                 const char *table_quoted, bool dry_run, bool force, bool supersede);
void ledger_free(ledger *lg);

/*
 * Starts a file on the control connection d: creates or migrates the
 * ledger (not in a dry run), takes the file's advisory lock (when another
 * process holds it: waits, or with wait false sets plan->busy and returns
 * at once, having taken nothing), records this process as the file's
 * loader, compares the entry with the table and fills *plan; chooses the file's lanes (`connections`, or the earlier run's
 * split to resume).  Returns an exit code (logged).
 */
int ledger_begin_file(ledger *lg, db *d, const file_identity *id, size_t chunk_rows,
                      int connections, bool wait, file_plan *plan);

/* Takes the file's advisory lock on d (again after d was reconnected). */
bool ledger_file_lock(ledger *lg, db *d);

/* Is the current file in the ledger (false for a stream)? */
bool ledger_in_use(const ledger *lg);

/* The current file's lanes, and the last chunk lane `lane` had committed
 * when the file began (0: none). */
int ledger_lanes(const ledger *lg);
uint64_t ledger_lane_done(const ledger *lg, int lane);

/* Every lane has committed chunk_no (after a chunk). */
void ledger_chunk_done(ledger *lg, uint64_t chunk_no);
uint64_t ledger_last_committed(const ledger *lg);

/*
 * The chunk row of lane `lane` of chunk chunk_no with its figures and its
 * --changes lines (changes: NULL without --changes; output/changes.h),
 * written on the lane's connection inside the lane's transaction, so it
 * commits with the lane's rows or not at all.  The lane whose figures
 * hold the chunk's rows read (one lane per chunk) also moves the file's
 * progress.  xids: the lane's subtransactions that wrote rows, an
 * int8[] literal ("" or NULL: none); the statement adds the transaction's
 * own.
 */
bool ledger_chunk_row(const ledger *lg, db *lane_conn, uint64_t chunk_no, int lane,
                      const load_counts *c, const char *changes, const char *xids);

/*
 * The --changes lines every lane of chunk chunk_no committed (the lanes an
 * earlier run committed, when resuming), in lane order, read on d into *out
 * (cleared first); *without: how many of those lanes kept none (committed
 * by a run without --changes).  False on a database error (or out of
 * memory: db_ok tells which).
 */
bool ledger_chunk_changes(ledger *lg, db *d, uint64_t chunk_no, buf *out, int *without);

/*
 * With --supersede: the transactions (xids modulo 2^32, an int8[] literal)
 * that wrote the versions of the current file's earlier loads under other
 * parameters, which this load may replace (SQL_SUPERSEDE); NULL when there
 * are none or without --supersede.  Fixed between ledger_begin_file and
 * ledger_end_file (the lanes read it).
 */
const char *ledger_prior_xids(const ledger *lg);

/*
 * Has the target kept the identity the current file started with (its oid
 * and storage, read by ledger_begin_file)?  Run by a lane inside its
 * transaction, after its writes: the lock those took keeps a TRUNCATE or
 * DROP from another session out until the lane commits, so a table found
 * kept here stays kept for the rows the lane commits.  *kept false: another
 * session truncated, rewrote or dropped (and recreated) the table while the
 * file loaded, and the rows of earlier chunks may be gone.  Always kept for
 * a stream or a table not known at the start.  False on a database error
 * (left on d).
 */
bool ledger_table_kept(const ledger *lg, db *d, bool *kept);

/* The figures lane `lane` of chunk chunk_no committed, read on d; false
 * when there is no such row (or the query failed: see db_ok). */
bool ledger_lane_figures(const ledger *lg, db *d, uint64_t chunk_no, int lane, load_counts *c);

/* The SHA-256 hex of the current file's bytes, known once an object has
 * been read to its end (a file's digest is already that): recorded when
 * the file is marked completed. */
void ledger_set_content_digest(ledger *lg, const char *hex);

/*
 * Ends the current file on d: marks it completed (when complete, not in a
 * dry run, and d usable; fails with EXIT_DATABASE instead when the table
 * was truncated or dropped meanwhile: ledger_table_kept), or when not
 * complete removes its entry if no lane of it ever committed
 * (SQL_LEDGER_FORGET), then releases its lock.  Returns an exit code
 * (logged).
 */
int ledger_end_file(ledger *lg, db *d, bool complete);

#endif
