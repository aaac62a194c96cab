/*
 * tools_index.c - idemload create-index: build the partial unique index on
 * the business key with CREATE UNIQUE INDEX CONCURRENTLY, which does not
 * block writers, showing its progress.  (SPEC.md "Table safety tools".)
 *
 * CONCURRENTLY cannot run inside a transaction and, when it fails, leaves
 * an INVALID index behind that writes still maintain (and, being unique,
 * can even reject).  So: an INVALID index of our name left by an earlier
 * attempt is dropped (DROP INDEX CONCURRENTLY) before building, and the
 * leftover of a build that fails now is dropped before exiting.
 *
 * db.h is synchronous, so the CREATE runs on the tool's connection in a
 * second thread while the main thread reads pg_stat_progress_create_index
 * for that connection's backend on a second connection, about once a
 * second.  Each connection is used by one thread only.
 *
 * Exit status: 0 built, or a usable index already exists; 1 refused
 * (duplicates, another build in progress) or the build failed for a reason
 * the operator can act on (a duplicate arriving, a lock, a cancel); 2 for
 * configuration (no table, a name taken by something else); 4 a lost
 * connection or another database error; 130 interrupted.
 */
#include "tools/tools.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output/log.h"
#include "output/progress.h"
#include "util/signals.h"
#include "db/sql.h"
#include "tools/tools_distributed.h"
#include "tools/tools_shared.h"

/* What the catalog holds under the index name (SQL_INDEX_STATE). */
typedef struct index_state {
    bool exists;
    bool is_index;
    bool ours;          /* an index of the target table */
    bool valid;
    bool ready;
    int building_pid;   /* a session building it now; 0: none */
} index_state;

static bool read_state(db *d, const target *t, const char *name, index_state *st)
{
    memset(st, 0, sizeof *st);
    const char *params[] = {t->schema, name, t->oid};
    db_result *r = db_query(d, SQL_INDEX_STATE, 3, params);
    if (!r)
        return false;
    if (db_nrows(r) > 0) {
        st->exists = true;
        st->is_index = strcmp(db_value(r, 0, 0), "t") == 0;
        st->ours = strcmp(db_value(r, 0, 1), "t") == 0;
        st->valid = strcmp(db_value(r, 0, 2), "t") == 0;
        st->ready = strcmp(db_value(r, 0, 3), "t") == 0;
        st->building_pid = (int)db_int(r, 0, 4);
    }
    db_result_free(&r);
    return true;
}

/* The names of an index, ready for SQL and for messages. */
typedef struct index_names {
    buf bare;           /* the name as PostgreSQL stores it */
    buf quoted;         /* "name" */
    buf schema;         /* "schema" */
    buf display;        /* schema.name */
} index_names;

/* Drops the INVALID index a failed build left, if it is still there and
 * nobody is building it.  Logs what it does; false when the drop failed
 * (the index stays, and the message says how to drop it by hand). */
static bool drop_leftover(db *d, const target *t, const index_names *in)
{
    index_state st;
    if (!read_state(d, t, buf_cstr(&in->bare), &st)) {
        tool_db_failure(d, "cannot look up the index left by the build");
        return false;
    }
    if (!st.exists || !st.is_index || !st.ours || st.valid || st.building_pid)
        return true;
    buf sql = BUF_INIT;
    bool ok = tool_render(&sql, SQL_DROP_INDEX, t, buf_cstr(&in->schema), buf_cstr(&in->quoted)) &&
              db_exec(d, buf_cstr(&sql));
    if (ok)
        log_info("dropped the INVALID index %s left behind by the failed build",
                 buf_cstr(&in->display));
    else
        log_error("cannot drop the INVALID index %s: %s (SQLSTATE %s); drop it by hand "
                  "(DROP INDEX CONCURRENTLY %s.%s) or run 'idemload create-index' again, which "
                  "drops it first",
                  buf_cstr(&in->display), db_message(d), db_sqlstate(d), buf_cstr(&in->schema),
                  buf_cstr(&in->quoted));
    buf_free(&sql);
    return ok;
}

/* The CREATE, run in its own thread on its own connection. */
typedef struct build_job {
    db *d;
    const char *sql;
    bool ok;
    bool done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} build_job;

static void *build_thread(void *arg)
{
    build_job *job = arg;
    bool ok = db_exec(job->d, job->sql);
    pthread_mutex_lock(&job->mu);
    job->ok = ok;
    job->done = true;
    pthread_cond_signal(&job->cv);
    pthread_mutex_unlock(&job->mu);
    return NULL;
}

/* A distributed table: its shards are built on the workers, so read the
 * progress there (tools_distributed.h).  Set before the build starts. */
static bool progress_from_workers;

/* One progress line from pg_stat_progress_create_index for backend pid;
 * *locker receives the pid the build waits for, if any.  False when the
 * progress connection failed (stop asking). */
static bool show_progress(db *watch, int pid, const char *index, double started, bool tty,
                          int *locker)
{
    buf p = BUF_INIT, line = BUF_INIT;
    buf_printf(&p, "%d", pid);
    const char *params[] = {buf_cstr(&p)};
    db_result *r = progress_from_workers ? tool_distributed_index_progress(watch)
                                         : db_query(watch, SQL_INDEX_PROGRESS, 1, params);
    buf_free(&p);
    if (!r) {
        log_warn("no more progress shown: %s", db_message(watch));
        return false;
    }
    if (db_nrows(r) > 0) {
        long long blocks_done = db_int(r, 0, 1), blocks_total = db_int(r, 0, 2);
        long long tuples_done = db_int(r, 0, 3), tuples_total = db_int(r, 0, 4);
        long long lockers_done = db_int(r, 0, 5), lockers_total = db_int(r, 0, 6);
        if (db_int(r, 0, 7))
            *locker = (int)db_int(r, 0, 7);
        buf_printf(&line, "create-index %s: %s", index, db_value(r, 0, 0));
        if (blocks_total > 0)
            buf_printf(&line, ", blocks %lld/%lld (%.0f%%)", blocks_done, blocks_total,
                       100.0 * (double)blocks_done / (double)blocks_total);
        if (tuples_total > 0)
            buf_printf(&line, ", tuples %lld/%lld", tuples_done, tuples_total);
        if (lockers_total > 0)
            buf_printf(&line, ", transactions waited for %lld/%lld%s%s%s", lockers_done,
                       lockers_total, db_int(r, 0, 7) ? " (now pid " : "",
                       db_int(r, 0, 7) ? db_value(r, 0, 7) : "", db_int(r, 0, 7) ? ")" : "");
        buf_printf(&line, ", %.0f s", now_seconds() - started);
        if (tty) {
            fprintf(stderr, "\r\033[K%s", buf_cstr(&line));
            fflush(stderr);
            log_set_progress_shown(true);
        } else {
            log_info("%s", buf_cstr(&line));
        }
    }
    db_result_free(&r);
    buf_free(&line);
    return true;
}

/* Runs the CREATE on d, with progress read on a second connection unless
 * --quiet.  Returns whether the CREATE succeeded (the failure stays on d);
 * *locker: the last session the build was seen waiting for (0: none). */
static bool build(const config *cfg, db *d, const char *sql, const char *index, int *locker)
{
    db *watch = NULL;
    if (!log_is_quiet()) {
        buf err = BUF_INIT;
        watch = db_connect(cfg->dbname, &err);
        if (!watch)
            log_warn("no progress shown: %s", buf_cstr(&err));
        buf_free(&err);
    }
    build_job job = {.d = d, .sql = sql};
    int pid = db_backend_pid(d); /* before the thread owns d */
    pthread_t th;
    if (!watch || pthread_mutex_init(&job.mu, NULL) != 0) {
        db_close(&watch);
        return db_exec(d, sql);
    }
    if (pthread_cond_init(&job.cv, NULL) != 0) {
        pthread_mutex_destroy(&job.mu);
        db_close(&watch);
        return db_exec(d, sql);
    }
    if (pthread_create(&th, NULL, build_thread, &job) != 0) {
        log_warn("no progress shown: cannot start a thread");
        pthread_cond_destroy(&job.cv);
        pthread_mutex_destroy(&job.mu);
        db_close(&watch);
        return db_exec(d, sql);
    }
    bool tty = isatty(STDERR_FILENO);
    double started = now_seconds();
    pthread_mutex_lock(&job.mu);
    while (!job.done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait(&job.cv, &job.mu, &until);
        if (job.done || !watch)
            continue;
        pthread_mutex_unlock(&job.mu);
        if (!show_progress(watch, pid, index, started, tty, locker))
            db_close(&watch);
        pthread_mutex_lock(&job.mu);
    }
    pthread_mutex_unlock(&job.mu);
    pthread_join(th, NULL);
    pthread_cond_destroy(&job.cv);
    pthread_mutex_destroy(&job.mu);
    if (tty && watch) {
        fputs("\r\033[K", stderr);
        log_set_progress_shown(false);
    }
    db_close(&watch);
    return job.ok;
}

/* Why the build failed, in plain words, and the exit status it earns.
 * locker: the session the build was last seen waiting for, or 0. */
static int explain_failure(db *d, const target *t, const index_names *in, int locker)
{
    const char *state = db_sqlstate(d);
    const char *why;
    buf waited = BUF_INIT;
    if (locker)
        buf_printf(&waited, " (it was waiting for the transaction of pid %d)", locker);
    int code = EXIT_FINDINGS;
    if (signals_interrupted()) {
        why = "interrupted";
        code = EXIT_INTERRUPTED;
    } else if (db_error_class_of(d) == DBE_CONNECTION) {
        why = "the connection to the server was lost during the build";
        code = EXIT_DATABASE;
    } else if (strcmp(state, "23505") == 0) {
        why = "an active row with a duplicate key exists: another session wrote it while the "
              "index was being built ('idemload dedupe' lists such keys)";
    } else if (strcmp(state, "55P03") == 0) {
        why = "it gave up waiting for a lock (lock_timeout): another session holds a lock on the "
              "table, or a long transaction is open; find it in pg_stat_activity and run "
              "create-index again once it ends";
    } else if (strcmp(state, "57014") == 0) {
        why = "the build was canceled (statement_timeout, or pg_cancel_backend from another "
              "session)";
    } else if (strcmp(state, "40P01") == 0) {
        why = "it deadlocked with another session changing the table's schema; run it again";
    } else if (strcmp(state, "42P07") == 0) {
        why = "a relation of that name appeared meanwhile (another create-index?)";
    } else {
        why = "the server refused it";
        code = tool_db_code(d);
    }
    log_error("building index %s on %s failed: %s%s: %s (SQLSTATE %s)", buf_cstr(&in->display),
              t->display, why, buf_cstr(&waited), db_message(d), *state ? state : "none");
    buf_free(&waited);
    return code;
}

int tools_create_index(const config *cfg)
{
    tool_ctx c;
    index_names in = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    buf sql = BUF_INIT, count = BUF_INIT;
    db *spare = NULL;
    int code = tool_open(cfg, &c);
    if (code != EXIT_OK)
        goto out;
    const target *t = &c.t;
    if (!t->has_deleted_at) {
        log_error("table %s has no deleted_at column, so it does not have the shape create-index "
                  "builds for (a unique index WHERE deleted_at IS NULL)", t->display);
        code = EXIT_USAGE;
        goto out;
    }
    if (cfg->index_name)
        buf_append_str(&in.bare, cfg->index_name);
    else
        target_default_index_name(t, &in.bare);
    identifier_clip(&in.bare);
    if (!db_append_ident(c.d, &in.quoted, buf_cstr(&in.bare)) ||
        !db_append_ident(c.d, &in.schema, t->schema)) {
        code = tool_db_failure(c.d, "cannot quote the index name");
        goto out;
    }
    buf_printf(&in.display, "%s.%s", t->schema, buf_cstr(&in.bare));

    if (t->key_index) {
        log_info("table %s already has a valid unique index on the business key: %s%s%s; "
                 "nothing to do", t->display, t->key_index->name,
                 t->key_index->predicate ? " WHERE " : " (no predicate)",
                 t->key_index->predicate ? t->key_index->predicate : "");
        goto out;
    }
    for (int i = 0; i < t->n_indexes; i++) {
        const unique_index *ix = &t->indexes[i];
        if (!ix->valid && ix->covers_key && strcmp(ix->name, buf_cstr(&in.bare)) != 0)
            log_warn("index %s.%s on the business key is INVALID too; it is not this one, so it "
                     "stays: drop it with DROP INDEX CONCURRENTLY", t->schema, ix->name);
    }

    index_state st;
    if (!read_state(c.d, t, buf_cstr(&in.bare), &st)) {
        code = tool_db_failure(c.d, "cannot look up the index");
        goto out;
    }
    if (st.exists && !st.is_index) {
        log_error("a relation named %s exists and is not an index; choose another --index-name",
                  buf_cstr(&in.display));
        code = EXIT_USAGE;
        goto out;
    }
    if (st.exists && !st.ours) {
        log_error("an index named %s exists on another table; choose another --index-name",
                  buf_cstr(&in.display));
        code = EXIT_USAGE;
        goto out;
    }
    if (st.exists && st.valid) {
        log_error("index %s exists and is valid but is not a unique index on exactly the business "
                  "key WHERE deleted_at IS NULL ('idemload check' says why); drop it or choose "
                  "another --index-name", buf_cstr(&in.display));
        code = EXIT_USAGE;
        goto out;
    }
    if (st.exists && st.building_pid) {
        log_error("index %s is being built right now by another session (pid %d); wait for it to "
                  "finish, then run 'idemload check'", buf_cstr(&in.display), st.building_pid);
        code = EXIT_FINDINGS;
        goto out;
    }

    /* Refuse while duplicates remain: the build would only fail at its end. */
    if (!tool_render(&sql, SQL_DUPLICATE_COUNT, t, NULL, NULL)) {
        log_error("out of memory");
        code = EXIT_DATABASE;
        goto out;
    }
    db_result *r = db_query(c.d, buf_cstr(&sql), 0, NULL);
    if (!r) {
        code = tool_db_failure(c.d, "cannot count duplicate keys");
        goto out;
    }
    long long dup_keys = db_int(r, 0, 0), surplus = db_int(r, 0, 1);
    db_result_free(&r);
    if (dup_keys > 0) {
        log_error("cannot build a unique index on %s: %lld duplicate active keys (%lld surplus "
                  "rows) remain; 'idemload dedupe' lists them and 'idemload dedupe --apply' "
                  "keeps the earliest row of each%s",
                  t->display, dup_keys, surplus,
                  st.exists ? "; the INVALID index left by an earlier attempt stays until then"
                            : "");
        code = EXIT_FINDINGS;
        goto out;
    }

    if (st.exists) {
        log_info("dropping the INVALID index %s left by an earlier failed build",
                 buf_cstr(&in.display));
        if (!tool_render(&sql, SQL_DROP_INDEX, t, buf_cstr(&in.schema), buf_cstr(&in.quoted)) ||
            !db_exec(c.d, buf_cstr(&sql))) {
            code = tool_db_failure(c.d, "cannot drop the INVALID index");
            goto out;
        }
    }

    if (!tool_render(&sql, SQL_CREATE_INDEX, t, NULL, buf_cstr(&in.quoted))) {
        log_error("out of memory");
        code = EXIT_DATABASE;
        goto out;
    }
    log_info("building unique index %s on %s (tenant_id, channel, out_trade_no, callback_type) "
             "WHERE deleted_at IS NULL, concurrently: writes go on meanwhile",
             buf_cstr(&in.display), t->display);
    double started = now_seconds();
    int locker = 0;
    progress_from_workers = c.t.distributed;
    if (build(cfg, c.d, buf_cstr(&sql), buf_cstr(&in.display), &locker)) {
        if (!read_state(c.d, t, buf_cstr(&in.bare), &st)) {
            code = tool_db_failure(c.d, "cannot look up the index just built");
        } else if (!st.valid) {
            log_error("index %s was built but is not valid; run 'idemload check'",
                      buf_cstr(&in.display));
            code = EXIT_DATABASE;
        } else {
            log_info("built index %s in %.1f s; %s is ready for idempotent loads",
                     buf_cstr(&in.display), now_seconds() - started, t->display);
        }
        goto out;
    }
    code = explain_failure(c.d, t, &in, locker);
    bool duplicate_arrived = strcmp(db_sqlstate(c.d), "23505") == 0;

    /* Clean up on a connection that still works: the tool's, or a new one
     * when the build's connection was lost. */
    db *cleaner = c.d;
    if (!db_ok(cleaner)) {
        buf err = BUF_INIT;
        spare = db_connect(cfg->dbname, &err);
        if (!spare)
            log_error("cannot reconnect to drop the INVALID index the build may have left: %s; "
                      "run 'idemload check'", buf_cstr(&err));
        buf_free(&err);
        cleaner = spare;
        if (spare)
            signals_set_hook(db_cancel, spare);
    }
    if (cleaner)
        drop_leftover(cleaner, t, &in);
    if (duplicate_arrived && cleaner) {
        /* Say how many duplicates there are now. */
        if (!tool_render(&count, SQL_DUPLICATE_COUNT, t, NULL, NULL) ||
            !(r = db_query(cleaner, buf_cstr(&count), 0, NULL)))
            tool_db_failure(cleaner, "cannot count duplicate keys");
        else
            log_error("%lld duplicate active keys now; run 'idemload dedupe --apply', then "
                      "create-index again", (long long)db_int(r, 0, 0));
        db_result_free(&r);
    }
out:
    db_close(&spare);
    buf_free(&in.bare);
    buf_free(&in.quoted);
    buf_free(&in.schema);
    buf_free(&in.display);
    buf_free(&sql);
    buf_free(&count);
    tool_close(&c);
    return code;
}
