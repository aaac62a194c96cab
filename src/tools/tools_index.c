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
 * survey() and build_index() gather an index_outcome (tools_facts.h);
 * index_render() logs its verdict and index_exit_status() derives the exit
 * status from it.  Only the announcements of a step about to start (the
 * drop of a leftover, the build) and the progress lines are logged as it
 * goes; a failing lookup is logged where it fails, as everywhere.
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
#include "util/clock.h"
#include "util/signals.h"
#include "db/advice.h"
#include "db/sql.h"
#include "tools/tools_distributed.h"
#include "tools/tools_facts.h"

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
        watch = db_connect(cfg->dbname, &err, NULL);
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

/* ---- gather ------------------------------------------------------------ */

void index_outcome_init(index_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->verdict = IX_FAILED;
    o->dups_now = -1;
}

void index_outcome_free(index_outcome *o)
{
    strlist_free(&o->other_invalid);
    tool_failure_free(&o->failure);
    tool_failure_free(&o->cleanup_failure);
    tool_failure_free(&o->count_failure);
    free(o->reconnect_error);
    index_outcome_init(o);
}

/* The index's names from --index-name or the default.  EXIT_OK or the
 * failure's status, logged. */
static int make_names(const config *cfg, tool_ctx *c, index_names *in, index_outcome *o)
{
    const target *t = &c->t;
    if (cfg->index_name)
        buf_append_str(&in->bare, cfg->index_name);
    else
        target_default_index_name(t, &in->bare);
    identifier_clip(&in->bare);
    if (!db_append_ident(c->d, &in->quoted, buf_cstr(&in->bare)) ||
        !db_append_ident(c->d, &in->schema, t->schema))
        return tool_db_failure(c->d, "cannot quote the index name");
    buf_printf(&in->display, "%s.%s", t->schema, buf_cstr(&in->bare));
    o->index = buf_cstr(&in->display);
    o->schema_sql = buf_cstr(&in->schema);
    o->index_sql = buf_cstr(&in->quoted);
    return EXIT_OK;
}

/* What the catalog holds under our name decides whether to build.  Sets
 * o->verdict; EXIT_OK or the failure's status, logged. */
static int survey_name(tool_ctx *c, const index_names *in, index_outcome *o)
{
    index_state st;
    if (!read_state(c->d, &c->t, buf_cstr(&in->bare), &st))
        return tool_db_failure(c->d, "cannot look up the index");
    o->leftover = st.exists;
    o->building_pid = st.building_pid;
    if (st.exists && !st.is_index)
        o->verdict = IX_NOT_AN_INDEX;
    else if (st.exists && !st.ours)
        o->verdict = IX_OTHER_TABLE;
    else if (st.exists && st.valid)
        o->verdict = IX_VALID_OTHER;
    else if (st.exists && st.building_pid)
        o->verdict = IX_BEING_BUILT;
    else
        o->verdict = IX_TO_BUILD;
    return EXIT_OK;
}

/* Duplicate active keys (SQL_DUPLICATE_COUNT) into *keys, *surplus.
 * False: the failure is on d. */
static bool count_duplicates(db *d, const target *t, long long *keys, long long *surplus)
{
    buf sql = BUF_INIT;
    db_result *r = NULL;
    if (!tool_render(&sql, SQL_DUPLICATE_COUNT, t, NULL, NULL))
        db_set_out_of_memory(d);
    else
        r = db_query(d, buf_cstr(&sql), 0, NULL);
    buf_free(&sql);
    if (!r)
        return false;
    *keys = db_int(r, 0, 0);
    *surplus = db_int(r, 0, 1);
    db_result_free(&r);
    return true;
}

/* Everything create-index must know before building: the shape, the
 * names, a usable index already there, other INVALID ones, what holds our
 * name, duplicates.  Sets o->verdict (IX_TO_BUILD: go on); EXIT_OK or the
 * failure's status, logged. */
static int survey(const config *cfg, tool_ctx *c, index_names *in, index_outcome *o)
{
    const target *t = &c->t;
    o->table = t->display;
    o->schema = t->schema;
    if (!t->has_deleted_at) {
        o->verdict = IX_NO_DELETED_AT;
        return EXIT_OK;
    }
    int code = make_names(cfg, c, in, o);
    if (code != EXIT_OK)
        return code;
    if (t->key_index) {
        o->verdict = IX_ALREADY;
        o->existing = t->key_index->name;
        o->existing_predicate = t->key_index->predicate;
        return EXIT_OK;
    }
    for (int i = 0; i < t->n_indexes; i++) {
        const unique_index *ix = &t->indexes[i];
        if (!ix->valid && ix->covers_key && strcmp(ix->name, buf_cstr(&in->bare)) != 0)
            strlist_add(&o->other_invalid, ix->name);
    }
    if ((code = survey_name(c, in, o)) != EXIT_OK || o->verdict != IX_TO_BUILD)
        return code;
    /* Refuse while duplicates remain: the build would only fail at its end. */
    if (!count_duplicates(c->d, t, &o->dup_keys, &o->surplus))
        return tool_db_failure(c->d, "cannot count duplicate keys");
    if (o->dup_keys > 0)
        o->verdict = IX_DUPLICATES;
    return EXIT_OK;
}

/* After a failed build: drops the INVALID index it left, if it is still
 * there and nobody is building it, on a connection that still works (the
 * tool's, or a new one when the build's was lost); then, when a duplicate
 * arrived during the build, counts the duplicates now. */
static void clean_up(const config *cfg, tool_ctx *c, const index_names *in, index_outcome *o,
                     db **spare)
{
    const target *t = &c->t;
    db *cleaner = c->d;
    if (!db_ok(cleaner)) {
        buf err = BUF_INIT;
        if (!(*spare = db_connect(cfg->dbname, &err, NULL))) {
            o->cleanup = CLEANUP_NO_CONNECTION;
            o->reconnect_error = strdup(buf_cstr(&err));
        }
        buf_free(&err);
        if (!*spare)
            return;
        cleaner = *spare;
        signals_set_hook(db_cancel, cleaner);
    }
    index_state st;
    buf sql = BUF_INIT;
    if (!read_state(cleaner, t, buf_cstr(&in->bare), &st)) {
        o->cleanup = CLEANUP_LOOKUP_FAILED;
        tool_failure_capture(&o->cleanup_failure, cleaner);
    } else if (st.exists && st.is_index && st.ours && !st.valid && !st.building_pid) {
        bool ok = tool_render(&sql, SQL_DROP_INDEX, t, buf_cstr(&in->schema),
                              buf_cstr(&in->quoted)) && db_exec(cleaner, buf_cstr(&sql));
        o->cleanup = ok ? CLEANUP_DROPPED : CLEANUP_DROP_FAILED;
        if (!ok)
            tool_failure_capture(&o->cleanup_failure, cleaner);
    }
    buf_free(&sql);
    long long surplus;
    if (strcmp(o->failure.sqlstate, "23505") == 0 &&
        !count_duplicates(cleaner, t, &o->dups_now, &surplus)) {
        o->dups_now = -1;
        tool_failure_capture(&o->count_failure, cleaner);
    }
}

/* Drops our leftover, builds (progress shown meanwhile), and records how
 * it went in o.  EXIT_OK or the failure's status of a step before the
 * build, logged. */
static int build_index(const config *cfg, tool_ctx *c, const index_names *in, index_outcome *o,
                       db **spare)
{
    const target *t = &c->t;
    buf sql = BUF_INIT;
    if (o->leftover) {
        log_info("dropping the INVALID index %s left by an earlier failed build", o->index);
        if (!tool_render(&sql, SQL_DROP_INDEX, t, o->schema_sql, o->index_sql) ||
            !db_exec(c->d, buf_cstr(&sql))) {
            buf_free(&sql);
            return tool_db_failure(c->d, "cannot drop the INVALID index");
        }
    }
    if (!tool_render(&sql, SQL_CREATE_INDEX, t, NULL, o->index_sql)) {
        buf_free(&sql);
        db_set_out_of_memory(c->d);
        return tool_db_failure(c->d, "cannot build the index");
    }
    log_info("building unique index %s on %s (%s) WHERE deleted_at IS NULL, concurrently: "
             "writes go on meanwhile", o->index, t->display, KEY_COLUMNS);
    double started = now_seconds();
    progress_from_workers = c->t.distributed;
    bool built = build(cfg, c->d, buf_cstr(&sql), o->index, &o->locker);
    buf_free(&sql);
    index_state st;
    if (built && !read_state(c->d, t, buf_cstr(&in->bare), &st))
        return tool_db_failure(c->d, "cannot look up the index just built");
    if (built) {
        o->verdict = st.valid ? IX_BUILT : IX_BUILT_INVALID;
        o->seconds = now_seconds() - started;
        return EXIT_OK;
    }
    o->verdict = IX_BUILD_FAILED;
    tool_failure_capture(&o->failure, c->d);
    o->connection_lost = db_error_class_of(c->d) == DBE_CONNECTION;
    o->failure_exit = db_failure_exit(c->d);
    clean_up(cfg, c, in, o, spare);
    return EXIT_OK;
}

/* ---- render ------------------------------------------------------------ */

/* SQLSTATEs of a failed build the operator can act on (exit 1), and
 * what each means; duplicate: the failure is a duplicate key, which
 * 'idemload dedupe' lists (the command is rendered with the user's
 * target). */
static const struct {
    const char *state;
    const char *why;
    bool duplicate;
} build_failures[] = {
    {"23505", "an active row with a duplicate key exists: another session wrote it while the "
              "index was being built", true},
    {"55P03", "it gave up waiting for a lock (lock_timeout): another session holds a lock on the "
              "table, or a long transaction is open; find it in pg_stat_activity and run "
              "create-index again once it ends", false},
    {"57014", "the build was canceled (statement_timeout, or pg_cancel_backend from another "
              "session)", false},
    {"40P01", "it deadlocked with another session changing the table's schema; run it again", false},
    {"42P07", "a relation of that name appeared meanwhile (another create-index?)", false},
};

/* Why the build failed, in plain words; *actionable: one of
 * build_failures (not an interrupt or a lost connection); *duplicate: a
 * duplicate key (may be NULL). */
static const char *build_failure_why(const index_outcome *o, bool *actionable, bool *duplicate)
{
    *actionable = false;
    if (duplicate)
        *duplicate = false;
    if (o->failure.interrupted)
        return "interrupted";
    if (o->connection_lost)
        return "the connection to the server was lost during the build";
    for (size_t i = 0; i < sizeof build_failures / sizeof build_failures[0]; i++)
        if (strcmp(o->failure.sqlstate, build_failures[i].state) == 0) {
            *actionable = true;
            if (duplicate)
                *duplicate = build_failures[i].duplicate;
            return build_failures[i].why;
        }
    return "the server refused it";
}

int index_exit_status(const index_outcome *o)
{
    bool actionable;
    switch (o->verdict) {
    case IX_FAILED:
        return o->code;
    case IX_ALREADY:
    case IX_BUILT:
    case IX_TO_BUILD:
        return EXIT_OK;
    case IX_NO_DELETED_AT:
    case IX_NOT_AN_INDEX:
    case IX_OTHER_TABLE:
    case IX_VALID_OTHER:
        return EXIT_USAGE;
    case IX_BEING_BUILT:
    case IX_DUPLICATES:
        return EXIT_FINDINGS;
    case IX_BUILT_INVALID:
        return EXIT_DATABASE;
    case IX_BUILD_FAILED:
        build_failure_why(o, &actionable, NULL);
        return actionable ? EXIT_FINDINGS : o->failure_exit;
    }
    return EXIT_DATABASE;
}

void index_render_warnings(const index_outcome *o)
{
    for (size_t i = 0; i < o->other_invalid.n; i++)
        log_warn("index %s.%s on the business key is INVALID too; it is not this one, so it "
                 "stays: drop it with DROP INDEX CONCURRENTLY",
                 o->schema, o->other_invalid.v[i]);
}

/* The failed build, then what became of its leftover and of the
 * duplicates. */
static void render_build_failure(const index_outcome *o)
{
    bool actionable, duplicate;
    const char *why = build_failure_why(o, &actionable, &duplicate);
    const char *args = tool_args(o->args);
    buf more = BUF_INIT;        /* what follows why */
    if (duplicate)
        buf_printf(&more, " ('idemload dedupe%s' lists such keys)", args);
    if (o->locker)
        buf_printf(&more, " (it was waiting for the transaction of pid %d)", o->locker);
    log_error("building index %s on %s failed: %s%s: %s (SQLSTATE %s)", o->index, o->table, why,
              buf_cstr(&more), o->failure.message ? o->failure.message : "",
              *o->failure.sqlstate ? o->failure.sqlstate : "none");
    buf_free(&more);
    if (o->cleanup == CLEANUP_NO_CONNECTION)
        log_error("cannot reconnect to drop the INVALID index the build may have left: %s; "
                  "run 'idemload check%s'", o->reconnect_error ? o->reconnect_error : "", args);
    else if (o->cleanup == CLEANUP_LOOKUP_FAILED)
        tool_failure_log(&o->cleanup_failure, "cannot look up the index left by the build");
    else if (o->cleanup == CLEANUP_DROPPED)
        log_info("dropped the INVALID index %s left behind by the failed build", o->index);
    else if (o->cleanup == CLEANUP_DROP_FAILED)
        log_error("cannot drop the INVALID index %s: %s (SQLSTATE %s); drop it by hand "
                  "(DROP INDEX CONCURRENTLY %s.%s) or run 'idemload create-index%s' again, "
                  "which drops it first",
                  o->index, o->cleanup_failure.message ? o->cleanup_failure.message : "",
                  o->cleanup_failure.sqlstate, o->schema_sql, o->index_sql,
                  tool_args(o->index_args));
    if (o->dups_now >= 0)
        log_error("%lld duplicate active keys now; run 'idemload dedupe --apply%s', then "
                  "create-index again", o->dups_now, args);
    else if (o->count_failure.message)
        tool_failure_log(&o->count_failure, "cannot count duplicate keys");
}

void index_render(const index_outcome *o)
{
    const char *args = tool_args(o->args);
    switch (o->verdict) {
    case IX_FAILED:
    case IX_TO_BUILD:
        break;
    case IX_NO_DELETED_AT:
        log_error("table %s has no deleted_at column, so it does not have the shape create-index "
                  "builds for (a unique index WHERE deleted_at IS NULL)", o->table);
        break;
    case IX_ALREADY:
        log_info("table %s already has a valid unique index on the business key: %s%s%s; "
                 "nothing to do", o->table, o->existing,
                 o->existing_predicate ? " WHERE " : " (no predicate)",
                 o->existing_predicate ? o->existing_predicate : "");
        break;
    case IX_NOT_AN_INDEX:
        log_error("a relation named %s exists and is not an index; choose another --index-name",
                  o->index);
        break;
    case IX_OTHER_TABLE:
        log_error("an index named %s exists on another table; choose another --index-name",
                  o->index);
        break;
    case IX_VALID_OTHER:
        log_error("index %s exists and is valid but is not a unique index on exactly the business "
                  "key WHERE deleted_at IS NULL ('idemload check%s' says why); drop it or choose "
                  "another --index-name", o->index, args);
        break;
    case IX_BEING_BUILT:
        log_error("index %s is being built right now by another session (pid %d); wait for it to "
                  "finish, then run 'idemload check%s'", o->index, o->building_pid, args);
        break;
    case IX_DUPLICATES:
        log_error("cannot build a unique index on %s: %lld duplicate active keys (%lld surplus "
                  "rows) remain; 'idemload dedupe%s' lists them and 'idemload dedupe --apply%s' "
                  "keeps the earliest row of each (a key whose later rows hold a final status "
                  "is left whole unless --include-final)%s",
                  o->table, o->dup_keys, o->surplus, args, args,
                  o->leftover ? "; the INVALID index left by an earlier attempt stays until then"
                              : "");
        break;
    case IX_BUILT:
        log_info("built index %s in %.1f s; %s is ready for idempotent loads", o->index,
                 o->seconds, o->table);
        break;
    case IX_BUILT_INVALID:
        log_error("index %s was built but is not valid; run 'idemload check%s'", o->index, args);
        break;
    case IX_BUILD_FAILED:
        render_build_failure(o);
        break;
    }
}

/* ---- the command -------------------------------------------------------- */

int tools_create_index(const config *cfg)
{
    tool_ctx c;
    index_names in = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    buf index_args = BUF_INIT;
    index_outcome o;
    db *spare = NULL;
    index_outcome_init(&o);
    int code = tool_open(cfg, &c);
    if (code == EXIT_OK && !advice_target_args(&index_args, cfg, cfg->index_name)) {
        log_error("out of memory");
        code = EXIT_INPUT;
    }
    o.args = buf_cstr(&c.args);
    o.index_args = buf_cstr(&index_args);
    if (code == EXIT_OK)
        code = survey(cfg, &c, &in, &o);
    index_render_warnings(&o);
    if (code == EXIT_OK && o.verdict == IX_TO_BUILD)
        code = build_index(cfg, &c, &in, &o, &spare);
    if (code != EXIT_OK) {
        o.verdict = IX_FAILED;
        o.code = code;
    }
    index_render(&o);
    code = index_exit_status(&o);
    index_outcome_free(&o);
    buf_free(&in.bare);
    buf_free(&in.quoted);
    buf_free(&in.schema);
    buf_free(&in.display);
    buf_free(&index_args);
    tool_close(&c); /* first: it takes the interrupt hook off spare too */
    db_close(&spare);
    return code;
}
