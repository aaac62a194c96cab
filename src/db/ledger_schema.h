/*
 * ledger_schema.h - the ledger's shape, stated once for every command that
 * reads it: its two tables' names in the target's schema, the migrations
 * that brought a ledger an earlier idemload wrote to this one's (a list,
 * oldest first, applied in that order), and which of them a ledger in the
 * database has (its version).  load/ledger.c creates and migrates the
 * ledger; the tools (status) read it through the same names and version.
 * The statements themselves are in sql.c.
 *
 * Errors: functions returning bool leave the server's error on the
 * connection (the caller logs it); false without one is out of memory.
 * Ownership: the caller owns a ledger_names; ledger_names_free() releases it.
 */
#ifndef IDEMLOAD_LEDGER_SCHEMA_H
#define IDEMLOAD_LEDGER_SCHEMA_H

#include <stdbool.h>

#include "db/db.h"
#include "util/buf.h"

/* The tables, in the target's schema. */
#define LEDGER_FILE_TABLE "idemload_ledger"
#define LEDGER_CHUNK_TABLE "idemload_ledger_chunk"

#include "db/ledger_migrations.h"

typedef enum ledger_migration {
#define LEDGER_MIGRATION_ENUM(id, on_chunk, column, sql) LEDGER_##id,
    LEDGER_MIGRATIONS(LEDGER_MIGRATION_ENUM)
#undef LEDGER_MIGRATION_ENUM
    LEDGER_N_MIGRATIONS
} ledger_migration;

/* The ledger of one schema: its tables' quoted, schema-qualified names. */
typedef struct ledger_names {
    buf file;       /* schema.idemload_ledger */
    buf chunk;      /* schema.idemload_ledger_chunk */
} ledger_names;

/* The version of the ledger in the database: whether it exists, and which
 * migrations it has had (a new ledger has them all). */
typedef struct ledger_version {
    bool exists;
    bool has[LEDGER_N_MIGRATIONS];
    bool readable;      /* this role may SELECT from both tables */
} ledger_version;

/* Names the ledger of schema (as in the catalog), quoting it on d.  False
 * when memory ran out. */
bool ledger_names_of(ledger_names *n, db *d, const char *schema);
void ledger_names_free(ledger_names *n);

/* Reads on d whether the ledger named n exists and which migrations it has
 * had (sql_ledger_exists(), from the list above).  False on a database error
 * (left on d) or when memory ran out. */
bool ledger_version_read(const ledger_names *n, db *d, ledger_version *v);

/* Does v need no migration (it exists and has had every one)? */
bool ledger_version_current(const ledger_version *v);

/* The statement of migration m (sql.h). */
const char *ledger_migration_sql(ledger_migration m);

#endif
