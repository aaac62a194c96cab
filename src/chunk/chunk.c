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

/*
 * A stored row, generated from the column table (core/columns.h): its
 * scalar columns as they are (the 64-bit ones first, so the slot packs
 * tight), its texts (TEXT and JSON columns, then the raw record) one after
 * the other in the arena, known by their lengths: TEXT_member indexes len[].
 */
#define SLOT_WIDE_INT64(m) int64_t m;
#define SLOT_WIDE_TIME(m) int64_t m;
#define SLOT_WIDE_INT16(m)
#define SLOT_WIDE_TEXT(m)
#define SLOT_WIDE_JSON(m)
#define SLOT_WIDE_1(ID, name, member, kind, key, pos, dflt, A, B) SLOT_WIDE_##kind(member)
#define SLOT_NARROW_INT16(m) int16_t m;
#define SLOT_NARROW_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_IF_##kind##_NARROW(SLOT_NARROW_##kind(member))
#define COLUMN_IF_INT16_NARROW(...) __VA_ARGS__
#define COLUMN_IF_INT64_NARROW(...)
#define COLUMN_IF_TIME_NARROW(...)
#define COLUMN_IF_TEXT_NARROW(...)
#define COLUMN_IF_JSON_NARROW(...)
/* Scalars copied as they are; texts neither here nor there. */
#define SLOT_COPY_INT64(to, from, m) (to)->m = (from)->m;
#define SLOT_COPY_INT16(to, from, m) (to)->m = (from)->m;
#define SLOT_COPY_TIME(to, from, m) (to)->m = (from)->m;
#define SLOT_COPY_TEXT(to, from, m)
#define SLOT_COPY_JSON(to, from, m)
#define SLOT_COPY_1(ID, name, member, kind, key, pos, dflt, TO, FROM) \
    SLOT_COPY_##kind(TO, FROM, member)
/* The texts, in arena order. */
#define TEXT_INDEX_TEXT(m) TEXT_##m,
#define TEXT_INDEX_JSON(m) TEXT_##m,
#define TEXT_INDEX_INT64(m)
#define TEXT_INDEX_INT16(m)
#define TEXT_INDEX_TIME(m)
#define TEXT_INDEX_1(ID, name, member, kind, key, pos, dflt, A, B) TEXT_INDEX_##kind(member)
enum { IDEMLOAD_COLUMNS(TEXT_INDEX_1, ~, ~) TEXT_RAW, N_TEXTS };
#define TEXT_PTR_TEXT(r, m) (r)->m,
#define TEXT_PTR_JSON(r, m) (r)->m,
#define TEXT_PTR_INT64(r, m)
#define TEXT_PTR_INT16(r, m)
#define TEXT_PTR_TIME(r, m)
#define TEXT_PTR_1(ID, name, member, kind, key, pos, dflt, R, B) TEXT_PTR_##kind(R, member)
#define TEXT_LEN_TEXT(r, m) (r)->m##_len,
#define TEXT_LEN_JSON(r, m) (r)->m##_len,
#define TEXT_LEN_INT64(r, m)
#define TEXT_LEN_INT16(r, m)
#define TEXT_LEN_TIME(r, m)
#define TEXT_LEN_1(ID, name, member, kind, key, pos, dflt, R, B) TEXT_LEN_##kind(R, member)
/* chunk_get(): each text of the slot back into the row. */
#define TEXT_GET_TEXT(m) out->m = p; out->m##_len = s->len[TEXT_##m]; p += s->len[TEXT_##m];
#define TEXT_GET_JSON(m) TEXT_GET_TEXT(m)
#define TEXT_GET_INT64(m)
#define TEXT_GET_INT16(m)
#define TEXT_GET_TIME(m)
#define TEXT_GET_1(ID, name, member, kind, key, pos, dflt, A, B) TEXT_GET_##kind(member)

typedef struct slot_row {
    uint64_t line;
    IDEMLOAD_COLUMNS(SLOT_WIDE_1, ~, ~)
    IDEMLOAD_COLUMNS(SLOT_NARROW_1, ~, ~)
    uint32_t hash;          /* row_key_hash(), the low half of hash64 folded */
    uint64_t hash64;        /* row_key_hash64() */
    size_t off;             /* start of this row's texts in the arena */
    uint32_t len[N_TEXTS];  /* by TEXT_member, then TEXT_RAW */
} slot_row;

struct chunk {
    slot_row *rows;
    size_t n, cap;
    buf arena;
    uint32_t *table;        /* row index + 1, 0 = empty */
    size_t table_cap;       /* power of two, > 2 * rows */
    chunk_counts counts;
    bool keep_every_row;
    bool keep_first;
    int16_t final_status[CHUNK_MAX_FINAL];
    size_t n_final;
    bool sorted;            /* chunk_sort() ran: no chunk_add() until reset */
};

/* FNV-1a steps over one key part: an integer byte by byte (low byte
 * first), so the value is the same on every platform; a text's bytes
 * followed by a separator byte that mixes its length in, so two different
 * keys cannot collide structurally. */
static uint64_t hash_int64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t hash_text(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    h ^= n + 0x9e;
    h *= 1099511628211ULL;
    return h;
}

/* A key column of each kind (only these kinds can be key columns). */
#define HASH_KEY_INT64(m) h = hash_int64(h, (uint64_t)r->m);
#define HASH_KEY_TEXT(m) h = hash_text(h, r->m, r->m##_len);
#define HASH_KEY_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_IF_##key(HASH_KEY_##kind(member))

uint64_t row_key_hash64(const row *r)
{
    /* Over the key columns in their order: the ledger relies on the value
     * across runs and versions. */
    uint64_t h = 1469598103934665603ULL;
    IDEMLOAD_COLUMNS(HASH_KEY_1, ~, ~)
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
    ch->keep_every_row = p->keep_every_row;
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
    IDEMLOAD_COLUMNS(SLOT_COPY_1, out, s)
    IDEMLOAD_COLUMNS(TEXT_GET_1, ~, ~)
    out->raw = p;
    out->raw_len = s->len[TEXT_RAW];
}

static bool text_eq(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && memcmp(a, b, an) == 0;
}

#define SAME_KEY_INT64(m) &&a->m == b->m
#define SAME_KEY_TEXT(m) &&text_eq(a->m, a->m##_len, b->m, b->m##_len)
#define SAME_KEY_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_IF_##key(SAME_KEY_##kind(member))

bool row_same_key(const row *a, const row *b)
{
    return true IDEMLOAD_COLUMNS(SAME_KEY_1, ~, ~);
}

/* Copies r's texts to the arena; fills s.  False when out of memory. */
static bool store(chunk *ch, slot_row *s, const row *r, uint64_t hash64)
{
    const char *text[N_TEXTS] = {IDEMLOAD_COLUMNS(TEXT_PTR_1, r, ~) r->raw};
    const size_t len[N_TEXTS] = {IDEMLOAD_COLUMNS(TEXT_LEN_1, r, ~) r->raw_len};
    size_t total = 0;
    for (int k = 0; k < N_TEXTS; k++) {
        if (len[k] > UINT32_MAX)
            return false;
        total += len[k];
    }
    if (!buf_reserve(&ch->arena, total))
        return false;
    s->off = ch->arena.len;
    for (int k = 0; k < N_TEXTS; k++) {
        buf_append(&ch->arena, text[k], len[k]);
        s->len[k] = (uint32_t)len[k];
    }
    s->line = r->line;
    IDEMLOAD_COLUMNS(SLOT_COPY_1, s, r)
    s->hash64 = hash64;
    s->hash = (uint32_t)(hash64 ^ (hash64 >> 32));
    return true;
}

/* Room for one more row in ch->rows; false when out of memory. */
static bool room_for_row(chunk *ch)
{
    if (ch->n < ch->cap)
        return true;
    size_t cap = ch->cap * 2;
    slot_row *rows = realloc(ch->rows, cap * sizeof *rows);
    if (!rows)
        return false;
    ch->rows = rows;
    ch->cap = cap;
    return true;
}

bool chunk_add(chunk *ch, const row *r)
{
    assert(!ch->sorted);
    uint64_t h64 = row_key_hash64(r);
    if (ch->keep_every_row) {
        /* In file order, the key index left empty: nothing is looked up. */
        if (!room_for_row(ch) || !store(ch, &ch->rows[ch->n], r, h64))
            return false;
        ch->n++;
        return true;
    }
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
    if (!room_for_row(ch))
        return false;
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

/* A key column of each kind; the key's texts are the first in the arena
 * (core/columns.h), so ta and tb walk them in order. */
#define CMP_KEY_INT64(m) \
    if (a->m != b->m) \
        return a->m < b->m ? -1 : 1;
#define CMP_KEY_TEXT(m) \
    if ((c = cmp_text(ta, a->len[TEXT_##m], tb, b->len[TEXT_##m])) != 0) \
        return c; \
    ta += a->len[TEXT_##m]; \
    tb += b->len[TEXT_##m];
#define CMP_KEY_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_IF_##key(CMP_KEY_##kind(member))

static int cmp_rows(const void *pa, const void *pb, void *arena)
{
    const slot_row *a = pa, *b = pb;
    const char *ta = (const char *)arena + a->off, *tb = (const char *)arena + b->off;
    int c;
    IDEMLOAD_COLUMNS(CMP_KEY_1, ~, ~)
    (void)ta;
    (void)tb;
    (void)c;
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
