/*
 * settle_kind.c - the names of settle's kinds (settle_kind.h).
 */
#include "core/settle_kind.h"

#include <string.h>

static const char *const kind_names[SETTLE_KIND_COUNT] = {
    [SETTLE_PAYMENT] = "payment",       [SETTLE_REFUND] = "refund",
    [SETTLE_DISPUTE] = "dispute",       [SETTLE_FEE] = "fee",
    [SETTLE_ADJUSTMENT] = "adjustment", [SETTLE_PAYOUT] = "payout",
    [SETTLE_BANK_CREDIT] = "bank_credit", [SETTLE_BANK_DEBIT] = "bank_debit",
};

const char *settle_kind_name(settle_kind k)
{
    return (unsigned)k < SETTLE_KIND_COUNT ? kind_names[k] : "?";
}

int settle_kind_lookup(const char *name)
{
    for (int k = 0; k < SETTLE_KIND_COUNT; k++)
        if (strcmp(kind_names[k], name) == 0)
            return k;
    return -1;
}
