/*
 * settle_row.h - one row of the money that arrives (SPEC.md, "Settle: the
 * money that arrives"), as every settlement-side reader hands it to
 * `idemload settle`: a channel's settlement file (Stripe's balance and
 * payout reconciliation reports, PayPal STL, WeChat Pay 资金账单, Alipay
 * 账务明细, the trade bills' fee columns; settle_channel.c, through the
 * profiles) or a bank statement (ISO 20022 camt.053, SWIFT MT940:
 * bank_statement.c; a bank CSV through a profile).
 *
 * Money is exact decimal text in the currency's major unit ("96.80",
 * "-50.00"), never a float, signed by the way the money moves on the
 * account the file describes: into it positive, out of it negative.  For a
 * channel row net = gross - fee; fee is what the channel charged, positive
 * when charged, negative when it gave a fee back.  A bank entry states only
 * its amount, in net (credit positive, debit negative); gross and fee are
 * NULL.
 *
 * Ownership: the strings belong to the reader and stay valid until its
 * next settle_reader_next() or its close.
 */
#ifndef IDEMLOAD_SETTLE_ROW_H
#define IDEMLOAD_SETTLE_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/settle_kind.h"
#include "input/reader.h"
#include "input/source.h"
#include "util/buf.h"

typedef enum settle_side {
    SETTLE_SIDE_CHANNEL,    /* the channel's account: payments, fees, batches */
    SETTLE_SIDE_BANK        /* the merchant's bank account */
} settle_side;

typedef struct settle_row {
    settle_side side;
    settle_kind kind;
    const char *tenant;     /* the row's tenant ("" when the file names none:
                               the command's --tenant applies) */
    const char *channel;    /* "stripe", "paypal", "wechat", "alipay", or the
                               profile's; a bank entry: "bank" */
    const char *account;    /* the account the file describes: a bank's IBAN
                               or :25: text, a channel's merchant id; "" when
                               the file does not say */
    const char *txn_id;     /* the row's own id: Stripe balance_transaction_id,
                               PayPal Transaction ID, WeChat 资金流水单号,
                               Alipay 账务流水号; a bank entry's AcctSvcrRef
                               or its :61: bank reference; never NULL */
    const char *order_key;  /* the payment's business key (out_trade_no) the
                               row belongs to, NULL when none */
    const char *batch_id;   /* the batch that pays the row out (Stripe
                               automatic_payout_id); a payout row: its own
                               batch id; a bank entry: its remittance
                               reference (EndToEndId, :61: customer
                               reference, :86: text's batch id), which may
                               name the batch; NULL when none */
    const char *time;       /* when it was booked: ISO 8601 with its offset
                               ("2024-05-01T18:40:11+08:00"); a bank entry:
                               its booking date "YYYY-MM-DD" */
    const char *value_date; /* a bank entry's value date; a channel row linked
                               to a batch: the day the batch is expected in
                               the bank, where the file states it (Stripe's
                               automatic_payout_effective_at); else NULL */
    const char *currency;   /* ISO 4217 */
    const char *gross;      /* NULL: not stated */
    const char *fee;        /* NULL: not stated */
    const char *net;        /* never NULL */
    const char *balance;    /* the account's balance after this row (WeChat
                               账户结余, Alipay 账户余额, a bank's running
                               balance), NULL when not stated */
    const char *text;       /* what the file says it is (业务名称, Stripe
                               description, remittance information), or NULL */
    uint64_t line;          /* 1-based line of a text file; the entry's
                               ordinal in an XML statement */
} settle_row;

typedef struct settle_read_options {
    const struct profile *profile;  /* a channel file or a bank CSV read by
                                       this profile; NULL: a bank statement
                                       whose format is recognised by its
                                       content (camt.053, MT940) */
    const char *zone;               /* --timezone, or NULL: the profile's */
} settle_read_options;

typedef struct settle_reader settle_reader;

/*
 * Opens a reader of path's bytes (src, which the caller closes after the
 * reader).  NULL with a message naming the file in *err when the file is of
 * no format settle reads, or its header is not the profile's.
 */
settle_reader *settle_reader_open(source *src, const char *path,
                                  const settle_read_options *opt, buf *err);

/*
 * The next row into *out.  READ_RECORD: a row; READ_EOF: the file ended
 * and every count, total and balance it states agreed with its rows (a
 * bank statement's opening balance plus its entries is its closing
 * balance); READ_FAILED: it cannot be read on, or what it states
 * disagrees with its rows: settle_reader_error() says what, naming the
 * line or entry (exit 3, nothing compared).  A row the reader cannot make
 * sense of (an amount that is no decimal, a date that is none) fails the
 * file: settle compares money, and a row left out would be money lost.
 */
read_result settle_reader_next(settle_reader *r, settle_row *out);
const char *settle_reader_error(const settle_reader *r);
void settle_reader_close(settle_reader **r);

/* The constructors settle_reader_open() dispatches to (settle_reader.c). */
/* A bank statement without a profile: camt.053 or MT940, told by its
 * content (bank_statement.c, bank_camt.c, bank_mt940.c). */
settle_reader *bank_statement_open(source *src, const char *path,
                                   const settle_read_options *opt, buf *err);
/* What a file's first BANK_SNIFF_BYTES bytes say it is (bank_statement.c):
 * empty (blanks only), a camt.053 (XML), an MT940 (a "{1:" block or a
 * ":20:" field at a line's start, after whatever banner lines a bank puts
 * first), or no bank statement.  Enough to see past a byte-order mark, an
 * XML declaration and comments, SWIFT headers or a bank's banner. */
#define BANK_SNIFF_BYTES 4096
typedef enum bank_format { BANK_NONE, BANK_EMPTY, BANK_CAMT, BANK_MT940 } bank_format;
bank_format bank_statement_sniff(const char *head, size_t n);

/* A file read by opt->profile (settle_channel.c). */
settle_reader *settle_profile_open(source *src, const char *path,
                                   const settle_read_options *opt, buf *err);

/* Every reader starts with this (settle_reader.c calls through it).  close
 * frees the reader whole, err and the struct itself included (a reader is
 * one allocation of its own type); settle_reader_close() calls it and sets
 * the caller's pointer to NULL, freeing nothing itself. */
struct settle_reader {
    read_result (*next)(settle_reader *r, settle_row *out);
    void (*close)(settle_reader *r);
    const char *path;
    buf err;
};

#endif
