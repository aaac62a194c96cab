/*
 * report.c - summary and JSON report (see report.h).
 */
#include "output/report.h"

#include "output/outfile.h"
#include "output/text_escape.h"
#include "rules/utf8.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/exitcodes.h"

bool run_report_init(run_report *rep, size_t n_files)
{
    memset(rep, 0, sizeof *rep);
    rep->files = calloc(n_files ? n_files : 1, sizeof *rep->files);
    rep->n_files = n_files;
    rep->started_at = (int64_t)time(NULL);
    rep->timeline = timeline_new();
    for (size_t i = 0; rep->files && i < n_files; i++)
        rep->files[i].elapsed_s = -1;
    return rep->files != NULL && rep->timeline != NULL;
}

void run_report_free(run_report *rep)
{
    for (size_t i = 0; i < rep->n_files && rep->files; i++) {
        free(rep->files[i].error);
        free(rep->files[i].note);
        free(rep->files[i].reload_reason);
    }
    free(rep->files);
    rep->files = NULL;
    rep->n_files = 0;
    for (size_t i = 0; i < rep->n_groups; i++) {
        free(rep->groups[i].channel);
        free(rep->groups[i].kind);
    }
    free(rep->groups);
    rep->groups = NULL;
    rep->n_groups = 0;
    free(rep->target);
    free(rep->database);
    rep->database = NULL;
    rep->target = NULL;
    timeline_free(&rep->timeline);
    reject_summary_free(&rep->rejects);
    json_decref(rep->reconciliation);
    rep->reconciliation = NULL;
    json_decref(rep->settlement);
    rep->settlement = NULL;
    free(rep->html_section);
    rep->html_section = NULL;
}

const char *exit_status_meaning(const run_report *rep, int code)
{
    switch (code) {
    case EXIT_OK:
        if (rep && rep->settle)
            return "settled: fees, payouts, balances and bank credits agree";
        if (rep && rep->reconcile)
            return "balanced: the statements and the table agree, every row valid";
        if (rep && rep->validate_only)
            return "every row of every file is valid";
        return "every row of every file loaded (or, in a dry run, would load)";
    case EXIT_REJECTS:
        return "finished, but some rows were rejected";
    case EXIT_USAGE:
        return "usage or configuration error";
    case EXIT_INPUT:
        return "a file could not be read or written (an input unreadable, corrupt or over "
               "--max-rejects, an output not writable), or out of memory";
    case EXIT_DATABASE:
        return "database error that retries did not overcome";
    case EXIT_INTERRUPTED:
        return "interrupted; committed chunks stay";
    case EXIT_DISCREPANCIES:
        if (rep && rep->settle)
            return "the money that arrived disagrees with what was owed (discrepancies found)";
        return "the statements and the table disagree (discrepancies found)";
    }
    return "unknown status";
}

void file_report_clear(file_report *fr)
{
    free(fr->error);
    free(fr->note);
    free(fr->reload_reason);
    memset(fr, 0, sizeof *fr);
}

void file_report_set_error(file_report *fr, const char *msg)
{
    free(fr->error);
    fr->error = msg ? strdup(msg) : NULL;
}

void file_report_set_note(file_report *fr, const char *msg)
{
    free(fr->note);
    fr->note = msg ? strdup(msg) : NULL;
}

void file_report_set_reload_reason(file_report *fr, const char *msg)
{
    free(fr->reload_reason);
    fr->reload_reason = msg ? strdup(msg) : NULL;
}

const char *file_status_name(file_status s)
{
    switch (s) {
    case FILE_OK:
        return "ok";
    case FILE_PARTIAL:
        return "partial";
    case FILE_FAILED:
        return "failed";
    case FILE_SKIPPED:
        return "skipped";
    }
    return "failed";
}

void run_report_total(run_report *rep)
{
    memset(&rep->totals, 0, sizeof rep->totals);
    for (size_t i = 0; i < rep->n_files; i++)
        load_counts_add(&rep->totals, &rep->files[i].counts);
}

/* One file's figures, or the totals (elapsed >= 0: with the time); a run
 * that merges nothing (validate, reconcile) says what it would merge or
 * compares, and reconcile, which reads no chunks, no chunk count. */
static void print_counts(FILE *fp, const char *indent, const load_counts *c,
                         const run_report *rep, double elapsed)
{
    bool validate_only = rep->validate_only;
    fprintf(fp, "%srows read %llu, rejected %llu, deduplicated %llu", indent,
            (unsigned long long)c->rows_read, (unsigned long long)c->rows_rejected,
            (unsigned long long)c->rows_deduplicated);
    if (c->rows_skipped > 0)
        fprintf(fp, ", skipped %llu", (unsigned long long)c->rows_skipped);
    if (validate_only)
        fprintf(fp, rep->reconcile ? ", compared %llu" : ", would merge %llu",
                (unsigned long long)(c->rows_read - c->rows_rejected - c->rows_skipped -
                                     c->rows_deduplicated));
    fprintf(fp, "\n");
    if (!validate_only)
        fprintf(fp, "%sinserted %llu, updated %llu, unchanged %llu, stale %llu, existing %llu\n",
                indent, (unsigned long long)c->inserted, (unsigned long long)c->updated,
                (unsigned long long)c->unchanged, (unsigned long long)c->stale,
                (unsigned long long)c->existing);
    if (elapsed >= 0 && rep->reconcile)
        fprintf(fp, "%stime %.2f s, %.0f rows/s\n", indent, elapsed,
                elapsed > 0 ? (double)c->rows_read / elapsed : 0.0);
    else if (elapsed >= 0)
        fprintf(fp, "%schunks %llu, time %.2f s, %.0f rows/s\n", indent,
                (unsigned long long)c->chunks, elapsed,
                elapsed > 0 ? (double)c->rows_read / elapsed : 0.0);
}

/* The groups summed over tenants: per channel and kind, sorted, as a cron
 * mail reader scans them. */
#define SUMMARY_MAX_LINES 40

typedef struct channel_kind {
    const char *channel, *kind;
    load_counts c;
} channel_kind;

static int cmp_channel_kind(const void *pa, const void *pb)
{
    const channel_kind *a = pa, *b = pb;
    int c = strcmp(a->channel, b->channel);
    return c ? c : strcmp(a->kind, b->kind);
}

static void print_by_channel(const run_report *rep, FILE *fp)
{
    if (rep->validate_only || rep->n_groups == 0)
        return;
    channel_kind *ck = calloc(rep->n_groups, sizeof *ck);
    if (!ck)
        return;
    size_t n = 0;
    for (size_t i = 0; i < rep->n_groups; i++) {
        const group_report *g = &rep->groups[i];
        size_t k = 0;
        while (k < n && !(strcmp(ck[k].channel, g->channel) == 0 && strcmp(ck[k].kind, g->kind) == 0))
            k++;
        if (k == n)
            ck[n++] = (channel_kind){g->channel, g->kind, {0}};
        load_counts_add(&ck[k].c, &g->counts);
    }
    qsort(ck, n, sizeof *ck, cmp_channel_kind);
    fprintf(fp, "  by channel and kind:\n");
    for (size_t k = 0; k < n && k < SUMMARY_MAX_LINES; k++) {
        const load_counts *c = &ck[k].c;
        fputs("    ", fp);
        text_fput_term(fp, ck[k].channel);
        fputc(' ', fp);
        text_fput_term(fp, ck[k].kind);
        fprintf(fp, ": rows %llu, inserted %llu, updated %llu, unchanged %llu, stale %llu, "
                    "existing %llu\n",
                (unsigned long long)load_counts_merged(c),
                (unsigned long long)c->inserted, (unsigned long long)c->updated,
                (unsigned long long)c->unchanged, (unsigned long long)c->stale,
                (unsigned long long)c->existing);
    }
    if (n > SUMMARY_MAX_LINES)
        fprintf(fp, "    ... and %zu more (see --report or --html)\n", n - SUMMARY_MAX_LINES);
    free(ck);
}

void report_print_summary(const run_report *rep, FILE *fp)
{
    const char *what = rep->settle ? (rep->dry_run ? "settle (dry run, nothing written)" : "settle")
                       : rep->reconcile       ? (rep->dry_run ? "reconcile (dry run, nothing written)"
                                                                : "reconcile")
                       : rep->validate_only ? "validate"
                       : rep->dry_run       ? "import (dry run, rolled back)"
                                            : "import";
    fprintf(fp, "idemload %s summary\n", what);
    for (size_t i = 0; i < rep->n_files; i++) {
        const file_report *f = &rep->files[i];
        /* Data (a file name, a profile's name, an error quoting a value)
         * with its control characters as codes. */
        fputs("  ", fp);
        text_fput_term(fp, f->path);
        fputs(" [", fp);
        text_fput_term(fp, f->format);
        fprintf(fp, "] %s%s", file_status_name(f->status), f->error ? ": " : "");
        text_fput_term(fp, f->error);
        fputc('\n', fp);
        if (f->reload_reason) {
            fputs("    ledger: ", fp);
            text_fput_term(fp, f->reload_reason);
            fputc('\n', fp);
        }
        if (f->note) {
            fputs("    ", fp);
            text_fput_term(fp, f->note);
            fputc('\n', fp);
        }
        if (f->status != FILE_SKIPPED)
            print_counts(fp, "    ", &f->counts, rep, -1);
    }
    fprintf(fp, "  total:\n");
    print_counts(fp, "    ", &rep->totals, rep, rep->elapsed_s);
    print_by_channel(rep, fp);
}

static json_t *counts_json_of(const load_counts *c)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                     "rows_read", (json_int_t)c->rows_read,
                     "rows_rejected", (json_int_t)c->rows_rejected,
                     "rows_skipped", (json_int_t)c->rows_skipped,
                     "rows_deduplicated", (json_int_t)c->rows_deduplicated,
                     "inserted", (json_int_t)c->inserted,
                     "updated", (json_int_t)c->updated,
                     "unchanged", (json_int_t)c->unchanged,
                     "stale", (json_int_t)c->stale,
                     "existing", (json_int_t)c->existing,
                     "chunks", (json_int_t)c->chunks);
}

/* The figures of a file or of the run.  A run that merges nothing
 * (validate, reconcile) adds "would_merge", the rows it kept, so that its
 * rows_read still adds up (rejected + skipped + deduplicated + would_merge)
 * where the merge's five figures are 0. */
static json_t *counts_json(const load_counts *c, bool merges_nothing)
{
    json_t *o = counts_json_of(c);
    if (o && merges_nothing)
        json_object_set_new(o, "would_merge",
                            json_integer((json_int_t)load_counts_kept(c)));
    return o;
}

/* "groups": the figures per tenant, channel and kind (SPEC.md
 * "Reconciliation"); rows = the sum of the five figures. */
static json_t *groups_json(const run_report *rep)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < rep->n_groups; i++) {
        const group_report *g = &rep->groups[i];
        const load_counts *c = &g->counts;
        json_array_append_new(
            a, json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "tenant_id",
                         (json_int_t)g->tenant_id, "channel", g->channel, "callback_kind", g->kind,
                         "rows", (json_int_t)load_counts_merged(c), "inserted",
                         (json_int_t)c->inserted, "updated", (json_int_t)c->updated, "unchanged",
                         (json_int_t)c->unchanged, "stale", (json_int_t)c->stale, "existing",
                         (json_int_t)c->existing));
    }
    return a;
}

/* A JSON string of s (NULL: ""), escaped as text_utf8_or_escaped does when
 * s is not UTF-8. */
static json_t *text_json(const char *s)
{
    buf b = BUF_INIT;
    text_utf8_or_escaped(&b, s ? s : "");
    json_t *j = json_stringn(buf_cstr(&b), b.len);
    buf_free(&b);
    return j;
}

bool report_dump_json(const json_t *root, const char *path, buf *err)
{
    /* Written whole or not at all (outfile.h): a run killed while writing
     * it leaves the report that was there, never half of one. */
    const char *name = strcmp(path, "-") == 0 ? "standard output" : path;
    outfile *f = outfile_open(path);
    bool ok = f && json_dumpf(root, outfile_stream(f), JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
              fputc('\n', outfile_stream(f)) != EOF && outfile_commit(&f);
    if (!ok)
        buf_printf(err, "cannot write the report to %s: %s", name, strerror(errno));
    outfile_discard(&f);
    return ok;
}

bool report_write_json(const run_report *rep, const char *path, buf *err)
{
    json_t *files = json_array();
    for (size_t i = 0; i < rep->n_files; i++) {
        const file_report *f = &rep->files[i];
        /* A file name is any bytes (SPEC.md "Hostile input"): one that is
         * not UTF-8 is written escaped, its bytes in path_base64, and every
         * text quoting it (the error above all) escaped the same way, so the
         * entry is complete whatever the name. */
        json_t *o = json_object();
        json_object_set_new(o, "path", text_json(f->path));
        if (!utf8_check(f->path, strlen(f->path), NULL, NULL)) {
            buf b64 = BUF_INIT;
            text_base64(&b64, f->path, strlen(f->path));
            json_object_set_new(o, "path_base64", json_stringn(buf_cstr(&b64), b64.len));
            buf_free(&b64);
        }
        json_object_set_new(o, "format", text_json(f->format));
        json_object_set_new(o, "digest", f->digest[0] ? json_string(f->digest) : json_null());
        json_object_set_new(o, "status", json_string(file_status_name(f->status)));
        json_object_set_new(o, "error", f->error ? text_json(f->error) : json_null());
        json_t *counts = counts_json(&f->counts, rep->validate_only);
        json_object_update(o, counts);
        json_decref(counts);
        if (f->note)
            json_object_set_new(o, "note", text_json(f->note));
        if (f->reload_reason)
            json_object_set_new(o, "reload_reason", text_json(f->reload_reason));
        json_array_append_new(files, o);
    }
    json_t *root = json_pack("{s:s, s:b, s:f, s:o, s:o}", "command",
                             rep->settle      ? "settle"
                             : rep->reconcile ? "reconcile"
                             : rep->validate_only ? "validate"
                                                  : "import", "dry_run", rep->dry_run,
                             "elapsed_s", rep->elapsed_s, "files", files, "totals",
                             counts_json(&rep->totals, rep->validate_only));
    if (root && (rep->target || rep->database)) {
        json_object_set_new(root, "target", rep->target ? text_json(rep->target) : json_null());
        json_object_set_new(root, "database",
                            rep->database ? text_json(rep->database) : json_null());
    }
    if (root && !rep->validate_only && !rep->reconcile)
        json_object_set_new(root, "groups", groups_json(rep));
    if (root && rep->reconciliation)
        json_object_set(root, "reconciliation", rep->reconciliation);
    if (root && rep->settlement)
        json_object_set(root, "settlement", rep->settlement);
    if (!root) {
        buf_printf(err, "out of memory building the report");
        return false;
    }
    bool ok = report_dump_json(root, path, err);
    json_decref(root);
    return ok;
}
