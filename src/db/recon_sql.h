/*
 * recon_sql.h - the SQL of `idemload reconcile` (SPEC.md, "Reconcile"):
 * the session's staging of the statement, the comparison with the table
 * (set-based, joined on the business key), its figures and discrepancy
 * lines, and the register beside the ledger.
 *
 * Templates take {table} and {active} (the target, quoted, and its
 * active-row predicate) and {item}, {run} (the register's tables, quoted)
 * through sql_render(); data travels only as $n parameters or COPY.  The
 * session setting idemload.recon_zone holds the statement's zone and
 * idemload.recon_grace the grace (an interval), idemload.now the time tests
 * pin "now" to (empty: now()), set by SQL_RECON_SETTINGS.
 */
#ifndef IDEMLOAD_RECON_SQL_H
#define IDEMLOAD_RECON_SQL_H

extern const char SQL_RECON_SETUP[];
extern const char SQL_RECON_SETTINGS[];
extern const char SQL_RECON_CCY[];
extern const char SQL_RECON_SFACTS[];
extern const char SQL_RECON_TFACTS[];
extern const char SQL_RECON_COPY[];
extern const char SQL_RECON_LEVELS[];
extern const char SQL_RECON_TABLE_ROWS[];
extern const char SQL_RECON_TABLE_PROBE[];
extern const char SQL_RECON_TABLE_RAW_EMPTY[];
extern const char SQL_RECON_HASH_ONLY[];
extern const char SQL_RECON_HASH_BACK[];
extern const char SQL_RECON_TABLE_ROWS_DISTRIBUTED[];
extern const char SQL_RECON_TABLE_VIEW[];
extern const char SQL_RECON_TABLE_FACTS[];
extern const char SQL_RECON_ANALYZE_TABLE_FACTS[];
extern const char SQL_RECON_ANALYZE_RAW[];
extern const char SQL_RECON_REPEATED[];
extern const char SQL_RECON_ANALYZE_REPEATED[];
extern const char SQL_RECON_KEYS[];
extern const char SQL_RECON_KEYS_SHARED[];
extern const char SQL_RECON_ANALYZE_SHARED[];
extern const char SQL_RECON_LISTED[];
extern const char SQL_RECON_EXTRA_ROWS[];
extern const char SQL_RECON_ANALYZE_EXTRA_ROWS[];
extern const char SQL_RECON_EXTRA[];
extern const char SQL_RECON_ASCII_UPPER[];
extern const char SQL_RECON_ZONE[];
extern const char SQL_RECON_DAYS_UNSTAGED[];
extern const char SQL_RECON_OUTSIDE[];
extern const char SQL_RECON_PAIRS[];
extern const char SQL_RECON_COVER[];
extern const char SQL_RECON_RELISTED[];
extern const char SQL_RECON_RELISTED_NONE[];
extern const char SQL_RECON_ANALYZE_RELISTED[];
extern const char SQL_RECON_OUT_TABLE[];
extern const char SQL_RECON_GROUPS_TABLE[];
extern const char SQL_RECON_CLASSIFY[];
extern const char SQL_RECON_CLASSIFY_SUMS[];
extern const char SQL_RECON_LINES[];
extern const char SQL_RECON_LINE_CURSOR[];
extern const char SQL_RECON_LINE_CURSOR_REG[];
extern const char SQL_RECON_LINE_CURSOR_NEW[];
extern const char SQL_RECON_LINE_FETCH[];
extern const char SQL_RECON_LINE_CLOSE[];
extern const char SQL_RECON_DAY_FIGURES[];
extern const char SQL_RECON_DAY_AMOUNTS[];
extern const char SQL_RECON_DAY_CATEGORIES[];
extern const char SQL_RECON_DAY_CCY_SIDES[];
extern const char SQL_RECON_DAY_DIFFERENCES[];
extern const char SQL_RECON_KEY_DAYS[];
extern const char SQL_RECON_ANALYZE_KEY_DAYS[];
extern const char SQL_RECON_FILE_KEYS[];
extern const char SQL_RECON_MISSING_KEYS[];
extern const char SQL_RECON_ANALYZE_KEYS[];
extern const char SQL_RECON_ANALYZE_PAIRS[];
extern const char SQL_RECON_ANALYZE_ROWS[];
extern const char SQL_RECON_ANALYZE_OUT[];
extern const char SQL_RECON_ANALYZE_LINES[];
extern const char SQL_RECON_ANALYZE_ITEM[];
extern const char SQL_RECON_REGISTER_EXISTS[];
extern const char SQL_RECON_REGISTER_UPGRADE[];
extern const char SQL_RECON_REGISTER_CREATE[];
extern const char SQL_RECON_RUN_LOCK[];
extern const char SQL_RECON_RUN_ID[];
extern const char SQL_RECON_REG_RESOLVE_LISTED[];
extern const char SQL_RECON_REG_LISTED_ELSEWHERE[];
extern const char SQL_RECON_REG_SUPERSEDE[];
extern const char SQL_RECON_REG_ESCALATE[];
extern const char SQL_RECON_REG_UPSERT[];
extern const char SQL_RECON_REG_INSERT_NEW[];
extern const char SQL_RECON_REG_INSERT_ALL[];
extern const char SQL_RECON_REG_RUNS[];
extern const char SQL_RECON_REG_CARRIED[];
extern const char SQL_RECON_REG_ESCALATING[];
extern const char SQL_RECON_REG_ESCALATED_EARLIER[];
extern const char SQL_RECON_REG_APPEARED[];
extern const char SQL_RECON_REG_APPEARING[];
extern const char SQL_RECON_REG_REPORTED[];
extern const char SQL_RECON_REG_RESOLVED[];
extern const char SQL_RECON_REPAIR_KEYS[];
extern const char SQL_RECON_REPAIR_ROWS[];
extern const char SQL_RECON_REPAIR_ROWS_DISTRIBUTED[];
extern const char SQL_RECON_REG_REPAIRED[];
extern const char SQL_RECON_REPAIR_MENDED[];
extern const char SQL_RECON_REPAIR_INSERTED[];
extern const char SQL_RECON_DRY_CARRIED[];
extern const char SQL_RECON_PERIOD_AMOUNTS[];
extern const char SQL_RECON_KIND_TOTALS[];
extern const char SQL_RECON_DAY_KINDS[];
extern const char SQL_RECON_PERIOD_KINDS[];
extern const char SQL_RECON_REGISTER_READABLE[];

#endif
