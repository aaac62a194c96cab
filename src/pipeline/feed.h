/*
 * feed.h - the reading of a file and its thread: a reading thread fills
 * the next chunk while the loading thread loads the current one, so
 * parsing overlaps the database work.  Two chunks circulate between them;
 * memory stays at two chunks whatever the file size.
 *
 * Chunk boundaries are counted in records read (rejected ones included), so
 * the same file with the same --chunk-rows always cuts at the same records:
 * a resumed load can skip exactly the chunks an earlier run committed.
 *
 * The reading thread calls the reading hooks of the sinks (sink.h:
 * on_read_progress, on_row_read, on_reject) and touches nothing else of the
 * run.  Ownership: feed_start() allocates the chunks; feed_stop() joins the
 * thread and frees them.  The input (source, reader) stays the caller's.
 */
#ifndef IDEMLOAD_FEED_H
#define IDEMLOAD_FEED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "chunk/chunk.h"
#include "core/config.h"
#include "input/reader.h"
#include "input/source.h"
#include "pipeline/sink.h"
#include "util/buf.h"

typedef enum fill_result {
    FILL_FULL,          /* chunk_rows records read */
    FILL_EOF,           /* input ended (the chunk may hold rows) */
    FILL_INPUT_FAILED,  /* reader or source fault: message in feed_error() */
    FILL_TOO_MANY,      /* --max-rejects exceeded */
    FILL_REJECTS_FAILED,/* a reject cannot be recorded: message in feed_error() */
    FILL_NO_MEMORY,
    FILL_INTERRUPTED
} fill_result;

/* The opened file the reading thread reads (immutable while it runs, but
 * for the reader's own state, which only that thread touches). */
typedef struct feed_input {
    const config *cfg;
    const char *path;
    const source_identity *id;  /* what names it (an object: its version) */
    source *src;
    reader *rdr;
    bool check_utf8;            /* reader_records_need_utf8_check */
    bool every_row;             /* keep every row (reconcile), no deduplication */
    const sink_set *sinks;
} feed_input;

/* One chunk as the reading thread handed it over. */
typedef struct filled {
    chunk *ch;
    fill_result res;
    bool skip;                  /* committed by an earlier run: counted, not read into rows */
} filled;

typedef struct chunk_feed {
    feed_input in;
    uint64_t resume_after;
    /* the reading thread's own, until it hands a chunk over */
    uint64_t rejected;          /* in this file, for --max-rejects */
    uint64_t rows_seen;
    buf reason;
    buf err;
    bool stop;                  /* atomic: loading gave up, stop reading */
    /* shared, under mu */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk *spare[2];
    int n_spare;
    filled ready[2];
    int n_ready;
    bool stopping;
    bool inited;
} chunk_feed;

/* Starts the reading thread over in with two chunks of room; the first
 * resume_after chunks are only counted.  False on failure (feed_stop(f,
 * false) still needed). */
bool feed_start(chunk_feed *f, const feed_input *in, uint64_t resume_after);

/* The next filled chunk, in file order (blocks until there is one). */
filled feed_take(chunk_feed *f);

/* Gives a loaded chunk back for reuse. */
void feed_return(chunk_feed *f, chunk *ch);

/* After feed_take returned FILL_INPUT_FAILED or FILL_REJECTS_FAILED: the
 * message (the reading thread has stopped; the caller may rewrite it). */
buf *feed_error(chunk_feed *f);

/* Stops the reading thread (if started) and frees the chunks. */
void feed_stop(chunk_feed *f, bool started);

#endif
