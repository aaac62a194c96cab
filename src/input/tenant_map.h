/*
 * tenant_map.h - `--tenant-map FILE`: which tenant each merchant of a
 * channel bill belongs to (SPEC.md, "Channel exports: profiles").  The file
 * is a CSV in UTF-8 (a byte-order mark allowed) with the header
 * `merchant,tenant_id`, one merchant a line.
 *
 * Ownership: tenant_map_load() returns a map freed with tenant_map_free(),
 * which sets the caller's pointer to NULL.  A loaded map never changes, so
 * reading threads share it.
 */
#ifndef IDEMLOAD_TENANT_MAP_H
#define IDEMLOAD_TENANT_MAP_H

#include <stddef.h>

#include "util/buf.h"

typedef struct tenant_map tenant_map;

/* Reads FILE; NULL with a message naming the file and line in *err. */
tenant_map *tenant_map_load(const char *path, buf *err);

/* Parses the file's text (what tenant_map_load reads); origin names it in
 * messages. */
tenant_map *tenant_map_parse(const char *text, size_t len, const char *origin, buf *err);

/* The tenant_id text of merchant m[0..n), or NULL when the map lacks it. */
const char *tenant_map_get(const tenant_map *t, const char *m, size_t n);

void tenant_map_free(tenant_map **t);

#endif
