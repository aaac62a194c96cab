/*
 * citus_stage.c - the loader on a Citus-distributed target (see
 * citus_stage.h).
 */
#include "load/citus_stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql.h"
#include "output/log.h"
#include "util/exitcodes.h"

static const char *const names_of[] = {"stage", "seq", "table", "active", "extra_cols",
                                       "extra_vals", "do_update"};

static bool render(const citus_names *n, const char *stage, buf *out, const char *tmpl)
{
    const char *vals[] = {stage, buf_cstr(&n->seq), n->table, n->active, n->extra_cols,
                          n->extra_vals, n->action};
    buf_clear(out);
    return sql_render(out, tmpl, (int)(sizeof vals / sizeof vals[0]), names_of, vals);
}

void citus_sweep(const citus_names *n, db *d)
{
    const char *p[] = {n->schema};
    db_result *r = db_query(d, SQL_CITUS_LEFTOVERS, 1, p);
    if (!r) {
        log_warn("cannot look for staging tables left by killed loaders: %s", db_message(d));
        return;
    }
    buf sql = BUF_INIT;
    static const char *const names[] = {"stage"};
    for (int i = 0; i < db_nrows(r); i++) {
        const char *vals[] = {db_value(r, i, 0)};
        buf_clear(&sql);
        if (sql_render(&sql, SQL_CITUS_DROP, 1, names, vals) && db_exec(d, buf_cstr(&sql)))
            log_info("dropped %s, the staging table of a loader that is gone",
                     db_value(r, i, 0));
        else
            log_warn("cannot drop %s, left by a loader that is gone: %s", db_value(r, i, 0),
                     db_message(d));
    }
    buf_free(&sql);
    db_result_free(&r);
}

int citus_target_open(citus_names *n, db *d)
{
    const char *p[] = {n->table};
    db_result *r = db_query(d, SQL_CITUS_ID_SEQUENCE, 1, p);
    if (!r) {
        log_error("cannot read the id sequence of %s: %s (SQLSTATE %s)", n->display,
                  db_message(d), db_sqlstate(d));
        return db_failure_exit(d);
    }
    bool has_seq = !db_is_null(r, 0, 0);
    if (has_seq) {
        /* A literal for nextval(): the name as the catalog gives it. */
        buf_clear(&n->seq);
        buf_append_char(&n->seq, '\'');
        for (const char *s = db_value(r, 0, 0); *s; s++) {
            if (*s == '\'')
                buf_append_char(&n->seq, '\'');
            buf_append_char(&n->seq, *s);
        }
        buf_append_char(&n->seq, '\'');
    }
    db_result_free(&r);
    if (!has_seq) {
        log_error("table %s is distributed with Citus but has no id column filled by a "
                  "sequence (bigserial): idemload supplies the id of each inserted row from it, "
                  "so the merge runs on the workers (idemload init --distributed creates the "
                  "table so)", n->display);
        return EXIT_USAGE;
    }
    citus_sweep(n, d);
    return EXIT_OK;
}

bool citus_stage_open(citus_stage *st, const citus_names *n, db *d)
{
    char name[64];
    snprintf(name, sizeof name, "idemload_stage_%d", db_backend_pid(d));
    buf_clear(&st->name);
    if (!db_append_ident(d, &st->name, n->schema) || !buf_append_char(&st->name, '.') ||
        !db_append_ident(d, &st->name, name))
        return false;
    const char *stage = buf_cstr(&st->name);
    buf sql = BUF_INIT;
    const char *p[] = {stage, n->table};
    bool ok = render(n, stage, &sql, SQL_CITUS_STAGE_CREATE) && db_exec(d, buf_cstr(&sql));
    db_result *r = ok ? db_query(d, SQL_CITUS_STAGE_DISTRIBUTE, 2, p) : NULL;
    ok = r != NULL;
    db_result_free(&r);
    buf_free(&sql);
    return ok && render(n, stage, &st->copy, SQL_CITUS_COPY) &&
           render(n, stage, &st->truncate, SQL_CITUS_TRUNCATE) &&
           render(n, stage, &st->verdict, SQL_CITUS_VERDICT) &&
           render(n, stage, &st->verdicts, SQL_CITUS_VERDICTS) &&
           render(n, stage, &st->merge, SQL_CITUS_MERGE) &&
           render(n, stage, &st->missed, SQL_CITUS_MISSED_STALE);
}

bool citus_stage_merge(const citus_stage *st, db *conn, const char *final_array,
                       const column_set *extra, size_t n_extra, bool update, bool *probe,
                       size_t lo, size_t hi, load_counts *c)
{
    char a[24], b[24];
    snprintf(a, sizeof a, "%zu", lo + 1);
    snprintf(b, sizeof b, "%zu", hi + 1);
    uint64_t n = hi - lo + 1;
    uint64_t stale = 0, sent = n;
    const char *pv[] = {a, b, final_array};
    if (update && *probe) {
        if (!db_exec_params(conn, buf_cstr(&st->verdict), 3, pv))
            return false;
        db_result *r = db_query(conn, buf_cstr(&st->verdicts), 2, pv);
        if (!r)
            return false;
        stale = (uint64_t)db_int(r, 0, 0);
        sent = (uint64_t)db_int(r, 0, 1);
        db_result_free(&r);
    }
    /* $1, $2 the ords, $3 the final statuses (updating), then the --set
     * constants (target_check_columns numbered them so). */
    const char *p[3 + MAX_EXTRA_SETS] = {a, b, final_array};
    int np = update ? 3 : 2;
    for (size_t i = 0; i < n_extra && i < MAX_EXTRA_SETS; i++)
        p[np++] = extra[i].value;
    db_result *r = db_query(conn, buf_cstr(&st->merge), np, p);
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
        db_result *s = db_query(conn, buf_cstr(&st->missed), 3, pm);
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
    *probe = (n - inserted) * 10 > n;
    return true;
}

void citus_stage_drop(citus_stage *st, db *d)
{
    if (!st->name.len || !d || !db_ok(d))
        return;
    db_rollback(d);             /* a transaction left open by a failure */
    buf sql = BUF_INIT;
    static const char *const names[] = {"stage"};
    const char *vals[] = {buf_cstr(&st->name)};
    if (!sql_render(&sql, SQL_CITUS_DROP, 1, names, vals) || !db_exec(d, buf_cstr(&sql)))
        log_warn("cannot drop the staging table %s: %s; the next import drops it",
                 buf_cstr(&st->name), db_message(d));
    buf_free(&sql);
    buf_clear(&st->name);
}

void citus_stage_free(citus_stage *st)
{
    buf_free(&st->name);
    buf_free(&st->copy);
    buf_free(&st->truncate);
    buf_free(&st->verdict);
    buf_free(&st->verdicts);
    buf_free(&st->merge);
    buf_free(&st->missed);
}

void citus_names_free(citus_names *n)
{
    buf_free(&n->seq);
}
