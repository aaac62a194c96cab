/*
 * db.h - every use of libpq goes through here; no other file sees a
 * PGconn or a PGresult.
 *
 * Errors: a failing call returns false (or NULL) and keeps the server's
 * SQLSTATE and message on the db handle (db_sqlstate, db_message,
 * db_error_class); the caller, who knows the context (file, chunk), logs
 * it once or retries.  Messages never hold the password.
 * Ownership: db_connect() returns a handle freed by db_close(); query
 * results are freed by db_result_free(); both set the caller's pointer to
 * NULL.  Strings returned by db_value() live as long as their result.
 */
#ifndef IDEMLOAD_DB_H
#define IDEMLOAD_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct db db;
typedef struct db_result db_result;

typedef enum db_error_class {
    DBE_NONE,
    DBE_CONNECTION,   /* class 08 or the connection is gone: reconnect, retry */
    DBE_RETRY,        /* 40P01 deadlock, 40001 serialization, 55P03 lock
                       * timeout: retry */
    DBE_CANCELED,     /* 57014: a canceled statement (ours on an interrupt, or the
                       * server's statement_timeout, or another session's) */
    DBE_FATAL,        /* anything not listed here: the load's failure
                         (privileges, missing objects, feature not supported,
                         disk full, ...): no row would load */
    DBE_DATA          /* classes 22, 23, 54, P0: one row's fault */
} db_error_class;

/*
 * Connects like psql: dbname may be NULL (PG* environment, service file,
 * .pgpass), a database name, a conninfo string or a URI.  Sets
 * client_encoding UTF8 and application_name idemload.  On failure returns
 * NULL with a message (password masked) in *err and, unless exit_status
 * is NULL, its status by the SQLSTATE table in *exit_status (libpq gives
 * a failed connect no SQLSTATE: it stands as 08001, a database error; the
 * client's own out of memory is 3, an interrupt 130, as db_failure_exit).
 */
db *db_connect(const char *dbname, buf *err, int *exit_status);
void db_close(db **d);

/*
 * Appends dbname (-d as the user gave it: a name, conninfo or URI) as a
 * message may show it for the user to give again: as written when it
 * holds no password; when it does (or another secret libpq hides, such as
 * sslpassword), rebuilt as "key=value ..." from the options it sets, the
 * secrets left out.  False, appending nothing, when it is a connection
 * string libpq cannot parse (it cannot have connected, and a password in
 * it could not be told apart), or when out of memory.
 */
bool db_conninfo_shown(const char *dbname, buf *out);

/* "user@host:port/dbname", never the password. */
const char *db_describe(const db *d);

/* Runs one command (or several separated by ';' without parameters);
 * true when it succeeded. */
bool db_exec(db *d, const char *sql);

/* Runs sql with text parameters ($1..$n, NULL entries are SQL NULL) and
 * returns its rows, or NULL on error. */
db_result *db_query(db *d, const char *sql, int nparams, const char *const *params);
/* Same, for a statement whose rows are not needed. */
bool db_exec_params(db *d, const char *sql, int nparams, const char *const *params);

int db_nrows(const db_result *r);
const char *db_value(const db_result *r, int row, int col);
bool db_is_null(const db_result *r, int row, int col);
/* Column value as an int64 (0 when NULL or not a number). */
int64_t db_int(const db_result *r, int row, int col);
void db_result_free(db_result **r);

/*
 * Transaction verbs: BEGIN, COMMIT, ROLLBACK, and savepoints by name.  A
 * savepoint name is a plain lowercase identifier ([a-z_][a-z0-9_]*), written
 * into the statement as it is; another name is refused (false, without
 * reaching the server).  True when the server accepted the command; on
 * false the error is on the handle as for db_exec.
 */
bool db_begin(db *d);
bool db_commit(db *d);
bool db_rollback(db *d);
bool db_savepoint(db *d, const char *name);
bool db_release(db *d, const char *name);       /* RELEASE SAVEPOINT name */
bool db_rollback_to(db *d, const char *name);   /* ROLLBACK TO SAVEPOINT name */

/*
 * COPY FROM STDIN in psql's handleCopyIn sequence: db_copy_begin expects
 * PGRES_COPY_IN; db_copy_send fails when PQputCopyData does not return 1;
 * db_copy_end(d, NULL) finishes, db_copy_end(d, reason) aborts the COPY so
 * the server rolls it back; both drain the results and require COMMAND_OK
 * (for an abort, false is the expected outcome).
 */
bool db_copy_begin(db *d, const char *sql);
bool db_copy_send(db *d, const char *data, size_t len);
bool db_copy_end(db *d, const char *abort_reason);

/* Quotes an identifier for SQL (PQescapeIdentifier); appends to *out. */
bool db_append_ident(db *d, buf *out, const char *ident);

const char *db_sqlstate(const db *d);
const char *db_message(const db *d);
db_error_class db_error_class_of(const db *d);
/* Records on d that the client ran out of memory while working for it
 * (SQLSTATE 53200, "out of memory (client)", as db_query does itself), so
 * the caller's failure path logs and maps it like any other failure. */
void db_set_out_of_memory(db *d);

/*
 * The exit status (exitcodes.h) a failed statement earns, decided here
 * once for every command from the SQLSTATE table of db.c: EXIT_INTERRUPTED
 * after an interrupt, whatever the server answered; EXIT_DATABASE for
 * every answer of the server (a lost connection, a privilege, a missing
 * object, a disk full, ...: SPEC.md's "database error", 4 in every
 * command); db_failure_exit also gives EXIT_INPUT for the client's own
 * out-of-memory (db_set_out_of_memory: 3, as SPEC.md says).  Usage and
 * configuration (2: no table, no matching unique index, a bad option) are
 * found by the callers' own checks, never from a SQLSTATE.
 * db_exit_status is the pure rule; db_failure_exit applies it to the
 * last failure on d and to signals_interrupted().
 */
int db_exit_status(db_error_class cls, const char *sqlstate, bool interrupted);
int db_failure_exit(const db *d);

/* What a failure with SQLSTATE state most likely means, as "; ..." to
 * append to its message (the same table), or "". */
const char *db_sqlstate_hint(const char *state);

/* Is the connection still usable? */
bool db_ok(const db *d);

/* Asks the server to cancel the statement in flight.  Async-signal-safe. */
void db_cancel(void *d);

/* Shuts the connection's socket down, so that a call blocked on it (a
 * server that does not answer, even a cancel) returns at once with a lost
 * connection; the handle stays valid until db_close.  Safe to call from
 * another thread than the one using the connection. */
void db_shutdown(db *d);

/* The process id of the server backend serving this connection
 * (PQbackendPID), e.g. to find it in pg_stat_progress_create_index from
 * another connection. */
int db_backend_pid(const db *d);

#endif
