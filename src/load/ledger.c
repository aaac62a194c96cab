/*
 * ledger.c - the ledger of an import (see ledger.h): every statement on
 * idemload_ledger and idemload_ledger_chunk, the file's advisory lock, and
 * the comparison of an entry with the table it was written for.
 */
#include "load/ledger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/sql.h"
#include "load/params.h"
#include "output/log.h"
#include "output/text_escape.h"
#include "util/exitcodes.h"

static const char *const template_names[] = {"ledger", "ledger_chunk", "lane", "lanes",
                                             "table_oid", "table_storage", "params"};

/* A ledger statement with the ledger's names filled in ({lane}, {lanes},
 * {table_oid} and {table_storage} are the columns, or constants when a dry
 * run reads a ledger written before they existed). */
static bool render(const ledger *lg, buf *out, const char *tmpl)
{
    const bool *has = lg->version.has;
    const char *vals[] = {buf_cstr(&lg->names.file),
                          buf_cstr(&lg->names.chunk),
                          has[LEDGER_LANES] ? "lane" : "0",
                          has[LEDGER_LANES] ? "lanes" : "1",
                          has[LEDGER_IDENTITY] ? "table_oid" : "NULL::oid",
                          has[LEDGER_IDENTITY] ? "table_storage" : "NULL::text",
                          has[LEDGER_PARAMS] ? "params" : "NULL::text"};
    buf_clear(out);
    return sql_render(out, tmpl, (int)(sizeof vals / sizeof vals[0]), template_names, vals);
}

/* Renders a ledger statement into the scratch buffer and runs it on d
 * (NULL on error). */
static db_result *ledger_query(ledger *lg, db *d, const char *tmpl, int n, const char *const *p)
{
    return render(lg, &lg->sql, tmpl) ? db_query(d, buf_cstr(&lg->sql), n, p) : NULL;
}

/* The statements the lanes run, rendered once for the ledger's version. */
static bool render_lane_statements(ledger *lg)
{
    return render(lg, &lg->chunk_sql, SQL_LEDGER_CHUNK) &&
           render(lg, &lg->lane_figures_sql, SQL_LEDGER_LANE_FIGURES);
}

bool ledger_open(ledger *lg, db *d, const char *schema, const char *target,
                 const char *table_quoted, bool dry_run, bool force, bool supersede)
{
    lg->supersede = supersede;
    lg->target = target;
    lg->table_quoted = table_quoted;
    lg->dry_run = dry_run;
    lg->force = force;
    lg->lanes = 1;
    if (!ledger_names_of(&lg->names, d, schema)) {
        log_error("out of memory");
        db_set_out_of_memory(d);    /* its status then is the client's: 3 */
        return false;
    }
    if (gethostname(lg->host, sizeof lg->host - 1) != 0 || !lg->host[0])
        snprintf(lg->host, sizeof lg->host, "unknown");
    snprintf(lg->pid, sizeof lg->pid, "%ld", (long)getpid());
    if (!ledger_version_read(&lg->names, d, &lg->version)) {
        log_error("cannot look for the ledger: %s", db_message(d));
        return false;
    }
    if (!render_lane_statements(lg)) {
        log_error("out of memory");
        db_set_out_of_memory(d);
        return false;
    }
    return true;
}

void ledger_free(ledger *lg)
{
    ledger_names_free(&lg->names);
    buf_free(&lg->chunk_sql);
    buf_free(&lg->lane_figures_sql);
    buf_free(&lg->sql);
    buf_free(&lg->table_storage);
    buf_free(&lg->prior_xids);
}

/* When the server said 42501 (insufficient privilege): what the loading
 * role needs on the ledger, as "; ..." for a message, in *out (else
 * nothing); creating: CREATE on the schema, or the tables made by another. */
static void grant_hint(const ledger *lg, const db *d, bool creating, buf *out)
{
    if (strcmp(db_sqlstate(d), "42501") != 0)
        return;
    buf_printf(out,
               "; the loading role needs %sGRANT SELECT, INSERT, UPDATE, DELETE ON %s, %s TO it",
               creating ? "CREATE on the schema once (GRANT CREATE ON SCHEMA ... TO it), or a "
                          "role that has it runs one import first and then: "
                        : "",
               buf_cstr(&lg->names.file), buf_cstr(&lg->names.chunk));
}

/* What a migration changes for the user, said once when it runs (after
 * "ledger NAME: "), or NULL. */
static const char *migration_note(ledger_migration m)
{
    switch (m) {
    case LEDGER_IDENTITY:
        return "now records the identity of the table of each file; "
               "files it held before are loaded once more";
    case LEDGER_PARAMS:
        return "now records the parameters that shape each file's rows; "
               "files it held before are loaded once more (with the same parameters "
               "that writes nothing)";
    default:
        return NULL;
    }
}

/* Creates the ledger, or migrates one written by an earlier version in
 * place: each migration it has not had, in the list's order
 * (ledger_schema.h), in the transaction that creates it. */
static bool ensure_ledger(ledger *lg, db *d)
{
    if (ledger_version_current(&lg->version))
        return true;
    buf *sql = &lg->sql;
    bool ok = render(lg, sql, SQL_LEDGER_CREATE) && db_begin(d) && db_exec(d, buf_cstr(sql));
    ledger_version now;
    ok = ok && ledger_version_read(&lg->names, d, &now);
    for (int m = 0; ok && m < LEDGER_N_MIGRATIONS; m++) {
        if (now.has[m])
            continue;
        ok = render(lg, sql, ledger_migration_sql((ledger_migration)m)) &&
             db_exec(d, buf_cstr(sql));
        const char *note = migration_note((ledger_migration)m);
        if (ok && note)
            log_info("ledger %s: %s", buf_cstr(&lg->names.file), note);
    }
    if (!ok || !db_commit(d)) {
        buf hint = BUF_INIT;
        grant_hint(lg, d, true, &hint);
        log_error("cannot create the ledger %s: %s (SQLSTATE %s)%s", buf_cstr(&lg->names.file),
                  db_message(d), db_sqlstate(d), buf_cstr(&hint));
        buf_free(&hint);
        db_rollback(d);
        return false;
    }
    lg->version.exists = true;
    for (int m = 0; m < LEDGER_N_MIGRATIONS; m++)
        lg->version.has[m] = true;
    if (!render_lane_statements(lg)) {
        log_error("out of memory");
        db_set_out_of_memory(d);
        return false;
    }
    return true;
}

/* Reads what identifies the target's contents now (SQL_TABLE_IDENTITY):
 * its oid into oid, its storage into *storage; both "" when the table is
 * gone.  False on a database error. */
static bool table_identity(const ledger *lg, db *d, char *oid, size_t oid_size, buf *storage)
{
    const char *p[] = {lg->table_quoted};
    db_result *r = db_query(d, SQL_TABLE_IDENTITY, 1, p);
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

/* The file's entry as SQL_LEDGER_LOOKUP reads it. */
typedef struct entry {
    bool known, completed, committed_any;
    uint64_t chunks, chunk_rows;
    int64_t lanes;
    identity_match match;
    char old_oid[24];
    bool params_known;      /* the entry records its parameters */
    bool params_same;       /* ... and they are this run's */
    char params_changed[400];   /* what differs (params_diff), for the summary */
} entry;

/* Why an entry that no longer matches the table does not hold: the
 * sentence of the summary, into plan->reload_reason. */
static void explain_mismatch(const ledger *lg, file_plan *plan, const entry *e, bool partitioned)
{
    const char *what = lg->dry_run ? "would be loaded" : "is loaded";
    char was[160];
    if (e->completed)
        snprintf(was, sizeof was, "the ledger holds it as completed");
    else
        snprintf(was, sizeof was, "an earlier run committed %llu chunk%s of it",
                 (unsigned long long)e->chunks, e->chunks == 1 ? "" : "s");
    const char *again = e->completed ? "again" : "from the start";
    switch (e->match) {
    case IDENTITY_RECREATED:
        snprintf(plan->reload_reason, sizeof plan->reload_reason,
                 "%s into table %s with oid %s, but that table was dropped since (%s now has "
                 "oid %s), so it %s %s", was, lg->target, e->old_oid, lg->target, lg->table_oid,
                 what, again);
        break;
    case IDENTITY_REWRITTEN:
        snprintf(plan->reload_reason, sizeof plan->reload_reason,
                 "%s, but table %s was truncated or rewritten since (%s: TRUNCATE, VACUUM FULL "
                 "or CLUSTER), so it %s %s; rows still there stay unchanged",
                 was, lg->target,
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

/* Why an entry of the same table but other row-shaping parameters (or
 * none recorded) does not hold: the sentence of the summary. */
static void explain_params(const ledger *lg, file_plan *plan, const entry *e)
{
    const char *what = lg->dry_run ? "would be loaded" : "is loaded";
    char was[160];
    if (e->completed)
        snprintf(was, sizeof was, "the ledger holds it as completed");
    else
        snprintf(was, sizeof was, "an earlier run committed %llu chunk%s of it",
                 (unsigned long long)e->chunks, e->chunks == 1 ? "" : "s");
    const char *again = e->completed ? "again" : "from the start";
    if (e->params_known)
        snprintf(plan->reload_reason, sizeof plan->reload_reason,
                 "%s, but with other parameters that shape its rows: %s; so it %s %s (rows "
                 "that load left newer than this one's stay, as stale: --supersede replaces "
                 "them)", was, e->params_changed, what, again);
    else
        snprintf(plan->reload_reason, sizeof plan->reload_reason,
                 "%s, but that entry does not record the parameters that shaped its rows (an "
                 "older idemload wrote it), so to be safe it %s %s; with the same parameters "
                 "that writes nothing", was, what, again);
}

/* Who the ledger says loads the file: " (host H, process P, ...)", or "". */
static void holder_of(ledger *lg, db *d, char *out, size_t size)
{
    out[0] = '\0';
    if (!lg->version.has[LEDGER_LOADER])
        return;
    const char *p[] = {lg->target, lg->file.digest};
    db_result *r = ledger_query(lg, d, SQL_LEDGER_HOLDER, 2, p);
    if (r && db_nrows(r) > 0 && !db_is_null(r, 0, 0))
        snprintf(out, size, " (host %s, process %s, as the ledger says)", db_value(r, 0, 0),
                 db_is_null(r, 0, 1) ? "?" : db_value(r, 0, 1));
    db_result_free(&r);
}

/* The file's advisory lock on d.  wait: until the process holding it lets
 * go; otherwise *busy says another process holds it (nothing taken). */
static bool file_lock(ledger *lg, db *d, bool wait, bool *busy)
{
    const char *p[] = {lg->target, lg->file.digest};
    *busy = false;
    db_result *r = db_query(d, SQL_FILE_LOCK_TRY, 2, p);
    if (!r)
        return false;
    bool got = strcmp(db_value(r, 0, 0), "t") == 0;
    db_result_free(&r);
    if (!got) {
        char who[400];
        holder_of(lg, d, who, sizeof who);
        if (!wait) {
            log_info("%s: another idemload process%s is loading this file into %s; going on "
                     "with the next file, and back to this one at the end",
                     lg->file.path, who, lg->target);
            *busy = true;
            return true;
        }
        log_info("%s: another idemload process%s is loading this file into %s; waiting for it",
                 lg->file.path, who, lg->target);
        r = db_query(d, SQL_FILE_LOCK, 2, p);
        if (!r)
            return false;
        db_result_free(&r);
    }
    lg->locked = true;
    return true;
}

bool ledger_file_lock(ledger *lg, db *d)
{
    bool busy;
    return file_lock(lg, d, true, &busy);
}

static void file_unlock(ledger *lg, db *d)
{
    if (!lg->locked || !d || !db_ok(d))
        return;
    const char *p[] = {lg->target, lg->file.digest};
    db_result *r = db_query(d, SQL_FILE_UNLOCK, 2, p);
    db_result_free(&r);
    lg->locked = false;
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

static bool ledger_sums(ledger *lg, db *d, uint64_t upto, load_counts *c)
{
    char upto_s[24];
    snprintf(upto_s, sizeof upto_s, "%llu", (unsigned long long)upto);
    const char *p[] = {lg->target, lg->file.digest, upto_s};
    db_result *r = ledger_query(lg, d, SQL_LEDGER_SUMS, 3, p);
    if (!r)
        return false;
    read_figures(r, c);
    c->chunks = (uint64_t)db_int(r, 0, 8);
    db_result_free(&r);
    return true;
}

bool ledger_lane_figures(const ledger *lg, db *d, uint64_t chunk_no, int lane, load_counts *c)
{
    char chunk_s[24], lane_s[16];
    snprintf(chunk_s, sizeof chunk_s, "%llu", (unsigned long long)chunk_no);
    snprintf(lane_s, sizeof lane_s, "%d", lane);
    const char *p[] = {lg->target, lg->file.digest, chunk_s, lane_s};
    db_result *r = db_query(d, buf_cstr(&lg->lane_figures_sql), 4, p);
    if (!r)
        return false;
    bool found = db_nrows(r) > 0;
    if (found)
        read_figures(r, c);
    db_result_free(&r);
    return found;
}

/* Is every piece of the storage the file started with still there?  A
 * table's storage must be the same; a partitioned table's may have gained
 * partitions (attaching one loses no row), but each leaf it had, with its
 * storage, must remain. */
static bool storage_kept(const char *was, const char *now)
{
    static const char parts[] = "partitions:";
    size_t np = sizeof parts - 1;
    if (strncmp(was, parts, np) != 0 || strncmp(now, parts, np) != 0)
        return strcmp(was, now) == 0;
    for (const char *p = was + np; *p;) {
        size_t len = strcspn(p, ",");
        bool found = false;
        for (const char *q = now + np; *q && !found;) {
            size_t qlen = strcspn(q, ",");
            found = qlen == len && strncmp(p, q, len) == 0;
            q += qlen + (q[qlen] == ',');
        }
        if (!found)
            return false;
        p += len + (p[len] == ',');
    }
    return true;
}

bool ledger_table_kept(const ledger *lg, db *d, bool *kept)
{
    *kept = true;
    if (!lg->use || !lg->table_oid[0])
        return true;
    char oid[24];
    buf storage = BUF_INIT;
    bool ok = table_identity(lg, d, oid, sizeof oid, &storage);
    if (ok)
        *kept = strcmp(oid, lg->table_oid) == 0 &&
                storage_kept(buf_cstr(&lg->table_storage), buf_cstr(&storage));
    buf_free(&storage);
    return ok;
}

bool ledger_chunk_row(const ledger *lg, db *lane_conn, uint64_t chunk_no, int lane,
                      const load_counts *c, const char *changes, const char *xids)
{
    char v[10][24];
    snprintf(v[0], 24, "%llu", (unsigned long long)chunk_no);
    snprintf(v[1], 24, "%d", lane);
    snprintf(v[2], 24, "%llu", (unsigned long long)c->rows_read);
    snprintf(v[3], 24, "%llu", (unsigned long long)c->rows_rejected);
    snprintf(v[4], 24, "%llu", (unsigned long long)c->rows_deduplicated);
    snprintf(v[5], 24, "%llu", (unsigned long long)c->inserted);
    snprintf(v[6], 24, "%llu", (unsigned long long)c->updated);
    snprintf(v[7], 24, "%llu", (unsigned long long)c->unchanged);
    snprintf(v[8], 24, "%llu", (unsigned long long)c->stale);
    snprintf(v[9], 24, "%llu", (unsigned long long)c->existing);
    const char *p[] = {lg->target, lg->file.digest, v[0], v[1], v[2], v[3], v[4], v[5],
                       v[6], v[7], v[8], v[9], changes, xids && *xids ? xids : "{}"};
    return db_exec_params(lane_conn, buf_cstr(&lg->chunk_sql), 14, p);
}

bool ledger_chunk_changes(ledger *lg, db *d, uint64_t chunk_no, buf *out, int *without)
{
    char chunk_s[24];
    snprintf(chunk_s, sizeof chunk_s, "%llu", (unsigned long long)chunk_no);
    const char *p[] = {lg->target, lg->file.digest, chunk_s};
    buf_clear(out);
    *without = 0;
    if (!lg->version.has[LEDGER_CHANGES]) {
        *without = 1;
        return true;
    }
    db_result *r = ledger_query(lg, d, SQL_LEDGER_CHANGES, 3, p);
    if (!r)
        return false;
    bool ok = true;
    for (int i = 0; i < db_nrows(r) && ok; i++) {
        if (db_is_null(r, i, 1))
            ++*without;
        else
            ok = buf_append_str(out, db_value(r, i, 1));
    }
    db_result_free(&r);
    if (!ok)
        db_set_out_of_memory(d);
    return ok;
}

/* How far each lane of an earlier run got: fills lg->lane_done. */
static bool read_lanes(ledger *lg, db *d, int lanes)
{
    memset(lg->lane_done, 0, sizeof lg->lane_done);
    const char *p[] = {lg->target, lg->file.digest};
    db_result *r = ledger_query(lg, d, SQL_LEDGER_LANES, 2, p);
    if (!r)
        return false;
    for (int i = 0; i < db_nrows(r); i++) {
        int64_t lane = db_int(r, i, 0);
        if (lane >= 0 && lane < lanes)
            lg->lane_done[lane] = (uint64_t)db_int(r, i, 1);
    }
    db_result_free(&r);
    return true;
}

static int ledger_failed(const ledger *lg, db *d, const char *what)
{
    buf hint = BUF_INIT;
    grant_hint(lg, d, false, &hint);
    log_error("%s: %s: %s (SQLSTATE %s)%s", lg->file.path, what, db_message(d), db_sqlstate(d),
              buf_cstr(&hint));
    buf_free(&hint);
    return db_failure_exit(d);
}

/* Reads the file's entry into *e (the table's identity must be read
 * first).  False on a database error. */
static bool lookup_entry(ledger *lg, db *d, entry *e)
{
    memset(e, 0, sizeof *e);
    e->match = IDENTITY_SAME;
    const char *p[] = {lg->target, lg->file.digest};
    db_result *r = ledger_query(lg, d, SQL_LEDGER_LOOKUP, 2, p);
    if (!r)
        return false;
    e->known = db_nrows(r) > 0;
    if (e->known) {
        e->completed = strcmp(db_value(r, 0, 0), "completed") == 0;
        e->chunks = (uint64_t)db_int(r, 0, 1);
        e->chunk_rows = (uint64_t)db_int(r, 0, 2);
        e->lanes = db_int(r, 0, 3);
        e->match = compare_identity(db_is_null(r, 0, 4) ? NULL : db_value(r, 0, 4),
                                    db_is_null(r, 0, 5) ? NULL : db_value(r, 0, 5),
                                    lg->table_oid, buf_cstr(&lg->table_storage));
        snprintf(e->old_oid, sizeof e->old_oid, "%s",
                 db_is_null(r, 0, 4) ? "" : db_value(r, 0, 4));
        e->committed_any = db_int(r, 0, 6) > 0;
        e->params_known = !db_is_null(r, 0, 7);
        e->params_same = e->params_known && lg->file.params &&
                         strcmp(db_value(r, 0, 7), lg->file.params) == 0;
        if (e->params_known && !e->params_same && lg->file.params) {
            buf diff = BUF_INIT;
            if (!params_diff(db_value(r, 0, 7), lg->file.params, &diff)) {
                buf_free(&diff);
                db_result_free(&r);
                db_set_out_of_memory(d);
                return false;
            }
            snprintf(e->params_changed, sizeof e->params_changed, "%s", buf_cstr(&diff));
            buf_free(&diff);
        }
    }
    db_result_free(&r);
    return true;
}

/*
 * Resumes an unfinished entry of the same table and split: the lanes the
 * earlier run committed, with its figures.  *resumed false when there is
 * nothing to resume; returns an exit code.
 */
static int plan_resume(ledger *lg, db *d, const entry *e, int connections, file_plan *plan,
                       bool *resumed)
{
    *resumed = false;
    if (!read_lanes(lg, d, (int)e->lanes))
        return ledger_failed(lg, d, "cannot read the ledger");
    /* A lane the split left without rows writes no row (loader.c,
     * partition), so a lane's last row may be chunks behind.  The chunks
     * before the last one any lane committed are whole (a chunk's lanes
     * all end before the next chunk starts, and a lane that fails ends the
     * file); the last one is whole when every lane committed it, else it
     * is loaded again, its committed lanes taken from the ledger and its
     * empty ones found empty again. */
    uint64_t any = 0;
    for (int i = 0; i < e->lanes; i++)
        any = lg->lane_done[i] > any ? lg->lane_done[i] : any;
    if (any == 0)
        return EXIT_OK;
    uint64_t all = any;
    for (int i = 0; i < e->lanes; i++)
        if (lg->lane_done[i] < any)
            all = any - 1;
    /* Resume with the earlier run's lanes: a lane it committed must not be
     * loaded again under another split. */
    *resumed = true;
    lg->lanes = (int)e->lanes;
    plan->resume_after = all;
    plan->next_partial = any > all;
    lg->last_committed = all;
    if (!ledger_sums(lg, d, all, &plan->previous))
        return ledger_failed(lg, d, "cannot read the ledger");
    const char *pc[] = {lg->target, lg->file.digest, lg->host, lg->pid};
    if (!lg->dry_run && (!render(lg, &lg->sql, SQL_LEDGER_CLAIM) ||
                         !db_exec_params(d, buf_cstr(&lg->sql), 4, pc)))
        return ledger_failed(lg, d, "cannot record this process in the ledger");
    if (lg->lanes != connections)
        log_info("%s: resuming with the %d lane%s of the earlier run over %d connection%s",
                 lg->file.path, lg->lanes, lg->lanes == 1 ? "" : "s", connections,
                 connections == 1 ? "" : "s");
    return EXIT_OK;
}

/*
 * Before the entry is started again with other parameters, its chunks'
 * transactions join its prior ones (SQL_LEDGER_KEEP_PRIOR); with
 * --supersede, reads them for the lanes (ledger_prior_xids).  An exit
 * code.
 */
static int prepare_supersede(ledger *lg, db *d, const entry *e)
{
    buf_clear(&lg->prior_xids);
    const char *p[] = {lg->target, lg->file.digest};
    if (!lg->dry_run && e->known && !e->params_same &&
        (!render(lg, &lg->sql, SQL_LEDGER_KEEP_PRIOR) ||
         !db_exec_params(d, buf_cstr(&lg->sql), 2, p)))
        return ledger_failed(lg, d, "cannot record the earlier load in the ledger");
    if (!lg->supersede)
        return EXIT_OK;
    db_result *r = e->known ? ledger_query(lg, d, SQL_LEDGER_PRIOR, 2, p) : NULL;
    if (e->known && !r)
        return ledger_failed(lg, d, "cannot read the ledger");
    if (r && db_nrows(r) > 0 && strcmp(db_value(r, 0, 0), "{}") != 0)
        buf_append_str(&lg->prior_xids, db_value(r, 0, 0));
    db_result_free(&r);
    if (!lg->prior_xids.len)
        log_warn("%s: --supersede: the ledger holds no earlier load of this file under other "
                 "parameters (or one from before idemload recorded its transactions), so "
                 "nothing is superseded: the file loads as without it", lg->file.path);
    return EXIT_OK;
}

const char *ledger_prior_xids(const ledger *lg)
{
    return lg->supersede && lg->prior_xids.len ? buf_cstr(&lg->prior_xids) : NULL;
}

/* Starts (or restarts from zero) the file's entry. */
static int record_start(ledger *lg, db *d, size_t chunk_rows)
{
    char size_s[24], rows_s[24], lanes_s[16];
    snprintf(size_s, sizeof size_s, "%lld", (long long)lg->file.size);
    snprintf(rows_s, sizeof rows_s, "%zu", chunk_rows);
    snprintf(lanes_s, sizeof lanes_s, "%d", lg->lanes);
    /* A table gone since the loader opened: NULL, never a match; the load
     * fails on the table anyway. */
    /* A file name is any bytes; the column is text: one that is not UTF-8
     * (or holds control characters) is recorded escaped, never a 22021. */
    buf name = BUF_INIT;
    if (!text_escape_term(&name, lg->file.path, strlen(lg->file.path))) {
        buf_free(&name);
        log_error("%s: out of memory recording the file in the ledger", lg->file.path);
        return EXIT_INPUT; /* the client out of memory: exit 3 */
    }
    /* Escaped, the name keeps its bytes beside it (SPEC.md "Hostile
     * input": "and its bytes in base64"). */
    size_t raw_len = strlen(lg->file.path);
    bool escaped = name.len != raw_len || memcmp(name.data, lg->file.path, raw_len) != 0;
    buf bytes = BUF_INIT;
    if (escaped && !text_base64(&bytes, lg->file.path, raw_len)) {
        buf_free(&name);
        buf_free(&bytes);
        log_error("%s: out of memory recording the file in the ledger", lg->file.path);
        return EXIT_INPUT;
    }
    const char *ps[] = {lg->target, lg->file.digest, size_s, buf_cstr(&name), rows_s, lanes_s,
                        lg->table_oid[0] ? lg->table_oid : NULL,
                        lg->table_oid[0] ? buf_cstr(&lg->table_storage) : NULL,
                        lg->host, lg->pid, lg->file.params, escaped ? buf_cstr(&bytes) : NULL};
    bool ok = render(lg, &lg->sql, SQL_LEDGER_START) &&
              db_exec_params(d, buf_cstr(&lg->sql), 12, ps);
    buf_free(&name);
    buf_free(&bytes);
    if (!ok)
        return ledger_failed(lg, d, "cannot record the file in the ledger");
    return EXIT_OK;
}

/* Prepares the current file: false when the ledger has nothing to say
 * about it (a stream, or a dry run without a ledger); *code set on error. */
static bool start_file(ledger *lg, db *d, const file_identity *id, int connections, bool wait,
                       file_plan *plan, int *code)
{
    memset(lg->lane_done, 0, sizeof lg->lane_done);
    lg->file = *id;
    lg->content_sha256[0] = '\0';
    lg->last_committed = 0;
    lg->lanes = connections;
    lg->use = id->digest[0] != '\0';
    *code = EXIT_OK;
    if (!lg->use) {
        log_info("%s: read from a stream, so the ledger cannot recognise it: no skip or resume",
                 id->path);
        return false;
    }
    if (lg->dry_run && lg->version.exists && !lg->version.readable) {
        /* A role that may only read the target (SPEC.md: a dry run needs
         * no write right): the figures against the table as it is. */
        if (!lg->unreadable_said)
            log_warn("this role may not read the ledger %s: the dry run cannot tell whether "
                     "a file was loaded before (it would be skipped) or would resume; its "
                     "figures are those of loading each file in whole into the table as it is",
                     buf_cstr(&lg->names.file));
        lg->unreadable_said = true;
        plan->ledger_unknown = true;
        return false;
    }
    if (lg->dry_run)
        return lg->version.exists;      /* read the ledger if there is one; write nothing */
    if (!ensure_ledger(lg, d)) {
        *code = db_failure_exit(d);
        return false;
    }
    if (!file_lock(lg, d, wait, &plan->busy)) {
        *code = ledger_failed(lg, d, "ledger");
        return false;
    }
    return !plan->busy;
}

int ledger_begin_file(ledger *lg, db *d, const file_identity *id, size_t chunk_rows,
                      int connections, bool wait, file_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    int code;
    if (!start_file(lg, d, id, connections, wait, plan, &code))
        return code;
    /* The table's identity now, before the entry is read: a TRUNCATE
     * after this point makes the entry mismatch at the next run at the
     * latest (see SQL_TABLE_IDENTITY). */
    if (!table_identity(lg, d, lg->table_oid, sizeof lg->table_oid, &lg->table_storage))
        return ledger_failed(lg, d, "cannot read the identity of the table");
    entry e;
    if (!lookup_entry(lg, d, &e))
        return ledger_failed(lg, d, "cannot read the ledger");
    bool partitioned = strncmp(buf_cstr(&lg->table_storage), "partitions:", 11) == 0;
    code = prepare_supersede(lg, d, &e);
    if (code != EXIT_OK)
        return code;
    if (e.completed && !lg->force && !lg->supersede) {
        if (e.match == IDENTITY_SAME && e.params_same) {
            plan->skip = true;
            if (!ledger_sums(lg, d, UINT32_MAX, &plan->previous))
                return ledger_failed(lg, d, "cannot read the ledger");
            return EXIT_OK;
        }
        /* A wrong skip would lose the file; a needless load writes nothing. */
        if (e.match != IDENTITY_SAME)
            explain_mismatch(lg, plan, &e, partitioned);
        else
            explain_params(lg, plan, &e);
    }
    if (e.known && !e.completed && e.match != IDENTITY_SAME && e.committed_any)
        explain_mismatch(lg, plan, &e, partitioned);
    else if (e.known && !e.completed && !e.params_same && e.committed_any)
        explain_params(lg, plan, &e);
    /* Resume only what was loaded into this table with these parameters. */
    if (e.known && !e.completed && e.match == IDENTITY_SAME && e.params_same &&
        e.chunk_rows == chunk_rows && e.lanes >= 1 && e.lanes <= MAX_LANES) {
        bool resumed;
        code = plan_resume(lg, d, &e, connections, plan, &resumed);
        if (code != EXIT_OK || resumed)
            return code;
    }
    memset(lg->lane_done, 0, sizeof lg->lane_done);
    if (e.known && !e.completed && e.match == IDENTITY_SAME && e.params_same && e.chunks > 0 &&
        e.chunk_rows != chunk_rows)
        log_info("%s: an earlier run committed %llu chunks of %llu rows; --chunk-rows is now "
                 "%zu, so the file is loaded from the start (the merge is idempotent)",
                 id->path, (unsigned long long)e.chunks, (unsigned long long)e.chunk_rows,
                 chunk_rows);
    if (lg->dry_run)
        return EXIT_OK;
    return record_start(lg, d, chunk_rows);
}

bool ledger_in_use(const ledger *lg)
{
    return lg->use;
}

int ledger_lanes(const ledger *lg)
{
    return lg->lanes;
}

uint64_t ledger_lane_done(const ledger *lg, int lane)
{
    return lg->lane_done[lane];
}

void ledger_chunk_done(ledger *lg, uint64_t chunk_no)
{
    lg->last_committed = chunk_no;
    for (int lane = 0; lane < lg->lanes; lane++)
        lg->lane_done[lane] = chunk_no;
}

uint64_t ledger_last_committed(const ledger *lg)
{
    return lg->last_committed;
}

/* A TRUNCATE (or a rewrite, or DROP) by another session while the file
 * loaded may have taken rows of its earlier chunks with it: the file is not
 * completed (SPEC.md, "Crash safety"), and its entry keeps the identity it
 * was started for, so the next run loads it again from the start.  EXIT_OK
 * when the table is the one the file started with. */
static int fail_if_table_changed(const ledger *lg, db *d)
{
    bool kept;
    if (!ledger_table_kept(lg, d, &kept))
        return ledger_failed(lg, d, "cannot read the identity of the table");
    if (kept)
        return EXIT_OK;
    log_error("%s: table %s was truncated, rewritten or dropped by another session while this "
              "file loaded, so rows of its earlier chunks may be gone; the file is not "
              "completed: run the same command again to load it from the start",
              lg->file.path, lg->target);
    return EXIT_DATABASE;
}

void ledger_set_content_digest(ledger *lg, const char *hex)
{
    snprintf(lg->content_sha256, sizeof lg->content_sha256, "%s", hex ? hex : "");
}

int ledger_end_file(ledger *lg, db *d, bool complete)
{
    int code = EXIT_OK;
    if (lg->use && complete && !lg->dry_run && d && db_ok(d)) {
        code = fail_if_table_changed(lg, d);
        char chunks_s[24];
        snprintf(chunks_s, sizeof chunks_s, "%llu", (unsigned long long)lg->last_committed);
        const char *p[] = {lg->target, lg->file.digest, chunks_s,
                           lg->content_sha256[0] ? lg->content_sha256 : NULL};
        bool rendered = code == EXIT_OK && render(lg, &lg->sql, SQL_LEDGER_COMPLETE);
        if (code == EXIT_OK && !rendered)
            db_set_out_of_memory(d);
        if (code == EXIT_OK && (!rendered || !db_exec_params(d, buf_cstr(&lg->sql), 4, p))) {
            log_error("%s: cannot mark the file completed in the ledger: %s", lg->file.path,
                      db_message(d));
            code = db_failure_exit(d);
        }
    } else if (lg->use && !lg->dry_run && d && db_ok(d) && lg->locked) {
        /* Unfinished: an entry nothing of which committed goes (a failure
         * to delete it only leaves an entry that resumes from chunk 0). */
        const char *p[] = {lg->target, lg->file.digest};
        if (!render(lg, &lg->sql, SQL_LEDGER_FORGET) ||
            !db_exec_params(d, buf_cstr(&lg->sql), 2, p))
            log_warn("%s: cannot remove the file's empty ledger entry: %s", lg->file.path,
                     db_message(d));
    }
    file_unlock(lg, d);
    lg->use = false;
    return code;
}
