/*
 * fuzz_bank_statement.c - libFuzzer target: bank_statement_open() and the
 * camt.053 and MT940 readers on arbitrary bytes (plain or gzip), as a file.
 *
 * Invariants, for every row: side bank, channel "bank", tenant "", no gross,
 * fee or balance; a txn_id, currency of three capitals, time "YYYY-MM-DD"
 * and a net that is decimal text whose sign is the kind's (a debit '-');
 * every text valid UTF-8 without NUL.  A reader that fails says why, naming
 * the file, and keeps failing; one that ended keeps ending.  No input may
 * crash, leak, or read past the rows' strings.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_input.h"
#include "rules/dec_total.h"
#include "rules/utf8.h"
#include "settle/settle_row.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *what, const char *s)
{
    if (s == NULL)
        return;
    if (!utf8_check(s, strlen(s), NULL, NULL))
        fuzz_fail("%s is not UTF-8", what);
}

static void check_row(const settle_row *row)
{
    dect v;

    fuzz_check(row->side == SETTLE_SIDE_BANK);
    fuzz_check(row->kind == SETTLE_BANK_CREDIT || row->kind == SETTLE_BANK_DEBIT);
    fuzz_check(strcmp(row->tenant, "") == 0 && strcmp(row->channel, "bank") == 0);
    fuzz_check(row->gross == NULL && row->fee == NULL && row->balance == NULL);
    fuzz_check(row->txn_id != NULL && row->txn_id[0] != '\0');
    fuzz_check(row->net != NULL && dect_parse(row->net, strlen(row->net), &v));
    fuzz_check((row->kind == SETTLE_BANK_DEBIT) == (row->net[0] == '-'));
    fuzz_check(row->currency != NULL && strlen(row->currency) == 3);
    for (int i = 0; i < 3; i++)
        fuzz_check(row->currency[i] >= 'A' && row->currency[i] <= 'Z');
    fuzz_check(row->time != NULL && strlen(row->time) == 10 && row->time[4] == '-');
    fuzz_check(row->value_date == NULL || strlen(row->value_date) == 10);
    check_text("account", row->account);
    check_text("txn_id", row->txn_id);
    check_text("batch_id", row->batch_id);
    check_text("text", row->text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size);
    buf err = BUF_INIT;
    source *src = source_open(path, &err);
    settle_reader *r;
    settle_row row;
    read_result res;

    if (src == NULL) {
        buf_free(&err);
        return 0;
    }
    r = bank_statement_open(src, path, NULL, &err);
    if (r == NULL) {
        fuzz_check(strncmp(buf_cstr(&err), path, strlen(path)) == 0);
    } else {
        while ((res = r->next(r, &row)) == READ_RECORD)
            check_row(&row);
        if (res == READ_FAILED)
            fuzz_check(strncmp(buf_cstr(&r->err), path, strlen(path)) == 0);
        fuzz_check(r->next(r, &row) == res);
        r->close(r);
    }
    source_close(&src);
    buf_free(&err);
    return 0;
}
