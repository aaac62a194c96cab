/*
 * collectors.c - the sinks of collectors.h: each is a few hooks over one
 * collector of output/, and one entry of the table at the end.
 */
#include "pipeline/collectors.h"

#include "output/changes.h"
#include "output/groups.h"
#include "output/log.h"
#include "output/timeline.h"
#include "util/exitcodes.h"

/* --- the progress line ---------------------------------------------- */

static void progress_start(void *st, const char *path, int64_t total_bytes)
{
    progress_file(st, path, total_bytes);
}

static void progress_read(void *st, uint64_t bytes, uint64_t records)
{
    progress_update(st, bytes, records);
}

static bool progress_end(void *st, run_report *rep, buf *err)
{
    (void)rep, (void)err;
    progress_done(st);
    return true;
}

static const sink_ops progress_sink = {
    .name = "progress",
    .on_file_start = progress_start,
    .on_read_progress = progress_read,
    .on_run_end = progress_end,
};

/* --- the rejects file (state: the pipeline's rejects *) --------------- */

static bool rejects_reject(void *st, const char *path, uint64_t line, const char *reason,
                           const raw_record *rec, buf *err)
{
    return rejects_write_converted(*(rejects **)st, path, line, reason, rec->raw, rec->raw_len,
                                   rec->orig, rec->orig_len, err);
}

static bool rejects_durable(void *st, buf *err)
{
    return rejects_sync(*(rejects **)st, err);
}

static bool rejects_end(void *st, run_report *rep, buf *err)
{
    rejects_take_summary(*(rejects **)st, &rep->rejects);
    return rejects_close(st, err);
}

static const sink_ops rejects_sink = {
    .name = "rejects",
    .on_reject = rejects_reject,
    .before_commit = rejects_durable,
    .before_file_completed = rejects_durable,
    .on_run_end = rejects_end,
};

/* --- the timeline of received_at (state: the report's timeline) ------- */

static void timeline_row(void *st, const row *r)
{
    /* A chart is no reason to stop a load: a row it cannot place is
     * counted as uncharted. */
    (void)timeline_add(st, r->channel, r->channel_len, r->received_us);
}

static const sink_ops timeline_sink = {
    .name = "timeline",
    .on_row_read = timeline_row,
};

/* --- the figures per group (state: a group_table) --------------------- */

static bool groups_row(void *st, const char *path, const row *r, merge_action a,
                       const row_version *before, const row_version *after, buf *err)
{
    (void)path, (void)before, (void)after;
    if (group_table_add(st, r->tenant_id, r->channel, r->channel_len, r->callback_type,
                        r->callback_type_len, a))
        return true;
    buf_printf(err, "out of memory counting the figures per group");
    return false;
}

static bool groups_end(void *st, run_report *rep, buf *err)
{
    group_table *g = st;
    bool ok = group_table_move(g, rep);
    if (!ok)
        buf_printf(err, "out of memory gathering the figures per group");
    group_table_free(&g);
    return ok;
}

static const sink_ops groups_sink = {
    .name = "groups",
    .on_row_merged = groups_row,
    .on_run_end = groups_end,
};

/* --- the --changes file (state: a changes) ----------------------------- */

/*
 * A resumed file: the --changes lines of the chunks (and lanes) an earlier
 * run committed, from the ledger (output/changes.h), before this run's
 * own, so the file holds one line per change of the whole file as the
 * figures are the whole file's.
 */
static int changes_resumed(void *st, loader *ld, const char *path, const file_plan *plan,
                           file_report *rep)
{
    if (plan->resume_after == 0 && !plan->next_partial)
        return EXIT_OK;
    uint64_t last = plan->resume_after + (plan->next_partial ? 1 : 0), none = 0;
    buf lines = BUF_INIT, err = BUF_INIT;
    int code = EXIT_OK;
    for (uint64_t no = 1; no <= last && code == EXIT_OK; no++) {
        int without = 0;
        code = loader_committed_changes(ld, no, &lines, &without);
        if (code == EXIT_OK && !changes_write_lines(st, path, lines.data, lines.len, &err)) {
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

static bool changes_row(void *st, const char *path, const row *r, merge_action a,
                        const row_version *before, const row_version *after, buf *err)
{
    return !changes_wanted(a) || changes_write(st, path, r, a, before, after, err);
}

static bool changes_durable(void *st, buf *err)
{
    return changes_sync(st, err);
}

static bool changes_end(void *st, run_report *rep, buf *err)
{
    (void)rep;
    changes *c = st;
    return changes_close(&c, err);
}

static const sink_ops changes_sink = {
    .name = "changes",
    .wants_versions = true,
    .on_file_resumed = changes_resumed,
    .on_row_merged = changes_row,
    .before_file_completed = changes_durable,
    .on_run_end = changes_end,
};

/* --- which a run opens ---------------------------------------------------- */

/* Sets *st to the sink's state for the run (left NULL: not in this run);
 * false when it cannot be opened (logged). */
typedef bool open_fn(const collector_setup *x, void **st);

static bool open_progress(const collector_setup *x, void **st)
{
    *st = x->prog;
    return true;
}

static bool open_rejects(const collector_setup *x, void **st)
{
    *st = x->rj;
    return true;
}

static bool open_timeline(const collector_setup *x, void **st)
{
    if (x->reading_only)
        return true;
    *st = x->rep->timeline;
    return true;
}

static bool open_groups(const collector_setup *x, void **st)
{
    if (!x->ld)
        return true;
    *st = group_table_new();
    if (!*st)
        log_error("out of memory");
    return *st != NULL;
}

static bool open_changes(const collector_setup *x, void **st)
{
    if (!x->ld || !x->cfg->changes_path)
        return true;
    buf err = BUF_INIT;
    *st = changes_open(x->cfg->changes_path, &err);
    if (!*st)
        log_error("%s", buf_cstr(&err));
    buf_free(&err);
    return *st != NULL;
}

/* The order hooks run in (on_run_end: the reverse).  The rejects are made
 * durable before the changes when a file completes; the figures per group
 * take a row before its --changes line. */
static const struct {
    const sink_ops *ops;
    open_fn *open;
} collectors[] = {
    {&progress_sink, open_progress},
    {&rejects_sink, open_rejects},
    {&timeline_sink, open_timeline},
    {&groups_sink, open_groups},
    {&changes_sink, open_changes},
};

int collectors_open(sink_set *set, const collector_setup *x)
{
    _Static_assert(sizeof collectors / sizeof collectors[0] <= SINK_MAX, "room for every sink");
    for (size_t i = 0; i < sizeof collectors / sizeof collectors[0]; i++) {
        void *st = NULL;
        if (!collectors[i].open(x, &st))
            return EXIT_INPUT;
        if (st)
            sink_set_add(set, collectors[i].ops, st);
    }
    return EXIT_OK;
}
