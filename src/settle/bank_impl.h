/*
 * bank_impl.h - what the bank-statement readers share (bank_statement.c,
 * bank_camt.c, bank_mt940.c; the shared functions are in bank_common.c):
 * the statement's bytes after the few that told its format, and the checks
 * of its figures.  Not for use outside these
 * three files; settle_row.h is the interface.
 */
#ifndef IDEMLOAD_SETTLE_BANK_IMPL_H
#define IDEMLOAD_SETTLE_BANK_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "input/source.h"
#include "rules/dec_total.h"
#include "settle/settle_row.h"
#include "util/buf.h"

/* The longest a value the readers keep (an id, a reference, a remittance
 * text, an MT940 line) may be: camt.053 allows 500 characters at most
 * (AddtlNtryInf), MT940 a :86: of 6 lines of 65; a longer one is no bank's
 * and fails the file rather than growing memory with it. */
#define BANK_MAX_VALUE ((size_t)64 << 10)

/* The statement's bytes: those bank_statement_open() read to tell the
 * format (head, owned), then the rest of the source (not owned). */
typedef struct bank_input {
    source *src;
    char *head;
    size_t head_len;
    size_t head_pos;
} bank_input;

/* Like source_read(): > 0 bytes, 0 at the end, -1 on an error (the
 * source's, source_error()). */
ssize_t bank_input_read(bank_input *in, char *dst, size_t cap);
void bank_input_free(bank_input *in);

/* The format readers; each takes over *in (whatever the outcome) and
 * returns NULL with a message naming path in *err. */
settle_reader *bank_camt_open(bank_input *in, const char *path, buf *err);
settle_reader *bank_mt940_open(bank_input *in, const char *path, buf *err);

/* The libxml2 parser options bank_camt.c reads with (XML_PARSE_*): for the
 * test that holds them to no network, no entity substitution, no DTD. */
int bank_camt_parse_options(void);

/* Is y-m-d a day of the Gregorian calendar (year 1900..2999)? */
bool bank_date_valid(int y, int m, int d);

/* An unsigned amount of digits with at most one decimal mark (camt.053 '.',
 * MT940 ',') in s[0..n) into *out as decimal text with '.', without the
 * zeros it was padded with, negated when negative ("-12.50"), and its value
 * into *v (negated too).  False when it is no such amount. */
bool bank_amount(const char *s, size_t n, char mark, bool negative, buf *out, dect *v);

/* Pads the amount text in *amt with zeros to the minor-unit digits of the
 * currency ccy (ISO 4217: "107" in EUR is "107.00"); never cuts digits, and
 * leaves an amount of a currency the table does not know as it is. */
bool bank_pad_minor(buf *amt, const char *ccy);

/* How many times the process's external entity loader (installed by the
 * camt.053 reader, refusing every resource) was asked for one. */
unsigned long bank_camt_refused_loads(void);

/* v as text with at least `scale` decimals, for messages. */
void bank_dect_text(const dect *v, int scale, char *out);

#endif
