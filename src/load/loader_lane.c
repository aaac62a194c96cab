/*
 * loader_lane.c - one lane of one chunk on one worker's connection (see
 * loader_impl.h): BEGIN; TRUNCATE idemload_stage; COPY; merge; [count
 * stale]; ledger row; COMMIT, with row isolation under savepoints when the
 * server refuses a row, and retries with backoff (reconnecting when the
 * connection is lost) for deadlocks, serialization failures and lost
 * connections.
 */
#include "load/loader_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load/copy_encode.h"
#include "util/exitcodes.h"
#include "output/log.h"
#include "db/sql.h"

/* Sleeps, waking early when the chunk is cancelled (signals reach only the
 * main thread, so a worker thread looks at the gate between short naps). */
static void sleep_ms(const loader *ld, long ms)
{
    while (ms > 0 && !ld_cancelled(ld)) {
        long step = ms < 50 ? ms : 50;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

void ld_clear_refused(worker *w)
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

/*
 * Classifies the error the worker's connection just returned, and keeps its
 * SQLSTATE and message on the worker: the ROLLBACK that follows a failure
 * clears the connection's own copy, and the user must still read the
 * server's words.
 */
static attempt_result classify(worker *w)
{
    const db *d = w->conn;
    snprintf(w->err_state, sizeof w->err_state, "%s", db_sqlstate(d));
    buf_clear(&w->err_msg);
    buf_append_str(&w->err_msg, db_message(d));
    if (ld_cancelled(w->ld))
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

/*
 * What a failure of the whole load most likely means, for the message that
 * stops it (SQLSTATE state); "" when there is nothing useful to add.
 */
static const char *failure_hint(const loader *ld, const char *state)
{
    if (strcmp(state, "0A000") == 0 && ld->t.distributed)
        return "; the target is a Citus distributed table, and Citus cannot run this "
               "statement on it (a trigger, rule or column default the merge would evaluate on "
               "the coordinator?): nothing was rejected, fix the cause and run the same "
               "command again";
    if (strncmp(state, "0A", 2) == 0)
        return "; the server (or a trigger, rule or extension on the table) does not support a "
               "statement idemload needs: nothing was rejected, fix the cause and run the same "
               "command again";
    if (strcmp(state, "42501") == 0)
        return "; the role needs SELECT, INSERT and UPDATE on the table, CREATE on its schema "
               "(for the ledger) and TEMP on the database";
    if (strncmp(state, "42", 2) == 0)
        return "; an object the merge or a trigger on the table needs is missing or wrong: "
               "nothing was rejected, fix it and run the same command again";
    if (strncmp(state, "53", 2) == 0)
        return "; the server is out of a resource (disk, memory, connections)";
    if (strcmp(state, "25006") == 0)
        return "; the server is read-only (a standby?)";
    return "";
}

/* COPYs the part's rows [lo, hi] into the staging table, ord = position + 1
 * (binary format: see copy_encode.h). */
static bool copy_rows(worker *w, const part *pt, size_t lo, size_t hi)
{
    db *d = w->conn;
    if (!db_copy_begin(d, w->ld->t.distributed ? buf_cstr(&w->c_copy) : SQL_COPY_STAGE))
        return false;
    buf_clear(&w->copybuf);
    if (!copy_binary_header(&w->copybuf)) {
        db_copy_end(d, "idemload: out of memory");
        return false;
    }
    for (size_t i = lo; i <= hi; i++) {
        row r;
        chunk_get(w->ld->ch, pt->idx[i], &r);
        if (!copy_binary_row(&w->copybuf, (int32_t)(i + 1), &r)) {
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
    if (!copy_binary_trailer(&w->copybuf) ||
        !db_copy_send(d, w->copybuf.data, w->copybuf.len)) {
        db_copy_end(d, "idemload: send failed");
        return false;
    }
    return db_copy_end(d, NULL);
}

/* Merges staged rows with ord in [lo+1, hi+1]; adds figures to *c. */
static bool merge_rows(worker *w, size_t lo, size_t hi, load_counts *c)
{
    loader *ld = w->ld;
    const config *cfg = ld->cfg;
    if (ld->t.distributed)
        return ld_citus_merge(w, lo, hi, c);
    char a[24], b[24];
    snprintf(a, sizeof a, "%zu", lo + 1);
    snprintf(b, sizeof b, "%zu", hi + 1);
    bool update = cfg->conflict == CONFLICT_UPDATE;
    /* $1, $2 the ords, $3 the final statuses (updating), then the --set
     * constants of other columns (target_check_columns). */
    const char *p[3 + MAX_EXTRA_SETS] = {a, b, ld->final_array};
    int np = update ? 3 : 2;
    for (size_t i = 0; i < cfg->n_extra_set; i++)
        p[np++] = cfg->extra_set[i].value;
    const buf *sql = w->probe ? &ld->merge_sql : &ld->merge_direct_sql;
    db_result *r = db_query(w->conn, buf_cstr(sql), np, p);
    if (!r)
        return false;
    uint64_t n = hi - lo + 1;
    uint64_t inserted = (uint64_t)db_int(r, 0, 0);
    uint64_t updated = (uint64_t)db_int(r, 0, 1);
    uint64_t stale = (uint64_t)db_int(r, 0, 2);
    if (!update) {
        db_result_free(&r);
        c->inserted += inserted;
        c->existing += n - inserted;
        return true;
    }
    if (!db_is_null(r, 0, 3)) {
        /* Rows sent to the INSERT but not written: those the direct merge
         * turned away, or a concurrent load got to first.  Classify them
         * now; the merge has locked their active rows, so this is exact. */
        const char *ps[] = {db_value(r, 0, 3)};
        db_result *s = db_query(w->conn, buf_cstr(&ld->stale_sql), 1, ps);
        db_result_free(&r);
        if (!s)
            return false;
        stale += (uint64_t)db_int(s, 0, 0);
        db_result_free(&s);
    } else {
        db_result_free(&r);
    }
    uint64_t unchanged = n - inserted - updated - stale;
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
        return classify(w);
    load_counts got = {0};
    if (copy_rows(w, pt, lo, hi) && merge_rows(w, lo, hi, &got)) {
        if (!db_exec(d, "RELEASE SAVEPOINT idemload_part"))
            return classify(w);
        load_counts_add(c, &got);
        return ATTEMPT_OK;
    }
    attempt_result ar = classify(w);
    if (ar != ATTEMPT_DATA)
        return ar;
    buf msg = BUF_INIT;
    buf_printf(&msg, "refused by PostgreSQL: %s (SQLSTATE %s)", db_message(d), db_sqlstate(d));
    if (!db_exec(d, "ROLLBACK TO SAVEPOINT idemload_part") ||
        !db_exec(d, "RELEASE SAVEPOINT idemload_part")) {
        buf_free(&msg);
        return classify(w);
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
    return ld_render(ld, &w->sql, SQL_LEDGER_CHUNK) &&
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
    ld_clear_refused(w);
    if (!db_exec(d, dry ? "SAVEPOINT idemload_chunk" : "BEGIN") ||
        !db_exec(d, ld->t.distributed ? buf_cstr(&w->c_truncate) : SQL_TRUNCATE_STAGE))
        return classify(w);
    attempt_result ar = ATTEMPT_OK;
    if (pt->n > 0) {
        if (isolated) {
            ar = isolate(w, pt, 0, pt->n - 1, c);
        } else if (!copy_rows(w, pt, 0, pt->n - 1) || !merge_rows(w, 0, pt->n - 1, c)) {
            ar = classify(w);
        }
    }
    if (ar == ATTEMPT_OK) {
        c->rows_rejected += w->n_refused;
        if (ld->use_ledger && !dry && !ledger_chunk(w, lane, c))
            ar = classify(w);
    }
    if (ar == ATTEMPT_OK)
        ld_arrive(ld, lane, true);
    if (ar == ATTEMPT_OK && !ld_may_commit(ld))
        ar = ATTEMPT_CANCELED;
    if (ar == ATTEMPT_OK) {
        if (db_exec(d, dry ? "RELEASE SAVEPOINT idemload_chunk" : "COMMIT"))
            return ATTEMPT_OK;
        ar = classify(w);
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
    ld_clear_refused(w);
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
        if (ld_connect_session(w, &err)) {
            buf_free(&err);
            return true;
        }
        if (++*attempts > ld->cfg->retries || ld_cancelled(ld)) {
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
int ld_load_part(worker *w, int lane)
{
    loader *ld = w->ld;
    part *pt = &ld->parts[lane];
    load_counts base = {0};
    if (lane == 0) {
        base = ld->reading;
        base.chunks = 0;
    }
    char at[64];
    ld_where(ld, ld->chunk_no, lane, at, sizeof at);
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
        const char *msg = buf_cstr(&w->err_msg), *state = w->err_state;
        switch (ar) {
        case ATTEMPT_DATA:
            if (isolated) {
                /* Refused again with every refused row left out: at
                 * COMMIT (a deferred constraint), or by the ledger. */
                log_error("%s: %s: %s (SQLSTATE %s); nothing of this chunk was loaded", ld->path,
                          at, msg, state);
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
            log_error("%s: %s: the load failed, not a row: %s (SQLSTATE %s)%s; the chunk was "
                      "rolled back, nothing rejected; last committed chunk: %llu", ld->path, at,
                      msg, state, failure_hint(ld, state),
                      (unsigned long long)ld->last_committed);
            return EXIT_DATABASE;
        default:
            break;
        }
        /* Deadlock, serialization failure or lost connection: retry. */
        if (++attempts > ld->cfg->retries || (ar == ATTEMPT_CONNECTION && ld->cfg->dry_run)) {
            log_error("%s: %s failed after %d retr%s: %s (SQLSTATE %s); last committed "
                      "chunk: %llu; run the same command again to resume after it",
                      ld->path, at, attempts - 1, attempts - 1 == 1 ? "y" : "ies", msg, state,
                      (unsigned long long)ld->last_committed);
            return EXIT_DATABASE;
        }
        log_warn("%s: %s: %s (SQLSTATE %s); retry %d of %d in %.1f s", ld->path, at, msg,
                 state, attempts, ld->cfg->retries,
                 (double)backoff / 1000.0);
        sleep_ms(ld, backoff + rand() % 100);
        backoff = next_backoff(backoff);
        if (ld_cancelled(ld))
            return EXIT_INTERRUPTED;
        if (ar == ATTEMPT_CONNECTION || !db_ok(w->conn)) {
            if (!reconnect(w, at, &attempts, &backoff))
                return ld_cancelled(ld) ? EXIT_INTERRUPTED : EXIT_DATABASE;
            if (ld->use_ledger) {
                if (w->no == 0 && !ld_file_lock(ld))
                    continue;
                load_counts done = {0};
                if (ld_lane_figures(ld, w->conn, &w->sql, ld->chunk_no, lane, &done)) {
                    /* The commit happened; only its acknowledgement was lost.
                     * The refused rows are those of that same attempt. */
                    pt->counts = done;
                    return write_refused(w);
                }
            }
        }
    }
}
