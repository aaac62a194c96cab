/*
 * loader.c - chunks into PostgreSQL (see loader.h).
 *
 * Each chunk is split into lanes by a hash of the business key; lane k of
 * every chunk is loaded by connection k (--jobs), so no two connections of
 * one import ever touch the same key and the merges run side by side on
 * the server.  One lane of one chunk is one transaction:
 *   BEGIN; TRUNCATE idemload_stage; COPY; merge; [count stale];
 *   ledger row (chunk, lane); COMMIT.
 * Worker 0 runs on the caller's thread and owns the file's advisory lock
 * and the ledger's file row; the others run on threads of their own, one
 * connection each.  All lanes of a chunk finish before the next chunk
 * starts, so a key's versions reach the table in file order.
 * In a dry run there is one connection and the whole run is one
 * transaction, each lane of each chunk a savepoint, rolled back at the
 * end, so later chunks see what earlier ones would do.
 *
 * When the server refuses something (a data error) the lane is redone in
 * isolation: ranges of rows, each under a savepoint, halved on failure
 * until the single refused row is found and rejected with the server's
 * message; the other rows load.  Lost connections, deadlocks and
 * serialization failures redo the lane, up to --retries times.
 */
#include "loader.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "copy_encode.h"
#include "db.h"
#include "exitcodes.h"
#include "log.h"
#include "signals.h"
#include "sql.h"
#include "target.h"

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
} worker;

struct loader {
    const config *cfg;
    target t;
    buf merge_sql;          /* the probing merge */
    buf merge_direct_sql;   /* the merge without the probe */
    buf stale_sql;
    buf ledger_name;        /* quoted, schema-qualified */
    buf ledger_chunk_name;
    char final_array[16 * MAX_FINAL_STATUSES];
    bool ledger_exists;
    bool ledger_lanes;      /* the ledger has its lane columns */
    bool in_run_txn;        /* dry run: the one transaction is open */
    /* the current file */
    file_identity file;
    bool use_ledger;
    bool locked;
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
};

static const char *const tmpl_names[] = {"table", "conflict", "active", "ledger",
                                         "ledger_chunk", "do_update", "missed_probe",
                                         "missed_direct", "lane", "lanes"};

static bool render_with(const loader *ld, buf *out, const char *tmpl, const char *do_update)
{
    bool update = ld->cfg->conflict == CONFLICT_UPDATE;
    const char *vals[] = {ld->t.quoted,
                          ld->t.conflict,
                          ld->t.active,
                          buf_cstr(&ld->ledger_name),
                          buf_cstr(&ld->ledger_chunk_name),
                          do_update,
                          update ? SQL_MISSED_PROBE : SQL_MISSED_NONE,
                          update ? SQL_MISSED_DIRECT : SQL_MISSED_NONE,
                          ld->ledger_lanes ? "lane" : "0",
                          ld->ledger_lanes ? "lanes" : "1"};
    buf_clear(out);
    return sql_render(out, tmpl, (int)(sizeof vals / sizeof vals[0]), tmpl_names, vals);
}

static bool render(const loader *ld, buf *out, const char *tmpl)
{
    return render_with(ld, out, tmpl, "");
}

/* Has an interrupt cancelled the chunk in flight? */
static bool cancelled(const loader *ld)
{
    return __atomic_load_n(&ld->gate, __ATOMIC_SEQ_CST) == GATE_CANCELLED;
}

/* The lane may commit unless the chunk was cancelled. */
static bool may_commit(loader *ld)
{
    int expected = GATE_RUNNING;
    __atomic_compare_exchange_n(&ld->gate, &expected, GATE_COMMITTING, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return expected != GATE_CANCELLED;
}

/* Sleeps, waking early when the chunk is cancelled (signals reach only the
 * main thread, so a worker thread looks at the gate between short naps). */
static void sleep_ms(const loader *ld, long ms)
{
    while (ms > 0 && !cancelled(ld)) {
        long step = ms < 50 ? ms : 50;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

static db *conn_of(worker *w)
{
    return __atomic_load_n(&w->conn, __ATOMIC_ACQUIRE);
}

/* The signal hook: unless a lane of the chunk in flight has begun to
 * commit, cancel the statement in flight on every connection. */
static void cancel_all(void *arg)
{
    loader *ld = arg;
    int expected = GATE_RUNNING;
    if (!__atomic_compare_exchange_n(&ld->gate, &expected, GATE_CANCELLED, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
        expected != GATE_CANCELLED)
        return;
    for (int i = 0; i < ld->n_workers; i++) {
        db *d = conn_of(&ld->workers[i]);
        if (d)
            db_cancel(d);
    }
}

static void clear_refused(worker *w)
{
    for (size_t i = 0; i < w->n_refused; i++)
        free(w->refused[i].message);
    w->n_refused = 0;
}

static bool add_refused(worker *w, size_t index, const char *msg)
{
    if (w->n_refused == w->cap_refused) {
        size_t cap = w->cap_refused ? w->cap_refused * 2 : 8;
        refused *p = realloc(w->refused, cap * sizeof *p);
        if (!p)
            return false;
        w->refused = p;
        w->cap_refused = cap;
    }
    char *copy = strdup(msg);
    if (!copy)
        return false;
    w->refused[w->n_refused].index = index;
    w->refused[w->n_refused].message = copy;
    w->n_refused++;
    return true;
}

static attempt_result classify(const loader *ld, const db *d)
{
    if (cancelled(ld))
        return ATTEMPT_CANCELED;
    switch (db_error_class_of(d)) {
    case DBE_CONNECTION:
        return ATTEMPT_CONNECTION;
    case DBE_RETRY:
        return ATTEMPT_RETRY;
    case DBE_CANCELED:
        return ATTEMPT_CANCELED;
    case DBE_DATA:
        return ATTEMPT_DATA;
    default:
        return ATTEMPT_FAILED;
    }
}

/* "chunk 7" or "chunk 7, lane 2 of 2", for messages. */
static const char *where(const loader *ld, uint64_t chunk_no, int lane, char *out, size_t size)
{
    if (ld->lanes > 1)
        snprintf(out, size, "chunk %llu, lane %d of %d", (unsigned long long)chunk_no, lane + 1,
                 ld->lanes);
    else
        snprintf(out, size, "chunk %llu", (unsigned long long)chunk_no);
    return out;
}

/* Session setup after (re)connecting: the staging table, and in a dry run
 * the run's transaction. */
static bool prepare_session(loader *ld, db *d)
{
    if (ld->cfg->dry_run) {
        if (!db_exec(d, "BEGIN"))
            return false;
        ld->in_run_txn = true;
    }
    return db_exec(d, SQL_SESSION_SETTINGS) && db_exec(d, SQL_CREATE_STAGE);
}

/* (Re)opens a worker's session.  The old connection is unpublished before
 * it is closed, so the signal hook never cancels through a freed handle. */
static bool connect_session(worker *w, buf *err)
{
    db *old = conn_of(w);
    __atomic_store_n(&w->conn, NULL, __ATOMIC_RELEASE);
    db_close(&old);
    db *d = db_connect(w->ld->cfg->dbname, err);
    if (!d)
        return false;
    if (!prepare_session(w->ld, d)) {
        buf_printf(err, "cannot prepare the session: %s (SQLSTATE %s)", db_message(d),
                   db_sqlstate(d));
        db_close(&d);
        return false;
    }
    __atomic_store_n(&w->conn, d, __ATOMIC_RELEASE);
    return true;
}

static void *worker_main(void *arg);

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

/* Connections 2..--jobs.  One that cannot be opened (max_connections,
 * say) leaves the import with fewer connections, not failed. */
static void open_extra_workers(loader *ld)
{
    int want = ld->cfg->dry_run ? 1 : ld->cfg->jobs;
    buf err = BUF_INIT;
    for (int i = 1; i < want; i++) {
        worker *w = &ld->workers[i];
        w->ld = ld;
        w->no = i;
        w->probe = ld->workers[0].probe;
        buf_clear(&err);
        if (!connect_session(w, &err)) {
            log_warn("cannot open connection %d of %d (%s); loading over %d", i + 1, want,
                     buf_cstr(&err), i);
            break;
        }
        ld->n_workers = i + 1;
    }
    buf_free(&err);
}

loader *loader_open(const config *cfg, int *code)
{
    loader *ld = calloc(1, sizeof *ld);
    buf err = BUF_INIT;
    if (!ld) {
        log_error("out of memory");
        *code = EXIT_DATABASE;
        return NULL;
    }
    ld->cfg = cfg;
    ld->lanes = 1;
    worker *w0 = &ld->workers[0];
    w0->ld = ld;
    w0->conn = db_connect(cfg->dbname, &err);
    if (!w0->conn) {
        log_error("%s", buf_cstr(&err));
        *code = EXIT_DATABASE;
        goto fail;
    }
    ld->n_workers = 1;
    bool missing;
    if (!target_resolve(w0->conn, cfg->table, &ld->t, &missing, &err)) {
        log_error("%s", buf_cstr(&err));
        *code = missing ? EXIT_USAGE : EXIT_DATABASE;
        goto fail;
    }
    if (!ld->t.key_index) {
        buf hint = BUF_INIT;
        target_fix_hint(&ld->t, &hint);
        log_error("table %s has no valid unique index on exactly (tenant_id, channel, "
                  "out_trade_no, callback_type)%s, so loads cannot be idempotent; fix: %s",
                  ld->t.display, ld->t.has_deleted_at ? " WHERE deleted_at IS NULL" : "",
                  buf_cstr(&hint));
        buf_free(&hint);
        *code = EXIT_USAGE;
        goto fail;
    }
    /* {2,3}: the final statuses as a smallint[] literal parameter. */
    size_t pos = 0;
    ld->final_array[pos++] = '{';
    for (size_t i = 0; i < cfg->n_final_status; i++)
        pos += (size_t)snprintf(ld->final_array + pos, sizeof ld->final_array - pos, "%s%d",
                                i ? "," : "", cfg->final_status[i]);
    snprintf(ld->final_array + pos, sizeof ld->final_array - pos, "}");

    db_append_ident(w0->conn, &ld->ledger_name, ld->t.schema);
    buf_append_str(&ld->ledger_name, ".idemload_ledger");
    db_append_ident(w0->conn, &ld->ledger_chunk_name, ld->t.schema);
    buf_append_str(&ld->ledger_chunk_name, ".idemload_ledger_chunk");
    bool update = cfg->conflict == CONFLICT_UPDATE;
    buf action = BUF_INIT;
    bool rendered = render(ld, &action, update ? SQL_CONFLICT_UPDATE : SQL_CONFLICT_NOTHING);
    rendered = rendered &&
               render_with(ld, &ld->merge_sql, SQL_MERGE_PROBE, buf_cstr(&action)) &&
               render_with(ld, &ld->merge_direct_sql, SQL_MERGE_DIRECT, buf_cstr(&action)) &&
               render(ld, &ld->stale_sql, SQL_COUNT_STALE);
    buf_free(&action);
    /* DO NOTHING never writes an existing row: nothing for a probe to save. */
    w0->probe = update;
    if (!rendered) {
        log_error("out of memory");
        *code = EXIT_DATABASE;
        goto fail;
    }
    const char *p[] = {buf_cstr(&ld->ledger_chunk_name)};
    db_result *r = db_query(w0->conn, SQL_LEDGER_EXISTS, 1, p);
    if (!r) {
        log_error("cannot look for the ledger: %s", db_message(w0->conn));
        *code = EXIT_DATABASE;
        goto fail;
    }
    ld->ledger_exists = strcmp(db_value(r, 0, 0), "t") == 0;
    ld->ledger_lanes = strcmp(db_value(r, 0, 1), "t") == 0;
    db_result_free(&r);
    if (!prepare_session(ld, w0->conn)) {
        log_error("cannot prepare the session on %s: %s (SQLSTATE %s)", db_describe(w0->conn),
                  db_message(w0->conn), db_sqlstate(w0->conn));
        *code = EXIT_DATABASE;
        goto fail;
    }
    signals_set_hook(cancel_all, ld);
    open_extra_workers(ld);
    if (ld->n_workers > 1 && !start_threads(ld)) {
        log_error("cannot start the loading threads");
        *code = EXIT_DATABASE;
        goto fail;
    }
    log_info("loading into %s on %s (conflict target %s)%s, %d connection%s", ld->t.display,
             db_describe(w0->conn), ld->t.conflict, cfg->dry_run ? ", dry run" : "",
             ld->n_workers, ld->n_workers == 1 ? "" : "s");
    buf_free(&err);
    return ld;
fail:
    buf_free(&err);
    loader_close(&ld);
    return NULL;
}

void loader_close(loader **ldp)
{
    loader *ld = *ldp;
    if (!ld)
        return;
    signals_set_hook(NULL, NULL);
    stop_threads(ld);
    for (int i = 0; i < MAX_LANES; i++) {
        worker *w = &ld->workers[i];
        db_close(&w->conn);
        buf_free(&w->sql);
        buf_free(&w->copybuf);
        clear_refused(w);
        free(w->refused);
    }
    target_free(&ld->t);
    buf_free(&ld->merge_sql);
    buf_free(&ld->merge_direct_sql);
    buf_free(&ld->stale_sql);
    buf_free(&ld->ledger_name);
    buf_free(&ld->ledger_chunk_name);
    free(ld->idx);
    free(ld);
    *ldp = NULL;
}

uint64_t loader_last_committed(const loader *ld)
{
    return ld->last_committed;
}

/* ---- the ledger (on connection 0, between chunks) ---- */

static db *control(loader *ld)
{
    return ld->workers[0].conn;
}

/* Creates the ledger, or gives one written before lanes its lane columns. */
static bool ensure_ledger(loader *ld)
{
    if (ld->ledger_exists && ld->ledger_lanes)
        return true;
    db *d = control(ld);
    buf *sql = &ld->workers[0].sql;
    bool ok = render(ld, sql, SQL_LEDGER_CREATE) && db_exec(d, "BEGIN") &&
              db_exec(d, buf_cstr(sql));
    if (ok) {
        const char *p[] = {buf_cstr(&ld->ledger_chunk_name)};
        db_result *r = db_query(d, SQL_LEDGER_EXISTS, 1, p);
        ok = r != NULL;
        bool has_lanes = ok && strcmp(db_value(r, 0, 1), "t") == 0;
        db_result_free(&r);
        if (ok && !has_lanes)
            ok = render(ld, sql, SQL_LEDGER_ADD_LANES) && db_exec(d, buf_cstr(sql));
    }
    if (!ok || !db_exec(d, "COMMIT")) {
        log_error("cannot create the ledger %s: %s (SQLSTATE %s)", buf_cstr(&ld->ledger_name),
                  db_message(d), db_sqlstate(d));
        db_exec(d, "ROLLBACK");
        return false;
    }
    ld->ledger_exists = true;
    ld->ledger_lanes = true;
    return true;
}

/* The file's advisory lock, on connection 0 (called again by worker 0
 * after it reconnects). */
static bool file_lock(loader *ld)
{
    db *d = control(ld);
    const char *p[] = {ld->t.display, ld->file.digest};
    db_result *r = db_query(d, SQL_FILE_LOCK_TRY, 2, p);
    if (!r)
        return false;
    bool got = strcmp(db_value(r, 0, 0), "t") == 0;
    db_result_free(&r);
    if (!got) {
        log_info("%s: another idemload process is loading this file into %s; waiting for it",
                 ld->file.path, ld->t.display);
        r = db_query(d, SQL_FILE_LOCK, 2, p);
        if (!r)
            return false;
        db_result_free(&r);
    }
    ld->locked = true;
    return true;
}

static void file_unlock(loader *ld)
{
    db *d = control(ld);
    if (!ld->locked || !d || !db_ok(d))
        return;
    const char *p[] = {ld->t.display, ld->file.digest};
    db_result *r = db_query(d, SQL_FILE_UNLOCK, 2, p);
    db_result_free(&r);
    ld->locked = false;
}

static void read_figures(const db_result *r, int first, load_counts *c)
{
    c->rows_read = (uint64_t)db_int(r, 0, first);
    c->rows_rejected = (uint64_t)db_int(r, 0, first + 1);
    c->rows_deduplicated = (uint64_t)db_int(r, 0, first + 2);
    c->inserted = (uint64_t)db_int(r, 0, first + 3);
    c->updated = (uint64_t)db_int(r, 0, first + 4);
    c->unchanged = (uint64_t)db_int(r, 0, first + 5);
    c->stale = (uint64_t)db_int(r, 0, first + 6);
    c->existing = (uint64_t)db_int(r, 0, first + 7);
}

static bool ledger_sums(loader *ld, uint64_t upto, load_counts *c)
{
    char upto_s[24];
    snprintf(upto_s, sizeof upto_s, "%llu", (unsigned long long)upto);
    const char *p[] = {ld->t.display, ld->file.digest, upto_s};
    buf *sql = &ld->workers[0].sql;
    if (!render(ld, sql, SQL_LEDGER_SUMS))
        return false;
    db_result *r = db_query(control(ld), buf_cstr(sql), 3, p);
    if (!r)
        return false;
    read_figures(r, 0, c);
    c->chunks = (uint64_t)db_int(r, 0, 8);
    db_result_free(&r);
    return true;
}

/* The figures a lane of a chunk committed, from connection d; false when
 * that lane has no ledger row (or the query failed: see db_ok). */
static bool lane_in_ledger(loader *ld, db *d, buf *sql, uint64_t chunk_no, int lane,
                           load_counts *c)
{
    char chunk_s[24], lane_s[16];
    snprintf(chunk_s, sizeof chunk_s, "%llu", (unsigned long long)chunk_no);
    snprintf(lane_s, sizeof lane_s, "%d", lane);
    const char *p[] = {ld->t.display, ld->file.digest, chunk_s, lane_s};
    if (!render(ld, sql, SQL_LEDGER_LANE_FIGURES))
        return false;
    db_result *r = db_query(d, buf_cstr(sql), 4, p);
    if (!r)
        return false;
    bool found = db_nrows(r) > 0;
    if (found)
        read_figures(r, 0, c);
    db_result_free(&r);
    return found;
}

/* How far each lane of an earlier run got: fills ld->lane_done. */
static bool read_lanes(loader *ld, int lanes)
{
    memset(ld->lane_done, 0, sizeof ld->lane_done);
    const char *p[] = {ld->t.display, ld->file.digest};
    buf *sql = &ld->workers[0].sql;
    if (!render(ld, sql, SQL_LEDGER_LANES))
        return false;
    db_result *r = db_query(control(ld), buf_cstr(sql), 2, p);
    if (!r)
        return false;
    for (int i = 0; i < db_nrows(r); i++) {
        int64_t lane = db_int(r, i, 0);
        if (lane >= 0 && lane < lanes)
            ld->lane_done[lane] = (uint64_t)db_int(r, i, 1);
    }
    db_result_free(&r);
    return true;
}

static int ledger_failed(loader *ld, const char *what)
{
    log_error("%s: %s: %s (SQLSTATE %s)", ld->file.path, what, db_message(control(ld)),
              db_sqlstate(control(ld)));
    return EXIT_DATABASE;
}

int loader_begin_file(loader *ld, const file_identity *id, size_t chunk_rows, file_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    memset(ld->lane_done, 0, sizeof ld->lane_done);
    ld->file = *id;
    ld->last_committed = 0;
    ld->lanes = ld->n_workers;
    ld->use_ledger = id->digest[0] != '\0';
    if (!ld->use_ledger) {
        log_info("%s: read from a stream, so the ledger cannot recognise it: no skip or resume",
                 id->path);
        return EXIT_OK;
    }
    if (ld->cfg->dry_run) {
        /* Read the ledger if there is one; write nothing. */
        if (!ld->ledger_exists)
            return EXIT_OK;
    } else {
        if (!ensure_ledger(ld))
            return EXIT_DATABASE;
        if (!file_lock(ld))
            return ledger_failed(ld, "ledger");
    }
    buf *sql = &ld->workers[0].sql;
    if (!render(ld, sql, SQL_LEDGER_LOOKUP))
        return EXIT_DATABASE;
    const char *p[] = {ld->t.display, id->digest};
    db_result *r = db_query(control(ld), buf_cstr(sql), 2, p);
    if (!r)
        return ledger_failed(ld, "cannot read the ledger");
    bool known = db_nrows(r) > 0;
    bool completed = known && strcmp(db_value(r, 0, 0), "completed") == 0;
    uint64_t chunks = known ? (uint64_t)db_int(r, 0, 1) : 0;
    uint64_t prev_rows = known ? (uint64_t)db_int(r, 0, 2) : 0;
    int64_t prev_lanes = known ? db_int(r, 0, 3) : 0;
    db_result_free(&r);

    if (completed && !ld->cfg->force) {
        plan->skip = true;
        if (!ledger_sums(ld, UINT32_MAX, &plan->previous))
            return ledger_failed(ld, "cannot read the ledger");
        return EXIT_OK;
    }
    if (known && !completed && prev_rows == chunk_rows && prev_lanes >= 1 &&
        prev_lanes <= MAX_LANES) {
        if (!read_lanes(ld, (int)prev_lanes))
            return ledger_failed(ld, "cannot read the ledger");
        uint64_t all = UINT64_MAX, any = 0;
        for (int i = 0; i < prev_lanes; i++) {
            all = ld->lane_done[i] < all ? ld->lane_done[i] : all;
            any = ld->lane_done[i] > any ? ld->lane_done[i] : any;
        }
        if (any > 0) {
            /* Resume with the earlier run's lanes: a lane it committed
             * must not be loaded again under another split. */
            ld->lanes = (int)prev_lanes;
            plan->resume_after = all;
            plan->next_partial = any > all;
            ld->last_committed = all;
            if (!ledger_sums(ld, all, &plan->previous))
                return ledger_failed(ld, "cannot read the ledger");
            if (ld->lanes != ld->n_workers)
                log_info("%s: resuming with the %d lane%s of the earlier run over %d "
                         "connection%s", id->path, ld->lanes, ld->lanes == 1 ? "" : "s",
                         ld->n_workers, ld->n_workers == 1 ? "" : "s");
            return EXIT_OK;
        }
    }
    memset(ld->lane_done, 0, sizeof ld->lane_done);
    if (known && !completed && chunks > 0 && prev_rows != chunk_rows)
        log_info("%s: an earlier run committed %llu chunks of %llu rows; --chunk-rows is now "
                 "%zu, so the file is loaded from the start (the merge is idempotent)",
                 id->path, (unsigned long long)chunks, (unsigned long long)prev_rows, chunk_rows);
    if (ld->cfg->dry_run)
        return EXIT_OK;
    char size_s[24], rows_s[24], lanes_s[16];
    snprintf(size_s, sizeof size_s, "%lld", (long long)id->size);
    snprintf(rows_s, sizeof rows_s, "%zu", chunk_rows);
    snprintf(lanes_s, sizeof lanes_s, "%d", ld->lanes);
    const char *ps[] = {ld->t.display, id->digest, size_s, id->path, rows_s, lanes_s};
    if (!render(ld, sql, SQL_LEDGER_START) ||
        !db_exec_params(control(ld), buf_cstr(sql), 6, ps))
        return ledger_failed(ld, "cannot record the file in the ledger");
    return EXIT_OK;
}

int loader_end_file(loader *ld, bool complete, const load_counts *totals)
{
    (void)totals;
    int code = EXIT_OK;
    db *d = control(ld);
    if (ld->use_ledger && complete && !ld->cfg->dry_run && d && db_ok(d)) {
        char chunks_s[24];
        snprintf(chunks_s, sizeof chunks_s, "%llu", (unsigned long long)ld->last_committed);
        const char *p[] = {ld->t.display, ld->file.digest, chunks_s};
        buf *sql = &ld->workers[0].sql;
        if (!render(ld, sql, SQL_LEDGER_COMPLETE) || !db_exec_params(d, buf_cstr(sql), 3, p)) {
            log_error("%s: cannot mark the file completed in the ledger: %s", ld->file.path,
                      db_message(d));
            code = EXIT_DATABASE;
        }
    }
    file_unlock(ld);
    ld->use_ledger = false;
    return code;
}

int loader_finish(loader *ld)
{
    db *d = control(ld);
    if (ld->in_run_txn && d && db_ok(d)) {
        if (!db_exec(d, "ROLLBACK")) {
            log_error("dry run: cannot roll back: %s", db_message(d));
            return EXIT_DATABASE;
        }
        ld->in_run_txn = false;
    }
    return EXIT_OK;
}

/* ---- one lane of one chunk, on one worker's connection ---- */

/* COPYs the part's rows [lo, hi] into the staging table, ord = position + 1. */
static bool copy_rows(worker *w, const part *pt, size_t lo, size_t hi)
{
    db *d = w->conn;
    if (!db_copy_begin(d, SQL_COPY_STAGE))
        return false;
    buf_clear(&w->copybuf);
    for (size_t i = lo; i <= hi; i++) {
        row r;
        chunk_get(w->ld->ch, pt->idx[i], &r);
        if (!copy_encode_row(&w->copybuf, (int)(i + 1), &r)) {
            db_copy_end(d, "idemload: out of memory");
            return false;
        }
        if (w->copybuf.len >= (1 << 18)) {
            if (!db_copy_send(d, w->copybuf.data, w->copybuf.len)) {
                db_copy_end(d, "idemload: send failed");
                return false;
            }
            buf_clear(&w->copybuf);
        }
    }
    if (w->copybuf.len && !db_copy_send(d, w->copybuf.data, w->copybuf.len)) {
        db_copy_end(d, "idemload: send failed");
        return false;
    }
    return db_copy_end(d, NULL);
}

/* Merges staged rows with ord in [lo+1, hi+1]; adds figures to *c. */
static bool merge_rows(worker *w, size_t lo, size_t hi, load_counts *c)
{
    loader *ld = w->ld;
    char a[24], b[24];
    snprintf(a, sizeof a, "%zu", lo + 1);
    snprintf(b, sizeof b, "%zu", hi + 1);
    const char *p[] = {a, b, ld->final_array};
    bool update = ld->cfg->conflict == CONFLICT_UPDATE;
    const buf *sql = w->probe ? &ld->merge_sql : &ld->merge_direct_sql;
    db_result *r = db_query(w->conn, buf_cstr(sql), update ? 3 : 2, p);
    if (!r)
        return false;
    uint64_t n = hi - lo + 1;
    uint64_t inserted = (uint64_t)db_int(r, 0, 0);
    uint64_t updated = (uint64_t)db_int(r, 0, 1);
    int64_t stale_in = db_int(r, 0, 2), unchanged_in = db_int(r, 0, 3);
    bool missed = !db_is_null(r, 0, 4);
    if (!update) {
        db_result_free(&r);
        c->inserted += inserted;
        c->existing += n - inserted;
        return true;
    }
    /* -1: the direct merge leaves the rows it did not write unclassified. */
    uint64_t stale = stale_in > 0 ? (uint64_t)stale_in : 0;
    uint64_t unchanged = unchanged_in > 0 ? (uint64_t)unchanged_in : 0;
    if (missed) {
        /* Rows sent to the INSERT but not written: those the direct merge
         * turned away, or a concurrent load got to first.  Classify them
         * now; the merge has locked their active rows, so this is exact. */
        const char *ps[] = {db_value(r, 0, 4)};
        db_result *s = db_query(w->conn, buf_cstr(&ld->stale_sql), 1, ps);
        db_result_free(&r);
        if (!s)
            return false;
        stale += (uint64_t)db_int(s, 0, 0);
        db_result_free(&s);
    } else {
        db_result_free(&r);
    }
    unchanged = n - inserted - updated - stale;
    c->inserted += inserted;
    c->updated += updated;
    c->stale += stale;
    c->unchanged += unchanged;
    /* Probe first while more than a tenth of the rows meet an existing key
     * (it saves locking and writing them); for new keys the probe is a
     * wasted index descent, so a first load goes direct. */
    w->probe = (n - inserted) * 10 > n;
    return true;
}

/*
 * Loads rows [lo, hi] of the part under a savepoint, halving on data
 * errors until the refused rows are found.  Returns ATTEMPT_OK (refused
 * rows recorded) or the error that is not about data.
 */
static attempt_result isolate(worker *w, const part *pt, size_t lo, size_t hi, load_counts *c)
{
    db *d = w->conn;
    if (!db_exec(d, "SAVEPOINT idemload_part"))
        return classify(w->ld, d);
    load_counts got = {0};
    if (copy_rows(w, pt, lo, hi) && merge_rows(w, lo, hi, &got)) {
        if (!db_exec(d, "RELEASE SAVEPOINT idemload_part"))
            return classify(w->ld, d);
        load_counts_add(c, &got);
        return ATTEMPT_OK;
    }
    attempt_result ar = classify(w->ld, d);
    if (ar != ATTEMPT_DATA)
        return ar;
    buf msg = BUF_INIT;
    buf_printf(&msg, "refused by PostgreSQL: %s (SQLSTATE %s)", db_message(d), db_sqlstate(d));
    if (!db_exec(d, "ROLLBACK TO SAVEPOINT idemload_part") ||
        !db_exec(d, "RELEASE SAVEPOINT idemload_part")) {
        buf_free(&msg);
        return classify(w->ld, d);
    }
    if (lo == hi) {
        bool ok = add_refused(w, pt->idx[lo], buf_cstr(&msg));
        buf_free(&msg);
        return ok ? ATTEMPT_OK : ATTEMPT_FAILED;
    }
    buf_free(&msg);
    size_t mid = lo + (hi - lo) / 2;
    ar = isolate(w, pt, lo, mid, c);
    if (ar != ATTEMPT_OK)
        return ar;
    return isolate(w, pt, mid + 1, hi, c);
}

static bool ledger_chunk(worker *w, int lane, const load_counts *c)
{
    loader *ld = w->ld;
    char v[12][24];
    snprintf(v[0], 24, "%llu", (unsigned long long)ld->chunk_no);
    snprintf(v[1], 24, "%d", lane);
    snprintf(v[2], 24, "%llu", (unsigned long long)c->rows_read);
    snprintf(v[3], 24, "%llu", (unsigned long long)c->rows_rejected);
    snprintf(v[4], 24, "%llu", (unsigned long long)c->rows_deduplicated);
    snprintf(v[5], 24, "%llu", (unsigned long long)c->inserted);
    snprintf(v[6], 24, "%llu", (unsigned long long)c->updated);
    snprintf(v[7], 24, "%llu", (unsigned long long)c->unchanged);
    snprintf(v[8], 24, "%llu", (unsigned long long)c->stale);
    snprintf(v[9], 24, "%llu", (unsigned long long)c->existing);
    const char *p[] = {ld->t.display, ld->file.digest, v[0], v[1], v[2], v[3], v[4], v[5],
                       v[6], v[7], v[8], v[9]};
    return render(ld, &w->sql, SQL_LEDGER_CHUNK) &&
           db_exec_params(w->conn, buf_cstr(&w->sql), 12, p);
}

/* One attempt at a part.  *c receives its figures (for lane 0 the
 * reading figures of the chunk plus the merge's). */
static attempt_result attempt_part(worker *w, int lane, bool isolated, load_counts *c)
{
    loader *ld = w->ld;
    const part *pt = &ld->parts[lane];
    db *d = w->conn;
    bool dry = ld->cfg->dry_run;
    clear_refused(w);
    if (!db_exec(d, dry ? "SAVEPOINT idemload_chunk" : "BEGIN") ||
        !db_exec(d, SQL_TRUNCATE_STAGE))
        return classify(w->ld, d);
    attempt_result ar = ATTEMPT_OK;
    if (pt->n > 0) {
        if (isolated) {
            ar = isolate(w, pt, 0, pt->n - 1, c);
        } else if (!copy_rows(w, pt, 0, pt->n - 1) || !merge_rows(w, 0, pt->n - 1, c)) {
            ar = classify(w->ld, d);
        }
    }
    if (ar == ATTEMPT_OK) {
        c->rows_rejected += w->n_refused;
        if (ld->use_ledger && !dry && !ledger_chunk(w, lane, c))
            ar = classify(w->ld, d);
    }
    if (ar == ATTEMPT_OK && !may_commit(ld))
        ar = ATTEMPT_CANCELED;
    if (ar == ATTEMPT_OK) {
        if (db_exec(d, dry ? "RELEASE SAVEPOINT idemload_chunk" : "COMMIT"))
            return ATTEMPT_OK;
        ar = classify(w->ld, d);
    }
    if (db_ok(d)) {
        if (dry) {
            db_exec(d, "ROLLBACK TO SAVEPOINT idemload_chunk");
            db_exec(d, "RELEASE SAVEPOINT idemload_chunk");
        } else {
            db_exec(d, "ROLLBACK");
        }
    }
    return ar;
}

/* After a part committed: its refused rows go to the rejects file. */
static int write_refused(worker *w)
{
    loader *ld = w->ld;
    buf err = BUF_INIT;
    int code = EXIT_OK;
    for (size_t i = 0; i < w->n_refused && code == EXIT_OK; i++) {
        row r;
        chunk_get(ld->ch, w->refused[i].index, &r);
        if (!rejects_write(ld->rj, ld->path, r.line, w->refused[i].message, r.raw, r.raw_len,
                           &err)) {
            log_error("%s", buf_cstr(&err));
            code = EXIT_INPUT;
        }
    }
    buf_free(&err);
    clear_refused(w);
    return code;
}

static long next_backoff(long ms)
{
    return ms * 2 > 8000 ? 8000 : ms * 2;
}

/*
 * Opens a new session after a lost connection, trying until it works or
 * the retries run out (each failed attempt counts as one).  False when it
 * gave up (logged).
 */
static bool reconnect(worker *w, const char *at, int *attempts, long *backoff)
{
    loader *ld = w->ld;
    buf err = BUF_INIT;
    for (;;) {
        buf_clear(&err);
        if (connect_session(w, &err)) {
            buf_free(&err);
            return true;
        }
        if (++*attempts > ld->cfg->retries || cancelled(ld)) {
            log_error("%s: %s: cannot reconnect: %s; last committed chunk: %llu; run the same "
                      "command again to resume after it", ld->path, at, buf_cstr(&err),
                      (unsigned long long)ld->last_committed);
            buf_free(&err);
            return false;
        }
        log_warn("%s: %s: reconnect failed: %s; retry %d of %d in %.1f s", ld->path, at,
                 buf_cstr(&err), *attempts, ld->cfg->retries, (double)*backoff / 1000.0);
        sleep_ms(ld, *backoff);
        *backoff = next_backoff(*backoff);
    }
}

/* Loads one lane of the chunk in flight, retrying as the errors allow.
 * Fills the part's counts; returns its exit code. */
static int load_part(worker *w, int lane)
{
    loader *ld = w->ld;
    part *pt = &ld->parts[lane];
    load_counts base = {0};
    if (lane == 0) {
        base = ld->reading;
        base.chunks = 0;
    }
    char at[64];
    where(ld, ld->chunk_no, lane, at, sizeof at);
    bool isolated = false;
    int attempts = 0;
    long backoff = 250;
    for (;;) {
        load_counts c = base;
        attempt_result ar = attempt_part(w, lane, isolated, &c);
        if (ar == ATTEMPT_OK) {
            pt->counts = c;
            return write_refused(w);
        }
        db *d = w->conn;
        switch (ar) {
        case ATTEMPT_DATA:
            if (isolated) {
                log_error("%s: %s: %s (SQLSTATE %s)", ld->path, at, db_message(d),
                          db_sqlstate(d));
                return EXIT_DATABASE;
            }
            /* Some row is refused: find it, load the others. */
            isolated = true;
            continue;
        case ATTEMPT_CANCELED:
            log_error("%s: interrupted: %s rolled back; %llu chunks committed", ld->path, at,
                      (unsigned long long)ld->last_committed);
            return EXIT_INTERRUPTED;
        case ATTEMPT_FAILED:
            log_error("%s: %s: %s (SQLSTATE %s)", ld->path, at, db_message(d), db_sqlstate(d));
            return EXIT_DATABASE;
        default:
            break;
        }
        /* Deadlock, serialization failure or lost connection: retry. */
        if (++attempts > ld->cfg->retries || (ar == ATTEMPT_CONNECTION && ld->cfg->dry_run)) {
            log_error("%s: %s failed after %d retr%s: %s (SQLSTATE %s); last committed "
                      "chunk: %llu; run the same command again to resume after it",
                      ld->path, at, attempts - 1, attempts - 1 == 1 ? "y" : "ies",
                      db_message(d), db_sqlstate(d), (unsigned long long)ld->last_committed);
            return EXIT_DATABASE;
        }
        log_warn("%s: %s: %s (SQLSTATE %s); retry %d of %d in %.1f s", ld->path, at,
                 db_message(d), db_sqlstate(d), attempts, ld->cfg->retries,
                 (double)backoff / 1000.0);
        sleep_ms(ld, backoff + rand() % 100);
        backoff = next_backoff(backoff);
        if (cancelled(ld))
            return EXIT_INTERRUPTED;
        if (ar == ATTEMPT_CONNECTION || !db_ok(d)) {
            if (!reconnect(w, at, &attempts, &backoff))
                return cancelled(ld) ? EXIT_INTERRUPTED : EXIT_DATABASE;
            if (ld->use_ledger) {
                if (w->no == 0 && !file_lock(ld))
                    continue;
                load_counts done = {0};
                if (lane_in_ledger(ld, w->conn, &w->sql, ld->chunk_no, lane, &done)) {
                    /* The commit happened; only its acknowledgement was lost.
                     * The refused rows are those of that same attempt. */
                    pt->counts = done;
                    return write_refused(w);
                }
            }
        }
    }
}

/* A worker's share of the chunk in flight: lanes no, no + workers, ... */
static void run_parts(worker *w)
{
    loader *ld = w->ld;
    bool failed = false;
    for (int lane = w->no; lane < ld->lanes; lane += ld->n_workers) {
        part *pt = &ld->parts[lane];
        if (pt->done)
            continue;
        if (failed) {
            pt->code = PART_NOT_RUN;
            continue;
        }
        pt->code = load_part(w, lane);
        failed = pt->code != EXIT_OK;
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

/* Splits the chunk's rows (in key order) into the lanes, keeping the order
 * within each lane. */
static bool partition(loader *ld, chunk *ch)
{
    size_t n = chunk_size(ch);
    if (n > ld->cap_idx) {
        uint32_t *p = realloc(ld->idx, n * sizeof *p);
        if (!p)
            return false;
        ld->idx = p;
        ld->cap_idx = n;
    }
    size_t count[MAX_LANES] = {0}, at[MAX_LANES];
    unsigned lanes = (unsigned)ld->lanes;
    for (size_t i = 0; i < n; i++)
        count[chunk_key_hash(ch, i) % lanes]++;
    size_t start = 0;
    for (unsigned l = 0; l < lanes; l++) {
        at[l] = start;
        ld->parts[l] = (part){.idx = ld->idx + start, .n = count[l]};
        start += count[l];
    }
    for (size_t i = 0; i < n; i++)
        ld->idx[at[chunk_key_hash(ch, i) % lanes]++] = (uint32_t)i;
    return true;
}

int loader_load_chunk(loader *ld, chunk *ch, uint64_t chunk_no, const char *file, rejects *rj,
                      load_counts *counts)
{
    if (cancelled(ld) || signals_interrupted())
        return EXIT_INTERRUPTED;
    ld->ch = ch;
    ld->chunk_no = chunk_no;
    ld->path = file;
    ld->rj = rj;
    ld->reading = *counts;
    if (!partition(ld, ch)) {
        log_error("%s: chunk %llu: out of memory", file, (unsigned long long)chunk_no);
        return EXIT_DATABASE;
    }
    /* Lanes an earlier run committed (resume): their figures, not a reload. */
    for (int lane = 0; lane < ld->lanes; lane++) {
        part *pt = &ld->parts[lane];
        if (ld->lane_done[lane] < chunk_no)
            continue;
        if (!lane_in_ledger(ld, control(ld), &ld->workers[0].sql, chunk_no, lane,
                            &pt->counts)) {
            char at[64];
            log_error("%s: %s: the ledger has lost this lane's row: %s", file,
                      where(ld, chunk_no, lane, at, sizeof at), db_message(control(ld)));
            return EXIT_DATABASE;
        }
        pt->done = true;
    }
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
    int committing = GATE_COMMITTING;
    __atomic_compare_exchange_n(&ld->gate, &committing, GATE_RUNNING, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    int code = EXIT_OK;
    load_counts total = {0};
    for (int lane = 0; lane < ld->lanes; lane++) {
        const part *pt = &ld->parts[lane];
        if (pt->code != PART_NOT_RUN)
            code = exit_worst(code, pt->code);
        load_counts_add(&total, &pt->counts);
    }
    if (code != EXIT_OK)
        return code;
    total.chunks = 1;
    *counts = total;
    ld->last_committed = chunk_no;
    for (int lane = 0; lane < ld->lanes; lane++)
        ld->lane_done[lane] = chunk_no;
    return EXIT_OK;
}
