/*
 * settle_check.c - settle's checks, register and gathering (see
 * settle_check.h).  Each check is one statement of settle_sql.h run on
 * the staged rows; only the per-day figures and the lines come back.
 */
#include "settle/settle_check.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/settle_sql.h"
#include "output/log.h"

bool settle_register_names(recon_ctx *x)
{
    const target *t = &x->tool.t;
    db *d = x->tool.d;
    bool ok = true;
    const struct {
        buf *quoted;
        buf *text;
        const char *name;
    } names[] = {{&x->item, &x->item_name, "idemload_settle_item"},
                 {&x->run, &x->run_name, "idemload_settle_run"},
                 {&x->item_index, NULL, "idemload_settle_item_open"},
                 {&x->run_index, NULL, "idemload_settle_run_day"}};
    for (size_t i = 0; ok && i < sizeof names / sizeof names[0]; i++) {
        if (names[i].text) {
            ok = db_append_ident(d, names[i].quoted, t->schema) &&
                 buf_append_char(names[i].quoted, '.') &&
                 db_append_ident(d, names[i].quoted, names[i].name) &&
                 buf_append_str(names[i].text, buf_cstr(names[i].quoted));
        } else {
            ok = db_append_ident(d, names[i].quoted, names[i].name);
        }
    }
    if (!ok)
        log_error("settle: out of memory");
    return ok;
}

bool settle_setup(recon_ctx *x, const fee_rate *rates, size_t n_rates)
{
    if (!recon_exec(x, "settle: preparing the session's temporary tables", SQL_SETTLE_SETUP, 0,
                    NULL))
        return false;
    for (size_t i = 0; i < n_rates; i++) {
        const char *p[] = {rates[i].channel, rates[i].given, rates[i].percent, rates[i].fixed};
        if (!recon_exec(x, "settle: --fee-rate", SQL_SETTLE_RATE, 4, p))
            return false;
    }
    return true;
}

/* The register's state: absent, readable or denied; NULL after logging. */
static const char *register_state(recon_ctx *x)
{
    if (x->reg_state[0])
        return x->reg_state;
    db_result *r = recon_query(x, "settle: the register", SQL_SETTLE_REGISTER_READABLE, 1,
                               (const char *const[]){buf_cstr(&x->item_name)});
    if (!r)
        return NULL;
    snprintf(x->reg_state, sizeof x->reg_state, "%s", db_value(r, 0, 0));
    db_result_free(&r);
    return x->reg_state;
}

bool settle_checks(recon_ctx *x, settle_result *res, int64_t window_min, int64_t window_max,
                   int64_t grace_s, const char *from, const char *to)
{
    if (!recon_exec(x, "settle: typing the rows", SQL_SETTLE_ROWS, 0, NULL))
        return false;
    char wmin[24], wmax[24], grace[24];
    snprintf(wmin, sizeof wmin, "%lld", (long long)window_min);
    snprintf(wmax, sizeof wmax, "%lld", (long long)window_max);
    snprintf(grace, sizeof grace, "%lld", (long long)grace_s);
    const char *pp[] = {wmin, wmax, grace, from, to};
    db_result *r = recon_query(x, "settle: the period", SQL_SETTLE_PERIOD, 5, pp);
    if (!r)
        return false;
    int64_t no_day = db_int(r, 0, 4);
    if (no_day > 0) {
        /* A row left out of every check would be money lost: the file's
         * reader handed over a time the server cannot read. */
        log_error("settle: %lld %s a time that is no date (nothing compared)", (long long)no_day,
                  no_day == 1 ? "row has" : "rows have");
        res->unreadable_time = true;
        db_result_free(&r);
        return false;
    }
    if (db_is_null(r, 0, 0)) {
        db_result_free(&r);
        return true;    /* no row: nothing to check */
    }
    snprintf(res->from, sizeof res->from, "%s", db_value(r, 0, 0));
    snprintf(res->to, sizeof res->to, "%s", db_value(r, 0, 1));
    res->has_bank = strcmp(db_value(r, 0, 2), "t") == 0;
    res->has_channel = strcmp(db_value(r, 0, 3), "t") == 0;
    db_result_free(&r);
    bool ok = recon_exec(x, "settle: fee_mismatch (--fee-rate)", SQL_SETTLE_FEE_RATE, 0, NULL) &&
              recon_exec(x, "settle: payout_mismatch", SQL_SETTLE_PAYOUT, 0, NULL) &&
              recon_exec(x, "settle: balance_break", SQL_SETTLE_BALANCE, 0, NULL) &&
              recon_exec(x, "settle: the batches", SQL_SETTLE_BATCHES, 0, NULL) &&
              recon_exec(x, "settle: the bank's credits", SQL_SETTLE_CREDITS, 0, NULL);
    /* Batches an earlier run left pending: a later day's bank statement may
     * credit them. */
    const char *state = ok && res->has_bank ? register_state(x) : "absent";
    ok = ok && state;
    if (ok && strcmp(state, "readable") == 0)
        ok = recon_exec(x, "settle: the register's pending batches", SQL_SETTLE_BATCHES_REGISTER,
                        0, NULL);
    ok = ok && recon_exec(x, "settle: matching by reference", SQL_SETTLE_MATCH_REF, 0, NULL) &&
         recon_exec(x, "settle: matching by amount", SQL_SETTLE_MATCH_ONE, 0, NULL) &&
         recon_exec(x, "settle: matching a day's batches", SQL_SETTLE_MATCH_DAY, 0, NULL);
    if (ok && res->has_bank)
        ok = recon_exec(x, "settle: payout_not_received", SQL_SETTLE_NOT_RECEIVED, 0, NULL);
    if (ok && res->has_channel)
        ok = recon_exec(x, "settle: unexpected_deposit", SQL_SETTLE_UNEXPECTED, 0, NULL);
    if (ok) {
        const char *kinds[] = {x->net_kinds[0]};
        ok = recon_exec(x, "settle: unsettled_payment (the pairs)", SQL_SETTLE_UNSETTLED_PREP,
                        1, kinds) &&
             recon_exec(x, "settle: unsettled_payment (the keys settled)",
                        SQL_SETTLE_UNSETTLED_LINKED, 0, NULL) &&
             (x->tool.t.distributed
                  ? recon_exec(x, "settle: unsettled_payment (the table's rows)",
                               SQL_SETTLE_UNSETTLED_ROWS_DISTRIBUTED, 0, NULL) &&
                        recon_exec(x, "settle: unsettled_payment",
                                   SQL_SETTLE_UNSETTLED_DISTRIBUTED, 1, kinds)
                  : recon_exec(x, "settle: unsettled_payment (the table's keys)",
                               SQL_SETTLE_UNSETTLED_KEYS, 0, NULL) &&
                        recon_exec(x, "settle: unsettled_payment", SQL_SETTLE_UNSETTLED, 1,
                                   kinds));
    }
    db_result *m = ok ? recon_query(x, "settle: the matches", SQL_SETTLE_MATCHED, 0, NULL) : NULL;
    if (!m)
        return false;
    res->matched_reference = (uint64_t)db_int(m, 0, 0);
    res->matched_amount = (uint64_t)db_int(m, 0, 1);
    res->matched_day = (uint64_t)db_int(m, 0, 2);
    res->day_credits = (uint64_t)db_int(m, 0, 3);
    res->batches = (uint64_t)db_int(m, 0, 4);
    db_result_free(&m);
    res->compared = true;
    return true;
}

static char *dup_value(const db_result *r, int i, int col, bool *oom)
{
    return db_is_null(r, i, col) ? NULL : recon_dup_or_null(db_value(r, i, col), oom);
}

/* Register items as lines (SQL_SETTLE_REG_CARRIED's or _RESOLVED's
 * columns): carried (with money and age) or resolved (with resolution). */
static bool read_items(recon_ctx *x, settle_lines *out, const char *tmpl, const char *what,
                       int64_t run_id, bool carried)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)run_id);
    db_result *r = recon_query(x, what, tmpl, carried ? 0 : 1, (const char *const[]){id});
    if (!r)
        return false;
    bool oom = false;
    for (int i = 0; !oom && i < db_nrows(r); i++) {
        settle_line l = {0};
        l.category = dup_value(r, i, 0, &oom);
        l.tenant_id = db_int(r, i, 1);
        l.channel = dup_value(r, i, 2, &oom);
        l.day = dup_value(r, i, 3, &oom);
        l.subject = dup_value(r, i, 4, &oom);
        l.currency = dup_value(r, i, 5, &oom);
        if (carried) {
            l.expected = dup_value(r, i, 6, &oom);
            l.actual = dup_value(r, i, 7, &oom);
            l.difference = dup_value(r, i, 8, &oom);
            l.first_seen = dup_value(r, i, 9, &oom);
            l.age_days = db_int(r, i, 10);
        } else {
            l.resolution = dup_value(r, i, 6, &oom);
        }
        oom = oom || !settle_lines_push(out, &l);
        settle_line_free(&l);
    }
    db_result_free(&r);
    if (oom)
        log_error("%s: out of memory", what);
    return !oom;
}

/* The files as a JSON array of paths and as [{path, digest}]. */
static bool files_json(const config *cfg, const run_report *rep, char **paths, char **files)
{
    json_t *p = json_array(), *f = json_array();
    for (size_t i = 0; p && f && i < cfg->n_files; i++) {
        json_array_append_new(p, json_string(cfg->files[i]));
        json_array_append_new(f, json_pack("{s:s, s:s?}", "path", cfg->files[i], "digest",
                                           rep->files[i].digest[0] ? rep->files[i].digest : NULL));
    }
    *paths = p ? json_dumps(p, JSON_COMPACT) : NULL;
    *files = f ? json_dumps(f, JSON_COMPACT) : NULL;
    json_decref(p);
    json_decref(f);
    return *paths && *files;
}

bool settle_register(recon_ctx *x, settle_result *res, const run_report *rep)
{
    if (!recon_exec(x, "settle: the register", SQL_SETTLE_REGISTER_CREATE, 0, NULL))
        return false;
    db_result *r = recon_query(x, "settle: the run's number", SQL_SETTLE_RUN_ID, 0, NULL);
    if (!r)
        return false;
    res->run_id = db_int(r, 0, 1);
    db_result_free(&r);
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)res->run_id);
    char *paths = NULL, *files = NULL;
    if (!files_json(x->cfg, rep, &paths, &files)) {
        free(paths);
        free(files);
        log_error("settle: out of memory");
        return false;
    }
    const char *p1[] = {id};
    const char *p2[] = {id, paths};
    const char *p3[] = {id, files};
    bool ok = recon_exec(x, "settle: superseding the days' earlier runs", SQL_SETTLE_REG_SUPERSEDE,
                         1, p1) &&
              recon_exec(x, "settle: the batches credited", SQL_SETTLE_REG_CREDITED, 1, p1) &&
              recon_exec(x, "settle: resolving what was fixed", SQL_SETTLE_REG_RESOLVE, 1, p1);
    db_result *u = ok ? recon_query(x, "settle: the register's items", SQL_SETTLE_REG_UPSERT, 2, p2)
                      : NULL;
    ok = ok && u;
    if (u)
        res->opened = (uint64_t)db_nrows(u);
    db_result_free(&u);
    db_result *e = ok ? recon_query(x, "settle: escalating", SQL_SETTLE_REG_ESCALATE, 1, p1) : NULL;
    ok = ok && e;
    if (e)
        res->escalated = (uint64_t)db_nrows(e);
    db_result_free(&e);
    ok = ok && recon_exec(x, "settle: the run's days", SQL_SETTLE_REG_RUNS, 2, p3) &&
         read_items(x, &res->carried, SQL_SETTLE_REG_CARRIED, "settle: carried over",
                    res->run_id, true) &&
         read_items(x, &res->resolved, SQL_SETTLE_REG_RESOLVED, "settle: resolved", res->run_id,
                    false);
    free(paths);
    free(files);
    res->registered = ok;
    return ok;
}

bool settle_read_register(recon_ctx *x, settle_result *res)
{
    const char *state = register_state(x);
    if (!state)
        return false;
    if (strcmp(state, "denied") == 0)
        res->carried_unknown = true;
    if (strcmp(state, "readable") != 0)
        return true;
    return read_items(x, &res->carried, SQL_SETTLE_REG_CARRIED, "settle: carried over", 0, true);
}

static bool gather_days(recon_ctx *x, settle_result *res)
{
    db_result *r = recon_query(x, "settle: the days", SQL_SETTLE_DAYS, 0, NULL);
    if (!r)
        return false;
    int n = db_nrows(r);
    bool oom = false;
    res->days = calloc(n ? (size_t)n : 1, sizeof *res->days);
    oom = !res->days;
    for (int i = 0; !oom && i < n; i++) {
        settle_day *d = &res->days[res->n_days++];
        d->tenant_id = db_int(r, i, 0);
        d->channel = dup_value(r, i, 1, &oom);
        d->day = dup_value(r, i, 2, &oom);
        d->rows = db_int(r, i, 3);
        d->categories = dup_value(r, i, 4, &oom);
        d->pending = db_int(r, i, 5);
        d->matched = db_int(r, i, 6);
        d->amounts = dup_value(r, i, 7, &oom);
    }
    db_result_free(&r);
    if (oom)
        log_error("settle: out of memory gathering the days");
    return !oom;
}

/* Row i of SQL_SETTLE_LINES as a line. */
static bool line_of(const recon_ctx *x, const db_result *r, int i, settle_line *l)
{
    bool oom = false;
    l->category = dup_value(r, i, 0, &oom);
    l->tenant_id = db_int(r, i, 1);
    l->channel = dup_value(r, i, 2, &oom);
    l->day = dup_value(r, i, 3, &oom);
    l->subject = dup_value(r, i, 4, &oom);
    l->currency = dup_value(r, i, 5, &oom);
    l->expected = dup_value(r, i, 6, &oom);
    l->actual = dup_value(r, i, 7, &oom);
    l->difference = dup_value(r, i, 8, &oom);
    int64_t file_no = db_is_null(r, i, 9) ? 0 : db_int(r, i, 9);
    l->file = file_no > 0 && (size_t)file_no <= x->cfg->n_files
                  ? recon_dup_or_null(x->cfg->files[file_no - 1], &oom)
                  : NULL;
    l->line = db_is_null(r, i, 10) ? 0 : db_int(r, i, 10);
    l->detail = dup_value(r, i, 11, &oom);
    l->pending = strcmp(db_value(r, i, 12), "t") == 0;
    l->first_seen = dup_value(r, i, 13, &oom);
    return !oom;
}

bool settle_gather(recon_ctx *x, settle_result *res, settle_disc **wp, bool *io_failed)
{
    *io_failed = false;
    if (!gather_days(x, res))
        return false;
    buf err = BUF_INIT;
    const char *path = x->cfg->discrepancies_path;
    if (path && !(*wp = settle_disc_open(path, &err))) {
        log_error("%s", buf_cstr(&err));
        buf_free(&err);
        *io_failed = true;
        return false;
    }
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)res->run_id);
    const char *p[] = {id};
    db_result *r = res->registered
                       ? recon_query(x, "settle: the lines", SQL_SETTLE_LINES, 1, p)
                       : recon_query(x, "settle: the lines", SQL_SETTLE_LINES_UNREGISTERED, 0, NULL);
    if (!r) {
        buf_free(&err);
        return false;
    }
    uint64_t kept[SETTLE_CATEGORY_COUNT + 1] = {0};
    bool ok = true;
    for (int i = 0; ok && i < db_nrows(r); i++) {
        settle_line l = {0};
        ok = line_of(x, r, i, &l);
        int c = settle_category_of(l.category);
        int slot = l.pending ? SETTLE_CATEGORY_COUNT : c < 0 ? 0 : c;
        if (l.pending)
            res->pending++;
        else if (c >= 0)
            res->count[c]++;
        if (ok && !l.pending && *wp && !settle_disc_write(*wp, &l, &err)) {
            *io_failed = true;
            ok = false;
        }
        if (ok && kept[slot] < SETTLE_EXAMPLES) {
            kept[slot]++;
            ok = settle_lines_push(&res->examples, &l);
        }
        settle_line_free(&l);
    }
    db_result_free(&r);
    if (ok && *wp && !settle_disc_finish(*wp, &err)) {
        *io_failed = true;
        ok = false;
    }
    if (!ok)
        log_error("%s", err.len ? buf_cstr(&err) : "settle: out of memory gathering the lines");
    buf_free(&err);
    return ok;
}
