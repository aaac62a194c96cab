/*
 * ledger_migrations.h - the list of the ledger's migrations, data only: the
 * ledger's module (ledger_schema.h) applies and reads it, sql.c builds the
 * version query from it.  Apart from both, so neither includes the other.
 */
#ifndef IDEMLOAD_LEDGER_MIGRATIONS_H
#define IDEMLOAD_LEDGER_MIGRATIONS_H

/*
 * The migrations, oldest first: each added columns that an earlier
 * idemload's ledger lacks.  A row is its name, whether the column that
 * shows it ran is on the chunk table (else the file table), that column,
 * and the statement that adds what it brought (sql.h; run in the
 * transaction of SQL_LEDGER_CREATE, which creates a new ledger complete).
 * A new ledger column is a row here, its statement, and the column in
 * SQL_LEDGER_CREATE.
 */
#define LEDGER_MIGRATIONS(X)                                       \
    X(LANES, true, "lane", SQL_LEDGER_ADD_LANES)                   \
    X(IDENTITY, false, "table_storage", SQL_LEDGER_ADD_IDENTITY)   \
    X(LOADER, false, "loader_host", SQL_LEDGER_ADD_LOADER)         \
    X(CHANGES, true, "changes", SQL_LEDGER_ADD_CHANGES)            \
    X(PARAMS, false, "params", SQL_LEDGER_ADD_PARAMS)              \
    X(XIDS, true, "xids", SQL_LEDGER_ADD_XIDS)                     \
    X(CONTENT, false, "content_sha256", SQL_LEDGER_ADD_CONTENT)   \
    X(NAME_BYTES, false, "file_name_bytes", SQL_LEDGER_ADD_NAME_BYTES)

#endif
