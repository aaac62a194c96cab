/*
 * test_bill_facts.c - the pure parts of issue 29 (SPEC.md "Channel exports:
 * profiles"): exact decimal sums of bill amounts, the --tenant-map file,
 * a profile's money facts, totals and footers (parsed, printed, refused),
 * --kind renames and the money facts of a renamed kind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers.h"
#include "input/profile.h"
#include "input/tenant_map.h"
#include "rules/dec_total.h"

/* ---- exact sums ------------------------------------------------------------ */

/* The sum of the texts, printed with `scale` decimals. */
static void sum_is(const char *const *v, size_t n, int scale, const char *want)
{
    dect acc = {0};
    for (size_t i = 0; i < n; i++) {
        dect d;
        if (!dect_parse(v[i], strlen(v[i]), &d))
            fail_msg("'%s' not parsed", v[i]);
        assert_true(dect_add(&acc, &d));
    }
    char out[DECT_TEXT_MAX];
    dect_format(&acc, scale, out);
    assert_string_equal(out, want);
}

static void test_decimal_sums(void **state)
{
    (void)state;
    static const char *const a[] = {"99.00", "0.00", "-30.00", "0.59000"};
    sum_is(a, 4, 5, "69.59000");
    static const char *const b[] = {"25", "-0.5", "3.35"};
    sum_is(b, 3, 2, "27.85");
    static const char *const c[] = {"1234567890123456789012.10", "5.00"};
    sum_is(c, 2, 2, "1234567890123456789017.10");
    static const char *const d[] = {"-0.02000", "0.00020"};
    sum_is(d, 2, 5, "-0.01980");
    static const char *const e[] = {"0.1", "0.2"}; /* 0.30000000000000004 as doubles */
    sum_is(e, 2, 1, "0.3");
    static const char *const f[] = {"-0.01", "0.01"};
    sum_is(f, 2, 2, "0.00");
    dect x, y;
    assert_true(dect_parse("99.0", 4, &x));
    assert_true(dect_parse("+99.00000", 9, &y));
    assert_true(dect_equal(&x, &y));
    assert_true(dect_parse("99.01", 5, &y));
    assert_false(dect_equal(&x, &y));
    static const char *const refused[] = {"", "-", ".", "1.2.3", "1,000.00", "¥1", "1e5",
                                          "0.12345678901", "12345678901234567890123456789",
                                          " 1", "1 "};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (dect_parse(refused[i], strlen(refused[i]), &x))
            fail_msg("'%s' accepted", refused[i]);
    dect big;
    assert_true(dect_parse("9999999999999999999999999999", 28, &big));
    dect acc = big;
    bool ok = true;
    for (int i = 0; i < 20 && ok; i++)
        ok = dect_add(&acc, &big);
    assert_false(ok); /* overflow is refused, never wrapped */
}

/* ---- --tenant-map ----------------------------------------------------------- */

static void test_tenant_map(void **state)
{
    (void)state;
    buf err = BUF_INIT;
    const char *text = "\xef\xbb\xbfmerchant,tenant_id\r\n1900000201,11\r\n\r\n\"1900000202\", 12\r\n"
                       "1900000109,10\n1900000109,10\n";
    tenant_map *t = tenant_map_parse(text, strlen(text), "m.csv", &err);
    assert_non_null(t);
    assert_string_equal(tenant_map_get(t, "1900000201", 10), "11");
    assert_string_equal(tenant_map_get(t, "1900000202", 10), "12");
    assert_string_equal(tenant_map_get(t, "1900000109", 10), "10");
    assert_null(tenant_map_get(t, "190000020", 9));
    assert_null(tenant_map_get(t, "19000002011", 11));
    assert_null(tenant_map_get(t, "", 0));
    tenant_map_free(&t);
    assert_null(t);
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"", "empty: expected the header merchant,tenant_id"},
        {"merchant,tenant\n1,2\n", "line 1: the header must be merchant,tenant_id"},
        {"merchant,tenant_id\n1,x\n", "m.csv: line 2: "},
        {"merchant,tenant_id\n1,2,3\n", "line 2: expected two fields"},
        {"merchant,tenant_id\n,2\n", "line 2: an empty merchant"},
        {"merchant,tenant_id\n1,2\n1,3\n", "merchant 1 is given two tenants (2 and 3)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_clear(&err);
        t = tenant_map_parse(bad[i].text, strlen(bad[i].text), "m.csv", &err);
        if (t)
            fail_msg("case %zu accepted", i);
        if (!strstr(buf_cstr(&err), bad[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, buf_cstr(&err), bad[i].msg);
    }
    buf_free(&err);
}

/* ---- money facts, totals, footers, renames ---------------------------------- */

static void test_money_facts(void **state)
{
    (void)state;
    buf err = BUF_INIT;
    profile *p = profile_builtin("wechat-trade", &err);
    assert_non_null(p);
    assert_int_equal(p->n_money, 2);
    assert_string_equal(p->money[0].kind, "pay");
    /* compared: the money a callback carries (订单金额, 申请退款金额; the
     * older layout's 总金额, 退款金额); settled: 应结订单金额, 退款金额, 手续费 */
    assert_string_equal(p->money[0].amount.column, "订单金额");
    assert_string_equal(p->money[0].amount.column_alt, "总金额");
    assert_string_equal(p->money[0].currency.column, "货币种类");
    assert_null(p->money[0].fee.column);
    assert_string_equal(p->money[0].settlement.amount.column, "应结订单金额");
    assert_string_equal(p->money[0].settlement.amount.column_alt, "总金额");
    assert_string_equal(p->money[0].settlement.fee.column, "手续费");
    assert_string_equal(p->money[1].amount.column, "申请退款金额");
    assert_string_equal(p->money[1].amount.column_alt, "退款金额");
    assert_string_equal(p->money[1].settlement.amount.column, "退款金额");
    assert_false(p->money[1].amount.minor);
    assert_true(p->n_totals >= 3);
    assert_non_null(p->merchant_from);
    /* a renamed kind finds its facts through the rename */
    assert_true(profile_add_kind_rename(p, "pay", "pay_success", &err));
    assert_true(profile_add_kind_rename(p, "refund", "refund_done", &err));
    assert_ptr_equal(profile_money_for(p, "pay_success", 11), &p->money[0]);
    assert_ptr_equal(profile_money_for(p, "refund_done:RF1", 15), &p->money[1]);
    assert_ptr_equal(profile_money_for(p, "refund:RF1", 10), &p->money[1]);
    assert_null(profile_money_for(p, "revoked", 7));
    assert_false(profile_add_kind_rename(p, "pay", "x", &err));
    assert_non_null(strstr(buf_cstr(&err), "--kind pay is given twice"));
    profile_free(&p);

    p = profile_builtin("alipay-trade", &err);
    assert_string_equal(p->money[1].currency.value, "CNY");
    assert_null(p->money[1].currency.column);
    assert_true(p->money[1].amount.magnitude);
    profile_free(&p);
    p = profile_builtin("paypal-stl", &err);
    assert_true(p->money[0].amount.minor);
    assert_string_equal(p->money[0].amount.column, "Gross Transaction Amount");
    assert_true(profile_has_trailer(p)); /* footer counts: a first pass */
    /* --tenant-map needs a merchant column */
    tenant_map *t = tenant_map_parse("merchant,tenant_id\n", 19, "m", &err);
    assert_false(profile_set_tenant_map(p, t, "m", &err));
    assert_non_null(strstr(buf_cstr(&err), "names no merchant column"));
    profile_free(&p);

    /* a kind without an entry takes the kind-less one */
    const char *json = "{\"name\": \"x\", \"columns\": {\"out_trade_no\": {\"from\": \"a\"}, "
                       "\"callback_type\": {\"value\": \"pay\"}, \"received_at\": {\"from\": "
                       "\"t\"}}, \"money\": [{\"amount\": {\"column\": \"amt\", \"unit\": "
                       "\"minor\"}}, {\"kind\": \"refund\", \"amount\": {\"column\": \"r\"}}]}";
    p = profile_parse(json, strlen(json), "x.json", &err);
    assert_non_null(p);
    assert_ptr_equal(profile_money_for(p, "pay", 3), &p->money[0]);
    assert_ptr_equal(profile_money_for(p, "refund:1", 8), &p->money[1]);
    buf a = BUF_INIT;
    assert_true(profile_to_json(p, &a));
    assert_non_null(strstr(buf_cstr(&a), "\"unit\": \"minor\""));
    buf_free(&a);
    profile_free(&p);
    buf_free(&err);
}

static void test_new_members_refused(void **state)
{
    (void)state;
#define COLS "\"columns\": {\"out_trade_no\": {\"from\": \"a\"}, \"callback_type\": {\"value\": " \
             "\"pay\"}, \"received_at\": {\"from\": \"t\"}}"
    static const struct {
        const char *json;
        const char *msg;
    } cases[] = {
        {"{\"name\": \"x\", " COLS ", \"money\": {}}", "member \"money\" must be an array"},
        {"{\"name\": \"x\", " COLS ", \"money\": [{\"kind\": \"refund:{n}\"}]}",
         "member \"money[0].kind\" is a kind without ':'"},
        {"{\"name\": \"x\", " COLS ", \"money\": [{\"fee\": {\"unit\": \"minor\"}}]}",
         "member \"money[0].fee\" needs one of \"column\""},
        {"{\"name\": \"x\", " COLS ", \"money\": [{\"fee\": {\"column\": \"f\", \"unit\": 1}}]}",
         "member \"money[0].fee.unit\" must be \"major\" or \"minor\""},
        {"{\"name\": \"x\", " COLS ", \"merchant\": {\"none\": [\"0\"]}}",
         "member \"merchant.from\" is required"},
        {"{\"name\": \"x\", " COLS ", \"trailer\": {\"totals\": [{\"summary\": \"s\", \"sum\": "
         "\"c\"}]}}", "\"summary\" needs framing.end_prefix"},
        {"{\"name\": \"x\", " COLS ", \"trailer\": {\"totals\": [{\"line\": \"#\", \"sum\": "
         "\"c\"}]}}", "\"line\" needs \"label\""},
        {"{\"name\": \"x\", " COLS ", \"trailer\": {\"footers\": [{\"row_type\": \"SF\", "
         "\"counts\": \"file\"}]}}", "needs framing.row_type"},
        {"{\"name\": \"x\", \"framing\": {\"row_type\": {\"header\": \"CH\", \"data\": \"SB\"}}, "
         COLS ", \"trailer\": {\"footers\": [{\"row_type\": \"SF\", \"counts\": \"section\"}]}}",
         "\"section\" needs trailer.section_start"},
        {"{\"name\": \"x\", \"framing\": {\"row_type\": {\"header\": \"CH\", \"data\": \"SB\"}}, "
         COLS ", \"trailer\": {\"footers\": [{\"row_type\": \"SF\", \"counts\": \"week\"}]}}",
         "member \"trailer.footers[0].counts\" must be"},
        {"{\"name\": \"x\", \"columns\": {\"out_trade_no\": {\"from\": \"a\"}, \"callback_type\": "
         "{\"from\": \"k\", \"map\": {\"a\": []}}, \"received_at\": {\"from\": \"t\"}}}",
         "member \"columns.callback_type.map.a\" must not be an empty array"},
        {"{\"name\": \"x\", \"columns\": {\"out_trade_no\": {\"from\": \"a\"}, \"callback_type\": "
         "{\"value\": \"pay\", \"default\": \"x\"}, \"received_at\": {\"from\": \"t\"}}}",
         "member \"columns.callback_type.default\" goes with \"from\""},
        {"{\"name\": \"x\", \"columns\": {\"out_trade_no\": {\"from\": \"a\", \"with\": \"b\"}, "
         "\"callback_type\": {\"value\": \"pay\"}, \"received_at\": {\"from\": \"t\"}}}",
         "member \"columns.out_trade_no.with\" goes with \"map\""},
        {"{\"name\": \"x\", " COLS ", \"utc_columns\": [\"\"]}",
         "member \"utc_columns\" must hold only non-empty strings"},
    };
#undef COLS
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf err = BUF_INIT;
        profile *p = profile_parse(cases[i].json, strlen(cases[i].json), "p.json", &err);
        if (p)
            fail_msg("case %zu accepted", i);
        if (!strstr(buf_cstr(&err), cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, buf_cstr(&err), cases[i].msg);
        buf_free(&err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decimal_sums),
        cmocka_unit_test(test_tenant_map),
        cmocka_unit_test(test_money_facts),
        cmocka_unit_test(test_new_members_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
