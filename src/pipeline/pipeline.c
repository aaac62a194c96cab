/*
 * pipeline.c - the file loop of `validate` and `import` (see pipeline.h).
 *
 * Chunk boundaries are counted in records read (rejected ones included), so
 * the same file with the same --chunk-rows always cuts at the same records:
 * a resumed load can skip exactly the chunks an earlier run committed.
 */
#include "pipeline/pipeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "load/outcome.h"
#include "load/params.h"
#include "output/changes.h"
#include "output/groups.h"
#include "util/digest.h"
#include "util/exitcodes.h"
#include "output/log.h"
#include "output/progress.h"
#include "util/clock.h"
#include "input/profile.h"
#include "input/reader.h"
#include "util/signals.h"
#include "rules/validate.h"

_Static_assert(CHUNK_MAX_FINAL >= MAX_FINAL_STATUSES, "a chunk keeps every final status");

typedef enum fill_result {
    FILL_FULL,          /* chunk_rows records read */
    FILL_EOF,           /* input ended (the chunk may hold rows) */
    FILL_INPUT_FAILED,  /* reader or source fault: message in *err */
    FILL_TOO_MANY,      /* --max-rejects exceeded */
    FILL_REJECTS_FAILED,/* the rejects file cannot be written */
    FILL_NO_MEMORY,
    FILL_INTERRUPTED
} fill_result;

typedef struct file_run {
    const config *cfg;
    const char *path;
    source *src;
    reader *rdr;
    rejects *rj;
    bool check_utf8;
    uint64_t rejected;      /* in this file, for --max-rejects */
    progress *prog;
    timeline *tl;           /* written by the reading thread only */
    uint64_t rows_seen;
    bool stop;              /* set when loading gave up: stop reading */
    buf reason;
    buf err;
    buf params;             /* the parameters that shape its rows (params.h) */
} file_run;

/* A chunk also ends once its records' text reaches this many bytes, so
 * that memory is bounded by the chunk whatever the rows weigh (two chunks
 * circulate; SPEC.md "Hostile input": peak RSS under 256 MiB for any
 * input).  Counted on the records as read, in a skipped chunk too, so a
 * rerun cuts the file at the same places. */
#define CHUNK_MAX_BYTES ((size_t)16 << 20)

/* Reads records into ch until it holds chunk_rows records, or records of
 * CHUNK_MAX_BYTES, or input ends.  skip: the chunk was committed by an
 * earlier run; count records only. */
static fill_result fill_chunk(file_run *fr, chunk *ch, bool skip)
{
    chunk_reset(ch);
    chunk_counts *cc = chunk_counts_of(ch);
    size_t bytes = 0;
    while (cc->rows_read < fr->cfg->chunk_rows && bytes < CHUNK_MAX_BYTES) {
        if ((fr->rows_seen & 0x3ff) == 0) {
            if (signals_interrupted() || __atomic_load_n(&fr->stop, __ATOMIC_RELAXED))
                return FILL_INTERRUPTED;
            progress_update(fr->prog, source_raw_offset(fr->src), fr->rows_seen);
        }
        raw_record rec;
        read_result rr = reader_next(fr->rdr, &rec);
        if (rr == READ_EOF)
            return FILL_EOF;
        if (rr == READ_FAILED) {
            buf_clear(&fr->err);
            buf_append_str(&fr->err, reader_error(fr->rdr));
            return FILL_INPUT_FAILED;
        }
        cc->rows_read++;
        fr->rows_seen++;
        bytes += rec.raw_len;
        if (skip)
            continue;
        if (rec.skipped) {
            cc->rows_skipped++;
            continue;
        }
        row r;
        buf_clear(&fr->reason);
        if (validate_record(&rec, &fr->cfg->presets, fr->check_utf8, &r, &fr->reason)) {
            if (!chunk_add(ch, &r))
                return FILL_NO_MEMORY;
            /* A chart is no reason to stop a load: a row it cannot place
             * is counted as uncharted. */
            (void)timeline_add(fr->tl, r.channel, r.channel_len, r.received_us);
            continue;
        }
        cc->rows_rejected++;
        fr->rejected++;
        buf_clear(&fr->err);
        if (!rejects_write(fr->rj, fr->path, rec.line, buf_cstr(&fr->reason), rec.raw,
                           rec.raw_len, &fr->err))
            return FILL_REJECTS_FAILED;
        if (fr->cfg->max_rejects >= 0 && fr->rejected > (uint64_t)fr->cfg->max_rejects)
            return FILL_TOO_MANY;
    }
    return FILL_FULL;
}

/*
 * Reading runs one chunk ahead of loading: a reader thread fills the next
 * chunk while the main thread loads the current one, so parsing overlaps
 * the database work.  Two chunks circulate between them; memory stays at
 * two chunks whatever the file size.
 */
typedef struct filled {
    chunk *ch;
    fill_result res;
    bool skip;
} filled;

typedef struct chunk_feed {
    file_run *fr;
    uint64_t resume_after;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk *spare[2];
    int n_spare;
    filled ready[2];
    int n_ready;
    bool stop;
    bool inited;
} chunk_feed;

static void *feed_main(void *arg)
{
    chunk_feed *f = arg;
    uint64_t produced = 0;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        while (f->n_spare == 0 && !f->stop)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->stop) {
            pthread_mutex_unlock(&f->mu);
            return NULL;
        }
        chunk *ch = f->spare[--f->n_spare];
        pthread_mutex_unlock(&f->mu);

        bool skip = produced < f->resume_after;
        fill_result res = fill_chunk(f->fr, ch, skip);
        if (chunk_counts_of(ch)->rows_read > 0)
            produced++;

        pthread_mutex_lock(&f->mu);
        f->ready[f->n_ready++] = (filled){ch, res, skip};
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        if (res != FILL_FULL)
            return NULL;
    }
}

/* Starts the reader thread with two chunks of room; false on failure. */
static bool feed_start(chunk_feed *f, file_run *fr, size_t chunk_rows, uint64_t resume_after)
{
    memset(f, 0, sizeof *f);
    f->fr = fr;
    f->resume_after = resume_after;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->inited = true;
    const config *cfg = fr->cfg;
    chunk_policy pol = {.keep_first = cfg->conflict == CONFLICT_NOTHING,
                        .final_status = cfg->final_status,
                        .n_final_status = cfg->n_final_status};
    for (int i = 0; i < 2; i++) {
        f->spare[i] = chunk_new(chunk_rows);
        if (!f->spare[i])
            return false;
        chunk_set_policy(f->spare[i], &pol);
        f->n_spare++;
    }
    return pthread_create(&f->thread, NULL, feed_main, f) == 0;
}

/* The next filled chunk, in file order (blocks until there is one). */
static filled feed_take(chunk_feed *f)
{
    pthread_mutex_lock(&f->mu);
    while (f->n_ready == 0)
        pthread_cond_wait(&f->cv, &f->mu);
    filled got = f->ready[0];
    f->ready[0] = f->ready[1];
    f->n_ready--;
    pthread_mutex_unlock(&f->mu);
    return got;
}

/* Gives a loaded chunk back for reuse. */
static void feed_return(chunk_feed *f, chunk *ch)
{
    pthread_mutex_lock(&f->mu);
    f->spare[f->n_spare++] = ch;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* Stops the reader thread (if still running) and frees the chunks. */
static void feed_stop(chunk_feed *f, bool started)
{
    if (!f->inited)
        return;
    if (started) {
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        __atomic_store_n(&f->fr->stop, true, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->thread, NULL);
    }
    for (int i = 0; i < f->n_spare; i++)
        chunk_free(&f->spare[i]);
    for (int i = 0; i < f->n_ready; i++)
        chunk_free(&f->ready[i].ch);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
}

/*
 * A profile whose file states its own row count: reads the whole file once
 * and checks the count before anything of it is loaded (SPEC.md: "The file
 * checks itself").  Reading is cheap next to loading.  Returns false with
 * the message in *err.
 */
static bool precheck_count(const char *path, const reader_options *ropt, buf *err)
{
    source *src = source_open(path, err);
    if (!src)
        return false;
    reader *rdr = reader_open(src, path, ropt, err);
    bool ok = rdr != NULL;
    uint64_t n = 0;
    while (ok) {
        raw_record rec;
        read_result rr = reader_next(rdr, &rec);
        if (rr == READ_EOF)
            break;
        if (rr == READ_FAILED) {
            buf_append_str(err, reader_error(rdr));
            ok = false;
        }
        if ((++n & 0x3ff) == 0 && signals_interrupted()) {
            buf_printf(err, "%s: interrupted", path);
            ok = false;
        }
    }
    reader_close(&rdr);
    source_close(&src);
    return ok;
}

/* Where the outcome of each merged row goes: the figures per group, and
 * the --changes file (NULL: not asked for). */
typedef struct row_sinks {
    group_table *groups;
    changes *chg;
    chunk_outcome out;
} row_sinks;

/* After a chunk committed (or, in a dry run, was merged and kept in the
 * run's transaction): each row's outcome into its group and, for the
 * actions --changes lists, one line.  In chunk order (business key), so a
 * dry run and the real run write the same lines whatever the lanes. */
static int record_outcomes(row_sinks *rs, chunk *ch, const char *path, buf *err)
{
    int code = EXIT_OK;
    size_t n = chunk_size(ch);
    for (size_t i = 0; i < n; i++) {
        row r;
        chunk_get(ch, i, &r);
        merge_action a = (merge_action)rs->out.action[i];
        if (!group_table_add(rs->groups, r.tenant_id, r.channel, r.channel_len, r.callback_type,
                             r.callback_type_len, a)) {
            buf_printf(err, "out of memory counting the figures per group");
            log_error("%s", buf_cstr(err));
            code = EXIT_INPUT;
            break;
        }
        if (!rs->chg || !changes_wanted(a))
            continue;
        if (!changes_write(rs->chg, path, &r, a, rs->out.has_before[i] ? &rs->out.before[i] : NULL,
                           &rs->out.after[i], err)) {
            log_error("%s", buf_cstr(err));
            code = EXIT_INPUT;
            break;
        }
    }
    return code;
}

/*
 * A resumed file: the --changes lines of the chunks (and lanes) an earlier
 * run committed, from the ledger (output/changes.h), before this run's
 * own, so the file holds one line per change of the whole file as the
 * figures are the whole file's.  EXIT_OK, or the status with the file's
 * error set (logged).
 */
static int write_earlier_changes(loader *ld, row_sinks *rs, const char *path,
                                 const file_plan *plan, file_report *rep)
{
    if (!rs->chg || (plan->resume_after == 0 && !plan->next_partial))
        return EXIT_OK;
    uint64_t last = plan->resume_after + (plan->next_partial ? 1 : 0), none = 0;
    buf lines = BUF_INIT, err = BUF_INIT;
    int code = EXIT_OK;
    for (uint64_t no = 1; no <= last && code == EXIT_OK; no++) {
        int without = 0;
        code = loader_committed_changes(ld, no, &lines, &without);
        if (code == EXIT_OK && !changes_write_lines(rs->chg, lines.data, lines.len, &err)) {
            log_error("%s", buf_cstr(&err));
            code = EXIT_INPUT;
        }
        none += without > 0;
    }
    if (code != EXIT_OK)
        file_report_set_error(rep, err.len ? buf_cstr(&err)
                                           : "the ledger's --changes lines could not be read "
                                             "(see the log)");
    else if (none > 0)
        log_warn("%s: %llu of the %llu chunks an earlier run committed were loaded without "
                 "--changes: their changes are not in the changes file", path,
                 (unsigned long long)none, (unsigned long long)last);
    buf_free(&lines);
    buf_free(&err);
    return code;
}

/* Before the ledger marks a file completed: its rejects and changes on
 * disk (SPEC.md "The side outputs are part of the load").  EXIT_OK, or
 * EXIT_INPUT with the file's error set (logged). */
static int sync_side_outputs(rejects *rj, row_sinks *rs, file_report *rep)
{
    buf err = BUF_INIT;
    bool ok = rejects_sync(rj, &err) && (!rs->chg || changes_sync(rs->chg, &err));
    if (!ok) {
        log_error("%s; the file is not marked completed: make room and run the same command "
                  "again", buf_cstr(&err));
        file_report_set_error(rep, buf_cstr(&err));
    }
    buf_free(&err);
    return ok ? EXIT_OK : EXIT_INPUT;
}

static int severity_of_rejects(const load_counts *c)
{
    return c->rows_rejected > 0 ? EXIT_REJECTS : EXIT_OK;
}

/* What the ledger's plan means for the file's report: why it loads again,
 * where it resumes, and the figures an earlier run committed. */
static void report_plan(file_report *rep, const char *path, const file_plan *plan)
{
    load_counts *counts = &rep->counts;
    if (plan->reload_reason[0]) {
        file_report_set_reload_reason(rep, plan->reload_reason);
        log_info("%s: %s", path, plan->reload_reason);
    }
    if (plan->resume_after > 0 || plan->next_partial) {
        buf note = BUF_INIT;
        if (plan->resume_after > 0)
            buf_printf(&note, "resumed after chunk %llu committed by an earlier run%s",
                       (unsigned long long)plan->resume_after,
                       plan->next_partial ? " (and some lanes of the next chunk)" : "");
        else
            buf_printf(&note, "resumed: some lanes of chunk 1 were committed by an earlier run");
        file_report_set_note(rep, buf_cstr(&note));
        log_info("%s: %s", path, buf_cstr(&note));
        buf_free(&note);
        *counts = plan->previous;
        /* The ledger keeps no rows_skipped; the identity gives it. */
        uint64_t accounted = counts->rows_rejected + counts->rows_deduplicated +
                             load_counts_merged(counts);
        counts->rows_skipped = counts->rows_read > accounted ? counts->rows_read - accounted
                                                             : 0;
    }
}

/* The exit status of a chunk that could not be filled, with its message in
 * *err (kept from the reader or the rejects file when they set it). */
static int fill_failure(const config *cfg, const char *path, fill_result fres, buf *err)
{
    switch (fres) {
    case FILL_TOO_MANY:
        buf_clear(err);
        buf_printf(err, "%s: stopped: more than %lld rows rejected (--max-rejects)", path,
                   (long long)cfg->max_rejects);
        return EXIT_INPUT;
    case FILL_NO_MEMORY:
        buf_clear(err);
        buf_printf(err, "%s: out of memory", path);
        return EXIT_INPUT;
    case FILL_INTERRUPTED:
        buf_clear(err);
        buf_printf(err, "%s: interrupted", path);
        return EXIT_INTERRUPTED;
    default: /* FILL_INPUT_FAILED, FILL_REJECTS_FAILED: the message is set */
        return EXIT_INPUT;
    }
}

/* Hands one chunk to the loader and its rows' outcomes to the sinks;
 * EXIT_OK, or the status with the file's error set.  *committed: the
 * chunk, or some lanes of it, committed (their figures in *delta, and
 * delta->chunks 1 when whole), even when a sink failed after. */
static int load_chunk(loader *ld, rejects *rj, row_sinks *rs, chunk *ch, uint64_t chunk_no,
                      const char *path, load_counts *delta, file_report *rep, bool *committed)
{
    *committed = false;
    buf err = BUF_INIT;
    if (!rejects_sync(rj, &err)) {
        log_error("%s", buf_cstr(&err));
        file_report_set_error(rep, buf_cstr(&err));
        buf_free(&err);
        return EXIT_INPUT;
    }
    buf_free(&err);
    if (!chunk_outcome_reserve(&rs->out, chunk_size(ch))) {
        log_error("%s: out of memory", path);
        file_report_set_error(rep, "out of memory");
        return EXIT_INPUT;
    }
    bool lanes = false;
    int code = loader_load_chunk(ld, ch, chunk_no, path, rj, delta, &rs->out, &lanes);
    *committed = lanes;
    if (code == EXIT_OK) {
        /* A sink failing now does not undo the commit: the report counts
         * the chunk (SPEC.md: a report never understates committed work). */
        buf serr = BUF_INIT;
        code = record_outcomes(rs, ch, path, &serr);
        if (code != EXIT_OK)
            file_report_set_error(rep, buf_cstr(&serr));
        buf_free(&serr);
        return code;
    }
    {
        const char *why = loader_error(ld);
        file_report_set_error(rep, code == EXIT_INTERRUPTED
                                       ? "interrupted; the chunk in flight was rolled back"
                                   : why ? why
                                         : "database error (see the log)");
    }
    return code;
}

/* Opens the file's bytes and its reader (hash: its digest first, for the
 * ledger); EXIT_OK, or EXIT_INPUT with the file's error set and logged. */
static int open_input(const config *cfg, bool hash, input_format fmt, file_run *fr,
                      file_identity *id, reader_options *ropt, file_report *rep)
{
    if (hash && strcmp(fr->path, "-") != 0) {
        /* The ledger knows files by content: hash first (cheap next to the
         * load), so a renamed copy is still recognised. */
        if (!digest_file(fr->path, id->digest, &id->size, &fr->err)) {
            log_error("%s", buf_cstr(&fr->err));
            file_report_set_error(rep, buf_cstr(&fr->err));
            return EXIT_INPUT;
        }
        memcpy(rep->digest, id->digest, sizeof rep->digest);
    }
    fr->src = source_open(fr->path, &fr->err);
    if (!fr->src) {
        log_error("%s", buf_cstr(&fr->err));
        file_report_set_error(rep, buf_cstr(&fr->err));
        return EXIT_INPUT;
    }
    *ropt = (reader_options){.format = fmt, .delimiter = cfg->delimiter, .profile = cfg->profile};
    for (int c = 0; c < COL_COUNT; c++)
        ropt->preset[c] = cfg->presets.value[c] != NULL;
    fr->rdr = reader_open(fr->src, fr->path, ropt, &fr->err);
    if (!fr->rdr) {
        log_error("%s", buf_cstr(&fr->err));
        file_report_set_error(rep, buf_cstr(&fr->err));
        return EXIT_INPUT;
    }
    fr->check_utf8 = reader_records_need_utf8_check(fr->rdr);
    return EXIT_OK;
}

/* Takes the file's chunks from the reader thread, loads each (or, in
 * validate, counts it), until the input ends or fails; *committed: the last
 * chunk of which anything committed (whole, or some lanes of the chunk that
 * failed).  Returns the file's status so far. */
static int load_chunks(file_run *fr, chunk_feed *feed, loader *ld, rejects *rj, row_sinks *rs,
                       file_report *rep, uint64_t *committed)
{
    const config *cfg = fr->cfg;
    const char *path = fr->path;
    uint64_t chunk_no = 0;
    int code = EXIT_OK;
    for (;;) {
        filled got = feed_take(feed);
        chunk *ch = got.ch;
        fill_result fres = got.res;
        bool skip = got.skip;
        chunk_counts *cc = chunk_counts_of(ch);
        if (fres == FILL_FULL || (fres == FILL_EOF && cc->rows_read > 0)) {
            chunk_no++;
            if (!skip) {
                load_counts delta = {.rows_read = cc->rows_read,
                                     .rows_rejected = cc->rows_rejected,
                                     .rows_skipped = cc->rows_skipped,
                                     .rows_deduplicated = cc->rows_deduplicated,
                                     .chunks = 1};
                bool loaded = true;
                if (ld)
                    code = load_chunk(ld, rj, rs, ch, chunk_no, path, &delta, rep, &loaded);
                if (loaded) {
                    load_counts_add(&rep->counts, &delta);
                    *committed = chunk_no;  /* (some lanes of it: the file is partial) */
                }
                if (code != EXIT_OK) {
                    feed_return(feed, ch);
                    break;
                }
            }
        }
        feed_return(feed, ch);
        if (fres == FILL_FULL)
            continue;
        if (fres == FILL_EOF) {
            rep->status = FILE_OK;
            break;
        }
        code = fill_failure(cfg, path, fres, &fr->err);
        /* The unfinished chunk is not counted: the figures describe what
         * was loaded (or validated) whole, so their identity still holds. */
        log_error("%s%s", buf_cstr(&fr->err),
                  ld ? (*committed ? "; the chunks committed before stay" : "; nothing was loaded")
                     : "");
        file_report_set_error(rep, buf_cstr(&fr->err));
        break;
    }
    return code;
}

/* A file refused before it is opened: msg logged and set on rep. */
static int refuse_file(file_report *rep, const buf *msg)
{
    log_error("%s", buf_cstr(msg));
    file_report_set_error(rep, buf_cstr(msg));
    return EXIT_USAGE;
}

/* What makes the file unloadable as given, before it is opened: standard
 * input with a profile whose row count is checked first, or a format the
 * name does not tell.  EXIT_OK or EXIT_USAGE (logged, set on rep). */
static int check_loadable(const config *cfg, const loader *ld, const char *path,
                          input_format fmt, file_report *rep)
{
    buf msg = BUF_INIT;
    int code = EXIT_OK;
    if (cfg->profile && ld && profile_has_trailer(cfg->profile) && strcmp(path, "-") == 0) {
        /* The count is checked before anything is committed, which takes a
         * first pass over the file: standard input cannot be read twice. */
        buf_printf(&msg, "standard input: profile %s checks the bill's own row count before "
                         "loading anything, which reads the file twice; give the file's path "
                         "(validate reads standard input)", cfg->profile->name);
        code = refuse_file(rep, &msg);
    } else if (fmt == FORMAT_AUTO && !cfg->profile) {
        format_unknown(&msg, path);
        code = refuse_file(rep, &msg);
    }
    buf_free(&msg);
    return code;
}

/* The opened file's rows, read and loaded from after plan->resume_after:
 * the bill's count checked first when its profile has one, then the chunks.
 * Sets rep->status unless the file completed; returns the exit status. */
static int read_and_load(file_run *fr, loader *ld, rejects *rj, row_sinks *rs,
                         const reader_options *ropt, const file_plan *plan, file_report *rep)
{
    const config *cfg = fr->cfg;
    /* A file already loaded is skipped before this pass. */
    if (ld && cfg->profile && profile_has_trailer(cfg->profile)) {
        buf_clear(&fr->err);
        if (!precheck_count(fr->path, ropt, &fr->err)) {
            log_error("%s", buf_cstr(&fr->err));
            file_report_set_error(rep, buf_cstr(&fr->err));
            return signals_interrupted() ? EXIT_INTERRUPTED : EXIT_INPUT;
        }
    }
    progress_file(fr->prog, fr->path, source_raw_size(fr->src));
    chunk_feed feed = {0};
    if (!feed_start(&feed, fr, cfg->chunk_rows, plan->resume_after)) {
        log_error("%s: cannot start reading (out of memory or threads)", fr->path);
        feed_stop(&feed, false);
        return EXIT_INPUT;
    }
    uint64_t committed = 0;
    int code = load_chunks(fr, &feed, ld, rj, rs, rep, &committed);
    feed_stop(&feed, true);
    if (code != EXIT_OK && rep->status != FILE_OK)
        rep->status = (committed > 0 || plan->resume_after > 0) && ld ? FILE_PARTIAL : FILE_FAILED;
    if (code == EXIT_INTERRUPTED && !ld)
        rep->status = FILE_PARTIAL;
    if (code == EXIT_OK)
        code = severity_of_rejects(&rep->counts);
    return code;
}

/* The format a file's report entry names: the profile's name, else the
 * format --format or the file's name chose (as run_file reads it). */
static const char *format_of(const config *cfg, const char *path)
{
    if (cfg->profile)
        return cfg->profile->name;
    return format_name(cfg->format != FORMAT_AUTO ? cfg->format : format_from_name(path));
}

/* Loads (or validates) one file; fills rep; returns its exit status.  wait:
 * when another process holds the file, wait for it; otherwise return at
 * once with *busy set, rep left empty and nothing read. */
static int run_file(const config *cfg, loader *ld, rejects *rj, progress *prog, timeline *tl,
                    row_sinks *rs, const char *path, file_report *rep, bool wait, bool *busy)
{
    double started = now_seconds();
    *busy = false;
    rep->path = path;
    input_format fmt = cfg->format != FORMAT_AUTO ? cfg->format : format_from_name(path);
    rep->format = format_of(cfg, path);
    rep->status = FILE_FAILED;
    int code = check_loadable(cfg, ld, path, fmt, rep);
    if (code != EXIT_OK)
        return code;

    file_run fr = {.cfg = cfg, .path = path, .rj = rj, .prog = prog, .tl = tl};
    bool file_begun = false;
    file_plan plan = {0};
    file_identity id = {.path = path, .size = -1};
    reader_options ropt;
    code = open_input(cfg, ld != NULL, fmt, &fr, &id, &ropt, rep);
    if (code != EXIT_OK)
        goto out;
    if (ld) {
        /* The ledger entry holds only for the parameters that shape the
         * rows (params.h). */
        if (!params_describe(cfg, fmt, &fr.params, &fr.err)) {
            log_error("%s: %s", path, buf_cstr(&fr.err));
            file_report_set_error(rep, buf_cstr(&fr.err));
            code = EXIT_INPUT;
            goto out;
        }
        id.params = buf_cstr(&fr.params);
        code = loader_begin_file(ld, &id, cfg->chunk_rows, wait, &plan);
        if (code != EXIT_OK) {
            file_report_set_error(rep, "the ledger could not be read (see the log)");
            goto out;
        }
        if (plan.busy) {
            *busy = true;
            goto out;
        }
        file_begun = true;
        if (plan.skip) {
            /* Nothing is read in this run: the figures stay zero, so the
             * totals say what this run did. */
            rep->status = FILE_SKIPPED;
            file_report_set_note(rep, "already loaded completely (ledger); --force loads it again");
            log_info("%s: skipped: the ledger holds it as completed (use --force to load again)",
                     path);
            goto out;
        }
        report_plan(rep, path, &plan);
        code = write_earlier_changes(ld, rs, path, &plan, rep);
        if (code != EXIT_OK) {
            rep->status = FILE_PARTIAL;
            goto out;
        }
    }
    code = read_and_load(&fr, ld, rj, rs, &ropt, &plan, rep);
    if (ld && rep->status == FILE_OK) {
        int synced = sync_side_outputs(rj, rs, rep);
        if (synced != EXIT_OK) {
            rep->status = FILE_PARTIAL;
            code = exit_worst(code, synced);
        }
    }

out:
    if (ld && file_begun && !plan.skip) {
        int end = loader_end_file(ld, rep->status == FILE_OK);
        if (end != EXIT_OK && rep->status == FILE_OK) {
            /* Its chunks committed, but the file is not completed (the
             * table changed under it, or the ledger failed). */
            rep->status = FILE_PARTIAL;
            file_report_set_error(rep, "the file could not be completed in the ledger (see "
                                       "the log); run the same command again");
        }
        code = exit_worst(code, end);
    } else if (ld && file_begun) {
        loader_end_file(ld, false);
    }
    reader_close(&fr.rdr);
    source_close(&fr.src);
    buf_free(&fr.reason);
    buf_free(&fr.err);
    buf_free(&fr.params);
    rep->elapsed_s = now_seconds() - started;
    return code;
}

void pipeline_not_started(const config *cfg, file_report *fr, const char *path, const char *why)
{
    file_report_clear(fr);
    fr->path = path;
    fr->format = format_of(cfg, path);
    fr->status = FILE_FAILED;
    file_report_set_error(fr, why);
}

/* What every file of a run shares. */
typedef struct run_ctx {
    const config *cfg;
    loader *ld;
    rejects *rj;
    progress *prog;
    row_sinks *rs;
    run_report *rep;
} run_ctx;

/* The figures by group and the --changes file, for an import; EXIT_OK or
 * the status after logging why. */
static int open_sinks(const config *cfg, const loader *ld, row_sinks *rs)
{
    if (!ld)
        return EXIT_OK;
    rs->groups = group_table_new();
    if (!rs->groups) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    if (!cfg->changes_path)
        return EXIT_OK;
    buf err = BUF_INIT;
    rs->chg = changes_open(cfg->changes_path, &err);
    if (!rs->chg)
        log_error("%s", buf_cstr(&err));
    buf_free(&err);
    return rs->chg ? EXIT_OK : EXIT_INPUT;
}

/* Hands the groups to the report and closes the --changes file. */
static int close_sinks(row_sinks *rs, run_report *rep)
{
    int code = EXIT_OK;
    buf err = BUF_INIT;
    if (rs->groups && !group_table_move(rs->groups, rep)) {
        log_error("out of memory gathering the figures per group");
        code = EXIT_INPUT;
    }
    group_table_free(&rs->groups);
    if (!changes_close(&rs->chg, &err)) {
        log_error("%s", buf_cstr(&err));
        code = EXIT_INPUT;
    }
    chunk_outcome_free(&rs->out);
    buf_free(&err);
    return code;
}

/* File i, unless an interrupt came first; *busy when another process
 * holds it and wait is not set. */
static int try_file(const run_ctx *x, size_t i, bool wait, bool *busy)
{
    const config *cfg = x->cfg;
    *busy = false;
    if (signals_interrupted()) {
        pipeline_not_started(cfg, &x->rep->files[i], cfg->files[i], "not started: interrupted");
        return EXIT_INTERRUPTED;
    }
    int c = run_file(cfg, x->ld, x->rj, x->prog, x->rep->timeline, x->rs, cfg->files[i],
                     &x->rep->files[i], wait, busy);
    if (*busy)
        file_report_clear(&x->rep->files[i]);
    return c;
}

/*
 * Back to the files that were busy (later[0..n)): each round tries every
 * one without waiting (one whose loader finished is skipped now, one whose
 * loader died is resumed); when a round gets none, wait for the first.  So
 * the process ends only when each of its files is loaded, by it or by
 * another (a backfill's exit status 0 means every file is in), and a loader
 * that dies never leaves a file behind while another lives.
 */
static int run_busy_files(const run_ctx *x, size_t *later, size_t n_later)
{
    int code = EXIT_OK;
    while (n_later > 0) {
        size_t kept = 0;
        for (size_t k = 0; k < n_later; k++) {
            bool busy;
            int c = try_file(x, later[k], false, &busy);
            if (busy)
                later[kept++] = later[k];
            else
                code = exit_worst(code, c);
        }
        if (kept == n_later) {
            /* Nothing moved this round: wait for the first. */
            bool busy;
            code = exit_worst(code, try_file(x, later[0], true, &busy));
            memmove(later, later + 1, (kept - 1) * sizeof *later);
            kept--;
        }
        n_later = kept;
    }
    return code;
}

/* Every file in turn; files another process is loading (SPEC.md "Many
 * importers") are left for the end. */
static int run_files(const run_ctx *x)
{
    const config *cfg = x->cfg;
    size_t *later = calloc(cfg->n_files ? cfg->n_files : 1, sizeof *later);
    if (!later) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    size_t n_later = 0;
    int code = EXIT_OK;
    for (size_t i = 0; i < cfg->n_files; i++) {
        bool busy;
        int c = try_file(x, i, false, &busy);
        if (busy)
            later[n_later++] = i;
        else
            code = exit_worst(code, c);
    }
    code = exit_worst(code, run_busy_files(x, later, n_later));
    free(later);
    return code;
}

int pipeline_run(const config *cfg, loader *ld, run_report *rep)
{
    progress prog;
    progress_init(&prog, cfg->quiet);
    rejects *rj = rejects_open(cfg->rejects_path);
    if (!rj) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    double t0 = now_seconds();
    row_sinks rs = {.out.details = cfg->changes_path != NULL};
    run_ctx x = {cfg, ld, rj, &prog, &rs, rep};
    int code = open_sinks(cfg, ld, &rs);
    if (code == EXIT_OK) {
        code = run_files(&x);
    } else {
        /* Nothing can be loaded without its sinks; no file is touched. */
        for (size_t k = 0; k < cfg->n_files; k++)
            pipeline_not_started(cfg, &rep->files[k], cfg->files[k],
                                 "not started (see the error above)");
    }
    if (ld)
        code = exit_worst(code, loader_finish(ld));
    code = exit_worst(code, close_sinks(&rs, rep));
    buf err = BUF_INIT;
    rejects_take_summary(rj, &rep->rejects);
    if (!rejects_close(&rj, &err)) {
        log_error("%s", buf_cstr(&err));
        code = exit_worst(code, EXIT_INPUT);
    }
    buf_free(&err);
    progress_done(&prog);
    rep->elapsed_s = now_seconds() - t0;
    run_report_total(rep);
    return code;
}
