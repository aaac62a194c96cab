/*
 * recon_register.c - the register beside the ledger (see recon_register.h):
 * the items each run opens, finds again, escalates and resolves, one row
 * per (tenant, channel, day) for each run, and what a run reads back of
 * it for its outputs: the lines' first_seen, what appeared, what was
 * resolved, what is carried over.
 */
#include "recon/recon_register.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/recon_sql.h"
#include "db/target.h"
#include "output/log.h"
#include "recon/recon_render.h"

bool recon_register_names(recon_ctx *x)
{
    const target *t = &x->tool.t;
    db *d = x->tool.d;
    bool ok = true;
    const struct {
        buf *quoted;
        buf *text;
        const char *name;
    } names[] = {{&x->item, &x->item_name, "idemload_recon_item"},
                 {&x->run, &x->run_name, "idemload_recon_run"},
                 {&x->item_index, NULL, "idemload_recon_item_open"},
                 {&x->run_index, NULL, "idemload_recon_run_day"}};
    for (size_t i = 0; ok && i < sizeof names / sizeof names[0]; i++) {
        if (names[i].text) {
            ok = db_append_ident(d, names[i].quoted, t->schema) &&
                 buf_append_char(names[i].quoted, '.') &&
                 db_append_ident(d, names[i].quoted, names[i].name);
            ok = ok && buf_append_str(names[i].text, buf_cstr(names[i].quoted));
        } else {
            ok = db_append_ident(d, names[i].quoted, names[i].name);
        }
    }
    if (!ok)
        log_error("reconcile: out of memory");
    return ok;
}

const char *recon_register_state(recon_ctx *x)
{
    if (x->reg_state[0])
        return x->reg_state;
    db_result *r = recon_query(x, "reconcile: the register", SQL_RECON_REGISTER_READABLE, 1,
                               (const char *const[]){buf_cstr(&x->item_name)});
    if (!r)
        return NULL;
    snprintf(x->reg_state, sizeof x->reg_state, "%s", db_value(r, 0, 0));
    db_result_free(&r);
    return x->reg_state;
}

/* The files as a JSON array of paths ($2 of the item statements) and as
 * [{"path", "digest"}] for the run rows. */
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

/* The run rows: one per (tenant, channel, day). */
static bool write_runs(recon_ctx *x, const recon_result *res, const char *run_id, const char *files)
{
    json_t *days = json_array();
    for (size_t i = 0; days && i < res->n_days; i++) {
        const recon_day *d = &res->days[i];
        bool balanced = recon_day_balanced(d);
        json_t *cats = json_object();
        for (int c = 0; c < CAT_COUNT; c++) {
            if (!d->cat_count[c])
                continue;
            json_t *amounts = json_loads(d->cat_amounts[c] ? d->cat_amounts[c] : "{}", 0, NULL);
            json_object_set_new(cats, recon_category_name((recon_category)c),
                                json_pack("{s:I, s:s?, s:o?}", "count", (json_int_t)d->cat_count[c],
                                          "amount", d->cat_amount[c], "amounts", amounts));
        }
        json_array_append_new(
            days, json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:I, s:o}", "tenant_id",
                            (json_int_t)d->tenant_id, "channel", d->channel, "day", d->day,
                            "verdict", balanced ? "balanced" : "discrepancies", "statement",
                            recon_side_json(&d->statement), "table_side",
                            recon_side_json(&d->table),
                            "matched", (json_int_t)d->matched, "unverified",
                            (json_int_t)d->unverified, "pending", (json_int_t)d->pending,
                            "categories", cats));
    }
    char *text = days ? json_dumps(days, JSON_COMPACT) : NULL;
    json_decref(days);
    if (!text) {
        log_error("reconcile: out of memory");
        return false;
    }
    const char *p[] = {run_id, files, text};
    bool ok = recon_exec(x, "reconcile: the register's runs", SQL_RECON_REG_RUNS, 3, p);
    free(text);
    return ok;
}

/* The register's items of r (columns: category, tenant_id, channel,
 * out_trade_no, callback_type, day, age in days, difference, first_seen,
 * and the resolution in column resolution_col unless it is -1) into *out:
 * false when memory runs out (logged). */
static bool read_items(db_result *r, int resolution_col, recon_items *out)
{
    int n = db_nrows(r);
    bool oom = false;
    out->items = calloc(n ? (size_t)n : 1, sizeof *out->items);
    oom = !out->items;
    for (int i = 0; !oom && i < n; i++) {
        recon_carried *c = &out->items[out->n++];
        c->category = recon_dup_or_null(db_value(r, i, 0), &oom);
        c->tenant_id = db_int(r, i, 1);
        c->channel = recon_dup_or_null(db_value(r, i, 2), &oom);
        c->out_trade_no = db_is_null(r, i, 3) ? NULL : recon_dup_or_null(db_value(r, i, 3), &oom);
        c->callback_type = db_is_null(r, i, 4) ? NULL : recon_dup_or_null(db_value(r, i, 4), &oom);
        snprintf(c->day, sizeof c->day, "%s", db_value(r, i, 5));
        c->age_days = db_int(r, i, 6);
        c->difference = db_is_null(r, i, 7) ? NULL : recon_dup_or_null(db_value(r, i, 7), &oom);
        c->first_seen = recon_dup_or_null(db_value(r, i, 8), &oom);
        if (resolution_col >= 0 && !db_is_null(r, i, resolution_col))
            c->resolution = recon_dup_or_null(db_value(r, i, resolution_col), &oom);
    }
    if (oom)
        log_error("reconcile: out of memory");
    return !oom;
}

static bool gather_carried(recon_ctx *x, recon_result *res, const char *sql)
{
    char limit[16];
    snprintf(limit, sizeof limit, "%d", RECON_CARRIED_LISTED);
    const char *params[] = {res->from, res->to, limit};
    db_result *r = recon_query(x, "reconcile: carried-over discrepancies", sql, 3, params);
    if (!r)
        return false;
    if (db_nrows(r) > 0) {
        res->carried_over = (uint64_t)db_int(r, 0, 9);
        res->carried_oldest = db_int(r, 0, 10);
    }
    recon_items got = {0};
    bool ok = read_items(r, -1, &got);
    res->carried = got.items;
    res->n_carried = got.n;
    db_result_free(&r);
    return ok;
}

/* What this run's register changed (SQL_RECON_REG_APPEARED or _RESOLVED):
 * the first RECON_CARRIED_LISTED items, and how many. */
static bool gather_changed(recon_ctx *x, const char *what, const char *sql, const char *run_id,
                           recon_items *out)
{
    char limit[16];
    snprintf(limit, sizeof limit, "%d", RECON_CARRIED_LISTED);
    db_result *r = recon_query(x, what, sql, 2, (const char *const[]){run_id, limit});
    if (!r)
        return false;
    if (db_nrows(r) > 0)
        out->total = (uint64_t)db_int(r, 0, 10);
    bool ok = read_items(r, 9, out);
    db_result_free(&r);
    return ok;
}

/* The register's open items this run found again, brought up to date;
 * res->seen_again: there were some. */
static bool seen_again(recon_ctx *x, recon_result *res, const char *const *ip)
{
    db_result *r =
        recon_query(x, "reconcile: register (items seen again)", SQL_RECON_REG_UPSERT, 2, ip);
    if (!r)
        return false;
    res->seen_again = db_int(r, 0, 0) > 0;
    db_result_free(&r);
    return true;
}

bool recon_write_register(recon_ctx *x, recon_result *res, const run_report *rep)
{
    db_result *r =
        recon_query(x, "reconcile: the register", SQL_RECON_REGISTER_EXISTS, 2,
                    (const char *const[]){buf_cstr(&x->item_name), buf_cstr(&x->run_name)});
    if (!r)
        return false;
    bool exists = strcmp(db_value(r, 0, 0), "t") == 0;
    bool current = strcmp(db_value(r, 0, 1), "t") == 0;
    db_result_free(&r);
    if (!exists && !recon_exec(x, "reconcile: creating the register (CREATE on the target's "
                                  "schema is needed once, or a --dry-run)",
                               SQL_RECON_REGISTER_CREATE, 0, NULL))
        return false;
    if (exists && !current &&
        !recon_exec(x, "reconcile: adding reported_by to the register (its owner's ALTER is "
                       "needed once)", SQL_RECON_REGISTER_UPGRADE, 0, NULL))
        return false;
    if (!recon_exec(x, "reconcile: the register's run number (waiting for another run)",
                    SQL_RECON_RUN_LOCK, 0, NULL))
        return false;
    r = recon_query(x, "reconcile: the register's run number", SQL_RECON_RUN_ID, 0, NULL);
    if (!r)
        return false;
    res->run_id = db_int(r, 0, 0);
    db_result_free(&r);
    char run_id[32];
    snprintf(run_id, sizeof run_id, "%lld", (long long)res->run_id);
    char *paths = NULL, *files = NULL;
    bool ok = files_json(x->cfg, rep, &paths, &files);
    if (!ok)
        log_error("reconcile: out of memory");
    const char *rp[] = {run_id, res->from, res->to};
    const char *ip[] = {run_id, paths, res->from, res->to};
    ok = ok &&
         recon_exec(x, "reconcile: analyzing the register", SQL_RECON_ANALYZE_ITEM, 0, NULL) &&
         recon_exec(x, "reconcile: register (resolving listed items)",
                    SQL_RECON_REG_RESOLVE_LISTED, 3, rp) &&
         recon_exec(x, "reconcile: register (superseding)", SQL_RECON_REG_SUPERSEDE, 3, rp) &&
         recon_exec(x, "reconcile: register (escalated in the period)",
                    SQL_RECON_REG_ESCALATING, 0, NULL) &&
         recon_exec(x, "reconcile: register (escalating)", SQL_RECON_REG_ESCALATE, 2, rp) &&
         seen_again(x, res, ip) &&
         recon_exec(x, "reconcile: register (new items)",
                    res->seen_again ? SQL_RECON_REG_INSERT_NEW : SQL_RECON_REG_INSERT_ALL, 2,
                    ip) &&
         recon_exec(x, "reconcile: register (keys listed on another day than their row's)",
                    SQL_RECON_REG_LISTED_ELSEWHERE, 4, ip) &&
         /* the lines' cursor joins the items when some were seen again */
         (!res->seen_again ||
          recon_exec(x, "reconcile: analyzing the register", SQL_RECON_ANALYZE_ITEM, 0, NULL)) &&
         write_runs(x, res, run_id, files);
    free(paths);
    free(files);
    if (!ok)
        return false;
    if (!recon_exec(x, "reconcile: register (what appeared)", SQL_RECON_REG_APPEARING, 1,
                    (const char *const[]){run_id}) ||
        !gather_changed(x, "reconcile: register (what appeared)", SQL_RECON_REG_APPEARED, run_id,
                        &res->appeared_items) ||
        !gather_changed(x, "reconcile: register (what was resolved)", SQL_RECON_REG_RESOLVED,
                        run_id, &res->resolved_items))
        return false;
    res->appeared = res->appeared_items.total;
    res->resolved = res->resolved_items.total;
    r = recon_query(x, "reconcile: register (escalated)", SQL_RECON_REG_ESCALATED_EARLIER, 0, NULL);
    if (!r)
        return false;
    res->escalated = (uint64_t)db_int(r, 0, 0);
    db_result_free(&r);
    res->registered = true;
    return gather_carried(x, res, SQL_RECON_REG_CARRIED);
}

bool recon_read_register(recon_ctx *x, recon_result *res)
{
    const char *state = recon_register_state(x);
    if (!state)
        return false;
    bool readable = strcmp(state, "readable") == 0;
    if (strcmp(state, "denied") == 0) {
        log_warn("reconcile --dry-run: this role may not read the register (%s): what earlier "
                 "runs left open is not known, and carried over is given as 0; nor which of the "
                 "table's rows statements of other days listed, so such a row the statement "
                 "lacks is counted as a run without the register would count it",
                 buf_cstr(&x->item_name));
        res->carried_unknown = true;
    }
    return !readable || gather_carried(x, res, SQL_RECON_DRY_CARRIED);
}
