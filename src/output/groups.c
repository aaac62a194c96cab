/*
 * groups.c - figures per group in an open-addressing hash table (see
 * groups.h).
 */
#include "output/groups.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

typedef struct entry {
    int64_t tenant_id;
    char *channel;      /* NUL-terminated copies: key texts hold no NUL */
    size_t channel_len;
    char *kind;
    size_t kind_len;
    load_counts counts;
} entry;

struct group_table {
    entry *e;           /* cap slots; channel NULL: empty */
    size_t cap, used;
};

group_table *group_table_new(void)
{
    return calloc(1, sizeof(group_table));
}

static void free_entries(group_table *g)
{
    for (size_t i = 0; i < g->cap; i++) {
        free(g->e[i].channel);
        free(g->e[i].kind);
    }
    free(g->e);
    g->e = NULL;
    g->cap = g->used = 0;
}

void group_table_free(group_table **gp)
{
    if (!*gp)
        return;
    free_entries(*gp);
    free(*gp);
    *gp = NULL;
}

size_t group_kind_len(const char *callback_type, size_t len)
{
    const char *colon = memchr(callback_type, ':', len);
    return colon ? (size_t)(colon - callback_type) : len;
}

static size_t slot_of(const group_table *g, int64_t tenant, const char *ch, size_t ch_len,
                      const char *kind, size_t kind_len)
{
    uint64_t h = hash_fnv1a(HASH_FNV1A_INIT, &tenant, sizeof tenant);
    h = hash_fnv1a(h, ch, ch_len);
    h = hash_fnv1a(h, "\0", 1);
    h = hash_fnv1a(h, kind, kind_len);
    size_t k = (size_t)h & (g->cap - 1);
    while (g->e[k].channel) {
        const entry *e = &g->e[k];
        if (e->tenant_id == tenant && e->channel_len == ch_len && e->kind_len == kind_len &&
            memcmp(e->channel, ch, ch_len) == 0 && memcmp(e->kind, kind, kind_len) == 0)
            break;
        k = (k + 1) & (g->cap - 1);
    }
    return k;
}

static bool grow(group_table *g)
{
    group_table bigger = {calloc(g->cap ? g->cap * 2 : 64, sizeof(entry)),
                          g->cap ? g->cap * 2 : 64, g->used};
    if (!bigger.e)
        return false;
    for (size_t i = 0; i < g->cap; i++) {
        entry *e = &g->e[i];
        if (!e->channel)
            continue;
        bigger.e[slot_of(&bigger, e->tenant_id, e->channel, e->channel_len, e->kind,
                         e->kind_len)] = *e;
    }
    free(g->e);
    *g = bigger;
    return true;
}

static char *copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

bool group_table_add(group_table *g, int64_t tenant_id, const char *channel, size_t channel_len,
                     const char *callback_type, size_t callback_type_len, merge_action a)
{
    if (a == MERGE_REFUSED || a == MERGE_NONE)
        return true;
    if ((g->used + 1) * 4 > g->cap * 3 && !grow(g))
        return false;
    size_t kind_len = group_kind_len(callback_type, callback_type_len);
    size_t k = slot_of(g, tenant_id, channel, channel_len, callback_type, kind_len);
    entry *e = &g->e[k];
    if (!e->channel) {
        char *c = copy(channel, channel_len), *kd = copy(callback_type, kind_len);
        if (!c || !kd) {
            free(c);
            free(kd);
            return false;
        }
        *e = (entry){.tenant_id = tenant_id, .channel = c, .channel_len = channel_len,
                     .kind = kd, .kind_len = kind_len};
        g->used++;
    }
    load_counts_count(&e->counts, a);
    return true;
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

static int cmp_group(const void *pa, const void *pb)
{
    const group_report *a = pa, *b = pb;
    if (a->tenant_id != b->tenant_id)
        return a->tenant_id < b->tenant_id ? -1 : 1;
    int c = cmp_bytes(a->channel, strlen(a->channel), b->channel, strlen(b->channel));
    return c ? c : cmp_bytes(a->kind, strlen(a->kind), b->kind, strlen(b->kind));
}

bool group_table_move(group_table *g, run_report *rep)
{
    group_report *out = calloc(g->used ? g->used : 1, sizeof *out);
    if (!out)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < g->cap; i++) {
        entry *e = &g->e[i];
        if (!e->channel)
            continue;
        out[n++] = (group_report){e->tenant_id, e->channel, e->kind, e->counts};
        e->channel = e->kind = NULL;
    }
    qsort(out, n, sizeof *out, cmp_group);
    free_entries(g);
    for (size_t i = 0; i < rep->n_groups; i++) {
        free(rep->groups[i].channel);
        free(rep->groups[i].kind);
    }
    free(rep->groups);
    rep->groups = out;
    rep->n_groups = n;
    return true;
}
