/*
 * test_advice.c - the user's target on the idemload commands a message
 * advises (db/advice.h): a word quoted for the shell (util/shell_quote.h),
 * exactly and read back by /bin/sh unchanged; -d shown without its
 * password (db_conninfo_shown); and the options advice_target_args
 * appends, nothing at all when the user named no target.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "db/advice.h"
#include "db/db.h"
#include "util/shell_quote.h"

/* ---- shell_quote_append ------------------------------------------------------ */

static const struct {
    const char *word;
    const char *quoted;
} words[] = {
    {"pay", "pay"},
    {"billing.callbacks", "billing.callbacks"},
    {"postgresql://u@db.example:5433/pay", "postgresql://u@db.example:5433/pay"},
    {"dbname=pay", "dbname=pay"},
    {"-x_y", "-x_y"},
    {"", "''"},
    {"a b", "'a b'"},
    {"dbname=pay host=h", "'dbname=pay host=h'"},
    {"billing.\"Call backs\"", "'billing.\"Call backs\"'"},
    {"it's", "'it'\\''s'"},
    {"'", "''\\'''"},
    {"postgresql:///pay?host=/tmp&port=5432", "'postgresql:///pay?host=/tmp&port=5432'"},
    {"$HOME", "'$HOME'"},
    {"`id`", "'`id`'"},
    {"~root", "'~root'"},
    {"a*", "'a*'"},
    {"x;rm", "'x;rm'"},
    {"back\\slash", "'back\\slash'"},
    {"new\nline", "'new\nline'"},
    {"表", "'表'"},
};

static void test_shell_quote(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        buf out = BUF_INIT;
        assert_true(buf_append_str(&out, "<"));
        assert_true(shell_quote_append(&out, words[i].word));
        if (strcmp(buf_cstr(&out) + 1, words[i].quoted) != 0)
            fail_msg("word %zu: expected [%s], got [%s]", i, words[i].quoted, buf_cstr(&out) + 1);
        buf_free(&out);
    }
}

/* What /bin/sh makes of the quoted word: the word itself, byte for byte. */
static void test_shell_quote_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        buf cmd = BUF_INIT;
        assert_true(buf_append_str(&cmd, "printf '%s' "));
        assert_true(shell_quote_append(&cmd, words[i].word));
        FILE *p = popen(buf_cstr(&cmd), "r");
        assert_non_null(p);
        char got[256];
        size_t n = fread(got, 1, sizeof got - 1, p);
        got[n] = '\0';
        assert_int_equal(pclose(p), 0);
        if (strcmp(got, words[i].word) != 0)
            fail_msg("word %zu: the shell read [%s] from %s", i, got, buf_cstr(&cmd));
        buf_free(&cmd);
    }
}

/* ---- db_conninfo_shown ------------------------------------------------------- */

static const struct {
    const char *dbname;
    bool shown;
    const char *text;
} conninfos[] = {
    {"pay", true, "pay"},
    {"", true, ""},
    {"postgresql://u@h:5433/pay?sslmode=require", true,
     "postgresql://u@h:5433/pay?sslmode=require"},
    {"dbname=pay host=h", true, "dbname=pay host=h"},
    /* a password: rebuilt from the options it sets, in libpq's order */
    {"postgresql://u:secret@h:5433/pay", true, "user=u dbname=pay host=h port=5433"},
    {"postgresql://u:s%41cret@/pay?host=/tmp/sock&application_name=a%20b", true,
     "user=u dbname=pay host=/tmp/sock application_name='a b'"},
    {"postgres://h/pay?password=secret", true, "dbname=pay host=h"},
    {"password=secret dbname=x", true, "dbname=x"},
    {"host=h dbname='my db' password='se cret' user=o\\'k", true,
     "user='o\\'k' dbname='my db' host=h"},
    {"dbname=x sslpassword=secret", true, "dbname=x"},
    {"password=secret", true, ""},
    /* a connection string libpq cannot parse: nothing shown */
    {"postgresql://u:secret@h/pay%zz", false, ""},
    {"password=secret dbname", false, ""},
};

static void test_conninfo_shown(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof conninfos / sizeof conninfos[0]; i++) {
        buf out = BUF_INIT;
        bool shown = db_conninfo_shown(conninfos[i].dbname, &out);
        if (shown != conninfos[i].shown || strcmp(buf_cstr(&out), conninfos[i].text) != 0)
            fail_msg("%s: expected %d [%s], got %d [%s]", conninfos[i].dbname,
                     conninfos[i].shown, conninfos[i].text, shown, buf_cstr(&out));
        assert_null(strstr(buf_cstr(&out), "secret"));
        assert_null(strstr(buf_cstr(&out), "s%41cret"));
        assert_null(strstr(buf_cstr(&out), "sAcret"));
        buf_free(&out);
    }
}

/* ---- advice_target_args ------------------------------------------------------ */

static buf args;

static const char *args_of(const char *dbname, const char *table, const char *index)
{
    config cfg;
    config_defaults(&cfg);
    cfg.dbname = dbname;
    if (table)
        cfg.table = table;
    buf_clear(&args);
    assert_true(advice_target_args(&args, &cfg, index));
    return buf_cstr(&args);
}

static void test_target_args(void **state)
{
    (void)state;
    /* nothing named: nothing added, the advice reads as before */
    assert_string_equal(args_of(NULL, NULL, NULL), "");
    assert_string_equal(args_of(NULL, DEFAULT_TABLE, NULL), "");
    assert_string_equal(args_of("", NULL, NULL), "");
    assert_string_equal(args_of("pay", "billing.callbacks", NULL),
                        " -d pay --table billing.callbacks");
    assert_string_equal(args_of(NULL, "billing.callbacks", NULL), " --table billing.callbacks");
    assert_string_equal(args_of("pay", NULL, NULL), " -d pay");
    assert_string_equal(args_of("pay", NULL, "cb key"), " -d pay --index-name 'cb key'");
    assert_string_equal(args_of("host=h dbname=pay", "billing.\"Call backs\"", NULL),
                        " -d 'host=h dbname=pay' --table 'billing.\"Call backs\"'");
    /* the password never, the rest of the connection always */
    assert_string_equal(args_of("postgresql://u:secret@h/pay", "t", NULL),
                        " -d 'user=u dbname=pay host=h' --table t");
    assert_string_equal(args_of("password=secret dbname=pay", NULL, NULL), " -d dbname=pay");
    assert_string_equal(args_of("password=secret", "t", NULL), " --table t");
    buf_free(&args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shell_quote),
        cmocka_unit_test(test_shell_quote_round_trip),
        cmocka_unit_test(test_conninfo_shown),
        cmocka_unit_test(test_target_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
