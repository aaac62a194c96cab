/*
 * test_settle_channel.c - a channel's settlement-side file read through its
 * built-in profile into settle rows (settle/settle_channel.c): every field
 * of every row of each fixture (tests/fixtures/settle/, their sources in
 * its README.md; the trade bills and the PayPal STL are samples/), and the
 * files that must fail: a summary whose count or amount disagrees with the
 * rows, a balance that is no number, a kind the profile does not map, a
 * net that is not gross less fee, a footer missing.  And the settle member
 * printed by `profiles NAME` reads back the same.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers.h"
#include <jansson.h>
#include "input/profile.h"
#include "input/profile_settle.h"
#include "input/source.h"
#include "settle/settle_row.h"

static char *fixture(const char *name)
{
    const char *golden = getenv("IDEMLOAD_GOLDEN");
    assert_non_null(golden);
    char *p = malloc(strlen(golden) + strlen(name) + 32);
    assert_non_null(p);
    sprintf(p, "%s/../fixtures/settle/%s", golden, name);
    return p;
}

static char *sample(const char *name)
{
    const char *s = getenv("IDEMLOAD_SAMPLES");
    assert_non_null(s);
    return path_in(s, name);
}

/* An open file: its source, profile and reader. */
typedef struct opened {
    source *src;
    profile *pf;
    settle_reader *r;
    buf err;
} opened;

static bool open_with(opened *o, profile *pf, const char *path)
{
    memset(o, 0, sizeof *o);
    o->pf = pf;
    o->src = source_open(path, &o->err);
    assert_non_null(o->src);
    settle_read_options opt = {.profile = pf, .zone = NULL};
    o->r = settle_profile_open(o->src, path, &opt, &o->err);
    return o->r != NULL;
}

static void open_builtin(opened *o, const char *name, const char *path)
{
    buf e = BUF_INIT;
    profile *pf = profile_builtin(name, &e);
    assert_non_null(pf);
    buf_free(&e);
    if (!open_with(o, pf, path))
        fail_msg("%s: %s", path, buf_cstr(&o->err));
}

static void done(opened *o)
{
    if (o->r)
        o->r->close(o->r);
    source_close(&o->src);
    profile_free(&o->pf);
    buf_free(&o->err);
}

static read_result next(opened *o, settle_row *row)
{
    return o->r->next(o->r, row);
}

#define STR_OR_NULL(exp, got)                                                     \
    do {                                                                          \
        if ((exp) == NULL)                                                        \
            assert_null(got);                                                     \
        else {                                                                    \
            assert_non_null(got);                                                 \
            assert_string_equal(exp, got);                                        \
        }                                                                         \
    } while (0)

/* What a row must be, field by field. */
typedef struct want {
    settle_kind kind;
    const char *txn_id, *order_key, *batch_id, *time, *currency;
    const char *gross, *fee, *net, *balance, *text;
    uint64_t line;
} want;

/* The next row is w, its value_date (the batch's date where the file
 * states one) value_date. */
static void expect_row_dated(opened *o, const char *channel, const want *w,
                             const char *value_date)
{
    settle_row row;
    read_result rr = next(o, &row);
    if (rr != READ_RECORD)
        fail_msg("expected the row of line %llu, got %d: %s", (unsigned long long)w->line,
                 (int)rr, o->r->err.data ? o->r->err.data : "");
    assert_int_equal(row.side, SETTLE_SIDE_CHANNEL);
    assert_int_equal(row.kind, w->kind);
    assert_string_equal(row.tenant, "");
    assert_string_equal(row.channel, channel);
    assert_non_null(row.account);
    STR_OR_NULL(w->txn_id, row.txn_id);
    STR_OR_NULL(w->order_key, row.order_key);
    STR_OR_NULL(w->batch_id, row.batch_id);
    STR_OR_NULL(w->time, row.time);
    STR_OR_NULL(value_date, row.value_date);
    STR_OR_NULL(w->currency, row.currency);
    STR_OR_NULL(w->gross, row.gross);
    STR_OR_NULL(w->fee, row.fee);
    STR_OR_NULL(w->net, row.net);
    STR_OR_NULL(w->balance, row.balance);
    STR_OR_NULL(w->text, row.text);
    assert_int_equal(row.line, w->line);
}

static void expect_row(opened *o, const char *channel, const want *w)
{
    expect_row_dated(o, channel, w, NULL);
}

static void expect_eof(opened *o)
{
    settle_row row;
    read_result rr = next(o, &row);
    if (rr != READ_EOF)
        fail_msg("expected the end, got %d: %s", (int)rr, buf_cstr(&o->r->err));
}

/* The file fails, with a message holding each of the texts. */
static void expect_failure(opened *o, const char *a, const char *b, const char *c)
{
    settle_row row;
    read_result rr;
    while ((rr = next(o, &row)) == READ_RECORD)
        ;
    assert_int_equal(rr, READ_FAILED);
    const char *msg = buf_cstr(&o->r->err);
    const char *t[] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (t[i] && !strstr(msg, t[i]))
            fail_msg("'%s' lacks '%s'", msg, t[i]);
}

/* ---- WeChat Pay 资金账单 ----------------------------------------------------- */

static void test_wechat_fund_v3(void **state)
{
    (void)state;
    char *p = fixture("wechat-fund-2021-02-01.csv");
    opened o;
    open_builtin(&o, "wechat-fund", p);
    want rows[] = {
        {SETTLE_PAYMENT, "1900000109202102010000000001", "4200000920202101197964319284", NULL,
         "2021-02-01T13:50:02+08:00", "CNY", NULL, NULL, "0.01", "0.23", "交易", 2},
        {SETTLE_REFUND, "4200000920202101197964319284", "50300806962021020105978994968", NULL,
         "2021-02-01T13:54:01+08:00", "CNY", NULL, NULL, "-0.01", "0.22", "退款", 3},
        {SETTLE_REFUND, "4200000846202101197461830397", "50300907032021020105978998710", NULL,
         "2021-02-01T14:00:45+08:00", "CNY", NULL, NULL, "-0.01", "0.21", "退款", 4},
    };
    for (size_t i = 0; i < 3; i++)
        expect_row(&o, "wechat", &rows[i]);
    expect_eof(&o);
    done(&o);
    free(p);
}

/* WeChat's v2 layout: full-width （元）, CRLF, counts written "4.0"; a fee
 * row and a withdrawal (提现) whose batch is its 业务凭证号. */
static void test_wechat_fund_v2(void **state)
{
    (void)state;
    char *p = fixture("wechat-fund-2024-05-01.csv");
    opened o;
    open_builtin(&o, "wechat-fund", p);
    want rows[] = {
        {SETTLE_PAYMENT, "1900000109202405010000000001", "4200000001", NULL,
         "2024-05-01T10:15:02+08:00", "CNY", NULL, NULL, "99.00", "199.00", "交易", 2},
        {SETTLE_FEE, "1900000109202405010000000002", "4200000001", NULL, "2024-05-01T10:15:02+08:00",
         "CNY", NULL, NULL, "-0.59", "198.41", "扣除交易手续费", 3},
        {SETTLE_REFUND, "1900000109202405010000000003", "5030001", NULL,
         "2024-05-01T18:40:11+08:00", "CNY", NULL, NULL, "-30.00", "168.41", "退款", 4},
        {SETTLE_PAYOUT, "1900000109202405010000000004", NULL, "W2024050100001",
         "2024-05-01T23:00:00+08:00", "CNY", NULL, NULL, "-168.41", "0.00", "提现", 5},
    };
    /* A refund's 业务凭证号 (REF4200000001) is no batch: only a payout's is. */
    for (size_t i = 0; i < 4; i++)
        expect_row(&o, "wechat", &rows[i]);
    expect_eof(&o);
    done(&o);
    free(p);
}

/* A copy of the file at p (freed) with from replaced by to, named name in
 * the test's directory. */
static char *edited_at(char *p, const char *name, const char *from, const char *to)
{
    size_t n;
    unsigned char *b = read_bytes(p, &n);
    char *text = malloc(n + 1);
    assert_non_null(text);
    memcpy(text, b, n);
    text[n] = '\0';
    char *at = strstr(text, from);
    if (!at)
        fail_msg("%s has no '%s'", name, from);
    buf out = BUF_INIT;
    buf_append(&out, text, (size_t)(at - text));
    buf_append_str(&out, to);
    buf_append_str(&out, at + strlen(from));
    char *q = path_in(test_dir, name);
    write_bytes(q, out.data, out.len);
    buf_free(&out);
    free(text);
    free(b);
    free(p);
    return q;
}

static char *edited(const char *name, const char *from, const char *to)
{
    return edited_at(fixture(name), name, from, to);
}

static void fails_builtin(const char *profile_name, char *path, const char *a, const char *b,
                          const char *c)
{
    opened o;
    open_builtin(&o, profile_name, path);
    expect_failure(&o, a, b, c);
    done(&o);
    free(path);
}

/* The summary's figures are checked against the rows: the total count,
 * the count and the amount of each direction.  Each mismatch fails the
 * file, naming the figure. */
static void test_wechat_fund_summary_checked(void **state)
{
    (void)state;
    const char *f = "wechat-fund-2021-02-01.csv";
    fails_builtin("wechat-fund", edited(f, "`3,`1,`0.01,`2,`0.02", "`4,`1,`0.01,`2,`0.02"),
                  "states 4 rows (资金流水总笔数) but holds 3", NULL, NULL);
    fails_builtin("wechat-fund", edited(f, "`3,`1,`0.01,`2,`0.02", "`3,`2,`0.01,`1,`0.02"),
                  "收入笔数 2", "holds 1 in rows", NULL);
    fails_builtin("wechat-fund", edited(f, "`3,`1,`0.01,`2,`0.02", "`3,`1,`0.01,`2,`0.03"),
                  "支出金额 0.03", "add up to 0.02", NULL);
    /* a row cut from the bill */
    fails_builtin("wechat-fund",
                  edited(f, "`2021-02-01 14:00:45,`50300907032021020105978998710,"
                            "`4200000846202101197461830397,`退款,`退款,`支出,`0.01,`0.21,"
                            "`1601959334API,`退款总金额0.01元;含手续费0.00元,"
                            "`S20210201140044552846\n", ""),
                  "holds 2", NULL, NULL);
    /* the summary lost (a truncated download) */
    fails_builtin("wechat-fund",
                  edited(f, "资金流水总笔数,收入笔数,收入金额,支出笔数,支出金额\n`3,`1,`0.01,`2,"
                            "`0.02\n", ""),
                  "without stating its row count", NULL, NULL);
}

/* A balance that is no number fails the file at its line; so does a
 * direction (收支类型) the profile does not know. */
static void test_wechat_fund_bad_cells(void **state)
{
    (void)state;
    const char *f = "wechat-fund-2021-02-01.csv";
    fails_builtin("wechat-fund", edited(f, "`0.22,", "`0.2x,"), "line 3", "balance",
                  "\"0.2x\" is not an amount");
    fails_builtin("wechat-fund", edited(f, "`0.01,`0.22,", "`abc,`0.22,"), "line 3", "net",
                  "\"abc\" is not an amount");
}

/* A kind the profile's map does not name fails the file, naming the line
 * and the value: never dropped.  The built-in maps what it does not know
 * as an adjustment (money still counted); a profile without that fallback
 * refuses the row. */
static void test_unmapped_kind(void **state)
{
    (void)state;
    const char *f = "wechat-fund-2021-02-01.csv";
    char *p = edited(f, "`交易,`交易,`收入", "`分账,`分账,`收入");
    opened o;
    open_builtin(&o, "wechat-fund", p);
    settle_row row;
    assert_int_equal(next(&o, &row), READ_RECORD);
    assert_int_equal(row.kind, SETTLE_ADJUSTMENT);
    assert_string_equal(row.net, "0.01");
    done(&o);

    buf e = BUF_INIT, text = BUF_INIT;
    profile *pf = profile_builtin("wechat-fund", &e);
    assert_non_null(pf);
    assert_true(profile_to_json(pf, &text));
    profile_free(&pf);
    json_error_t je;
    json_t *root = json_loadb(text.data, text.len, 0, &je);
    assert_non_null(root);
    json_t *map = json_object_get(json_object_get(json_object_get(root, "settle"), "kind"), "map");
    assert_int_equal(json_object_del(map, "*"), 0);
    char *s = json_dumps(root, 0);
    json_decref(root);
    pf = profile_parse(s, strlen(s), "strict.json", &e);
    free(s);
    assert_non_null(pf);
    assert_true(open_with(&o, pf, p));
    expect_failure(&o, "line 2", "业务类型 \"分账\" is not a kind", NULL);
    done(&o);
    buf_free(&e);
    buf_free(&text);
    free(p);
}

/* ---- Alipay 账务明细 ------------------------------------------------------ */

static void test_alipay_account(void **state)
{
    (void)state;
    char *p = fixture("alipay-account-2012-12-29.csv");
    opened o;
    open_builtin(&o, "alipay-account", p);
    want rows[] = {
        {SETTLE_PAYOUT, "54633000000002", NULL, "2012122900000002",
         "2012-12-29T23:10:00+08:00", "CNY", NULL, NULL, "-14530.76", "0.00", NULL, 6},
        {SETTLE_FEE, "54633000000001", NULL, NULL, "2012-12-29T23:00:00+08:00", "CNY", NULL,
         NULL, "-2.27", "14530.76", "服务费", 7},
        {SETTLE_PAYMENT, "54632446537371", "3226563", NULL, "2012-12-29T21:02:06+08:00", "CNY",
         NULL, NULL, "2274.00", "14533.03", "海航机票", 8},
        {SETTLE_PAYMENT, "54629090595411", "3226533", NULL, "2012-12-29T20:31:32+08:00", "CNY",
         NULL, NULL, "393.00", "12261.39", "海航机票", 9},
        {SETTLE_PAYMENT, "54628332402591", "3226491", NULL, "2012-12-29T20:24:45+08:00", "CNY",
         NULL, NULL, "1111.00", "11875.06", "海航机票", 10},
    };
    for (size_t i = 0; i < 5; i++)
        expect_row(&o, "alipay", &rows[i]);
    expect_eof(&o);
    done(&o);
    free(p);
}

/* GBK bytes: the footers are edited in GBK too (the fixture is GBK, the
 * edit's ASCII digits are the same bytes). */
static void test_alipay_account_footers_checked(void **state)
{
    (void)state;
    const char *f = "alipay-account-2012-12-29.csv";
    fails_builtin("alipay-account", edited(f, "3778.00", "3778.01"), "共 3778.01",
                  "add up to 3778.00", NULL);
    fails_builtin("alipay-account", edited(f, "14533.03\xd4\xaa", "14533.30\xd4\xaa"),
                  "共 14533.30", "add up to 14533.03", NULL);
    /* #收入合计：3笔 -> 4笔: the count */
    fails_builtin("alipay-account", edited(f, "3\xb1\xca", "4\xb1\xca"), "states 6 rows", "holds 5",
                  NULL);
}

/* ---- Stripe ------------------------------------------------------------------ */

static void test_stripe_payout(void **state)
{
    (void)state;
    char *p = fixture("stripe-payout-2024-05-06.csv");
    opened o;
    open_builtin(&o, "stripe-payout", p);
    want rows[] = {
        {SETTLE_PAYMENT, "txn_1A", "SORD1", "po_1PAYOUT", "2024-05-01T10:00:00+00:00", "USD",
         "100.00", "3.20", "96.80", NULL, "Order SORD1", 2},
        {SETTLE_PAYMENT, "txn_1B", "SORD2", "po_1PAYOUT", "2024-05-01T11:30:00+00:00", "USD",
         "50.00", "1.75", "48.25", NULL, "Order SORD2", 3},
        {SETTLE_REFUND, "txn_1C", "SORD1", "po_1PAYOUT", "2024-05-02T09:00:00+00:00", "USD",
         "-20.00", "0.00", "-20.00", NULL, "Refund for SORD1", 4},
        {SETTLE_DISPUTE, "txn_1D", "SORD2", "po_1PAYOUT", "2024-05-02T15:00:00+00:00", "USD",
         "-15.00", "15.00", "-30.00", NULL, "Chargeback withdrawal for ch_1B", 5},
        {SETTLE_FEE, "txn_1E", NULL, "po_1PAYOUT", "2024-05-03T00:00:00+00:00", "USD", "-2.00",
         "0.00", "-2.00", NULL, "Radar (2024-05-02)", 6},
    };
    /* Each row's batch date: automatic_payout_effective_at, the day the
     * payout is expected in the bank (settle matches the credit from it). */
    for (size_t i = 0; i < 5; i++)
        expect_row_dated(&o, "stripe", &rows[i], "2024-05-06");
    expect_eof(&o);
    done(&o);
    free(p);
    /* a batch date that is no date fails the file */
    fails_builtin("stripe-payout",
                  edited("stripe-payout-2024-05-06.csv", "po_1PAYOUT,2024-05-06 00:00:00,txn_1A",
                         "po_1PAYOUT,soon,txn_1A"),
                  "line 2", "the batch's date 'soon' is no date", NULL);
    /* net must be gross less fee */
    fails_builtin("stripe-payout",
                  edited("stripe-payout-2024-05-06.csv", "100.00,3.20,96.80", "100.00,3.20,96.70"),
                  "line 2", "net 96.70 is not gross 100.00 less fee 3.20", NULL);
}

/* The balance report: a payout row is its own batch (source_id po_...). */
static void test_stripe_balance(void **state)
{
    (void)state;
    char *p = sample("bill-stripe-balance-2024-05-01.csv");
    opened o;
    open_builtin(&o, "stripe-balance", p);
    want rows[] = {
        {SETTLE_PAYMENT, "txn_1", "SORD1", NULL, "2024-05-01T10:00:00+00:00", "USD", "10.00",
         "0.59", "9.41", NULL, "Order SORD1, \"gift\"\nsecond line", 2},
        {SETTLE_REFUND, "txn_2", "SORD1", NULL, "2024-05-01T11:00:00+00:00", "USD", "-4.00",
         "0.00", "-4.00", NULL, "partial refund", 4},
        {SETTLE_REFUND, "txn_3", "SORD1", NULL, "2024-05-01T12:00:00+00:00", "USD", "-3.00",
         "0.00", "-3.00", NULL, "second partial refund", 5},
        {SETTLE_PAYOUT, "txn_4", NULL, "po_1", "2024-05-02T00:00:00+00:00", "USD", "-100.00",
         "0.00", "-100.00", NULL, "STRIPE PAYOUT", 6},
        {SETTLE_FEE, "txn_5", NULL, NULL, "2024-05-02T01:00:00+00:00", "USD", "-1.00", "0.00",
         "-1.00", NULL, "Billing", 7},
        {SETTLE_PAYMENT, "txn_6", "ch_2", NULL, "2024-05-02T02:00:00+00:00", "USD", "25.50",
         "1.04", "24.46", NULL, "no order id: keyed by charge", 8},
    };
    for (size_t i = 0; i < 6; i++)
        expect_row(&o, "stripe", &rows[i]);
    expect_eof(&o);
    done(&o);
    free(p);
}

/* ---- PayPal STL: minor units, the fee's own direction, T0400 ---------------- */

static void test_paypal_stl(void **state)
{
    (void)state;
    char *p = sample("bill-paypal-stl-2024-08-20.csv");
    opened o;
    open_builtin(&o, "paypal-stl", p);
    want rows[] = {
        {SETTLE_PAYMENT, "1AB23456CD789012E", "PINV1", NULL, "2024-08-20T00:01:17-07:00", "USD",
         "10.00", "0.30", "9.70", NULL, NULL, 5},
        {SETTLE_REFUND, "2AB23456CD789012F", "PINV1", NULL, "2024-08-20T05:00:00-07:00", "USD",
         "-3.00", "0.30", "-3.30", NULL, NULL, 6},
        {SETTLE_PAYOUT, "3AB23456CD789012G", NULL, "3AB23456CD789012G",
         "2024-08-20T06:00:00-07:00", "USD", "-50.00", "0.30", "-50.30", NULL, NULL, 7},
        {SETTLE_PAYMENT, "4AB23456CD789012H", "PCUST2", NULL, "2024-08-20T07:00:00-07:00", "USD",
         "2.50", "0.30", "2.20", NULL, NULL, 8},
    };
    for (size_t i = 0; i < 4; i++)
        expect_row(&o, "paypal", &rows[i]);
    expect_eof(&o);
    done(&o);
    free(p);
}

/* PayPal's published layout: SF and RF state the money per currency, each
 * checked against the rows of its section and of the report. */
static void test_paypal_stl_footer_money(void **state)
{
    (void)state;
    const char *f = "paypal-stl-2024-08-20.csv";
    char *p = fixture(f);
    opened o;
    open_builtin(&o, "paypal-stl", p);
    want rows[] = {
        {SETTLE_ADJUSTMENT, "1AB23456CD789012E", NULL, NULL, "2024-08-20T00:01:17-07:00",
         "USD", "-30.00", NULL, "-30.00", NULL, NULL, 5},
        {SETTLE_PAYMENT, "2AB23456CD789012F", "INV-77", NULL, "2024-08-20T01:02:05-07:00",
         "USD", "19.99", "0.88", "19.11", NULL, NULL, 6},
        {SETTLE_PAYOUT, "3AB23456CD789012G", NULL, "3AB23456CD789012G",
         "2024-08-20T18:00:00-07:00", "USD", "-19.11", NULL, "-19.11", NULL, NULL, 7},
    };
    for (size_t i = 0; i < 3; i++)
        expect_row(&o, "paypal", &rows[i]);
    expect_eof(&o);
    done(&o);
    free(p);
    fails_builtin("paypal-stl", edited(f, "\"SF\",\"USD\",1999,4911", "\"SF\",\"USD\",1999,4910"),
                  "line 8: the SF footer states USD gross debits 49.10",
                  "its section's rows add up to 49.11", NULL);
    fails_builtin("paypal-stl", edited(f, "\"RF\",\"USD\",1999,4911,0,88",
                                       "\"RF\",\"USD\",1999,4911,0,87"),
                  "line 10: the RF footer states USD fee debits 0.87",
                  "the report's rows add up to 0.88", NULL);
    /* a row's amount changed: the footers no longer agree */
    fails_builtin("paypal-stl", edited(f, "\"CR\",1999,", "\"CR\",1998,"),
                  "SF footer states USD gross credits 19.99", "add up to 19.98", NULL);
}

/* ---- the trade bills' fee columns ---------------------------------------------- */

static void test_wechat_trade(void **state)
{
    (void)state;
    char *p = sample("bill-wechat-trade-2024-05-01.csv");
    opened o;
    open_builtin(&o, "wechat-trade", p);
    want rows[] = {
        {SETTLE_PAYMENT, "4200000001", "ORD1", NULL, "2024-05-01T10:15:02+08:00", "CNY",
         "99.00", "0.59000", "98.41000", NULL, "Test item", 2},
        {SETTLE_REFUND, "5030001", "ORD1", NULL, "2024-05-01T18:40:11+08:00", "CNY", "-30.00",
         "0.00000", "-30.00000", NULL, "Test item", 3},
        {SETTLE_REFUND, "5030002", "ORD1", NULL, "2024-05-01T19:02:45+08:00", "CNY", "-20.00",
         "0.00000", "-20.00000", NULL, "Test item", 4},
        /* line 5, REVOKED: no money moved, the profile skips it */
    };
    for (size_t i = 0; i < 3; i++)
        expect_row(&o, "wechat", &rows[i]);
    expect_eof(&o);
    done(&o);
    free(p);
}

/* A trade row the profile's columns refuse (a refund state its map does
 * not know) fails the file rather than settle without it. */
static void test_trade_row_refused(void **state)
{
    (void)state;
    char *p = edited_at(sample("bill-wechat-trade-2024-05-01.csv"), "wechat.csv",
                        "`ORIGINAL,`SUCCESS,`Test item,`,`0.00000,`0.60%,`0.00,`30.00",
                        "`ORIGINAL,`WHATEVER,`Test item,`,`0.00000,`0.60%,`0.00,`30.00");
    fails_builtin("wechat-trade", p, "line 3", "退款状态 \"WHATEVER\" is not a value", NULL);
}

static void test_alipay_trade(void **state)
{
    (void)state;
    char *p = sample("bill-alipay-trade-2024-05-01.zip");
    opened o;
    open_builtin(&o, "alipay-trade", p);
    want rows[] = {
        {SETTLE_PAYMENT, "2024050122001419931400000001", "AORD1", NULL,
         "2024-05-01T10:15:09+08:00", "CNY", "99.00", "0.00", "99.00", NULL, "Test item", 6},
        {SETTLE_REFUND, "ARF1", "AORD1", NULL, "2024-05-01T18:40:11+08:00", "CNY", "-30.00",
         "0.00", "-30.00", NULL, "Test item", 7},
        {SETTLE_REFUND, "ARF2", "AORD1", NULL, "2024-05-01T19:00:00+08:00", "CNY", "-20.00",
         "0.00", "-20.00", NULL, "Test item", 8},
        {SETTLE_PAYMENT, "2024050122001419931400000002", "AORD2", NULL,
         "2024-05-01T12:00:05+08:00", "CNY", "0.59000", "0.00", "0.59000", NULL,
         "商品 带逗号", 9},
    };
    for (size_t i = 0; i < 4; i++)
        expect_row(&o, "alipay", &rows[i]);
    expect_eof(&o);
    done(&o);
    free(p);
}

/* --timezone (settle_read_options.zone) applies to local times only: a
 * fixed offset, an IANA zone at the row's date (New York in May: -04:00,
 * in January: -05:00); a column the profile declares UTC keeps Z. */
static void test_zone_override(void **state)
{
    (void)state;
    static const struct {
        const char *zone, *when, *want;
    } cases[] = {
        {"+09:00", "2024-05-01 10:00:00", "2024-05-01T10:00:00+09:00"},
        {"America/New_York", "2024-05-01 10:00:00", "2024-05-01T10:00:00-04:00"},
        {"America/New_York", "2024-01-15 23:30:00", "2024-01-15T23:30:00-05:00"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Stripe's created: in the zone the report was run in */
        char *p = edited("stripe-payout-2024-05-06.csv", "created_utc", "created");
        char *q = edited_at(p, "local.csv", "2024-05-01 10:00:00", cases[i].when);
        buf e = BUF_INIT;
        profile *pf = profile_builtin("stripe-payout", &e);
        opened o;
        memset(&o, 0, sizeof o);
        o.pf = pf;
        o.src = source_open(q, &o.err);
        assert_non_null(o.src);
        settle_read_options opt = {.profile = pf, .zone = cases[i].zone};
        o.r = settle_profile_open(o.src, q, &opt, &o.err);
        if (!o.r)
            fail_msg("%s", buf_cstr(&o.err));
        settle_row row;
        assert_int_equal(next(&o, &row), READ_RECORD);
        assert_string_equal(row.time, cases[i].want);
        done(&o);
        buf_free(&e);
        free(q);
    }
    /* the UTC column is never shifted */
    char *p = fixture("stripe-payout-2024-05-06.csv");
    buf e = BUF_INIT;
    profile *pf = profile_builtin("stripe-payout", &e);
    opened o;
    memset(&o, 0, sizeof o);
    o.pf = pf;
    o.src = source_open(p, &o.err);
    settle_read_options opt = {.profile = pf, .zone = "+09:00"};
    o.r = settle_profile_open(o.src, p, &opt, &o.err);
    assert_non_null(o.r);
    settle_row row;
    assert_int_equal(next(&o, &row), READ_RECORD);
    assert_string_equal(row.time, "2024-05-01T10:00:00+00:00");
    done(&o);
    buf_free(&e);
    free(p);
}

/* ---- the profile member ------------------------------------------------------------ */

/* `profiles NAME` prints the settle member, and the printed profile reads
 * the same file to the same rows. */
static void test_printed_profile_reads_the_same(void **state)
{
    (void)state;
    static const char *const names[] = {"wechat-fund", "alipay-account", "stripe-payout",
                                        "paypal-stl", "wechat-trade"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        buf e = BUF_INIT, a = BUF_INIT, b = BUF_INIT;
        profile *pf = profile_builtin(names[i], &e);
        assert_non_null(pf);
        assert_non_null(pf->settle);
        assert_true(profile_to_json(pf, &a));
        assert_non_null(strstr(buf_cstr(&a), "\"settle\""));
        profile *q = profile_parse(a.data, a.len, "printed.json", &e);
        if (!q)
            fail_msg("%s printed does not parse: %s", names[i], buf_cstr(&e));
        assert_true(profile_to_json(q, &b));
        assert_string_equal(buf_cstr(&a), buf_cstr(&b));
        profile_free(&pf);
        profile_free(&q);
        buf_free(&e);
        buf_free(&a);
        buf_free(&b);
    }
    /* ... and reads a file the same way */
    buf e = BUF_INIT, a = BUF_INIT;
    profile *pf = profile_builtin("wechat-fund", &e);
    assert_true(profile_to_json(pf, &a));
    profile_free(&pf);
    pf = profile_parse(a.data, a.len, "printed.json", &e);
    assert_non_null(pf);
    char *p = fixture("wechat-fund-2024-05-01.csv");
    opened o;
    assert_true(open_with(&o, pf, p));
    settle_row row;
    int n = 0;
    while (next(&o, &row) == READ_RECORD)
        n++;
    assert_int_equal(n, 4);
    done(&o);
    free(p);
    buf_free(&e);
    buf_free(&a);
}

static void refused(const char *json, const char *msg)
{
    buf e = BUF_INIT;
    profile *pf = profile_parse(json, strlen(json), "p.json", &e);
    if (pf)
        fail_msg("accepted: %s", json);
    if (!strstr(buf_cstr(&e), msg))
        fail_msg("'%s' lacks '%s'", buf_cstr(&e), msg);
    buf_free(&e);
}

static void test_settle_member_refusals(void **state)
{
    (void)state;
#define P(settle) "{\"name\": \"x\", \"columns\": {\"channel\": {\"value\": \"c\"}}, \"settle\": " settle "}"
    refused(P("5"), "member \"settle\" must be an object");
    refused(P("{\"kind\": {\"map\": {\"a\": \"payment\"}}}"), "member \"settle.side\" is required");
    refused(P("{\"side\": \"channel\", \"kind\": {\"map\": {\"a\": \"money\"}}, \"txn_id\": "
              "{\"column\": \"t\"}}"),
            "member \"settle.kind.map.a\" must be one of payment");
    refused(P("{\"side\": \"channel\", \"kind\": {\"map\": {\"a\": \"payment\"}}, \"time\": "
              "{\"column\": \"t\"}, \"currency\": {\"value\": \"CNY\"}, \"net\": {\"column\": "
              "\"n\"}}"),
            "member \"settle.txn_id\" is required");
    refused(P("{\"side\": \"channel\", \"kind\": {\"map\": {\"a\": \"payment\"}}, \"txn_id\": "
              "{\"column\": \"i\"}, \"time\": {\"column\": \"t\"}, \"currency\": {\"value\": "
              "\"CNY\"}, \"net\": {\"in\": \"a\"}}"),
            "member \"settle.net\" needs both in and out");
    refused(P("{\"side\": \"channel\", \"kind\": {\"map\": {\"a\": \"payment\"}}, \"txn_id\": "
              "{\"column\": \"i\"}, \"time\": {\"column\": \"t\"}, \"currency\": {\"value\": "
              "\"CNY\"}, \"net\": {\"money\": \"tip\"}}"),
            "member \"settle.net\" names no money fact");
    refused(P("{\"side\": \"bank\", \"kind\": {\"map\": {\"a\": \"payment\"}}}"),
            "member \"settle.kind\" is not for a bank file");
    refused(P("{\"side\": \"channel\", \"kind\": {\"map\": {\"a\": \"payment\"}}, \"txn_id\": "
              "{\"column\": \"i\"}, \"time\": {\"column\": \"t\"}, \"currency\": {\"value\": "
              "\"CNY\"}, \"net\": {\"column\": \"n\"}, \"nett\": 1}"),
            "member \"settle.nett\" is not a member");
#undef P
    /* without settle, the key columns stay required */
    refused("{\"name\": \"x\", \"columns\": {\"channel\": {\"value\": \"c\"}}}",
            "member \"columns.out_trade_no\" is required");
}

/* A bank CSV through a profile: credits and debits by their sign. */
static void test_bank_csv_profile(void **state)
{
    (void)state;
    static const char json[] =
        "{\"name\": \"bank-csv\", \"timezone\": \"+01:00\", \"cleanup\": {\"trim\": true}, "
        "\"columns\": {}, \"settle\": {\"side\": \"bank\", \"txn_id\": {\"column\": \"Ref\"}, "
        "\"batch_id\": {\"column\": \"Remittance\"}, \"time\": {\"column\": \"Booked\"}, "
        "\"currency\": {\"column\": \"Ccy\"}, \"net\": {\"column\": \"Amount\"}, "
        "\"balance\": {\"column\": \"Balance\"}, \"account\": {\"column\": \"IBAN\"}}}";
    buf e = BUF_INIT;
    profile *pf = profile_parse(json, sizeof json - 1, "bank.json", &e);
    if (!pf)
        fail_msg("%s", buf_cstr(&e));
    assert_true(profile_settle_only(pf));
    char *p = path_in(test_dir, "bank.csv");
    static const char csv[] = "Booked,Ref,Remittance,Ccy,Amount,Balance,IBAN\n"
                              "2024-05-06,B1,po_1PAYOUT,USD,93.05,1093.05,DE89370400440532013000\n"
                              "2024-05-07,B2,,USD,-10.00,1083.05,DE89370400440532013000\n";
    write_bytes(p, csv, sizeof csv - 1);
    opened o;
    assert_true(open_with(&o, pf, p));
    settle_row row;
    assert_int_equal(next(&o, &row), READ_RECORD);
    assert_int_equal(row.side, SETTLE_SIDE_BANK);
    assert_int_equal(row.kind, SETTLE_BANK_CREDIT);
    assert_string_equal(row.channel, "bank");
    assert_string_equal(row.account, "DE89370400440532013000");
    assert_string_equal(row.txn_id, "B1");
    assert_string_equal(row.batch_id, "po_1PAYOUT");
    assert_string_equal(row.time, "2024-05-06");
    assert_null(row.gross);
    assert_null(row.fee);
    assert_string_equal(row.net, "93.05");
    assert_string_equal(row.balance, "1093.05");
    assert_int_equal(next(&o, &row), READ_RECORD);
    assert_int_equal(row.kind, SETTLE_BANK_DEBIT);
    assert_string_equal(row.net, "-10.00");
    assert_null(row.batch_id);
    expect_eof(&o);
    done(&o);
    free(p);
    buf_free(&e);
}

/* A profile whose header lacks the settle columns is refused at open. */
static void test_header_not_the_profiles(void **state)
{
    (void)state;
    char *p = sample("bill-stripe-balance-2024-05-01.csv");
    buf e = BUF_INIT;
    profile *pf = profile_builtin("wechat-fund", &e);
    opened o;
    assert_false(open_with(&o, pf, p));
    assert_non_null(strstr(buf_cstr(&o.err), "bill-stripe-balance-2024-05-01.csv"));
    done(&o);
    /* a profile without a settle member */
    static const char json[] = "{\"name\": \"plain\", \"columns\": {\"out_trade_no\": {\"from\": "
                               "[\"o\"]}, \"callback_type\": {\"value\": \"pay\"}, "
                               "\"received_at\": {\"from\": [\"t\"]}}}";
    pf = profile_parse(json, sizeof json - 1, "plain.json", &e);
    assert_non_null(pf);
    assert_false(profile_settle_only(pf));
    assert_false(open_with(&o, pf, p));
    assert_non_null(strstr(buf_cstr(&o.err), "says nothing of settlement"));
    done(&o);
    buf_free(&e);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wechat_fund_v3),
        cmocka_unit_test(test_wechat_fund_v2),
        cmocka_unit_test(test_wechat_fund_summary_checked),
        cmocka_unit_test(test_wechat_fund_bad_cells),
        cmocka_unit_test(test_unmapped_kind),
        cmocka_unit_test(test_alipay_account),
        cmocka_unit_test(test_alipay_account_footers_checked),
        cmocka_unit_test(test_stripe_payout),
        cmocka_unit_test(test_stripe_balance),
        cmocka_unit_test(test_paypal_stl),
        cmocka_unit_test(test_paypal_stl_footer_money),
        cmocka_unit_test(test_wechat_trade),
        cmocka_unit_test(test_alipay_trade),
        cmocka_unit_test(test_trade_row_refused),
        cmocka_unit_test(test_zone_override),
        cmocka_unit_test(test_printed_profile_reads_the_same),
        cmocka_unit_test(test_settle_member_refusals),
        cmocka_unit_test(test_bank_csv_profile),
        cmocka_unit_test(test_header_not_the_profiles),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
