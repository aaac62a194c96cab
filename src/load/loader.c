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
 *
 * This file: the connections and their threads, splitting a chunk into
 * lanes, the commit gate.  One lane's transaction is in loader_lane.c, the
 * ledger in loader_ledger.c; their shared types in loader_impl.h.
 */
#include "load/loader_impl.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/exitcodes.h"
#include "output/log.h"
#include "output/progress.h"
#include "util/signals.h"
#include "db/sql.h"

static const char *const tmpl_names[] = {"table", "conflict", "active", "ledger",
                                         "ledger_chunk", "do_update", "missed_probe",
                                         "missed_direct", "lane", "lanes", "extra_cols",
                                         "extra_vals", "table_oid", "table_storage",
                                         "inserted", "stage", "seq"};

/* stage, seq: a distributed target's staging table of one connection and
 * the target's id sequence (loader_citus.c); "" otherwise. */
static bool render_full(const loader *ld, buf *out, const char *tmpl, const char *do_update,
                        const char *stage, const char *seq)
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
                          ld->ledger_lanes ? "lanes" : "1",
                          buf_cstr(&ld->extra_cols),
                          buf_cstr(&ld->extra_vals),
                          ld->ledger_identity ? "table_oid" : "NULL::oid",
                          ld->ledger_identity ? "table_storage" : "NULL::text",
                          buf_cstr(&ld->inserted_expr),
                          stage,
                          seq};
    buf_clear(out);
    return sql_render(out, tmpl, (int)(sizeof vals / sizeof vals[0]), tmpl_names, vals);
}

static bool render_with(const loader *ld, buf *out, const char *tmpl, const char *do_update)
{
    return render_full(ld, out, tmpl, do_update, "", "");
}

bool ld_render_stage(const loader *ld, buf *out, const char *tmpl, const char *do_update,
                     const char *stage)
{
    return render_full(ld, out, tmpl, do_update, stage, buf_cstr(&ld->seq_literal));
}

bool ld_render(const loader *ld, buf *out, const char *tmpl)
{
    return render_with(ld, out, tmpl, "");
}

/* Has an interrupt cancelled the chunk in flight? */
bool ld_cancelled(const loader *ld)
{
    return __atomic_load_n(&ld->gate, __ATOMIC_SEQ_CST) == GATE_CANCELLED;
}

/* The lane may commit unless the chunk was cancelled. */
bool ld_may_commit(loader *ld)
{
    int expected = GATE_RUNNING;
    __atomic_compare_exchange_n(&ld->gate, &expected, GATE_COMMITTING, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return expected != GATE_CANCELLED;
}

static db *conn_of(worker *w)
{
    return __atomic_load_n(&w->conn, __ATOMIC_ACQUIRE);
}

/* The barrier applies when every lane has a connection of its own (not in a
 * dry run, not when resuming more lanes than there are connections). */
static bool barrier_applies(const loader *ld)
{
    return ld->n_workers > 1 && ld->lanes <= ld->n_workers;
}

void ld_arrive(loader *ld, int lane, bool wait)
{
    part *pt = &ld->parts[lane];
    if (!barrier_applies(ld) || pt->arrived)
        return;
    pthread_mutex_lock(&ld->mu);
    pt->arrived = true;
    ld->arrived++;
    pthread_cond_broadcast(&ld->cv);
    double end = now_seconds() + BARRIER_MS / 1000.0;
    /* Naps of 50 ms: the signal handler cannot wake a condition variable. */
    while (wait && ld->arrived < ld->expected && !ld_cancelled(ld) && now_seconds() < end) {
        struct timespec nap;
        clock_gettime(CLOCK_REALTIME, &nap);
        nap.tv_nsec += 50000000L;
        if (nap.tv_nsec >= 1000000000L) {
            nap.tv_sec++;
            nap.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&ld->cv, &ld->mu, &nap);
    }
    pthread_mutex_unlock(&ld->mu);
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

/* "chunk 7" or "chunk 7, lane 2 of 2", for messages. */
const char *ld_where(const loader *ld, uint64_t chunk_no, int lane, char *out, size_t size)
{
    if (ld->lanes > 1)
        snprintf(out, size, "chunk %llu, lane %d of %d", (unsigned long long)chunk_no, lane + 1,
                 ld->lanes);
    else
        snprintf(out, size, "chunk %llu", (unsigned long long)chunk_no);
    return out;
}

/* Session setup after (re)connecting: the staging table, and in a dry run
 * the run's transaction.  A distributed target's staging table is created
 * before that transaction: it is a distributed table of its own, dropped
 * when the loader closes (loader_citus.c). */
static bool prepare_session(loader *ld, worker *w, db *d)
{
    if (ld->t.distributed)
        return db_exec(d, SQL_SESSION_SETTINGS) && db_exec(d, SQL_CITUS_SESSION_SETTINGS) &&
               ld_citus_session(w, d) &&
               (!ld->cfg->dry_run || (db_exec(d, "BEGIN") && (ld->in_run_txn = true)));
    if (ld->cfg->dry_run) {
        if (!db_exec(d, "BEGIN"))
            return false;
        ld->in_run_txn = true;
    }
    return db_exec(d, SQL_SESSION_SETTINGS) && db_exec(d, SQL_CREATE_STAGE);
}

/* (Re)opens a worker's session.  The old connection is unpublished before
 * it is closed, so the signal hook never cancels through a freed handle. */
bool ld_connect_session(worker *w, buf *err)
{
    db *old = conn_of(w);
    __atomic_store_n(&w->conn, NULL, __ATOMIC_RELEASE);
    db_close(&old);
    db *d = db_connect(w->ld->cfg->dbname, err);
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
        if (!ld_connect_session(w, &err)) {
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
    if (gethostname(ld->host, sizeof ld->host - 1) != 0 || !ld->host[0])
        snprintf(ld->host, sizeof ld->host, "unknown");
    snprintf(ld->pid, sizeof ld->pid, "%ld", (long)getpid());
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
    /* Columns beyond idemload's own: --set constants, NOT NULL columns
     * nothing would fill; before any row is read.  Their parameters follow
     * the merge's own ($1, $2 and, updating, $3). */
    bool db_failed;
    if (!target_check_columns(w0->conn, &ld->t, cfg->extra_set, cfg->n_extra_set,
                              cfg->conflict == CONFLICT_UPDATE ? 4 : 3, &ld->extra_cols,
                              &ld->extra_vals, &db_failed, &err)) {
        log_error("%s", buf_cstr(&err));
        *code = db_failed ? EXIT_DATABASE : EXIT_USAGE;
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
    buf returning = BUF_INIT;
    bool rendered =
        ld_render(ld, &ld->inserted_expr,
                  ld->t.partitioned ? SQL_INSERTED_SNAPSHOT : SQL_INSERTED_XMAX) &&
        ld_render(ld, &action, update ? SQL_CONFLICT_UPDATE : SQL_CONFLICT_NOTHING);
    /* The single-server merges return the written rows' keys; a
     * distributed one their ids (SQL_CITUS_RETURNING). */
    if (rendered && update) {
        rendered = buf_append_str(&ld->citus_action, buf_cstr(&action)) &&
                   ld_render(ld, &returning, SQL_CITUS_RETURNING) &&
                   buf_append_str(&ld->citus_action, buf_cstr(&returning)) &&
                   ld_render(ld, &returning, SQL_CONFLICT_RETURNING) &&
                   buf_append_str(&action, buf_cstr(&returning));
    } else if (rendered) {
        rendered = buf_append_str(&ld->citus_action, buf_cstr(&action));
    }
    buf_free(&returning);
    rendered = rendered &&
               render_with(ld, &ld->merge_sql, SQL_MERGE_PROBE, buf_cstr(&action)) &&
               render_with(ld, &ld->merge_direct_sql, SQL_MERGE_DIRECT, buf_cstr(&action)) &&
               ld_render(ld, &ld->stale_sql, SQL_COUNT_STALE);
    buf_free(&action);
    /* DO NOTHING never writes an existing row: nothing for a probe to save. */
    w0->probe = update;
    if (!rendered) {
        log_error("out of memory");
        *code = EXIT_DATABASE;
        goto fail;
    }
    const char *p[] = {buf_cstr(&ld->ledger_chunk_name), buf_cstr(&ld->ledger_name)};
    db_result *r = db_query(w0->conn, SQL_LEDGER_EXISTS, 2, p);
    if (!r) {
        log_error("cannot look for the ledger: %s", db_message(w0->conn));
        *code = EXIT_DATABASE;
        goto fail;
    }
    ld->ledger_exists = strcmp(db_value(r, 0, 0), "t") == 0;
    ld->ledger_lanes = strcmp(db_value(r, 0, 1), "t") == 0;
    ld->ledger_identity = strcmp(db_value(r, 0, 2), "t") == 0;
    ld->ledger_loader = strcmp(db_value(r, 0, 3), "t") == 0;
    db_result_free(&r);
    if (ld->t.distributed && (*code = ld_citus_open(ld)) != EXIT_OK)
        goto fail;
    if (!prepare_session(ld, w0, w0->conn)) {
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
    if (ld->t.distributed)
        ld_citus_close(ld);
    for (int i = 0; i < MAX_LANES; i++) {
        worker *w = &ld->workers[i];
        db_close(&w->conn);
        ld_citus_free(w);
        buf_free(&w->sql);
        buf_free(&w->copybuf);
        buf_free(&w->err_msg);
        ld_clear_refused(w);
        free(w->refused);
    }
    target_free(&ld->t);
    buf_free(&ld->merge_sql);
    buf_free(&ld->merge_direct_sql);
    buf_free(&ld->stale_sql);
    buf_free(&ld->extra_cols);
    buf_free(&ld->extra_vals);
    buf_free(&ld->inserted_expr);
    buf_free(&ld->ledger_name);
    buf_free(&ld->ledger_chunk_name);
    buf_free(&ld->table_storage);
    buf_free(&ld->citus_action);
    buf_free(&ld->seq_literal);
    free(ld->idx);
    free(ld);
    *ldp = NULL;
}

uint64_t loader_last_committed(const loader *ld)
{
    return ld->last_committed;
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
        pt->code = ld_load_part(w, lane);
        ld_arrive(ld, lane, false);     /* given up: the others need not wait */
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
    if (ld_cancelled(ld) || signals_interrupted()) {
        log_error("%s: interrupted before chunk %llu; %llu chunks committed", file,
                  (unsigned long long)chunk_no, (unsigned long long)ld->last_committed);
        return EXIT_INTERRUPTED;
    }
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
        if (!ld_lane_figures(ld, ld_control(ld), &ld->workers[0].sql, chunk_no, lane,
                            &pt->counts)) {
            char at[64];
            log_error("%s: %s: the ledger has lost this lane's row: %s", file,
                      ld_where(ld, chunk_no, lane, at, sizeof at), db_message(ld_control(ld)));
            return EXIT_DATABASE;
        }
        pt->done = true;
    }
    ld->arrived = 0;
    ld->expected = 0;
    for (int lane = 0; lane < ld->lanes; lane++)
        ld->expected += !ld->parts[lane].done;
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
