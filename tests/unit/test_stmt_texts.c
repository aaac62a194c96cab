/*
 * test_stmt_texts.c - a statement row's money texts on the client
 * (recon/stmt_texts.h): the level the server would pick for the row's
 * kind, each text its constant, its path or its older layout's path, and
 * the whole row left to the server when one path's value only the server
 * can read (json_path.h's answers are checked against PostgreSQL by
 * test_json_path and tests/db/test_json_path_pg.sh; that the server reads
 * such rows alike is tests/db/test_reconcile_staged_texts.sh).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "recon/facts.h"
#include "recon/stmt_texts.h"

/* Two levels: refunds (amount in minor units at refund_fee, a constant
 * currency, the record id in a member whose name holds a dot), and every
 * other kind (amount, else total; currency; fee at fees.total). */
static stmt_facts_entry entries[2];
static stmt_facts facts = {entries, 2};

static void setup_facts(void)
{
    memset(entries, 0, sizeof entries);
    entries[0].kind = "refund";
    entries[0].f[FACT_AMOUNT].path = "refund_fee";
    entries[0].f[FACT_AMOUNT].minor = true;
    entries[0].f[FACT_CURRENCY].constant = "CNY";
    entries[0].record.path = "trade.id";
    entries[0].record.one_member = true;
    entries[1].f[FACT_AMOUNT].path = "amount";
    entries[1].f[FACT_AMOUNT].path_alt = "total";
    entries[1].f[FACT_CURRENCY].path = "currency";
    entries[1].f[FACT_FEE].path = "fees.total";
    entries[1].f[FACT_FEE].magnitude = true;
}

static copy_recon_lead texts_of(const char *kind, const char *payload)
{
    setup_facts();
    stmt_texts *p = stmt_texts_new(&facts);
    assert_non_null(p);
    copy_recon_lead t;
    stmt_texts_of_row(p, kind, strlen(kind), payload, strlen(payload), &t);
    stmt_texts_free(p);
    return t;
}

static void assert_text(const copy_recon_lead *t, int k, const char *want)
{
    if (!want) {
        assert_null(t->text[k]);
        return;
    }
    assert_non_null(t->text[k]);
    assert_int_equal(t->len[k], strlen(want));
    assert_memory_equal(t->text[k], want, strlen(want));
}

static void test_other_kinds_take_the_default_level(void **state)
{
    (void)state;
    copy_recon_lead t = texts_of("pay:2", "{\"amount\": \"1.00\", \"currency\": \"USD\","
                                          " \"fees\": {\"total\": 0.50}}");
    assert_int_equal(t.level, 1);
    assert_false(t.server);
    assert_text(&t, STMT_AMOUNT, "1.00");
    assert_text(&t, STMT_CURRENCY, "USD");
    assert_text(&t, STMT_FEE, "0.50");
    assert_text(&t, STMT_RECORD, NULL);
}

static void test_a_kind_takes_its_own_level(void **state)
{
    (void)state;
    /* the part before ':' is the kind; the constant wins; the record's
     * member is named with its dot, not split */
    copy_recon_lead t = texts_of("refund:1", "{\"refund_fee\": 150, \"currency\": \"USD\","
                                             " \"trade.id\": \"T-1\", \"trade\": {\"id\": 9}}");
    assert_int_equal(t.level, 0);
    assert_false(t.server);
    assert_text(&t, STMT_AMOUNT, "150");
    assert_text(&t, STMT_CURRENCY, "CNY");
    assert_text(&t, STMT_FEE, NULL);
    assert_text(&t, STMT_RECORD, "T-1");
    t = texts_of("refunds", "{\"amount\": \"2\"}");
    assert_int_equal(t.level, 1);
}

/* The amount and fee staged as numbers too: a plain decimal in the major
 * unit, with the level's magnitude; nothing for one in minor units, a
 * dressed text or one the server reads. */
static void test_plain_major_amounts_are_numbers_too(void **state)
{
    (void)state;
    copy_recon_lead t = texts_of("pay", "{\"amount\": \"-1.00\", \"fees\": {\"total\": -0.5}}");
    assert_non_null(t.num[0]);
    assert_memory_equal(t.num[0], "-1.00", t.num_len[0]);
    assert_int_equal(t.num_len[0], 5);
    assert_false(t.magnitude[0]);
    assert_non_null(t.num[1]);
    assert_memory_equal(t.num[1], "-0.5", t.num_len[1]);
    assert_true(t.magnitude[1]);
    t = texts_of("pay", "{\"amount\": \"¥1,234.50\", \"fees\": {\"total\": \"1.\"}}");
    assert_null(t.num[0]);
    assert_null(t.num[1]);
    t = texts_of("refund:1", "{\"refund_fee\": 150}");
    assert_text(&t, STMT_AMOUNT, "150");
    assert_null(t.num[0]);
    t = texts_of("pay", "{\"amount\": 1e3}");
    assert_true(t.server);
    assert_null(t.num[0]);
}

static void test_the_older_layout_when_the_path_finds_nothing(void **state)
{
    (void)state;
    copy_recon_lead t = texts_of("pay", "{\"total\": \"7.00\", \"currency\": null}");
    assert_false(t.server);
    assert_text(&t, STMT_AMOUNT, "7.00");
    assert_text(&t, STMT_CURRENCY, NULL);
    /* the path's value, even empty, is taken: the older member is not read */
    t = texts_of("pay", "{\"amount\": \"\", \"total\": 1e2}");
    assert_false(t.server);
    assert_text(&t, STMT_AMOUNT, "");
    /* a JSON null at the path reads the older member, here a number
     * only the server prints */
    t = texts_of("pay", "{\"amount\": null, \"total\": 1e2, \"currency\": \"CNY\"}");
    assert_true(t.server);
}

static void test_what_only_the_server_reads_leaves_it_the_row(void **state)
{
    (void)state;
    static const char *const payloads[] = {
        "{\"amount\": \"1.00\", \"currency\": \"\\u0043NY\"}",
        "{\"amount\": 1.5e3, \"currency\": \"CNY\"}",
        "{\"amount\": -0.00, \"currency\": \"CNY\"}",
        "{\"amount\": {\"value\": 1}, \"currency\": \"CNY\"}",
        "{\"am\\u006fount\": \"1.00\", \"currency\": \"CNY\"}",
        "{\"amount\": \"1.00\", \"currency\": \"CNY\", \"fees\": [1]}",
    };
    for (size_t i = 0; i < sizeof payloads / sizeof *payloads; i++) {
        copy_recon_lead t = texts_of("pay", payloads[i]);
        assert_true(t.server);
        assert_int_equal(t.level, 1);
        for (int k = 0; k < STMT_NTEXTS; k++)
            assert_null(t.text[k]);
    }
    /* the last of a key listed twice, as jsonb keeps it */
    copy_recon_lead t = texts_of("pay", "{\"amount\": \"1\", \"amount\": \"2\"}");
    assert_false(t.server);
    assert_text(&t, STMT_AMOUNT, "2");
}

static void test_no_level_no_texts(void **state)
{
    (void)state;
    setup_facts();
    stmt_facts only_refunds = {entries, 1};
    stmt_texts *p = stmt_texts_new(&only_refunds);
    assert_non_null(p);
    copy_recon_lead t;
    stmt_texts_of_row(p, "pay", 3, "{\"amount\": 1}", 13, &t);
    assert_int_equal(t.level, -1);
    assert_false(t.server);
    for (int k = 0; k < STMT_NTEXTS; k++)
        assert_null(t.text[k]);
    stmt_texts_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_kinds_take_the_default_level),
        cmocka_unit_test(test_a_kind_takes_its_own_level),
        cmocka_unit_test(test_the_older_layout_when_the_path_finds_nothing),
        cmocka_unit_test(test_what_only_the_server_reads_leaves_it_the_row),
        cmocka_unit_test(test_no_level_no_texts),
        cmocka_unit_test(test_plain_major_amounts_are_numbers_too),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
