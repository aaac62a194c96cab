/*
 * test_recon_facts.c - reconcile's pure parts (recon/facts.h): the --facts
 * file resolved level by level (kind, channel, default, built-in), its
 * errors; the statement's facts of a canonical file and of a profile built
 * by hand (the column as one payload member, minor units, magnitude, a
 * constant currency, a --kind rename); the paths as text[] literals; ISO
 * 4217 exponents; --period and --grace.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "input/profile.h"
#include "recon/facts.h"

static const facts_entry *entry(const facts_map *m, const char *channel, const char *kind)
{
    for (size_t i = 0; i < m->n; i++) {
        const facts_entry *e = &m->e[i];
        if (((!channel && !e->channel) || (channel && e->channel && !strcmp(channel, e->channel))) &&
            ((!kind && !e->kind) || (kind && e->kind && !strcmp(kind, e->kind))))
            return e;
    }
    return NULL;
}

static void test_facts_levels(void **state)
{
    (void)state;
    const char *json =
        "{\"default\": {\"fee\": {\"path\": \"fee\", \"unit\": \"minor\"}},"
        " \"channels\": {\"wechat\": {\"amount\": {\"path\": \"amount.total\", \"unit\": \"minor\"},"
        "   \"currency\": {\"path\": \"amount.currency\"}, \"time\": {\"path\": \"success_time\"},"
        "   \"kinds\": {\"refund\": {\"amount\": {\"path\": \"amount.refund\", \"unit\": \"minor\"}}}},"
        "  \"paypal\": {\"currency\": {\"value\": \"USD\"}}}}";
    facts_map m;
    buf err = BUF_INIT;
    assert_true(facts_parse(json, strlen(json), "t", &m, &err));
    const facts_entry *d = entry(&m, NULL, NULL);
    assert_non_null(d);
    assert_string_equal(d->f[FACT_AMOUNT].path, "amount");     /* built-in default */
    assert_false(d->f[FACT_AMOUNT].minor);
    assert_string_equal(d->f[FACT_CURRENCY].path, "currency");
    assert_string_equal(d->f[FACT_FEE].path, "fee");
    assert_null(d->f[FACT_TIME].path);
    const facts_entry *w = entry(&m, "wechat", NULL);
    assert_non_null(w);
    assert_string_equal(w->f[FACT_AMOUNT].path, "amount.total");
    assert_true(w->f[FACT_AMOUNT].minor);
    assert_string_equal(w->f[FACT_FEE].path, "fee");            /* from the default */
    assert_string_equal(w->f[FACT_TIME].path, "success_time");
    const facts_entry *r = entry(&m, "wechat", "refund");
    assert_non_null(r);
    assert_string_equal(r->f[FACT_AMOUNT].path, "amount.refund");
    assert_string_equal(r->f[FACT_CURRENCY].path, "amount.currency"); /* from the channel */
    assert_string_equal(r->f[FACT_TIME].path, "success_time");
    const facts_entry *p = entry(&m, "paypal", NULL);
    assert_non_null(p);
    assert_string_equal(p->f[FACT_CURRENCY].constant, "USD");
    assert_null(p->f[FACT_CURRENCY].path);
    facts_free(&m);
    assert_true(facts_load(NULL, &m, &err));
    assert_int_equal(m.n, 1);
    facts_free(&m);
    buf_free(&err);
}

static void test_facts_errors(void **state)
{
    (void)state;
    const char *bad[] = {
        "[]", "{\"x\": {}}", "{\"default\": {\"amount\": 5}}",
        "{\"default\": {\"amount\": {\"unit\": \"minor\"}}}",
        "{\"default\": {\"amount\": {\"path\": \"a\", \"unit\": \"cents\"}}}",
        "{\"default\": {\"colour\": {\"path\": \"a\"}}}",
        "{\"channels\": {\"w\": {\"kinds\": {\"r\": {\"kinds\": {}}}}}}", "{", "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        facts_map m;
        buf err = BUF_INIT;
        assert_false(facts_parse(bad[i], strlen(bad[i]), "bad.json", &m, &err));
        assert_non_null(strstr(buf_cstr(&err), "bad.json"));
        buf_free(&err);
    }
    facts_map m;
    buf err = BUF_INIT;
    assert_false(facts_load("/nonexistent/facts.json", &m, &err));
    buf_free(&err);
}

static void test_path_literal(void **state)
{
    (void)state;
    buf out = BUF_INIT;
    fact_loc l = {.path = "amount.total"};
    assert_true(fact_path_literal(&l, &out));
    assert_string_equal(buf_cstr(&out), "{\"amount\",\"total\"}");
    buf_clear(&out);
    fact_loc one = {.path = "订单金额(元).x\"\\", .one_member = true};
    assert_true(fact_path_literal(&one, &out));
    assert_string_equal(buf_cstr(&out), "{\"订单金额(元).x\\\"\\\\\"}");
    buf_free(&out);
}

static void test_statement_facts(void **state)
{
    (void)state;
    stmt_facts sf;
    assert_true(stmt_facts_from_profile(NULL, NULL, &sf));
    assert_int_equal(sf.n, 1);
    assert_null(sf.e[0].kind);
    assert_string_equal(sf.e[0].f[FACT_AMOUNT].path, "amount");
    assert_false(sf.e[0].f[FACT_AMOUNT].minor);
    assert_string_equal(sf.e[0].f[FACT_CURRENCY].path, "currency");
    assert_false(fact_declared(&sf.e[0].f[FACT_FEE]));
    stmt_facts_free(&sf);

    /* A profile by hand: pay in yuan, refund signed, PayPal-like cents. */
    money_kind mk[2] = {
        {.kind = "pay", .amount = {.column = "订单金额"}, .currency = {.value = "CNY"},
         .fee = {.column = "手续费"}},
        {.kind = "refund", .amount = {.column = "退款金额", .minor = true, .magnitude = true},
         .currency = {.value = "CNY"}},
    };
    profile p = {.name = "hand", .money = mk, .n_money = 2};
    config cfg;
    config_defaults(&cfg);
    snprintf(cfg.kind_rename[0].from, sizeof cfg.kind_rename[0].from, "refund");
    cfg.kind_rename[0].to = "return";
    cfg.n_kind_rename = 1;
    assert_true(stmt_facts_from_profile(&p, &cfg, &sf));
    assert_int_equal(sf.n, 2);
    assert_string_equal(sf.e[0].kind, "pay");
    assert_string_equal(sf.e[0].f[FACT_AMOUNT].path, "订单金额");
    assert_true(sf.e[0].f[FACT_AMOUNT].one_member);
    assert_string_equal(sf.e[0].f[FACT_CURRENCY].constant, "CNY");
    assert_string_equal(sf.e[0].f[FACT_FEE].path, "手续费");
    assert_string_equal(sf.e[1].kind, "return");     /* the name the rows carry */
    assert_true(sf.e[1].f[FACT_AMOUNT].minor);
    assert_true(sf.e[1].f[FACT_AMOUNT].magnitude);
    assert_false(fact_declared(&sf.e[1].f[FACT_FEE]));
    stmt_facts_free(&sf);
}

static void test_exponents(void **state)
{
    (void)state;
    assert_int_equal(currency_exponent("CNY"), 2);
    assert_int_equal(currency_exponent("usd"), 2);
    assert_int_equal(currency_exponent("JPY"), 0);
    assert_int_equal(currency_exponent("KRW"), 0);
    assert_int_equal(currency_exponent("KWD"), 3);
    assert_int_equal(currency_exponent("BHD"), 3);
    assert_int_equal(currency_exponent("XXX"), -1);
    const char *code;
    int e;
    size_t n = 0;
    while (currency_exponent_at(n, &code, &e))
        n++;
    assert_true(n > 20);
}

static void test_period_grace(void **state)
{
    (void)state;
    char from[11], to[11];
    buf err = BUF_INIT;
    assert_true(recon_parse_period("2026-11-28", from, to, &err));
    assert_string_equal(from, "2026-11-28");
    assert_string_equal(to, "2026-11-28");
    assert_true(recon_parse_period("2024-02-28..2024-02-29", from, to, &err));
    assert_string_equal(to, "2024-02-29");
    const char *bad[] = {"2026-02-29", "2026-13-01", "2026-11-3", "2026-11-28..", "..2026-11-28",
                         "2026-11-29..2026-11-28", "yesterday", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_clear(&err);
        assert_false(recon_parse_period(bad[i], from, to, &err));
        assert_true(err.len > 0);
    }
    int64_t s;
    assert_true(recon_parse_duration("2d", &s, &err));
    assert_int_equal(s, 172800);
    assert_true(recon_parse_duration("36h", &s, &err));
    assert_int_equal(s, 129600);
    assert_true(recon_parse_duration("90m", &s, &err));
    assert_int_equal(s, 5400);
    assert_true(recon_parse_duration("0m", &s, &err));
    assert_int_equal(s, 0);
    const char *badd[] = {"2", "d", "2w", "-1d", "1.5d", "2 d", ""};
    for (size_t i = 0; i < sizeof badd / sizeof badd[0]; i++)
        assert_false(recon_parse_duration(badd[i], &s, &err));
    buf_free(&err);
}

/* Members that contradict each other, or mean nothing for their fact, are
 * refused naming the member (SPEC: "path" and "value", a "unit" on time). */
static void test_facts_odd_members(void **state)
{
    (void)state;
    static const struct {
        const char *json, *named;
    } odd[] = {
        {"{\"default\": {\"amount\": {\"path\": \"a\", \"value\": \"1\"}}}",
         "default.amount.value"},
        {"{\"default\": {\"currency\": {\"value\": \"CNY\", \"path\": \"c\"}}}",
         "default.currency.value"},
        {"{\"channels\": {\"w\": {\"time\": {\"path\": \"t\", \"unit\": \"minor\"}}}}",
         "channels.w.time.unit"},
        {"{\"default\": {\"time\": {\"path\": \"t\", \"unit\": \"major\"}}}",
         "default.time.unit"},
        {"{\"channels\": {\"w\": {\"kinds\": {\"refund\": {\"currency\": {\"path\": \"c\", "
         "\"magnitude\": true}}}}}}",
         "channels.w.kinds.refund.currency.magnitude"},
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        facts_map m;
        buf err = BUF_INIT;
        assert_false(facts_parse(odd[i].json, strlen(odd[i].json), "odd.json", &m, &err));
        if (!strstr(buf_cstr(&err), odd[i].named))
            fail_msg("%s: the message does not name %s: %s", odd[i].json, odd[i].named,
                     buf_cstr(&err));
        buf_free(&err);
    }
}

/* A --facts file over 1 MiB is refused before it is parsed, naming it and
 * the bound; one just under it (thousands of channels) is read whole. */
static void test_facts_bounded(void **state)
{
    (void)state;
    char path[] = "/tmp/idemload-facts-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fputs("{\"channels\": {", fp);
    size_t n = 0;
    long len = 0;
    for (; len < FACTS_MAX_BYTES - 200; n++)
        len += fprintf(fp, "%s\"c%zu\": {\"amount\": {\"path\": \"amount.total\", \"unit\": "
                           "\"minor\"}}", n ? ", " : "", n);
    fputs("}}", fp);
    fclose(fp);
    facts_map m;
    buf err = BUF_INIT;
    assert_true(facts_load(path, &m, &err));
    assert_int_equal(m.n, n + 1); /* the default entry and one per channel */
    facts_free(&m);
    /* past the bound: refused, the file and the bound named */
    fp = fopen(path, "a");
    assert_non_null(fp);
    for (int i = 0; i < 1000; i++)
        fputs("          ", fp);
    fclose(fp);
    assert_false(facts_load(path, &m, &err));
    assert_non_null(strstr(buf_cstr(&err), path));
    assert_non_null(strstr(buf_cstr(&err), "1 MiB"));
    unlink(path);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts_levels),   cmocka_unit_test(test_facts_errors),
        cmocka_unit_test(test_path_literal),   cmocka_unit_test(test_statement_facts),
        cmocka_unit_test(test_exponents),      cmocka_unit_test(test_period_grace),
        cmocka_unit_test(test_facts_odd_members), cmocka_unit_test(test_facts_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
