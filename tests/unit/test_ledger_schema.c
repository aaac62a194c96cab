/*
 * test_ledger_schema.c - the ledger's list of migrations (db/ledger_schema.h)
 * and the statements made from it: the version query probes, in the list's
 * order, exactly the column each migration adds (and is, token for token,
 * the query idemload sent before it was generated from the list); each
 * migration's statement adds its column, and a new ledger
 * (SQL_LEDGER_CREATE) has every column the migrations add.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "db/ledger_schema.h"
#include "db/sql.h"

/* The version query as sql.c wrote it out by hand before the list. */
static const char VERSION_QUERY[] =
    "SELECT to_regclass($1) IS NOT NULL,"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1)"
    "                  AND attname = 'lane' AND NOT attisdropped),"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($2)"
    "                  AND attname = 'table_storage' AND NOT attisdropped),"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($2)"
    "                  AND attname = 'loader_host' AND NOT attisdropped),"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1)"
    "                  AND attname = 'changes' AND NOT attisdropped),"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($2)"
    "                  AND attname = 'params' AND NOT attisdropped),"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1)"
    "                  AND attname = 'xids' AND NOT attisdropped),"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($2)"
    "                  AND attname = 'content_sha256' AND NOT attisdropped),"
    "       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($2)"
    "                  AND attname = 'file_name_bytes' AND NOT attisdropped),"
    " coalesce(has_table_privilege(to_regclass($1), 'SELECT')"
    "           AND has_table_privilege(to_regclass($2), 'SELECT'), false)";

static const struct {
    ledger_migration id;
    bool on_chunk;
    const char *column;
} list[] = {
#define ROW(id, on_chunk, column, sql) {LEDGER_##id, on_chunk, column},
    LEDGER_MIGRATIONS(ROW)
#undef ROW
};
#define N_LIST (sizeof list / sizeof list[0])

static void test_version_query(void **state)
{
    (void)state;
    buf q = BUF_INIT;
    assert_true(sql_ledger_exists(&q));
    assert_string_equal(buf_cstr(&q), VERSION_QUERY);
    /* one probe per migration, in the list's order, on its table */
    const char *at = buf_cstr(&q);
    for (size_t i = 0; i < N_LIST; i++) {
        char probe[200];
        snprintf(probe, sizeof probe, "to_regclass(%s)                  AND attname = '%s'",
                 list[i].on_chunk ? "$1" : "$2", list[i].column);
        const char *hit = strstr(at, probe);
        assert_non_null(hit);
        at = hit + strlen(probe);
    }
    assert_null(strstr(at, "EXISTS"));
    buf_free(&q);
    assert_int_equal(N_LIST, LEDGER_N_MIGRATIONS);
}

/* "ALTER TABLE {ledger_chunk} ADD COLUMN IF NOT EXISTS lane integer ...":
 * does sql add column on the table the list says? */
static bool adds_column(const char *sql, bool on_chunk, const char *column)
{
    char alter[160], add[160];
    snprintf(alter, sizeof alter, "ALTER TABLE %s ", on_chunk ? "{ledger_chunk}" : "{ledger}");
    snprintf(add, sizeof add, "ADD COLUMN IF NOT EXISTS %s ", column);
    for (const char *a = strstr(sql, alter); a; a = strstr(a + 1, alter)) {
        const char *end = strstr(a + 1, "ALTER TABLE ");
        const char *hit = strstr(a, add);
        if (hit && (!end || hit < end))
            return true;
    }
    return false;
}

static void test_migrations_add_their_column(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_LIST; i++) {
        const char *sql = ledger_migration_sql(list[i].id);
        assert_non_null(sql);
        if (!adds_column(sql, list[i].on_chunk, list[i].column))
            fail_msg("migration %zu does not add %s to the %s table: %s", i, list[i].column,
                     list[i].on_chunk ? "chunk" : "file", sql);
    }
    assert_null(ledger_migration_sql(LEDGER_N_MIGRATIONS));
}

/* A new ledger is created whole: every column a migration adds is in
 * SQL_LEDGER_CREATE's CREATE TABLE of its table. */
static void test_create_is_complete(void **state)
{
    (void)state;
    const char *chunk = strstr(SQL_LEDGER_CREATE, "CREATE TABLE IF NOT EXISTS {ledger_chunk}");
    assert_non_null(chunk);
    for (size_t i = 0; i < N_LIST; i++) {
        char col[80];
        snprintf(col, sizeof col, "  %s ", list[i].column);
        const char *hit = strstr(list[i].on_chunk ? chunk : SQL_LEDGER_CREATE, col);
        if (!hit || (!list[i].on_chunk && hit > chunk))
            fail_msg("SQL_LEDGER_CREATE lacks %s in the %s table", list[i].column,
                     list[i].on_chunk ? "chunk" : "file");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_query),
        cmocka_unit_test(test_migrations_add_their_column),
        cmocka_unit_test(test_create_is_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
