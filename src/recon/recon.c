/*
 * recon.c - the coordinator of `idemload reconcile` (see recon.h).
 *
 * One connection, one transaction: the statement's valid rows are COPYed
 * into a temporary table as they are read (memory stays at one COPY
 * buffer), the comparison is a handful of set-based statements on the
 * server (recon_sql.h), and only its figures and discrepancy lines come
 * back.  Then the register is written in the same transaction, the
 * discrepancies file made durable before that transaction commits, and a
 * dry run rolls everything back instead.  --repair runs the import
 * pipeline afterwards, on its own connection, as import would.
 *
 * This file is the command: the run's order, --repair and the outputs.
 * Its parts do the work on the session (recon_session.h): reading the
 * statement (recon_read.c), the comparison and its gathering
 * (recon_gather.c), the register (recon_register.c).
 */
#include "recon/recon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats.h"
#include "db/db.h"
#include "db/recon_sql.h"
#include "db/target.h"
#include "input/profile.h"
#include "load/seen.h"
#include "output/log.h"
#include "output/report.h"
#include "pipeline/pipeline.h"
#include "recon/facts.h"
#include "recon/recon_gather.h"
#include "recon/recon_read.h"
#include "recon/recon_register.h"
#include "recon/recon_render.h"
#include "recon/recon_result.h"
#include "recon/recon_session.h"
#include "recon/stmt_texts.h"
#include "rules/timezone.h"
#include "tools/tools_shared.h"
#include "util/clock.h"
#include "util/exitcodes.h"
#include "util/fault.h"
#include "util/signals.h"

/* --repair: the import pipeline over the same files, after the comparison
 * committed: missing inserts only keys the table lacks (the merge's
 * --on-conflict nothing: no existing row changes); merge is import.  What
 * it mended is asked of the table afterwards (mend_register), not of the
 * pipeline's account, which a resumed file fills with an earlier run's
 * rows. */
static int repair(const config *cfg, run_report *rep)
{
    config c = *cfg;
    c.cmd = CMD_IMPORT;
    if (cfg->repair == REPAIR_MISSING)
        c.conflict = CONFLICT_NOTHING;
    c.force = true;   /* a file the ledger holds is repaired all the same */
    run_report r2;
    if (!run_report_init(&r2, cfg->n_files)) {
        run_report_free(&r2);
        log_error("out of memory");
        return EXIT_INPUT;
    }
    int code = pipeline_import(&c, &r2);
    for (size_t i = 0; i < cfg->n_files; i++) {
        load_counts *to = &rep->files[i].counts;
        const load_counts *from = &r2.files[i].counts;
        to->inserted = from->inserted;
        to->updated = from->updated;
        to->unchanged = from->unchanged;
        to->stale = from->stale;
        to->existing = from->existing;
        to->chunks = from->chunks;
    }
    run_report_free(&r2);
    return code;
}

/* The keys the repair inserted (SQL_RECON_REPAIR_INSERTED): the first
 * RECON_REPAIR_LISTED into res->repaired_keys.  EXIT_OK, the database's
 * status, or EXIT_INPUT out of memory (logged). */
static int gather_inserted(recon_ctx *x, recon_result *res)
{
    char limit[16];
    snprintf(limit, sizeof limit, "%d", RECON_REPAIR_LISTED);
    db_result *r = recon_query(x, "--repair: the rows it inserted", SQL_RECON_REPAIR_INSERTED, 1,
                               (const char *const[]){limit});
    if (!r)
        return db_failure_exit(x->tool.d);
    int n = db_nrows(r);
    bool oom = false;
    res->repaired_keys = calloc(n ? (size_t)n : 1, sizeof *res->repaired_keys);
    oom = !res->repaired_keys;
    for (int i = 0; !oom && i < n; i++) {
        recon_key *k = &res->repaired_keys[res->n_repaired_keys++];
        k->tenant_id = db_int(r, i, 0);
        k->channel = recon_dup_or_null(db_value(r, i, 1), &oom);
        k->out_trade_no = recon_dup_or_null(db_value(r, i, 2), &oom);
        k->callback_type = recon_dup_or_null(db_value(r, i, 3), &oom);
        int64_t file_no = db_is_null(r, i, 4) ? 0 : db_int(r, i, 4);
        k->file = file_no > 0 && (size_t)file_no <= x->cfg->n_files
                      ? recon_dup_or_null(x->cfg->files[file_no - 1], &oom)
                      : NULL;
        k->line = db_is_null(r, i, 5) ? 0 : db_int(r, i, 5);
    }
    db_result_free(&r);
    if (oom)
        log_error("--repair: out of memory listing the inserted rows");
    return oom ? EXIT_INPUT : EXIT_OK;
}

/* The register's items the repair mended, resolved (SQL_RECON_REG_REPAIRED)
 * in a transaction of its own whose joins are hashed: taking the items'
 * keys joined with the rows read again for one row, the planner looked up
 * every item of the day for each key (20,000 missing rows repaired: 80 s
 * in a statement that takes a tenth of a second). */
static bool resolve_repaired(recon_ctx *x, const char *run_id)
{
    const char *what = "--repair: resolving the register's items it repaired";
    if (!db_begin(x->tool.d)) {
        tool_db_failure(x->tool.d, what);
        return false;
    }
    bool ok = recon_exec(x, what, SQL_RECON_HASH_ONLY, 0, NULL) &&
              recon_exec(x, what, SQL_RECON_REG_REPAIRED, 1, (const char *const[]){run_id});
    if (ok && !db_commit(x->tool.d)) {
        tool_db_failure(x->tool.d, what);
        ok = false;
    }
    if (!ok)
        db_rollback(x->tool.d);
    return ok;
}

/* After a repair, whole or cut short: the table's rows of this run's
 * missing_in_table and mismatch lines read again and compared with the
 * statement (SQL_RECON_REG_REPAIRED); the items they now agree with are
 * resolved and counted in the run's resolved, the missing keys the table
 * now holds are the rows it inserted (res->repaired, repaired_keys).  The
 * reconcile's own connection, its transaction committed.  EXIT_OK or the
 * database's status. */
static int mend_register(recon_ctx *x, recon_result *res)
{
    if (!res->registered || !x->tool.d)
        return EXIT_OK;
    signals_set_hook(db_cancel, x->tool.d);
    char run_id[32];
    snprintf(run_id, sizeof run_id, "%lld", (long long)res->run_id);
    const char *what = "--repair: the table's rows of the keys it repaired";
    bool ok = recon_exec(x, what, SQL_RECON_REPAIR_KEYS, 0, NULL) &&
              recon_exec(x, what,
                         x->tool.t.distributed ? SQL_RECON_REPAIR_ROWS_DISTRIBUTED
                                               : SQL_RECON_REPAIR_ROWS,
                         0, NULL) &&
              resolve_repaired(x, run_id);
    db_result *r = ok ? recon_query(x, what, SQL_RECON_REPAIR_MENDED, 0, NULL) : NULL;
    if (!r)
        return db_failure_exit(x->tool.d);
    res->repaired = (uint64_t)db_int(r, 0, 0);
    uint64_t n = (uint64_t)db_int(r, 0, 1);
    db_result_free(&r);
    res->resolved += n;
    res->resolved_items.total += n;
    res->repair_resolved = n;
    return gather_inserted(x, res);
}

/* Once the run's outputs are written (the summary, and the report, page
 * and discrepancies file asked for): the items they showed as appeared
 * are reported by this run (SQL_RECON_REG_REPORTED), in a transaction of
 * their own.  Until then, or when an output failed or the run was killed,
 * they stay unreported, and the next run of their pair lists them as
 * appeared again: shown at least once, never lost (SPEC "Across days").
 * A failure here only means they are shown again: a warning. */
static void mark_reported(recon_ctx *x, const recon_result *res)
{
    if (!res->registered || !x->tool.d || signals_interrupted())
        return;
    char run_id[32];
    snprintf(run_id, sizeof run_id, "%lld", (long long)res->run_id);
    buf sql = BUF_INIT;
    db_result *r = NULL;
    if (recon_sql_render(x, &sql, SQL_RECON_REG_REPORTED))
        r = db_query(x->tool.d, buf_cstr(&sql), 1, (const char *const[]){run_id});
    if (!r)
        log_warn("reconcile: could not record that run %s's outputs showed what appeared; the "
                 "next run of its pairs lists it as appeared again", run_id);
    db_result_free(&r);
    buf_free(&sql);
}

/* The profile's status map read backwards into res->statuses: for each
 * status number its source values, in the profile's order, "/" between
 * them (WeChat's 2: "SUCCESS/REVOKED").  A status the map yields through
 * a template ("{column}") has no word.  False when out of memory. */
static bool status_words(const profile *pf, recon_result *res)
{
    const column_rule *rule = pf ? &pf->col[COL_STATUS] : NULL;
    for (size_t i = 0; rule && i < rule->n_map; i++) {
        const map_entry *e = &rule->map[i];
        char *end = NULL;
        long v = e->n_result ? strtol(e->result[0], &end, 10) : 0;
        if (!e->n_result || end == e->result[0] || *end || v < INT16_MIN || v > INT16_MAX)
            continue;
        recon_status_word *w = NULL;
        for (size_t k = 0; k < res->n_statuses; k++)
            if (res->statuses[k].status == (int)v)
                w = &res->statuses[k];
        if (!w) {
            recon_status_word *grown =
                realloc(res->statuses, (res->n_statuses + 1) * sizeof *grown);
            if (!grown)
                return false;
            res->statuses = grown;
            w = &res->statuses[res->n_statuses++];
            w->status = (int)v;
            w->words = strdup(e->match);
            if (!w->words)
                return false;
            continue;
        }
        size_t a = strlen(w->words), b = strlen(e->match);
        char *joined = realloc(w->words, a + b + 2);
        if (!joined)
            return false;
        joined[a] = '/';
        memcpy(joined + a + 1, e->match, b + 1);
        w->words = joined;
    }
    return true;
}

/* Reads the configuration the command needs beyond the CLI's checks. */
static int prepare(const config *cfg, recon_result *res, facts_map *tf, stmt_facts *sf,
                   int64_t *grace_s)
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
    if (!res->zone || !stmt_facts_from_profile(cfg->profile, cfg, sf) ||
        !status_words(cfg->profile, res)) {
        buf_printf(&err, "out of memory");
        code = EXIT_INPUT;
        goto out;
    }
    *grace_s = 2 * 86400;
    if ((cfg->period && !recon_parse_period(cfg->period, res->from, res->to, &err)) ||
        (cfg->grace && !recon_parse_duration(cfg->grace, grace_s, &err)) ||
        !facts_load(cfg->facts_path, tf, &err))
        code = EXIT_USAGE;
    if (cfg->dry_run && cfg->repair != REPAIR_NONE) {
        buf_printf(&err, "--repair writes the table; --dry-run writes nothing: choose one");
        code = EXIT_USAGE;
    }
out:
    if (code != EXIT_OK)
        log_error("%s", buf_cstr(&err));
    buf_free(&err);
    return code;
}

/* Without --timezone or a profile's zone, a bill that states its own
 * window with its offset (PayPal's SH, "2024/08/20 00:00:00 -0700") has
 * its days cut in that offset, not in UTC: the zone becomes the first
 * file's, for the comparison and the report.  False when the database
 * failed or memory ran out. */
static bool window_zone(recon_ctx *x, recon_result *res)
{
    const config *cfg = x->cfg;
    if (!x->window_zone[0] || cfg->timezone || (cfg->profile && cfg->profile->timezone))
        return true;
    char *zone = strdup(x->window_zone);
    char *sql = recon_zone_for_sql(zone);
    if (!zone || !sql) {
        free(zone);
        free(sql);
        log_error("out of memory");
        return false;
    }
    free(res->zone);
    res->zone = zone;
    free(x->sql_zone);
    x->sql_zone = sql;
    const char *set[] = {x->sql_zone};
    /* the rows' days were staged in the zone before: the server works
     * them out again, in this one */
    return recon_exec(x, "reconcile: the bill's own zone", SQL_RECON_ZONE, 1, set) &&
           (!x->days_staged ||
            recon_exec(x, "reconcile: the bill's own zone", SQL_RECON_DAYS_UNSTAGED, 0, NULL));
}

/* Stages each file in turn (recon_stage_file): the first that fails stops
 * the run, *code takes its status and each file after it says it was not
 * read.  False when a file failed. */
static bool stage_files(recon_ctx *x, recon_result *res, run_report *rep, int *code)
{
    const config *cfg = x->cfg;
    bool ok = true;
    for (size_t i = 0; ok && i < cfg->n_files; i++) {
        int c = recon_stage_file(x, i, &rep->files[i], res);
        if (c != EXIT_OK) {
            *code = c;
            ok = false;
            for (size_t k = i + 1; k < cfg->n_files; k++) {
                rep->files[k].path = cfg->files[k];
                rep->files[k].status = FILE_FAILED;
                file_report_set_error(&rep->files[k], "not read: an earlier file failed, so "
                                                      "nothing was compared");
            }
        }
    }
    return ok;
}

/* --repair missing inserts the rows the comparison found missing; a
 * statement row outside an explicit period was never compared, and
 * the merge would insert it all the same (its callback's absence then
 * never shown when its own day is reconciled): refused before
 * anything is written.  True (logged, res->compared unset) when refused. */
static bool repair_outside_period(const config *cfg, recon_result *res)
{
    if (cfg->repair != REPAIR_MISSING || res->outside_period == 0)
        return false;
    log_error("reconcile --repair missing: %llu statement %s outside --period %s..%s, never "
              "compared, and the repair would insert %s; give a period covering the "
              "statement's days, or repair without --period",
              (unsigned long long)res->outside_period,
              res->outside_period == 1 ? "row falls" : "rows fall", res->from, res->to,
              res->outside_period == 1 ? "it" : "them");
    res->compared = false;
    return true;
}

/* Ends the run's transaction: commits it when everything went well (ok)
 * and this is no dry run, otherwise rolls it back; then the discrepancies
 * file *disc takes its place or is discarded (*disc is NULL after).  code
 * is the status so far; returns the run's. */
static int end_run(recon_ctx *x, recon_result *res, bool ok, int code, recon_disc **disc)
{
    /* The last moment an interrupt can stop the run: after it, the
     * register is committed and the run whole. */
    if (ok && recon_interrupted(x, "reconcile"))
        ok = false;
    if (!ok && code == EXIT_OK)
        code = x->failed_logged ? db_failure_exit(x->tool.d) : EXIT_DATABASE;
    if (ok && !x->cfg->dry_run) {
        if (!db_commit(x->tool.d)) {
            code = tool_db_failure(x->tool.d, "reconcile: COMMIT");
            ok = false;
        }
    } else {
        db_rollback(x->tool.d);
    }
    if (code == EXIT_OK && !ok)
        code = EXIT_DATABASE;
    /* Rolled back: the register holds nothing of this run, and the summary
     * and report must not name a run number or items it opened. */
    if (!ok)
        recon_result_unregister(res);
    /* The file takes its place only beside a committed register (or after a
     * dry run that compared everything); a failure leaves what was there. */
    if (ok && *disc) {
        buf perr = BUF_INIT;
        if (!recon_disc_publish(disc, &perr)) {
            log_error("%s", buf_cstr(&perr));
            code = EXIT_INPUT;
            x->disc_failed = true;
        }
        buf_free(&perr);
    }
    recon_disc_discard(disc);
    return code;
}

/* Connects, stages, compares and (unless a dry run) registers, writes the
 * discrepancies file, commits.  Returns the status of the files and the
 * database (not yet the verdict's 5). */
static int reconcile(recon_ctx *x, recon_result *res, run_report *rep, const facts_map *tf,
                     const stmt_facts *sf, int64_t grace_s)
{
    const config *cfg = x->cfg;
    int code = recon_session_begin(x, rep, recon_register_names, "reconcile");
    if (code != EXIT_OK)
        return code;
    x->sql_zone = recon_zone_for_sql(res->zone);
    x->days_staged = tz_fixed_offset(res->zone && *res->zone ? res->zone : "UTC", &x->days_east);
    x->net_kinds[0] = recon_kind_names_json(cfg, "refund");
    x->net_kinds[1] = recon_kind_names_json(cfg, "revoked");
    if (!x->sql_zone || !x->net_kinds[0] || !x->net_kinds[1] || fault_injected("recon-oom")) {
        /* The client out of memory is 3 (SPEC "Exit status"), not the
         * database's 4 that an unlogged failure would take below. */
        log_error("reconcile: out of memory");
        code = EXIT_INPUT;
    }
    if (code == EXIT_OK && (!(x->texts = stmt_texts_new(sf)) ||
                            !(x->staged = calloc(cfg->n_files + 1, sizeof *x->staged)))) {
        log_error("reconcile: out of memory");
        code = EXIT_INPUT;
    }
    bool ok = code == EXIT_OK && recon_stage_setup(x, x->sql_zone, grace_s, tf, sf);
    if (ok)
        ok = stage_files(x, res, rep, &code);
    if (ok && !window_zone(x, res)) {
        ok = false;
        if (!x->failed_logged)
            code = EXIT_INPUT;      /* its copies ran out of memory (logged) */
    }
    if (ok)
        ok = recon_compare(x, res, rep);
    if (ok && repair_outside_period(cfg, res)) {
        code = EXIT_USAGE;
        ok = false;
    }
    if (ok && !cfg->dry_run && res->compared)
        ok = recon_write_register(x, res, rep);
    else if (ok && cfg->dry_run && res->compared)
        ok = recon_read_register(x, res);
    recon_disc *disc = NULL;
    if (ok) {
        bool io_failed;
        ok = recon_stream_lines(x, res, &disc, &io_failed);
        if (!ok && io_failed)
            code = EXIT_INPUT;
    }
    return end_run(x, res, ok, code, &disc);
}

/* A file the run never came to read (an option refused, the database or
 * the table unusable) says so in the report, not only "failed". */
static void explain_unread(run_report *rep, int code)
{
    for (size_t i = 0; i < rep->n_files; i++) {
        file_report *f = &rep->files[i];
        if (f->status == FILE_FAILED && !f->error && f->counts.rows_read == 0) {
            char *logged = log_last_error();
            buf why = BUF_INIT;
            buf_printf(&why, "not read: nothing was compared (exit %d: %s%s%s)", code,
                       exit_status_meaning(rep, code), logged && *logged ? ": " : "",
                       logged ? logged : "");
            file_report_set_error(f, buf_cstr(&why));
            buf_free(&why);
            free(logged);
        }
    }
}

/* The run's report before anything is read: what the run is, and each
 * file failed until it is read.  False when out of memory; rep is the
 * caller's to free (run_report_free) once this returned true. */
static bool report_init(const config *cfg, run_report *rep)
{
    if (!run_report_init(rep, cfg->n_files))
        return false;
    rep->validate_only = cfg->repair == REPAIR_NONE;
    rep->reconcile = true;
    rep->repair = cfg->repair == REPAIR_MISSING ? "missing"
                  : cfg->repair == REPAIR_MERGE ? "merge"
                                                : NULL;
    rep->dry_run = cfg->dry_run;
    rep->target = strdup(cfg->table);
    for (size_t i = 0; i < cfg->n_files; i++) {
        input_format fmt = cfg->format != FORMAT_AUTO ? cfg->format : format_from_name(cfg->files[i]);
        rep->files[i].path = cfg->files[i];
        rep->files[i].format = cfg->profile ? cfg->profile->name : format_name(fmt);
        rep->files[i].status = FILE_FAILED;
    }
    return true;
}

/* Closes x's connection and frees what x owns. */
static void ctx_free(recon_ctx *x)
{
    tool_close(&x->tool);
    pipeline_reading_close(&x->reading);
    seen_free(&x->seen);
    stmt_texts_free(x->texts);
    free(x->staged);
    buf_free(&x->item);
    buf_free(&x->run);
    buf_free(&x->item_index);
    buf_free(&x->run_index);
    buf_free(&x->item_name);
    buf_free(&x->run_name);
    buf_free(&x->levels);
    buf_free(&x->kinds);
    buf_free(&x->ccys);
    buf_free(&x->timed);
    free(x->sql_zone);
    free(x->net_kinds[0]);
    free(x->net_kinds[1]);
}

int recon_run(const config *cfg)
{
    recon_result res = {.repair = cfg->repair, .dry_run = cfg->dry_run};
    facts_map tf = {0};
    stmt_facts sf = {0};
    run_report rep;
    if (!report_init(cfg, &rep)) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    recon_ctx x = {.cfg = cfg};
    double t0 = now_seconds();
    int64_t grace_s = 0;
    int code = prepare(cfg, &res, &tf, &sf, &grace_s);
    if (code == EXIT_OK && !(x.reading = pipeline_reading_open(cfg, &rep)))
        code = EXIT_INPUT;
    if (code == EXIT_OK)
        code = reconcile(&x, &res, &rep, &tf, &sf, grace_s);
    /* The progress line erased, the rejects file complete (its summary in
     * the report) before a repair reads the files again. */
    code = exit_worst(code, pipeline_reading_close(&x.reading));
    if (code != EXIT_OK)
        explain_unread(&rep, code);
    for (size_t i = 0; i < cfg->n_files; i++)
        if (rep.files[i].counts.rows_rejected > 0)
            code = exit_worst(code, EXIT_REJECTS);
    bool found = res.compared && recon_has_discrepancies(&res);
    if (code == EXIT_OK || code == EXIT_REJECTS) {
        if (cfg->repair != REPAIR_NONE && res.compared) {
            code = exit_worst(code, repair(cfg, &rep));
            code = exit_worst(code, mend_register(&x, &res));
        }
    }
    if (found)
        code = exit_worst(code, EXIT_DISCREPANCIES);
    rep.elapsed_s = now_seconds() - t0;
    run_report_total(&rep);
    int rendered = recon_render_outputs(cfg, &res, &rep, code);
    code = exit_worst(code, rendered);
    if (rendered == EXIT_OK && !x.disc_failed)
        mark_reported(&x, &res);
    ctx_free(&x);
    run_report_free(&rep);
    recon_result_free(&res);
    facts_free(&tf);
    stmt_facts_free(&sf);
    return code;
}
