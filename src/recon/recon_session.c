/*
 * recon_session.c - the session of a reconcile run (see recon_session.h):
 * statements of recon_sql.h rendered with the target's and the register's
 * names and sent on the run's one connection, each failure logged once
 * with what it was doing; and the session's setup before the first file
 * is staged (its settings, the currency exponents, both sides' facts).
 */
#include "recon/recon_session.h"

#include <stdio.h>
#include <string.h>

#include "db/recon_sql.h"
#include "db/sql.h"
#include "db/target.h"
#include "output/log.h"
#include "output/report.h"
#include "rules/timezone.h"
#include "util/clock.h"
#include "util/signals.h"

char *recon_dup_or_null(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

bool recon_sql_render(recon_ctx *x, buf *out, const char *tmpl)
{
    const char *names[] = {"table",     "active", "item",  "run",  "item_index",
                           "run_index", "levels", "kinds", "ccys", "timed"};
    const char *values[] = {x->tool.t.quoted,        x->tool.t.active,
                            buf_cstr(&x->item),      buf_cstr(&x->run),
                            buf_cstr(&x->item_index), buf_cstr(&x->run_index),
                            buf_cstr(&x->levels),    buf_cstr(&x->kinds),
                            buf_cstr(&x->ccys),      buf_cstr(&x->timed)};
    _Static_assert(sizeof names / sizeof names[0] == sizeof values / sizeof values[0],
                   "a name for each value");
    buf_clear(out);
    return sql_render(out, tmpl, (int)(sizeof names / sizeof names[0]), names, values);
}

bool recon_interrupted(recon_ctx *x, const char *what)
{
    if (!signals_interrupted())
        return false;
    if (!x->failed_logged)
        log_error("%s: interrupted", what);
    x->failed_logged = true;
    return true;
}

/* Before each statement: false when interrupted; else what it does is
 * shown on the progress line, which the reading left at its end. */
static bool statement_start(recon_ctx *x, const char *what)
{
    if (recon_interrupted(x, what))
        return false;
    pipeline_reading_step(x->reading, what);
    return true;
}

db_result *recon_query(recon_ctx *x, const char *what, const char *tmpl, int n,
                       const char *const *params)
{
    buf sql = BUF_INIT;
    db_result *res = NULL;
    if (!statement_start(x, what))
        return NULL;
    if (!recon_sql_render(x, &sql, tmpl)) {
        log_error("%s: out of memory", what);
        db_set_out_of_memory(x->tool.d);
    } else {
        res = db_query(x->tool.d, buf_cstr(&sql), n, params);
        if (!res)
            tool_db_failure(x->tool.d, what);
    }
    buf_free(&sql);
    if (!res)
        x->failed_logged = true;
    return res;
}

bool recon_exec(recon_ctx *x, const char *what, const char *tmpl, int n,
                const char *const *params)
{
    if (n == 0) {
        if (!statement_start(x, what))
            return false;
        buf sql = BUF_INIT;
        bool rendered = recon_sql_render(x, &sql, tmpl);
        bool ok = rendered && db_exec(x->tool.d, buf_cstr(&sql));
        if (!rendered) {
            log_error("%s: the statement could not be rendered (out of memory)", what);
            db_set_out_of_memory(x->tool.d);
        } else if (!ok) {
            tool_db_failure(x->tool.d, what);
        }
        if (!ok)
            x->failed_logged = true;
        buf_free(&sql);
        return ok;
    }
    db_result *r = recon_query(x, what, tmpl, n, params);
    bool ok = r != NULL;
    db_result_free(&r);
    return ok;
}

char *recon_zone_for_sql(const char *zone)
{
    int32_t east;
    if (!zone || !*zone)
        return strdup("UTC");
    if (!tz_fixed_offset(zone, &east))
        return strdup(zone);
    if (east == 0)
        return strdup("UTC");
    char west[8], out[16];
    tz_format_offset(-east, west);
    snprintf(out, sizeof out, "UTC%s", west);
    return strdup(out);
}

static const char *bool_text(bool b)
{
    return b ? "true" : "false";
}

/* A fact's path literal and constant as parameters (NULL when absent);
 * paths[k] owns the literal. */
static bool loc_params(const fact_loc *l, buf *path, const char **p_path, const char **p_const)
{
    buf_clear(path);
    *p_path = NULL;
    *p_const = l->constant;
    if (!l->path)
        return true;
    if (!fact_path_literal(l, path))
        return false;
    *p_path = buf_cstr(path);
    return true;
}

/* A fact's alternative member (path_alt) as a text[] literal, NULL when
 * it has none; alt owns the literal. */
static bool alt_param(const fact_loc *l, buf *alt, const char **p_alt)
{
    buf_clear(alt);
    *p_alt = NULL;
    if (!l->path_alt)
        return true;
    fact_loc a = {.path = l->path_alt, .one_member = l->one_member};
    if (!fact_path_literal(&a, alt))
        return false;
    *p_alt = buf_cstr(alt);
    return true;
}

bool recon_stage_setup(recon_ctx *x, const char *zone, int64_t grace_s, const facts_map *tf,
                       const stmt_facts *sf)
{
    if (!recon_exec(x, "reconcile: preparing the session's temporary tables", SQL_RECON_SETUP, 0,
                    NULL))
        return false;
    char grace[32];
    snprintf(grace, sizeof grace, "%lld", (long long)grace_s);
    const char *set[] = {zone, grace, clock_test_now()};
    if (!recon_exec(x, "reconcile: session settings", SQL_RECON_SETTINGS, 3, set))
        return false;
    db_result *r = recon_query(x, "reconcile: session settings", SQL_RECON_ASCII_UPPER, 0, NULL);
    if (!r)
        return false;
    x->ascii_upper = db_value(r, 0, 0)[0] == 't';
    db_result_free(&r);
    buf codes = BUF_INIT, exps = BUF_INIT;
    bool ok = buf_append_str(&codes, "{") && buf_append_str(&exps, "{");
    const char *code;
    int e;
    for (size_t i = 0; ok && currency_exponent_at(i, &code, &e); i++)
        ok = buf_printf(&codes, "%s%s", i ? "," : "", code) &&
             buf_printf(&exps, "%s%d", i ? "," : "", e);
    ok = ok && buf_append_str(&codes, "}") && buf_append_str(&exps, "}");
    const char *cp[] = {buf_cstr(&codes), buf_cstr(&exps)};
    ok = ok && recon_exec(x, "reconcile: currency exponents", SQL_RECON_CCY, 2, cp);
    buf_free(&codes);
    buf_free(&exps);
    buf pa = BUF_INIT, pc = BUF_INIT, pf = BUF_INIT, pt = BUF_INIT, pr = BUF_INIT;
    buf alt[3] = {BUF_INIT, BUF_INIT, BUF_INIT};
    for (size_t i = 0; ok && i < sf->n; i++) {
        const stmt_facts_entry *s = &sf->e[i];
        const char *p[16];
        char lvl[24];
        snprintf(lvl, sizeof lvl, "%zu", i);
        p[0] = s->kind;
        p[15] = lvl;
        ok = loc_params(&s->f[FACT_AMOUNT], &pa, &p[1], &p[2]) &&
             loc_params(&s->f[FACT_CURRENCY], &pc, &p[5], &p[6]) &&
             loc_params(&s->f[FACT_FEE], &pf, &p[7], &p[8]);
        p[3] = bool_text(s->f[FACT_AMOUNT].minor);
        p[4] = bool_text(s->f[FACT_AMOUNT].magnitude);
        p[9] = bool_text(s->f[FACT_FEE].minor);
        p[10] = bool_text(s->f[FACT_FEE].magnitude);
        static const recon_fact with_alt[] = {FACT_AMOUNT, FACT_CURRENCY, FACT_FEE};
        for (int k = 0; ok && k < 3; k++)
            ok = alt_param(&s->f[with_alt[k]], &alt[k], &p[11 + k]);
        const char *no_const;
        ok = ok && loc_params(&s->record, &pr, &p[14], &no_const);
        ok = ok && recon_exec(x, "reconcile: the statement's facts", SQL_RECON_SFACTS, 16, p);
    }
    for (int k = 0; k < 3; k++)
        buf_free(&alt[k]);
    for (size_t i = 0; ok && i < tf->n; i++) {
        const facts_entry *t = &tf->e[i];
        const char *p[13];
        const char *unused;
        p[0] = t->channel;
        p[1] = t->kind;
        ok = loc_params(&t->f[FACT_AMOUNT], &pa, &p[2], &p[3]) &&
             loc_params(&t->f[FACT_CURRENCY], &pc, &p[6], &p[7]) &&
             loc_params(&t->f[FACT_FEE], &pf, &p[8], &p[9]) &&
             loc_params(&t->f[FACT_TIME], &pt, &p[12], &unused);
        p[4] = bool_text(t->f[FACT_AMOUNT].minor);
        p[5] = bool_text(t->f[FACT_AMOUNT].magnitude);
        p[10] = bool_text(t->f[FACT_FEE].minor);
        p[11] = bool_text(t->f[FACT_FEE].magnitude);
        ok = ok && recon_exec(x, "reconcile: the table's facts (--facts)", SQL_RECON_TFACTS, 13, p);
    }
    buf_free(&pr);
    buf_free(&pa);
    buf_free(&pc);
    buf_free(&pf);
    buf_free(&pt);
    return ok;
}

int recon_session_begin(recon_ctx *x, run_report *rep, bool (*names)(recon_ctx *x),
                        const char *what)
{
    int code = tool_open(x->cfg, &x->tool);
    if (code != EXIT_OK)
        return code;
    rep->database = strdup(db_describe(x->tool.d));
    buf err = BUF_INIT;
    if (!target_check_shape(&x->tool.t, &err)) {
        log_error("%s", buf_cstr(&err));
        buf_free(&err);
        return EXIT_USAGE;
    }
    buf_free(&err);
    if (!names(x))
        return EXIT_INPUT;
    char label[64];
    snprintf(label, sizeof label, "%s: BEGIN", what);
    if (!db_begin(x->tool.d))
        return tool_db_failure(x->tool.d, label);
    return EXIT_OK;
}
