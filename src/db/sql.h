/*
 * sql.h - every SQL statement idemload sends, as readable templates.
 *
 * Identifiers are substituted by sql_render() from already quoted text
 * ({table}, {conflict}, {ledger}, {ledger_chunk}, {index}, {columns});
 * data only ever travels as $n parameters or through COPY.
 */
#ifndef IDEMLOAD_SQL_H
#define IDEMLOAD_SQL_H

#include <stdbool.h>

#include "util/buf.h"

extern const char SQL_RESOLVE_TABLE[];
extern const char SQL_TABLE_COLUMNS[];
extern const char SQL_HAS_CITUS[];
extern const char SQL_TABLE_DISTRIBUTED[];
extern const char SQL_CHECK_VALUE[];
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
extern const char SQL_CITUS_COPY[];
extern const char SQL_CITUS_VERDICT[];
extern const char SQL_CITUS_VERDICTS[];
extern const char SQL_CITUS_MERGE[];
extern const char SQL_CITUS_RETURNING[];
extern const char SQL_CITUS_MISSED_STALE[];
extern const char SQL_MERGE_PROBE[];
extern const char SQL_MERGE_DIRECT[];
extern const char SQL_CONFLICT_NOTHING[];
extern const char SQL_COUNT_STALE[];
extern const char SQL_MISSED_PROBE[];
extern const char SQL_MISSED_DIRECT[];
extern const char SQL_MISSED_NONE[];
extern const char SQL_INSERTED_XMAX[];
extern const char SQL_INSERTED_SNAPSHOT[];
extern const char SQL_LEDGER_EXISTS[];
extern const char SQL_LEDGER_CREATE[];
extern const char SQL_LEDGER_ADD_LANES[];
extern const char SQL_LEDGER_ADD_IDENTITY[];
extern const char SQL_LEDGER_ADD_LOADER[];
extern const char SQL_LEDGER_CLAIM[];
extern const char SQL_STATUS[];
extern const char SQL_TABLE_IDENTITY[];
extern const char SQL_LEDGER_LANES[];
extern const char SQL_LEDGER_LANE_FIGURES[];
extern const char SQL_LEDGER_LOOKUP[];
extern const char SQL_LEDGER_START[];
extern const char SQL_LEDGER_CHUNK[];
extern const char SQL_LEDGER_COMPLETE[];
extern const char SQL_LEDGER_SUMS[];
extern const char SQL_FILE_LOCK_TRY[];
extern const char SQL_FILE_LOCK[];
extern const char SQL_FILE_UNLOCK[];
extern const char SQL_INIT_TABLE[];
extern const char SQL_INIT_INDEX[];
extern const char SQL_INIT_TABLE_DISTRIBUTED[];
extern const char SQL_DISTRIBUTE[];
extern const char SQL_DUPLICATES[];
extern const char SQL_DUPLICATE_COUNT[];
extern const char SQL_NULLABLE_KEYS[];
extern const char SQL_DEDUPE_FINAL_BLOCKED[];
extern const char SQL_DEDUPE_BATCH[];
extern const char SQL_CREATE_INDEX[];
extern const char SQL_DROP_INDEX[];
extern const char SQL_INDEX_PROGRESS[];
extern const char SQL_INDEX_PROGRESS_WORKERS[];
extern const char SQL_INDEX_STATE[];

/*
 * Expands tmpl into *out, replacing each {name} by the value paired with it
 * in names/values (n pairs).  An unknown {name} is an error (false), so a
 * template and its caller cannot drift apart silently.
 */
bool sql_render(buf *out, const char *tmpl, int n, const char *const *names,
                const char *const *values);

#endif
