/*
 * test_bank_statement.c - bank statements through source_open() and
 * bank_statement_open(): camt.053 (.001.02, .001.04, .001.08) and MT940
 * (ABN AMRO, Rabobank, Citi, SWIFT-block, 8-bit) fixtures derived from
 * public files (tests/fixtures/settle/README.md names each source), every
 * row's fields checked; statements whose figures disagree (a real one among
 * them), truncated files and hostile XML (external entities to a file and
 * to http://, a parameter entity, the billion laughs, 10,000 levels of
 * nesting, a 12 MB text node) fail with a message naming what is wrong, and
 * nothing outside the file is ever read or fetched.
 *
 * The fixtures' directory comes from IDEMLOAD_FIXTURES (tests/CMakeLists.txt).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <libxml/parser.h>
#include <libxml/xmlIO.h>

#include "helpers.h"
#include "settle/bank_impl.h"
#include "settle/settle_row.h"

/* One expected row: kind 'C' credit or 'D' debit; NULL where the row's
 * field must be NULL. */
typedef struct exp_row {
    char kind;
    const char *account, *txn_id, *batch_id, *time, *value_date, *currency, *net, *text;
    uint64_t line;
} exp_row;

#define ROWS_MAX 16

typedef struct got_rows {
    size_t n;
    exp_row rows[ROWS_MAX];     /* copies, strdup'ed */
    read_result end;
    char *error;                /* the reader's message at the end, or the open's */
    bool opened;
} got_rows;

static char *fixture(const char *name)
{
    const char *dir = getenv("IDEMLOAD_FIXTURES");
    char *p;

    if (dir == NULL)
        dir = "tests/fixtures";
    p = malloc(strlen(dir) + strlen(name) + 16);
    assert_non_null(p);
    sprintf(p, "%s/settle/%s", dir, name);
    return p;
}

static char *dup_or_null(const char *s)
{
    char *d;

    if (s == NULL)
        return NULL;
    d = strdup(s);
    assert_non_null(d);
    return d;
}

/* Reads path to its end (or failure), copying every row. */
static void read_statement(const char *path, got_rows *g)
{
    buf err = BUF_INIT;
    source *src;
    settle_reader *r;
    settle_row row;

    memset(g, 0, sizeof *g);
    src = source_open(path, &err);
    assert_non_null(src);
    r = bank_statement_open(src, path, NULL, &err);
    if (r == NULL) {
        g->end = READ_FAILED;
        g->error = strdup(buf_cstr(&err));
        source_close(&src);
        buf_free(&err);
        return;
    }
    g->opened = true;
    for (;;) {
        read_result res = r->next(r, &row);

        if (res != READ_RECORD) {
            g->end = res;
            g->error = strdup(buf_cstr(&r->err));
            /* it stays where it stopped */
            assert_int_equal(r->next(r, &row), res);
            break;
        }
        assert_true(g->n < ROWS_MAX);
        /* what every bank row is */
        assert_int_equal(row.side, SETTLE_SIDE_BANK);
        assert_string_equal(row.tenant, "");
        assert_string_equal(row.channel, "bank");
        assert_null(row.order_key);
        assert_null(row.gross);
        assert_null(row.fee);
        assert_null(row.balance);
        assert_non_null(row.txn_id);
        assert_non_null(row.net);
        assert_true(row.kind == SETTLE_BANK_CREDIT || row.kind == SETTLE_BANK_DEBIT);
        assert_int_equal(row.kind == SETTLE_BANK_DEBIT, row.net[0] == '-');
        exp_row *e = &g->rows[g->n++];
        e->kind = row.kind == SETTLE_BANK_CREDIT ? 'C' : 'D';
        e->account = dup_or_null(row.account);
        e->txn_id = dup_or_null(row.txn_id);
        e->batch_id = dup_or_null(row.batch_id);
        e->time = dup_or_null(row.time);
        e->value_date = dup_or_null(row.value_date);
        e->currency = dup_or_null(row.currency);
        e->net = dup_or_null(row.net);
        e->text = dup_or_null(row.text);
        e->line = row.line;
    }
    r->close(r);
    source_close(&src);
    buf_free(&err);
}

static void got_free(got_rows *g)
{
    for (size_t i = 0; i < g->n; i++) {
        exp_row *e = &g->rows[i];
        free((char *)e->account);
        free((char *)e->txn_id);
        free((char *)e->batch_id);
        free((char *)e->time);
        free((char *)e->value_date);
        free((char *)e->currency);
        free((char *)e->net);
        free((char *)e->text);
    }
    free(g->error);
}

static void check_field(const char *file, size_t i, const char *what, const char *want,
                        const char *got)
{
    if (want == NULL && got == NULL)
        return;
    if (want != NULL && got != NULL && strcmp(want, got) == 0)
        return;
    fail_msg("%s, row %zu: %s is \"%s\", expected \"%s\"", file, i + 1, what,
             got ? got : "(NULL)", want ? want : "(NULL)");
}

static void check_rows(const char *file, const got_rows *g, const exp_row *want, size_t n)
{
    if (g->n != n)
        fail_msg("%s: %zu rows, expected %zu (%s)", file, g->n, n, g->error ? g->error : "");
    for (size_t i = 0; i < n; i++) {
        const exp_row *w = &want[i], *e = &g->rows[i];
        if (w->kind != e->kind)
            fail_msg("%s, row %zu: kind %c, expected %c", file, i + 1, e->kind, w->kind);
        check_field(file, i, "account", w->account, e->account);
        check_field(file, i, "txn_id", w->txn_id, e->txn_id);
        check_field(file, i, "batch_id", w->batch_id, e->batch_id);
        check_field(file, i, "time", w->time, e->time);
        check_field(file, i, "value_date", w->value_date, e->value_date);
        check_field(file, i, "currency", w->currency, e->currency);
        check_field(file, i, "net", w->net, e->net);
        check_field(file, i, "text", w->text, e->text);
        if (w->line != e->line)
            fail_msg("%s, row %zu: line %llu, expected %llu", file, i + 1,
                     (unsigned long long)e->line, (unsigned long long)w->line);
    }
}

/* The fixture read whole: exactly these rows, then READ_EOF. */
static void expect_rows(const char *name, const exp_row *want, size_t n)
{
    char *path = fixture(name);
    got_rows g;

    read_statement(path, &g);
    if (g.end != READ_EOF)
        fail_msg("%s: failed: %s", name, g.error ? g.error : "");
    assert_string_equal(g.error, "");
    check_rows(name, &g, want, n);
    got_free(&g);
    free(path);
}

/* The file fails (at the open or while read), its message holding each of
 * the NULL-terminated texts; returns how many rows came before. */
static size_t expect_failure_path(const char *path, const char *name, ...)
{
    got_rows g;
    va_list ap;
    const char *want;
    size_t n;

    read_statement(path, &g);
    if (g.end != READ_FAILED)
        fail_msg("%s: read to its end (%zu rows), expected a failure", name, g.n);
    assert_non_null(g.error);
    va_start(ap, name);
    while ((want = va_arg(ap, const char *)) != NULL)
        if (strstr(g.error, want) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\"", name, g.error, want);
    va_end(ap);
    n = g.n;
    got_free(&g);
    return n;
}

#define expect_failure(name, ...)                                        \
    do {                                                                 \
        char *p_ = fixture(name);                                        \
        expect_failure_path(p_, name, __VA_ARGS__, (const char *)NULL);  \
        free(p_);                                                        \
    } while (0)

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- camt.053 ------------------------------------------------------------ */

static void test_camt_v02(void **state)
{
    (void)state;
    static const exp_row want[] = {
        {'D', "NL77ABNA0574908765", "1234Test/1/1", "435005714488-ABNO33052620",
         "2014-01-05", "2014-01-05", "EUR", "-754.25",
         "Insurance policy 857239PERIOD 01.01.2014 - 31.12.2014", 1},
        /* a batch of two transactions under one entry: one row, the entry's
         * amount; its batch by Btch/PmtInfId; a reversal (RvslInd) signed by
         * its CdtDbtInd */
        {'D', "NL77ABNA0574908765", "1234Test/1/2", "2018/125-20141229-NORM",
         "2014-01-05", "2014-01-05", "EUR", "-664.05", "Direct Debit S14 0410", 2},
        {'C', "NL77ABNA0574908765", "1234Test/1/3", "115", "2014-01-05", "2014-01-05",
         "EUR", "1405.31", NULL, 3},
    };
    expect_rows("camt053_v02_abnamro.xml", want, N(want));
}

static void test_camt_v04_batch(void **state)
{
    (void)state;
    static const exp_row want[] = {
        {'C', "CH1111000000123456789", "20170323001234567891234567891234", NULL,
         "2017-03-22", "2017-03-23", "CHF", "3483.00",
         "CR\xc3\x89" "DIT GROUP\xc3\x89 BVR TRAITEMENT DU 22.03.2017 NUM\xc3\x89" "RO CLIENT "
         "01-70884-3 PAQUET ID: 123456CHCAFEBABE", 1},
    };
    expect_rows("camt053_v04_batch.xml", want, N(want));
}

static void test_camt_v04_summary(void **state)
{
    (void)state;
    static const exp_row want[] = {
        /* its AmtDtls in EUR are not its amount */
        {'D', "CH1904835028789771000", "DNXK210913CS36481/1001", "SP-98803960-0",
         "2021-09-14", "2021-09-14", "CHF", "-579.21", "Devis DEV-01387", 1},
        {'C', "CH1904835028789771000", "80XM210914CS02210/1001", "1050079910",
         "2021-09-14", "2021-09-14", "CHF", "134.00", "/INV/09.2021/01 7.9.2021", 2},
    };
    expect_rows("camt053_v04_summary.xml", want, N(want));
}

static void test_camt_v08_two_statements(void **state)
{
    (void)state;
    static const exp_row want[] = {
        {'C', "DE89370400440532013000", "2024050200001", "po_1PBxyzStripeA", "2024-05-02",
         "2024-05-02", "EUR", "1045.21", "STRIPE PAYOUT po_1PBxyzStripeA", 1},
        /* the PDNG entry is no row; no AcctSvcrRef: the statement's id and
         * the entry's place; NOTPROVIDED is no batch */
        {'D', "DE89370400440532013000", "STMT-2024-05-02-EUR/2", NULL, "2024-05-02", NULL,
         "EUR", "-83.67", "Kontof\xc3\xbchrung & Porto 05/2024", 2},
        {'C', "8877665544", "USD-0001", NULL, "2024-05-02", "2024-05-03", "USD", "75.00",
         NULL, 3},
    };
    expect_rows("camt053_v08_two_statements.xml", want, N(want));
}

static void test_camt_gzip(void **state)
{
    (void)state;
    char *dir = test_dir, *src = fixture("camt053_v04_summary.xml");
    char *gz = path_in(dir, "camt.xml.gz");
    size_t n;
    unsigned char *bytes = read_bytes(src, &n);
    got_rows g;

    write_gzip_file(gz, bytes, n, 6);
    read_statement(gz, &g);
    assert_int_equal(g.end, READ_EOF);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.rows[1].net, "134.00");
    got_free(&g);
    free(bytes);
    free(gz);
    free(src);
}

static void test_camt_unbalanced(void **state)
{
    (void)state;
    /* the real statement as published: its entries make 15555.28 */
    expect_failure("camt053_v02_unbalanced.xml", "camt053_v02_unbalanced.xml",
                   "statement 1234Test/1", "opening balance 15568.27", "3 booked entries",
                   "(-12.99) is 15555.28", "closing balance is 15121.12");
}

static void test_camt_wrong_count(void **state)
{
    (void)state;
    expect_failure("camt053_v04_wrong_count.xml",
                   "statement 47608f88362e485da1eaaa654ab4f84b",
                   "TxsSummry states 3 entries", "it has 2 booked");
}

/* A camt file written from text, read, and expected to fail so. */
static void expect_text_failure(const char *name, const char *text, ...)
{
    char *path = path_in(test_dir, name);
    got_rows g;
    va_list ap;
    const char *want;

    write_bytes(path, text, strlen(text));
    read_statement(path, &g);
    if (g.end != READ_FAILED)
        fail_msg("%s: read to its end (%zu rows), expected a failure", name, g.n);
    va_start(ap, text);
    while ((want = va_arg(ap, const char *)) != NULL)
        if (strstr(g.error, want) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\"", name, g.error, want);
    va_end(ap);
    got_free(&g);
    free(path);
}

static const char stmt_head[] =
    "<?xml version=\"1.0\"?>\n"
    "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\"><BkToCstmrStmt>"
    "<Stmt><Id>S1</Id><Acct><Id><IBAN>X</IBAN></Id><Ccy>EUR</Ccy></Acct>"
    "<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">10.00</Amt>"
    "<CdtDbtInd>CRDT</CdtDbtInd></Bal>"
    "<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">15.00</Amt>"
    "<CdtDbtInd>CRDT</CdtDbtInd></Bal>";
static const char stmt_tail[] = "</Stmt></BkToCstmrStmt></Document>\n";

static char *stmt_with(const char *entries)
{
    char *s = malloc(strlen(stmt_head) + strlen(entries) + strlen(stmt_tail) + 1);
    assert_non_null(s);
    sprintf(s, "%s%s%s", stmt_head, entries, stmt_tail);
    return s;
}

static void test_camt_bad_rows(void **state)
{
    (void)state;
    static const char ok_entry[] =
        "<Ntry><Amt Ccy=\"EUR\">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>"
        "<BookgDt><Dt>2024-02-29</Dt></BookgDt></Ntry>";
    char *s;

    /* the statement above balances with ok_entry */
    s = stmt_with(ok_entry);
    {
        char *path = path_in(test_dir, "ok.xml");
        got_rows g;

        write_bytes(path, s, strlen(s));
        read_statement(path, &g);
        assert_int_equal(g.end, READ_EOF);
        assert_int_equal(g.n, 1);
        assert_string_equal(g.rows[0].txn_id, "S1/1");
        got_free(&g);
        free(path);
    }
    free(s);
    /* an amount that is no camt amount (a thousands separator), never read
     * as another figure */
    s = stmt_with("<Ntry><Amt Ccy=\"EUR\">5,00</Amt><CdtDbtInd>CRDT</CdtDbtInd>"
                  "<Sts>BOOK</Sts><BookgDt><Dt>2024-02-29</Dt></BookgDt></Ntry>");
    expect_text_failure("comma.xml", s, "statement S1, entry 1", "\"5,00\"", NULL);
    free(s);
    s = stmt_with("<Ntry><Amt Ccy=\"EUR\">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd>"
                  "<Sts>BOOK</Sts><BookgDt><Dt>2023-02-29</Dt></BookgDt></Ntry>");
    expect_text_failure("date.xml", s, "booking date \"2023-02-29\" is no date", NULL);
    free(s);
    s = stmt_with("<Ntry><Amt Ccy=\"USD\">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd>"
                  "<Sts>BOOK</Sts><BookgDt><Dt>2024-02-29</Dt></BookgDt></Ntry>");
    expect_text_failure("ccy.xml", s, "an amount in USD on a statement in EUR", NULL);
    free(s);
    s = stmt_with("<Ntry><Amt Ccy=\"EUR\">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd>"
                  "<Sts>BOOKED</Sts><BookgDt><Dt>2024-02-29</Dt></BookgDt></Ntry>");
    expect_text_failure("sts.xml", s, "status \"BOOKED\"", NULL);
    free(s);
    /* an undefined entity: not well-formed, never looked up */
    s = stmt_with("<Ntry><Amt Ccy=\"EUR\">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd>"
                  "<Sts>BOOK</Sts><BookgDt><Dt>2024-02-29</Dt></BookgDt>"
                  "<AddtlNtryInf>&xxe;</AddtlNtryInf></Ntry>");
    expect_text_failure("undefined.xml", s, "not well-formed XML", "xxe", NULL);
    free(s);
    /* no closing balance: nothing to check the entries against */
    expect_text_failure("noclose.xml",
                        "<Document><BkToCstmrStmt><Stmt><Id>S2</Id><Bal><Tp><CdOrPrtry>"
                        "<Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">1.00</Amt>"
                        "<CdtDbtInd>CRDT</CdtDbtInd></Bal></Stmt></BkToCstmrStmt></Document>",
                        "statement S2 states no closing balance", NULL);
    /* another camt message, another ISO 20022 message, no statement */
    expect_text_failure("camt052.xml",
                        "<Document><BkToCstmrAcctRpt><Rpt/></BkToCstmrAcctRpt></Document>",
                        "not a camt.053 statement", "<BkToCstmrAcctRpt>", NULL);
    expect_text_failure("pain.xml", "<CstmrCdtTrfInitn/>",
                        "root element is <CstmrCdtTrfInitn>", NULL);
    expect_text_failure("nostmt.xml",
                        "<Document><BkToCstmrStmt><GrpHdr/></BkToCstmrStmt></Document>",
                        "no statement (BkToCstmrStmt/Stmt)", NULL);
}

/* A statement declared ISO-8859-1 (libxml2 converts it), an AcctSvcrRef of
 * NONREF (no reference), amounts without their minor unit's digits. */
static void test_camt_latin1(void **state)
{
    (void)state;
    static const char text[] =
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n"
        "<Document><BkToCstmrStmt><Stmt><Id>L1</Id><Acct><Id><IBAN>X</IBAN></Id>"
        "<Ccy>EUR</Ccy></Acct><Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp>"
        "<Amt Ccy=\"EUR\">0</Amt><CdtDbtInd>CRDT</CdtDbtInd></Bal><Bal><Tp><CdOrPrtry>"
        "<Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">1.5</Amt><CdtDbtInd>CRDT</CdtDbtInd>"
        "</Bal><Ntry><Amt Ccy=\"EUR\">1.5</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>"
        "<BookgDt><Dt>2024-01-01</Dt></BookgDt><AcctSvcrRef>NONREF</AcctSvcrRef>"
        "<AddtlNtryInf>Gr\xfc\xdf" "e</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>\n";
    char *path = path_in(test_dir, "latin1.xml");
    static const exp_row want[] = {
        {'C', "X", "L1/1", NULL, "2024-01-01", NULL, "EUR", "1.50", "Gr\xc3\xbc\xc3\x9f" "e", 1},
    };
    got_rows g;

    write_bytes(path, text, strlen(text));
    read_statement(path, &g);
    assert_int_equal(g.end, READ_EOF);
    check_rows("latin1.xml", &g, want, N(want));
    got_free(&g);
    free(path);
}

static void test_camt_truncated(void **state)
{
    (void)state;
    char *src = fixture("camt053_v04_summary.xml");
    char *path = path_in(test_dir, "truncated.xml");
    size_t n;
    unsigned char *bytes = read_bytes(src, &n);

    /* cut inside the second entry, after the first was whole */
    const char *second = strstr((const char *)bytes, "80XM210914CS02210/1001");
    assert_non_null(second);
    write_bytes(path, bytes, (size_t)(second - (const char *)bytes));
    /* libxml2 may stop at the error before it hands out the whole entry
     * read before it: the file fails either way */
    expect_failure_path(path, "truncated.xml", "not well-formed XML", (const char *)NULL);
    free(bytes);
    free(path);
    free(src);
}

/* ---- hostile XML --------------------------------------------------------- */

/* No row and no message holds the text of the file the entity names. */
static void test_xxe_file(void **state)
{
    (void)state;
    char *path = fixture("camt053_xxe_file.xml");
    char *secret = fixture("xxe_secret.txt");
    size_t n;
    unsigned char *bytes = read_bytes(secret, &n);
    unsigned long loads = bank_camt_refused_loads();
    got_rows g;

    assert_non_null(strstr((const char *)bytes, "XXE-SECRET-7f3a9c"));
    read_statement(path, &g);
    assert_int_equal(g.end, READ_FAILED);
    assert_int_equal(g.n, 0);
    assert_non_null(strstr(g.error, "<!DOCTYPE>) is refused"));
    assert_null(strstr(g.error, "XXE-SECRET"));
    /* libxml2 never even asked for the file */
    assert_int_equal(bank_camt_refused_loads(), loads);
    got_free(&g);
    free(bytes);
    free(secret);
    free(path);
}

static void test_xxe_http_and_param(void **state)
{
    (void)state;
    unsigned long loads = bank_camt_refused_loads();

    expect_failure("camt053_xxe_http.xml", "<!DOCTYPE>) is refused");
    expect_failure("camt053_xxe_param.xml", "<!DOCTYPE>) is refused");
    assert_int_equal(bank_camt_refused_loads(), loads);
}

/* The options the parser runs with: no network, no entity substitution, no
 * DTD loaded or applied, no XInclude, libxml2's size and depth limits kept;
 * and the loader behind them refuses whatever libxml2 would ask for. */
static void test_parser_options(void **state)
{
    (void)state;
    int o = bank_camt_parse_options();

    assert_true(o & XML_PARSE_NONET);
    assert_false(o & XML_PARSE_NOENT);
    assert_false(o & XML_PARSE_DTDLOAD);
    assert_false(o & XML_PARSE_DTDATTR);
    assert_false(o & XML_PARSE_DTDVALID);
    assert_false(o & XML_PARSE_XINCLUDE);
    assert_false(o & XML_PARSE_HUGE);
    /* a camt reader installs the refusing loader */
    got_rows g;
    char *path = fixture("camt053_v04_batch.xml");
    read_statement(path, &g);
    got_free(&g);
    free(path);
    unsigned long loads = bank_camt_refused_loads();
    xmlParserInputPtr in = xmlLoadExternalEntity("http://127.0.0.1:9/camt.dtd", NULL, NULL);
    assert_null(in);
    in = xmlLoadExternalEntity("/etc/passwd", NULL, NULL);
    assert_null(in);
    assert_int_equal(bank_camt_refused_loads(), loads + 2);
}

static long max_rss_kib(void)
{
    struct rusage ru;

    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_maxrss;
}

static void test_billion_laughs(void **state)
{
    (void)state;
    expect_failure("camt053_billion_laughs.xml", "<!DOCTYPE>) is refused");
    assert_true(max_rss_kib() < 256 * 1024);
}

static void test_deep_nesting(void **state)
{
    (void)state;
    char *path = path_in(test_dir, "deep.xml");
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs("<Document><BkToCstmrStmt><Stmt><Id>D</Id>", f);
    for (int i = 0; i < 10000; i++)
        fputs("<Ntry>", f);
    for (int i = 0; i < 10000; i++)
        fputs("</Ntry>", f);
    fputs("</Stmt></BkToCstmrStmt></Document>\n", f);
    assert_int_equal(fclose(f), 0);
    expect_failure_path(path, "deep.xml", "nested deeper than 48 levels", (const char *)NULL);
    free(path);
}

/* A text node of 12 MB: past libxml2's 10,000,000-byte limit for a text
 * without XML_PARSE_HUGE, and ours of 64 KiB for a value; memory stays
 * bounded. */
static void test_huge_text(void **state)
{
    (void)state;
    char *path = path_in(test_dir, "huge.xml");
    FILE *f = fopen(path, "w");
    static char chunk[1 << 16];

    assert_non_null(f);
    memset(chunk, 'A', sizeof chunk);
    fputs(stmt_head, f);
    fputs("<Ntry><Amt Ccy=\"EUR\">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>"
          "<BookgDt><Dt>2024-02-29</Dt></BookgDt><AddtlNtryInf>", f);
    for (int i = 0; i < 12 * 16; i++)
        assert_int_equal(fwrite(chunk, 1, sizeof chunk, f), sizeof chunk);
    fputs("</AddtlNtryInf></Ntry>", f);
    fputs(stmt_tail, f);
    assert_int_equal(fclose(f), 0);
    expect_failure_path(path, "huge.xml", "huge.xml: ", (const char *)NULL);
    {
        got_rows g;
        read_statement(path, &g);
        assert_int_equal(g.n, 0);
        /* libxml2's limit or ours, whichever comes first */
        assert_true(strstr(g.error, "over 65536 bytes") || strstr(g.error, "huge text") ||
                    strstr(g.error, "not well-formed"));
        got_free(&g);
    }
    assert_true(max_rss_kib() < 256 * 1024);
    free(path);
}

/* ---- MT940 --------------------------------------------------------------- */

static void test_mt940_rabobank(void **state)
{
    (void)state;
    /* no "-" between messages, one :20: and :28C: for both: the fallback
     * txn_id is made unique by the entry's place in the file */
    static const exp_row want[] = {
        {'D', "NL71RABO0123456789", "940S130101/0/1", "EREF", "2013-01-01", "2013-01-01",
         "EUR", "-25.00",
         "/EREF/01-01-2013 12:00 0030000987654321/BENM//NAME/CONTRA ACCOUN\n"
         "T HOLDER/REMI//ISDT/2013-07-11", 6},
        {'D', "NL71RABO0123456789", "940S130101/0/2", NULL, "2013-01-02", "2013-01-02",
         "EUR", "-10.00", "/BENM//NAME/JOHN DOE/REMI/Reference 201301234/ISDT/2013-01-02", 10},
        {'D', "NL71RABO0123456789", "940S130101/0/3", "EREF", "2013-01-08", "2013-01-08",
         "EUR", "-25.00",
         "/EREF/08-01-2013 12:00 0030000987654321/BENM//NAME/CONTRA ACCOUN\n"
         "T HOLDER/REMI//ISDT/2013-07-11", 18},
        {'D', "NL71RABO0123456789", "940S130101/0/4", NULL, "2013-01-09", "2013-01-09",
         "EUR", "-10.00", "/BENM//NAME/JOHN DOE/REMI/Reference 201301234/ISDT/2013-01-09", 22},
    };
    expect_rows("mt940_rabobank.sta", want, N(want));
}

static void test_mt940_citi_crlf(void **state)
{
    (void)state;
    /* entry date left blank, a funds code (D), an empty bank reference,
     * zero amounts; an entry without :86: has its supplementary details */
    static const char pt[] = "/PT/FT/PY/SOMETHING FOO BAR          112233\n   123456789";
    static const exp_row want[] = {
        {'D', "123456789", "asdfsdfdsf/1/1/1", NULL, "2024-03-12", "2024-03-12", "USD",
         "-212.39", pt, 5},
        {'D', "123456789", "asdfsdfdsf/1/1/2", NULL, "2024-03-12", "2024-03-12", "USD",
         "-369.28", pt, 9},
        {'C', "123456789", "asdfsdfdsf/1/1/3", NULL, "2024-03-12", "2024-03-12", "USD",
         "0.00", "/ABC/DEF/C 37897,00 BAI CD 025", 13},
        {'C', "123456789", "asdfsdfdsf/1/1/4", NULL, "2024-03-12", "2024-03-12", "USD",
         "0.00", "/ABC/DEF/C 17376,67 BAI CD 010", 15},
        {'D', "123456789", "asdfsdfdsf/1/1/5", NULL, "2024-03-12", "2024-03-12", "USD",
         "-561.08", pt, 17},
    };
    expect_rows("mt940_citi_crlf.sta", want, N(want));
}

static void test_mt940_abnamro(void **state)
{
    (void)state;
    static const char a[] = "517852257";
    /* banner lines, :28:, "9," and "107," amounts, an empty line between
     * entries, an entry date before its value date */
    static const exp_row want[] = {
        {'D', a, "ABN AMRO BANK NV/19321/1/1", NULL, "2011-05-24", "2011-05-24", "EUR", "-9.00",
         "GIRO   428428 KPN - DIGITENNE    BETALINGSKENM.  000000042188659\n"
         "5314606715                       BETREFT FACTUUR D.D. 20-05-2011\n"
         "INCL. 1,44 BTW", 8},
        {'D', a, "ABN AMRO BANK NV/19321/1/2", NULL, "2011-05-23", "2011-05-21", "EUR",
         "-11.59", "BEA   NR:XXX1234   21.05.11/12.54 DIRCKIII FIL2500 KATWIJK,PAS999", 12},
        {'D', a, "ABN AMRO BANK NV/19321/1/3", NULL, "2011-05-23", "2011-05-23", "EUR",
         "-11.63", "BEA   NR:XXX1234   23.05.11/09.08 DIGROS FIL1015 KATWIJK Z,PAS999", 14},
        {'D', a, "ABN AMRO BANK NV/19321/1/4", NULL, "2011-05-23", "2011-05-22", "EUR",
         "-11.80", "BEA   NR:XXX1234   22.05.11/14.25 MC DONALDS A44 LEIDEN,PAS999", 16},
        {'D', a, "ABN AMRO BANK NV/19321/1/5", NULL, "2011-05-23", "2011-05-21", "EUR",
         "-13.45", "BEA   NR:XXX1234   21.05.11/12.09 PRINCE FIL. 55 KATWIJK Z,PAS999", 18},
        {'D', a, "ABN AMRO BANK NV/19321/1/6", NULL, "2011-05-23", "2011-05-21", "EUR",
         "-15.49", "BEA   NR:XXX1234   21.05.11/12.55 DIRX FIL6017 KATWIJK ZH ,PAS999", 20},
        {'D', a, "ABN AMRO BANK NV/19321/1/7", NULL, "2011-05-23", "2011-05-21", "EUR",
         "-107.00", "BEA   NR:XXX1234   21.05.11/12.04 HANS ANDERS OPT./056 KAT,PAS999", 23},
        {'D', a, "ABN AMRO BANK NV/19321/1/8", NULL, "2011-05-23", "2011-05-22", "EUR",
         "-141.48", "BEA   NR:XXX1234   22.05.11/13.45 MYCOM DEN HAAG  S-GRAVEN,PAS999", 25},
        {'D', a, "ABN AMRO BANK NV/19322/1/9", NULL, "2011-05-24", "2011-05-24", "EUR",
         "-9.49", "BEA   NR:XXX1234   24.05.11/09.18 PETS PLACE KATWIJK KATWI,PAS999", 36},
        {'D', a, "ABN AMRO BANK NV/19322/1/10", NULL, "2011-05-24", "2011-05-24", "EUR",
         "-15.00", "52.89.39.882                    MYCOM DEN HAAG", 38},
    };
    expect_rows("mt940_abnamro.sta", want, N(want));
}

static void test_mt940_swift_blocks(void **state)
{
    (void)state;
    static const char a[] = "DD01100056869";
    /* SWIFT blocks, an intermediate balance carried to the next message,
     * entry dates across a year end both ways, RC and RD reversals */
    static const exp_row want[] = {
        {'C', a, "BNK-0001", "PO-7781", "2025-01-02", "2024-12-31", "USD", "250.00",
         "EREF/PO-7781/PREF/RP/GS/CTFILERP0002", 7},
        {'D', a, "258158850/1/1/2", "GSGWGDNCTAHQM8", "2024-12-31", "2024-12-31", "USD",
         "-10.00", "EREF/GSGWGDNCTAHQM8/PREF/RP/GS/CTFILERP0002/CTBA0003", 9},
        {'C', a, "BNK-0003", NULL, "2024-12-31", "2025-01-02", "USD", "35.50", NULL, 18},
        /* the :86: after :62F: is the statement's, not this entry's */
        {'D', a, "258158851/1/2/4", NULL, "2025-01-02", "2025-01-02", "USD", "-75.50",
         "BANK CHARGES", 19},
    };
    expect_rows("mt940_swift_blocks.sta", want, N(want));
}

static void test_mt940_8bit(void **state)
{
    (void)state;
    static const exp_row want[] = {
        /* Latin-1 bytes read as Latin-1 */
        {'D', "1966315302010001", "STARTUMS/00046/1", "X", "2017-10-11", "2017-10-11", "HUF",
         "-2402.00", "Tranzakci\xc3\xb3s Illet\xc3\xa9k:7.21HUF", 8},
        /* GBK bytes (工商银行 结算 提现) read as Latin-1 too: valid UTF-8, every
         * byte recoverable */
        {'D', "1966315302010001", "STARTUMS/00046/2", "X", "2017-10-11", "2017-10-11", "HUF",
         "-3460.00",
         "\xc2\xb9\xc2\xa4\xc3\x89\xc3\x8c\xc3\x92\xc3\xb8\xc3\x90\xc3\x90 \xc2\xbd\xc3\xa1"
         "\xc3\x8b\xc3\xa3 \xc3\x8c\xc3\xa1\xc3\x8f\xc3\x96", 10},
        /* UTF-8 kept as it is */
        {'D', "1966315302010001", "STARTUMS/00046/3", "X", "2017-10-11", "2017-10-11", "HUF",
         "-3575.00", "\xc3\x9c" "berweisung ERGO", 12},
    };
    expect_rows("mt940_sberbank_8bit.sta", want, N(want));
}

static void test_mt940_unbalanced(void **state)
{
    (void)state;
    /* ABN AMRO's statement as published: its entries make 2914.84 */
    expect_failure("mt940_abnamro_unbalanced.sta", "line 27", "message \"ABN AMRO BANK NV\"",
                   "statement 19321/1", "opening balance 3236.28", "8 entries (-321.44)",
                   "is 2914.84", "closing balance is 876.84");
}

/* The fixture with `from` replaced by `to`, written to name and expected to
 * fail with the texts given. */
static void expect_edit_failure(const char *fixture_name, const char *from,
                                const char *to, const char *name, const char *want1,
                                const char *want2)
{
    char *src = fixture(fixture_name);
    char *path = path_in(test_dir, name);
    size_t n;
    unsigned char *bytes = read_bytes(src, &n);
    char *at = strstr((char *)bytes, from);
    char *out;
    size_t k;

    assert_non_null(at);
    out = malloc(n + strlen(to) + 1);
    assert_non_null(out);
    k = (size_t)(at - (char *)bytes);
    memcpy(out, bytes, k);
    memcpy(out + k, to, strlen(to));
    memcpy(out + k + strlen(to), at + strlen(from), n - k - strlen(from));
    write_bytes(path, out, n - strlen(from) + strlen(to));
    expect_failure_path(path, name, want1, want2, (const char *)NULL);
    free(out);
    free(bytes);
    free(path);
    free(src);
}

static void test_mt940_bad(void **state)
{
    (void)state;
    /* cut short after an entry of its second message */
    expect_edit_failure("mt940_rabobank.sta", ":62F:C130115EUR000000000930,00\n", "",
                        "cut.sta", "message \"940S130101\" (line 14) ends without its closing",
                        NULL);
    /* the next message does not open where the last one's :62M: closed */
    expect_edit_failure("mt940_swift_blocks.sta", ":60M:C241231USD1240,00",
                        ":60M:C241231USD1250,00", "carry.sta",
                        "opens (:60M:) at 1250.00 on DD01100056869",
                        "closed (:62M:) at 1240.00");
    expect_edit_failure("mt940_swift_blocks.sta", ":60M:C241231USD1240,00",
                        ":60F:C241231USD1240,00", "carry_f.sta", "opens with :60F: after", NULL);
    /* an amount with a decimal point is no MT940 amount: not read as 12 */
    expect_edit_failure("mt940_rabobank.sta", "D000000000010,00N154",
                        "D000000000010.00N154", "dot.sta", "line 10: :61:", "no transaction type");
    expect_edit_failure("mt940_rabobank.sta", ":61:130102D", ":61:130230D", "date.sta",
                        "line 10: :61:", "value date");
    expect_edit_failure("mt940_rabobank.sta", ":61:130102D", ":61:130102X", "mark.sta",
                        "line 10: :61:", "debit/credit mark");
    expect_edit_failure("mt940_rabobank.sta", ":60F:C130101EUR", ":60F:C130101EU1",
                        "bal.sta", "line 5: :60F:", "is not a balance");
    expect_edit_failure("mt940_rabobank.sta", ":60F:C130101EUR000000001000,00\n", "",
                        "noopen.sta", "line 5", "before its message's opening balance");
}

static void test_not_a_statement(void **state)
{
    (void)state;
    expect_text_failure("bill.csv", "date,amount\n2024-01-01,5.00\n",
                        "neither a camt.053 statement (XML) nor an MT940", NULL);
    expect_text_failure("empty.sta", "\r\n \n", "empty", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_camt_v02),
        cmocka_unit_test(test_camt_v04_batch),
        cmocka_unit_test(test_camt_v04_summary),
        cmocka_unit_test(test_camt_v08_two_statements),
        cmocka_unit_test_setup_teardown(test_camt_gzip, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test(test_camt_unbalanced),
        cmocka_unit_test(test_camt_wrong_count),
        cmocka_unit_test_setup_teardown(test_camt_bad_rows, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_camt_latin1, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_camt_truncated, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test(test_xxe_file),
        cmocka_unit_test(test_xxe_http_and_param),
        cmocka_unit_test(test_parser_options),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test_setup_teardown(test_deep_nesting, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_huge_text, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test(test_mt940_rabobank),
        cmocka_unit_test(test_mt940_citi_crlf),
        cmocka_unit_test(test_mt940_abnamro),
        cmocka_unit_test(test_mt940_swift_blocks),
        cmocka_unit_test(test_mt940_8bit),
        cmocka_unit_test(test_mt940_unbalanced),
        cmocka_unit_test_setup_teardown(test_mt940_bad, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_not_a_statement, tmpdir_setup, tmpdir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
