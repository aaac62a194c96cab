/*
 * loader_citus.c - the loader on a Citus-distributed target (SPEC.md "A
 * distributed target: Citus"; see loader_impl.h).
 *
 * Each connection stages its rows in an UNLOGGED table of its own, named
 * after its coordinator backend's pid, distributed by tenant_id and
 * colocated with the target, so every statement of the merge joins two
 * colocated tables on the distribution column and Citus runs it on the
 * workers, one task per shard (SQL_CITUS_* in sql.c says why each has its
 * shape).  One lane of one chunk:
 *   BEGIN; TRUNCATE stage; COPY stage (new_id from the id sequence);
 *   [UPDATE stage SET verdict (the probe); count the verdicts;]
 *   INSERT INTO target SELECT ... FROM stage WHERE verdict = 0
 *     ON CONFLICT ... RETURNING inserted, id;
 *   [the rows it did not write: stale or unchanged]; ledger row; COMMIT.
 * The ledger and the file locks stay on the coordinator (loader_ledger.c,
 * unchanged).  Staging tables are dropped when the loader closes; those of
 * a killed loader (their backend gone) are swept when the next one opens.
 */
#include "load/loader_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql.h"
#include "output/log.h"
#include "util/exitcodes.h"

/* Drops the staging tables of sessions that are gone.  Logs what it drops;
 * a failure is only a warning (the leftovers cost space, not correctness). */
static void sweep(loader *ld, db *d)
{
    const char *p[] = {ld->t.schema};
    db_result *r = db_query(d, SQL_CITUS_LEFTOVERS, 1, p);
    if (!r) {
        log_warn("cannot look for staging tables left by killed loaders: %s", db_message(d));
        return;
    }
    buf sql = BUF_INIT;
    for (int i = 0; i < db_nrows(r); i++) {
        buf_clear(&sql);
        buf_printf(&sql, "DROP TABLE IF EXISTS %s", db_value(r, i, 0));
        if (db_exec(d, buf_cstr(&sql)))
            log_info("dropped %s, the staging table of a loader that is gone",
                     db_value(r, i, 0));
        else
            log_warn("cannot drop %s, left by a loader that is gone: %s", db_value(r, i, 0),
                     db_message(d));
    }
    buf_free(&sql);
    db_result_free(&r);
}

int ld_citus_open(loader *ld)
{
    db *d = ld_control(ld);
    const char *p[] = {ld->t.quoted};
    db_result *r = db_query(d, SQL_CITUS_ID_SEQUENCE, 1, p);
    if (!r) {
        log_error("cannot read the id sequence of %s: %s (SQLSTATE %s)", ld->t.display,
                  db_message(d), db_sqlstate(d));
        return EXIT_DATABASE;
    }
    bool has_seq = !db_is_null(r, 0, 0);
    if (has_seq) {
        /* A literal for nextval(): the name as the catalog gives it,
         * quoted as a string. */
        buf_clear(&ld->seq_literal);
        buf_append_char(&ld->seq_literal, '\'');
        for (const char *s = db_value(r, 0, 0); *s; s++) {
            if (*s == '\'')
                buf_append_char(&ld->seq_literal, '\'');
            buf_append_char(&ld->seq_literal, *s);
        }
        buf_append_char(&ld->seq_literal, '\'');
    }
    db_result_free(&r);
    if (!has_seq) {
        log_error("table %s is distributed with Citus but has no id column filled by a "
                  "sequence (bigserial): idemload supplies the id of each inserted row from it, "
                  "so the merge runs on the workers (idemload init --distributed creates the "
                  "table so)", ld->t.display);
        return EXIT_USAGE;
    }
    sweep(ld, d);
    return EXIT_OK;
}

bool ld_citus_session(worker *w, db *d)
{
    loader *ld = w->ld;
    char name[64];
    snprintf(name, sizeof name, "idemload_stage_%d", db_backend_pid(d));
    buf_clear(&w->stage);
    if (!db_append_ident(d, &w->stage, ld->t.schema))
        return false;
    buf_append_char(&w->stage, '.');
    if (!db_append_ident(d, &w->stage, name))
        return false;
    const char *stage = buf_cstr(&w->stage);
    buf sql = BUF_INIT;
    const char *p[] = {stage, ld->t.quoted};
    bool ok = ld_render_stage(ld, &sql, SQL_CITUS_STAGE_CREATE, "", stage) &&
              db_exec(d, buf_cstr(&sql));
    db_result *r = ok ? db_query(d, SQL_CITUS_STAGE_DISTRIBUTE, 2, p) : NULL;
    ok = r != NULL;
    db_result_free(&r);
    buf_free(&sql);
    return ok && ld_render_stage(ld, &w->c_copy, SQL_CITUS_COPY, "", stage) &&
           ld_render_stage(ld, &w->c_truncate, SQL_CITUS_TRUNCATE, "", stage) &&
           ld_render_stage(ld, &w->c_verdict, SQL_CITUS_VERDICT, "", stage) &&
           ld_render_stage(ld, &w->c_verdicts, SQL_CITUS_VERDICTS, "", stage) &&
           ld_render_stage(ld, &w->c_merge, SQL_CITUS_MERGE, buf_cstr(&ld->citus_action),
                           stage) &&
           ld_render_stage(ld, &w->c_missed, SQL_CITUS_MISSED_STALE, "", stage);
}

/* Runs a statement of the merge that returns one row; NULL on failure. */
static db_result *one_row(worker *w, const buf *sql, int n, const char *const *p)
{
    return db_query(w->conn, buf_cstr(sql), n, p);
}

bool ld_citus_merge(worker *w, size_t lo, size_t hi, load_counts *c)
{
    loader *ld = w->ld;
    const config *cfg = ld->cfg;
    char a[24], b[24];
    snprintf(a, sizeof a, "%zu", lo + 1);
    snprintf(b, sizeof b, "%zu", hi + 1);
    bool update = cfg->conflict == CONFLICT_UPDATE;
    uint64_t n = hi - lo + 1;
    uint64_t stale = 0, sent = n;
    const char *pv[] = {a, b, ld->final_array};
    if (update && w->probe) {
        if (!db_exec_params(w->conn, buf_cstr(&w->c_verdict), 3, pv))
            return false;
        db_result *r = one_row(w, &w->c_verdicts, 2, pv);
        if (!r)
            return false;
        stale = (uint64_t)db_int(r, 0, 0);
        sent = (uint64_t)db_int(r, 0, 1);
        db_result_free(&r);
    }
    /* $1, $2 the ords, $3 the final statuses (updating), then the --set
     * constants (target_check_columns numbered them so). */
    const char *p[3 + MAX_EXTRA_SETS] = {a, b, ld->final_array};
    int np = update ? 3 : 2;
    for (size_t i = 0; i < cfg->n_extra_set; i++)
        p[np++] = cfg->extra_set[i].value;
    db_result *r = db_query(w->conn, buf_cstr(&w->c_merge), np, p);
    if (!r)
        return false;
    uint64_t inserted = 0, updated = 0;
    int rows = db_nrows(r);
    for (int i = 0; i < rows; i++) {
        if (strcmp(db_value(r, i, 0), "t") == 0)
            inserted++;
        else
            updated++;
    }
    if (!update) {
        db_result_free(&r);
        c->inserted += inserted;
        c->existing += n - inserted;
        return true;
    }
    if (inserted + updated < sent) {
        /* Rows sent to the INSERT but not written: the direct merge's
         * existing keys, or keys a concurrent load got to first.  Which are
         * stale, by the ids of the rows it did write. */
        buf ids = BUF_INIT;
        buf_append_char(&ids, '{');
        for (int i = 0; i < rows; i++)
            buf_printf(&ids, "%s%s", i ? "," : "", db_value(r, i, 1));
        buf_append_char(&ids, '}');
        db_result_free(&r);
        const char *pm[] = {a, b, buf_cstr(&ids)};
        db_result *s = one_row(w, &w->c_missed, 3, pm);
        buf_free(&ids);
        if (!s)
            return false;
        stale += (uint64_t)db_int(s, 0, 0);
        db_result_free(&s);
    } else {
        db_result_free(&r);
    }
    c->inserted += inserted;
    c->updated += updated;
    c->stale += stale;
    c->unchanged += n - inserted - updated - stale;
    /* As on a single server: probe while keys tend to exist. */
    w->probe = (n - inserted) * 10 > n;
    return true;
}

void ld_citus_close(loader *ld)
{
    db *d0 = ld_control(ld);
    for (int i = 0; i < ld->n_workers; i++) {
        worker *w = &ld->workers[i];
        db *d = w->conn;
        if (!w->stage.len)
            continue;
        if (!d || !db_ok(d))
            d = d0;
        if (!d || !db_ok(d))
            continue;
        db_exec(d, "ROLLBACK");     /* a transaction left open by a failure */
        buf sql = BUF_INIT;
        buf_printf(&sql, "DROP TABLE IF EXISTS %s", buf_cstr(&w->stage));
        if (!db_exec(d, buf_cstr(&sql)))
            log_warn("cannot drop the staging table %s: %s; the next import drops it",
                     buf_cstr(&w->stage), db_message(d));
        buf_free(&sql);
    }
    /* Those of connections lost on the way (their sessions are gone). */
    if (d0 && db_ok(d0))
        sweep(ld, d0);
}

void ld_citus_free(worker *w)
{
    buf_free(&w->stage);
    buf_free(&w->c_copy);
    buf_free(&w->c_truncate);
    buf_free(&w->c_verdict);
    buf_free(&w->c_verdicts);
    buf_free(&w->c_merge);
    buf_free(&w->c_missed);
}
