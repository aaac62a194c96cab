/*
 * db.c - the only file that includes libpq-fe.h (see db.h).
 */
#include "db/db.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/exitcodes.h"
#include "util/signals.h"

struct db {
    PGconn *conn;
    PGcancel *cancel;       /* prepared at connect, so a signal handler can use it */
    char *password;         /* to mask in messages; NULL when none was given */
    char sqlstate[6];
    buf message;
    buf describe;
    buf notice;
    db_error_class cls;
    bool client_oom;        /* the last failure: this process ran out of memory */
};

struct db_result {
    PGresult *res;
};

/* Replaces every occurrence of the password in text with "****". */
static void mask_password(const db *d, buf *text)
{
    if (!d || !d->password || !*d->password || !text->data)
        return;
    size_t plen = strlen(d->password);
    char *p;
    while ((p = strstr(text->data, d->password)) != NULL) {
        size_t at = (size_t)(p - text->data);
        buf out = BUF_INIT;
        buf_append(&out, text->data, at);
        buf_append_str(&out, "****");
        buf_append_str(&out, text->data + at + plen);
        buf_free(text);
        *text = out;
    }
}

static void trim_newline(buf *b)
{
    while (b->len > 0 && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == ' '))
        b->data[--b->len] = '\0';
}

static void clear_error(db *d)
{
    d->sqlstate[0] = '\0';
    buf_clear(&d->message);
    d->cls = DBE_NONE;
    d->client_oom = false;
}

/*
 * The one SQLSTATE table (STYLE.md 18): what a server's answer means, for
 * every command.  Entries are a full code or a two-character class; a code
 * wins over its class (looked up first).  cls says whether to retry
 * (DBE_CONNECTION, DBE_RETRY) and whether it can be one row's fault
 * (DBE_DATA: classes 22, 23, 54 and P0; every other class would fail every
 * row alike, so isolating rows would only reject a whole file row by row);
 * exit is the status it earns when retries did not overcome it (SPEC.md
 * "Exit status": a database error is 4 in every command; a row's fault is
 * rejected by the import, and 4 anywhere else); hint is what to tell the
 * user ("" when nothing useful).  Anything not listed is DBE_FATAL, exit 4.
 */
typedef struct sqlstate_rule {
    const char *state;
    db_error_class cls;
    int exit;
    const char *hint;
} sqlstate_rule;

static const sqlstate_rule sqlstate_rules[] = {
    /* codes */
    {"57P01", DBE_CONNECTION, EXIT_DATABASE, ""},  /* admin shutdown */
    {"57P02", DBE_CONNECTION, EXIT_DATABASE, ""},  /* crash shutdown */
    {"57P03", DBE_CONNECTION, EXIT_DATABASE, ""},  /* cannot connect now */
    {"40P01", DBE_RETRY, EXIT_DATABASE, ""},       /* deadlock */
    {"40001", DBE_RETRY, EXIT_DATABASE, ""},       /* serialization failure */
    /* a lock_timeout gave up on a lock another session holds a while (a
     * concurrent loader's chunk, a DBA's LOCK): worth another try */
    {"55P03", DBE_RETRY, EXIT_DATABASE, ""},
    {"57014", DBE_CANCELED, EXIT_DATABASE,
     "; the server canceled the statement: a statement_timeout (the role's or the "
     "database's), or pg_cancel_backend() from another session; give the loader's role a "
     "longer one (ALTER ROLE ... SET statement_timeout) or load smaller chunks (--chunk-rows), "
     "and run the same command again"},
    {"42501", DBE_FATAL, EXIT_DATABASE,
     "; the role needs SELECT, INSERT and UPDATE on the table, CREATE on its schema (for the "
     "ledger) and TEMP on the database"},
    {"25006", DBE_FATAL, EXIT_DATABASE, "; the server is read-only (a standby?)"},
    /* the client's own out of memory (db_set_out_of_memory) is told apart
     * by the handle, not by this code, which the server uses too */
    /* classes */
    {"08", DBE_CONNECTION, EXIT_DATABASE, ""},
    {"22", DBE_DATA, EXIT_DATABASE, ""},
    {"23", DBE_DATA, EXIT_DATABASE, ""},
    {"54", DBE_DATA, EXIT_DATABASE, ""},
    {"P0", DBE_DATA, EXIT_DATABASE, ""},
    {"0A", DBE_FATAL, EXIT_DATABASE,
     "; the server (or a trigger, rule or extension on the table) does not support a "
     "statement idemload needs: nothing was rejected, fix the cause and run the same command "
     "again"},
    {"42", DBE_FATAL, EXIT_DATABASE,
     "; an object the merge or a trigger on the table needs is missing or wrong: nothing was "
     "rejected, fix it and run the same command again"},
    {"53", DBE_FATAL, EXIT_DATABASE,
     "; the server is out of a resource (disk, memory, connections)"},
};

/* The rule for state (a code, then its class), or NULL: not listed. */
static const sqlstate_rule *rule_of(const char *state)
{
    size_t n = sizeof sqlstate_rules / sizeof sqlstate_rules[0];
    if (!state || strlen(state) != 5)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strlen(sqlstate_rules[i].state) == 5 && strcmp(sqlstate_rules[i].state, state) == 0)
            return &sqlstate_rules[i];
    for (size_t i = 0; i < n; i++)
        if (strlen(sqlstate_rules[i].state) == 2 && strncmp(sqlstate_rules[i].state, state, 2) == 0)
            return &sqlstate_rules[i];
    return NULL;
}

const char *db_sqlstate_hint(const char *state)
{
    const sqlstate_rule *r = rule_of(state);
    return r ? r->hint : "";
}

/* Records the error of res (may be NULL: a connection-level failure). */
static void set_error(db *d, const PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
    snprintf(d->sqlstate, sizeof d->sqlstate, "%s", state ? state : "");
    buf_clear(&d->message);
    if (primary) {
        /* The server's own words, without libpq's "ERROR:" and the
         * "LINE 1: ..." excerpt of our SQL. */
        buf_append_str(&d->message, primary);
        if (detail)
            buf_printf(&d->message, " (%s)", detail);
    } else {
        const char *msg = PQerrorMessage(d->conn);
        buf_append_str(&d->message, msg && *msg ? msg : "unknown error");
    }
    trim_newline(&d->message);
    /* Keep the message on one line. */
    for (size_t i = 0; i < d->message.len; i++)
        if (d->message.data[i] == '\n' || d->message.data[i] == '\t')
            d->message.data[i] = ' ';
    mask_password(d, &d->message);
    /* No SQLSTATE: the server never answered (libpq's own error, e.g. the
     * connection of an idle worker died with its server; PQstatus may not
     * say so yet): reconnect and retry.  Otherwise the table says. */
    const sqlstate_rule *rule = rule_of(d->sqlstate);
    d->client_oom = false;
    if (PQstatus(d->conn) != CONNECTION_OK || d->sqlstate[0] == '\0')
        d->cls = DBE_CONNECTION;
    else
        d->cls = rule ? rule->cls : DBE_FATAL;
}

static void on_notice(void *arg, const PGresult *res)
{
    db *d = arg;
    buf_clear(&d->notice);
    buf_append_str(&d->notice, PQresultErrorMessage(res));
    trim_newline(&d->notice);
}

db *db_connect(const char *dbname, buf *err)
{
    db *d = calloc(1, sizeof *d);
    if (!d) {
        buf_append_str(err, "out of memory");
        return NULL;
    }
    if (dbname) {
        /* Learn the password the user gave, only to mask it in messages. */
        char *perr = NULL;
        PQconninfoOption *opts = PQconninfoParse(dbname, &perr);
        if (opts) {
            for (PQconninfoOption *o = opts; o->keyword; o++)
                if (strcmp(o->keyword, "password") == 0 && o->val)
                    d->password = strdup(o->val);
            PQconninfoFree(opts);
        }
        PQfreemem(perr);
    }
    /* Or the one PGPASSWORD holds (a password from ~/.pgpass or a service
     * file is learnt from the connection below). */
    const char *env_password = getenv("PGPASSWORD");
    if (!d->password && env_password && *env_password)
        d->password = strdup(env_password);
    const char *keys[] = {"dbname", "fallback_application_name", "client_encoding", NULL};
    const char *vals[] = {dbname, "idemload", "UTF8", NULL};
    d->conn = PQconnectdbParams(keys, vals, 1);
    const char *used = d->conn ? PQpass(d->conn) : NULL;
    if (!d->password && used && *used)
        d->password = strdup(used);
    if (!d->conn || PQstatus(d->conn) != CONNECTION_OK) {
        buf msg = BUF_INIT;
        buf_append_str(&msg, d->conn ? PQerrorMessage(d->conn) : "out of memory");
        trim_newline(&msg);
        for (size_t i = 0; i < msg.len; i++)
            if (msg.data[i] == '\n')
                msg.data[i] = ' ';
        mask_password(d, &msg);
        buf_printf(err, "cannot connect to the database: %s", buf_cstr(&msg));
        buf_free(&msg);
        db_close(&d);
        return NULL;
    }
    PQsetNoticeReceiver(d->conn, on_notice, d);
    d->cancel = PQgetCancel(d->conn);
    buf_printf(&d->describe, "%s@%s:%s/%s", PQuser(d->conn), PQhost(d->conn), PQport(d->conn),
               PQdb(d->conn));
    return d;
}

void db_close(db **dp)
{
    db *d = *dp;
    if (!d)
        return;
    if (d->cancel)
        PQfreeCancel(d->cancel);
    if (d->conn)
        PQfinish(d->conn);
    free(d->password);
    buf_free(&d->message);
    buf_free(&d->describe);
    buf_free(&d->notice);
    free(d);
    *dp = NULL;
}

const char *db_describe(const db *d)
{
    return buf_cstr(&d->describe);
}

bool db_exec(db *d, const char *sql)
{
    clear_error(d);
    PGresult *res = PQexec(d->conn, sql);
    ExecStatusType st = PQresultStatus(res);
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok)
        set_error(d, res);
    PQclear(res);
    return ok;
}

db_result *db_query(db *d, const char *sql, int nparams, const char *const *params)
{
    clear_error(d);
    PGresult *res = PQexecParams(d->conn, sql, nparams, NULL, params, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        set_error(d, res);
        PQclear(res);
        return NULL;
    }
    db_result *r = malloc(sizeof *r);
    if (!r) {
        PQclear(res);
        db_set_out_of_memory(d);
        return NULL;
    }
    r->res = res;
    return r;
}

bool db_exec_params(db *d, const char *sql, int nparams, const char *const *params)
{
    db_result *r = db_query(d, sql, nparams, params);
    bool ok = r != NULL;
    db_result_free(&r);
    return ok;
}

int db_nrows(const db_result *r)
{
    return PQntuples(r->res);
}

const char *db_value(const db_result *r, int row, int col)
{
    return PQgetvalue(r->res, row, col);
}

bool db_is_null(const db_result *r, int row, int col)
{
    return PQgetisnull(r->res, row, col) != 0;
}

int64_t db_int(const db_result *r, int row, int col)
{
    if (PQgetisnull(r->res, row, col))
        return 0;
    return strtoll(PQgetvalue(r->res, row, col), NULL, 10);
}

void db_result_free(db_result **rp)
{
    if (*rp) {
        PQclear((*rp)->res);
        free(*rp);
        *rp = NULL;
    }
}

bool db_copy_begin(db *d, const char *sql)
{
    clear_error(d);
    PGresult *res = PQexec(d->conn, sql);
    if (PQresultStatus(res) != PGRES_COPY_IN) {
        set_error(d, res);
        PQclear(res);
        return false;
    }
    PQclear(res);
    return true;
}

bool db_copy_send(db *d, const char *data, size_t len)
{
    while (len > 0) {
        int piece = len > (1u << 30) ? (1 << 30) : (int)len;
        if (PQputCopyData(d->conn, data, piece) != 1) {
            set_error(d, NULL);
            return false;
        }
        data += piece;
        len -= (size_t)piece;
    }
    return true;
}

bool db_copy_end(db *d, const char *abort_reason)
{
    bool ok = true;
    if (PQputCopyEnd(d->conn, abort_reason) != 1) {
        set_error(d, NULL);
        ok = false;
    }
    PGresult *res;
    bool seen_error = false;
    while ((res = PQgetResult(d->conn)) != NULL) {
        ExecStatusType st = PQresultStatus(res);
        if (st != PGRES_COMMAND_OK && !seen_error) {
            /* Keep our own error when we aborted. */
            if (!abort_reason || ok)
                set_error(d, res);
            seen_error = true;
            ok = false;
        }
        PQclear(res);
    }
    return ok && !abort_reason;
}

bool db_append_ident(db *d, buf *out, const char *ident)
{
    char *q = PQescapeIdentifier(d->conn, ident, strlen(ident));
    if (!q) {
        set_error(d, NULL);
        return false;
    }
    bool ok = buf_append_str(out, q);
    PQfreemem(q);
    return ok;
}

const char *db_sqlstate(const db *d)
{
    return d->sqlstate;
}

const char *db_message(const db *d)
{
    return buf_cstr(&d->message);
}

db_error_class db_error_class_of(const db *d)
{
    return d->cls;
}

void db_set_out_of_memory(db *d)
{
    snprintf(d->sqlstate, sizeof d->sqlstate, "53200");
    buf_clear(&d->message);
    buf_append_str(&d->message, "out of memory (client)");
    d->cls = DBE_FATAL;
    d->client_oom = true;
}

int db_exit_status(db_error_class cls, const char *sqlstate, bool interrupted)
{
    if (interrupted)
        return EXIT_INTERRUPTED;
    if (cls == DBE_CONNECTION)
        return EXIT_DATABASE;
    const sqlstate_rule *r = rule_of(sqlstate);
    return r ? r->exit : EXIT_DATABASE;
}

int db_failure_exit(const db *d)
{
    if (!signals_interrupted() && d->client_oom)
        return EXIT_INPUT;      /* SPEC.md: the client out of memory is 3 */
    return db_exit_status(d->cls, d->sqlstate, signals_interrupted());
}

bool db_ok(const db *d)
{
    return d->conn && PQstatus(d->conn) == CONNECTION_OK;
}

void db_cancel(void *arg)
{
    db *d = arg;
    char errbuf[256];
    if (d && d->cancel)
        PQcancel(d->cancel, errbuf, (int)sizeof errbuf);
}

void db_shutdown(db *d)
{
    int fd = d && d->conn ? PQsocket(d->conn) : -1;
    if (fd >= 0)
        shutdown(fd, SHUT_RDWR);
}

const char *db_last_notice(const db *d)
{
    return buf_cstr(&d->notice);
}

int db_server_version(const db *d)
{
    return PQserverVersion(d->conn);
}

int db_backend_pid(const db *d)
{
    return PQbackendPID(d->conn);
}

/* ---- transaction verbs -------------------------------------------------- */

bool db_begin(db *d)
{
    return db_exec(d, "BEGIN");
}

bool db_commit(db *d)
{
    return db_exec(d, "COMMIT");
}

bool db_rollback(db *d)
{
    return db_exec(d, "ROLLBACK");
}

/* A savepoint name idemload may write into SQL as it is. */
static bool plain_name(const char *name)
{
    if (!name || !((*name >= 'a' && *name <= 'z') || *name == '_'))
        return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return strlen(name) < 64;
}

/* Runs "<verb> <name>" for a plain savepoint name. */
static bool savepoint_verb(db *d, const char *verb, const char *name)
{
    char sql[128];
    if (!plain_name(name))
        return false;
    snprintf(sql, sizeof sql, "%s %s", verb, name);
    return db_exec(d, sql);
}

bool db_savepoint(db *d, const char *name)
{
    return savepoint_verb(d, "SAVEPOINT", name);
}

bool db_release(db *d, const char *name)
{
    return savepoint_verb(d, "RELEASE SAVEPOINT", name);
}

bool db_rollback_to(db *d, const char *name)
{
    return savepoint_verb(d, "ROLLBACK TO SAVEPOINT", name);
}
