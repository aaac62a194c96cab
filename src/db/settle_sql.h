/*
 * settle_sql.h - the statements of `idemload settle` (settle.h): the
 * session's temporary tables, the staging COPY, the checks run on the
 * server (each a category of SPEC.md "Settle: the money that arrives"),
 * and the register beside reconcile's.  Rendered with recon_sql_render
 * ({table}, {active}, {item}, {run}, {item_index}, {run_index}); the money
 * functions and the currency exponents are reconcile's (SQL_RECON_SETUP).
 */
#ifndef IDEMLOAD_SETTLE_SQL_H
#define IDEMLOAD_SETTLE_SQL_H

extern const char SQL_SETTLE_SETUP[];
extern const char SQL_SETTLE_COPY[];
extern const char SQL_SETTLE_RATE[];
extern const char SQL_SETTLE_ROWS[];
extern const char SQL_SETTLE_PERIOD[];
extern const char SQL_SETTLE_FEE_RATE[];
extern const char SQL_SETTLE_PAYOUT[];
extern const char SQL_SETTLE_BALANCE[];
extern const char SQL_SETTLE_BATCHES[];
extern const char SQL_SETTLE_BATCHES_REGISTER[];
extern const char SQL_SETTLE_CREDITS[];
extern const char SQL_SETTLE_MATCH_REF[];
extern const char SQL_SETTLE_MATCH_ONE[];
extern const char SQL_SETTLE_MATCH_DAY[];
extern const char SQL_SETTLE_NOT_RECEIVED[];
extern const char SQL_SETTLE_UNEXPECTED[];
extern const char SQL_SETTLE_UNSETTLED[];
extern const char SQL_SETTLE_UNSETTLED_PREP[];
extern const char SQL_SETTLE_UNSETTLED_LINKED[];
extern const char SQL_SETTLE_UNSETTLED_KEYS[];
extern const char SQL_SETTLE_UNSETTLED_ROWS_DISTRIBUTED[];
extern const char SQL_SETTLE_UNSETTLED_DISTRIBUTED[];
extern const char SQL_SETTLE_DAYS[];
extern const char SQL_SETTLE_LINES[];
extern const char SQL_SETTLE_LINES_UNREGISTERED[];
extern const char SQL_SETTLE_MATCHED[];

extern const char SQL_SETTLE_REGISTER_CREATE[];
extern const char SQL_SETTLE_REGISTER_READABLE[];
extern const char SQL_SETTLE_RUN_ID[];
extern const char SQL_SETTLE_REG_SUPERSEDE[];
extern const char SQL_SETTLE_REG_RESOLVE[];
extern const char SQL_SETTLE_REG_CREDITED[];
extern const char SQL_SETTLE_REG_UPSERT[];
extern const char SQL_SETTLE_REG_ESCALATE[];
extern const char SQL_SETTLE_REG_RUNS[];
extern const char SQL_SETTLE_REG_CARRIED[];
extern const char SQL_SETTLE_REG_RESOLVED[];

#endif
