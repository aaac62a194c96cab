/*
 * sink.h - the collectors of a run (the facts of the report and the page,
 * the side outputs, the progress line) behind one interface: a sink is a
 * table of hooks and its state, and the pipeline calls each hook at one
 * point of a file's load, on one thread.
 *
 * Two threads touch sinks.  The loading thread is the one that runs
 * pipeline_run (main's thread): it opens the sinks, runs the per-file state
 * machine and the loader, and ends the run.  The reading thread (feed.h,
 * one per file, started after on_file_start and joined before the next file
 * or on_run_end) parses the file one chunk ahead of the loading thread.  A
 * sink's state touched by a reading hook and by a loading hook must be safe
 * for both (a lock, as the rejects file has), or be touched by the loading
 * thread only while no reading thread runs (before on_file_start's thread
 * starts, after the file's reading thread is joined).  The dispatchers check
 * the thread of each call in a build with assertions (the sanitizer builds).
 *
 * The phase says where a hook stands against the commit of the rows it
 * sees: before (the rows may still be rolled back: a reject or a chart of
 * what was read) or after (the chunk committed, or in a dry run was merged
 * in the run's open transaction: the figures and --changes).
 *
 * Every hook may be NULL.  Hooks run in the order the sinks were opened
 * (collectors.h); on_run_end in the reverse order.  A hook that returns
 * false sets *err and the sinks after it are not called (but every sink
 * gets its on_run_end); the failure is logged once (by the dispatcher; for
 * on_reject by the loading thread when it takes the unfinished chunk) and
 * fails the file (or the run) with EXIT_INPUT.
 *
 * Adding a report section is one sink (its hooks gather the facts, its
 * on_run_end moves them into the run_report), one entry in the table of
 * collectors.c, and one renderer in output/.
 *
 * Ownership: a sink_set holds pointers to the sinks' states, which their
 * opener owns; on_run_end releases what the sink allocated.
 */
#ifndef IDEMLOAD_SINK_H
#define IDEMLOAD_SINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chunk/chunk.h"
#include "core/record.h"
#include "load/ledger.h"
#include "load/loader.h"
#include "load/outcome.h"
#include "output/report.h"
#include "util/buf.h"

typedef struct sink_ops {
    const char *name;
    /* The merge must fill the versions before and after of each row
     * (chunk_outcome.details) for on_row_merged. */
    bool wants_versions;

    /* Loading thread, import only: the ledger says an earlier run committed
     * the chunks of plan (resume_after, next_partial) of file path; before
     * any of this run's rows are read.  EXIT_OK, or the exit status with
     * rep's error set (logged). */
    int (*on_file_resumed)(void *st, loader *ld, const char *path, const file_plan *plan,
                           file_report *rep);

    /* Loading thread, before the file's reading thread starts (total_bytes
     * -1 when unknown). */
    void (*on_file_start)(void *st, const char *path, int64_t total_bytes);

    /* Reading thread, every 1024 records: bytes of the file and records
     * read so far. */
    void (*on_read_progress)(void *st, uint64_t bytes, uint64_t records);

    /* Reading thread, before commit: a valid row just added to a chunk (a
     * chunk an earlier run committed is not read into rows).  A fact
     * gathered while reading is no reason to stop a load: a sink that
     * cannot keep the row counts it as lost. */
    void (*on_row_read)(void *st, const row *r);

    /* Reading thread, before commit: a record validation refused (line,
     * why, its raw text).  False with *err stops the file: a reject that
     * cannot be recorded would be lost silently. */
    bool (*on_reject)(void *st, const char *path, uint64_t line, const char *reason,
                      const raw_record *rec, buf *err);

    /* Loading thread, before the chunk's transaction is sent: what the
     * reading thread gathered for it must be durable now (STYLE.md practice
     * 19).  False with *err: the chunk is not loaded. */
    bool (*before_commit)(void *st, buf *err);

    /* Loading thread, after commit (a dry run: after the merge): row r of
     * file path, what the merge did (a), and with wants_versions its
     * versions (before NULL: no active row before).  Rows in chunk order
     * (the business key), whatever lanes merged them.  False with *err:
     * the file fails, its committed figures stay counted. */
    bool (*on_row_merged)(void *st, const char *path, const row *r, merge_action a,
                          const row_version *before, const row_version *after, buf *err);

    /* Loading thread, after the file's last chunk committed and before the
     * ledger marks it completed: everything written for it on disk.  False
     * with *err: the file is not marked completed. */
    bool (*before_file_completed)(void *st, buf *err);

    /* Loading thread, after the last file (every reading thread joined and
     * the loader finished): the gathered facts into rep, then the sink's
     * resources released.  Called once for every opened sink, also when a
     * later one failed to open.  False with *err (logged; the run exits 3). */
    bool (*on_run_end)(void *st, run_report *rep, buf *err);
} sink_ops;

#define SINK_MAX 8

typedef struct sink {
    const sink_ops *ops;
    void *st;
} sink;

/* The sinks of a run: filled by the loading thread before any reading
 * thread starts, read-only afterwards. */
typedef struct sink_set {
    sink s[SINK_MAX];
    size_t n;
    pthread_t loading;      /* the loading thread */
} sink_set;

/* An empty set whose loading thread is the caller's. */
void sink_set_init(sink_set *set);
/* Adds a sink (the set has room for SINK_MAX: a programming error past it). */
void sink_set_add(sink_set *set, const sink_ops *ops, void *st);
/* Does some sink want the versions before and after? */
bool sinks_want_versions(const sink_set *set);

/* The dispatchers, one per hook, on the hook's thread.  Those returning an
 * int give EXIT_OK or the status (the failure logged, rep's error set);
 * those returning bool stop at the first sink that fails, *err set. */
int sinks_file_resumed(const sink_set *set, loader *ld, const char *path, const file_plan *plan,
                       file_report *rep);
void sinks_file_start(const sink_set *set, const char *path, int64_t total_bytes);
void sinks_read_progress(const sink_set *set, uint64_t bytes, uint64_t records);
void sinks_row_read(const sink_set *set, const row *r);
bool sinks_reject(const sink_set *set, const char *path, uint64_t line, const char *reason,
                  const raw_record *rec, buf *err);
int sinks_before_commit(const sink_set *set, file_report *rep);
/* Every row of ch with its outcome, in chunk order. */
int sinks_chunk_merged(const sink_set *set, const char *path, const chunk *ch,
                       const chunk_outcome *out, file_report *rep);
/* The file's side outputs durable before it is taken as done: before the
 * ledger marks it completed (loading), or before validate reports it ok
 * (not loading: a rejects file that cannot be written fails the file). */
int sinks_before_file_completed(const sink_set *set, file_report *rep, bool loading);
/* Every sink's on_run_end, the last opened first; the set is left empty. */
int sinks_run_end(sink_set *set, run_report *rep);

#endif
