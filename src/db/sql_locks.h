/*
 * sql_locks.h - the advisory locks of idemload's SQL (sql.c's files:
 * ledger_sql.c, tools_sql.c).
 */
#ifndef IDEMLOAD_DB_SQL_LOCKS_H
#define IDEMLOAD_DB_SQL_LOCKS_H

/*
 * The advisory locks idemload takes, named here and nowhere else:
 * LOCK_LEDGER_CREATE  one transaction at a time creates or migrates the
 *                     ledger tables (a transaction lock, SQL_LEDGER_CREATE).
 *                     An arbitrary constant key, chosen once: changing it
 *                     would let an old and a new idemload create the ledger
 *                     at the same time.
 * LOCK_INIT           one `idemload init` at a time creates the table and
 *                     its index (a transaction lock, SQL_INIT_LOCK): CREATE
 *                     ... IF NOT EXISTS alone can still collide on the
 *                     catalog.  The ledger's key + 1.
 * LOCK_FILE           one process at a time loads a file into a table (a
 *                     session lock, SQL_FILE_LOCK*): the key hashes
 *                     "target:digest", $1 the target, $2 the file's digest.
 */
#define LOCK_LEDGER_CREATE "7350323339418284032"
#define LOCK_INIT "7350323339418284033"
#define LOCK_FILE "hashtextextended($1 || ':' || $2, 0)"

#endif
