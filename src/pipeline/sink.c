/*
 * sink.c - the dispatchers of sink.h: each calls one hook of every sink
 * that has it, on the thread sink.h states (checked when assertions are
 * on), and turns a failure into one log line and the file's error.
 */
#include "pipeline/sink.h"

#include <assert.h>

#include "output/log.h"
#include "util/exitcodes.h"

#define ON_LOADING(set) assert(pthread_equal(pthread_self(), (set)->loading))
#define ON_READING(set) assert(!pthread_equal(pthread_self(), (set)->loading))

void sink_set_init(sink_set *set)
{
    set->n = 0;
    set->loading = pthread_self();
}

void sink_set_add(sink_set *set, const sink_ops *ops, void *st)
{
    ON_LOADING(set);
    assert(set->n < SINK_MAX);
    set->s[set->n++] = (sink){ops, st};
}

bool sinks_want_versions(const sink_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->s[i].ops->wants_versions)
            return true;
    return false;
}

/* A loading-thread hook failed with err: logged (prefix before it), the
 * file's error set. */
static int file_failed(file_report *rep, const buf *err, const char *suffix)
{
    log_error("%s%s", buf_cstr(err), suffix);
    file_report_set_error(rep, buf_cstr(err));
    return EXIT_INPUT;
}

int sinks_file_resumed(const sink_set *set, loader *ld, const char *path, const file_plan *plan,
                       file_report *rep)
{
    ON_LOADING(set);
    for (size_t i = 0; i < set->n; i++) {
        const sink *s = &set->s[i];
        if (!s->ops->on_file_resumed)
            continue;
        int code = s->ops->on_file_resumed(s->st, ld, path, plan, rep);
        if (code != EXIT_OK)
            return code;
    }
    return EXIT_OK;
}

void sinks_file_start(const sink_set *set, const char *path, int64_t total_bytes)
{
    ON_LOADING(set);
    for (size_t i = 0; i < set->n; i++)
        if (set->s[i].ops->on_file_start)
            set->s[i].ops->on_file_start(set->s[i].st, path, total_bytes);
}

void sinks_read_progress(const sink_set *set, uint64_t bytes, uint64_t records)
{
    ON_READING(set);
    for (size_t i = 0; i < set->n; i++)
        if (set->s[i].ops->on_read_progress)
            set->s[i].ops->on_read_progress(set->s[i].st, bytes, records);
}

void sinks_row_read(const sink_set *set, const row *r)
{
    ON_READING(set);
    for (size_t i = 0; i < set->n; i++)
        if (set->s[i].ops->on_row_read)
            set->s[i].ops->on_row_read(set->s[i].st, r);
}

bool sinks_reject(const sink_set *set, const char *path, uint64_t line, const char *reason,
                  const raw_record *rec, buf *err)
{
    ON_READING(set);
    for (size_t i = 0; i < set->n; i++) {
        const sink *s = &set->s[i];
        if (s->ops->on_reject && !s->ops->on_reject(s->st, path, line, reason, rec, err))
            return false;
    }
    return true;
}

int sinks_before_commit(const sink_set *set, file_report *rep)
{
    ON_LOADING(set);
    buf err = BUF_INIT;
    int code = EXIT_OK;
    for (size_t i = 0; i < set->n && code == EXIT_OK; i++) {
        const sink *s = &set->s[i];
        if (s->ops->before_commit && !s->ops->before_commit(s->st, &err))
            code = file_failed(rep, &err, "");
    }
    buf_free(&err);
    return code;
}

/* Row i of the chunk to every sink; false at the first that fails. */
static bool row_merged(const sink_set *set, const char *path, const chunk *ch,
                       const chunk_outcome *out, size_t i, buf *err)
{
    row r;
    chunk_get(ch, i, &r);
    merge_action a = (merge_action)out->action[i];
    const row_version *before = out->details && out->has_before[i] ? &out->before[i] : NULL;
    const row_version *after = out->details ? &out->after[i] : NULL;
    for (size_t k = 0; k < set->n; k++) {
        const sink *s = &set->s[k];
        if (s->ops->on_row_merged && !s->ops->on_row_merged(s->st, path, &r, a, before, after, err))
            return false;
    }
    return true;
}

int sinks_chunk_merged(const sink_set *set, const char *path, const chunk *ch,
                       const chunk_outcome *out, file_report *rep)
{
    ON_LOADING(set);
    buf err = BUF_INIT;
    int code = EXIT_OK;
    size_t n = chunk_size(ch);
    for (size_t i = 0; i < n && code == EXIT_OK; i++)
        if (!row_merged(set, path, ch, out, i, &err))
            code = file_failed(rep, &err, "");
    buf_free(&err);
    return code;
}

int sinks_before_file_completed(const sink_set *set, file_report *rep, bool loading)
{
    ON_LOADING(set);
    buf err = BUF_INIT;
    int code = EXIT_OK;
    for (size_t i = 0; i < set->n && code == EXIT_OK; i++) {
        const sink *s = &set->s[i];
        if (s->ops->before_file_completed && !s->ops->before_file_completed(s->st, &err))
            code = file_failed(rep, &err,
                               loading ? "; the file is not marked completed: make room and run "
                                         "the same command again"
                                       : "; its rejected rows are not all in the rejects file");
    }
    buf_free(&err);
    return code;
}

int sinks_run_end(sink_set *set, run_report *rep)
{
    ON_LOADING(set);
    int code = EXIT_OK;
    buf err = BUF_INIT;
    while (set->n > 0) {
        const sink *s = &set->s[--set->n];
        buf_clear(&err);
        if (s->ops->on_run_end && !s->ops->on_run_end(s->st, rep, &err)) {
            log_error("%s", buf_cstr(&err));
            code = EXIT_INPUT;
        }
    }
    buf_free(&err);
    return code;
}
