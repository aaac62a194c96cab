/*
 * target.h - the target table as the catalog describes it: its quoted name,
 * its columns, and the unique index on the business key that makes a
 * set-based merge safe.  Used by the loader and the table tools.
 * Ownership: target_free() releases the strings target_resolve() set.
 */
#ifndef IDEMLOAD_TARGET_H
#define IDEMLOAD_TARGET_H

#include <stdbool.h>

#include "util/buf.h"
#include "core/config.h"
#include "db/db.h"

typedef struct unique_index {
    char *name;
    bool valid;             /* indisvalid && indisready && indislive */
    bool ready;
    char *predicate;        /* NULL: none */
    char *columns;          /* key columns, comma-separated, in index order */
    bool has_expressions;
    bool nulls_not_distinct;
    bool deferrable;        /* not indimmediate: a DEFERRABLE constraint, which
                             * ON CONFLICT refuses as its arbiter */
    bool covers_key;        /* exactly the business key columns, no expressions */
} unique_index;

typedef struct target_column {
    char *name;
    char *type;             /* format_type(): a valid type name for a cast */
    char *base_type;        /* the same, of a domain's base type */
    bool not_null;
    bool has_default;       /* a default or an identity */
    bool generated;
} target_column;

typedef struct target {
    char *schema;           /* as in the catalog */
    char *name;
    char *oid;
    char *quoted;           /* "schema"."name", ready for SQL */
    char *display;          /* schema.name for messages */
    char *sql_name;         /* schema.name for a hint a user pastes into SQL: each part
                             * quoted where it must be ("Sch.ema"."Ta""b le") */
    bool has_deleted_at;
    bool has_id;
    bool distributed;       /* a Citus distributed or reference table */
    bool partitioned;       /* relkind 'p': no system columns to return */
    bool has_rules;         /* relhasrules: COPY would not apply them */
    bool row_security;      /* relrowsecurity: COPY FROM is refused */
    target_column *columns;
    int n_columns;
    unique_index *indexes;
    int n_indexes;
    const unique_index *key_index;  /* the usable one, or NULL */
    const unique_index *blocked_by; /* a DEFERRABLE unique constraint on the key: INSERT
                                     * ... ON CONFLICT refuses the table while it exists
                                     * (it is always among the arbiters), so then no
                                     * index is usable; NULL: none */
    char *conflict;         /* "(tenant_id, ...) WHERE (deleted_at IS NULL)" */
    char *active;           /* the predicate, "true" when none */
} target;

/*
 * Looks the table up (cfg->table: [schema.]name as given to --table) and
 * reads its unique indexes.  Returns false when there is no table of that
 * name (none at all, or a view, materialized view, foreign table ...:
 * message in *err, *missing set; a missing table's message advises init
 * with the user's -d and --table, advice.h) or on a database error
 * (*missing false).
 */
bool target_resolve(db *d, const config *cfg, target *t, bool *missing, buf *err);

/*
 * Has the table the columns idemload writes in every row (tenant_id,
 * channel, out_trade_no, callback_type, status, payload, received_at), none
 * generated, and a payload of type jsonb (or a domain over it)?  False with
 * what is wrong, and how to fix it, in *err.
 */
bool target_check_shape(const target *t, buf *err);

/*
 * Checks the columns an import writes against the table, before any row is
 * read: the table's shape (target_check_shape); every --set beyond
 * idemload's own columns (sets[0..n)) names a column that exists, is not
 * generated, not the soft-delete marker and not a key column of a unique
 * index (a constant there would collide for every row but one), and holds a
 * value of its type; and every NOT NULL column
 * without a default is written by idemload or by a --set.  Returns true when
 * the import can go on; otherwise the message is in *err and *db_failed
 * says whether it was the database (exit 4) rather than the configuration
 * (exit 2).  Appends to *cols ", col, ..." and to *vals ", $k::type, ..."
 * with k counting from first_param, for the merge's INSERT.
 */
bool target_check_columns(db *d, const target *t, const column_set *sets, size_t n,
                          int first_param, buf *cols, buf *vals, bool *db_failed, buf *err);

/*
 * Decides, from t->indexes (name, valid, predicate, columns, expressions
 * filled) and t->has_deleted_at, which index makes loads safe: valid, on
 * exactly the four key columns in any order and without expressions, with
 * the predicate "deleted_at IS NULL" when the table soft-deletes and none
 * otherwise, not deferrable; the first such one in name order.  Sets each
 * index's covers_key and t->key_index (NULL: none).  None at all when a
 * DEFERRABLE unique constraint covers the key (t->blocked_by): ON CONFLICT
 * takes every unique index on its columns as an arbiter and refuses a
 * deferrable one (55000), whatever other index exists.  No database
 * needed.
 */
void target_pick_index(target *t);

/* The CREATE UNIQUE INDEX statement that would make the table usable, and
 * the check and create-index commands that would, on the user's -d and
 * --table (and --index-name, for create-index: advice.h). */
void target_fix_hint(const target *t, const config *cfg, buf *out);

/* Default index name: uk_<table>_biz_active, cut as PostgreSQL would. */
void target_default_index_name(const target *t, buf *out);

/* ident as SQL reads it: as it is when it is a plain lower-case name
 * ([a-z_][a-z0-9_]*), else in double quotes with " doubled. */
bool target_append_sql_ident(buf *out, const char *ident);
/* The same for a bare table name (before the table exists); replaces
 * the content of *out. */
void index_default_name(const char *table_name, buf *out);

/* Cuts a name to PostgreSQL's 63 bytes at a character boundary, as the
 * server does, so the name we look for is the name that exists. */
void identifier_clip(buf *name);

/*
 * Parses --table's [schema.]name as SQL reads it: each part is either a
 * double-quoted identifier ("" inside stands for one quote) or a bare name
 * taken as typed (no '.' or '"' in it).  Stores the unquoted parts in
 * malloc'ed *schema (NULL when none) and *name, the caller's to free; false
 * with the reason in *err for anything else (an unclosed quote, text after
 * a quoted part, an empty part, more than two parts).  Every command reads
 * --table through here, so no part of it is ever pasted into SQL.
 */
bool target_parse_arg(const char *arg, char **schema, char **name, buf *err);

/*
 * Appends --table's [schema.]name quoted for SQL: parsed by
 * target_parse_arg, each part through PQescapeIdentifier.  False with the
 * reason in *err.
 */
bool target_quote_arg(db *d, const char *arg, buf *out, buf *err);

/*
 * Has the current role what an import needs on the table: SELECT and
 * INSERT on the columns idemload writes (and SELECT on deleted_at), INSERT
 * on the --set columns (sets[0..n)), UPDATE on payload, received_at and
 * status when updating, and TEMP on the database for the staging table
 * (not for a Citus target, staged in the target's schema)?  Column or table
 * privileges both count.  False with what is missing and the GRANTs that
 * give it in *err, *db_failed set: a missing privilege is the load's
 * failure (exit 4) as the server's refusal of it would be.
 */
bool target_check_privileges(db *d, const target *t, const column_set *sets, size_t n,
                             bool update, bool *db_failed, buf *err);
/* The same for reading only (a dry run into a copy of the rows, loader.c):
 * SELECT on every column of the table, and TEMP. */
bool target_check_read_privileges(db *d, const target *t, bool *db_failed, buf *err);

void target_free(target *t);

#endif
