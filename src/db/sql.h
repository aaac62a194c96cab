/*
 * sql.h - every SQL statement idemload sends, as readable templates.
 *
 * Identifiers are substituted by sql_render() from already quoted text
 * ({table}, {conflict}, {ledger}, {ledger_chunk}, {index}, {columns});
 * {key} is always the business key's column list, KEY_COLUMNS.  Data only
 * ever travels as $n parameters or through COPY.
 */
#ifndef IDEMLOAD_SQL_H
#define IDEMLOAD_SQL_H

#include <stdbool.h>

#include "core/columns.h"
#include "util/buf.h"

/*
 * The business key (SPEC.md), in the order of its unique index, is named
 * in the column table (core/columns.h): KEY_COLUMNS, "tenant_id, channel,
 * out_trade_no, callback_type", is what {key} renders to;
 * key_column_names holds the same names one by one.
 */
extern const char *const key_column_names[KEY_NCOLUMNS];

/* The unique index on the key, as it follows "CREATE UNIQUE INDEX ...
 * {index} ": "ON {table} ({key}) WHERE deleted_at IS NULL".  SQL_INIT_INDEX
 * and SQL_CREATE_INDEX are made of it. */
extern const char SQL_KEY_INDEX_TAIL[];

extern const char SQL_RESOLVE_TABLE[];
extern const char SQL_TABLE_COLUMNS[];
extern const char SQL_HAS_CITUS[];
extern const char SQL_TABLE_DISTRIBUTED[];
extern const char SQL_TABLE_DISTRIBUTED_BY_NAME[];
extern const char SQL_CHECK_VALUE[];
extern const char SQL_MISSING_PRIVILEGES[];
extern const char SQL_MAY_CREATE_TEMP[];
extern const char SQL_UNIQUE_INDEXES[];
extern const char SQL_SESSION_SETTINGS[];
extern const char SQL_CREATE_STAGE[];
extern const char SQL_TRUNCATE_STAGE[];
extern const char SQL_COPY_STAGE[];
extern const char SQL_CONFLICT_UPDATE[];
extern const char SQL_CONFLICT_RETURNING[];
extern const char SQL_CITUS_SESSION_SETTINGS[];
extern const char SQL_CITUS_STAGE_CREATE[];
extern const char SQL_CITUS_STAGE_DISTRIBUTE[];
extern const char SQL_CITUS_ID_SEQUENCE[];
extern const char SQL_CITUS_LEFTOVERS[];
extern const char SQL_CITUS_TRUNCATE[];
extern const char SQL_CITUS_DROP[];
extern const char SQL_CITUS_COPY[];
extern const char SQL_CITUS_VERDICT[];
extern const char SQL_CITUS_VERDICTS[];
extern const char SQL_CITUS_MERGE[];
extern const char SQL_CITUS_RETURNING[];
extern const char SQL_CITUS_MISSED_STALE[];
extern const char SQL_MERGE_PROBE[];
extern const char SQL_APPEND[];
extern const char SQL_APPEND_PROBE[];
extern const char SQL_TABLE_HAS_ACTIVE[];
extern const char SQL_XMIN_OF_KEY[];
extern const char SQL_XMIN_OF_STAGED[];
extern const char SQL_SUPERSEDE[];
extern const char SQL_SHADOW_CREATE[];
extern const char SQL_SHADOW_NAME[];
extern const char SQL_SHADOW_FILL[];
extern const char SQL_MERGE_DIRECT[];
extern const char SQL_CONFLICT_NOTHING[];
extern const char SQL_COUNT_STALE[];
extern const char SQL_MERGE_DETAIL[];
extern const char SQL_STALE_DETAIL[];
extern const char SQL_MERGE_DETAIL_NOTHING[];
/* A timestamptz as UTC text, 2026-11-28T02:00:00.500000Z ('infinity' as
 * itself): the received_at of the --changes lines, one format whoever
 * reads it. */
#define SQL_TS_TEXT(x) \
    "coalesce(to_char((" x ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), (" x ")::text)"
extern const char SQL_MISSED_PROBE[];
extern const char SQL_MISSED_DIRECT[];
extern const char SQL_MISSED_NONE[];
extern const char SQL_MISSED_NOTHING[];
extern const char SQL_INSERTED_XMAX[];
extern const char SQL_INSERTED_SNAPSHOT[];
extern const char SQL_LEDGER_CREATE[];
extern const char SQL_LEDGER_ADD_LANES[];
extern const char SQL_LEDGER_ADD_IDENTITY[];
extern const char SQL_LEDGER_ADD_LOADER[];
extern const char SQL_LEDGER_ADD_CHANGES[];
extern const char SQL_LEDGER_CHANGES[];
extern const char SQL_LEDGER_ADD_PARAMS[];
extern const char SQL_LEDGER_ADD_XIDS[];
extern const char SQL_LEDGER_ADD_CONTENT[];
extern const char SQL_LEDGER_ADD_NAME_BYTES[];
extern const char SQL_LEDGER_KEEP_PRIOR[];
extern const char SQL_LEDGER_PRIOR[];
extern const char SQL_LEDGER_CLAIM[];
extern const char SQL_LEDGER_HOLDER[];
extern const char SQL_STATUS[];
extern const char SQL_TABLE_IDENTITY[];
extern const char SQL_LEDGER_LANES[];
extern const char SQL_LEDGER_LANE_FIGURES[];
extern const char SQL_LEDGER_LOOKUP[];
extern const char SQL_LEDGER_START[];
extern const char SQL_LEDGER_CHUNK[];
extern const char SQL_LEDGER_COMPLETE[];
extern const char SQL_LEDGER_FORGET[];
extern const char SQL_LEDGER_SUMS[];
extern const char SQL_FILE_LOCK_TRY[];
extern const char SQL_FILE_LOCK[];
extern const char SQL_FILE_UNLOCK[];
extern const char SQL_INIT_LOCK[];
extern const char SQL_INIT_TABLE[];
extern const char SQL_INIT_INDEX[];
extern const char SQL_INIT_TABLE_DISTRIBUTED[];
extern const char SQL_DISTRIBUTE[];
extern const char SQL_DUPLICATES[];
extern const char SQL_DUPLICATE_COUNT[];
extern const char SQL_NULLABLE_KEYS[];
extern const char SQL_DEDUPE_FINAL_BLOCKED[];
extern const char SQL_DEDUPE_BATCH[];
extern const char SQL_DEDUPE_BATCH_DISTRIBUTED[];
extern const char SQL_CREATE_INDEX[];
extern const char SQL_DROP_INDEX[];
extern const char SQL_INDEX_PROGRESS[];
extern const char SQL_INDEX_PROGRESS_WORKERS[];
extern const char SQL_INDEX_STATE[];

/*
 * Expands tmpl into *out, replacing each {name} by the value paired with it
 * in names/values (n pairs); {key}, unless the caller pairs it, becomes
 * KEY_COLUMNS.  An unknown {name} or a '{' without its '}' is an error
 * (false), so a template and its caller cannot drift apart silently; out
 * then holds a partial expansion to discard.
 */
bool sql_render(buf *out, const char *tmpl, int n, const char *const *names,
                const char *const *values);

/* Appends the statement that reads the ledger's version (ledger_schema.h),
 * generated from its list of migrations; false when memory ran out. */
bool sql_ledger_exists(buf *out);

#endif
