/*
 * settle.c - the coordinator of `idemload settle` (see settle.h).
 *
 * One connection, one transaction, as reconcile's (recon.c), on the same
 * session helpers (recon_session.h): the files' rows are COPYed into a
 * temporary table as they are read, the checks are set-based statements
 * on the server (settle_sql.h), the register is written in the same
 * transaction, the discrepancies file made durable before it commits; a
 * dry run rolls everything back.
 */
#include "settle/settle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/target.h"
#include "input/profile.h"
#include "output/log.h"
#include "output/progress.h"
#include "output/report.h"
#include "recon/facts.h"
#include "recon/recon_gather.h"
#include "recon/recon_session.h"
#include "rules/timezone.h"
#include "settle/settle_check.h"
#include "settle/settle_opts.h"
#include "settle/settle_render.h"
#include "settle/settle_result.h"
#include "settle/settle_stage.h"
#include "tools/tools_shared.h"
#include "util/clock.h"
#include "util/exitcodes.h"
#include "util/signals.h"

/* What the options say, checked before anything is read. */
typedef struct settle_opts {
    fee_rate rates[MAX_FEE_RATES];
    size_t n_rates;
    int64_t window_min, window_max, grace_s;
    char from[11], to[11];
    bool period;
} settle_opts;

static int prepare(const config *cfg, settle_opts *o, settle_result *res, facts_map *tf)
{
    buf err = BUF_INIT;
    int code = EXIT_OK;
    const char *zone = cfg->profile ? cfg->profile->timezone : NULL;
    if (cfg->timezone)
        zone = cfg->timezone;
    tz_zone z;
    if (zone && !tz_resolve(zone, &z, &err)) {
        code = EXIT_USAGE;
        goto out;
    }
    if (zone)
        tz_free(&z);
    res->zone = strdup(zone ? zone : "UTC");
    res->zone_given = zone != NULL;
    if (!res->zone) {
        buf_printf(&err, "out of memory");
        code = EXIT_INPUT;
        goto out;
    }
    for (size_t i = 0; code == EXIT_OK && i < cfg->n_fee_rate; i++) {
        if (!settle_parse_fee_rate(cfg->fee_rate[i], &o->rates[i], &err))
            code = EXIT_USAGE;
        for (size_t k = 0; code == EXIT_OK && k < i; k++)
            if (strcmp(o->rates[k].channel, o->rates[i].channel) == 0) {
                buf_printf(&err, "--fee-rate %s is given twice", o->rates[i].channel);
                code = EXIT_USAGE;
            }
        o->n_rates = i + 1;
    }
    o->grace_s = 2 * 86400;
    if (code == EXIT_OK &&
        (!settle_parse_window(cfg->settle_window, &o->window_min, &o->window_max, &err) ||
         (cfg->period && !recon_parse_period(cfg->period, o->from, o->to, &err)) ||
         (cfg->grace && !recon_parse_duration(cfg->grace, &o->grace_s, &err)) ||
         !facts_load(cfg->facts_path, tf, &err)))
        code = EXIT_USAGE;
    o->period = cfg->period != NULL;
    if (code == EXIT_OK && cfg->presets.value[COL_TENANT_ID] == NULL && cfg->profile &&
        cfg->profile->tenants) {
        buf_printf(&err, "settle takes the tenant from the file or --set tenant_id=N, not "
                         "--tenant-map");
        code = EXIT_USAGE;
    }
out:
    if (code != EXIT_OK)
        log_error("%s", buf_cstr(&err));
    buf_free(&err);
    return code;
}

/* Stages each file; the first that fails stops the run (*code its status)
 * and each after it says it was not read. */
static bool stage_files(recon_ctx *x, progress *prog, settle_result *res, run_report *rep,
                        int *code)
{
    const config *cfg = x->cfg;
    const char *tenant = cfg->presets.value[COL_TENANT_ID];
    for (size_t i = 0; i < cfg->n_files; i++) {
        int c = settle_stage_file(x, prog, i, tenant, &rep->files[i], res);
        if (c == EXIT_OK)
            continue;
        *code = c;
        for (size_t k = i + 1; k < cfg->n_files; k++) {
            rep->files[k].path = cfg->files[k];
            rep->files[k].status = FILE_FAILED;
            file_report_set_error(&rep->files[k], "not read: an earlier file failed, so "
                                                  "nothing was compared");
        }
        return false;
    }
    return true;
}

/* Commits (or, on a dry run or a failure, rolls back), then publishes or
 * discards the discrepancies file.  Returns the run's status. */
static int end_run(recon_ctx *x, settle_result *res, bool ok, int code, settle_disc **disc)
{
    if (ok && recon_interrupted(x, "settle"))
        ok = false;
    if (!ok && code == EXIT_OK)
        code = x->failed_logged ? db_failure_exit(x->tool.d) : EXIT_DATABASE;
    if (ok && !x->cfg->dry_run) {
        if (!db_commit(x->tool.d)) {
            code = tool_db_failure(x->tool.d, "settle: COMMIT");
            ok = false;
        }
    } else if (x->tool.d) {
        db_rollback(x->tool.d);
    }
    if (code == EXIT_OK && !ok)
        code = EXIT_DATABASE;
    if (!ok) {
        res->registered = false;
        res->run_id = 0;
    }
    if (ok && *disc) {
        buf perr = BUF_INIT;
        if (!settle_disc_publish(disc, &perr)) {
            log_error("%s", buf_cstr(&perr));
            code = EXIT_INPUT;
        }
        buf_free(&perr);
    }
    settle_disc_discard(disc);
    return code;
}

static int settle(recon_ctx *x, progress *prog, settle_result *res, run_report *rep,
                  const settle_opts *o, const facts_map *tf)
{
    const config *cfg = x->cfg;
    int code = recon_session_begin(x, rep, settle_register_names, "settle");
    if (code != EXIT_OK)
        return code;
    stmt_facts none = {0};
    x->sql_zone = recon_zone_for_sql(res->zone);
    x->net_kinds[0] = recon_kind_names_json(cfg, "pay");
    bool ok = x->sql_zone && x->net_kinds[0] &&
              recon_stage_setup(x, x->sql_zone, o->grace_s, tf, &none) &&
              settle_setup(x, o->rates, o->n_rates);
    if (ok)
        ok = stage_files(x, prog, res, rep, &code);
    if (ok) {
        ok = settle_checks(x, res, o->window_min, o->window_max, o->grace_s,
                           o->period ? o->from : NULL, o->period ? o->to : NULL);
        if (!ok && res->unreadable_time)
            code = EXIT_INPUT;
    }
    if (ok && res->compared && !cfg->dry_run)
        ok = settle_register(x, res, rep);
    else if (ok && res->compared)
        ok = settle_read_register(x, res);
    settle_disc *disc = NULL;
    if (ok && res->compared) {
        bool io_failed;
        ok = settle_gather(x, res, &disc, &io_failed);
        if (!ok && io_failed)
            code = EXIT_INPUT;
    }
    return end_run(x, res, ok, code, &disc);
}

static bool report_init(const config *cfg, run_report *rep, settle_result *res)
{
    if (!run_report_init(rep, cfg->n_files))
        return false;
    res->files = calloc(cfg->n_files ? cfg->n_files : 1, sizeof *res->files);
    if (!res->files)
        return false;
    res->n_files = cfg->n_files;
    rep->validate_only = true;
    rep->reconcile = true;
    rep->settle = true;
    rep->dry_run = cfg->dry_run;
    rep->target = strdup(cfg->table);
    for (size_t i = 0; i < cfg->n_files; i++) {
        rep->files[i].path = cfg->files[i];
        rep->files[i].format = cfg->profile ? cfg->profile->name : "unread";
        rep->files[i].status = FILE_FAILED;
        res->files[i].path = cfg->files[i];
    }
    return true;
}

static void ctx_free(recon_ctx *x)
{
    tool_close(&x->tool);
    buf_free(&x->item);
    buf_free(&x->run);
    buf_free(&x->item_index);
    buf_free(&x->run_index);
    buf_free(&x->item_name);
    buf_free(&x->run_name);
    free(x->sql_zone);
    free(x->net_kinds[0]);
    free(x->net_kinds[1]);
}

int settle_run(const config *cfg)
{
    settle_result res = {.dry_run = cfg->dry_run};
    facts_map tf = {0};
    settle_opts o;
    memset(&o, 0, sizeof o);
    run_report rep;
    if (!report_init(cfg, &rep, &res)) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    recon_ctx x = {.cfg = cfg};
    progress prog;
    progress_init(&prog, cfg->quiet);
    double t0 = now_seconds();
    int code = prepare(cfg, &o, &res, &tf);
    if (code == EXIT_OK)
        code = settle(&x, &prog, &res, &rep, &o, &tf);
    progress_done(&prog);
    if (res.compared && settle_has_discrepancies(&res))
        code = exit_worst(code, EXIT_DISCREPANCIES);
    rep.elapsed_s = now_seconds() - t0;
    run_report_total(&rep);
    code = exit_worst(code, settle_render_outputs(cfg, &res, &rep, code));
    ctx_free(&x);
    run_report_free(&rep);
    settle_result_free(&res);
    facts_free(&tf);
    return code;
}
