/*
 * feed.c - the reading thread of a file (see feed.h).
 */
#include "pipeline/feed.h"

#include <string.h>

#include "rules/validate.h"
#include "util/signals.h"

_Static_assert(CHUNK_MAX_FINAL >= MAX_FINAL_STATUSES, "a chunk keeps every final status");

/* A chunk also ends once its records' text reaches this many bytes, so
 * that memory is bounded by the chunk whatever the rows weigh (two chunks
 * circulate; SPEC.md "Hostile input": peak RSS under 256 MiB for any
 * input).  Counted on the records as read, in a skipped chunk too, so a
 * rerun cuts the file at the same places. */
#define CHUNK_MAX_BYTES ((size_t)16 << 20)

/* A record validation refused: to the sinks, and counted for
 * --max-rejects.  FILL_FULL: reading goes on. */
static fill_result refuse_record(chunk_feed *f, chunk_counts *cc, const raw_record *rec)
{
    const config *cfg = f->in.cfg;
    cc->rows_rejected++;
    f->rejected++;
    buf_clear(&f->err);
    if (!sinks_reject(f->in.sinks, f->in.path, rec->line, buf_cstr(&f->reason), rec, &f->err))
        return FILL_REJECTS_FAILED;
    if (cfg->max_rejects >= 0 && f->rejected > (uint64_t)cfg->max_rejects)
        return FILL_TOO_MANY;
    return FILL_FULL;
}

/* Reads records into ch until it holds chunk_rows records, or records of
 * CHUNK_MAX_BYTES, or input ends.  skip: the chunk was committed by an
 * earlier run; count records only. */
static fill_result fill_chunk(chunk_feed *f, chunk *ch, bool skip)
{
    const feed_input *in = &f->in;
    chunk_reset(ch);
    chunk_counts *cc = chunk_counts_of(ch);
    size_t bytes = 0;
    while (cc->rows_read < in->cfg->chunk_rows && bytes < CHUNK_MAX_BYTES) {
        if ((f->rows_seen & 0x3ff) == 0) {
            if (signals_interrupted() || __atomic_load_n(&f->stop, __ATOMIC_RELAXED))
                return FILL_INTERRUPTED;
            sinks_read_progress(in->sinks, source_raw_offset(in->src), f->rows_seen);
        }
        raw_record rec;
        read_result rr = reader_next(in->rdr, &rec);
        if (rr == READ_EOF)
            return FILL_EOF;
        if (rr == READ_FAILED) {
            buf_clear(&f->err);
            buf_append_str(&f->err, reader_error(in->rdr));
            /* A read cut short by SIGINT/SIGTERM (a pipe that sent nothing)
             * is an interruption, exit 130, not an unreadable input. */
            return signals_interrupted() ? FILL_INTERRUPTED : FILL_INPUT_FAILED;
        }
        cc->rows_read++;
        f->rows_seen++;
        bytes += rec.raw_len;
        if (skip)
            continue;
        if (rec.skipped) {
            cc->rows_skipped++;
            continue;
        }
        row r;
        buf_clear(&f->reason);
        if (validate_record(&rec, &in->cfg->presets, in->check_utf8, &r, &f->reason)) {
            if (!chunk_add(ch, &r))
                return FILL_NO_MEMORY;
            sinks_row_read(in->sinks, &r);
            continue;
        }
        fill_result res = refuse_record(f, cc, &rec);
        if (res != FILL_FULL)
            return res;
    }
    return FILL_FULL;
}

static void *feed_main(void *arg)
{
    chunk_feed *f = arg;
    uint64_t produced = 0;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        while (f->n_spare == 0 && !f->stopping)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->stopping) {
            pthread_mutex_unlock(&f->mu);
            return NULL;
        }
        chunk *ch = f->spare[--f->n_spare];
        pthread_mutex_unlock(&f->mu);

        bool skip = produced < f->resume_after;
        fill_result res = fill_chunk(f, ch, skip);
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

bool feed_start(chunk_feed *f, const feed_input *in, uint64_t resume_after)
{
    memset(f, 0, sizeof *f);
    f->in = *in;
    f->resume_after = resume_after;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->inited = true;
    const config *cfg = in->cfg;
    /* --on-conflict nothing keeps a key's first row (a row-by-row load's
     * choice); reconcile --repair missing merges that way too, but inserts
     * the statement's version the comparison showed: the latest. */
    chunk_policy pol = {.keep_first = cfg->conflict == CONFLICT_NOTHING &&
                                      cfg->repair != REPAIR_MISSING,
                        .final_status = cfg->final_status,
                        .n_final_status = cfg->n_final_status,
                        .keep_every_row = in->every_row};
    for (int i = 0; i < 2; i++) {
        f->spare[i] = chunk_new(cfg->chunk_rows);
        if (!f->spare[i])
            return false;
        chunk_set_policy(f->spare[i], &pol);
        f->n_spare++;
    }
    return pthread_create(&f->thread, NULL, feed_main, f) == 0;
}

filled feed_take(chunk_feed *f)
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

void feed_return(chunk_feed *f, chunk *ch)
{
    pthread_mutex_lock(&f->mu);
    f->spare[f->n_spare++] = ch;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

buf *feed_error(chunk_feed *f)
{
    return &f->err;
}

void feed_stop(chunk_feed *f, bool started)
{
    if (!f->inited)
        return;
    if (started) {
        pthread_mutex_lock(&f->mu);
        f->stopping = true;
        __atomic_store_n(&f->stop, true, __ATOMIC_RELAXED);
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
    buf_free(&f->reason);
    buf_free(&f->err);
}
