/*
 * timeline.h - rows per hour of received_at, per channel: the facts of the
 * HTML report's timeline chart (html.h), gathered as validated rows are
 * added to a chunk.
 *
 * Counts are kept per (channel, hour) in a hash table, so a stray year in
 * a file costs one entry, not a year of empty hours.  At most
 * TIMELINE_MAX_CHANNELS channels are told apart; the rows of the others
 * are counted under TIMELINE_OTHER.  One thread at a time adds rows (the
 * reading thread of the file being read); reading the timeline happens
 * after that thread is joined.
 * Ownership: timeline_new() returns an object freed by timeline_free(),
 * which sets the caller's pointer to NULL.
 */
#ifndef IDEMLOAD_TIMELINE_H
#define IDEMLOAD_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIMELINE_MAX_CHANNELS 24
#define TIMELINE_OTHER "(other channels)"
#define TIMELINE_HOUR_US INT64_C(3600000000)

typedef struct timeline timeline;

timeline *timeline_new(void);
void timeline_free(timeline **tl);

/* Counts one row of channel (len bytes) received at received_us (UTC
 * microseconds since the epoch).  False when memory runs out; the row is
 * then counted in timeline_uncharted(). */
bool timeline_add(timeline *tl, const char *channel, size_t len, int64_t received_us);

uint64_t timeline_uncharted(const timeline *tl);

/* Channels told apart, in order of first appearance (NUL-terminated
 * copies; a channel holding NUL bytes is shown up to the first). */
size_t timeline_channels(const timeline *tl);
const char *timeline_channel(const timeline *tl, size_t i);

/* The first and last hour (hour numbers: received_us / TIMELINE_HOUR_US,
 * rounded down); false when no row was counted. */
bool timeline_range(const timeline *tl, int64_t *first_hour, int64_t *last_hour);

/*
 * Sums channel ch's rows into n_buckets buckets of bucket_hours hours
 * each, the first starting at first_hour: out[k] gets the rows of hours
 * [first_hour + k*bucket_hours, first_hour + (k+1)*bucket_hours).
 */
void timeline_buckets(const timeline *tl, size_t ch, int64_t first_hour, int64_t bucket_hours,
                      uint64_t *out, size_t n_buckets);

#endif
