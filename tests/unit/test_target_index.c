/*
 * test_target_index.c - which unique index makes loads safe (target.c's
 * target_pick_index), table-driven: the business key exactly, in any
 * order, no expressions, valid, not deferrable, and the predicate "deleted_at IS NULL" on a
 * table that soft-deletes (none on one that does not); the first good one
 * by name wins.  The rules read as a table here, without a database.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "db/target.h"

typedef struct ix_case {
    const char *why;
    bool has_deleted_at;
    const char *columns;
    const char *predicate;
    bool valid;
    bool expressions;
    bool usable;
    bool deferrable;
} ix_case;

static const ix_case cases[] = {
    {"the SPEC's index", true, "tenant_id,channel,out_trade_no,callback_type",
     "(deleted_at IS NULL)", true, false, true, false},
    {"predicate without parentheses", true, "tenant_id,channel,out_trade_no,callback_type",
     "deleted_at IS NULL", true, false, true, false},
    {"key columns in another order", true, "callback_type,out_trade_no,channel,tenant_id",
     "(deleted_at IS NULL)", true, false, true, false},
    {"INVALID (a failed CONCURRENTLY)", true, "tenant_id,channel,out_trade_no,callback_type",
     "(deleted_at IS NULL)", false, false, false, false},
    {"no predicate on a soft-deleting table", true,
     "tenant_id,channel,out_trade_no,callback_type", NULL, true, false, false, false},
    {"another predicate", true, "tenant_id,channel,out_trade_no,callback_type",
     "(status <> 9)", true, false, false, false},
    {"a predicate on a table without deleted_at", false,
     "tenant_id,channel,out_trade_no,callback_type", "(status <> 9)", true, false, false, false},
    {"no predicate, no deleted_at", false, "tenant_id,channel,out_trade_no,callback_type", NULL,
     true, false, true, false},
    {"three of the four columns", true, "tenant_id,channel,out_trade_no",
     "(deleted_at IS NULL)", true, false, false, false},
    {"a fifth column", true, "tenant_id,channel,out_trade_no,callback_type,status",
     "(deleted_at IS NULL)", true, false, false, false},
    {"a column twice", true, "tenant_id,channel,out_trade_no,out_trade_no",
     "(deleted_at IS NULL)", true, false, false, false},
    {"an expression", true, "tenant_id,channel,out_trade_no,callback_type",
     "(deleted_at IS NULL)", true, true, false, false},
    {"a look-alike column name", true, "tenant_id,channel,out_trade_no,callback_typ",
     "(deleted_at IS NULL)", true, false, false, false},
    /* ON CONFLICT refuses a deferrable constraint as its arbiter (55000). */
    {"a DEFERRABLE constraint, no deleted_at", false,
     "tenant_id,channel,out_trade_no,callback_type", NULL, true, false, false, true},
};

static void test_rules(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const ix_case *c = &cases[i];
        unique_index ix = {.name = (char *)"ix",
                           .valid = c->valid,
                           .ready = c->valid,
                           .predicate = (char *)c->predicate,
                           .columns = (char *)c->columns,
                           .has_expressions = c->expressions,
                           .deferrable = c->deferrable};
        target t = {.has_deleted_at = c->has_deleted_at, .indexes = &ix, .n_indexes = 1};

        target_pick_index(&t);
        if ((t.key_index != NULL) != c->usable)
            fail_msg("%s: usable %d, want %d", c->why, t.key_index != NULL, c->usable);
    }
}

/* Of several, the first usable in catalog (name) order; bad ones before it
 * do not hide it. */
static void test_first_good_wins(void **state)
{
    unique_index ix[3] = {
        {.name = (char *)"a_invalid", .valid = false,
         .columns = (char *)"tenant_id,channel,out_trade_no,callback_type",
         .predicate = (char *)"(deleted_at IS NULL)"},
        {.name = (char *)"b_good", .valid = true,
         .columns = (char *)"tenant_id,channel,out_trade_no,callback_type",
         .predicate = (char *)"(deleted_at IS NULL)"},
        {.name = (char *)"c_good_too", .valid = true,
         .columns = (char *)"channel,tenant_id,out_trade_no,callback_type",
         .predicate = (char *)"(deleted_at IS NULL)"},
    };
    target t = {.has_deleted_at = true, .indexes = ix, .n_indexes = 3};

    (void)state;
    target_pick_index(&t);
    assert_non_null(t.key_index);
    assert_string_equal(t.key_index->name, "b_good");
    assert_true(ix[0].covers_key && ix[1].covers_key && ix[2].covers_key);
    t.n_indexes = 0;
    target_pick_index(&t);
    assert_null(t.key_index);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_first_good_wins),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
