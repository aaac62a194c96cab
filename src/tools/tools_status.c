/*
 * tools_status.c - idemload status: the ledger of the target table as a
 * person reads it during a backfill (SPEC.md "Many importers, one
 * backfill").
 *
 * Facts first: status_gather() reads every file of the ledger into a
 * status_facts (one statement, SQL_STATUS), deciding each file's state:
 * completed; loading, when a live session holds the file's advisory lock
 * (pg_locks, the key of SQL_FILE_LOCK); interrupted, when the ledger says
 * loading but no session holds the lock, so its loader died or was killed
 * and the same import command resumes it.  Then status_render_text() and
 * status_render_json() render those facts; neither asks the database.
 * Exit 0 whatever the states (a report, not a check).
 */
#include "tools/tools.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "db/ledger_schema.h"
#include "db/sql.h"
#include "output/log.h"
#include "tools/tools_shared.h"
#include "util/exitcodes.h"

typedef enum file_state { STATE_COMPLETED, STATE_LOADING, STATE_INTERRUPTED } file_state;

static const char *const state_names[] = {"completed", "loading", "interrupted"};

typedef struct status_file {
    char *file_name;
    char *file_name_bytes;  /* base64 of a name file_name holds escaped; NULL: none */
    char *digest;
    long long size_bytes;
    file_state state;
    char *host;             /* who loads (or loaded) it; NULL: not recorded */
    long long pid;          /* -1: not recorded */
    long long lock_pid;     /* backend holding the file's lock, -1: none */
    long long chunks;
    long long rows_read, rows_rejected, rows_deduplicated;
    long long inserted, updated, unchanged, stale, existing;
    char *started_at, *updated_at, *completed_at;   /* ISO 8601 UTC; NULL: none */
    long long idle_s;       /* seconds since updated_at */
    long long partial_lanes;    /* lanes of chunk chunks + 1 committed; -1: none */
    long long lanes;
} status_file;

typedef struct status_facts {
    char *target;           /* schema.name, as the ledger keys it */
    bool ledger_exists;
    status_file *files;
    size_t n_files;
    size_t n_state[3];
} status_facts;

static char *dup_or_null(const db_result *r, int ri, int col)
{
    return db_is_null(r, ri, col) ? NULL : strdup(db_value(r, ri, col));
}

static void status_facts_free(status_facts *f)
{
    for (size_t i = 0; i < f->n_files; i++) {
        status_file *s = &f->files[i];
        free(s->file_name);
        free(s->file_name_bytes);
        free(s->digest);
        free(s->host);
        free(s->started_at);
        free(s->updated_at);
        free(s->completed_at);
    }
    free(f->files);
    free(f->target);
    memset(f, 0, sizeof *f);
}

/* Row i of SQL_STATUS into *s, with the file's state. */
static void status_file_read(const db_result *r, int i, status_file *s)
{
    s->file_name = strdup(db_value(r, i, 0));
    s->digest = strdup(db_value(r, i, 1));
    s->size_bytes = (long long)db_int(r, i, 2);
    s->host = dup_or_null(r, i, 4);
    s->pid = db_is_null(r, i, 5) ? -1 : (long long)db_int(r, i, 5);
    s->chunks = (long long)db_int(r, i, 6);
    s->rows_read = (long long)db_int(r, i, 7);
    s->rows_rejected = (long long)db_int(r, i, 8);
    s->rows_deduplicated = (long long)db_int(r, i, 9);
    s->inserted = (long long)db_int(r, i, 10);
    s->updated = (long long)db_int(r, i, 11);
    s->unchanged = (long long)db_int(r, i, 12);
    s->stale = (long long)db_int(r, i, 13);
    s->existing = (long long)db_int(r, i, 14);
    s->started_at = dup_or_null(r, i, 15);
    s->updated_at = dup_or_null(r, i, 16);
    s->completed_at = dup_or_null(r, i, 17);
    s->lock_pid = db_is_null(r, i, 18) ? -1 : (long long)db_int(r, i, 18);
    s->idle_s = db_is_null(r, i, 19) ? 0 : (long long)db_int(r, i, 19);
    s->partial_lanes = db_is_null(r, i, 20) ? -1 : (long long)db_int(r, i, 20);
    s->lanes = (long long)db_int(r, i, 21);
    s->file_name_bytes = dup_or_null(r, i, 22);
    if (strcmp(db_value(r, i, 3), "completed") == 0)
        s->state = STATE_COMPLETED;
    else
        s->state = s->lock_pid >= 0 ? STATE_LOADING : STATE_INTERRUPTED;
}

/* Reads the ledger of c's table into *f.  EXIT_OK, or the exit status of
 * the failure (logged). */
static int status_gather(tool_ctx *c, status_facts *f)
{
    memset(f, 0, sizeof *f);
    f->target = strdup(c->t.display);
    ledger_names ledger = {BUF_INIT, BUF_INIT};
    buf sql = BUF_INIT;
    ledger_version version;
    int code = EXIT_OK;
    if (!ledger_names_of(&ledger, c->d, c->t.schema)) {
        log_error("out of memory");
        code = EXIT_INPUT;
        goto out;
    }
    if (!ledger_version_read(&ledger, c->d, &version)) {
        code = tool_db_failure(c->d, "cannot look for the ledger");
        goto out;
    }
    f->ledger_exists = version.exists;
    bool has_loader = version.has[LEDGER_LOADER];
    if (!f->ledger_exists)
        goto out;
    const char *names[] = {"ledger", "ledger_chunk", "loader_host", "loader_pid", "lanes",
                           "name_bytes"};
    const char *vals[] = {buf_cstr(&ledger.file), buf_cstr(&ledger.chunk),
                          has_loader ? "l.loader_host" : "NULL::text",
                          has_loader ? "l.loader_pid" : "NULL::integer",
                          version.has[LEDGER_LANES] ? "l.lanes" : "1",
                          version.has[LEDGER_NAME_BYTES] ? "l.file_name_bytes" : "NULL::text"};
    if (!sql_render(&sql, SQL_STATUS, 6, names, vals)) {
        log_error("out of memory");
        code = EXIT_INPUT;
        goto out;
    }
    const char *p[] = {c->t.display};
    db_result *r = db_query(c->d, buf_cstr(&sql), 1, p);
    if (!r) {
        code = tool_db_failure(c->d, "cannot read the ledger");
        goto out;
    }
    int n = db_nrows(r);
    f->files = calloc(n > 0 ? (size_t)n : 1, sizeof *f->files);
    if (!f->files) {
        db_result_free(&r);
        log_error("out of memory");
        code = EXIT_INPUT;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        status_file *s = &f->files[f->n_files++];
        status_file_read(r, i, s);
        f->n_state[s->state]++;
    }
    db_result_free(&r);
out:
    ledger_names_free(&ledger);
    buf_free(&sql);
    return code;
}

static void render_duration(FILE *fp, long long s)
{
    if (s < 120)
        fprintf(fp, "%lld s", s);
    else if (s < 7200)
        fprintf(fp, "%lld min", s / 60);
    else
        fprintf(fp, "%lld h", s / 3600);
}

static void status_render_text(const status_facts *f, FILE *fp)
{
    if (!f->ledger_exists) {
        fprintf(fp, "%s: no ledger yet (idemload has loaded nothing into this schema)\n",
                f->target);
        return;
    }
    fprintf(fp, "%s: %zu file%s in the ledger: %zu completed, %zu loading, %zu interrupted\n",
            f->target, f->n_files, f->n_files == 1 ? "" : "s", f->n_state[STATE_COMPLETED],
            f->n_state[STATE_LOADING], f->n_state[STATE_INTERRUPTED]);
    for (size_t i = 0; i < f->n_files; i++) {
        const status_file *s = &f->files[i];
        fprintf(fp, "\n%-11s %s  (sha256 %.12s..., %lld bytes)\n", state_names[s->state],
                s->file_name, s->digest, s->size_bytes);
        const char *host = s->host ? s->host : "not recorded";
        switch (s->state) {
        case STATE_LOADING:
            fprintf(fp, "            loading by %s, process %lld; last progress ", host, s->pid);
            render_duration(fp, s->idle_s);
            fprintf(fp, " ago (%s)\n", s->updated_at ? s->updated_at : "-");
            break;
        case STATE_INTERRUPTED:
            fprintf(fp, "            interrupted: its loader (%s, process %lld) is gone; the "
                        "same import command resumes it after chunk %lld",
                    host, s->pid, s->chunks);
            if (s->partial_lanes >= 0)
                fprintf(fp, " (chunk %lld: %lld of its %lld lanes have a committed row, in no "
                            "figure below; the rerun reads it again and loads the lanes that "
                            "have none)", s->chunks + 1, s->partial_lanes, s->lanes);
            fputc('\n', fp);
            break;
        default:
            fprintf(fp, "            loaded by %s, process %lld\n", host, s->pid);
            break;
        }
        fprintf(fp, "            chunks %lld: rows read %lld, rejected %lld, deduplicated %lld; "
                    "inserted %lld, updated %lld, unchanged %lld, stale %lld, existing %lld\n",
                s->chunks, s->rows_read, s->rows_rejected, s->rows_deduplicated, s->inserted,
                s->updated, s->unchanged, s->stale, s->existing);
        fprintf(fp, "            started %s, last progress %s, completed %s\n",
                s->started_at ? s->started_at : "-", s->updated_at ? s->updated_at : "-",
                s->completed_at ? s->completed_at : "-");
    }
}

static json_t *text_or_null(const char *s)
{
    return s ? tool_json_text(s) : json_null();
}

static json_t *status_render_json(const status_facts *f)
{
    json_t *root = json_object();
    json_object_set_new(root, "target", tool_json_text(f->target));
    json_t *files = json_array();
    for (size_t i = 0; i < f->n_files; i++) {
        const status_file *s = &f->files[i];
        json_t *o = json_object();
        json_object_set_new(o, "file_name", tool_json_text(s->file_name));
        if (s->file_name_bytes)
            json_object_set_new(o, "file_name_base64", tool_json_text(s->file_name_bytes));
        json_object_set_new(o, "digest", json_string(s->digest));
        json_object_set_new(o, "size_bytes", json_integer(s->size_bytes));
        json_object_set_new(o, "state", json_string(state_names[s->state]));
        json_object_set_new(o, "host", text_or_null(s->host));
        json_object_set_new(o, "pid", s->pid >= 0 ? json_integer(s->pid) : json_null());
        json_object_set_new(o, "chunks", json_integer(s->chunks));
        json_object_set_new(o, "rows_read", json_integer(s->rows_read));
        json_object_set_new(o, "rows_rejected", json_integer(s->rows_rejected));
        json_object_set_new(o, "rows_deduplicated", json_integer(s->rows_deduplicated));
        json_object_set_new(o, "inserted", json_integer(s->inserted));
        json_object_set_new(o, "updated", json_integer(s->updated));
        json_object_set_new(o, "unchanged", json_integer(s->unchanged));
        json_object_set_new(o, "stale", json_integer(s->stale));
        json_object_set_new(o, "existing", json_integer(s->existing));
        json_object_set_new(o, "started_at", text_or_null(s->started_at));
        json_object_set_new(o, "updated_at", text_or_null(s->updated_at));
        json_object_set_new(o, "completed_at", text_or_null(s->completed_at));
        json_array_append_new(files, o);
    }
    json_object_set_new(root, "files", files);
    return root;
}

int tools_status(const config *cfg)
{
    tool_ctx c;
    int code = tool_open(cfg, &c);
    if (code != EXIT_OK) {
        tool_close(&c);
        return code;
    }
    status_facts f;
    code = status_gather(&c, &f);
    if (code == EXIT_OK) {
        status_render_text(&f, c.human);
        if (cfg->report_path) {
            json_t *root = status_render_json(&f);
            if (!tool_write_report(root, cfg->report_path))
                code = EXIT_INPUT;
            json_decref(root);
        }
    }
    status_facts_free(&f);
    tool_close(&c);
    return code;
}
