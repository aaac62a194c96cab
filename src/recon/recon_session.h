/*
 * recon_session.h - the session of one `idemload reconcile` run, shared by
 * the coordinator (recon.c) and its parts (recon_read.c, recon_gather.c,
 * recon_register.c): the run's context, the helpers that send recon_sql.h's
 * statements on its one connection, and the session's setup.  Internal to
 * src/recon/; nothing outside it includes this.
 *
 * Ownership: recon_run() owns the recon_ctx (its tool, reading, buffers and
 * strings) and frees them at its end.
 */
#ifndef IDEMLOAD_RECON_SESSION_H
#define IDEMLOAD_RECON_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "db/db.h"
#include "pipeline/pipeline.h"
#include "recon/facts.h"
#include "tools/tools_shared.h"
#include "util/buf.h"

struct seen_filter;
struct stmt_texts;

typedef struct recon_ctx {
    const config *cfg;
    tool_ctx tool;
    buf item, run, item_index, run_index;   /* the register's names, quoted */
    buf item_name, run_name;                /* ... as text, for to_regclass */
    buf levels, kinds, ccys, timed;         /* SQL_RECON_LEVELS' literals, for
                                               SQL_RECON_TABLE_ROWS */
    char *sql_zone;                         /* the zone as AT TIME ZONE reads it */
    bool ascii_upper;                       /* the database upper-cases a-z as ASCII
                                               does (SQL_RECON_ASCII_UPPER) */
    bool days_staged;                       /* rows are staged with their day in */
    int32_t days_east;                      /* ... this fixed offset (seconds east
                                               of UTC), the zone's when staged */
    char window_zone[8];                    /* the first file's own window's
                                               offset (PayPal's SH), "" if none */
    char reg_state[16];                     /* recon_register_state's answer; "" until asked */
    char *net_kinds[2];                     /* the refunds' and the revocations' kind
                                             * names (SQL_RECON_DAY_AMOUNTS' $1, $2) */
    statement_reading *reading;             /* import's reading of the files: the
                                               progress line, the rejects, the
                                               payments' keys for refunds */
    struct seen_filter *seen;               /* the statement's keys met so far, over
                                               every file (recon_read.c) */
    bool seen_full;                         /* past the filter's capacity: every row
                                               after is taken as maybe listed again */
    uint64_t *staged;                       /* per file, the rows its COPY sent */
    struct stmt_texts *texts;               /* the statement's fact paths, for the
                                               texts each row is staged with
                                               (recon/stmt_texts.h) */
    bool failed_logged;
    bool disc_failed;                       /* the discrepancies file was not published */
} recon_ctx;

struct run_report;

/* Connects to the target (rep->database names it), checks its shape, names
 * the register (names: reconcile's or settle's) and begins the run's one
 * transaction; what names the command in a failure ("reconcile").  EXIT_OK,
 * or the status to return (logged); x's tool is the caller's to close in
 * either case. */
int recon_session_begin(recon_ctx *x, struct run_report *rep, bool (*names)(recon_ctx *x),
                        const char *what);

/* NULL-safe copy (NULL stays NULL); sets *oom when memory runs out and
 * leaves it as it was otherwise.  The copy is the caller's to free. */
char *recon_dup_or_null(const char *s, bool *oom);

/* Renders tmpl (a statement of recon_sql.h) into out, cleared first, with
 * the target and the register's names; x's tool is open and its register
 * names set (recon_register_names).  False when out of memory. */
bool recon_sql_render(recon_ctx *x, buf *out, const char *tmpl);

/* SIGINT or SIGTERM came (logged once): no statement is sent after it.
 * Its cancel request stops only a statement the server is running; one
 * that came while the client worked (writing the lines, between two
 * statements) would otherwise be lost, and the run commit as if never
 * interrupted.  True: the caller stops, x->failed_logged is set and the
 * exit status then is db_failure_exit's 130. */
bool recon_interrupted(recon_ctx *x, const char *what);

/* Runs a statement of recon_sql.h (rendered by recon_sql_render) with n
 * text parameters on x's connection, in the run's transaction.  The
 * result is the caller's to free (db_result_free); NULL after logging
 * "what: ..." with x->failed_logged set (the exit status then is
 * db_failure_exit). */
db_result *recon_query(recon_ctx *x, const char *what, const char *tmpl, int n,
                       const char *const *params);

/* As recon_query, for a statement whose rows are not read: n == 0 sends
 * it without parameters.  False after logging, as recon_query's NULL. */
bool recon_exec(recon_ctx *x, const char *what, const char *tmpl, int n,
                const char *const *params);

/* The zone's name as PostgreSQL's AT TIME ZONE reads it: an IANA name as
 * it is; a fixed offset in any spelling timezone.c takes ("+08:00",
 * "+0800", "+08") as the POSIX "UTC-08:00" (POSIX counts west positive, and
 * PostgreSQL refuses "UTC-0800"); "Z" or none as UTC.  The caller's to
 * free; NULL when out of memory. */
char *recon_zone_for_sql(const char *zone);

/* The session's temporary tables and settings, the currency exponents,
 * and where each side keeps its facts: the statement's (its profile) and
 * the table's (--facts); the view of the table's facts over them is made
 * later, by recon_compare.  In the run's transaction, before any file is
 * staged; zone as recon_zone_for_sql gives it.  False after logging (as
 * recon_exec). */
bool recon_stage_setup(recon_ctx *x, const char *zone, int64_t grace_s, const facts_map *tf,
                       const stmt_facts *sf);

#endif
