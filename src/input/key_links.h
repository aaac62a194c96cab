/*
 * key_links.h - the keys the payments of one command's files were given,
 * by the payment's own id, so that a refund row lacking its order's
 * number takes its payment's key (SPEC.md, stripe-balance: "a refund takes
 * the key of the charge it refunds (its charge_id's row in the files
 * read)").  Without it a Stripe charge is keyed by its order metadata
 * (24315.1) and its refund, whose row lacks that metadata, by the charge id
 * (ch_123): one order's payment and refund under two keys.
 *
 * One per command, shared by the readers of its files in turn (one file
 * is read at a time; a reader's thread starts after the previous one was
 * joined).  Memory: the ids and keys of the payments read, in one arena.
 * Ownership: key_links_new() allocates what key_links_free() releases.
 */
#ifndef IDEMLOAD_KEY_LINKS_H
#define IDEMLOAD_KEY_LINKS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct key_links key_links;

/* An empty set of links; NULL when out of memory. */
key_links *key_links_new(void);
void key_links_free(key_links **kl);

/* Records that the payment id[0..idn) was given key[0..keyn); the first
 * key given an id stays.  False when out of memory. */
bool key_links_put(key_links *kl, const char *id, size_t idn, const char *key, size_t keyn);

/* The key the payment id[0..idn) was given (its length in *keyn), or NULL
 * when no payment of that id was read. */
const char *key_links_get(const key_links *kl, const char *id, size_t idn, size_t *keyn);

#endif
