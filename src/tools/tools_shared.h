/*
 * tools_shared.h - what the table safety tools (check, dedupe,
 * create-index) share: opening the connection and resolving the table,
 * turning a database failure into an exit status, the duplicate-key
 * listing in text and JSON, and writing a JSON report.
 *
 * Ownership: tool_open() fills a tool_ctx that tool_close() releases;
 * results are freed by db_result_free(); json_t values returned are new
 * references the caller owns.
 */
#ifndef IDEMLOAD_TOOLS_SHARED_H
#define IDEMLOAD_TOOLS_SHARED_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/buf.h"
#include "cli/config.h"
#include "db/db.h"
#include "util/exitcodes.h"
#include "db/target.h"

typedef struct tool_ctx {
    db *d;
    target t;
    bool resolved;      /* t holds a table to free */
    FILE *human;        /* listings: stdout, or stderr when --report - owns stdout */
} tool_ctx;

/*
 * Connects (-d or the PG* environment), resolves --table and lets an
 * interrupt cancel the statement in flight.  Returns EXIT_OK, or the exit
 * status after logging why: EXIT_USAGE when the server cannot be reached
 * or the table does not exist (both are the caller's configuration).
 * Call tool_close() in every case.
 */
int tool_open(const config *cfg, tool_ctx *c);
void tool_close(tool_ctx *c);

/*
 * Logs the last failed statement on d, "what: message (SQLSTATE)" (or
 * "what: interrupted"), and returns its exit status, db_failure_exit(d).
 */
int tool_db_failure(const db *d, const char *what);

/* Renders tmpl with {table} and {active} of t, plus {index} and {schema}
 * when given (NULL: not offered).  False: a template/caller mismatch or
 * out of memory. */
bool tool_render(buf *out, const char *tmpl, const target *t, const char *schema,
                 const char *index);

/*
 * Duplicate active keys (SQL_DUPLICATES), largest first, at most limit of
 * them (0: all).  *keys and *surplus receive the totals over every
 * duplicate key.  NULL on failure, with the failure left on c->d.
 * Columns: tenant_id, channel, out_trade_no, callback_type, count,
 * first id, last id.
 */
db_result *tool_duplicates(tool_ctx *c, size_t limit, long long *keys, long long *surplus);

/* The duplicate listing as an aligned table, indented by indent. */
void tool_print_duplicates(FILE *fp, const char *indent, const db_result *r);
/* The same rows as a JSON array of objects (tenant_id, channel,
 * out_trade_no, callback_type, count, first_id, last_id). */
json_t *tool_duplicates_json(const db_result *r);

/* The business key in columns col..col+3 of row ri: as JSON members added to
 * obj, or as "tenant_id=1 channel=w ..." appended to out. */
void tool_key_to_json(json_t *obj, const db_result *r, int ri, int col);
void tool_key_to_text(buf *out, const db_result *r, int ri, int col);

/* A JSON string, or null when s is NULL or not valid UTF-8. */
json_t *tool_json_text(const char *s);

/* Writes root to path ("-": stdout).  False after logging the error. */
bool tool_write_report(json_t *root, const char *path);

#endif
