/*
 * loader.c - chunks into PostgreSQL (see loader.h).
 *
 * One chunk is one transaction on one connection:
 *   BEGIN; TRUNCATE idemload_stage; COPY; merge; [count stale];
 *   ledger row; COMMIT.
 * In a dry run the whole run is one transaction, each chunk a savepoint,
 * rolled back at the end, so later chunks see what earlier ones would do.
 *
 * When the server refuses something (a data error) the chunk is redone in
 * isolation: ranges of rows, each under a savepoint, halved on failure
 * until the single refused row is found and rejected with the server's
 * message; the other rows load.  Lost connections, deadlocks and
 * serialization failures redo the chunk, up to --retries times.
 */
#include "loader.h"

#include <errno.h>
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

/* Outcome of one attempt at a chunk. */
typedef enum attempt_result {
    ATTEMPT_OK,
    ATTEMPT_DATA,       /* the server refused a row: isolate */
    ATTEMPT_RETRY,      /* deadlock or serialization failure */
    ATTEMPT_CONNECTION, /* connection lost */
    ATTEMPT_CANCELED,   /* interrupted */
    ATTEMPT_FAILED      /* anything else: give up */
} attempt_result;

/* A row the server refused, kept until its chunk commits. */
typedef struct refused {
    size_t index;
    char *message;
} refused;

struct loader {
    const config *cfg;
    db *conn;
    target t;
    buf merge_sql;          /* the probing merge */
    buf merge_direct_sql;   /* the merge without the probe */
    bool probe;             /* next chunk: probe first (keys tend to exist) */
    buf stale_sql;
    buf ledger_name;        /* quoted, schema-qualified */
    buf ledger_chunk_name;
    buf sql;                /* scratch */
    buf copybuf;
    char final_array[16 * MAX_FINAL_STATUSES];
    bool ledger_exists;
    bool in_run_txn;        /* dry run: the one transaction is open */
    /* the current file */
    file_identity file;
    bool use_ledger;
    bool locked;
    uint64_t last_committed;
    /* rows refused in the chunk being loaded */
    refused *refused;
    size_t n_refused, cap_refused;
};

static const char *const tmpl_names[] = {"table", "conflict", "active", "ledger", "ledger_chunk",
                                         "do_update"};

static bool render(loader *ld, buf *out, const char *tmpl)
{
    const char *vals[] = {ld->t.quoted, ld->t.conflict, ld->t.active, buf_cstr(&ld->ledger_name),
                          buf_cstr(&ld->ledger_chunk_name), buf_cstr(&ld->sql)};
    buf_clear(out);
    return sql_render(out, tmpl, 6, tmpl_names, vals);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !signals_interrupted())
        ;
}

static void clear_refused(loader *ld)
{
    for (size_t i = 0; i < ld->n_refused; i++)
        free(ld->refused[i].message);
    ld->n_refused = 0;
}

static bool add_refused(loader *ld, size_t index, const char *msg)
{
    if (ld->n_refused == ld->cap_refused) {
        size_t cap = ld->cap_refused ? ld->cap_refused * 2 : 8;
        refused *p = realloc(ld->refused, cap * sizeof *p);
        if (!p)
            return false;
        ld->refused = p;
        ld->cap_refused = cap;
    }
    ld->refused[ld->n_refused].index = index;
    ld->refused[ld->n_refused].message = strdup(msg);
    ld->n_refused++;
    return true;
}

static attempt_result classify(const db *d)
{
    if (signals_interrupted())
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

/* Session setup after (re)connecting: the staging table, and in a dry run
 * the run's transaction. */
static bool prepare_session(loader *ld)
{
    if (ld->cfg->dry_run) {
        if (!db_exec(ld->conn, "BEGIN"))
            return false;
        ld->in_run_txn = true;
    }
    return db_exec(ld->conn, SQL_SESSION_SETTINGS) && db_exec(ld->conn, SQL_CREATE_STAGE);
}

static bool connect_session(loader *ld, buf *err)
{
    signals_set_hook(NULL, NULL);
    db_close(&ld->conn);
    ld->conn = db_connect(ld->cfg->dbname, err);
    if (!ld->conn)
        return false;
    signals_set_hook(db_cancel, ld->conn);
    if (!prepare_session(ld)) {
        buf_printf(err, "cannot prepare the session: %s (SQLSTATE %s)", db_message(ld->conn),
                   db_sqlstate(ld->conn));
        return false;
    }
    return true;
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
    ld->conn = db_connect(cfg->dbname, &err);
    if (!ld->conn) {
        log_error("%s", buf_cstr(&err));
        *code = EXIT_DATABASE;
        goto fail;
    }
    bool missing;
    if (!target_resolve(ld->conn, cfg->table, &ld->t, &missing, &err)) {
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

    buf_append_str(&ld->ledger_name, "");
    db_append_ident(ld->conn, &ld->ledger_name, ld->t.schema);
    buf_append_str(&ld->ledger_name, ".idemload_ledger");
    db_append_ident(ld->conn, &ld->ledger_chunk_name, ld->t.schema);
    buf_append_str(&ld->ledger_chunk_name, ".idemload_ledger_chunk");
    /* The conflict action goes in as {do_update} (via ld->sql). */
    bool update = cfg->conflict == CONFLICT_UPDATE;
    buf action = BUF_INIT;
    bool rendered = render(ld, &action, update ? SQL_CONFLICT_UPDATE : SQL_CONFLICT_NOTHING);
    buf_clear(&ld->sql);
    buf_append_str(&ld->sql, buf_cstr(&action));
    buf_free(&action);
    rendered = rendered && render(ld, &ld->merge_sql, SQL_MERGE_PROBE) &&
               render(ld, &ld->merge_direct_sql, SQL_MERGE_DIRECT) &&
               render(ld, &ld->stale_sql, SQL_COUNT_STALE);
    buf_clear(&ld->sql);
    /* DO NOTHING never writes an existing row: nothing for a probe to save. */
    ld->probe = update;
    if (!rendered) {
        log_error("out of memory");
        *code = EXIT_DATABASE;
        goto fail;
    }
    const char *p[] = {buf_cstr(&ld->ledger_chunk_name)};
    db_result *r = db_query(ld->conn, SQL_LEDGER_EXISTS, 1, p);
    if (!r) {
        log_error("cannot look for the ledger: %s", db_message(ld->conn));
        *code = EXIT_DATABASE;
        goto fail;
    }
    ld->ledger_exists = strcmp(db_value(r, 0, 0), "t") == 0;
    db_result_free(&r);
    if (!prepare_session(ld)) {
        log_error("cannot prepare the session on %s: %s (SQLSTATE %s)", db_describe(ld->conn),
                  db_message(ld->conn), db_sqlstate(ld->conn));
        *code = EXIT_DATABASE;
        goto fail;
    }
    signals_set_hook(db_cancel, ld->conn);
    log_info("loading into %s on %s (conflict target %s)%s", ld->t.display,
             db_describe(ld->conn), ld->t.conflict, cfg->dry_run ? ", dry run" : "");
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
    db_close(&ld->conn);
    target_free(&ld->t);
    buf_free(&ld->merge_sql);
    buf_free(&ld->merge_direct_sql);
    buf_free(&ld->stale_sql);
    buf_free(&ld->ledger_name);
    buf_free(&ld->ledger_chunk_name);
    buf_free(&ld->sql);
    buf_free(&ld->copybuf);
    clear_refused(ld);
    free(ld->refused);
    free(ld);
    *ldp = NULL;
}

uint64_t loader_last_committed(const loader *ld)
{
    return ld->last_committed;
}

/* ---- the ledger ---- */

static bool ensure_ledger(loader *ld)
{
    if (ld->ledger_exists)
        return true;
    if (!render(ld, &ld->sql, SQL_LEDGER_CREATE))
        return false;
    if (!db_exec(ld->conn, "BEGIN") || !db_exec(ld->conn, buf_cstr(&ld->sql)) ||
        !db_exec(ld->conn, "COMMIT")) {
        log_error("cannot create the ledger %s: %s (SQLSTATE %s)", buf_cstr(&ld->ledger_name),
                  db_message(ld->conn), db_sqlstate(ld->conn));
        db_exec(ld->conn, "ROLLBACK");
        return false;
    }
    ld->ledger_exists = true;
    return true;
}

static bool file_lock(loader *ld)
{
    const char *p[] = {ld->t.display, ld->file.digest};
    db_result *r = db_query(ld->conn, SQL_FILE_LOCK_TRY, 2, p);
    if (!r)
        return false;
    bool got = strcmp(db_value(r, 0, 0), "t") == 0;
    db_result_free(&r);
    if (!got) {
        log_info("%s: another idemload process is loading this file into %s; waiting for it",
                 ld->file.path, ld->t.display);
        r = db_query(ld->conn, SQL_FILE_LOCK, 2, p);
        if (!r)
            return false;
        db_result_free(&r);
    }
    ld->locked = true;
    return true;
}

static void file_unlock(loader *ld)
{
    if (!ld->locked || !ld->conn || !db_ok(ld->conn))
        return;
    const char *p[] = {ld->t.display, ld->file.digest};
    db_result *r = db_query(ld->conn, SQL_FILE_UNLOCK, 2, p);
    db_result_free(&r);
    ld->locked = false;
}

static bool ledger_sums(loader *ld, uint64_t upto, load_counts *c)
{
    char upto_s[24];
    snprintf(upto_s, sizeof upto_s, "%llu", (unsigned long long)upto);
    const char *p[] = {ld->t.display, ld->file.digest, upto_s};
    if (!render(ld, &ld->sql, SQL_LEDGER_SUMS))
        return false;
    db_result *r = db_query(ld->conn, buf_cstr(&ld->sql), 3, p);
    if (!r)
        return false;
    c->rows_read = (uint64_t)db_int(r, 0, 0);
    c->rows_rejected = (uint64_t)db_int(r, 0, 1);
    c->rows_deduplicated = (uint64_t)db_int(r, 0, 2);
    c->inserted = (uint64_t)db_int(r, 0, 3);
    c->updated = (uint64_t)db_int(r, 0, 4);
    c->unchanged = (uint64_t)db_int(r, 0, 5);
    c->stale = (uint64_t)db_int(r, 0, 6);
    c->existing = (uint64_t)db_int(r, 0, 7);
    c->chunks = (uint64_t)db_int(r, 0, 8);
    db_result_free(&r);
    return true;
}

int loader_begin_file(loader *ld, const file_identity *id, size_t chunk_rows, file_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    ld->file = *id;
    ld->last_committed = 0;
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
        if (!ensure_ledger(ld) || !file_lock(ld)) {
            log_error("%s: ledger: %s (SQLSTATE %s)", id->path, db_message(ld->conn),
                      db_sqlstate(ld->conn));
            return EXIT_DATABASE;
        }
    }
    if (!render(ld, &ld->sql, SQL_LEDGER_LOOKUP))
        return EXIT_DATABASE;
    const char *p[] = {ld->t.display, id->digest};
    db_result *r = db_query(ld->conn, buf_cstr(&ld->sql), 2, p);
    if (!r) {
        log_error("%s: cannot read the ledger: %s", id->path, db_message(ld->conn));
        return EXIT_DATABASE;
    }
    bool known = db_nrows(r) > 0;
    bool completed = known && strcmp(db_value(r, 0, 0), "completed") == 0;
    uint64_t chunks = known ? (uint64_t)db_int(r, 0, 1) : 0;
    uint64_t prev_rows = known ? (uint64_t)db_int(r, 0, 2) : 0;
    db_result_free(&r);

    if (completed && !ld->cfg->force) {
        plan->skip = true;
        if (!ledger_sums(ld, UINT32_MAX, &plan->previous)) {
            log_error("%s: cannot read the ledger: %s", id->path, db_message(ld->conn));
            return EXIT_DATABASE;
        }
        return EXIT_OK;
    }
    if (known && !completed && chunks > 0 && prev_rows == chunk_rows) {
        plan->resume_after = chunks;
        if (!ledger_sums(ld, chunks, &plan->previous)) {
            log_error("%s: cannot read the ledger: %s", id->path, db_message(ld->conn));
            return EXIT_DATABASE;
        }
        ld->last_committed = chunks;
        return EXIT_OK;
    }
    if (known && !completed && chunks > 0)
        log_info("%s: an earlier run committed %llu chunks of %llu rows; --chunk-rows is now "
                 "%zu, so the file is loaded from the start (the merge is idempotent)",
                 id->path, (unsigned long long)chunks, (unsigned long long)prev_rows, chunk_rows);
    if (ld->cfg->dry_run)
        return EXIT_OK;
    char size_s[24], rows_s[24];
    snprintf(size_s, sizeof size_s, "%lld", (long long)id->size);
    snprintf(rows_s, sizeof rows_s, "%zu", chunk_rows);
    const char *ps[] = {ld->t.display, id->digest, size_s, id->path, rows_s};
    if (!render(ld, &ld->sql, SQL_LEDGER_START) ||
        !db_exec_params(ld->conn, buf_cstr(&ld->sql), 5, ps)) {
        log_error("%s: cannot record the file in the ledger: %s (SQLSTATE %s)", id->path,
                  db_message(ld->conn), db_sqlstate(ld->conn));
        return EXIT_DATABASE;
    }
    return EXIT_OK;
}

int loader_end_file(loader *ld, bool complete, const load_counts *totals)
{
    (void)totals;
    int code = EXIT_OK;
    if (ld->use_ledger && complete && !ld->cfg->dry_run && ld->conn && db_ok(ld->conn)) {
        const char *p[] = {ld->t.display, ld->file.digest};
        if (!render(ld, &ld->sql, SQL_LEDGER_COMPLETE) ||
            !db_exec_params(ld->conn, buf_cstr(&ld->sql), 2, p)) {
            log_error("%s: cannot mark the file completed in the ledger: %s", ld->file.path,
                      db_message(ld->conn));
            code = EXIT_DATABASE;
        }
    }
    file_unlock(ld);
    ld->use_ledger = false;
    return code;
}

int loader_finish(loader *ld)
{
    if (ld->in_run_txn && ld->conn && db_ok(ld->conn)) {
        if (!db_exec(ld->conn, "ROLLBACK")) {
            log_error("dry run: cannot roll back: %s", db_message(ld->conn));
            return EXIT_DATABASE;
        }
        ld->in_run_txn = false;
    }
    return EXIT_OK;
}

/* ---- one chunk ---- */

/* COPYs rows [lo, hi] of ch into the staging table, ord = index + 1. */
static bool copy_rows(loader *ld, chunk *ch, size_t lo, size_t hi)
{
    if (!db_copy_begin(ld->conn, SQL_COPY_STAGE))
        return false;
    buf_clear(&ld->copybuf);
    for (size_t i = lo; i <= hi; i++) {
        row r;
        chunk_get(ch, i, &r);
        if (!copy_encode_row(&ld->copybuf, (int)(i + 1), &r)) {
            db_copy_end(ld->conn, "idemload: out of memory");
            return false;
        }
        if (ld->copybuf.len >= (1 << 18)) {
            if (!db_copy_send(ld->conn, ld->copybuf.data, ld->copybuf.len)) {
                db_copy_end(ld->conn, "idemload: send failed");
                return false;
            }
            buf_clear(&ld->copybuf);
        }
    }
    if (ld->copybuf.len && !db_copy_send(ld->conn, ld->copybuf.data, ld->copybuf.len)) {
        db_copy_end(ld->conn, "idemload: send failed");
        return false;
    }
    return db_copy_end(ld->conn, NULL);
}

/* Merges staged rows with ord in [lo+1, hi+1]; adds figures to *c. */
static bool merge_rows(loader *ld, size_t lo, size_t hi, load_counts *c)
{
    char a[24], b[24];
    snprintf(a, sizeof a, "%zu", lo + 1);
    snprintf(b, sizeof b, "%zu", hi + 1);
    const char *p[] = {a, b, ld->final_array};
    bool update = ld->cfg->conflict == CONFLICT_UPDATE;
    const buf *sql = ld->probe ? &ld->merge_sql : &ld->merge_direct_sql;
    db_result *r = db_query(ld->conn, buf_cstr(sql), update ? 3 : 2, p);
    if (!r)
        return false;
    uint64_t n = hi - lo + 1;
    uint64_t inserted = (uint64_t)db_int(r, 0, 0);
    uint64_t updated = (uint64_t)db_int(r, 0, 1);
    int64_t stale_in = db_int(r, 0, 2), unchanged_in = db_int(r, 0, 3);
    db_result_free(&r);
    if (!update) {
        c->inserted += inserted;
        c->existing += n - inserted;
        return true;
    }
    /* -1: the direct merge leaves the rows it did not write unclassified. */
    uint64_t stale = stale_in > 0 ? (uint64_t)stale_in : 0;
    uint64_t unchanged = unchanged_in > 0 ? (uint64_t)unchanged_in : 0;
    if (inserted + updated + stale + unchanged < n) {
        /* Rows not written and not yet classified: those the direct merge
         * turned away, or a concurrent load got to first.  Classify them
         * now; the merge has locked their active rows, so this is exact. */
        r = db_query(ld->conn, buf_cstr(&ld->stale_sql), 2, p);
        if (!r)
            return false;
        stale = (uint64_t)db_int(r, 0, 0);
        db_result_free(&r);
        unchanged = n - inserted - updated - stale;
    }
    c->inserted += inserted;
    c->updated += updated;
    c->stale += stale;
    c->unchanged += unchanged;
    /* Probe first while more than a tenth of the rows meet an existing key
     * (it saves locking and writing them); for new keys the probe is a
     * wasted index descent, so a first load goes direct. */
    ld->probe = (n - inserted) * 10 > n;
    return true;
}

/*
 * Loads rows [lo, hi] under a savepoint, halving on data errors until the
 * refused rows are found.  Returns ATTEMPT_OK (refused rows recorded) or
 * the error that is not about data.
 */
static attempt_result isolate(loader *ld, chunk *ch, size_t lo, size_t hi, load_counts *c)
{
    if (!db_exec(ld->conn, "SAVEPOINT idemload_part"))
        return classify(ld->conn);
    load_counts part = {0};
    if (copy_rows(ld, ch, lo, hi) && merge_rows(ld, lo, hi, &part)) {
        if (!db_exec(ld->conn, "RELEASE SAVEPOINT idemload_part"))
            return classify(ld->conn);
        load_counts_add(c, &part);
        return ATTEMPT_OK;
    }
    attempt_result ar = classify(ld->conn);
    if (ar != ATTEMPT_DATA)
        return ar;
    buf msg = BUF_INIT;
    buf_printf(&msg, "refused by PostgreSQL: %s (SQLSTATE %s)", db_message(ld->conn),
               db_sqlstate(ld->conn));
    if (!db_exec(ld->conn, "ROLLBACK TO SAVEPOINT idemload_part") ||
        !db_exec(ld->conn, "RELEASE SAVEPOINT idemload_part")) {
        buf_free(&msg);
        return classify(ld->conn);
    }
    if (lo == hi) {
        bool ok = add_refused(ld, lo, buf_cstr(&msg));
        buf_free(&msg);
        return ok ? ATTEMPT_OK : ATTEMPT_FAILED;
    }
    buf_free(&msg);
    size_t mid = lo + (hi - lo) / 2;
    ar = isolate(ld, ch, lo, mid, c);
    if (ar != ATTEMPT_OK)
        return ar;
    return isolate(ld, ch, mid + 1, hi, c);
}

static bool ledger_chunk(loader *ld, uint64_t chunk_no, const load_counts *c)
{
    char v[11][24];
    snprintf(v[0], 24, "%llu", (unsigned long long)chunk_no);
    snprintf(v[1], 24, "%llu", (unsigned long long)c->rows_read);
    snprintf(v[2], 24, "%llu", (unsigned long long)c->rows_rejected);
    snprintf(v[3], 24, "%llu", (unsigned long long)c->rows_deduplicated);
    snprintf(v[4], 24, "%llu", (unsigned long long)c->inserted);
    snprintf(v[5], 24, "%llu", (unsigned long long)c->updated);
    snprintf(v[6], 24, "%llu", (unsigned long long)c->unchanged);
    snprintf(v[7], 24, "%llu", (unsigned long long)c->stale);
    snprintf(v[8], 24, "%llu", (unsigned long long)c->existing);
    const char *p[] = {ld->t.display, ld->file.digest, v[0], v[1], v[2], v[3], v[4],
                       v[5], v[6], v[7], v[8]};
    return render(ld, &ld->sql, SQL_LEDGER_CHUNK) &&
           db_exec_params(ld->conn, buf_cstr(&ld->sql), 11, p);
}

/* One attempt at the whole chunk.  *c receives the chunk's figures (the
 * caller's reading counts plus the merge's). */
static attempt_result attempt_chunk(loader *ld, chunk *ch, uint64_t chunk_no, bool isolated,
                                    load_counts *c)
{
    size_t n = chunk_size(ch);
    bool dry = ld->cfg->dry_run;
    clear_refused(ld);
    if (!db_exec(ld->conn, dry ? "SAVEPOINT idemload_chunk" : "BEGIN") ||
        !db_exec(ld->conn, SQL_TRUNCATE_STAGE))
        return classify(ld->conn);
    attempt_result ar = ATTEMPT_OK;
    if (n > 0) {
        if (isolated) {
            ar = isolate(ld, ch, 0, n - 1, c);
        } else if (!copy_rows(ld, ch, 0, n - 1) || !merge_rows(ld, 0, n - 1, c)) {
            ar = classify(ld->conn);
        }
    }
    if (ar == ATTEMPT_OK) {
        c->rows_rejected += ld->n_refused;
        if (ld->use_ledger && !dry && !ledger_chunk(ld, chunk_no, c))
            ar = classify(ld->conn);
    }
    if (ar == ATTEMPT_OK && signals_interrupted())
        ar = ATTEMPT_CANCELED;
    if (ar == ATTEMPT_OK) {
        if (db_exec(ld->conn, dry ? "RELEASE SAVEPOINT idemload_chunk" : "COMMIT"))
            return ATTEMPT_OK;
        ar = classify(ld->conn);
    }
    if (db_ok(ld->conn)) {
        if (dry) {
            db_exec(ld->conn, "ROLLBACK TO SAVEPOINT idemload_chunk");
            db_exec(ld->conn, "RELEASE SAVEPOINT idemload_chunk");
        } else {
            db_exec(ld->conn, "ROLLBACK");
        }
    }
    return ar;
}

/* After a reconnect: did the chunk commit before the connection broke? */
static bool chunk_in_ledger(loader *ld, uint64_t chunk_no, load_counts *c)
{
    if (!ld->use_ledger)
        return false;
    load_counts before = {0}, upto = {0};
    if (!ledger_sums(ld, chunk_no - 1, &before) || !ledger_sums(ld, chunk_no, &upto))
        return false;
    if (upto.chunks != before.chunks + 1)
        return false;
    c->inserted = upto.inserted - before.inserted;
    c->updated = upto.updated - before.updated;
    c->unchanged = upto.unchanged - before.unchanged;
    c->stale = upto.stale - before.stale;
    c->existing = upto.existing - before.existing;
    c->rows_rejected = upto.rows_rejected - before.rows_rejected;
    return true;
}

/* After a chunk committed: its refused rows go to the rejects file. */
static int write_refused(loader *ld, chunk *ch, uint64_t chunk_no, const char *file, rejects *rj)
{
    ld->last_committed = chunk_no;
    buf err = BUF_INIT;
    int code = EXIT_OK;
    for (size_t i = 0; i < ld->n_refused && code == EXIT_OK; i++) {
        row r;
        chunk_get(ch, ld->refused[i].index, &r);
        if (!rejects_write(rj, file, r.line, ld->refused[i].message, r.raw, r.raw_len, &err)) {
            log_error("%s", buf_cstr(&err));
            code = EXIT_INPUT;
        }
    }
    buf_free(&err);
    clear_refused(ld);
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
static bool reconnect(loader *ld, const char *file, int *attempts, long *backoff)
{
    buf err = BUF_INIT;
    for (;;) {
        buf_clear(&err);
        if (connect_session(ld, &err)) {
            buf_free(&err);
            return true;
        }
        if (++*attempts > ld->cfg->retries || signals_interrupted()) {
            log_error("%s: cannot reconnect: %s; last committed chunk: %llu; run the same "
                      "command again to resume after it", file, buf_cstr(&err),
                      (unsigned long long)ld->last_committed);
            buf_free(&err);
            return false;
        }
        log_warn("%s: reconnect failed: %s; retry %d of %d in %.1f s", file, buf_cstr(&err),
                 *attempts, ld->cfg->retries, (double)*backoff / 1000.0);
        sleep_ms(*backoff);
        *backoff = next_backoff(*backoff);
    }
}

int loader_load_chunk(loader *ld, chunk *ch, uint64_t chunk_no, const char *file, rejects *rj,
                      load_counts *counts)
{
    const load_counts reading = *counts;
    bool isolated = false;
    int attempts = 0;
    long backoff = 250;
    for (;;) {
        load_counts c = reading;
        attempt_result ar = attempt_chunk(ld, ch, chunk_no, isolated, &c);
        if (ar == ATTEMPT_OK) {
            *counts = c;
            return write_refused(ld, ch, chunk_no, file, rj);
        }
        switch (ar) {
        case ATTEMPT_DATA:
            if (isolated) {
                log_error("%s: chunk %llu: %s (SQLSTATE %s)", file, (unsigned long long)chunk_no,
                          db_message(ld->conn), db_sqlstate(ld->conn));
                return EXIT_DATABASE;
            }
            /* Some row is refused: find it, load the others. */
            isolated = true;
            continue;
        case ATTEMPT_CANCELED:
            log_error("%s: interrupted: chunk %llu rolled back; %llu chunks committed", file,
                      (unsigned long long)chunk_no, (unsigned long long)ld->last_committed);
            return EXIT_INTERRUPTED;
        case ATTEMPT_FAILED:
            log_error("%s: chunk %llu: %s (SQLSTATE %s)", file, (unsigned long long)chunk_no,
                      db_message(ld->conn), db_sqlstate(ld->conn));
            return EXIT_DATABASE;
        default:
            break;
        }
        /* Deadlock, serialization failure or lost connection: retry. */
        if (++attempts > ld->cfg->retries || (ar == ATTEMPT_CONNECTION && ld->cfg->dry_run)) {
            log_error("%s: chunk %llu failed after %d retr%s: %s (SQLSTATE %s); last committed "
                      "chunk: %llu; run the same command again to resume after it",
                      file, (unsigned long long)chunk_no, attempts - 1,
                      attempts - 1 == 1 ? "y" : "ies", db_message(ld->conn),
                      db_sqlstate(ld->conn), (unsigned long long)ld->last_committed);
            return EXIT_DATABASE;
        }
        log_warn("%s: chunk %llu: %s (SQLSTATE %s); retry %d of %d in %.1f s", file,
                 (unsigned long long)chunk_no, db_message(ld->conn), db_sqlstate(ld->conn),
                 attempts, ld->cfg->retries, (double)backoff / 1000.0);
        sleep_ms(backoff + rand() % 100);
        backoff = next_backoff(backoff);
        if (signals_interrupted())
            return EXIT_INTERRUPTED;
        if (ar == ATTEMPT_CONNECTION || !db_ok(ld->conn)) {
            if (!reconnect(ld, file, &attempts, &backoff))
                return signals_interrupted() ? EXIT_INTERRUPTED : EXIT_DATABASE;
            if (ld->use_ledger) {
                if (!file_lock(ld))
                    continue;
                load_counts done = reading;
                if (chunk_in_ledger(ld, chunk_no, &done)) {
                    /* The commit happened; only its acknowledgement was lost.
                     * The refused rows are those of that same attempt. */
                    *counts = done;
                    return write_refused(ld, ch, chunk_no, file, rj);
                }
            }
        }
    }
}
