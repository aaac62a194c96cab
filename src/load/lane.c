/*
 * lane.c - one lane of one chunk on one connection (see lane.h).
 */
#include "load/lane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/copy_encode.h"
#include "db/sql.h"
#include "output/changes.h"
#include "output/log.h"
#include "output/rejects.h"
#include "util/exitcodes.h"
#include "util/fault.h"

/* Savepoints: the lane's transaction in a dry run, and a range of rows
 * being isolated. */
#define SP_CHUNK "idemload_chunk"
#define SP_PART "idemload_part"
#define SP_APPEND "idemload_append"

/* Outcome of one attempt at a lane. */
typedef enum attempt_result {
    ATTEMPT_OK,
    ATTEMPT_DATA,       /* the server refused a row: isolate */
    ATTEMPT_RETRY,      /* deadlock or serialization failure */
    ATTEMPT_CONNECTION, /* connection lost */
    ATTEMPT_CANCELED,   /* interrupted */
    ATTEMPT_TABLE_GONE, /* the target was truncated or dropped by another session
                         * while the file loaded (ledger_table_kept) */
    ATTEMPT_FAILED,     /* anything else: give up */
    ATTEMPT_CLIENT_OOM, /* the client out of memory: give up, exit 3 */
    ATTEMPT_REJECTS     /* the refused rows cannot be written to the rejects file */
} attempt_result;

void lane_init(lane_runner *ln, const lane_env *env, db *conn, lane_reopen_fn reopen, void *ctx)
{
    memset(ln, 0, sizeof *ln);
    ln->env = env;
    ln->conn = conn;
    ln->reopen = reopen;
    ln->reopen_ctx = ctx;
    /* DO NOTHING never writes an existing row: nothing for a probe to save. */
    ln->probe = env->update;
}

void lane_free(lane_runner *ln)
{
    for (int i = 0; i < 4; i++)
        buf_free(&ln->probe_keys[i]);
    buf_free(&ln->xids);
    buf_free(&ln->copybuf);
    buf_free(&ln->missed);
    buf_free(&ln->err_msg);
    buf_free(&ln->changes);
    free(ln->split);
    ln->split = NULL;
    ln->cap_split = 0;
}

void lane_result_clear(lane_result *res)
{
    for (size_t i = 0; i < res->n_refused; i++)
        free(res->refused[i].message);
    res->n_refused = 0;
}

void lane_result_free(lane_result *res)
{
    lane_result_clear(res);
    buf_free(&res->error);
    free(res->refused);
    res->refused = NULL;
    res->cap_refused = 0;
}

static bool add_refused(lane_result *res, size_t index, const char *msg)
{
    if (res->n_refused == res->cap_refused) {
        size_t cap = res->cap_refused ? res->cap_refused * 2 : 8;
        refused *p = realloc(res->refused, cap * sizeof *p);
        if (!p)
            return false;
        res->refused = p;
        res->cap_refused = cap;
    }
    char *copy = strdup(msg);
    if (!copy)
        return false;
    res->refused[res->n_refused].index = index;
    res->refused[res->n_refused].message = copy;
    res->n_refused++;
    return true;
}

const char *lane_where(uint64_t chunk_no, int lane, int lanes, char *out, size_t size)
{
    if (lanes > 1)
        snprintf(out, size, "chunk %llu, lane %d of %d", (unsigned long long)chunk_no, lane + 1,
                 lanes);
    else
        snprintf(out, size, "chunk %llu", (unsigned long long)chunk_no);
    return out;
}

/*
 * Classifies the error the lane's connection just returned, and keeps its
 * SQLSTATE and message on the lane: the ROLLBACK that follows a failure
 * clears the connection's own copy, and the user must still read the
 * server's words.
 */
static attempt_result classify(lane_runner *ln)
{
    const db *d = ln->conn;
    snprintf(ln->err_state, sizeof ln->err_state, "%s", db_sqlstate(d));
    buf_clear(&ln->err_msg);
    buf_append_str(&ln->err_msg, db_message(d));
    if (gate_cancelled(ln->env->gate))
        return ATTEMPT_CANCELED;
    /* The one rule (db_failure_exit) tells the client's own out of memory
     * (exit 3) from every answer of the server. */
    if (db_failure_exit(d) == EXIT_INPUT)
        return ATTEMPT_CLIENT_OOM;
    switch (db_error_class_of(d)) {
    case DBE_CONNECTION:
        return ATTEMPT_CONNECTION;
    case DBE_RETRY:
        return ATTEMPT_RETRY;
    case DBE_CANCELED:
        /* Not our cancel (that one cancels the gate first): the server's
         * statement_timeout, or pg_cancel_backend() from another session.
         * The load failed; nobody interrupted idemload. */
        return ATTEMPT_FAILED;
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
static const char *failure_hint(const lane_env *env, const char *state)
{
    if (strcmp(state, "0A000") == 0 && env->distributed)
        return "; the target is a Citus distributed table, and Citus cannot run this "
               "statement on it (a trigger, rule or column default the merge would evaluate on "
               "the coordinator?): nothing was rejected, fix the cause and run the same "
               "command again";
    return db_sqlstate_hint(state);
}

/* COPYs rows idx[lo..hi] of chunk ch by statement sql: into the staging
 * table with ord = position + 1, or (to_target) straight into the target
 * (binary format: see copy_encode.h). */
static bool copy_stream(lane_runner *ln, const char *sql, const chunk *ch, const uint32_t *idx,
                        size_t lo, size_t hi, bool to_target)
{
    db *d = ln->conn;
    if (!db_copy_begin(d, sql))
        return false;
    buf_clear(&ln->copybuf);
    /* The client out of memory: the COPY aborted (the server answers that
     * with 57014), then the handle says what happened, so the lane fails
     * with exit 3, not the server's "canceled". */
    bool oom = fault_injected("copy-oom");
    if (!copy_binary_header(&ln->copybuf)) {
        db_copy_end(d, "idemload: out of memory");
        db_set_out_of_memory(d);
        return false;
    }
    for (size_t i = lo; i <= hi; i++) {
        row r;
        chunk_get(ch, idx[i], &r);
        if (oom || !(to_target ? copy_binary_target_row(&ln->copybuf, &r)
                               : copy_binary_row(&ln->copybuf, (int32_t)(i + 1), &r))) {
            db_copy_end(d, "idemload: out of memory");
            db_set_out_of_memory(d);
            return false;
        }
        if (ln->copybuf.len >= (1 << 18)) {
            if (!db_copy_send(d, ln->copybuf.data, ln->copybuf.len)) {
                db_copy_end(d, "idemload: send failed");
                return false;
            }
            buf_clear(&ln->copybuf);
        }
    }
    if (!copy_binary_trailer(&ln->copybuf) ||
        !db_copy_send(d, ln->copybuf.data, ln->copybuf.len)) {
        db_copy_end(d, "idemload: send failed");
        return false;
    }
    return db_copy_end(d, NULL);
}

/* COPYs the job's rows [lo, hi] into the staging table. */
static bool copy_rows(lane_runner *ln, const lane_job *job, size_t lo, size_t hi)
{
    const char *sql = ln->stage ? buf_cstr(&ln->stage->copy) : SQL_COPY_STAGE;
    return copy_stream(ln, sql, job->ch, job->idx, lo, hi, false);
}

/* A server answer that does not fit the rows staged: a bug, said once. */
static bool answer_mismatch(const lane_job *job)
{
    log_error("%s: chunk %llu: the merge's answer does not match the rows staged (a bug in "
              "idemload; please report it)", job->path, (unsigned long long)job->chunk_no);
    return false;
}

/* Classifies the rows an updating merge sent to the INSERT but did not
 * write (missed, an int[] of ords): adds the stale ones to *stale and marks
 * them stale in the job's outcome. */
static bool count_stale(lane_runner *ln, const lane_job *job, size_t lo, size_t hi,
                        const char *missed, uint64_t *stale)
{
    const char *ps[] = {missed};
    db_result *s = db_query(ln->conn, buf_cstr(&ln->env->sql->count_stale), 1, ps);
    if (!s)
        return false;
    *stale += (uint64_t)db_int(s, 0, 0);
    bool fits = outcome_apply_ords(job->out, job->idx, lo, hi, db_value(s, 0, 1), MERGE_STALE,
                                   MERGE_STALE);
    db_result_free(&s);
    return fits || answer_mismatch(job);
}

/* The merge for --changes: every row's outcome with its versions
 * (SQL_MERGE_DETAIL, or SQL_MERGE_DETAIL_NOTHING), parameters p as for the
 * plain merges.  Adds the figures to *c. */
static bool merge_rows_detail(lane_runner *ln, const lane_job *job, size_t lo, size_t hi,
                              const char *const *p, int np, load_counts *c)
{
    const lane_env *env = ln->env;
    chunk_outcome *o = job->out;
    db_result *r = db_query(ln->conn, buf_cstr(&env->sql->merge_detail), np, p);
    if (!r)
        return false;
    if (!env->update) {
        bool fits = outcome_apply_inserted(o, job->idx, lo, hi, r, c);
        db_result_free(&r);
        return fits || answer_mismatch(job);
    }
    load_counts got = {0};
    outcome_fill(o, job->idx, lo, hi, MERGE_UNCHANGED);
    bool fits = outcome_apply_detail(o, job->idx, lo, hi, r, &ln->missed, &got);
    db_result_free(&r);
    if (!fits)
        return answer_mismatch(job);
    if (ln->missed.len) {
        const char *ps[] = {buf_cstr(&ln->missed)};
        db_result *s = db_query(ln->conn, buf_cstr(&env->sql->stale_detail), 1, ps);
        if (!s)
            return false;
        fits = outcome_apply_stale_detail(o, job->idx, lo, hi, s, &got);
        db_result_free(&s);
        if (!fits)
            return answer_mismatch(job);
    }
    got.unchanged = (hi - lo + 1) - load_counts_merged(&got);
    load_counts_add(c, &got);
    return true;
}

/* Merges staged rows with ord in [lo+1, hi+1] (the job's rows lo..hi);
 * adds figures to *c and each row's action to the job's outcome. */
/* Keeps the xid the first row of query's answer gives (a subtransaction
 * that wrote rows of this lane) for the lane's ledger row.  False on a
 * database error. */
static bool note_xid(lane_runner *ln, const char *sql, int n, const char *const *p)
{
    db_result *r = db_query(ln->conn, sql, n, p);
    if (!r)
        return false;
    bool ok = db_nrows(r) == 0 || db_is_null(r, 0, 0) ||
              buf_printf(&ln->xids, "%s%s", ln->xids.len ? "," : "", db_value(r, 0, 0));
    db_result_free(&r);
    if (!ok)
        db_set_out_of_memory(ln->conn);
    return ok;
}

/* --supersede, before the merge of staged rows [lo, hi] (SQL_SUPERSEDE):
 * the active versions of their keys that the file's earlier load wrote
 * take this load's rows; *r receives the answer (count, ords), or NULL
 * when there is nothing to supersede.  False on a database error. */
static bool supersede_rows(lane_runner *ln, const lane_job *job, size_t lo, size_t hi,
                           db_result **r)
{
    *r = NULL;
    const char *prior = job->ledger && !ln->env->dry_run ? ledger_prior_xids(job->ledger) : NULL;
    if (!prior || ln->stage)
        return true;
    char a[24], b[24];
    snprintf(a, sizeof a, "%zu", lo + 1);
    snprintf(b, sizeof b, "%zu", hi + 1);
    const char *p[] = {a, b, prior};
    *r = db_query(ln->conn, buf_cstr(&ln->env->sql->supersede), 3, p);
    return *r != NULL;
}

static bool merge_rows_plain(lane_runner *ln, const lane_job *job, size_t lo, size_t hi,
                             load_counts *c);

/* The merge of staged rows [lo, hi], after --supersede replaced what it
 * may: those rows the merge then finds unchanged are counted updated. */
static bool merge_rows(lane_runner *ln, const lane_job *job, size_t lo, size_t hi, load_counts *c)
{
    db_result *sup = NULL;
    if (!supersede_rows(ln, job, lo, hi, &sup))
        return false;
    bool ok = merge_rows_plain(ln, job, lo, hi, c);
    if (ok && sup) {
        uint64_t n = (uint64_t)db_int(sup, 0, 0);
        if (n > c->unchanged) {
            ok = answer_mismatch(job);
        } else {
            c->unchanged -= n;
            c->updated += n;
            ok = outcome_apply_ords(job->out, job->idx, lo, hi,
                                    db_is_null(sup, 0, 1) ? NULL : db_value(sup, 0, 1),
                                    MERGE_UPDATED, MERGE_UPDATED) ||
                 answer_mismatch(job);
        }
    }
    db_result_free(&sup);
    return ok;
}

static bool merge_rows_plain(lane_runner *ln, const lane_job *job, size_t lo, size_t hi,
                             load_counts *c)
{
    const lane_env *env = ln->env;
    chunk_outcome *o = job->out;
    /* A distributed target merges through its colocated staging table; it
     * reports figures only, not each row's outcome (loader_open refuses
     * --changes there, and its rows stay out of the figures by group). */
    if (ln->stage)
        return citus_stage_merge(ln->stage, ln->conn, env->final_array, env->extra_set,
                                 env->n_extra_set, env->update, &ln->probe, lo, hi, c);
    char a[24], b[24];
    snprintf(a, sizeof a, "%zu", lo + 1);
    snprintf(b, sizeof b, "%zu", hi + 1);
    /* $1, $2 the ords, $3 the final statuses (updating), then the --set
     * constants of other columns (target_check_columns). */
    const char *p[3 + MAX_EXTRA_SETS] = {a, b, env->final_array};
    int np = env->update ? 3 : 2;
    /* A dry run into a copy of the target: the staged keys' rows first. */
    if (env->shadow && !db_exec_params(ln->conn, buf_cstr(&env->sql->shadow_fill), 2, p))
        return false;
    for (size_t i = 0; i < env->n_extra_set; i++)
        p[np++] = env->extra_set[i].value;
    if (o->details)
        return merge_rows_detail(ln, job, lo, hi, p, np, c);
    bool probe = ln->probe;
    const buf *sql = probe ? &env->sql->merge_probe : &env->sql->merge_direct;
    db_result *r = db_query(ln->conn, buf_cstr(sql), np, p);
    if (!r)
        return false;
    uint64_t n = hi - lo + 1;
    uint64_t inserted = (uint64_t)db_int(r, 0, 0);
    uint64_t updated = (uint64_t)db_int(r, 0, 1);
    uint64_t stale = (uint64_t)db_int(r, 0, 2);
    const char *missed = db_is_null(r, 0, 3) ? NULL : db_value(r, 0, 3);
    /* Each row's action: the direct merge wrote every row it does not list
     * (inserted, or updated when listed negative); the probe lists the
     * rows it wrote and the stale ones, the rest being unchanged.  Rows
     * sent but not written are unchanged (existing, not updating) until
     * count_stale says otherwise. */
    outcome_fill(o, job->idx, lo, hi, probe ? MERGE_UNCHANGED : MERGE_INSERTED);
    bool fits = outcome_apply_ords(o, job->idx, lo, hi, db_value(r, 0, 4), MERGE_INSERTED,
                                   MERGE_UPDATED) &&
                outcome_apply_ords(o, job->idx, lo, hi, db_value(r, 0, 5), MERGE_STALE,
                                   MERGE_STALE) &&
                outcome_apply_ords(o, job->idx, lo, hi, missed,
                                   env->update ? MERGE_UNCHANGED : MERGE_EXISTING,
                                   MERGE_UNCHANGED);
    if (!env->update) {
        db_result_free(&r);
        c->inserted += inserted;
        c->existing += n - inserted;
        return fits || answer_mismatch(job);
    }
    if (!fits) {
        db_result_free(&r);
        return answer_mismatch(job);
    }
    /* Rows sent to the INSERT but not written: those the direct merge
     * turned away, or a concurrent load got to first.  Classify them now;
     * the merge has locked their active rows, so this is exact. */
    bool ok = !missed || count_stale(ln, job, lo, hi, missed, &stale);
    db_result_free(&r);
    if (!ok)
        return false;
    uint64_t unchanged = n - inserted - updated - stale;
    c->inserted += inserted;
    c->updated += updated;
    c->stale += stale;
    c->unchanged += unchanged;
    /* Probe first while more than a tenth of the rows are ones the probe
     * spares: unchanged and stale rows, which a direct merge locks (and so
     * writes) without changing.  For new keys the probe is a wasted index
     * descent, and so it is for updated ones, which both merges write: a
     * first load, or a file of newer versions, goes direct.  (Counting the
     * updated rows too made a nightly file with a tenth of its keys present
     * in older versions flip between the two merges from chunk to chunk.) */
    ln->probe = (n - inserted - updated) * 10 > n;
    return true;
}

/* Room for the job's rows in the lane's split of fresh and other rows. */
static bool reserve_split(lane_runner *ln, size_t n)
{
    if (n <= ln->cap_split)
        return true;
    uint32_t *p = realloc(ln->split, 2 * n * sizeof *p);
    if (!p)
        return false;
    ln->split = p;
    ln->cap_split = n;
    return true;
}

/* Appends text t (n bytes) to an array literal as one quoted element. */
static bool array_text(buf *out, const char *t, size_t n)
{
    bool ok = buf_append_str(out, out->len > 1 ? ",\"" : "\"");
    for (size_t i = 0; ok && i < n; i++) {
        if (t[i] == '"' || t[i] == '\\')
            ok = buf_append(out, "\\", 1);
        ok = ok && buf_append(out, t + i, 1);
    }
    return ok && buf_append_str(out, "\"");
}

/* Backs the append off for the next 1, 2, 4 ... lanes (lane.h). */
static void append_back_off(lane_runner *ln)
{
    ln->append_backoff = ln->append_backoff == 0 ? 1
                         : ln->append_backoff * 2 > APPEND_MAX_WAIT ? APPEND_MAX_WAIT
                                                                     : ln->append_backoff * 2;
    ln->append_wait = ln->append_backoff;
}

/*
 * The append's probe (SQL_APPEND_PROBE): which of the nf rows fresh[] have
 * a key the table holds as active.  Those are moved to other[] (after its
 * *no rows), the rest stay in fresh[] (*nf shrinks).  False on a database
 * error (on the connection), or out of memory (*oom; nothing moved).
 */
static bool probe_fresh(lane_runner *ln, const lane_job *job, uint32_t *fresh, size_t *nf,
                        uint32_t *other, size_t *no, bool *oom)
{
    buf *k = ln->probe_keys;
    bool ok = true;
    *oom = false;
    for (int i = 0; i < 4; i++) {
        buf_clear(&k[i]);
        ok = ok && buf_append_str(&k[i], "{");
    }
    for (size_t i = 0; ok && i < *nf; i++) {
        row r;
        chunk_get(job->ch, fresh[i], &r);
        ok = buf_printf(&k[0], "%s%lld", i ? "," : "", (long long)r.tenant_id) &&
             array_text(&k[1], r.channel, r.channel_len) &&
             array_text(&k[2], r.out_trade_no, r.out_trade_no_len) &&
             array_text(&k[3], r.callback_type, r.callback_type_len);
    }
    for (int i = 0; ok && i < 4; i++)
        ok = buf_append_str(&k[i], "}");
    if (!ok) {
        *oom = true;
        return false;
    }
    const char *p[] = {buf_cstr(&k[0]), buf_cstr(&k[1]), buf_cstr(&k[2]), buf_cstr(&k[3])};
    db_result *r = db_query(ln->conn, buf_cstr(&ln->env->sql->append_probe), 4, p);
    if (!r)
        return false;
    if (!db_is_null(r, 0, 0)) {
        /* "{3,17,...}": ascending positions from 1; compact fresh[] in place. */
        const char *s = db_value(r, 0, 0);
        size_t keep = 0;
        char *end;
        if (*s == '{')
            s++;
        unsigned long long hit = strtoull(s, &end, 10);
        bool more = end != s;
        for (size_t i = 0; i < *nf; i++) {
            if (more && hit == i + 1) {
                other[(*no)++] = fresh[i];
                s = *end == ',' ? end + 1 : end;
                hit = strtoull(s, &end, 10);
                more = end != s;
            } else {
                fresh[keep++] = fresh[i];
            }
        }
        *nf = keep;
    }
    db_result_free(&r);
    return true;
}

/* After the append's COPY, inside its savepoint: the subtransaction's xid,
 * read from the row the COPY wrote for row FIRST of ch, for the ledger row
 * (--supersede).  False: the server's error is on the connection, or
 * memory ran out (set on it). */
static bool note_append_xid(lane_runner *ln, const chunk *ch, uint32_t first)
{
    row k;
    chunk_get(ch, first, &k);
    char tenant[24];
    snprintf(tenant, sizeof tenant, "%lld", (long long)k.tenant_id);
    buf key[3] = {BUF_INIT, BUF_INIT, BUF_INIT};
    bool got = buf_append(&key[0], k.channel, k.channel_len) &&
               buf_append(&key[1], k.out_trade_no, k.out_trade_no_len) &&
               buf_append(&key[2], k.callback_type, k.callback_type_len);
    const char *kp[] = {tenant, buf_cstr(&key[0]), buf_cstr(&key[1]), buf_cstr(&key[2])};
    if (!got)
        db_set_out_of_memory(ln->conn);
    got = got && note_xid(ln, buf_cstr(&ln->env->sql->xmin_of_key), 4, kp);
    for (int i = 0; i < 3; i++)
        buf_free(&key[i]);
    return got;
}

/*
 * The append (lane.h): when the run allows it and the lane is not backing
 * off, COPYs the job's fresh rows straight into the target under a
 * savepoint, and leaves in *rest the rows still to merge.  A key that is in
 * the table after all (or any other refusal) rolls the append back: *rest
 * stays the whole job, and the lane leaves the next 1, 2, 4 ... chunks
 * (at most APPEND_MAX_WAIT) to the merge.  ATTEMPT_OK unless the
 * connection or the run is lost.
 */
static attempt_result try_append(lane_runner *ln, const lane_job *job, lane_job *rest,
                                 load_counts *c)
{
    db *d = ln->conn;
    if (!ln->env->append || ln->append_off || !job->fresh || job->out->details || job->n == 0)
        return ATTEMPT_OK;
    if (ln->append_wait > 0) {
        ln->append_wait--;
        return ATTEMPT_OK;
    }
    if (!reserve_split(ln, job->n))
        return ATTEMPT_OK; /* out of memory: merge, which needs nothing more */
    uint32_t *fresh = ln->split, *other = ln->split + job->n;
    size_t nf = 0, no = 0;
    for (size_t i = 0; i < job->n; i++) {
        if (job->fresh[job->idx[i]])
            fresh[nf++] = job->idx[i];
        else
            other[no++] = job->idx[i];
    }
    if (nf == 0)
        return ATTEMPT_OK;
    size_t probed = nf;
    bool oom;
    if (ln->env->probe_append && !probe_fresh(ln, job, fresh, &nf, other, &no, &oom))
        return oom ? ATTEMPT_OK : classify(ln);    /* out of memory: merge them all */
    /* More than a twentieth of the keys in the table (a re-import, or a
     * nightly file of many known keys): the merge, which handles present
     * keys anyway, takes the next chunks too, without probing.  Appending
     * the new keys of such a file measured slower than merging them all
     * (BENCHMARKS.md, the nightly shape). */
    if ((probed - nf) * 20 > probed)
        append_back_off(ln);
    if (nf == 0) {
        rest->idx = other;
        rest->n = no;
        return ATTEMPT_OK;
    }
    if (!db_savepoint(d, SP_APPEND))
        return classify(ln);
    if (copy_stream(ln, buf_cstr(&ln->env->sql->append), job->ch, fresh, 0, nf - 1, true)) {
        if (!note_append_xid(ln, job->ch, fresh[0]) || !db_release(d, SP_APPEND))
            return classify(ln);
        outcome_fill(job->out, fresh, 0, nf - 1, MERGE_INSERTED);
        c->inserted += nf;
        rest->idx = other;
        rest->n = no;
        if (nf == probed)
            ln->append_backoff = 0;
        return ATTEMPT_OK;
    }
    /* A deadlock or serialization failure redoes the lane as the merge's
     * would (it counts against --retries); a refused row or key takes the
     * merge, which isolates refused rows; anything else (COPY itself not
     * allowed, say) takes the merge, and the lane appends no more. */
    attempt_result ar = classify(ln);
    if (ar == ATTEMPT_CONNECTION || ar == ATTEMPT_CANCELED || ar == ATTEMPT_RETRY ||
        ar == ATTEMPT_CLIENT_OOM)
        return ar;
    /* The server's statement_timeout (57014) would stop the merge of the
     * same rows too: the lane fails now, with its own message. */
    if (ar == ATTEMPT_FAILED && strcmp(ln->err_state, "57014") == 0)
        return ar;
    if (!db_rollback_to(d, SP_APPEND) || !db_release(d, SP_APPEND))
        return classify(ln);
    if (ar == ATTEMPT_FAILED) {
        log_info("%s: appending straight into the table failed: %s (SQLSTATE %s); merging "
                 "instead", job->path, buf_cstr(&ln->err_msg), ln->err_state);
        ln->append_off = true;
        return ATTEMPT_OK;
    }
    append_back_off(ln);
    return ATTEMPT_OK;
}

/* The job's rows, not isolated: the fresh ones appended when the lane may,
 * the others (or all) staged and merged. */
static attempt_result load_rows(lane_runner *ln, const lane_job *job, load_counts *c)
{
    lane_job rest = *job;
    attempt_result ar = try_append(ln, job, &rest, c);
    if (ar != ATTEMPT_OK)
        return ar;
    if (rest.n > 0 &&
        (!copy_rows(ln, &rest, 0, rest.n - 1) || !merge_rows(ln, &rest, 0, rest.n - 1, c)))
        return classify(ln);
    return ATTEMPT_OK;
}

/*
 * Loads rows [lo, hi] of the job under a savepoint, halving on data errors
 * until the refused rows are found.  Returns ATTEMPT_OK (refused rows
 * recorded in *res) or the error that is not about data.
 */
static attempt_result isolate(lane_runner *ln, const lane_job *job, size_t lo, size_t hi,
                              load_counts *c, lane_result *res)
{
    db *d = ln->conn;
    if (!db_savepoint(d, SP_PART))
        return classify(ln);
    load_counts got = {0};
    if (copy_rows(ln, job, lo, hi) && merge_rows(ln, job, lo, hi, &got)) {
        char ord[24];
        snprintf(ord, sizeof ord, "%zu", lo + 1);
        const char *op[] = {ord};
        if ((!ln->stage && !note_xid(ln, SQL_XMIN_OF_STAGED, 1, op)) || !db_release(d, SP_PART))
            return classify(ln);
        load_counts_add(c, &got);
        return ATTEMPT_OK;
    }
    attempt_result ar = classify(ln);
    if (ar != ATTEMPT_DATA)
        return ar;
    buf msg = BUF_INIT;
    buf_printf(&msg, "refused by PostgreSQL: %s (SQLSTATE %s)", db_message(d), db_sqlstate(d));
    if (!db_rollback_to(d, SP_PART) || !db_release(d, SP_PART)) {
        buf_free(&msg);
        return classify(ln);
    }
    if (lo == hi) {
        bool ok = add_refused(res, job->idx[lo], buf_cstr(&msg));
        job->out->action[job->idx[lo]] = MERGE_REFUSED;
        buf_free(&msg);
        if (!ok)
            db_set_out_of_memory(d);
        return ok ? ATTEMPT_OK : classify(ln);
    }
    buf_free(&msg);
    size_t mid = lo + (hi - lo) / 2;
    ar = isolate(ln, job, lo, mid, c, res);
    if (ar != ATTEMPT_OK)
        return ar;
    return isolate(ln, job, mid + 1, hi, c, res);
}

/*
 * The attempt's refused rows into the rejects file, synced to disk, before
 * the transaction that leaves them out commits (STYLE.md practice 19): a
 * crash after the COMMIT then never loses them, and one before it leaves
 * them in the file once more than the chunk that is redone writes them
 * (the same file and line).  False with the reason in ln->err_msg.
 */
static bool write_refused(lane_runner *ln, const lane_job *job, const lane_result *res)
{
    if (res->n_refused == 0 || !job->rj)
        return true;
    buf err = BUF_INIT;
    bool ok = true;
    for (size_t i = 0; i < res->n_refused && ok; i++) {
        row r;
        chunk_get(job->ch, res->refused[i].index, &r);
        ok = rejects_write(job->rj, job->path, r.line, res->refused[i].message, r.raw, r.raw_len,
                           &err);
    }
    ok = ok && rejects_sync(job->rj, &err);
    if (!ok) {
        buf_clear(&ln->err_msg);
        buf_append_str(&ln->err_msg, buf_cstr(&err));
    }
    buf_free(&err);
    return ok;
}

/*
 * The lane's --changes lines, for its ledger row (output/changes.h: a
 * resumed run writes them from there): NULL when not asked for (or in a
 * dry run, which keeps no ledger rows), else the text in ln->changes.
 * *oom when memory ran out.
 */
static const char *changes_text(lane_runner *ln, const lane_job *job, bool *oom)
{
    const chunk_outcome *o = job->out;
    *oom = false;
    if (!o->details || ln->env->dry_run)
        return NULL;
    buf_clear(&ln->changes);
    for (size_t i = 0; i < job->n; i++) {
        uint32_t k = job->idx[i];
        merge_action a = (merge_action)o->action[k];
        if (!changes_wanted(a))
            continue;
        row r;
        chunk_get(job->ch, k, &r);
        if (!changes_render(&ln->changes, job->path, &r, a, o->has_before[k] ? &o->before[k] : NULL,
                            &o->after[k])) {
            *oom = true;
            return NULL;
        }
    }
    return buf_cstr(&ln->changes);
}

/* Commits the attempt: the refused rows durably in the rejects file, the
 * ledger row (with the lane's --changes lines), the barrier, the gate,
 * COMMIT. */
static attempt_result commit_attempt(lane_runner *ln, const lane_job *job, load_counts *c,
                                     lane_result *res)
{
    const lane_env *env = ln->env;
    db *d = ln->conn;
    c->rows_rejected += res->n_refused;
    if (!write_refused(ln, job, res))
        return ATTEMPT_REJECTS;
    if (job->ledger && !env->dry_run) {
        /* After the lane's writes, under their lock: rows committed into a
         * table that another session has meanwhile emptied or replaced
         * would make the file look loaded while its earlier chunks are
         * gone. */
        bool kept;
        if (!ledger_table_kept(job->ledger, d, &kept))
            return classify(ln);
        if (!kept)
            return ATTEMPT_TABLE_GONE;
        bool oom;
        const char *lines = changes_text(ln, job, &oom);
        if (oom || (lines && fault_injected("changes-oom"))) {
            db_set_out_of_memory(d);
            return classify(ln);
        }
        buf xids = BUF_INIT;
        bool ok = buf_printf(&xids, "{%s}", buf_cstr(&ln->xids));
        if (!ok)
            db_set_out_of_memory(d);
        ok = ok && ledger_chunk_row(job->ledger, d, job->chunk_no, job->lane, c, lines,
                                    buf_cstr(&xids));
        buf_free(&xids);
        if (!ok)
            return classify(ln);
    }
    gate_arrive(env->gate, &res->arrived, true);
    if (!gate_may_commit(env->gate))
        return ATTEMPT_CANCELED;
    if (env->dry_run ? db_release(d, SP_CHUNK) : db_commit(d))
        return ATTEMPT_OK;
    return classify(ln);
}

/* One attempt at the job.  *c receives its figures (the job's base plus
 * the merge's). */
static attempt_result attempt(lane_runner *ln, const lane_job *job, bool isolated, load_counts *c,
                              lane_result *res)
{
    db *d = ln->conn;
    bool dry = ln->env->dry_run;
    lane_result_clear(res);
    buf_clear(&ln->xids);
    if (job->n > 0)
        outcome_fill(job->out, job->idx, 0, job->n - 1, MERGE_NONE); /* an earlier attempt's */
    if (!(dry ? db_savepoint(d, SP_CHUNK) : db_begin(d)) ||
        !db_exec(d, ln->stage ? buf_cstr(&ln->stage->truncate) : SQL_TRUNCATE_STAGE))
        return classify(ln);
    attempt_result ar = ATTEMPT_OK;
    if (job->n > 0) {
        ar = isolated ? isolate(ln, job, 0, job->n - 1, c, res) : load_rows(ln, job, c);
    }
    if (ar == ATTEMPT_OK) {
        ar = commit_attempt(ln, job, c, res);
        if (ar == ATTEMPT_OK)
            return ATTEMPT_OK;
    }
    if (db_ok(d)) {
        if (dry) {
            db_rollback_to(d, SP_CHUNK);
            db_release(d, SP_CHUNK);
        } else {
            db_rollback(d);
        }
    }
    return ar;
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
static bool reconnect(lane_runner *ln, const lane_job *job, const char *at, int *attempts,
                      long *backoff)
{
    const lane_env *env = ln->env;
    buf err = BUF_INIT;
    for (;;) {
        buf_clear(&err);
        if (ln->reopen(ln->reopen_ctx, &ln->conn, &err)) {
            buf_free(&err);
            return true;
        }
        if (++*attempts > env->retries || gate_cancelled(env->gate)) {
            log_error("%s: %s: cannot reconnect: %s; last committed chunk: %llu; run the same "
                      "command again to resume after it", job->path, at, buf_cstr(&err),
                      (unsigned long long)job->last_committed);
            buf_free(&err);
            return false;
        }
        log_warn("%s: %s: reconnect failed: %s; retry %d of %d in %.1f s", job->path, at,
                 buf_cstr(&err), *attempts, env->retries, (double)*backoff / 1000.0);
        gate_sleep_ms(env->gate, *backoff);
        *backoff = next_backoff(*backoff);
    }
}

/* An attempt failed with ar: returns the lane's exit code when it gives
 * up, with why in *why (logged), or EXIT_OK to go on (*isolated set when
 * rows must be isolated). */
static int give_up(const lane_runner *ln, const lane_job *job, const char *at, attempt_result ar,
                   int attempts, bool *isolated, buf *why)
{
    const lane_env *env = ln->env;
    const char *msg = buf_cstr(&ln->err_msg), *state = ln->err_state;
    /* The server's answer (or a lost connection, which has none) by the
     * SQLSTATE table, unless a case below says otherwise. */
    int code = db_exit_status(ar == ATTEMPT_CONNECTION ? DBE_CONNECTION : DBE_FATAL, state, false);
    buf_clear(why);
    switch (ar) {
    case ATTEMPT_DATA:
        if (!*isolated) {
            /* Some row is refused: find it, load the others. */
            *isolated = true;
            return EXIT_OK;
        }
        /* Refused again with every refused row left out: at COMMIT (a
         * deferred constraint), or by the ledger. */
        buf_printf(why, "%s: %s: %s (SQLSTATE %s); nothing of this chunk was loaded", job->path,
                   at, msg, state);
        break;
    case ATTEMPT_REJECTS:
        buf_printf(why, "%s: %s: %s; the chunk was rolled back, so its rows stay unloaded "
                   "and its refused rows unrecorded until the same command runs again with "
                   "room; last committed chunk: %llu", job->path, at, msg,
                   (unsigned long long)job->last_committed);
        code = EXIT_INPUT;
        break;
    case ATTEMPT_CANCELED:
        buf_printf(why, "%s: interrupted: %s rolled back; %llu chunks committed", job->path, at,
                   (unsigned long long)job->last_committed);
        code = EXIT_INTERRUPTED;
        break;
    case ATTEMPT_TABLE_GONE:
        buf_printf(why, "%s: %s: the table was truncated, rewritten or dropped by another "
                   "session while this file loaded, so rows of its earlier chunks may be gone; "
                   "the chunk was rolled back and the file is not completed: run the same "
                   "command again to load it from the start", job->path, at);
        break;
    case ATTEMPT_CLIENT_OOM:
        buf_printf(why, "%s: %s: out of memory (client): the chunk was rolled back, nothing "
                   "rejected; last committed chunk: %llu; run the same command again (with "
                   "smaller chunks: --chunk-rows) to resume after it", job->path, at,
                   (unsigned long long)job->last_committed);
        code = EXIT_INPUT;
        break;
    case ATTEMPT_FAILED:
        buf_printf(why, "%s: %s: the load failed, not a row: %s (SQLSTATE %s)%s; the chunk was "
                   "rolled back, nothing rejected; last committed chunk: %llu", job->path, at,
                   msg, state, failure_hint(env, state),
                   (unsigned long long)job->last_committed);
        break;
    default:
        /* Deadlock, serialization failure, lock timeout or lost connection:
         * retry. */
        if (attempts <= env->retries && !(ar == ATTEMPT_CONNECTION && env->dry_run))
            return EXIT_OK;
        buf_printf(why, "%s: %s failed after %d retr%s: %s (SQLSTATE %s); last committed "
                   "chunk: %llu; run the same command again to resume after it",
                   job->path, at, attempts - 1, attempts - 1 == 1 ? "y" : "ies", msg, state,
                   (unsigned long long)job->last_committed);
        break;
    }
    log_error("%s", buf_cstr(why));
    return code;
}

int lane_run(lane_runner *ln, const lane_job *job, lane_result *res)
{
    const lane_env *env = ln->env;
    char at[64];
    lane_where(job->chunk_no, job->lane, job->lanes, at, sizeof at);
    bool isolated = false;
    int attempts = 0;
    long backoff = 250;
    buf_clear(&res->error);
    for (;;) {
        load_counts c = job->base;
        attempt_result ar = attempt(ln, job, isolated, &c, res);
        if (ar == ATTEMPT_OK) {
            res->counts = c;
            return res->code = EXIT_OK;
        }
        bool was_isolated = isolated;
        if (ar != ATTEMPT_DATA && ar != ATTEMPT_CANCELED && ar != ATTEMPT_FAILED &&
            ar != ATTEMPT_REJECTS && ar != ATTEMPT_TABLE_GONE && ar != ATTEMPT_CLIENT_OOM)
            attempts++;
        int code = give_up(ln, job, at, ar, attempts, &isolated, &res->error);
        if (code != EXIT_OK)
            return res->code = code;
        if (ar == ATTEMPT_DATA && !was_isolated)
            continue;
        /* A lost connection has no SQLSTATE: none is shown, not "()". */
        log_warn("%s: %s: %s%s%s%s; retry %d of %d in %.1f s", job->path, at,
                 buf_cstr(&ln->err_msg), ln->err_state[0] ? " (SQLSTATE " : "", ln->err_state,
                 ln->err_state[0] ? ")" : "", attempts, env->retries, (double)backoff / 1000.0);
        gate_sleep_ms(env->gate, backoff + rand() % 100);
        backoff = next_backoff(backoff);
        if (gate_cancelled(env->gate))
            return res->code = EXIT_INTERRUPTED;
        if (ar == ATTEMPT_CONNECTION || !db_ok(ln->conn)) {
            if (!reconnect(ln, job, at, &attempts, &backoff))
                return res->code = db_exit_status(DBE_CONNECTION, NULL,
                                                  gate_cancelled(env->gate));
            if (job->ledger) {
                if (ln->holds_file_lock && !ledger_file_lock(job->ledger, ln->conn))
                    continue;
                load_counts done = {0};
                if (ledger_lane_figures(job->ledger, ln->conn, job->chunk_no, job->lane,
                                        &done)) {
                    /* The commit happened; only its acknowledgement was lost.
                     * The refused rows are those of that same attempt. */
                    res->counts = done;
                    return res->code = EXIT_OK;
                }
            }
        }
    }
}
