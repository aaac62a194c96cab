/*
 * tools_facts.h - what each table tool finds, as a struct, and how it is
 * rendered (STYLE.md 14: gather, then render).  The tools fill these from
 * the database and render them; tests/unit/test_tools_render.c fills them
 * by hand and reads the renderings, with no database.
 *
 * Ownership: borrowed pointers (marked) must outlive the facts, which is
 * true of the target the tool resolved; everything else is owned and freed
 * by the _free function, which leaves the struct empty.  Renderers to JSON
 * return a new reference (NULL when out of memory).
 */
#ifndef IDEMLOAD_TOOLS_FACTS_H
#define IDEMLOAD_TOOLS_FACTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "tools/tools_shared.h"

/* ---- check ------------------------------------------------------------- */

/* A unique index that touches the key, and whether it counts. */
typedef struct check_index {
    const char *name;           /* borrowed */
    const char *columns;        /* borrowed; NULL: none */
    const char *predicate;      /* borrowed; NULL: none */
    bool valid;
    bool ready;
    bool nulls_not_distinct;
    bool is_key_index;          /* the one loads use */
    bool counts;
    char *note;                 /* why it counts or not, in plain words */
} check_index;

typedef struct check_facts {
    const char *table;          /* borrowed: schema.name */
    bool has_deleted_at;
    const char *key_index;      /* borrowed: the usable index's name; NULL: none */
    const char *key_predicate;  /* borrowed; NULL: no predicate */
    bool key_nulls_not_distinct;
    check_index *indexes;       /* the unique indexes on key columns or expressions */
    size_t n_indexes;
    strlist nullable;           /* key columns that allow NULL */
    long long null_rows;        /* active rows with a NULL in the key; -1: not counted */
    bool dups_counted;          /* false: the unique index guarantees there are none */
    dup_list dups;
} check_facts;

/* Is the table safe for idempotent loads?  A usable index and no
 * duplicates. */
bool check_safe(const check_facts *f);
/* The text report, as 'idemload check' prints it. */
void check_render_text(const check_facts *f, FILE *fp);
/* The JSON report of --report. */
json_t *check_render_json(const check_facts *f);
void check_facts_free(check_facts *f);

/* ---- dedupe ------------------------------------------------------------ */

/* A duplicate key --apply would refuse: a row other than the earliest
 * holds a final status. */
typedef struct blocked_key {
    tool_key key;
    char *final_ids;            /* "8, 12" */
} blocked_key;

/* What 'idemload dedupe' (without --apply) lists. */
typedef struct dedupe_listing {
    const char *table;          /* borrowed */
    const char *finals;         /* borrowed: the final statuses, "2, 3" */
    size_t limit;               /* lines of each list shown; 0: all */
    dup_list dups;
    blocked_key *blocked;       /* every one, shown up to limit */
    size_t n_blocked;
} dedupe_listing;

void dedupe_listing_render_text(const dedupe_listing *l, FILE *fp);
json_t *dedupe_listing_render_json(const dedupe_listing *l);
void dedupe_listing_free(dedupe_listing *l);

/* One row of a key --apply left whole. */
typedef struct refused_row {
    long long id;
    int status;
    bool final;
} refused_row;

/* What one batch of --apply did to one key. */
typedef struct key_outcome {
    tool_key key;
    char *kept_id;              /* the earliest row, kept; NULL: not seen */
    strlist deleted;            /* ids soft-deleted now */
    refused_row *refused;       /* rows left alone as the key was refused */
    size_t n_refused;
} key_outcome;

/* One batch of --apply: its keys in key order; more: another batch may
 * follow, starting after cursor. */
typedef struct batch_outcome {
    key_outcome *keys;
    size_t n;
    bool more;
    tool_key cursor;
} batch_outcome;

/* The whole --apply run. */
typedef struct dedupe_outcome {
    const char *table;          /* borrowed */
    const char *finals;         /* borrowed: the final statuses, "2, 3" */
    bool include_final;
    bool complete;              /* every batch ran (no failure, no interrupt) */
    long long batches;
    long long keys_fixed;
    long long rows;
    key_outcome *refused;       /* every refused key, in order */
    size_t n_refused;
} dedupe_outcome;

/* The lines of one batch: what was soft-deleted, and refused, per key. */
void batch_render_text(const batch_outcome *b, FILE *fp);
void batch_outcome_free(batch_outcome *b);
/* The closing lines of a complete run (nothing when it is not complete). */
void dedupe_outcome_render_text(const dedupe_outcome *o, FILE *fp);
json_t *dedupe_outcome_render_json(const dedupe_outcome *o);
void dedupe_outcome_free(dedupe_outcome *o);
void key_outcome_free(key_outcome *k);

#endif
