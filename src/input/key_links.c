/*
 * key_links.c - payment id -> key, an open-addressing hash over one arena
 * (see key_links.h).  Each entry is stored as its two lengths followed by
 * the id's and the key's bytes; a slot holds the entry's offset plus one.
 */
#include "input/key_links.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/hash.h"

struct key_links {
    buf arena;
    size_t *slot;       /* offset + 1; 0: empty */
    size_t cap;         /* a power of two, at least twice the entries */
    size_t n;
};

typedef struct entry_head {
    size_t idn, keyn;
} entry_head;

static const entry_head *head_at(const key_links *kl, size_t off)
{
    return (const entry_head *)(const void *)(kl->arena.data + off);
}

/* The slot holding id, or the empty slot where it would go. */
static size_t find_slot(const key_links *kl, const char *id, size_t idn)
{
    size_t mask = kl->cap - 1;
    for (size_t i = hash_fnv1a(HASH_FNV1A_INIT, id, idn) & mask;; i = (i + 1) & mask) {
        if (!kl->slot[i])
            return i;
        size_t off = kl->slot[i] - 1;
        const entry_head *h = head_at(kl, off);
        if (h->idn == idn && memcmp(kl->arena.data + off + sizeof *h, id, idn) == 0)
            return i;
    }
}

static bool grow(key_links *kl)
{
    size_t cap = kl->cap ? kl->cap * 2 : 1024;
    size_t *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return false;
    size_t *old = kl->slot;
    size_t old_cap = kl->cap;
    kl->slot = slot;
    kl->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i])
            continue;
        size_t off = old[i] - 1;
        const entry_head *h = head_at(kl, off);
        slot[find_slot(kl, kl->arena.data + off + sizeof *h, h->idn)] = old[i];
    }
    free(old);
    return true;
}

key_links *key_links_new(void)
{
    key_links *kl = calloc(1, sizeof *kl);
    if (kl && !grow(kl)) {
        free(kl);
        return NULL;
    }
    return kl;
}

void key_links_free(key_links **kl)
{
    if (!*kl)
        return;
    buf_free(&(*kl)->arena);
    free((*kl)->slot);
    free(*kl);
    *kl = NULL;
}

bool key_links_put(key_links *kl, const char *id, size_t idn, const char *key, size_t keyn)
{
    if ((kl->n + 1) * 2 > kl->cap && !grow(kl))
        return false;
    size_t i = find_slot(kl, id, idn);
    if (kl->slot[i])
        return true;
    /* Entries start aligned for their head. */
    while (kl->arena.len % _Alignof(entry_head))
        if (!buf_append_char(&kl->arena, '\0'))
            return false;
    size_t off = kl->arena.len;
    entry_head h = {idn, keyn};
    if (!buf_append(&kl->arena, (const char *)&h, sizeof h) || !buf_append(&kl->arena, id, idn) ||
        !buf_append(&kl->arena, key, keyn))
        return false;
    kl->slot[i] = off + 1;
    kl->n++;
    return true;
}

const char *key_links_get(const key_links *kl, const char *id, size_t idn, size_t *keyn)
{
    size_t i = find_slot(kl, id, idn);
    if (!kl->slot[i])
        return NULL;
    size_t off = kl->slot[i] - 1;
    const entry_head *h = head_at(kl, off);
    *keyn = h->keyn;
    return kl->arena.data + off + sizeof *h + h->idn;
}
