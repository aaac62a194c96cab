/*
 * recon_sql_parts.h - what reconcile's SQL files (recon_sql.c: the
 * comparison; recon_figures_sql.c: the figures; recon_reg_sql.c: the
 * register and --repair) write alike: the register's resolutions, how a
 * line and an item are the same, and the table's columns as read.
 */
#ifndef IDEMLOAD_DB_RECON_SQL_PARTS_H
#define IDEMLOAD_DB_RECON_SQL_PARTS_H

#include "core/columns.h"

/* The resolution of a missing_in_statement or pending item whose key a
 * statement of another day listed (SQL_RECON_REG_RESOLVE_LISTED). */
#define RECON_LISTED_LATER "'listed by a later statement'"

/* The resolution of a marker item (SQL_RECON_REG_LISTED_ELSEWHERE): a
 * table row of one day whose key a statement of another day listed,
 * recorded so that its own day, reconciled afterwards, matches it. */
#define RECON_LISTED_OTHER "'listed by the statement of another day'"

/* The items of keys a statement of another day listed, by day, for
 * SQL_RECON_RELISTED (the register's open index holds no resolved item). */
#define RECON_LISTED_INDEX \
    "CREATE INDEX IF NOT EXISTS idemload_recon_item_listed ON {item} (day)" \
    " WHERE state = 'resolved' AND resolution IN (" RECON_LISTED_LATER ", " RECON_LISTED_OTHER ")"

/* A line of this run (l) and an item of the register (i) are the same:
 * the same key, day and category, a pending item and a missing_in_statement
 * line (or the reverse) counting as one category, so that a day
 * reconciled again after the grace escalates its pending item in place
 * (it keeps its first_seen, and is neither resolved nor opened again). */
#define RECON_ITEM_FAMILY(x) \
    "CASE WHEN " x ".category = 'pending' THEN 'missing_in_statement' ELSE " x ".category END"

#define RECON_SAME_ITEM \
    "l.tenant_id = i.tenant_id AND l.channel = i.channel AND l.day = i.day" \
    " AND " RECON_ITEM_FAMILY("l") " = " RECON_ITEM_FAMILY("i") \
    " AND coalesce(l.out_trade_no, '') = coalesce(i.out_trade_no, '')" \
    " AND coalesce(l.callback_type, '') = coalesce(i.callback_type, '')"

/* Can the statement list the kind of row r for its pair p (not one its
 * files all leave out, SQL_RECON_PAIRS: a WeChat SUCCESS bill no refunds)?
 * A row of a kind it cannot list is neither missing from it nor pending. */
#define RECON_PAIR_COVERS(p, r) \
    "(" p ".excluded IS NULL OR split_part(" r ".callback_type, ':', 1) <> ALL (" p ".excluded))"

#define RECON_TABLE_COLUMNS COLUMN_LIST("t.")

#endif
