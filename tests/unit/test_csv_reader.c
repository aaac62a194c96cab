/*
 * test_csv_reader.c - the CSV reader (csv_reader.c over reader.c's line
 * splitter) on hostile input: quoted line breaks, doubled quotes, CRLF and
 * lone CR, a BOM, columns in any order, blank lines, field-count mismatch,
 * strict quoting errors with resynchronisation at the next line, an
 * unterminated quote at the end, CRLF split across the 256 KiB read window,
 * 1 MB fields, the record size limit, and header faults.
 *
 * Every table case runs three ways, with the same expected records: from a
 * plain file, from a gzip file, and from standard input fed through a pipe
 * in small pieces (so the splitter sees many short windows).  And each of
 * those twice: with the reader's fast path for a line that is a whole
 * record (split_line) and with IDEMLOAD_CSV_FASTPATH=0, every line through
 * libcsv; so do the tests of the read window, of the field limit and of
 * plain lines cut by the window (fuzz_csv_fastpath compares the two on
 * arbitrary input).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "input/reader.h"

#define WINDOW (256 * 1024) /* reader.c's read window */

#define HDR "tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"
#define TS "2026-03-01T10:00:00+08:00"
#define ROW(n) n ",wechat,T" n ",pay,0,{}," TS

/* Field expectations: NULL = not checked, ABSENT/NUL_ = that kind, any
 * other string = FIELD_TEXT with exactly that text. */
#define ABSENT "\x01" "absent"
#define NUL_ "\x01" "null"

typedef struct want_rec {
    uint64_t line;
    const char *raw;
    const char *error;      /* substring of the record's error; NULL: none */
    const char *f[COL_COUNT];
} want_rec;

typedef struct csv_case {
    const char *name;
    const char *input;
    size_t len;             /* 0: strlen(input) */
    char delim;             /* 0: ',' */
    want_rec want[8];
} csv_case;

#define TN(s) [COL_TENANT_ID] = s
#define CH(s) [COL_CHANNEL] = s
#define OT(s) [COL_OUT_TRADE_NO] = s
#define CB(s) [COL_CALLBACK_TYPE] = s
#define ST(s) [COL_STATUS] = s
#define PL(s) [COL_PAYLOAD] = s
#define RA(s) [COL_RECEIVED_AT] = s

static const csv_case cases[] = {
    {"basic LF", HDR "\n"
     "1,wechat,T1,pay,0,\"{\"\"a\"\":1}\"," TS "\n"
     "2,alipay,T2,refund,2,[1],2026-03-01T02:00:00Z\n", 0, 0,
     {{2, "1,wechat,T1,pay,0,\"{\"\"a\"\":1}\"," TS, NULL,
       {TN("1"), CH("wechat"), OT("T1"), CB("pay"), ST("0"), PL("{\"a\":1}"), RA(TS)}},
      {3, "2,alipay,T2,refund,2,[1],2026-03-01T02:00:00Z", NULL,
       {TN("2"), CH("alipay"), OT("T2"), CB("refund"), ST("2"), PL("[1]"),
        RA("2026-03-01T02:00:00Z")}}}},
    {"CRLF line ends", HDR "\r\n" ROW("1") "\r\n" ROW("2") "\r\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1"), RA(TS)}}, {3, ROW("2"), NULL, {TN("2"), RA(TS)}}}},
    {"lone CR line ends", HDR "\r" ROW("1") "\r" ROW("2") "\r", 0, 0,
     {{2, ROW("1"), NULL, {RA(TS)}}, {3, ROW("2"), NULL, {RA(TS)}}}},
    {"mixed line ends", HDR "\n" ROW("1") "\r\n" ROW("2") "\r" ROW("3") "\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1")}}, {3, ROW("2"), NULL, {TN("2")}},
      {4, ROW("3"), NULL, {TN("3")}}}},
    {"no final line break", HDR "\n" ROW("1") "\n" ROW("2"), 0, 0,
     {{2, ROW("1"), NULL, {TN("1")}}, {3, ROW("2"), NULL, {TN("2"), RA(TS)}}}},
    {"quoted LF", HDR "\n"
     "1,wechat,\"T\n1\",pay,0,\"{\"\"a\"\":\"\"x\"\"}\"," TS "\n" ROW("2") "\n", 0, 0,
     {{2, "1,wechat,\"T\n1\",pay,0,\"{\"\"a\"\":\"\"x\"\"}\"," TS, NULL,
       {OT("T\n1"), PL("{\"a\":\"x\"}"), RA(TS)}},
      {4, ROW("2"), NULL, {TN("2")}}}},
    {"quoted CRLF", HDR "\r\n"
     "1,wechat,\"T\r\n1\r\n\",pay,0,{}," TS "\r\n" ROW("2") "\r\n", 0, 0,
     {{2, "1,wechat,\"T\r\n1\r\n\",pay,0,{}," TS, NULL, {OT("T\r\n1\r\n"), CB("pay")}},
      {5, ROW("2"), NULL, {TN("2")}}}},
    {"quoted lone CR and blank lines inside quotes", HDR "\n"
     "1,wechat,\"a\rb\n\n\nc\",pay,0,{}," TS "\n" ROW("2") "\n", 0, 0,
     {{2, "1,wechat,\"a\rb\n\n\nc\",pay,0,{}," TS, NULL, {OT("a\rb\n\n\nc")}},
      {7, ROW("2"), NULL, {TN("2")}}}},
    {"doubled quotes", HDR "\n"
     "1,\"we\"\"chat\",\"\"\"\",\"x,y\",0,\"[\"\"a,b\"\"]\"," TS "\n", 0, 0,
     {{2, NULL, NULL, {CH("we\"chat"), OT("\""), CB("x,y"), PL("[\"a,b\"]")}}}},
    {"BOM", "\xEF\xBB\xBF" HDR "\n" ROW("1") "\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1"), CH("wechat")}}}},
    {"BOM then CRLF", "\xEF\xBB\xBF" HDR "\r\n" ROW("1") "\r\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1")}}}},
    {"columns in any order, extra columns, odd case",
     "note,received_at,PAYLOAD,Status,callback_type,out_trade_no,Channel,tenant_id,x\n"
     "hi," TS ",\"{\"\"k\"\":2}\",3,pay,T9,wechat,77,extra\n", 0, 0,
     {{2, NULL, NULL,
       {TN("77"), CH("wechat"), OT("T9"), CB("pay"), ST("3"), PL("{\"k\":2}"), RA(TS)}}}},
    {"no status column", "tenant_id,channel,out_trade_no,callback_type,payload,received_at\n"
     "1,wechat,T1,pay,{}," TS "\n", 0, 0,
     {{2, NULL, NULL, {TN("1"), ST(ABSENT), PL("{}")}}}},
    {"header names padded and quoted",
     " tenant_id , \"channel\",out_trade_no,\"callback_type\" ,status,payload,received_at\n"
     ROW("1") "\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1"), CH("wechat"), CB("pay")}}}},
    {"blank lines anywhere", "\n\r\n" HDR "\n\n" ROW("1") "\n\r\n\n" ROW("2") "\r\n\n\n", 0, 0,
     {{5, ROW("1"), NULL, {TN("1")}}, {8, ROW("2"), NULL, {TN("2")}}}},
    {"empty and null fields", HDR "\n"
     ",\"\", ,\"\",,,\n", 0, 0,
     {{2, ",\"\", ,\"\",,,", NULL,
       {TN(NUL_), CH(""), OT(NUL_), CB(""), ST(NUL_), PL(NUL_), RA(NUL_)}}}},
    {"spaces around fields", HDR "\n"
     " 1 , \"wechat\" ,T 1,pay ,0,{}," TS "\n", 0, 0,
     {{2, NULL, NULL, {TN("1"), CH("wechat"), OT("T 1"), CB("pay")}}}},
    {"too few and too many fields", HDR "\n"
     "1,wechat,T1,pay,0,{}\n"
     ROW("2") ",extra\n"
     ROW("3") "\n", 0, 0,
     {{2, "1,wechat,T1,pay,0,{}", "expected 7 fields as in the header, found 6", {0}},
      {3, ROW("2") ",extra", "expected 7 fields as in the header, found 8", {0}},
      {4, ROW("3"), NULL, {TN("3")}}}},
    {"quote inside an unquoted field, then good rows", HDR "\n"
     ROW("1") "\n"
     "2,wechat,T\"2,pay,0,{}," TS "\n"
     ROW("3") "\n"
     ROW("4") "\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1")}},
      {3, "2,wechat,T\"2,pay,0,{}," TS, "malformed CSV", {0}},
      {4, ROW("3"), NULL, {TN("3"), RA(TS)}},
      {5, ROW("4"), NULL, {TN("4")}}}},
    {"text after a closing quote", HDR "\r\n"
     "1,\"wechat\"x,T1,pay,0,{}," TS "\r\n"
     ROW("2") "\r\n", 0, 0,
     {{2, "1,\"wechat\"x,T1,pay,0,{}," TS, "malformed CSV", {0}},
      {3, ROW("2"), NULL, {TN("2")}}}},
    {"malformed quote on the second line of a record", HDR "\n"
     "1,wechat,\"T\n1\"x,pay,0,{}," TS "\n"
     ROW("2") "\n", 0, 0,
     {{2, "1,wechat,\"T\n1\"x,pay,0,{}," TS, "malformed CSV", {0}},
      {4, ROW("2"), NULL, {TN("2")}}}},
    {"malformed record then a quoted empty first field", HDR "\n"
     "a\"b\n"
     "\"\",wechat,T1,pay,\"\",\"\"," TS "\n", 0, 0,
     {{2, "a\"b", "malformed CSV", {0}},
      {3, NULL, NULL, {TN(""), CH("wechat"), ST(""), PL("")}}}},
    {"malformed at the last line without a break", HDR "\n" ROW("1") "\n" "1,\"a\"b", 0, 0,
     {{2, ROW("1"), NULL, {TN("1")}}, {3, "1,\"a\"b", "malformed CSV", {0}}}},
    {"unterminated quote at EOF", HDR "\n"
     ROW("1") "\n"
     "2,wechat,\"T2,pay,0,{}," TS "\n"
     ROW("3") "\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1")}},
      {3, "2,wechat,\"T2,pay,0,{}," TS "\n" ROW("3"), "unterminated quote", {0}}}},
    {"unterminated quote, no final break", HDR "\n\"abc", 0, 0,
     {{2, "\"abc", "unterminated quote", {0}}}},
    {"quoted field ends at EOF", HDR "\n1,wechat,T1,pay,0,{},\"" TS "\"", 0, 0,
     {{2, "1,wechat,T1,pay,0,{},\"" TS "\"", NULL, {RA(TS)}}}},
    {"semicolon delimiter", "tenant_id;channel;out_trade_no;callback_type;status;payload;received_at\n"
     "1;wechat;T,1;pay;0;\"{\"\"a\"\":1;\"\"b\"\":2}\";" TS "\n", 0, ';',
     {{2, NULL, NULL, {TN("1"), OT("T,1"), PL("{\"a\":1;\"b\":2}"), RA(TS)}}}},
    {"tab delimiter", "tenant_id\tchannel\tout_trade_no\tcallback_type\tstatus\tpayload\treceived_at\n"
     "1\twechat\tT 1\tpay\t\t\"{\"\"a\"\":\t[1, 2]}\"\t" TS "\n", 0, '\t',
     {{2, NULL, NULL, {TN("1"), OT("T 1"), ST(NUL_), PL("{\"a\":\t[1, 2]}"), RA(TS)}}}},
    {"unquoted JSON with quotes is not RFC 4180", HDR "\n"
     "1,wechat,T1,pay,0,{\"a\":1}," TS "\n" ROW("2") "\n", 0, 0,
     {{2, "1,wechat,T1,pay,0,{\"a\":1}," TS, "malformed CSV", {0}},
      {3, ROW("2"), NULL, {TN("2")}}}},
    {"header only", HDR "\n", 0, 0, {{0}}},
    {"header only, no break", HDR, 0, 0, {{0}}},
    {"header then blank lines", HDR "\n\n\r\n\n", 0, 0, {{0}}},
    {"NUL bytes and invalid UTF-8 pass through the reader", HDR "\n"
     "1,we\0chat,T\xff" "1,pay,0,{}," TS "\n", sizeof(HDR "\n" "1,we\0chat,T\xff" "1,pay,0,{}," TS "\n") - 1, 0,
     {{2, NULL, NULL, {CH(NULL), OT("T\xff" "1")}}}},
    {"payload with 30-digit integers and 1e400", HDR "\n"
     "1,wechat,T1,pay,0,\"{\"\"n\"\":123456789012345678901234567890,\"\"x\"\":1e400}\"," TS "\n",
     0, 0,
     {{2, NULL, NULL, {PL("{\"n\":123456789012345678901234567890,\"x\":1e400}")}}}},
    {"a line of spaces between records", HDR "\n" ROW("1") "\n   \n" ROW("2") "\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1")}}, {4, ROW("2"), NULL, {TN("2")}}}},
    {"blank lines of spaces and tabs", "  \t\r\n" HDR "\n \t \r\n\t\n" ROW("1") "\n \n", 0, 0,
     {{5, ROW("1"), NULL, {TN("1")}}}},
    {"plain lines: spaces and tabs trimmed around fields", HDR "\n"
     " 1 ,\twechat\t, T 1 ,pay\t \t,\t0 ,{} , " TS " \t\n" ROW("2") "\n", 0, 0,
     {{2, " 1 ,\twechat\t, T 1 ,pay\t \t,\t0 ,{} , " TS " \t", NULL,
       {TN("1"), CH("wechat"), OT("T 1"), CB("pay"), ST("0"), PL("{}"), RA(TS)}},
      {3, ROW("2"), NULL, {TN("2"), RA(TS)}}}},
    {"plain lines, tab delimiter: spaces trimmed, every tab delimits",
     "tenant_id\tchannel\tout_trade_no\tcallback_type\tstatus\tpayload\treceived_at\n"
     "  1 \t wechat \tT 1\tpay\t \t{}\t " TS "\r\n"
     "2\twechat\tT2\t\tpay\t0\t{}\t" TS "\n", 0, '\t',
     {{2, "  1 \t wechat \tT 1\tpay\t \t{}\t " TS, NULL,
       {TN("1"), CH("wechat"), OT("T 1"), CB("pay"), ST(NUL_), PL("{}"), RA(TS)}},
      {3, NULL, "expected 7 fields as in the header, found 8", {0}}}},
    {"plain lines, space delimiter: tabs trimmed, every space delimits",
     "tenant_id channel out_trade_no callback_type status payload received_at\n"
     "1\t wechat\t T1 pay  {} " TS "\n", 0, ' ',
     {{2, "1\t wechat\t T1 pay  {} " TS, NULL,
       {TN("1"), CH("wechat"), OT("T1"), CB("pay"), ST(NUL_), PL("{}"), RA(TS)}}}},
    {"plain lines: empty and blank fields are NULL", HDR "\n"
     ", ,\t, \t ,,  ,\t\r\n", 0, 0,
     {{2, ", ,\t, \t ,,  ,\t", NULL,
       {TN(NUL_), CH(NUL_), OT(NUL_), CB(NUL_), ST(NUL_), PL(NUL_), RA(NUL_)}}}},
    {"a CR inside a line ends it", HDR "\n"
     "1,wechat,T1,pay\r,0,{}," TS "\n" ROW("2") "\n", 0, 0,
     {{2, "1,wechat,T1,pay", "expected 7 fields as in the header, found 4", {0}},
      {3, ",0,{}," TS, "expected 7 fields as in the header, found 4", {0}},
      {4, ROW("2"), NULL, {TN("2")}}}},
    {"quoted lines among plain ones", HDR "\n"
     ROW("1") "\n"
     "2, \"we,chat\" ,T2,pay,0,\"{\"\"a\"\": 1}\"," TS "\n"
     " 3 ,wechat,T3,pay,0,[],\"" TS "\"\t\r\n"
     ROW("4") "\n", 0, 0,
     {{2, ROW("1"), NULL, {TN("1"), CH("wechat")}},
      {3, NULL, NULL, {TN("2"), CH("we,chat"), OT("T2"), PL("{\"a\": 1}"), RA(TS)}},
      {4, NULL, NULL, {TN("3"), PL("[]"), RA(TS)}},
      {5, ROW("4"), NULL, {TN("4"), RA(TS)}}}},
    {"quoted fields: doubled quotes at their ends, blanks around, tab delimiter",
     "tenant_id\tchannel\tout_trade_no\tcallback_type\tstatus\tpayload\treceived_at\n"
     " \"1\" \t\"\"\"we\"\"\"\t \"\"\"\"\"\" \t\"\"\t\"\t\"\t\"{\"\"a\"\":\"\" b \"\"}\"\t\"" TS "\"\n",
     0, '\t',
     {{2, NULL, NULL,
       {TN("1"), CH("\"we\""), OT("\"\""), CB(""), ST("\t"), PL("{\"a\":\" b \"}"), RA(TS)}}}},
    {"a quote after blanks that end a quoted field", HDR "\n"
     "1,\"wechat\" \"x\",T1,pay,0,{}," TS "\n" ROW("2") "\n", 0, 0,
     {{2, NULL, "malformed CSV", {0}}, {3, ROW("2"), NULL, {TN("2")}}}},
    {"plain last line without a break, blanks at its end", HDR "\n"
     ROW("1") " \n"
     " 2 ,wechat,T2,pay,0,{}," TS " \t", 0, 0,
     {{2, ROW("1") " ", NULL, {TN("1"), RA(TS)}},
      {3, " 2 ,wechat,T2,pay,0,{}," TS " \t", NULL, {TN("2"), OT("T2"), RA(TS)}}}},
    {"tab delimiter: a line of tabs is a record, a line of spaces is not",
     "tenant_id\tchannel\tout_trade_no\tcallback_type\tstatus\tpayload\treceived_at\n"
     "   \n\t\t\n", 0, '\t',
     {{3, "\t\t", "expected 7 fields as in the header, found 3", {0}}}},
};

static void check_field(const csv_case *c, size_t r, int col, const rec_copy *got, const char *want)
{
    if (want == NULL)
        return;
    if (strcmp(want, ABSENT) == 0) {
        if (got->f[col].kind != FIELD_ABSENT)
            fail_msg("%s: record %zu: %s should be absent", c->name, r, column_name(col));
        return;
    }
    if (strcmp(want, NUL_) == 0) {
        if (got->f[col].kind != FIELD_NULL)
            fail_msg("%s: record %zu: %s should be NULL (kind %d)", c->name, r,
                     column_name(col), got->f[col].kind);
        return;
    }
    if (got->f[col].kind != FIELD_TEXT || got->f[col].len != strlen(want) ||
        memcmp(got->f[col].text, want, strlen(want)) != 0)
        fail_msg("%s: record %zu: %s is kind %d \"%s\", want \"%s\"", c->name, r,
                 column_name(col), got->f[col].kind, got->f[col].text ? got->f[col].text : "",
                 want);
}

static void check_records(const csv_case *c, const char *how, const read_all_result *res)
{
    size_t n_want = 0;

    while (n_want < 8 && c->want[n_want].line != 0)
        n_want++;
    check_record_count(c->name, how, res, n_want);
    for (size_t i = 0; i < n_want; i++) {
        const want_rec *w = &c->want[i];
        const rec_copy *g = &res->recs[i];

        if (!check_record_head(c->name, how, i, g, w->line, w->raw, w->error))
            continue;
        for (int col = 0; col < COL_COUNT; col++)
            check_field(c, i, col, g, w->f[col]);
    }
}

/* Sends every CSV line through libcsv (on false) or lets the reader split
 * the lines it can itself (true, as the command does). */
static void use_fast_path(bool on)
{
    if (on)
        assert_int_equal(unsetenv("IDEMLOAD_CSV_FASTPATH"), 0);
    else
        assert_int_equal(setenv("IDEMLOAD_CSV_FASTPATH", "0", 1), 0);
}

static const char *path_name(bool fast)
{
    return fast ? "fast path" : "libcsv";
}

static void run_case_file(const csv_case *c, size_t len, bool gz, bool fast)
{
    char *p = path_in(test_dir, gz ? "case.csv.gz" : "case.csv");
    read_all_result res;
    char *err;
    char how[32];

    if (gz)
        write_gzip_file(p, c->input, len, 6);
    else
        write_bytes(p, c->input, len);
    use_fast_path(fast);
    snprintf(how, sizeof how, "%s, %s", gz ? "gzip" : "plain", path_name(fast));
    if (!read_file(p, FORMAT_CSV, c->delim ? c->delim : ',', NULL, &res, &err))
        fail_msg("%s: reader_open failed: %s", c->name, err);
    check_records(c, how, &res);
    read_all_free(&res);
    free(p);
}

static void run_case_stdin(const csv_case *c, size_t len, size_t piece, bool fast)
{
    stdin_feed feed;
    read_all_result res;
    char *err;

    use_fast_path(fast);
    stdin_feed_start(&feed, c->input, len, 1, piece);
    if (!read_file("-", FORMAT_CSV, c->delim ? c->delim : ',', NULL, &res, &err))
        fail_msg("%s: reader_open failed: %s", c->name, err);
    check_records(c, fast ? "stdin, fast path" : "stdin, libcsv", &res);
    read_all_free(&res);
    stdin_feed_end(&feed);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const csv_case *c = &cases[i];
        size_t len = c->len ? c->len : strlen(c->input);

        for (int fast = 1; fast >= 0; fast--) {
            run_case_file(c, len, false, fast);
            run_case_file(c, len, true, fast);
            run_case_stdin(c, len, 3, fast);
        }
    }
    use_fast_path(true);
}

/* ---- reader_open failures ------------------------------------------------ */

static void test_header_faults(void **state)
{
    static const struct {
        const char *input;
        int preset;             /* column --set supplies, or -1 */
        const char *want[3];    /* substrings of the message; NULL: opens fine */
    } hcases[] = {
        {"tenant_id,channel,out_trade_no,callback_type,status,payload\n1,a,b,c,0,{}\n", -1,
         {"no received_at column", "--set received_at=VALUE", "case.csv"}},
        {"channel,out_trade_no,callback_type,status,payload,received_at\n", -1,
         {"no tenant_id column", "--set tenant_id", NULL}},
        {"channel,out_trade_no,callback_type,status,payload,received_at\n", COL_TENANT_ID,
         {NULL}},
        {"tenant_id,out_trade_no,callback_type,payload,received_at\n", COL_CHANNEL, {NULL}},
        {"tenant_id,out_trade_no,callback_type,payload,received_at\n", COL_STATUS,
         {"no channel column", NULL}},
        {"foo,bar\n", -1, {"no tenant_id column", "it has 2 columns", NULL}},
        {"\xEF\xBB\xBF" "foo\n", -1, {"no tenant_id column", NULL}},
        /* No header at all: empty, a BOM alone, blank lines only. */
        {"", -1, {"the file is empty: no header row", "case.csv", NULL}},
        {"\xEF\xBB\xBF", -1, {"the file is empty: no header row", NULL}},
        {"\n\r\n\n", -1, {"the file is empty: no header row", NULL}},
        {HDR ",channel\n", -1, {"names column channel twice", NULL}},
        {"tenant_id,Channel,CHANNEL,out_trade_no,callback_type,payload,received_at\n", -1,
         {"names column channel twice", NULL}},
        {"tenant_id, payload ,channel,out_trade_no,callback_type,payload,received_at\n", -1,
         {"names column payload twice", NULL}},
        {HDR ",x,x,,\n", -1, {NULL}}, /* repeated unknown columns are ignored */
        {"tenant_id,\"chan\"nel,out_trade_no,callback_type,payload,received_at\n", -1,
         {"line 1", "header row is not valid CSV", NULL}},
        {"\n\ntenant_id,\"chan\"nel\n", -1, {"line 3", "header row is not valid CSV", NULL}},
        {"tenant_id,\"channel\n", -1, {"header row is not valid CSV", NULL}},
        {"tenant_id\tchannel\tout_trade_no\tcallback_type\tpayload\treceived_at\n", -1,
         {"no tenant_id column", "it has 1 columns", NULL}}, /* wrong delimiter */
    };

    (void)state;
    for (size_t i = 0; i < sizeof hcases / sizeof hcases[0]; i++) {
        char *p = path_in(test_dir, "case.csv");
        bool preset[COL_COUNT] = {false};
        read_all_result res;
        char *err = NULL;
        bool ok;

        if (hcases[i].preset >= 0)
            preset[hcases[i].preset] = true;
        write_bytes(p, hcases[i].input, strlen(hcases[i].input));
        ok = read_file(p, FORMAT_CSV, ',', preset, &res, &err);
        if (hcases[i].want[0] == NULL) {
            if (!ok)
                fail_msg("header case %zu: refused: %s", i, err);
            assert_int_equal(res.last, READ_EOF);
            read_all_free(&res);
        } else {
            if (ok)
                fail_msg("header case %zu: opened", i);
            for (int k = 0; k < 3 && hcases[i].want[k] != NULL; k++)
                if (strstr(err, hcases[i].want[k]) == NULL)
                    fail_msg("header case %zu: \"%s\" lacks \"%s\"", i, err, hcases[i].want[k]);
        }
        free(err);
        free(p);
    }
}

static void test_unknown_format(void **state)
{
    char *p = path_in(test_dir, "data.txt");
    buf err = BUF_INIT;
    source *src;
    reader_options opt;

    (void)state;
    write_bytes(p, HDR "\n", strlen(HDR) + 1);
    src = source_open(p, &err);
    assert_non_null(src);
    memset(&opt, 0, sizeof opt);
    opt.format = format_from_name(p);
    assert_int_equal(opt.format, FORMAT_AUTO);
    assert_null(reader_open(src, p, &opt, &err));
    assert_non_null(strstr(buf_cstr(&err), "--format"));
    source_close(&src);
    buf_free(&err);
    free(p);
}

static void test_format_from_name(void **state)
{
    static const struct {
        const char *name;
        input_format f;
    } ncases[] = {
        {"a.csv", FORMAT_CSV}, {"a.CSV", FORMAT_CSV}, {"a.csv.gz", FORMAT_CSV},
        {"dir.x/a.csv.GZ", FORMAT_CSV}, {"a.ndjson", FORMAT_NDJSON},
        {"a.ndjson.gz", FORMAT_NDJSON}, {"a.jsonl", FORMAT_NDJSON},
        {"a.jsonl.gz", FORMAT_NDJSON}, {"a.json", FORMAT_AUTO}, {"a.gz", FORMAT_AUTO},
        {"a.csv.gz.gz", FORMAT_AUTO}, {"a.tsv", FORMAT_AUTO}, {"-", FORMAT_AUTO},
        {"csv", FORMAT_AUTO}, {".csv", FORMAT_CSV}, {"", FORMAT_AUTO},
        {"a.csvx", FORMAT_AUTO}, {"a.csv.bz2", FORMAT_AUTO},
    };

    (void)state;
    for (size_t i = 0; i < sizeof ncases / sizeof ncases[0]; i++)
        if (format_from_name(ncases[i].name) != ncases[i].f)
            fail_msg("format_from_name(%s)", ncases[i].name);
    assert_string_equal(format_name(FORMAT_CSV), "csv");
    assert_string_equal(format_name(FORMAT_NDJSON), "ndjson");
}

/* ---- the read window ----------------------------------------------------- */

/*
 * A first record padded so that its line break falls at the window edge:
 * `cr_at` is the offset of the CR of its CRLF.  With cr_at = WINDOW - 1 the
 * CR ends one window and the LF starts the next.
 */
static char *window_input(size_t cr_at, size_t *len)
{
    size_t cap = 2 * WINDOW + 4096;
    char *text = malloc(cap);
    size_t p = 0, pad;
    const char *head = HDR "\r\n1,wechat,T1,pay,0,\"{\"\"pad\"\":\"\"";
    const char *tail = "\"\"}\"," TS;

    assert_non_null(text);
    memcpy(text, head, strlen(head));
    p = strlen(head);
    assert_true(cr_at > p + strlen(tail));
    pad = cr_at - p - strlen(tail);
    memset(text + p, 'x', pad);
    p += pad;
    memcpy(text + p, tail, strlen(tail));
    p += strlen(tail);
    assert_int_equal(p, cr_at);
    memcpy(text + p, "\r\n", 2);
    p += 2;
    p += (size_t)sprintf(text + p, "%s\r\n\r\n%s\r\n", ROW("2"), ROW("3"));
    *len = p;
    return text;
}

static void test_crlf_across_window(void **state)
{
    (void)state;
    for (size_t cr_at = WINDOW - 3; cr_at <= WINDOW + 2; cr_at++) {
        for (int gz = 0; gz <= 3; gz++) {
            size_t len;
            char *input = window_input(cr_at, &len);
            char *p = path_in(test_dir, gz & 1 ? "w.csv.gz" : "w.csv");
            read_all_result res;
            char *err;

            use_fast_path(gz < 2);
            if (gz & 1)
                write_gzip_file(p, input, len, 1);
            else
                write_bytes(p, input, len);
            if (!read_file(p, FORMAT_CSV, ',', NULL, &res, &err))
                fail_msg("open: %s", err);
            assert_int_equal(res.last, READ_EOF);
            assert_int_equal(res.n, 3);
            assert_null(res.recs[0].error);
            assert_int_equal(res.recs[0].line, 2);
            /* raw: from after the header's CRLF up to, not including, the CR */
            assert_int_equal(res.recs[0].raw_len, cr_at - (strlen(HDR) + 2));
            assert_memory_equal(res.recs[0].raw, input + strlen(HDR) + 2, res.recs[0].raw_len);
            assert_string_equal(res.recs[0].f[COL_RECEIVED_AT].text, TS);
            assert_int_equal(res.recs[1].line, 3);
            assert_string_equal(res.recs[1].raw, ROW("2"));
            assert_null(res.recs[1].error);
            assert_int_equal(res.recs[2].line, 5);
            assert_string_equal(res.recs[2].raw, ROW("3"));
            read_all_free(&res);
            free(p);
            free(input);
        }
    }
    use_fast_path(true);
}

/*
 * Plain lines (no quote) around the window edge: the first record's LF at
 * each offset from three before the edge to two after, so that the first
 * line, then the second, is whole in one window, cut before its LF, or
 * cut between its CR and LF; the last line has no break.  The second
 * line starts with blanks around its first field.
 */
static void test_plain_lines_across_window(void **state)
{
    const char *row2 = " 2 ,\twechat, T2 ,pay,0,{}," TS " ";

    (void)state;
    for (size_t lf_at = WINDOW - 3; lf_at <= WINDOW + 2; lf_at++) {
        for (int way = 0; way <= 3; way++) {
            bool crlf = way & 1, fast = way < 2;
            size_t hl = strlen(HDR) + 1, len = 0, pad;
            char *input = malloc(WINDOW + 4096);
            char *p = path_in(test_dir, "plain.csv");
            read_all_result res;
            char *err;

            assert_non_null(input);
            len = (size_t)sprintf(input, HDR "\n1,wechat,T");
            pad = lf_at - (crlf ? 1 : 0) - len - strlen(",pay,0,{}," TS);
            memset(input + len, 'x', pad);
            len += pad;
            len += (size_t)sprintf(input + len, ",pay,0,{}," TS "%s", crlf ? "\r\n" : "\n");
            assert_int_equal(len, lf_at + 1);
            len += (size_t)sprintf(input + len, "%s%s" ROW("3"), row2, crlf ? "\r\n" : "\n");
            write_bytes(p, input, len);
            use_fast_path(fast);
            if (!read_file(p, FORMAT_CSV, ',', NULL, &res, &err))
                fail_msg("open: %s", err);
            assert_int_equal(res.last, READ_EOF);
            assert_int_equal(res.n, 3);
            assert_null(res.recs[0].error);
            assert_int_equal(res.recs[0].line, 2);
            assert_int_equal(res.recs[0].raw_len, lf_at - (crlf ? 1 : 0) - hl);
            assert_memory_equal(res.recs[0].raw, input + hl, res.recs[0].raw_len);
            assert_int_equal(res.recs[0].f[COL_OUT_TRADE_NO].len, pad + 1);
            assert_string_equal(res.recs[0].f[COL_RECEIVED_AT].text, TS);
            assert_null(res.recs[1].error);
            assert_int_equal(res.recs[1].line, 3);
            /* row2's leading space alone before the window edge is a blank
             * piece (is_blank_piece), kept as the start of its text
             * (keep_blanks) */
            assert_string_equal(res.recs[1].raw, row2);
            assert_string_equal(res.recs[1].f[COL_TENANT_ID].text, "2");
            assert_string_equal(res.recs[1].f[COL_CHANNEL].text, "wechat");
            assert_string_equal(res.recs[1].f[COL_OUT_TRADE_NO].text, "T2");
            assert_string_equal(res.recs[1].f[COL_RECEIVED_AT].text, TS);
            assert_int_equal(res.recs[2].line, 4);
            assert_string_equal(res.recs[2].raw, ROW("3"));
            assert_null(res.recs[2].error);
            read_all_free(&res);
            free(p);
            free(input);
        }
    }
    use_fast_path(true);
}

/* A plain line of READER_MAX_FIELDS fields is a record (of the wrong
 * width); one more field stops the file, naming the line. */
static void test_field_limit(void **state)
{
    (void)state;
    for (int way = 0; way <= 3; way++) {
        size_t extra = way & 1, cap = 2 * READER_MAX_FIELDS + 4096, len;
        char *input = malloc(cap);
        char *p = path_in(test_dir, "wide.csv");
        read_all_result res;
        char want[80];
        char *err;

        assert_non_null(input);
        len = (size_t)sprintf(input, HDR "\n" ROW("1") "\n" "x");
        for (size_t i = 1; i < READER_MAX_FIELDS + extra; i++) {
            input[len++] = ',';
            input[len++] = i % 3 ? 'y' : ' ';
        }
        len += (size_t)sprintf(input + len, "\n" ROW("3") "\n");
        write_bytes(p, input, len);
        use_fast_path(way < 2);
        if (!read_file(p, FORMAT_CSV, ',', NULL, &res, &err))
            fail_msg("open: %s", err);
        if (extra) {
            assert_int_equal(res.last, READ_FAILED);
            assert_int_equal(res.n, 1);
            snprintf(want, sizeof want, "line 3: record of more than %zu fields",
                     READER_MAX_FIELDS);
            if (strstr(res.error, want) == NULL)
                fail_msg("%s: \"%s\" lacks \"%s\"", path_name(way < 2), res.error, want);
        } else {
            assert_int_equal(res.last, READ_EOF);
            assert_int_equal(res.n, 3);
            snprintf(want, sizeof want, "expected 7 fields as in the header, found %zu",
                     READER_MAX_FIELDS);
            assert_string_equal(res.recs[1].error, want);
            assert_int_equal(res.recs[1].line, 3);
            assert_int_equal(res.recs[2].line, 4);
            assert_null(res.recs[2].error);
        }
        read_all_free(&res);
        free(input);
        free(p);
    }
    use_fast_path(true);
}

/* A quoted CRLF (inside the payload field) split across the window edge. */
static void test_quoted_crlf_across_window(void **state)
{
    (void)state;
    for (size_t cr_at = WINDOW - 2; cr_at <= WINDOW; cr_at++) {
        const char *head = HDR "\n1,wechat,\"";
        size_t hl = strlen(head), len, p;
        char *input = malloc(WINDOW + 4096);
        char *path = path_in(test_dir, "q.csv");
        read_all_result res;
        char *err;

        assert_non_null(input);
        memcpy(input, head, hl);
        memset(input + hl, 'y', cr_at - hl);
        p = cr_at;
        memcpy(input + p, "\r\nz\",pay,0,{}," TS "\n", strlen("\r\nz\",pay,0,{}," TS "\n"));
        p += strlen("\r\nz\",pay,0,{}," TS "\n");
        p += (size_t)sprintf(input + p, "%s\n", ROW("2"));
        len = p;
        write_bytes(path, input, len);
        if (!read_file(path, FORMAT_CSV, ',', NULL, &res, &err))
            fail_msg("open: %s", err);
        assert_int_equal(res.n, 2);
        assert_null(res.recs[0].error);
        assert_int_equal(res.recs[0].line, 2);
        assert_int_equal(res.recs[0].f[COL_OUT_TRADE_NO].len, cr_at - hl + 3);
        assert_memory_equal(res.recs[0].f[COL_OUT_TRADE_NO].text + cr_at - hl, "\r\nz", 3);
        assert_int_equal(res.recs[1].line, 4);
        assert_string_equal(res.recs[1].raw, ROW("2"));
        read_all_free(&res);
        free(path);
        free(input);
    }
}

/* ---- big records ------------------------------------------------------------ */

/* CSV text of a payload {"blob":"<n bytes>"} with its quotes doubled. */
static char *big_row(size_t n, int id, size_t *len, char **payload)
{
    char *row = malloc(n + 256);
    char *pl = malloc(n + 64);
    size_t p, q;

    assert_non_null(row);
    assert_non_null(pl);
    q = (size_t)sprintf(pl, "{\"blob\":\"");
    for (size_t i = 0; i < n; i++)
        pl[q++] = (char)('a' + (i * 31 + (size_t)id) % 26);
    q += (size_t)sprintf(pl + q, "\"}");
    p = (size_t)sprintf(row, "%d,wechat,T%d,pay,0,\"{\"\"blob\"\":\"\"", id, id);
    memcpy(row + p, pl + 9, n);
    p += n;
    p += (size_t)sprintf(row + p, "\"\"}\"," TS "\n");
    *len = p;
    *payload = pl;
    return row;
}

static void test_megabyte_payloads(void **state)
{
    (void)state;
    for (int gz = 0; gz <= 1; gz++) {
        size_t l1, l2, total;
        char *pl1, *pl2;
        char *r1 = big_row(1 << 20, 1, &l1, &pl1);
        char *r2 = big_row((1 << 20) + 12345, 2, &l2, &pl2);
        char *input = malloc(l1 + l2 + 512);
        char *p = path_in(test_dir, gz ? "big.csv.gz" : "big.csv");
        read_all_result res;
        char *err;

        assert_non_null(input);
        total = (size_t)sprintf(input, HDR "\n");
        memcpy(input + total, r1, l1);
        total += l1;
        memcpy(input + total, r2, l2);
        total += l2;
        total += (size_t)sprintf(input + total, "%s\n", ROW("3"));
        if (gz)
            write_gzip_file(p, input, total, 6);
        else
            write_bytes(p, input, total);
        if (!read_file(p, FORMAT_CSV, ',', NULL, &res, &err))
            fail_msg("open: %s", err);
        assert_int_equal(res.last, READ_EOF);
        assert_int_equal(res.n, 3);
        assert_int_equal(res.recs[0].line, 2);
        assert_int_equal(res.recs[0].f[COL_PAYLOAD].len, strlen(pl1));
        assert_string_equal(res.recs[0].f[COL_PAYLOAD].text, pl1);
        assert_int_equal(res.recs[0].raw_len, l1 - 1);
        assert_int_equal(res.recs[1].line, 3);
        assert_string_equal(res.recs[1].f[COL_PAYLOAD].text, pl2);
        assert_string_equal(res.recs[1].f[COL_RECEIVED_AT].text, TS);
        assert_int_equal(res.recs[2].line, 4);
        assert_string_equal(res.recs[2].raw, ROW("3"));
        read_all_free(&res);
        free(p);
        free(input);
        free(r1);
        free(r2);
        free(pl1);
        free(pl2);
    }
}

/* An unterminated quote early in a huge file stops the file at the record
 * size limit, naming the line where the record started. */
static void test_record_limit(void **state)
{
    char *p = path_in(test_dir, "huge.csv.gz");
    size_t n = READER_MAX_RECORD + (1 << 20);
    char *input = malloc(n);
    size_t hl;
    read_all_result res;
    char *err;

    (void)state;
    assert_non_null(input);
    hl = (size_t)sprintf(input, HDR "\n" ROW("1") "\n" "2,wechat,\"");
    for (size_t i = hl; i < n; i++)
        input[i] = (i % 100 == 99) ? '\n' : 'q';
    write_gzip_file(p, input, n, 1);
    free(input);
    if (!read_file(p, FORMAT_CSV, ',', NULL, &res, &err))
        fail_msg("open: %s", err);
    assert_int_equal(res.n, 1);
    assert_int_equal(res.last, READ_FAILED);
    assert_non_null(strstr(res.error, "line 3"));
    assert_non_null(strstr(res.error, "32 MiB"));
    read_all_free(&res);
    free(p);
}

/* A gzip file cut short: the records before the cut come out, then the
 * reader fails with the source's message. */
static void test_truncated_gzip(void **state)
{
    char *p = path_in(test_dir, "cut.csv.gz");
    size_t cap = 600000, len = 0, gzlen;
    char *input = malloc(cap);
    unsigned char *gz;
    read_all_result res;
    char *err;
    int rows = 0;

    (void)state;
    assert_non_null(input);
    len = (size_t)sprintf(input, HDR "\n");
    while (len + 200 < cap) {
        len += (size_t)sprintf(input + len, "%d,wechat,T%d,pay,0,\"{\"\"n\"\":%d}\"," TS "\n", rows,
                               rows * 7919, rows);
        rows++;
    }
    write_gzip_file(p, input, len, 6);
    gz = read_bytes(p, &gzlen);
    write_bytes(p, gz, gzlen - 100);
    if (!read_file(p, FORMAT_CSV, ',', NULL, &res, &err))
        fail_msg("open: %s", err);
    assert_int_equal(res.last, READ_FAILED);
    assert_non_null(strstr(res.error, "truncated gzip"));
    assert_non_null(strstr(res.error, "cut.csv.gz"));
    assert_true(res.n > 1000 && res.n < (size_t)rows);
    for (size_t i = 0; i < res.n; i++) {
        assert_int_equal(res.recs[i].line, i + 2);
        assert_null(res.recs[i].error);
    }
    read_all_free(&res);
    free(gz);
    free(input);
    free(p);
}

/* Many records, each with a quoted newline, over several windows: line
 * numbers stay exact throughout. */
static void test_line_numbers_at_scale(void **state)
{
    char *p = path_in(test_dir, "lines.csv");
    size_t cap = 3 * WINDOW, len;
    char *input = malloc(cap);
    read_all_result res;
    char *err;
    size_t rows = 0;

    (void)state;
    assert_non_null(input);
    len = (size_t)sprintf(input, HDR "\r\n");
    while (len + 300 < cap) {
        if (rows % 3 == 0)
            len += (size_t)sprintf(input + len, "%zu,wechat,\"T\r\n%zu\",pay,0,{}," TS "\r\n",
                                   rows, rows);
        else if (rows % 3 == 1)
            len += (size_t)sprintf(input + len, "%zu,wechat,T%zu,pay,0,{}," TS "\n\n", rows,
                                   rows);
        else
            len += (size_t)sprintf(input + len, "%zu,wechat,\"T\n\n%zu\",pay,0,{}," TS "\r", rows,
                                   rows);
        rows++;
    }
    write_bytes(p, input, len);
    if (!read_file(p, FORMAT_CSV, ',', NULL, &res, &err))
        fail_msg("open: %s", err);
    assert_int_equal(res.last, READ_EOF);
    assert_int_equal(res.n, rows);
    {
        uint64_t line = 2;

        for (size_t i = 0; i < rows; i++) {
            char want[32];

            if (res.recs[i].line != line)
                fail_msg("row %zu on line %llu, want %llu", i,
                         (unsigned long long)res.recs[i].line, (unsigned long long)line);
            assert_null(res.recs[i].error);
            snprintf(want, sizeof want, "%zu", i);
            assert_string_equal(res.recs[i].f[COL_TENANT_ID].text, want);
            line += 2; /* every shape takes two lines */
            if (i % 3 == 2)
                line += 1;
        }
    }
    read_all_free(&res);
    free(input);
    free(p);
}

/* Old Mac line ends (lone CR) over many windows: every line found, and
 * quickly (a search for LF must not rescan the window for every line). */
static void test_cr_only_lines(void **state)
{
    char *p = path_in(test_dir, "mac.csv");
    size_t rows = 300000, cap = rows * 64 + 256, len;
    char *input = malloc(cap);
    read_all_result res;
    char *err;

    (void)state;
    assert_non_null(input);
    len = (size_t)sprintf(input, HDR "\r");
    for (size_t i = 0; i < rows; i++)
        len += (size_t)sprintf(input + len, "%zu,c,o%zu,t,0,[]," TS "\r", i, i);
    write_bytes(p, input, len);
    if (!read_file(p, FORMAT_CSV, ',', NULL, &res, &err))
        fail_msg("open: %s", err);
    assert_int_equal(res.last, READ_EOF);
    assert_int_equal(res.n, rows);
    for (size_t i = 0; i < rows; i += 9973) {
        char want[64];

        assert_int_equal(res.recs[i].line, i + 2);
        snprintf(want, sizeof want, "%zu,c,o%zu,t,0,[]," TS, i, i);
        assert_string_equal(res.recs[i].raw, want);
    }
    read_all_free(&res);
    free(input);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_header_faults),
        cmocka_unit_test(test_unknown_format),
        cmocka_unit_test(test_format_from_name),
        cmocka_unit_test(test_crlf_across_window),
        cmocka_unit_test(test_plain_lines_across_window),
        cmocka_unit_test(test_field_limit),
        cmocka_unit_test(test_quoted_crlf_across_window),
        cmocka_unit_test(test_megabyte_payloads),
        cmocka_unit_test(test_record_limit),
        cmocka_unit_test(test_truncated_gzip),
        cmocka_unit_test(test_line_numbers_at_scale),
        cmocka_unit_test(test_cr_only_lines),
    };

    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
