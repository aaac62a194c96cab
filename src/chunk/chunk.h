/*
 * chunk.h - a chunk of validated rows, deduplicated by business key.
 *
 * Inside a chunk each business key keeps one row; the others are counted
 * as deduplicated.  Which one is the chunk's policy (chunk_set_policy):
 * - every row (reconcile, which counts each row of a statement): no
 *   deduplication, the rows in file order;
 * - latest (the default, --on-conflict update): the row with the latest
 *   received_at instant, on a tie the row read later; but when any row of
 *   the key holds a final status, the kept row takes the first such status
 *   in file order (SPEC.md: final statuses do not depend on order), as a
 *   row-by-row load in file order would end;
 * - first (--on-conflict nothing): the first row in file order, what a
 *   row-by-row load under "the first write wins" keeps.
 * So the chunk size never changes the table a file leaves.  A chunk owns copies of all its texts, so it
 * outlives the reader's buffers and can be handed to another thread.
 * Ownership: chunk_new() returns a chunk freed with chunk_free(), which sets
 * the caller's pointer to NULL.  Views returned by chunk_get() point into the
 * chunk and stay valid until chunk_reset() or chunk_free().
 */
#ifndef IDEMLOAD_CHUNK_H
#define IDEMLOAD_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/columns.h"

/* How a row holds a column of each kind (core/columns.h): a TEXT or a
 * JSON value (the JSON text exactly as written) as member and member_len,
 * a TIME as microseconds since the Unix epoch, UTC. */
#define ROW_MEMBER_INT64(m) int64_t m;
#define ROW_MEMBER_INT16(m) int16_t m;
#define ROW_MEMBER_TEXT(m) const char *m; size_t m##_len;
#define ROW_MEMBER_JSON(m) const char *m; size_t m##_len;
#define ROW_MEMBER_TIME(m) int64_t m;
#define ROW_MEMBER_1(ID, name, member, kind, key, pos, dflt, A, B) ROW_MEMBER_##kind(member)

/* A validated, normalized row (texts trimmed, not NUL-terminated): one
 * member per column of the column table (tenant_id, channel, out_trade_no,
 * callback_type, status, payload, received_us), and where it came from. */
typedef struct row {
    uint64_t line;          /* where the record starts in its file */
    IDEMLOAD_COLUMNS(ROW_MEMBER_1, ~, ~)
    const char *raw;        /* the record's original text */
    size_t raw_len;
} row;

/* What reading a chunk's records came to. */
typedef struct chunk_counts {
    uint64_t rows_read;
    uint64_t rows_rejected;
    uint64_t rows_skipped;      /* skipped on purpose by a channel profile */
    uint64_t rows_deduplicated;
} chunk_counts;

typedef struct chunk chunk;

/* How chunk_add() picks the row a key keeps (see above).  The statuses are
 * copied by chunk_set_policy(). */
typedef struct chunk_policy {
    bool keep_first;
    const int16_t *final_status;
    size_t n_final_status;
    bool keep_every_row;    /* no deduplication: the others are then unused */
} chunk_policy;

#define CHUNK_MAX_FINAL 32

/* A chunk with room for max_rows distinct rows (it grows if needed). */
chunk *chunk_new(size_t max_rows);
void chunk_free(chunk **ch);
/* Empties the chunk (keeping its memory) and zeroes its counts. */
void chunk_reset(chunk *ch);
/* Sets the deduplication policy; call on an empty chunk.  At most
 * CHUNK_MAX_FINAL final statuses are taken. */
void chunk_set_policy(chunk *ch, const chunk_policy *p);

/*
 * Adds a copy of *r, deduplicating against the rows already in the chunk
 * (unless its policy keeps every row).
 * Returns false only when memory runs out (the chunk is then unchanged).
 */
bool chunk_add(chunk *ch, const row *r);

/* Distinct rows held. */
size_t chunk_size(const chunk *ch);
/* Fills *out with row i (0 <= i < chunk_size). */
void chunk_get(const chunk *ch, size_t i, row *out);
/* Orders the rows by business key (bytewise), so every process merges
 * keys in the same order and concurrent merges cannot deadlock.  Once
 * sorted, a chunk takes no more rows until chunk_reset(). */
void chunk_sort(chunk *ch);

/* The counts of the records read into this chunk; callers update
 * rows_read and rows_rejected, chunk_add() updates rows_deduplicated. */
chunk_counts *chunk_counts_of(chunk *ch);

/* Same business key? */
bool row_same_key(const row *a, const row *b);

/* A hash of the business key that never changes between versions or
 * platforms: an import splits keys over its connections by it, and the
 * ledger remembers that split to resume a file.  chunk_key_hash() returns
 * it for row i without recomputing. */
uint32_t row_key_hash(const row *r);
uint32_t chunk_key_hash(const chunk *ch, size_t i);
/* The 64 bits row_key_hash() folds to 32 (FNV-1a over the same bytes), for
 * filters that need more than 32 bits over millions of keys;
 * chunk_key_hash64() returns it for row i without recomputing. */
uint64_t row_key_hash64(const row *r);
uint64_t chunk_key_hash64(const chunk *ch, size_t i);

#endif
