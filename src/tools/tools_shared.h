/*
 * tools_shared.h - what the table safety tools (check, dedupe,
 * create-index) share: opening the connection and resolving the table,
 * logging a database failure with its exit status, and the facts every
 * report holds (a business key, the duplicate-key listing, a list of
 * texts) with their renderings in text and JSON, and writing a JSON report.
 *
 * Each tool gathers its facts into a struct first (tools_facts.h), then
 * renders text and JSON from it; the facts hold copies, so no db_result
 * outlives the gathering and a render can be fed a hand-built struct.
 *
 * Ownership: tool_open() fills a tool_ctx that tool_close() releases;
 * tool_key, dup_list and strlist own their strings (their _free functions
 * release them and leave them empty); json_t values returned are new
 * references the caller owns.
 */
#ifndef IDEMLOAD_TOOLS_SHARED_H
#define IDEMLOAD_TOOLS_SHARED_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/buf.h"
#include "core/config.h"
#include "db/db.h"
#include "db/sql.h"
#include "util/exitcodes.h"
#include "db/target.h"

typedef struct tool_ctx {
    db *d;
    target t;
    bool resolved;      /* t holds a table to free */
    FILE *human;        /* listings: stdout, or stderr when --report - owns stdout */
    buf args;           /* the user's -d and --table on the idemload commands the
                         * reports advise, " -d pay --table billing.cb" (advice.h);
                         * empty when the user gave neither */
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

/* The target options a facts struct holds for the commands it advises
 * (borrowed, tool_ctx.args): "" when NULL, as in a hand-built one. */
static inline const char *tool_args(const char *args)
{
    return args ? args : "";
}

/* A failure kept as a fact, to be logged later in its place in a report:
 * what tool_db_failure would have said. */
typedef struct tool_failure {
    bool interrupted;
    char sqlstate[6];
    char *message;          /* NULL: none captured (or out of memory) */
} tool_failure;

void tool_failure_capture(tool_failure *f, const db *d);
/* Logs it as tool_db_failure does, "what: message (SQLSTATE)". */
void tool_failure_log(const tool_failure *f, const char *what);
void tool_failure_free(tool_failure *f);

/* Renders tmpl with {table} and {active} of t, plus {index} and {schema}
 * when given (NULL: not offered); {key} is sql_render's own.  False: a
 * template/caller mismatch or out of memory. */
bool tool_render(buf *out, const char *tmpl, const target *t, const char *schema,
                 const char *index);

/* ---- facts ------------------------------------------------------------- */

/* A business key as the database returned it: each column as text, in
 * key_column_names order (tenant_id too, which JSON writes as a number). */
typedef struct tool_key {
    char *col[KEY_NCOLUMNS];
} tool_key;

/* Copies columns col..col+3 of row ri of r into *k (empty before).  False:
 * out of memory (k freed). */
bool tool_key_copy(tool_key *k, const db_result *r, int ri, int col);
/* Sets *k from four texts (a unit test's facts); false: out of memory. */
bool tool_key_set(tool_key *k, const char *const col[KEY_NCOLUMNS]);
void tool_key_free(tool_key *k);
/* As JSON members of obj (tenant_id a number), or as "tenant_id=1
 * channel=w ..." appended to out, a value quoted when it is empty or holds
 * a space, a quote or '='. */
void tool_key_to_json(json_t *obj, const tool_key *k);
void tool_key_to_text(buf *out, const tool_key *k);

/* One duplicate active key: its rows, the lowest and the highest id. */
typedef struct dup_entry {
    tool_key key;
    long long count;
    long long first_id;
    long long last_id;
} dup_entry;

/* The duplicate listing: the sample shown (largest first, at most the
 * limit asked for) and the totals over every duplicate key. */
typedef struct dup_list {
    dup_entry *items;
    size_t n;
    long long keys;         /* duplicate active keys in all */
    long long surplus;      /* rows beyond the first of each */
} dup_list;

/* Adds an entry (copying the key); false: out of memory. */
bool dup_list_add(dup_list *l, const char *const key[KEY_NCOLUMNS], long long count,
                  long long first_id, long long last_id);
void dup_list_free(dup_list *l);

/*
 * Gathers the duplicate active keys (SQL_DUPLICATES), largest first, at
 * most limit of them (0: all), with the totals.  False on failure, with
 * the failure (an out-of-memory included) left on c->d.
 */
bool tool_duplicates(tool_ctx *c, size_t limit, dup_list *out);

/* The listing as an aligned table, indented by indent. */
void tool_print_duplicates(FILE *fp, const char *indent, const dup_list *l);
/* The same entries as a JSON array of objects (tenant_id, channel,
 * out_trade_no, callback_type, count, first_id, last_id). */
json_t *tool_duplicates_json(const dup_list *l);

/* A growable list of owned strings. */
typedef struct strlist {
    char **v;
    size_t n;
} strlist;

bool strlist_add(strlist *l, const char *s);
void strlist_free(strlist *l);
/* The strings as a JSON array. */
json_t *strlist_json(const strlist *l);

/* ---- output ------------------------------------------------------------ */

/* A JSON string, or null when s is NULL or not valid UTF-8. */
json_t *tool_json_text(const char *s);

/* Writes root to path ("-": stdout).  False after logging the error. */
bool tool_write_report(json_t *root, const char *path);

#endif
