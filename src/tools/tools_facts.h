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
    bool deferrable;
    bool is_key_index;          /* the one loads use */
    bool counts;
    char *note;                 /* why it counts or not, in plain words */
} check_index;

typedef struct check_facts {
    const char *table;          /* borrowed: schema.name */
    const char *table_sql;      /* borrowed: the same as SQL reads it (target.sql_name);
                                 * NULL: table */
    const char *args;           /* borrowed: the user's target on the commands advised
                                 * (tool_ctx.args); NULL: none */
    bool has_deleted_at;
    const char *key_index;      /* borrowed: the usable index's name; NULL: none */
    const char *blocked_by;     /* borrowed: a DEFERRABLE unique constraint on the key
                                 * that leaves no index usable; NULL: none */
    const char *key_predicate;  /* borrowed; NULL: no predicate */
    bool key_nulls_not_distinct;
    char *shape_problem;        /* owned: a column idemload writes missing or of a type
                                 * the merge cannot use (target_check_shape); NULL: none */
    check_index *indexes;       /* the unique indexes on key columns or expressions */
    size_t n_indexes;
    strlist nullable;           /* key columns that allow NULL */
    long long null_rows;        /* active rows with a NULL in the key; -1: not counted */
    bool dups_counted;          /* false: the unique index guarantees there are none */
    dup_list dups;
} check_facts;

/* Is the table safe for idempotent loads?  A usable index, no
 * duplicates, and the columns idemload writes. */
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
    const char *args;           /* borrowed: as in check_facts */
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
    const char *args;           /* borrowed: as in check_facts */
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

/* ---- create-index ------------------------------------------------------ */

typedef enum index_verdict {
    IX_FAILED,          /* a step failed and was logged there; code says how */
    IX_NO_DELETED_AT,   /* not the shape create-index builds for */
    IX_ALREADY,         /* a usable index exists: nothing to do */
    IX_NOT_AN_INDEX,    /* the name is taken by another kind of relation */
    IX_OTHER_TABLE,     /* ... by an index of another table */
    IX_VALID_OTHER,     /* ... by a valid index that is not the right one */
    IX_BEING_BUILT,     /* another session is building it now */
    IX_DUPLICATES,      /* duplicate keys remain: the build would fail */
    IX_TO_BUILD,        /* none of the above: build it */
    IX_BUILT,
    IX_BUILT_INVALID,   /* the build returned, yet the index is not valid */
    IX_BUILD_FAILED
} index_verdict;

/* What became of the INVALID index a failed build leaves. */
typedef enum index_cleanup {
    CLEANUP_NONE,           /* nothing of ours left to drop */
    CLEANUP_DROPPED,
    CLEANUP_DROP_FAILED,    /* failure holds why */
    CLEANUP_LOOKUP_FAILED,  /* failure holds why */
    CLEANUP_NO_CONNECTION   /* the build's connection was lost; no new one (reconnect_error) */
} index_cleanup;

typedef struct index_outcome {
    index_verdict verdict;
    int code;                   /* IX_FAILED: the exit status of the failure */
    const char *table;          /* borrowed: schema.name */
    const char *args;           /* borrowed: as in check_facts */
    const char *index_args;     /* borrowed: the same with the user's --index-name, for
                                 * create-index itself; NULL: none */
    const char *index;          /* borrowed: schema.name of the index */
    const char *schema;         /* borrowed: the table's (and index's) schema */
    const char *schema_sql;     /* borrowed: the schema quoted for SQL */
    const char *index_sql;      /* borrowed: the index name quoted for SQL */
    const char *existing;       /* IX_ALREADY, borrowed: the usable index */
    const char *existing_predicate;     /* borrowed; NULL: none */
    strlist other_invalid;      /* other INVALID indexes on the key: they stay */
    bool leftover;              /* an INVALID index of our name, from an earlier attempt */
    int building_pid;           /* IX_BEING_BUILT */
    long long dup_keys;         /* IX_DUPLICATES */
    long long surplus;
    double seconds;             /* IX_BUILT: how long the build took */
    /* IX_BUILD_FAILED */
    tool_failure failure;       /* the build's error */
    bool connection_lost;
    int failure_exit;           /* db_failure_exit() of the build's error */
    int locker;                 /* the session the build last waited for; 0: none */
    index_cleanup cleanup;
    tool_failure cleanup_failure;
    char *reconnect_error;      /* CLEANUP_NO_CONNECTION */
    long long dups_now;         /* after a duplicate arrived; -1: not counted */
    tool_failure count_failure; /* why dups_now could not be counted (message set) */
} index_outcome;

/* A fresh outcome: verdict IX_FAILED, nothing counted. */
void index_outcome_init(index_outcome *o);
void index_outcome_free(index_outcome *o);
/* The warnings of the survey (other INVALID indexes), logged first. */
void index_render_warnings(const index_outcome *o);
/* The verdict and what followed it, as log lines on stderr (create-index
 * has no report file); IX_FAILED and IX_TO_BUILD log nothing. */
void index_render(const index_outcome *o);
/* The exit status the outcome earns (tools_index.c's header). */
int index_exit_status(const index_outcome *o);

#endif
