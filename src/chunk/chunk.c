/*
 * chunk.c - rows of one chunk and their in-chunk deduplication (see
 * chunk.h).
 *
 * Texts live in one arena; rows refer to them by offset, since the arena
 * moves when it grows.  The key index is a small open-addressing hash table
 * of row numbers, rebuilt from zero for each chunk: glibc's hsearch wants
 * NUL-terminated string keys and one table per process, and a jansson
 * object would allocate per key, while this needs neither.
 */
#define _GNU_SOURCE /* qsort_r: the comparison needs the chunk's text arena */
#include "chunk/chunk.h"

#include <assert.h>

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

typedef struct slot_row {
    uint64_t line;
    int64_t tenant_id;
    int64_t received_us;
    int16_t status;
    uint32_t hash;          /* row_key_hash(), the low half of hash64 folded */
    uint64_t hash64;        /* row_key_hash64() */
    size_t off;             /* start of this row's texts in the arena */
    uint32_t len[5];        /* channel, out_trade_no, callback_type, payload, raw */
} slot_row;

struct chunk {
    slot_row *rows;
    size_t n, cap;
    buf arena;
    uint32_t *table;        /* row index + 1, 0 = empty */
    size_t table_cap;       /* power of two, > 2 * rows */
    chunk_counts counts;
    bool keep_first;
    int16_t final_status[CHUNK_MAX_FINAL];
    size_t n_final;
    bool sorted;            /* chunk_sort() ran: no chunk_add() until reset */
};

uint64_t row_key_hash64(const row *r)
{
    /* FNV-1a over the key parts, each followed by a separator byte that
     * cannot make two different keys collide structurally (lengths mix in).
     * The tenant id is taken byte by byte, so the value is the same on
     * every platform: the ledger relies on it across runs. */
    uint64_t h = 1469598103934665603ULL;
    uint64_t t = (uint64_t)r->tenant_id;
    for (int i = 0; i < 8; i++) {
        h ^= (t >> (8 * i)) & 0xff;
        h *= 1099511628211ULL;
    }
    const char *parts[3] = {r->channel, r->out_trade_no, r->callback_type};
    size_t lens[3] = {r->channel_len, r->out_trade_no_len, r->callback_type_len};
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < lens[k]; i++) {
            h ^= (unsigned char)parts[k][i];
            h *= 1099511628211ULL;
        }
        h ^= lens[k] + 0x9e;
        h *= 1099511628211ULL;
    }
    return h;
}

uint32_t row_key_hash(const row *r)
{
    uint64_t h = row_key_hash64(r);
    return (uint32_t)(h ^ (h >> 32));
}

static bool grow_table(chunk *ch, size_t need_rows)
{
    size_t cap = ch->table_cap ? ch->table_cap : 1024;
    while (cap < need_rows * 2 + 2)
        cap *= 2;
    if (cap == ch->table_cap)
        return true;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < ch->n; i++) {
        size_t j = ch->rows[i].hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = (uint32_t)(i + 1);
    }
    free(ch->table);
    ch->table = t;
    ch->table_cap = cap;
    return true;
}

chunk *chunk_new(size_t max_rows)
{
    chunk *ch = calloc(1, sizeof *ch);
    if (!ch)
        return NULL;
    ch->cap = max_rows ? max_rows : 1;
    ch->rows = malloc(ch->cap * sizeof *ch->rows);
    if (!ch->rows || !grow_table(ch, ch->cap)) {
        chunk_free(&ch);
        return NULL;
    }
    return ch;
}

void chunk_free(chunk **chp)
{
    chunk *ch = *chp;
    if (!ch)
        return;
    free(ch->rows);
    free(ch->table);
    buf_free(&ch->arena);
    free(ch);
    *chp = NULL;
}

void chunk_reset(chunk *ch)
{
    ch->n = 0;
    ch->sorted = false;
    buf_clear(&ch->arena);
    memset(ch->table, 0, ch->table_cap * sizeof *ch->table);
    memset(&ch->counts, 0, sizeof ch->counts);
}

void chunk_set_policy(chunk *ch, const chunk_policy *p)
{
    ch->keep_first = p->keep_first;
    ch->n_final = p->n_final_status < CHUNK_MAX_FINAL ? p->n_final_status : CHUNK_MAX_FINAL;
    for (size_t i = 0; i < ch->n_final; i++)
        ch->final_status[i] = p->final_status[i];
}

static bool is_final(const chunk *ch, int16_t status)
{
    for (size_t i = 0; i < ch->n_final; i++)
        if (ch->final_status[i] == status)
            return true;
    return false;
}

size_t chunk_size(const chunk *ch)
{
    return ch->n;
}

chunk_counts *chunk_counts_of(chunk *ch)
{
    return &ch->counts;
}

uint32_t chunk_key_hash(const chunk *ch, size_t i)
{
    return ch->rows[i].hash;
}

uint64_t chunk_key_hash64(const chunk *ch, size_t i)
{
    return ch->rows[i].hash64;
}

void chunk_get(const chunk *ch, size_t i, row *out)
{
    const slot_row *s = &ch->rows[i];
    const char *p = ch->arena.data + s->off;
    out->line = s->line;
    out->tenant_id = s->tenant_id;
    out->status = s->status;
    out->received_us = s->received_us;
    out->channel = p;
    out->channel_len = s->len[0];
    p += s->len[0];
    out->out_trade_no = p;
    out->out_trade_no_len = s->len[1];
    p += s->len[1];
    out->callback_type = p;
    out->callback_type_len = s->len[2];
    p += s->len[2];
    out->payload = p;
    out->payload_len = s->len[3];
    p += s->len[3];
    out->raw = p;
    out->raw_len = s->len[4];
}

static bool text_eq(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && memcmp(a, b, an) == 0;
}

bool row_same_key(const row *a, const row *b)
{
    return a->tenant_id == b->tenant_id &&
           text_eq(a->out_trade_no, a->out_trade_no_len, b->out_trade_no, b->out_trade_no_len) &&
           text_eq(a->channel, a->channel_len, b->channel, b->channel_len) &&
           text_eq(a->callback_type, a->callback_type_len, b->callback_type, b->callback_type_len);
}

/* Copies r's texts to the arena; fills s.  False when out of memory. */
static bool store(chunk *ch, slot_row *s, const row *r, uint64_t hash64)
{
    size_t total = r->channel_len + r->out_trade_no_len + r->callback_type_len +
                   r->payload_len + r->raw_len;
    if (r->channel_len > UINT32_MAX || r->out_trade_no_len > UINT32_MAX ||
        r->callback_type_len > UINT32_MAX || r->payload_len > UINT32_MAX ||
        r->raw_len > UINT32_MAX || !buf_reserve(&ch->arena, total))
        return false;
    s->off = ch->arena.len;
    buf_append(&ch->arena, r->channel, r->channel_len);
    buf_append(&ch->arena, r->out_trade_no, r->out_trade_no_len);
    buf_append(&ch->arena, r->callback_type, r->callback_type_len);
    buf_append(&ch->arena, r->payload, r->payload_len);
    buf_append(&ch->arena, r->raw, r->raw_len);
    s->line = r->line;
    s->tenant_id = r->tenant_id;
    s->received_us = r->received_us;
    s->status = r->status;
    s->hash64 = hash64;
    s->hash = (uint32_t)(hash64 ^ (hash64 >> 32));
    s->len[0] = (uint32_t)r->channel_len;
    s->len[1] = (uint32_t)r->out_trade_no_len;
    s->len[2] = (uint32_t)r->callback_type_len;
    s->len[3] = (uint32_t)r->payload_len;
    s->len[4] = (uint32_t)r->raw_len;
    return true;
}

bool chunk_add(chunk *ch, const row *r)
{
    assert(!ch->sorted);
    uint64_t h64 = row_key_hash64(r);
    uint32_t h = (uint32_t)(h64 ^ (h64 >> 32));
    size_t mask = ch->table_cap - 1;
    size_t j = h & mask;
    while (ch->table[j]) {
        size_t i = ch->table[j] - 1;
        if (ch->rows[i].hash == h) {
            row old;
            chunk_get(ch, i, &old);
            if (row_same_key(&old, r)) {
                ch->counts.rows_deduplicated++;
                if (ch->keep_first)
                    return true;    /* the first write wins */
                /* The status a row-by-row load would leave: a final one,
                 * once some row held it, stays (the first in file order;
                 * the kept row already carries it). */
                int16_t status = r->status;
                if (is_final(ch, old.status))
                    status = old.status;
                if (r->received_us < old.received_us) {
                    /* The row already held is newer: it stays, taking the
                     * new row's status only when that one is final. */
                    if (status != old.status && is_final(ch, status))
                        ch->rows[i].status = status;
                    return true;
                }
                /* The new row wins (later instant, or a tie read later).
                 * Its texts go to fresh arena space; the old ones stay as
                 * dead bytes until the chunk is reset. */
                slot_row s;
                if (!store(ch, &s, r, h64)) {
                    ch->counts.rows_deduplicated--;
                    return false;
                }
                s.status = status;
                ch->rows[i] = s;
                return true;
            }
        }
        j = (j + 1) & mask;
    }
    if (ch->n == ch->cap) {
        size_t cap = ch->cap * 2;
        slot_row *rows = realloc(ch->rows, cap * sizeof *rows);
        if (!rows)
            return false;
        ch->rows = rows;
        ch->cap = cap;
    }
    if (ch->n + 1 > ch->table_cap / 2) {
        if (!grow_table(ch, ch->n + 1))
            return false;
        mask = ch->table_cap - 1;
        j = h & mask;
        while (ch->table[j])
            j = (j + 1) & mask;
    }
    if (!store(ch, &ch->rows[ch->n], r, h64))
        return false;
    ch->table[j] = (uint32_t)(ch->n + 1);
    ch->n++;
    return true;
}

static int cmp_text(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c)
        return c;
    return an < bn ? -1 : an > bn;
}

static int cmp_rows(const void *pa, const void *pb, void *arena)
{
    const slot_row *a = pa, *b = pb;
    if (a->tenant_id != b->tenant_id)
        return a->tenant_id < b->tenant_id ? -1 : 1;
    const char *ta = (const char *)arena + a->off, *tb = (const char *)arena + b->off;
    for (int k = 0; k < 3; k++) {
        int c = cmp_text(ta, a->len[k], tb, b->len[k]);
        if (c)
            return c;
        ta += a->len[k];
        tb += b->len[k];
    }
    return 0;
}

void chunk_sort(chunk *ch)
{
    assert(!ch->sorted);
    ch->sorted = true;
    /* Row numbers move, so the key index no longer matches them: a sorted
     * chunk takes no more rows (chunk_reset() starts it over). */
    if (ch->n >= 2)
        qsort_r(ch->rows, ch->n, sizeof *ch->rows, cmp_rows, ch->arena.data);
}
