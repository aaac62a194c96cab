/*
 * columns.h - the columns idemload loads, in one table: every stage that
 * names them (the record, the chunk's row, the COPY encoder, the staging
 * table and the merge's column lists and key joins in sql.c, reconcile's
 * staging table, COPY list, table read and key joins in recon_sql.c, the
 * target's checks) is generated from IDEMLOAD_COLUMNS, so adding a column
 * is one row here plus its semantics (how validate.c checks it, how the
 * merge's conflict action treats it; a key column, the register's columns
 * too: recon_sql.c).
 *
 * Plain preprocessor, so every SQL list stays a string constant the
 * compiler joins and tests/golden shows whole.
 */
#ifndef IDEMLOAD_COLUMNS_H
#define IDEMLOAD_COLUMNS_H

/*
 * X(ID, name, member, kind, key, pos, init_default, A, B), one row per
 * column, in the order of the staging table, of COPY and of the INSERT:
 *   ID            the column is COL_ID (core/record.h)
 *   name          its name in files, --set and SQL
 *   member        its field in a row (chunk/chunk.h)
 *   kind          how a row holds it, COPY sends it and the target stores it:
 *                 INT64 (bigint), INT16 (smallint), TEXT (text), JSON (text
 *                 staged, jsonb in the target, kept exactly as written),
 *                 TIME (microseconds since the Unix epoch, UTC; timestamptz)
 *   key           KEY: part of the business key, in the order of its unique
 *                 index; FACT: a value the merge carries
 *   pos           FIRST for the first row, FIRST_FACT for the first FACT,
 *                 NEXT for the others (where the lists below put their
 *                 separators)
 *   init_default  what `idemload init` adds after NOT NULL ("" for nothing)
 *   A, B          passed through from the caller (aliases of the SQL lists)
 * The key columns come first (the key's texts are then the first texts of
 * a row, which chunk.c sorts by in place), then the facts.
 */
#define IDEMLOAD_COLUMNS(X, A, B) \
    X(TENANT_ID,     tenant_id,     tenant_id,     INT64, KEY,  FIRST,      "",             A, B) \
    X(CHANNEL,       channel,       channel,       TEXT,  KEY,  NEXT,       "",             A, B) \
    X(OUT_TRADE_NO,  out_trade_no,  out_trade_no,  TEXT,  KEY,  NEXT,       "",             A, B) \
    X(CALLBACK_TYPE, callback_type, callback_type, TEXT,  KEY,  NEXT,       "",             A, B) \
    X(STATUS,        status,        status,        INT16, FACT, FIRST_FACT, " DEFAULT 0", A, B) \
    X(PAYLOAD,       payload,       payload,       JSON,  FACT, NEXT,       "",             A, B) \
    X(RECEIVED_AT,   received_at,   received_us,   TIME,  FACT, NEXT,       " DEFAULT now()", A, B) \
    IDEMLOAD_TEST_COLUMN(X, A, B)

/* One more column, in a test build only (tests/unit/test_recon_columns.c,
 * built with IDEMLOAD_TEST_EXTRA_COLUMN): a fact, to show that every list
 * of the columns follows the table. */
#ifdef IDEMLOAD_TEST_EXTRA_COLUMN
#define IDEMLOAD_TEST_COLUMN(X, A, B) \
    X(TEST_FACT,     test_fact,     test_fact,     TEXT,  FACT, NEXT,       " DEFAULT ''",  A, B)
#else
#define IDEMLOAD_TEST_COLUMN(X, A, B)
#endif

/* What each kind is called where it is stored. */
#define COLUMN_STAGE_TYPE_INT64 "bigint"
#define COLUMN_STAGE_TYPE_INT16 "smallint"
#define COLUMN_STAGE_TYPE_TEXT "text"
#define COLUMN_STAGE_TYPE_JSON "text"
#define COLUMN_STAGE_TYPE_TIME "timestamptz"
#define COLUMN_INIT_TYPE_INT64 "BIGINT"
#define COLUMN_INIT_TYPE_INT16 "SMALLINT"
#define COLUMN_INIT_TYPE_TEXT "TEXT"
#define COLUMN_INIT_TYPE_JSON "JSONB"
#define COLUMN_INIT_TYPE_TIME "TIMESTAMPTZ"
/* What reconcile stages each kind as (db/recon_sql.c's idemload_recon_raw):
 * the target's own type, as copy_binary_recon_row sends it, but the
 * payload as text (the client sends the facts read from it beside it;
 * recon/stmt_texts.h). */
#define COLUMN_RECON_TYPE_INT64 "bigint"
#define COLUMN_RECON_TYPE_INT16 "smallint"
#define COLUMN_RECON_TYPE_TEXT "text"
#define COLUMN_RECON_TYPE_JSON "text"
#define COLUMN_RECON_TYPE_TIME "timestamptz"
/* The target's column types (as format_type names them) that a value of
 * each kind fits as COPY's binary format carries it (load/copy_encode.c):
 * the append writes straight into such columns only. */
#define COLUMN_BINARY_TYPES_INT64 "bigint"
#define COLUMN_BINARY_TYPES_INT16 "smallint"
#define COLUMN_BINARY_TYPES_TEXT "text", "character varying"
#define COLUMN_BINARY_TYPES_JSON "jsonb"
#define COLUMN_BINARY_TYPES_TIME "timestamp with time zone"
/* A staged value as the target takes it (the stage keeps payload as text,
 * so a value jsonb refuses fails in the merge, where one row can be
 * isolated). */
#define COLUMN_CAST_INT64 ""
#define COLUMN_CAST_INT16 ""
#define COLUMN_CAST_TEXT ""
#define COLUMN_CAST_JSON "::jsonb"
#define COLUMN_CAST_TIME ""

/* Helpers of the generators: a separator before every row but the first,
 * and a row kept only when it is (or is not) part of the key. */
#define COLUMN_SEP_FIRST(s)
#define COLUMN_SEP_FIRST_FACT(s) s
#define COLUMN_SEP_NEXT(s) s
#define FACT_SEP_FIRST_FACT(s)
#define FACT_SEP_NEXT(s) s
#define COLUMN_IF_KEY(...) __VA_ARGS__
#define COLUMN_IF_FACT(...)
#define COLUMN_UNLESS_KEY(...)
#define COLUMN_UNLESS_FACT(...) __VA_ARGS__

/* Counts, as sums: 0 IDEMLOAD_COLUMNS(COLUMN_ONE, ~, ~). */
#define COLUMN_ONE(ID, name, member, kind, key, pos, dflt, A, B) +1
#define COLUMN_ONE_KEY(ID, name, member, kind, key, pos, dflt, A, B) COLUMN_IF_##key(+1)

/*
 * The business key (SPEC.md), in the order of its unique index.
 * KEY_COLUMNS is the list as SQL writes it, "tenant_id, channel,
 * out_trade_no, callback_type" (and what sql_render's {key} renders to);
 * KEY_COLUMN_NAMES the same names as an initializer list.
 */
#define KEY_NCOLUMNS (0 IDEMLOAD_COLUMNS(COLUMN_ONE_KEY, ~, ~))
#define KEY_COLUMNS KEY_LIST("")
#define KEY_COLUMN_NAME_1(ID, name, member, kind, key, pos, dflt, A, B) COLUMN_IF_##key(#name, )
#define KEY_COLUMN_NAMES IDEMLOAD_COLUMNS(KEY_COLUMN_NAME_1, ~, ~)

/*
 * The SQL lists, as string constants.  P is an alias with its dot ("s.")
 * or "" for none.
 *   COLUMN_LIST(P)   "P.tenant_id, P.channel, ..., P.received_at"
 *   COLUMN_VALUES(P) the same with each value cast as the target takes it
 *                    ("P.payload::jsonb")
 *   KEY_LIST(P)      the key columns only
 *   KEY_JOIN(A, B)   "A.tenant_id = B.tenant_id AND A.channel = B.channel
 *                    AND ...", A and B aliases without their dots
 *   FACT_ASSIGN(P)   "status = P.status, payload = P.payload::jsonb, ...":
 *                    every fact takes P's version
 *   STAGED_COLUMN_DEFS  the staging table's column definitions
 *   INIT_COLUMN_DEFS    those of the table `idemload init` creates
 */
#define COLUMN_LIST_1(ID, name, member, kind, key, pos, dflt, P, B) COLUMN_SEP_##pos(", ") P #name
#define COLUMN_LIST(P) IDEMLOAD_COLUMNS(COLUMN_LIST_1, P, ~)

#define COLUMN_VALUES_1(ID, name, member, kind, key, pos, dflt, P, B) \
    COLUMN_SEP_##pos(", ") P #name COLUMN_CAST_##kind
#define COLUMN_VALUES(P) IDEMLOAD_COLUMNS(COLUMN_VALUES_1, P, ~)

#define KEY_LIST_1(ID, name, member, kind, key, pos, dflt, P, B) \
    COLUMN_IF_##key(COLUMN_SEP_##pos(", ") P #name)
#define KEY_LIST(P) IDEMLOAD_COLUMNS(KEY_LIST_1, P, ~)

#define KEY_JOIN_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_IF_##key(COLUMN_SEP_##pos(" AND ") A "." #name " = " B "." #name)
#define KEY_JOIN(A, B) IDEMLOAD_COLUMNS(KEY_JOIN_1, A, B)

#define FACT_ASSIGN_1(ID, name, member, kind, key, pos, dflt, P, B) \
    COLUMN_UNLESS_##key(FACT_SEP_##pos(", ") #name " = " P #name COLUMN_CAST_##kind)
#define FACT_ASSIGN(P) IDEMLOAD_COLUMNS(FACT_ASSIGN_1, P, ~)

#define STAGED_COLUMN_DEFS_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_SEP_##pos(",") "  " #name " " COLUMN_STAGE_TYPE_##kind " NOT NULL"
#define STAGED_COLUMN_DEFS IDEMLOAD_COLUMNS(STAGED_COLUMN_DEFS_1, ~, ~)

#define INIT_COLUMN_DEFS_1(ID, name, member, kind, key, pos, dflt, A, B) \
    "  " #name " " COLUMN_INIT_TYPE_##kind " NOT NULL" dflt ","
#define INIT_COLUMN_DEFS IDEMLOAD_COLUMNS(INIT_COLUMN_DEFS_1, ~, ~)

#endif
