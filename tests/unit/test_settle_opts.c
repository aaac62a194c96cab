/*
 * test_settle_opts.c - settle's own option values (settle/settle_opts.h):
 * --fee-rate CHANNEL=RATE in its three forms and the ones refused,
 * --settle-window MIN..MAX; and every statement of db/settle_sql.h
 * renders with exactly the names settle gives it (recon_sql_render's:
 * table, active, item, run, item_index, run_index), so that a stray brace
 * in a statement fails here, not at run time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "db/settle_sql.h"
#include "db/sql.h"
#include "settle/settle_opts.h"

static void test_fee_rates(void **state)
{
    (void)state;
    static const struct {
        const char *arg, *channel, *percent, *fixed;
    } good[] = {
        {"wechat=0.6%", "wechat", "0.6", "0"},
        {"stripe=2.9%+0.30", "stripe", "2.9", "0.30"},
        {"paypal=0.30", "paypal", "0", "0.30"},
        {"alipay=0.55%+0", "alipay", "0.55", "0"},
        {"x=100%", "x", "100", "0"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        fee_rate r;
        buf err = BUF_INIT;
        assert_true(settle_parse_fee_rate(good[i].arg, &r, &err));
        assert_string_equal(r.channel, good[i].channel);
        assert_string_equal(r.percent, good[i].percent);
        assert_string_equal(r.fixed, good[i].fixed);
        buf_free(&err);
    }
    static const char *const bad[] = {"wechat", "=0.6%", "wechat=", "wechat=abc", "wechat=-1%",
                                      "wechat=0.6%%", "wechat=0.6%+", "wechat=0.6%0.3",
                                      "wechat=1e3", "wechat=0.6%+0.3%", "w=0.123456789%",
                                      "wechat=."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fee_rate r;
        buf err = BUF_INIT;
        assert_false(settle_parse_fee_rate(bad[i], &r, &err));
        assert_non_null(strstr(buf_cstr(&err), "--fee-rate"));
        buf_free(&err);
    }
}

static void test_windows(void **state)
{
    (void)state;
    int64_t lo, hi;
    buf err = BUF_INIT;
    assert_true(settle_parse_window(NULL, &lo, &hi, &err));
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 3 * 86400);
    assert_true(settle_parse_window("0..3d", &lo, &hi, &err));
    assert_int_equal(hi, 3 * 86400);
    assert_true(settle_parse_window("12h..2d", &lo, &hi, &err));
    assert_int_equal(lo, 12 * 3600);
    assert_int_equal(hi, 2 * 86400);
    static const char *const bad[] = {"3d", "..3d", "0..", "3d..1d", "x..3d", "0..3w", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_clear(&err);
        assert_false(settle_parse_window(bad[i], &lo, &hi, &err));
        assert_non_null(strstr(buf_cstr(&err), "--settle-window"));
    }
    buf_free(&err);
}

static void test_statements_render(void **state)
{
    (void)state;
    const char *const stmts[] = {
        SQL_SETTLE_SETUP, SQL_SETTLE_COPY, SQL_SETTLE_RATE, SQL_SETTLE_ROWS,
        SQL_SETTLE_PERIOD, SQL_SETTLE_FEE_RATE, SQL_SETTLE_PAYOUT, SQL_SETTLE_BALANCE,
        SQL_SETTLE_BATCHES, SQL_SETTLE_BATCHES_REGISTER, SQL_SETTLE_CREDITS,
        SQL_SETTLE_MATCH_REF, SQL_SETTLE_MATCH_ONE, SQL_SETTLE_MATCH_DAY,
        SQL_SETTLE_NOT_RECEIVED, SQL_SETTLE_UNEXPECTED, SQL_SETTLE_UNSETTLED, SQL_SETTLE_DAYS,
        SQL_SETTLE_LINES, SQL_SETTLE_LINES_UNREGISTERED, SQL_SETTLE_MATCHED,
        SQL_SETTLE_REGISTER_CREATE, SQL_SETTLE_REGISTER_READABLE, SQL_SETTLE_RUN_ID,
        SQL_SETTLE_REG_SUPERSEDE, SQL_SETTLE_REG_RESOLVE, SQL_SETTLE_REG_CREDITED,
        SQL_SETTLE_REG_UPSERT, SQL_SETTLE_REG_ESCALATE, SQL_SETTLE_REG_RUNS,
        SQL_SETTLE_REG_CARRIED, SQL_SETTLE_REG_RESOLVED, SQL_SETTLE_UNSETTLED_PREP,
        SQL_SETTLE_UNSETTLED_LINKED, SQL_SETTLE_UNSETTLED_ROWS_DISTRIBUTED,
        SQL_SETTLE_UNSETTLED_DISTRIBUTED,
    };
    const char *names[] = {"table", "active", "item", "run", "item_index", "run_index"};
    const char *values[] = {"t", "true", "i", "r", "ii", "ri"};
    for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
        buf out = BUF_INIT;
        if (!sql_render(&out, stmts[i], 6, names, values))
            fail_msg("statement %zu does not render: %.80s", i, stmts[i]);
        buf_free(&out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fee_rates),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_statements_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
