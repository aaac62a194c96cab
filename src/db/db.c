/*
 * db.c - the only file that includes libpq-fe.h (see db.h).
 */
#include "db/db.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/exitcodes.h"
#include "util/fault.h"
#include "util/signals.h"

struct db {
    PGconn *conn;
    PGcancel *cancel;       /* prepared at connect, so a signal handler can use it */
    char *passwords[8];     /* to mask in messages, longest first; NULL-padded */
    char sqlstate[6];
    buf message;
    buf describe;
    db_error_class cls;
    bool client_oom;        /* the last failure: this process ran out of memory */
};

struct db_result {
    PGresult *res;
};

/* Replaces every occurrence of each password in text with "****". */
static void mask_password(const db *d, buf *text)
{
    if (!d || !text->data)
        return;
    for (size_t k = 0; k < sizeof d->passwords / sizeof d->passwords[0] && d->passwords[k]; k++) {
        const char *pw = d->passwords[k];
        size_t plen = strlen(pw);
        char *p;
        size_t from = 0;
        while ((p = strstr(text->data + from, pw)) != NULL) {
            size_t at = (size_t)(p - text->data);
            buf out = BUF_INIT;
            buf_append(&out, text->data, at);
            buf_append_str(&out, "****");
            buf_append_str(&out, text->data + at + plen);
            buf_free(text);
            *text = out;
            from = at + 4;
        }
    }
}

/* Adds pw[0..n) to the passwords to mask (kept longest first, so that a
 * password holding another is masked whole); empty or repeated ones are
 * skipped. */
static void add_password(db *d, const char *pw, size_t n)
{
    const size_t cap = sizeof d->passwords / sizeof d->passwords[0];
    if (n == 0 || d->passwords[cap - 1])
        return;
    size_t k = 0;
    for (; k < cap && d->passwords[k]; k++)
        if (strlen(d->passwords[k]) == n && memcmp(d->passwords[k], pw, n) == 0)
            return;
    char *copy = strndup(pw, n);
    if (!copy)
        return;
    size_t at = 0;
    while (at < k && strlen(d->passwords[at]) >= n)
        at++;
    memmove(&d->passwords[at + 1], &d->passwords[at], (k - at) * sizeof d->passwords[0]);
    d->passwords[at] = copy;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* A URI's password as written and, when it decodes, percent-decoded (a
 * message may quote either). */
static void add_uri_password(db *d, const char *pw, size_t n)
{
    add_password(d, pw, n);
    buf dec = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (pw[i] == '%' && i + 2 < n && (hi = hex_digit(pw[i + 1])) >= 0 &&
            (lo = hex_digit(pw[i + 2])) >= 0 && (hi || lo)) {
            buf_append_char(&dec, (char)(hi * 16 + lo));
            i += 2;
        } else {
            buf_append_char(&dec, pw[i]);
        }
    }
    if (dec.data)
        add_password(d, dec.data, dec.len);
    buf_free(&dec);
}

/*
 * Learns every password the -d text may hold from its own bytes, before
 * libpq parses it: libpq quotes the offending token when it cannot parse
 * the string (a '%' without two hex digits, a %00), and that token may be
 * the password.  A URI's userinfo (user:password@) and password= in its
 * query; a conninfo's password=value, bare or single-quoted.  Generous on
 * purpose: what looks like a password is masked even if libpq would read
 * the string otherwise.
 */
static void learn_passwords(db *d, const char *s)
{
    size_t scheme = strncmp(s, "postgresql://", 13) == 0 ? 13
                  : strncmp(s, "postgres://", 11) == 0   ? 11
                                                         : 0;
    if (scheme) {
        const char *auth = s + scheme;
        size_t alen = strcspn(auth, "@/?");
        if (auth[alen] == '@') {
            const char *colon = memchr(auth, ':', alen);
            if (colon)
                add_uri_password(d, colon + 1, (size_t)(auth + alen - colon - 1));
        }
        for (const char *q = strchr(auth, '?'); q; q = strchr(q + 1, '&')) {
            const char *kv = q + 1;
            if (strncmp(kv, "password=", 9) == 0)
                add_uri_password(d, kv + 9, strcspn(kv + 9, "&"));
        }
        return;
    }
    for (const char *p = strstr(s, "password"); p; p = strstr(p + 1, "password")) {
        const char *v = p + 8;
        v += strspn(v, " \t\n\r\f\v");
        if (*v != '=')
            continue;
        v++;
        v += strspn(v, " \t\n\r\f\v");
        if (*v == '\'') {
            buf val = BUF_INIT;
            const char *e = v + 1;
            for (; *e && *e != '\''; e++) {
                if (*e == '\\' && e[1])
                    e++;
                buf_append_char(&val, *e);
            }
            add_password(d, v + 1, (size_t)(e - v - 1)); /* as written, escapes kept */
            if (val.data)
                add_password(d, val.data, val.len);
            buf_free(&val);
        } else {
            add_password(d, v, strcspn(v, " \t\n\r\f\v"));
        }
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
    /* classes; a failed connect and a connection lost mid-statement have
     * no SQLSTATE from libpq: they stand as this class's 08001 (cannot
     * establish a connection) and 08006 (connection failure), by
     * convention (SQLSTATE_CONNECT_FAILED, SQLSTATE_CONNECTION_LOST) */
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
    /* anything else (the last row) */
    {"", DBE_FATAL, EXIT_DATABASE, ""},
};

#define SQLSTATE_CONNECT_FAILED "08001"
#define SQLSTATE_CONNECTION_LOST "08006"

/* The rule for state (a code, then its class, then anything else). */
static const sqlstate_rule *rule_of(const char *state)
{
    size_t n = sizeof sqlstate_rules / sizeof sqlstate_rules[0];
    if (state && strlen(state) == 5) {
        for (size_t i = 0; i < n; i++)
            if (strlen(sqlstate_rules[i].state) == 5 && strcmp(sqlstate_rules[i].state, state) == 0)
                return &sqlstate_rules[i];
        for (size_t i = 0; i < n; i++)
            if (strlen(sqlstate_rules[i].state) == 2 &&
                strncmp(sqlstate_rules[i].state, state, 2) == 0)
                return &sqlstate_rules[i];
    }
    return &sqlstate_rules[n - 1];
}

const char *db_sqlstate_hint(const char *state)
{
    return rule_of(state)->hint;
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
    d->client_oom = false;
    if (PQstatus(d->conn) != CONNECTION_OK || d->sqlstate[0] == '\0')
        d->cls = DBE_CONNECTION;
    else
        d->cls = rule_of(d->sqlstate)->cls;
}

/* The server's notices ("relation ... already exists, skipping") are not
 * the user's business: without a receiver libpq would print them on stderr
 * between idemload's own lines. */
static void on_notice(void *arg, const PGresult *res)
{
    (void)arg;
    (void)res;
}

/* The status of a failure: the client's own out of memory is 3 (SPEC.md),
 * an interrupt 130, anything else as the table says of state. */
static int failure_exit(bool client_oom, db_error_class cls, const char *state)
{
    if (!signals_interrupted() && client_oom)
        return EXIT_INPUT;
    return db_exit_status(cls, state, signals_interrupted());
}

/* A connect that failed: *err says why, *exit_status (unless NULL) takes
 * its status by the same rule as any failure.  Returns NULL. */
static db *connect_failed(db **d, bool client_oom, buf *err, int *exit_status)
{
    if (client_oom)
        buf_append_str(err, "cannot connect to the database: out of memory (client)");
    if (exit_status)
        *exit_status = failure_exit(client_oom, DBE_CONNECTION, SQLSTATE_CONNECT_FAILED);
    db_close(d);
    return NULL;
}

db *db_connect(const char *dbname, buf *err, int *exit_status)
{
    /* The tests ask for the client out of memory here (util/fault.h). */
    db *d = fault_injected("connect-oom") ? NULL : calloc(1, sizeof *d);
    if (!d)
        return connect_failed(&d, true, err, exit_status);
    if (dbname) {
        /* Mask first, then parse: the passwords the text holds, read from
         * its bytes, then the one libpq reads when it can parse it. */
        learn_passwords(d, dbname);
        char *perr = NULL;
        PQconninfoOption *opts = PQconninfoParse(dbname, &perr);
        if (opts) {
            for (PQconninfoOption *o = opts; o->keyword; o++)
                if (strcmp(o->keyword, "password") == 0 && o->val)
                    add_password(d, o->val, strlen(o->val));
            PQconninfoFree(opts);
        }
        PQfreemem(perr);
    }
    /* And the one PGPASSWORD holds (a password from ~/.pgpass or a service
     * file is learnt from the connection below). */
    const char *env_password = getenv("PGPASSWORD");
    if (env_password)
        add_password(d, env_password, strlen(env_password));
    const char *keys[] = {"dbname", "fallback_application_name", "client_encoding", NULL};
    const char *vals[] = {dbname, "idemload", "UTF8", NULL};
    d->conn = PQconnectdbParams(keys, vals, 1);
    const char *used = d->conn ? PQpass(d->conn) : NULL;
    if (used)
        add_password(d, used, strlen(used));
    if (!d->conn)
        return connect_failed(&d, true, err, exit_status);
    if (PQstatus(d->conn) != CONNECTION_OK) {
        buf msg = BUF_INIT;
        buf_append_str(&msg, PQerrorMessage(d->conn));
        trim_newline(&msg);
        for (size_t i = 0; i < msg.len; i++)
            if (msg.data[i] == '\n' || msg.data[i] == '\t')
                msg.data[i] = ' ';
        mask_password(d, &msg);
        buf_printf(err, "cannot connect to the database: %s", buf_cstr(&msg));
        buf_free(&msg);
        return connect_failed(&d, false, err, exit_status);
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
    for (size_t k = 0; k < sizeof d->passwords / sizeof d->passwords[0]; k++)
        free(d->passwords[k]);
    buf_free(&d->message);
    buf_free(&d->describe);
    free(d);
    *dp = NULL;
}

/* A conninfo value as libpq reads it back: as it is when it is not empty
 * and holds no blank, quote or backslash; else in single quotes, with '
 * and \ escaped by a backslash. */
static bool append_conninfo_value(buf *out, const char *v)
{
    if (*v && !strpbrk(v, " \t\n\r\f\v'\\"))
        return buf_append_str(out, v);
    bool ok = buf_append_char(out, '\'');
    for (; ok && *v; v++) {
        if (*v == '\'' || *v == '\\')
            ok = buf_append_char(out, '\\');
        ok = ok && buf_append_char(out, *v);
    }
    return ok && buf_append_char(out, '\'');
}

static bool secret_option(const PQconninfoOption *o)
{
    return o->dispchar && strchr(o->dispchar, '*');
}

bool db_conninfo_shown(const char *dbname, buf *out)
{
    size_t was = out->len;
    /* libpq reads a URI, or any text with an '=', as a connection string
     * (recognized_connection_string); anything else is a database name. */
    if (strncmp(dbname, "postgresql://", 13) != 0 && strncmp(dbname, "postgres://", 11) != 0 &&
        !strchr(dbname, '='))
        return buf_append_str(out, dbname);
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(dbname, &perr);
    PQfreemem(perr);
    if (!opts)
        return false;
    bool secret = false;
    for (const PQconninfoOption *o = opts; o->keyword; o++)
        secret |= o->val && secret_option(o);
    bool ok = true;
    if (!secret) {
        ok = buf_append_str(out, dbname);
    } else {
        /* The options it sets, in libpq's order, but the secret ones. */
        for (const PQconninfoOption *o = opts; ok && o->keyword; o++)
            if (o->val && !secret_option(o))
                ok = buf_printf(out, "%s%s=", out->len > was ? " " : "", o->keyword) &&
                     append_conninfo_value(out, o->val);
    }
    PQconninfoFree(opts);
    if (!ok && out->data) {
        out->len = was;
        out->data[was] = '\0';
    }
    return ok;
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
    /* A connection libpq saw fail, with no SQLSTATE of the server's. */
    if (cls == DBE_CONNECTION && (!sqlstate || !*sqlstate))
        sqlstate = SQLSTATE_CONNECTION_LOST;
    return rule_of(sqlstate)->exit;
}

int db_failure_exit(const db *d)
{
    return failure_exit(d->client_oom, d->cls, d->sqlstate);
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
