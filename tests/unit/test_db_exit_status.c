/*
 * test_db_exit_status.c - the one rule that turns a failed statement into
 * an exit status (db_exit_status, db.h), as a table: an interrupt wins over
 * anything the server said; a lost connection is a database error; classes
 * 42, 28, 3D and 3F are the caller's configuration; everything else,
 * including the client's own out-of-memory (53200, set by db.c) and a
 * failure with no SQLSTATE at all, is a database error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "db/db.h"
#include "util/exitcodes.h"

static const struct {
    db_error_class cls;
    const char *state;
    bool interrupted;
    int want;
} cases[] = {
    /* an interrupt decides, whatever the server answered */
    {DBE_CANCELED, "57014", true, EXIT_INTERRUPTED},
    {DBE_CONNECTION, "08006", true, EXIT_INTERRUPTED},
    {DBE_FATAL, "42501", true, EXIT_INTERRUPTED},
    {DBE_NONE, "", true, EXIT_INTERRUPTED},
    /* a lost connection: the database's failure */
    {DBE_CONNECTION, "08006", false, EXIT_DATABASE},
    {DBE_CONNECTION, "57P01", false, EXIT_DATABASE},
    {DBE_CONNECTION, "", false, EXIT_DATABASE},
    /* the caller's configuration */
    {DBE_FATAL, "42501", false, EXIT_USAGE},   /* insufficient privilege */
    {DBE_FATAL, "42P01", false, EXIT_USAGE},   /* undefined table */
    {DBE_FATAL, "42601", false, EXIT_USAGE},   /* syntax error */
    {DBE_FATAL, "28000", false, EXIT_USAGE},   /* invalid authorization */
    {DBE_FATAL, "28P01", false, EXIT_USAGE},
    {DBE_FATAL, "3D000", false, EXIT_USAGE},   /* invalid catalog name */
    {DBE_FATAL, "3F000", false, EXIT_USAGE},   /* invalid schema name */
    /* everything else: a database error */
    {DBE_FATAL, "53200", false, EXIT_DATABASE}, /* out of memory, ours or the server's */
    {DBE_FATAL, "53100", false, EXIT_DATABASE}, /* disk full */
    {DBE_DATA, "23505", false, EXIT_DATABASE},  /* a tool is never about one row */
    {DBE_DATA, "22P02", false, EXIT_DATABASE},
    {DBE_RETRY, "40P01", false, EXIT_DATABASE},
    {DBE_CANCELED, "57014", false, EXIT_DATABASE}, /* statement_timeout, not us */
    {DBE_FATAL, "XX000", false, EXIT_DATABASE},
    {DBE_NONE, "", false, EXIT_DATABASE},
    {DBE_FATAL, "4", false, EXIT_DATABASE},     /* half a class is no class */
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = db_exit_status(cases[i].cls, cases[i].state, cases[i].interrupted);
        if (got != cases[i].want)
            fail_msg("case %zu: class %d, SQLSTATE '%s', interrupted %d: got %d, want %d", i,
                     (int)cases[i].cls, cases[i].state, (int)cases[i].interrupted, got,
                     cases[i].want);
    }
}

static void test_null_sqlstate(void **state)
{
    (void)state;
    assert_int_equal(db_exit_status(DBE_FATAL, NULL, false), EXIT_DATABASE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_null_sqlstate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
