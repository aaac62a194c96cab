/*
 * settle_opts.h - the values of settle's own options, checked: --fee-rate
 * CHANNEL=RATE and --settle-window MIN..MAX (SPEC.md, "Settle").  Pure
 * code, no database.
 */
#ifndef IDEMLOAD_SETTLE_OPTS_H
#define IDEMLOAD_SETTLE_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/buf.h"

/* One --fee-rate: "wechat=0.6%", "stripe=2.9%+0.30", "paypal=0.30"
 * (a fixed amount only), "alipay=0.55%+0" .  percent and fixed are
 * decimal text ("0" when absent); the fee of a payment of gross g is
 * round_half_up(g * percent / 100, the currency's minor unit) + fixed. */
typedef struct fee_rate {
    char channel[64];
    char percent[32];
    char fixed[32];
    const char *given;      /* RATE as given (borrowed) */
} fee_rate;

/* Parses arg (CHANNEL=RATE).  False with *err naming the option. */
bool settle_parse_fee_rate(const char *arg, fee_rate *out, buf *err);

/* --settle-window "MIN..MAX", each a duration of recon_parse_duration
 * ("0", "Nd", "Nh", "Nm"), MIN <= MAX; NULL: 0..3d.  False with *err. */
bool settle_parse_window(const char *s, int64_t *min_s, int64_t *max_s, buf *err);

#endif
