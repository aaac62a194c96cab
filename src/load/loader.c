/*
 * loader.c - chunks into PostgreSQL (see loader.h): the coordinator.
 *
 * Each chunk is split into lanes by a hash of the business key; lane k of
 * every chunk is loaded by connection k (--jobs), so no two connections of
 * one import ever touch the same key and the merges run side by side on
 * the server.  One lane of one chunk is one transaction (lane.h).
 * Worker 0 runs on the caller's thread and owns the file's advisory lock
 * and the ledger's file row; the others run on threads of their own, one
 * connection each.  All lanes of a chunk finish before the next chunk
 * starts, so a key's versions reach the table in file order.
 * In a dry run there is one connection and the whole run is one
 * transaction, each lane of each chunk a savepoint, rolled back at the
 * end, so later chunks see what earlier ones would do.
 *
 * This file: the connections and their threads, splitting a chunk into
 * lanes, handing them out and collecting their outcomes, and the file's
 * begin and end through the ledger.  (Each lane writes its refused rows to
 * the rejects file itself, synced before it commits.)  It calls
 * its parts, which never call back: lane.c (one lane's transaction),
 * ledger.c (the ledger), gate.c (the commit gate and barrier) and
 * lane_sql.c (the lane's statements).
 */
#include "load/loader.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/columns.h"
#include "core/final_status.h"
#include "db/db.h"
#include "db/sql.h"
#include "db/target.h"
#include "load/citus_stage.h"
#include "load/gate.h"
#include "load/lane.h"
#include "load/lane_sql.h"
#include "load/seen.h"
#include "output/log.h"
#include "util/exitcodes.h"
#include "util/signals.h"

/* A lane left alone because an earlier lane on its connection failed. */
#define PART_NOT_RUN (-1)

/* A connection and the thread that drives it. */
typedef struct worker {
    loader *ld;
    int no;
    db *conn;               /* read by the signal handler: swapped atomically */
    lane_runner ln;               /* its lane runner, on this connection */
    citus_stage stage;      /* a distributed target: its staging table (citus_stage.h) */
    pthread_t thread;
    bool started;
    uint64_t seen;          /* the last job taken */
} worker;

/* One lane of the chunk in flight. */
typedef struct part {
    lane_job job;
    lane_result res;
    bool done;              /* committed by an earlier run (resume) */
    bool empty;             /* no rows and no figures: not run, nothing committed (partition) */
} part;

struct loader {
    const config *cfg;
    target t;
    buf extra_cols;         /* ", col, ..." of --set beyond idemload's columns */
    buf extra_vals;         /* ", $4::type, ..." their parameters */
    buf final_array;        /* the final statuses, a smallint[] literal */
    lane_sql sql;
    citus_names citus;      /* a distributed target: its names (citus_stage.h) */
    lane_env env;           /* what every lane reads */
    ledger lg;
    gate gate;
    bool in_run_txn;        /* dry run: the one transaction is open */
    bool shadow;            /* dry run by a role that may only read the target: the
                             * merges go into a temporary copy (SQL_SHADOW_*) */
    int lanes;              /* of the current file */
    /* the connections */
    int n_workers;
    worker workers[MAX_LANES];
    /* the chunk in flight, shared read-only with the workers */
    part parts[MAX_LANES];
    uint32_t *idx;
    size_t cap_idx;
    /* the append (lane.h): the keys the run has met, and which rows of the
     * chunk in flight carry a key met for the first time */
    seen_filter *seen;
    uint8_t *fresh;
    /* handing chunks to the worker threads */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool sync_inited;
    uint64_t job;
    int pending;
    bool quit;
    /* The watch (SPEC.md, the SIGTERM paragraph): the signal hook posts
     * watch_sem; the watch thread then waits --cancel-wait for the
     * cancelled statements to end, and past it shuts every connection
     * down, so even a server that does not answer cannot hold the import.
     * conn_mu keeps a connection from being closed (reconnect) while the
     * watch shuts it down. */
    sem_t watch_sem;
    bool watch_inited, watch_started;
    int watch_quit;                 /* atomic */
    pthread_t watch_thread;
    pthread_mutex_t conn_mu;
};

static db *conn_of(worker *w)
{
    return __atomic_load_n(&w->conn, __ATOMIC_ACQUIRE);
}

/* Connection 0, which holds the file's lock and writes the file's row. */
static db *control(loader *ld)
{
    return conn_of(&ld->workers[0]);
}

/* The signal hook: unless a lane of the chunk in flight has begun to
 * commit, cancel the statement in flight on every connection. */
static void cancel_all(void *arg)
{
    loader *ld = arg;
    if (ld->watch_started)
        sem_post(&ld->watch_sem);   /* async-signal-safe: the watch's clock starts */
    if (!gate_cancel(&ld->gate))
        return;
    for (int i = 0; i < ld->n_workers; i++) {
        db *d = conn_of(&ld->workers[i]);
        if (d)
            db_cancel(d);
    }
}

/* Session setup after (re)connecting: the staging table, and in a dry run
 * the run's transaction.  A distributed target's staging table is created
 * before that transaction: it is a distributed table of its own, dropped
 * when the loader closes (citus_stage.h). */
static bool prepare_session(loader *ld, worker *w, db *d)
{
    if (ld->t.distributed) {
        if (!db_exec(d, SQL_SESSION_SETTINGS) || !db_exec(d, SQL_CITUS_SESSION_SETTINGS) ||
            !citus_stage_open(&w->stage, &ld->citus, d))
            return false;
        if (ld->cfg->dry_run) {
            if (!db_begin(d))
                return false;
            ld->in_run_txn = true;
        }
        return true;
    }
    /* The settings first: a transaction takes its isolation level from
     * them when it begins (the dry run's, here). */
    if (!db_exec(d, SQL_SESSION_SETTINGS))
        return false;
    if (ld->cfg->dry_run) {
        if (!db_begin(d))
            return false;
        ld->in_run_txn = true;
    }
    if (ld->shadow) {
        const char *names[] = {"table", "conflict"};
        const char *vals[] = {ld->t.quoted, ld->t.conflict};
        buf sql = BUF_INIT;
        bool ok = sql_render(&sql, SQL_SHADOW_CREATE, 2, names, vals) &&
                  db_exec(d, buf_cstr(&sql));
        buf_free(&sql);
        if (!ok)
            return false;
    }
    return db_exec(d, SQL_CREATE_STAGE);
}

/* (Re)opens a worker's session.  The old connection is unpublished before
 * it is closed, so the signal hook never cancels through a freed handle. */
static bool connect_session(worker *w, buf *err)
{
    pthread_mutex_lock(&w->ld->conn_mu);
    db *old = conn_of(w);
    __atomic_store_n(&w->conn, NULL, __ATOMIC_RELEASE);
    db_close(&old);
    pthread_mutex_unlock(&w->ld->conn_mu);
    db *d = db_connect(w->ld->cfg->dbname, err, NULL);
    if (!d)
        return false;
    if (!prepare_session(w->ld, w, d)) {
        buf_printf(err, "cannot prepare the session: %s (SQLSTATE %s)", db_message(d),
                   db_sqlstate(d));
        db_close(&d);
        return false;
    }
    __atomic_store_n(&w->conn, d, __ATOMIC_RELEASE);
    return true;
}

/* The lane's reopen function (lane.h): a new session for worker ctx. */
static bool reopen_session(void *ctx, db **conn, buf *err)
{
    worker *w = ctx;
    bool ok = connect_session(w, err);
    *conn = conn_of(w);
    return ok;
}

static void worker_init(loader *ld, int no)
{
    worker *w = &ld->workers[no];
    w->ld = ld;
    w->no = no;
    lane_init(&w->ln, &ld->env, conn_of(w), reopen_session, w);
    w->ln.holds_file_lock = no == 0;
    w->ln.stage = ld->t.distributed ? &w->stage : NULL;
}

/* A worker's share of the chunk in flight: lanes no, no + workers, ... */
static void run_parts(worker *w)
{
    loader *ld = w->ld;
    bool failed = false;
    for (int lane = w->no; lane < ld->lanes; lane += ld->n_workers) {
        part *pt = &ld->parts[lane];
        if (pt->done || pt->empty)
            continue;
        if (failed) {
            pt->res.code = PART_NOT_RUN;
            continue;
        }
        lane_run(&w->ln, &pt->job, &pt->res);
        gate_arrive(&ld->gate, &pt->res.arrived, false);   /* given up: the others need not wait */
        failed = pt->res.code != EXIT_OK;
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    loader *ld = w->ld;
    pthread_mutex_lock(&ld->mu);
    for (;;) {
        while (w->seen == ld->job && !ld->quit)
            pthread_cond_wait(&ld->cv, &ld->mu);
        if (ld->quit)
            break;
        w->seen = ld->job;
        pthread_mutex_unlock(&ld->mu);
        run_parts(w);
        pthread_mutex_lock(&ld->mu);
        ld->pending--;
        pthread_cond_broadcast(&ld->cv);
    }
    pthread_mutex_unlock(&ld->mu);
    return NULL;
}

/* Starts the threads of workers 1.., with SIGINT and SIGTERM blocked in
 * them so the handler always runs on the main thread. */
static bool start_threads(loader *ld)
{
    if (pthread_mutex_init(&ld->mu, NULL) != 0)
        return false;
    if (pthread_cond_init(&ld->cv, NULL) != 0) {
        pthread_mutex_destroy(&ld->mu);
        return false;
    }
    ld->sync_inited = true;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    bool ok = true;
    for (int i = 1; i < ld->n_workers && ok; i++) {
        worker *w = &ld->workers[i];
        ok = pthread_create(&w->thread, NULL, worker_main, w) == 0;
        w->started = ok;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

static void stop_threads(loader *ld)
{
    if (!ld->sync_inited)
        return;
    pthread_mutex_lock(&ld->mu);
    ld->quit = true;
    pthread_cond_broadcast(&ld->cv);
    pthread_mutex_unlock(&ld->mu);
    for (int i = 1; i < ld->n_workers; i++)
        if (ld->workers[i].started)
            pthread_join(ld->workers[i].thread, NULL);
    pthread_mutex_destroy(&ld->mu);
    pthread_cond_destroy(&ld->cv);
    ld->sync_inited = false;
}

/* The watch thread (see struct loader): after the first interrupt, waits
 * up to --cancel-wait for the loader to let it go; past that, cancels the
 * chunk even if it is committing and shuts every connection down. */
static void *watch_main(void *arg)
{
    loader *ld = arg;
    while (sem_wait(&ld->watch_sem) != 0 && errno == EINTR)
        ;
    if (__atomic_load_n(&ld->watch_quit, __ATOMIC_ACQUIRE))
        return NULL;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    long ms = ld->cfg->cancel_wait_ms;
    deadline.tv_sec += ms / 1000;
    deadline.tv_nsec += (ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    for (;;) {
        if (sem_timedwait(&ld->watch_sem, &deadline) == 0) {
            if (__atomic_load_n(&ld->watch_quit, __ATOMIC_ACQUIRE))
                return NULL;
            continue;   /* another signal: the clock runs from the first */
        }
        if (errno != EINTR)
            break;      /* ETIMEDOUT */
    }
    gate_force_cancel(&ld->gate);
    log_warn("interrupted: the server did not end the cancelled statements within "
             "--cancel-wait (%d ms); closing the connections", ld->cfg->cancel_wait_ms);
    pthread_mutex_lock(&ld->conn_mu);
    for (int i = 0; i < MAX_LANES; i++) {
        db *d = conn_of(&ld->workers[i]);
        if (d)
            db_shutdown(d);
    }
    pthread_mutex_unlock(&ld->conn_mu);
    return NULL;
}

/* Starts the watch thread, with SIGINT and SIGTERM blocked in it. */
static bool start_watch(loader *ld)
{
    if (sem_init(&ld->watch_sem, 0, 0) != 0)
        return false;
    ld->watch_inited = true;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    ld->watch_started = pthread_create(&ld->watch_thread, NULL, watch_main, ld) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ld->watch_started;
}

/* Ends the watch thread (after the signal hook is gone). */
static void stop_watch(loader *ld)
{
    if (ld->watch_started) {
        __atomic_store_n(&ld->watch_quit, 1, __ATOMIC_RELEASE);
        sem_post(&ld->watch_sem);
        pthread_join(ld->watch_thread, NULL);
        ld->watch_started = false;
    }
    if (ld->watch_inited) {
        sem_destroy(&ld->watch_sem);
        ld->watch_inited = false;
    }
}

/* Connections 2..--jobs.  One that cannot be opened (max_connections,
 * say) leaves the import with fewer connections, not failed. */
static void open_extra_workers(loader *ld)
{
    int want = ld->cfg->dry_run ? 1 : ld->cfg->jobs;
    buf err = BUF_INIT;
    for (int i = 1; i < want; i++) {
        worker *w = &ld->workers[i];
        w->ld = ld;
        buf_clear(&err);
        if (!connect_session(w, &err)) {
            log_warn("cannot open connection %d of %d (%s); loading over %d", i + 1, want,
                     buf_cstr(&err), i);
            break;
        }
        worker_init(ld, i);
        ld->n_workers = i + 1;
    }
    buf_free(&err);
}

/* The target, its unique index on the business key and the columns an
 * import writes; an exit code (logged). */
static int open_target(loader *ld, db *d)
{
    const config *cfg = ld->cfg;
    buf err = BUF_INIT;
    bool missing, db_failed;
    int code = EXIT_OK;
    if (!target_resolve(d, cfg, &ld->t, &missing, &err)) {
        log_error("%s", buf_cstr(&err));
        code = missing ? EXIT_USAGE : db_failure_exit(d);
    } else if (ld->t.blocked_by) {
        log_error("table %s has a DEFERRABLE unique constraint on the business key (%s), and "
                  "INSERT ... ON CONFLICT refuses such a table, so loads cannot be idempotent; "
                  "fix: drop the constraint and add it again NOT DEFERRABLE",
                  ld->t.display, ld->t.blocked_by->name);
        code = EXIT_USAGE;
    } else if (!ld->t.key_index) {
        buf hint = BUF_INIT;
        target_fix_hint(&ld->t, cfg, &hint);
        log_error("table %s has no valid unique index on exactly (" KEY_COLUMNS
                  ")%s, so loads cannot be idempotent; fix: %s",
                  ld->t.display, ld->t.has_deleted_at ? " WHERE deleted_at IS NULL" : "",
                  buf_cstr(&hint));
        buf_free(&hint);
        code = EXIT_USAGE;
    } else if (!target_check_columns(d, &ld->t, cfg->extra_set, cfg->n_extra_set,
                                     cfg->conflict == CONFLICT_UPDATE ? 4 : 3, &ld->extra_cols,
                                     &ld->extra_vals, &db_failed, &err)) {
        /* Columns beyond idemload's own: --set constants, NOT NULL columns
         * nothing would fill; before any row is read.  Their parameters
         * follow the merge's own ($1, $2 and, updating, $3). */
        log_error("%s", buf_cstr(&err));
        code = db_failed ? db_failure_exit(d) : EXIT_USAGE;
    } else if (!target_check_privileges(d, &ld->t, cfg->extra_set, cfg->n_extra_set,
                                        cfg->conflict == CONFLICT_UPDATE, &db_failed, &err)) {
        /* A role that may insert but not update would load the first
         * chunks by appending and stop at the first merge.  A dry run by a
         * role that may read the table (a data team's) merges into a
         * temporary copy instead. */
        buf rerr = BUF_INIT;
        bool rfailed = false;
        bool copy = cfg->dry_run && !ld->t.distributed;
        if (copy && target_check_read_privileges(d, &ld->t, &rfailed, &rerr)) {
            log_warn("%s; this dry run merges into a temporary copy of the rows its keys "
                     "touch instead: the figures are the merge's, but the table's triggers "
                     "and constraints are not exercised", buf_cstr(&err));
            ld->shadow = true;
        } else {
            /* A dry run needs at least what its copy needs: say that. */
            log_error("%s", buf_cstr(copy ? &rerr : &err));
            code = (copy ? rfailed : db_failed) ? db_failure_exit(d) : EXIT_USAGE;
        }
        buf_free(&rerr);
    }
    buf_free(&err);
    return code;
}

/* Does the target's column name have exactly the type the append's binary
 * rows carry (copy_encode.h)?  Any other type, a domain included, is left
 * to the merge, whose INSERT converts as the column needs. */
static bool column_fits(const target *t, const char *name, const char *const *types)
{
    for (int i = 0; i < t->n_columns; i++) {
        if (strcmp(t->columns[i].name, name) != 0)
            continue;
        for (; *types; types++) {
            size_t n = strlen(*types);
            const char *ty = t->columns[i].type;
            if (strncmp(ty, *types, n) == 0 && (ty[n] == '\0' || ty[n] == '('))
                return true;
        }
        return false;
    }
    return false;
}

/*
 * May the lanes append fresh keys straight into the target (lane.h)?  Not
 * with --no-append, not in a dry run (its single transaction sees every chunk anyway), not on a
 * distributed target, not with --changes (the merge returns the versions)
 * or --set (the binary rows carry idemload's own columns only), and only
 * where COPY does what the merge's INSERT would: no rules (COPY ignores
 * them), no row-level security (COPY refuses it), the column types the
 * binary rows carry.
 */
#define APPEND_FITS_1(ID, name, member, kind, key, pos, dflt, T, B) \
    &&column_fits(T, #name, (const char *const[]){COLUMN_BINARY_TYPES_##kind, NULL})

static bool may_append(const loader *ld)
{
    const config *cfg = ld->cfg;
    const target *t = &ld->t;
    return !cfg->no_append && !cfg->dry_run && !t->distributed && cfg->n_extra_set == 0 &&
           !cfg->changes_path && !t->has_rules &&
           !t->row_security IDEMLOAD_COLUMNS(APPEND_FITS_1, t, ~);
}

/* The lanes' statements and what else they read; false when out of
 * memory. */
static bool prepare_lanes(loader *ld, db *d)
{
    const config *cfg = ld->cfg;
    bool update = cfg->conflict == CONFLICT_UPDATE;
    /* $3: the final statuses as a smallint[] literal parameter. */
    bool ok = final_status_array(cfg->final_status, cfg->n_final_status, &ld->final_array);
    lane_sql_names names = {.table = ld->shadow ? SQL_SHADOW_NAME : ld->t.quoted,
                            .conflict = ld->t.conflict,
                            .active = ld->t.active,
                            .extra_cols = buf_cstr(&ld->extra_cols),
                            .extra_vals = buf_cstr(&ld->extra_vals),
                            .partitioned = ld->t.partitioned && !ld->shadow,
                            .update = update,
                            .shadow_of = ld->shadow ? ld->t.quoted : NULL};
    ok = ok && lane_sql_render(&names, &ld->sql);
    bool probe = true;
    if (ok && may_append(ld)) {
        /* Without memory for the filter, every row takes the merge. */
        ld->seen = seen_new();
        /* A table empty as the run begins (a first load) needs no probe
         * before the append: the keys the run meets first are in no
         * earlier chunk, and so in the table only if another process put
         * them there since (then the COPY fails and the lane merges). */
        const char *n2[] = {"table", "active"};
        const char *v2[] = {ld->t.quoted, ld->t.active};
        buf q = BUF_INIT;
        db_result *r = sql_render(&q, SQL_TABLE_HAS_ACTIVE, 2, n2, v2)
                           ? db_query(d, buf_cstr(&q), 0, NULL)
                           : NULL;
        probe = !r || strcmp(db_value(r, 0, 0), "f") != 0;
        db_result_free(&r);
        buf_free(&q);
    }
    ld->env = (lane_env){.sql = &ld->sql,
                         .final_array = buf_cstr(&ld->final_array),
                         .extra_set = cfg->extra_set,
                         .n_extra_set = cfg->n_extra_set,
                         .update = update,
                         .append = ld->seen != NULL,
                         .probe_append = probe,
                         .dry_run = cfg->dry_run,
                         .shadow = ld->shadow,
                         .distributed = ld->t.distributed,
                         .retries = cfg->retries,
                         .gate = &ld->gate};
    return ok;
}

/* Connection 0 and everything read through it; an exit code (logged). */
const char *loader_database(loader *ld)
{
    return db_describe(control(ld));
}

static int open_control(loader *ld)
{
    buf err = BUF_INIT;
    int code = EXIT_OK;
    ld->workers[0].conn = db_connect(ld->cfg->dbname, &err, &code);
    if (!ld->workers[0].conn) {
        log_error("%s", buf_cstr(&err));
        buf_free(&err);
        return code;
    }
    buf_free(&err);
    ld->n_workers = 1;
    db *d = ld->workers[0].conn;
    code = open_target(ld, d);
    if (code != EXIT_OK)
        return code;
    if (ld->t.distributed && ld->cfg->changes_path) {
        /* Its merge runs shard by shard and returns figures, not each
         * row's versions: refuse rather than write an empty list. */
        log_error("--changes is not available on a distributed (Citus) target yet: %s",
                  ld->t.display);
        return EXIT_USAGE;
    }
    if (!prepare_lanes(ld, d)) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    if (ld->t.distributed && ld->cfg->supersede) {
        log_error("--supersede is not available on a distributed (Citus) target yet: %s",
                  ld->t.display);
        return EXIT_USAGE;
    }
    if (!ledger_open(&ld->lg, d, ld->t.schema, ld->t.display, ld->t.quoted, ld->cfg->dry_run,
                     ld->cfg->force, ld->cfg->supersede))
        return db_failure_exit(d);
    if (ld->t.distributed) {
        ld->citus = (citus_names){.schema = ld->t.schema,
                                  .table = ld->t.quoted,
                                  .display = ld->t.display,
                                  .active = ld->t.active,
                                  .extra_cols = buf_cstr(&ld->extra_cols),
                                  .extra_vals = buf_cstr(&ld->extra_vals),
                                  .action = buf_cstr(&ld->sql.citus_action)};
        code = citus_target_open(&ld->citus, d);
        if (code != EXIT_OK)
            return code;
    }
    if (!prepare_session(ld, &ld->workers[0], d)) {
        log_error("cannot prepare the session on %s: %s (SQLSTATE %s)", db_describe(d),
                  db_message(d), db_sqlstate(d));
        return db_failure_exit(d);
    }
    worker_init(ld, 0);
    return EXIT_OK;
}

loader *loader_open(const config *cfg, int *code)
{
    loader *ld = calloc(1, sizeof *ld);
    if (!ld || !gate_init(&ld->gate)) {
        log_error("out of memory");
        *code = EXIT_INPUT;
        free(ld);
        return NULL;
    }
    ld->cfg = cfg;
    ld->lanes = 1;
    pthread_mutex_init(&ld->conn_mu, NULL);
    *code = open_control(ld);
    if (*code != EXIT_OK) {
        loader_close(&ld);
        return NULL;
    }
    if (!start_watch(ld)) {
        log_error("cannot start the loading threads");
        *code = EXIT_INPUT;
        loader_close(&ld);
        return NULL;
    }
    signals_set_hook(cancel_all, ld);
    open_extra_workers(ld);
    if (ld->n_workers > 1 && !start_threads(ld)) {
        log_error("cannot start the loading threads");
        *code = EXIT_INPUT;     /* the client out of resources, as out of memory */
        loader_close(&ld);
        return NULL;
    }
    log_info("loading into %s on %s (conflict target %s)%s, %d connection%s", ld->t.display,
             db_describe(control(ld)), ld->t.conflict, cfg->dry_run ? ", dry run" : "",
             ld->n_workers, ld->n_workers == 1 ? "" : "s");
    return ld;
}

void loader_close(loader **ldp)
{
    loader *ld = *ldp;
    if (!ld)
        return;
    signals_set_hook(NULL, NULL);
    stop_watch(ld);
    stop_threads(ld);
    if (ld->t.distributed) {
        /* The staging tables: each through its own session, or the
         * control one when that is gone; then those of sessions lost on
         * the way. */
        db *d0 = control(ld);
        for (int i = 0; i < MAX_LANES; i++) {
            db *d = conn_of(&ld->workers[i]);
            citus_stage_drop(&ld->workers[i].stage, d && db_ok(d) ? d : d0);
        }
        if (d0 && db_ok(d0))
            citus_sweep(&ld->citus, d0);
    }
    for (int i = 0; i < MAX_LANES; i++) {
        db_close(&ld->workers[i].conn);
        citus_stage_free(&ld->workers[i].stage);
        lane_free(&ld->workers[i].ln);
        lane_result_free(&ld->parts[i].res);
    }
    gate_destroy(&ld->gate);
    pthread_mutex_destroy(&ld->conn_mu);
    ledger_free(&ld->lg);
    lane_sql_free(&ld->sql);
    citus_names_free(&ld->citus);
    target_free(&ld->t);
    buf_free(&ld->extra_cols);
    buf_free(&ld->extra_vals);
    buf_free(&ld->final_array);
    free(ld->idx);
    free(ld->fresh);
    seen_free(&ld->seen);
    free(ld);
    *ldp = NULL;
}

int loader_begin_file(loader *ld, const file_identity *id, size_t chunk_rows, bool wait,
                      file_plan *plan)
{
    int code = ledger_begin_file(&ld->lg, control(ld), id, chunk_rows, ld->n_workers, wait,
                                 plan);
    ld->lanes = ledger_lanes(&ld->lg);
    return code;
}

void loader_set_content_digest(loader *ld, const char *hex)
{
    ledger_set_content_digest(&ld->lg, hex);
}

int loader_end_file(loader *ld, bool complete)
{
    return ledger_end_file(&ld->lg, control(ld), complete);
}

int loader_finish(loader *ld)
{
    db *d = control(ld);
    if (ld->in_run_txn && d && db_ok(d)) {
        if (!db_rollback(d)) {
            log_error("dry run: cannot roll back: %s", db_message(d));
            return db_failure_exit(d);
        }
        ld->in_run_txn = false;
    }
    return EXIT_OK;
}

/* Splits the chunk's rows (in key order) into the lanes, keeping the order
 * within each lane, and describes each lane's job.  The chunk's reading
 * figures (rows read, rejected, deduplicated) go with its first lane that
 * has rows (lane 0 when none has); every other lane without rows is empty:
 * it opens no transaction and writes no ledger row, so a chunk that failed
 * in its only lane leaves nothing committed (README: a file that failed at
 * its first chunk leaves no ledger entry).  The split depends only on the
 * chunk and the number of lanes, so a resumed run finds the same lanes
 * empty. */
static bool partition(loader *ld, const chunk *ch, uint64_t chunk_no, const char *file,
                      rejects *rj, const load_counts *reading, chunk_outcome *out)
{
    size_t n = chunk_size(ch);
    if (n > ld->cap_idx) {
        uint32_t *p = realloc(ld->idx, n * sizeof *p);
        if (!p)
            return false;
        ld->idx = p;
        uint8_t *f = ld->seen ? realloc(ld->fresh, n) : NULL;
        if (ld->seen && !f)
            return false;
        ld->fresh = f;
        ld->cap_idx = n;
    }
    /* In file order, chunk by chunk: the keys no earlier chunk carried. */
    for (size_t i = 0; ld->seen && i < n; i++)
        ld->fresh[i] = !seen_add(ld->seen, chunk_key_hash64(ch, i));
    size_t count[MAX_LANES] = {0}, at[MAX_LANES];
    unsigned lanes = (unsigned)ld->lanes;
    for (size_t i = 0; i < n; i++)
        count[chunk_key_hash(ch, i) % lanes]++;
    unsigned first = 0;
    for (unsigned l = lanes; l-- > 0;)
        if (count[l] > 0)
            first = l;
    size_t start = 0;
    for (unsigned l = 0; l < lanes; l++) {
        part *pt = &ld->parts[l];
        at[l] = start;
        pt->job = (lane_job){.ch = ch, .idx = ld->idx + start, .n = count[l],
                             .chunk_no = chunk_no, .lane = (int)l, .lanes = ld->lanes,
                             .path = file, .out = out,
                             .last_committed = ledger_last_committed(&ld->lg),
                             .ledger = ledger_in_use(&ld->lg) ? &ld->lg : NULL,
                             .fresh = ld->seen ? ld->fresh : NULL,
                             .rj = rj};
        if (l == first) {
            pt->job.base = *reading;
            pt->job.base.chunks = 0;
        }
        pt->done = false;
        pt->empty = count[l] == 0 && l != first;
        lane_result_clear(&pt->res);
        pt->res.code = EXIT_OK;
        pt->res.counts = (load_counts){0};
        pt->res.arrived = false;
        start += count[l];
    }
    for (size_t i = 0; i < n; i++)
        ld->idx[at[chunk_key_hash(ch, i) % lanes]++] = (uint32_t)i;
    return true;
}

/* Lanes an earlier run committed (resume): their figures, not a reload.
 * reading: the chunk's reading figures, as read again now. */
static int take_resumed(loader *ld, uint64_t chunk_no, const char *file,
                        const load_counts *reading)
{
    bool carried = false;       /* the chunk's reading figures are in a lane taken */
    for (int lane = 0; lane < ld->lanes; lane++) {
        part *pt = &ld->parts[lane];
        if (ledger_lane_done(&ld->lg, lane) < chunk_no)
            continue;
        if (!ledger_lane_figures(&ld->lg, control(ld), chunk_no, lane, &pt->res.counts)) {
            char at[64];
            log_error("%s: %s: the ledger has lost this lane's row: %s", file,
                      lane_where(chunk_no, lane, ld->lanes, at, sizeof at),
                      db_message(control(ld)));
            return db_failure_exit(control(ld));
        }
        pt->done = true;
        if (pt->res.counts.rows_read > 0) {
            /* The lane that holds the chunk's reading figures: the ledger
             * keeps no rows_skipped, the reading gives it. */
            carried = true;
            pt->res.counts.rows_skipped = reading->rows_skipped;
        }
    }
    /* The reading figures are recorded once per chunk: when a lane taken
     * holds them, the lanes run now do not (an earlier version put them in
     * lane 0 even without rows, where partition now gives them to the
     * first lane with rows). */
    for (int lane = 0; carried && lane < ld->lanes; lane++)
        if (!ld->parts[lane].done)
            ld->parts[lane].job.base = (load_counts){0};
    return EXIT_OK;
}

/* Runs the chunk's lanes on every connection (not those an earlier run
 * committed, nor the empty ones) and waits for them all.  The barrier
 * applies when every lane has a connection of its own (not in a dry run,
 * not when resuming more lanes than there are connections); an empty lane
 * never arrives at it, so it is not expected. */
static void run_lanes(loader *ld)
{
    int expected = 0;
    for (int lane = 0; lane < ld->lanes; lane++)
        expected += !ld->parts[lane].done && !ld->parts[lane].empty;
    gate_barrier_reset(&ld->gate, expected, ld->n_workers > 1 && ld->lanes <= ld->n_workers);
    if (ld->n_workers > 1) {
        pthread_mutex_lock(&ld->mu);
        ld->job++;
        ld->pending = ld->n_workers - 1;
        pthread_cond_broadcast(&ld->cv);
        pthread_mutex_unlock(&ld->mu);
    }
    run_parts(&ld->workers[0]);
    if (ld->n_workers > 1) {
        pthread_mutex_lock(&ld->mu);
        while (ld->pending > 0)
            pthread_cond_wait(&ld->cv, &ld->mu);
        pthread_mutex_unlock(&ld->mu);
    }
    /* The next chunk starts open (unless an interrupt cancelled this one). */
    gate_reopen(&ld->gate);
}

int loader_load_chunk(loader *ld, chunk *ch, uint64_t chunk_no, const char *file, rejects *rj,
                      load_counts *counts, chunk_outcome *out, bool *lanes_committed)
{
    *lanes_committed = false;
    if (gate_cancelled(&ld->gate) || signals_interrupted()) {
        log_error("%s: interrupted before chunk %llu; %llu chunks committed", file,
                  (unsigned long long)chunk_no,
                  (unsigned long long)ledger_last_committed(&ld->lg));
        return EXIT_INTERRUPTED;
    }
    /* Keys in one order, so concurrent loaders lock them in the same order. */
    chunk_sort(ch);
    if (!partition(ld, ch, chunk_no, file, rj, counts, out)) {
        log_error("%s: chunk %llu: out of memory", file, (unsigned long long)chunk_no);
        return EXIT_INPUT;
    }
    int code = take_resumed(ld, chunk_no, file, counts);
    if (code != EXIT_OK)
        return code;
    run_lanes(ld);
    load_counts total = {0};
    for (int lane = 0; lane < ld->lanes; lane++) {
        part *pt = &ld->parts[lane];
        /* Its refused rows are in the rejects file already (lane.h). */
        lane_result_clear(&pt->res);
        if (pt->res.code != PART_NOT_RUN)
            code = exit_worst(code, pt->res.code);
        /* A lane that gave up has no figures (partition cleared them). */
        load_counts_add(&total, &pt->res.counts);
        *lanes_committed = *lanes_committed || pt->done ||
                           (pt->res.code == EXIT_OK && !pt->empty);
    }
    if (code != EXIT_OK) {
        /* Some lanes may have committed: the report counts them, and the
         * side outputs take their rows (out), not those of the lanes
         * rolled back.  Their rows read are the rows they merged or
         * refused, so that the figures add up (the rest of the chunk is
         * read again when the file resumes). */
        if (*lanes_committed) {
            for (int lane = 0; lane < ld->lanes; lane++) {
                part *pt = &ld->parts[lane];
                if (!pt->done && pt->res.code != EXIT_OK && pt->job.n > 0)
                    outcome_fill(out, pt->job.idx, 0, pt->job.n - 1, MERGE_NONE);
            }
            total.rows_read = load_counts_merged(&total) + total.rows_rejected;
            *counts = total;
        }
        return code;
    }
    total.chunks = 1;
    *counts = total;
    ledger_chunk_done(&ld->lg, chunk_no);
    return EXIT_OK;
}

const char *loader_error(const loader *ld)
{
    for (int lane = 0; lane < ld->lanes; lane++) {
        const part *pt = &ld->parts[lane];
        if (pt->res.code != EXIT_OK && pt->res.code != PART_NOT_RUN && pt->res.error.len > 0)
            return buf_cstr(&pt->res.error);
    }
    return NULL;
}

int loader_committed_changes(loader *ld, uint64_t chunk_no, buf *out, int *without)
{
    db *d = control(ld);
    if (ledger_chunk_changes(&ld->lg, d, chunk_no, out, without))
        return EXIT_OK;
    log_error("cannot read the --changes lines of chunk %llu from the ledger: %s",
              (unsigned long long)chunk_no, db_message(d));
    return db_failure_exit(d);
}
