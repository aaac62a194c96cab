/*
 * test_db_exit_status.c - the one rule that turns a failed statement into
 * an exit status (db_exit_status, db.h), as a table: an interrupt wins over
 * anything the server said; every answer of the server is a database error
 * (4) in every command (SPEC.md "Exit status": an unreachable server, a
 * privilege, a missing object alike); usage and configuration (2) never
 * come from a SQLSTATE; and the hints of the same table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

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
    /* the server's answer, also about privileges or objects: a database
     * error in every command (it was 2 in the tools and 4 in import) */
    {DBE_FATAL, "42501", false, EXIT_DATABASE},   /* insufficient privilege */
    {DBE_FATAL, "42P01", false, EXIT_DATABASE},   /* undefined table */
    {DBE_FATAL, "42601", false, EXIT_DATABASE},   /* syntax error */
    {DBE_FATAL, "28000", false, EXIT_DATABASE},   /* invalid authorization */
    {DBE_FATAL, "28P01", false, EXIT_DATABASE},
    {DBE_FATAL, "3D000", false, EXIT_DATABASE},   /* invalid catalog name */
    {DBE_FATAL, "3F000", false, EXIT_DATABASE},   /* invalid schema name */
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

/* The hints come from the same table: a code's own, else its class's. */
static void test_hints(void **state)
{
    (void)state;
    assert_non_null(strstr(db_sqlstate_hint("42501"), "needs SELECT"));
    assert_non_null(strstr(db_sqlstate_hint("42883"), "missing or wrong"));
    assert_non_null(strstr(db_sqlstate_hint("57014"), "statement_timeout"));
    assert_non_null(strstr(db_sqlstate_hint("53100"), "out of a resource"));
    assert_non_null(strstr(db_sqlstate_hint("0A000"), "does not support"));
    assert_string_equal(db_sqlstate_hint("23505"), "");
    assert_string_equal(db_sqlstate_hint("XX000"), "");
    assert_string_equal(db_sqlstate_hint(""), "");
    assert_string_equal(db_sqlstate_hint("4"), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_null_sqlstate),
        cmocka_unit_test(test_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
