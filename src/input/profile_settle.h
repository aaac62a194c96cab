/*
 * profile_settle.h - a profile's "settle" member (SPEC.md, "Settle: the
 * money that arrives"): how a row of a channel's settlement-side file (or
 * of a bank CSV) becomes a settle row (settle/settle_row.h).  Read by
 * settle_channel.c; parsed and printed here so that `profiles NAME` prints
 * it and a printed profile reads the same.
 *
 * In a profile file:
 *   "settle": {
 *     "side": "channel" | "bank",
 *     "kind": {"from": [C...], "with": [C...], "map": {"PATTERN": KIND}},
 *     "unit": "minor",
 *     "txn_id": F, "order_key": F, "batch_id": F, "payout_id": F,
 *     "batch_date": F, "time": F,
 *     "currency": F, "gross": F, "fee": F, "net": F, "balance": F,
 *     "text": F, "account": F
 *   }
 * kind: the row's kind from the first non-empty of its `from` columns (with
 * "/" and the first non-empty `with` column appended, as a column rule's
 * map: PayPal's "T0006/CR"), looked up in map (patterns where '*' stands
 * for any run); a KIND is payment, refund, dispute, fee, adjustment or
 * payout, or "skip": a row the profile declares no money of the settlement
 * side (a WeChat REVOKED row).  Without `from`: the kind part of the row's
 * callback_type (the profile's own kind, before --kind).  A value the map
 * does not list fails the file.  A bank profile has no kind: a credit or a
 * debit by the sign of the amount.
 * F, a field: {"column": C | [C, ALT...]} the first of those columns that
 * holds a value; {"value": V} a constant; {"money": FACT} a money fact of
 * the row's kind (amount, fee, currency, record, settlement.amount,
 * settlement.fee: profile.h's money_kind, so a trade bill says where its
 * money is once).  An amount may add {"sign": {"column": C | [C...],
 * "plus": [V...], "minus": [V...]}}: the column is unsigned and that
 * column's value says which way it goes (PayPal's CR/DR, WeChat's 收支类型
 * 收入/支出), or be {"in": C | [C...], "out": C | [C...]}: the in column's
 * amount less the out column's (Alipay's 收入金额（+元） / 支出金额（-元）).
 * payout_id: a payout row's own batch id (its batch_id; Stripe's source_id
 * po_..., PayPal's withdrawal's Transaction ID, WeChat's 业务凭证号).
 * batch_date: the day the row's batch is expected in the bank, where the
 * file states it though it lists no payout row (Stripe's payout
 * reconciliation report: automatic_payout_effective_at); YYYY-MM-DD first.
 * Money facts ("money") are taken by their size and signed by the kind: a
 * payment's gross in and its fee charged, a refund's both given back.
 * footer_money {"section": "SF", "report": "RF"}: framing rows (a profile
 * with row types) that state per currency the money of the section's (or
 * the report's) rows: currency, gross credits, gross debits, fee credits,
 * fee debits, in the file's unit (PayPal STL); checked against the rows.
 * unit "minor": the amounts are in the currency's minor unit (PayPal).
 *
 * Ownership: the profile owns its settle member (profile_free frees it).
 */
#ifndef IDEMLOAD_PROFILE_SETTLE_H
#define IDEMLOAD_PROFILE_SETTLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

struct profile;

typedef struct settle_field {
    char **column;          /* alternatives: the first holding a value */
    size_t n_column;
    char *value;            /* a constant */
    char *money;            /* a money fact of the row's kind */
    char **sign;            /* the column(s) saying the direction */
    size_t n_sign;
    char **plus, **minus;   /* its values for money in and out */
    size_t n_plus, n_minus;
    char **in, **out;       /* an amount as in less out */
    size_t n_in, n_out;
} settle_field;

static inline bool settle_field_set(const settle_field *f)
{
    return f->n_column || f->value || f->money || f->n_in;
}

typedef struct settle_kind_map {
    char *match;            /* a pattern, '*' any run */
    char *kind;             /* a settle kind's name, or "skip" */
} settle_kind_map;

typedef struct profile_settle {
    bool bank;                  /* side "bank": a bank account's CSV */
    bool minor;                 /* amounts in the currency's minor unit */
    char **kind_from;           /* none: the row's callback_type kind */
    size_t n_kind_from;
    char **kind_with;
    size_t n_kind_with;
    settle_kind_map *kind_map;
    size_t n_kind_map;
    settle_field txn_id, order_key, batch_id, payout_id, batch_date, time, currency;
    settle_field gross, fee, net, balance, text, account;
    char *footer_section;       /* footer_money: the row type stating, per */
    char *footer_report;        /* currency, its section's (report's) money */
} profile_settle;

/* The fields in the order a profile prints them, with their names. */
#define PROFILE_SETTLE_FIELDS(X)                                                    \
    X(txn_id) X(order_key) X(batch_id) X(payout_id) X(batch_date) X(time) X(currency) X(gross)  \
    X(fee) X(net)                                                                   \
    X(balance) X(text) X(account)

/*
 * Parses v (the profile's "settle" member, NULL or JSON null: none) into
 * p->settle.  False with "ORIGIN: member \"settle.X\" ..." in *err.
 */
bool profile_settle_parse(json_t *v, struct profile *p, const char *origin, buf *err);

/* The member as profile_to_json prints it (NULL when the profile has none). */
json_t *profile_settle_json(const struct profile *p);

void profile_settle_free(struct profile_settle **s);

/* A profile only `settle` reads: it says how its rows settle but maps no
 * business key (a WeChat 资金账单 has no out_trade_no): import, validate
 * and reconcile refuse it. */
bool profile_settle_only(const struct profile *p);

/* The kind a profile's "kind" map names: its index in settle_row.h's
 * settle_kind (payment .. payout), -2 for "skip", -1 for no kind. */
int profile_settle_kind(const char *name);

#endif
