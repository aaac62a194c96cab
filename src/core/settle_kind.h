/*
 * settle_kind.h - the kinds of money settle tells apart (SPEC.md, "Settle:
 * the money that arrives"), with the names outputs and profiles use: a
 * profile's settle member (input/profile_settle.c) maps a file's types to
 * them, the settle readers (settle/settle_row.h) hand them over.
 */
#ifndef IDEMLOAD_SETTLE_KIND_H
#define IDEMLOAD_SETTLE_KIND_H

typedef enum settle_kind {
    SETTLE_PAYMENT,         /* a customer's payment: gross, fee, net */
    SETTLE_REFUND,          /* money given back to a customer */
    SETTLE_DISPUTE,         /* a chargeback, or its reversal */
    SETTLE_FEE,             /* a fee not charged on one payment */
    SETTLE_ADJUSTMENT,      /* anything else the channel moved */
    SETTLE_PAYOUT,          /* a batch sent to the bank (Stripe payout,
                               PayPal withdrawal T0400, 提现/结算): negative
                               on the channel's account */
    SETTLE_BANK_CREDIT,     /* a bank entry: money in */
    SETTLE_BANK_DEBIT,      /* a bank entry: money out */
    SETTLE_KIND_COUNT
} settle_kind;

/* "payment", "refund", "dispute", "fee", "adjustment", "payout",
 * "bank_credit", "bank_debit": the names outputs and profiles use. */
const char *settle_kind_name(settle_kind k);
/* The kind named name, or -1. */
int settle_kind_lookup(const char *name);

#endif
