/*
 * file.c - the per-file state machine of a run (file.h).
 */
#include "pipeline/file.h"

#include <stdlib.h>
#include <string.h>

#include "input/profile.h"
#include "input/reader.h"
#include "output/log.h"
#include "pipeline/exits.h"
#include "pipeline/feed.h"
#include "pipeline/plan.h"
#include "pipeline/prepass.h"
#include "util/clock.h"
#include "util/exitcodes.h"
#include "util/signals.h"

/* The format a file's report entry names: the profile's name, else the
 * format --format or the file's name chose (as file_run reads it). */
static const char *format_of(const config *cfg, const char *path)
{
    if (cfg->profile)
        return cfg->profile->name;
    return format_name(cfg->format != FORMAT_AUTO ? cfg->format : format_from_name(path));
}

void file_not_started(const config *cfg, file_report *fr, const char *path, const char *why)
{
    file_report_clear(fr);
    fr->path = path;
    fr->format = format_of(cfg, path);
    fr->status = FILE_FAILED;
    file_report_set_error(fr, why);
}

/* A message msg logged and set as the file's error; returns code. */
static int file_error(file_report *rep, const char *msg, int code)
{
    log_error("%s", msg);
    file_report_set_error(rep, msg);
    return code;
}

/* A path as messages name it: "-" is standard input. */
static const char *shown_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "standard input" : path;
}

/* What makes the file unloadable as given, before it is opened: standard
 * input with a profile whose row count is checked first, or a format the
 * name does not tell.  EXIT_OK or EXIT_USAGE (logged, set on rep). */
static int check_loadable(const config *cfg, bool loading, const char *path, input_format fmt,
                          file_report *rep)
{
    buf msg = BUF_INIT;
    int code = EXIT_OK;
    if (prepass_wanted(cfg, loading) && source_path_is_stream(path)) {
        /* The count is checked before anything is committed, which takes a
         * first pass over the file: a stream cannot be read twice. */
        buf_printf(&msg, "%s: profile %s checks the bill's own row count before loading "
                         "anything, which reads the file twice, and a stream (standard input, "
                         "a pipe) can be read only once; give the file's path (validate reads "
                         "a stream)", shown_name(path),
                   cfg->profile->name);
        code = file_error(rep, buf_cstr(&msg), EXIT_USAGE);
    } else if (fmt == FORMAT_AUTO && !cfg->profile) {
        format_unknown(&msg, path);
        code = file_error(rep, buf_cstr(&msg), EXIT_USAGE);
    }
    buf_free(&msg);
    return code;
}

void file_warn_money_unchecked(const reader *rdr, const char *path, file_report *rep)
{
    uint64_t n = reader_money_unchecked(rdr);
    if (n == 0)
        return;
    buf msg = BUF_INIT;
    buf_printf(&msg, "the bill's money totals were not checked: %llu %s could not be counted "
                     "in them (unreadable, or rejected before their kind was known; see the "
                     "rejects)", (unsigned long long)n, n == 1 ? "row" : "rows");
    log_warn("%s: %s", shown_name(path), buf_cstr(&msg));
    if (!rep->note)
        file_report_set_note(rep, buf_cstr(&msg));
    buf_free(&msg);
}

void file_warn_unused_presets(const config *cfg, const reader *rdr, const char *path)
{
    for (int c = 0; c < COL_COUNT; c++)
        if (cfg->presets.value[c] && reader_header_names(rdr, (column)c))
            log_warn("%s: --set %s is not used: the file has a %s column, and --set supplies "
                     "a column a file lacks; its rows keep their own values",
                     shown_name(path), column_name((column)c),
                     column_name((column)c));
}

/* Names the file for the ledger and the report (a file's digest, reading
 * it whole; an object's HEAD; nothing for a stream).  EXIT_OK, or
 * EXIT_INPUT with the file's error set and logged. */
static int identify_input(const char *path, source_identity *sid, file_identity *id,
                          file_report *rep)
{
    memset(sid, 0, sizeof *sid);
    sid->size = -1;
    /* The ledger knows files by content: hash first (cheap next to the
     * load), so a renamed copy is still recognised.  An object by its
     * bucket, key, size and ETag, from one HEAD: a rerun that skips it
     * downloads nothing. */
    if (source_path_is_stream(path))
        return EXIT_OK;
    buf err = BUF_INIT;
    int code = EXIT_OK;
    if (!source_identify(path, sid, &err)) {
        code = signals_interrupted() ? EXIT_INTERRUPTED : EXIT_INPUT;
        file_error(rep, buf_cstr(&err), code);
    } else {
        memcpy(id->digest, sid->digest, sizeof id->digest);
        id->size = sid->size;
        memcpy(rep->digest, sid->digest, sizeof rep->digest);
    }
    buf_free(&err);
    return code;
}

/* Opens the file's bytes (the version sid identified) and its reader into
 * in; EXIT_OK, or EXIT_INPUT with the file's error set and logged. */
static int open_input(const run_ctx *x, const source_identity *sid, input_format fmt,
                      feed_input *in, reader_options *ropt, file_report *rep)
{
    const config *cfg = x->cfg;
    buf err = BUF_INIT;
    int code = EXIT_INPUT;
    in->src = source_open_identified(in->path, sid, &err);
    if (!in->src)
        goto out;
    *ropt = (reader_options){
        .format = fmt, .delimiter = cfg->delimiter, .profile = cfg->profile, .links = x->links};
    for (int c = 0; c < COL_COUNT; c++)
        ropt->preset[c] = cfg->presets.value[c] != NULL;
    in->rdr = reader_open(in->src, in->path, ropt, &err);
    if (!in->rdr)
        goto out;
    in->check_utf8 = reader_records_need_utf8_check(in->rdr);
    file_warn_unused_presets(cfg, in->rdr, in->path);
    code = EXIT_OK;
out:
    /* An open or a header read cut short by SIGINT/SIGTERM (a FIFO with no
     * writer yet, a pipe that sent nothing): interrupted, not unreadable. */
    if (code != EXIT_OK && signals_interrupted())
        code = EXIT_INTERRUPTED;
    if (code != EXIT_OK)
        file_error(rep, buf_cstr(&err), code);
    buf_free(&err);
    return code;
}

/* Hands one chunk to the loader and its rows' outcomes to the sinks;
 * EXIT_OK, or the status with the file's error set.  *committed: the
 * chunk, or some lanes of it, committed (their figures in *delta, and
 * delta->chunks 1 when whole), even when a sink failed after. */
static int load_chunk(const run_ctx *x, chunk *ch, uint64_t chunk_no, const char *path,
                      load_counts *delta, file_report *rep, bool *committed)
{
    *committed = false;
    int code = sinks_before_commit(x->sinks, rep);
    if (code != EXIT_OK)
        return code;
    if (!chunk_outcome_reserve(x->out, chunk_size(ch))) {
        log_error("%s: out of memory", path);
        file_report_set_error(rep, "out of memory");
        return EXIT_INPUT;
    }
    code = loader_load_chunk(x->ld, ch, chunk_no, path, x->rj, delta, x->out, committed);
    if (code == EXIT_OK)
        /* A sink failing now does not undo the commit: the report counts
         * the chunk (SPEC.md: a report never understates committed work). */
        return sinks_chunk_merged(x->sinks, path, ch, x->out, rep);
    /* Some lanes committed: their rows' changes and groups, as the figures
     * count them (a resumed run replays them from the ledger). */
    if (*committed)
        code = exit_worst(code, sinks_chunk_merged(x->sinks, path, ch, x->out, rep));
    const char *why = loader_error(x->ld);
    char *logged = why || code == EXIT_INTERRUPTED ? NULL : log_last_error();
    file_report_set_error(rep, chunk_failure_text(code, why ? why
                                                        : logged && *logged ? logged : NULL));
    free(logged);
    return code;
}

/* A whole chunk read this run: loaded (or, in validate, counted; or
 * handed to reconcile) into the file's figures; *committed: its number
 * when anything of it committed. */
static int take_chunk(const run_ctx *x, chunk *ch, uint64_t chunk_no, const char *path,
                      file_report *rep, uint64_t *committed)
{
    chunk_counts *cc = chunk_counts_of(ch);
    load_counts delta = {.rows_read = cc->rows_read,
                         .rows_rejected = cc->rows_rejected,
                         .rows_skipped = cc->rows_skipped,
                         .rows_deduplicated = cc->rows_deduplicated,
                         .chunks = 1};
    bool loaded = true;
    int code = EXIT_OK;
    if (x->ld) {
        code = load_chunk(x, ch, chunk_no, path, &delta, rep, &loaded);
    } else if (x->use) {
        code = x->use->take(x->use->st, ch, rep);
        loaded = code == EXIT_OK;
    }
    if (loaded) {
        load_counts_add(&rep->counts, &delta);
        *committed = chunk_no;  /* (some lanes of it: the file is partial) */
    }
    return code;
}

/* A chunk the reading thread could not fill (fres): its status, logged and
 * set as the file's error. */
static int read_failed(const run_ctx *x, chunk_feed *feed, fill_result fres, uint64_t committed,
                       file_report *rep)
{
    buf *err = feed_error(feed);
    int code = exit_of_fill(x->cfg, feed->in.path, fres, err);
    /* The unfinished chunk is not counted: the figures describe what was
     * loaded (or validated) whole, so their identity still holds. */
    log_error("%s%s%s", buf_cstr(err),
              x->ld ? (committed ? "; the chunks committed before stay" : "; nothing was loaded")
                    : "",
              fres == FILL_TOO_MANY ? "; the rejects of the chunk it stopped in are in the "
                                      "rejects file, not in the file's figures"
                                    : "");
    file_report_set_error(rep, buf_cstr(err));
    return code;
}

/* Takes the file's chunks from the reading thread, loads each (or, in
 * validate, counts it), until the input ends or fails; *committed: the last
 * chunk of which anything committed (whole, or some lanes of the chunk that
 * failed).  Returns the file's status so far. */
static int load_chunks(const run_ctx *x, chunk_feed *feed, file_report *rep, uint64_t *committed)
{
    uint64_t chunk_no = 0;
    for (;;) {
        filled got = feed_take(feed);
        bool whole = got.res == FILL_FULL ||
                     (got.res == FILL_EOF && chunk_counts_of(got.ch)->rows_read > 0);
        int code = EXIT_OK;
        if (whole) {
            chunk_no++;
            if (!got.skip)
                code = take_chunk(x, got.ch, chunk_no, feed->in.path, rep, committed);
        }
        feed_return(feed, got.ch);
        if (code != EXIT_OK)
            return code;
        if (got.res == FILL_EOF) {
            rep->status = FILE_OK;
            return EXIT_OK;
        }
        if (got.res != FILL_FULL)
            return read_failed(x, feed, got.res, *committed, rep);
    }
}

/* The opened file's rows, read and loaded from after plan->resume_after:
 * the bill's count checked first when its profile has one, then the chunks.
 * Sets rep->status unless the file completed; returns the exit status. */
static int read_and_load(const run_ctx *x, const feed_input *in, const reader_options *ropt,
                         const file_plan *plan, file_report *rep)
{
    /* A file already loaded is skipped before this pass. */
    if (prepass_wanted(x->cfg, x->ld != NULL)) {
        buf err = BUF_INIT;
        bool counted = prepass_count(in->path, in->id, ropt, &err);
        if (!counted)
            file_error(rep, buf_cstr(&err), EXIT_INPUT);
        buf_free(&err);
        if (!counted)
            return signals_interrupted() ? EXIT_INTERRUPTED : EXIT_INPUT;
    }
    sinks_file_start(x->sinks, in->path, source_raw_size(in->src));
    chunk_feed feed;
    if (!feed_start(&feed, in, plan->resume_after)) {
        log_error("%s: cannot start reading (out of memory or threads)", in->path);
        feed_stop(&feed, false);
        return EXIT_INPUT;
    }
    uint64_t committed = 0;
    int code = load_chunks(x, &feed, rep, &committed);
    feed_stop(&feed, true);
    return exit_of_read(code, x->ld != NULL, committed > 0 || plan->resume_after > 0, rep);
}

/* The file taken in the ledger (import) or not (validate, reconcile): the
 * earlier run's side outputs, its rows (to reconcile's consumer, between
 * its begin and its end), and this run's side outputs durable before the
 * ledger may mark it completed. */
static int load_file(const run_ctx *x, const feed_input *in, const reader_options *ropt,
                     const file_plan *plan, file_report *rep)
{
    int code;
    if (x->ld) {
        code = sinks_file_resumed(x->sinks, x->ld, in->path, plan, rep);
        if (code != EXIT_OK) {
            rep->status = FILE_PARTIAL;
            return code;
        }
    }
    if (x->use && (code = x->use->begin(x->use->st, in->path, rep)) != EXIT_OK)
        return code;
    code = read_and_load(x, in, ropt, plan, rep);
    if (x->use)
        code = x->use->end(x->use->st, in->rdr, code, rep);
    if (rep->status == FILE_OK)
        file_warn_money_unchecked(in->rdr, in->path, rep);
    if (rep->status == FILE_OK) {
        int synced = sinks_before_file_completed(x->sinks, rep, x->ld != NULL);
        if (synced != EXIT_OK) {
            rep->status = x->ld ? FILE_PARTIAL : FILE_FAILED;
            code = exit_worst(code, synced);
        }
    }
    return code;
}

int file_run(const run_ctx *x, const char *path, file_report *rep, bool wait, bool *busy)
{
    double started = now_seconds();
    const config *cfg = x->cfg;
    *busy = false;
    rep->path = path;
    input_format fmt = cfg->format != FORMAT_AUTO ? cfg->format : format_from_name(path);
    rep->format = format_of(cfg, path);
    rep->status = FILE_FAILED;
    int code = check_loadable(cfg, x->ld != NULL, path, fmt, rep);
    if (code != EXIT_OK)
        return code;

    feed_input in = {.cfg = cfg, .path = path, .every_row = x->use != NULL, .sinks = x->sinks};
    file_identity id = {.path = path, .size = -1};
    ledger_place lp = {.params = BUF_INIT};
    reader_options ropt;
    /* Every command names the file by its digest, validate too: the page's
     * and the report's files carry it (the ledger's name for the file a
     * later import will load). */
    source_identity sid;
    in.id = &sid;
    code = identify_input(path, &sid, &id, rep);
    /* A file is opened (its header read) before the ledger is asked; an
     * object only once the ledger says it is to be read, so that a rerun
     * skips it without a GET. */
    if (code == EXIT_OK && !sid.object)
        code = open_input(x, &sid, fmt, &in, &ropt, rep);
    if (code == EXIT_OK && x->ld)
        code = ledger_begin(x->ld, cfg, fmt, &id, wait, &lp, rep);
    *busy = code == EXIT_OK && lp.plan.busy;
    if (code == EXIT_OK && !lp.plan.busy && !lp.plan.skip && sid.object)
        code = open_input(x, &sid, fmt, &in, &ropt, rep);
    if (code == EXIT_OK && !lp.plan.busy && !lp.plan.skip)
        code = load_file(x, &in, &ropt, &lp.plan, rep);
    if (x->ld && in.src && rep->status == FILE_OK)
        loader_set_content_digest(x->ld, source_object_sha256(in.src));
    code = ledger_end(x->ld, &lp, rep, code);
    reader_close(&in.rdr);
    source_close(&in.src);
    rep->elapsed_s = now_seconds() - started;
    return code;
}
