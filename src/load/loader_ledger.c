/*
 * loader_ledger.c - the ledger of an import (see loader_impl.h): the
 * file's row and advisory lock, how far each lane of an earlier run got,
 * and the figures it committed.  Runs on connection 0, between chunks
 * (ld_lane_figures also on a worker's own connection after a reconnect).
 */
#include "load/loader_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/exitcodes.h"
#include "output/log.h"
#include "db/sql.h"

db *ld_control(loader *ld)
{
    return ld->workers[0].conn;
}

/* Creates the ledger, or migrates one written by an earlier version in
 * place: lane columns (before lanes), the table's identity (before
 * identity was recorded). */
static bool ensure_ledger(loader *ld)
{
    if (ld->ledger_exists && ld->ledger_lanes && ld->ledger_identity && ld->ledger_loader)
        return true;
    db *d = ld_control(ld);
    buf *sql = &ld->workers[0].sql;
    bool ok = ld_render(ld, sql, SQL_LEDGER_CREATE) && db_exec(d, "BEGIN") &&
              db_exec(d, buf_cstr(sql));
    if (ok) {
        const char *p[] = {buf_cstr(&ld->ledger_chunk_name), buf_cstr(&ld->ledger_name)};
        db_result *r = db_query(d, SQL_LEDGER_EXISTS, 2, p);
        ok = r != NULL;
        bool has_lanes = ok && strcmp(db_value(r, 0, 1), "t") == 0;
        bool has_identity = ok && strcmp(db_value(r, 0, 2), "t") == 0;
        bool has_loader = ok && strcmp(db_value(r, 0, 3), "t") == 0;
        db_result_free(&r);
        if (ok && !has_lanes)
            ok = ld_render(ld, sql, SQL_LEDGER_ADD_LANES) && db_exec(d, buf_cstr(sql));
        if (ok && !has_identity) {
            ok = ld_render(ld, sql, SQL_LEDGER_ADD_IDENTITY) && db_exec(d, buf_cstr(sql));
            if (ok)
                log_info("ledger %s: now records the identity of the table of each file; "
                         "files it held before are loaded once more", buf_cstr(&ld->ledger_name));
        }
        if (ok && !has_loader)
            ok = ld_render(ld, sql, SQL_LEDGER_ADD_LOADER) && db_exec(d, buf_cstr(sql));
    }
    if (!ok || !db_exec(d, "COMMIT")) {
        log_error("cannot create the ledger %s: %s (SQLSTATE %s)", buf_cstr(&ld->ledger_name),
                  db_message(d), db_sqlstate(d));
        db_exec(d, "ROLLBACK");
        return false;
    }
    ld->ledger_exists = true;
    ld->ledger_lanes = true;
    ld->ledger_identity = true;
    ld->ledger_loader = true;
    return true;
}

/* Reads what identifies the target's contents now (SQL_TABLE_IDENTITY):
 * its oid into oid, its storage into *storage; both "" when the table is
 * gone.  False on a database error. */
static bool table_identity(loader *ld, char *oid, size_t oid_size, buf *storage)
{
    const char *p[] = {ld->t.quoted};
    db_result *r = db_query(ld_control(ld), SQL_TABLE_IDENTITY, 1, p);
    if (!r)
        return false;
    bool found = db_nrows(r) > 0 && !db_is_null(r, 0, 1);
    snprintf(oid, oid_size, "%s", found ? db_value(r, 0, 0) : "");
    buf_clear(storage);
    buf_append_str(storage, found ? db_value(r, 0, 1) : "");
    db_result_free(&r);
    return true;
}

/* How a ledger entry's table compares with the target now. */
typedef enum identity_match {
    IDENTITY_SAME,
    IDENTITY_UNKNOWN,   /* the entry has none (an older idemload wrote it) */
    IDENTITY_RECREATED, /* another oid: dropped and created again */
    IDENTITY_REWRITTEN  /* other storage: truncated, or rewritten */
} identity_match;

static identity_match compare_identity(const char *old_oid, const char *old_storage,
                                       const char *oid, const char *storage)
{
    if (!old_oid || !old_storage || !*oid)
        return IDENTITY_UNKNOWN;
    if (strcmp(old_oid, oid) != 0)
        return IDENTITY_RECREATED;
    return strcmp(old_storage, storage) == 0 ? IDENTITY_SAME : IDENTITY_REWRITTEN;
}

/* Why an entry that no longer matches the table does not hold: the
 * sentence of the summary, into plan->reload_reason. */
static void explain_mismatch(loader *ld, file_plan *plan, identity_match m, bool completed,
                             uint64_t chunks, const char *old_oid, bool partitioned)
{
    const char *what = ld->cfg->dry_run ? "would be loaded" : "is loaded";
    char was[160];
    if (completed)
        snprintf(was, sizeof was, "the ledger holds it as completed");
    else
        snprintf(was, sizeof was, "an earlier run committed %llu chunk%s of it",
                 (unsigned long long)chunks, chunks == 1 ? "" : "s");
    const char *again = completed ? "again" : "from the start";
    switch (m) {
    case IDENTITY_RECREATED:
        snprintf(plan->reload_reason, sizeof plan->reload_reason,
                 "%s into table %s with oid %s, but that table was dropped since (%s now has "
                 "oid %s), so it %s %s", was, ld->t.display, old_oid, ld->t.display, ld->table_oid,
                 what, again);
        break;
    case IDENTITY_REWRITTEN:
        snprintf(plan->reload_reason, sizeof plan->reload_reason,
                 "%s, but table %s was truncated or rewritten since (%s: TRUNCATE, VACUUM FULL "
                 "or CLUSTER), so it %s %s; rows still there stay unchanged",
                 was, ld->t.display,
                 partitioned ? "its partitions changed" : "its storage changed",
                 what, again);
        break;
    default:
        snprintf(plan->reload_reason, sizeof plan->reload_reason,
                 "%s, but by an idemload that did not record which table it loaded (an "
                 "older ledger), so to be safe it %s %s; rows still there stay unchanged",
                 was, what, again);
        break;
    }
}

/* Who the ledger says loads the file: " (host H, process P)", or "". */
static void holder_of(loader *ld, char *out, size_t size)
{
    out[0] = '\0';
    if (!ld->ledger_loader)
        return;
    buf *sql = &ld->workers[0].sql;
    buf_clear(sql);
    buf_printf(sql, "SELECT loader_host, loader_pid FROM %s WHERE target = $1 AND digest = $2",
               buf_cstr(&ld->ledger_name));
    const char *p[] = {ld->t.display, ld->file.digest};
    db_result *r = db_query(ld_control(ld), buf_cstr(sql), 2, p);
    if (r && db_nrows(r) > 0 && !db_is_null(r, 0, 0))
        snprintf(out, size, " (host %s, process %s, as the ledger says)", db_value(r, 0, 0),
                 db_is_null(r, 0, 1) ? "?" : db_value(r, 0, 1));
    db_result_free(&r);
}

/* The file's advisory lock, on connection 0.  wait: until the process
 * holding it lets go; otherwise *busy says it is held elsewhere. */
static bool file_lock(loader *ld, bool wait, bool *busy)
{
    db *d = ld_control(ld);
    const char *p[] = {ld->t.display, ld->file.digest};
    *busy = false;
    db_result *r = db_query(d, SQL_FILE_LOCK_TRY, 2, p);
    if (!r)
        return false;
    bool got = strcmp(db_value(r, 0, 0), "t") == 0;
    db_result_free(&r);
    if (!got) {
        char who[400];
        holder_of(ld, who, sizeof who);
        if (!wait) {
            log_info("%s: another idemload process%s is loading this file into %s; going on "
                     "with the next file, and back to this one at the end",
                     ld->file.path, who, ld->t.display);
            *busy = true;
            return true;
        }
        log_info("%s: another idemload process%s is loading this file into %s; waiting for it",
                 ld->file.path, who, ld->t.display);
        r = db_query(d, SQL_FILE_LOCK, 2, p);
        if (!r)
            return false;
        db_result_free(&r);
    }
    ld->locked = true;
    return true;
}

/* (Called again by worker 0 after it reconnects: the file is this
 * process's, so it waits.) */
bool ld_file_lock(loader *ld)
{
    bool busy;
    return file_lock(ld, true, &busy);
}

static void file_unlock(loader *ld)
{
    db *d = ld_control(ld);
    if (!ld->locked || !d || !db_ok(d))
        return;
    const char *p[] = {ld->t.display, ld->file.digest};
    db_result *r = db_query(d, SQL_FILE_UNLOCK, 2, p);
    db_result_free(&r);
    ld->locked = false;
}

/* The eight figures of a ledger row, in the column order of SQL_LEDGER_*. */
static void read_figures(const db_result *r, load_counts *c)
{
    c->rows_read = (uint64_t)db_int(r, 0, 0);
    c->rows_rejected = (uint64_t)db_int(r, 0, 1);
    c->rows_deduplicated = (uint64_t)db_int(r, 0, 2);
    c->inserted = (uint64_t)db_int(r, 0, 3);
    c->updated = (uint64_t)db_int(r, 0, 4);
    c->unchanged = (uint64_t)db_int(r, 0, 5);
    c->stale = (uint64_t)db_int(r, 0, 6);
    c->existing = (uint64_t)db_int(r, 0, 7);
}

/* Renders a ledger statement into sql and runs it on d (NULL on error). */
static db_result *ledger_query(loader *ld, db *d, buf *sql, const char *tmpl, int n,
                               const char *const *p)
{
    return ld_render(ld, sql, tmpl) ? db_query(d, buf_cstr(sql), n, p) : NULL;
}

static bool ledger_sums(loader *ld, uint64_t upto, load_counts *c)
{
    char upto_s[24];
    snprintf(upto_s, sizeof upto_s, "%llu", (unsigned long long)upto);
    const char *p[] = {ld->t.display, ld->file.digest, upto_s};
    db_result *r = ledger_query(ld, ld_control(ld), &ld->workers[0].sql, SQL_LEDGER_SUMS, 3, p);
    if (!r)
        return false;
    read_figures(r, c);
    c->chunks = (uint64_t)db_int(r, 0, 8);
    db_result_free(&r);
    return true;
}

/* The figures a lane of a chunk committed, from connection d; false when
 * that lane has no ledger row (or the query failed: see db_ok). */
bool ld_lane_figures(loader *ld, db *d, buf *sql, uint64_t chunk_no, int lane, load_counts *c)
{
    char chunk_s[24], lane_s[16];
    snprintf(chunk_s, sizeof chunk_s, "%llu", (unsigned long long)chunk_no);
    snprintf(lane_s, sizeof lane_s, "%d", lane);
    const char *p[] = {ld->t.display, ld->file.digest, chunk_s, lane_s};
    db_result *r = ledger_query(ld, d, sql, SQL_LEDGER_LANE_FIGURES, 4, p);
    if (!r)
        return false;
    bool found = db_nrows(r) > 0;
    if (found)
        read_figures(r, c);
    db_result_free(&r);
    return found;
}

/* How far each lane of an earlier run got: fills ld->lane_done. */
static bool read_lanes(loader *ld, int lanes)
{
    memset(ld->lane_done, 0, sizeof ld->lane_done);
    const char *p[] = {ld->t.display, ld->file.digest};
    db_result *r = ledger_query(ld, ld_control(ld), &ld->workers[0].sql, SQL_LEDGER_LANES, 2, p);
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
    log_error("%s: %s: %s (SQLSTATE %s)", ld->file.path, what, db_message(ld_control(ld)),
              db_sqlstate(ld_control(ld)));
    return EXIT_DATABASE;
}

int loader_begin_file(loader *ld, const file_identity *id, size_t chunk_rows, bool wait,
                      file_plan *plan)
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
        if (!file_lock(ld, wait, &plan->busy))
            return ledger_failed(ld, "ledger");
        if (plan->busy)
            return EXIT_OK;
    }
    /* The table's identity now, before the entry is read: a TRUNCATE
     * after this point makes the entry mismatch at the next run at the
     * latest (see SQL_TABLE_IDENTITY). */
    if (!table_identity(ld, ld->table_oid, sizeof ld->table_oid, &ld->table_storage))
        return ledger_failed(ld, "cannot read the identity of the table");
    buf *sql = &ld->workers[0].sql;
    const char *p[] = {ld->t.display, id->digest};
    db_result *r = ledger_query(ld, ld_control(ld), sql, SQL_LEDGER_LOOKUP, 2, p);
    if (!r)
        return ledger_failed(ld, "cannot read the ledger");
    bool known = db_nrows(r) > 0;
    bool completed = known && strcmp(db_value(r, 0, 0), "completed") == 0;
    uint64_t chunks = known ? (uint64_t)db_int(r, 0, 1) : 0;
    uint64_t prev_rows = known ? (uint64_t)db_int(r, 0, 2) : 0;
    int64_t prev_lanes = known ? db_int(r, 0, 3) : 0;
    identity_match match = IDENTITY_SAME;
    char old_oid[24] = "";
    if (known) {
        match = compare_identity(db_is_null(r, 0, 4) ? NULL : db_value(r, 0, 4),
                                 db_is_null(r, 0, 5) ? NULL : db_value(r, 0, 5), ld->table_oid,
                                 buf_cstr(&ld->table_storage));
        snprintf(old_oid, sizeof old_oid, "%s", db_is_null(r, 0, 4) ? "" : db_value(r, 0, 4));
    }
    bool committed_any = known && db_int(r, 0, 6) > 0;
    db_result_free(&r);
    bool partitioned = strncmp(buf_cstr(&ld->table_storage), "partitions:", 11) == 0;

    if (completed && !ld->cfg->force) {
        if (match == IDENTITY_SAME) {
            plan->skip = true;
            if (!ledger_sums(ld, UINT32_MAX, &plan->previous))
                return ledger_failed(ld, "cannot read the ledger");
            return EXIT_OK;
        }
        /* A wrong skip would lose the file; a needless load writes nothing. */
        explain_mismatch(ld, plan, match, true, chunks, old_oid, partitioned);
    }
    if (known && !completed && match != IDENTITY_SAME && committed_any)
        explain_mismatch(ld, plan, match, false, chunks, old_oid, partitioned);
    if (known && !completed && match == IDENTITY_SAME && prev_rows == chunk_rows &&
        prev_lanes >= 1 && prev_lanes <= MAX_LANES) {
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
            const char *pc[] = {ld->t.display, id->digest, ld->host, ld->pid};
            if (!ld->cfg->dry_run && (!ld_render(ld, sql, SQL_LEDGER_CLAIM) ||
                                      !db_exec_params(ld_control(ld), buf_cstr(sql), 4, pc)))
                return ledger_failed(ld, "cannot record this process in the ledger");
            if (ld->lanes != ld->n_workers)
                log_info("%s: resuming with the %d lane%s of the earlier run over %d "
                         "connection%s", id->path, ld->lanes, ld->lanes == 1 ? "" : "s",
                         ld->n_workers, ld->n_workers == 1 ? "" : "s");
            return EXIT_OK;
        }
    }
    memset(ld->lane_done, 0, sizeof ld->lane_done);
    if (known && !completed && match == IDENTITY_SAME && chunks > 0 && prev_rows != chunk_rows)
        log_info("%s: an earlier run committed %llu chunks of %llu rows; --chunk-rows is now "
                 "%zu, so the file is loaded from the start (the merge is idempotent)",
                 id->path, (unsigned long long)chunks, (unsigned long long)prev_rows, chunk_rows);
    if (ld->cfg->dry_run)
        return EXIT_OK;
    char size_s[24], rows_s[24], lanes_s[16];
    snprintf(size_s, sizeof size_s, "%lld", (long long)id->size);
    snprintf(rows_s, sizeof rows_s, "%zu", chunk_rows);
    snprintf(lanes_s, sizeof lanes_s, "%d", ld->lanes);
    /* A table gone since loader_open: NULL, never a match; the load fails
     * on the table anyway. */
    const char *ps[] = {ld->t.display, id->digest, size_s, id->path, rows_s, lanes_s,
                        ld->table_oid[0] ? ld->table_oid : NULL,
                        ld->table_oid[0] ? buf_cstr(&ld->table_storage) : NULL,
                        ld->host, ld->pid};
    if (!ld_render(ld, sql, SQL_LEDGER_START) ||
        !db_exec_params(ld_control(ld), buf_cstr(sql), 10, ps))
        return ledger_failed(ld, "cannot record the file in the ledger");
    return EXIT_OK;
}

/* A TRUNCATE (or a rewrite, or DROP) while the file loaded may have taken
 * its earlier chunks with it.  The entry keeps the identity the file was
 * started for, so the next run loads it again; say so now. */
static void warn_if_table_changed(loader *ld)
{
    char oid[24];
    buf storage = BUF_INIT;
    if (table_identity(ld, oid, sizeof oid, &storage) &&
        compare_identity(ld->table_oid, buf_cstr(&ld->table_storage), oid,
                         buf_cstr(&storage)) != IDENTITY_SAME)
        log_warn("%s: table %s was truncated, rewritten or dropped while this file loaded, so "
                 "rows of its earlier chunks may be gone; the next run loads it again",
                 ld->file.path, ld->t.display);
    buf_free(&storage);
}

int loader_end_file(loader *ld, bool complete, const load_counts *totals)
{
    (void)totals;
    int code = EXIT_OK;
    db *d = ld_control(ld);
    if (ld->use_ledger && complete && !ld->cfg->dry_run && d && db_ok(d)) {
        warn_if_table_changed(ld);
        char chunks_s[24];
        snprintf(chunks_s, sizeof chunks_s, "%llu", (unsigned long long)ld->last_committed);
        const char *p[] = {ld->t.display, ld->file.digest, chunks_s};
        buf *sql = &ld->workers[0].sql;
        if (!ld_render(ld, sql, SQL_LEDGER_COMPLETE) || !db_exec_params(d, buf_cstr(sql), 3, p)) {
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
    db *d = ld_control(ld);
    if (ld->in_run_txn && d && db_ok(d)) {
        if (!db_exec(d, "ROLLBACK")) {
            log_error("dry run: cannot roll back: %s", db_message(d));
            return EXIT_DATABASE;
        }
        ld->in_run_txn = false;
    }
    return EXIT_OK;
}
