/*
 * settle_opts.c - settle's own options, checked (see settle_opts.h).
 */
#include "settle/settle_opts.h"

#include <stdio.h>
#include <string.h>

#include "recon/facts.h"

/* s[0..n) is an unsigned decimal ("0.6", "30", "0.30"): digits, at most
 * one point, at most 8 decimals, at most 12 digits before it. */
static bool plain_decimal(const char *s, size_t n)
{
    size_t digits = 0, before = 0, after = 0;
    bool point = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.' && !point) {
            point = true;
        } else if (s[i] >= '0' && s[i] <= '9') {
            digits++;
            if (point)
                after++;
            else
                before++;
        } else {
            return false;
        }
    }
    return digits > 0 && before <= 12 && after <= 8;
}

static bool copy_decimal(char *dst, size_t cap, const char *s, size_t n)
{
    if (!plain_decimal(s, n) || n + 1 > cap)
        return false;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return true;
}

bool settle_parse_fee_rate(const char *arg, fee_rate *out, buf *err)
{
    memset(out, 0, sizeof *out);
    const char *eq = strchr(arg, '=');
    size_t cn = eq ? (size_t)(eq - arg) : 0;
    if (!eq || cn == 0 || cn >= sizeof out->channel || !eq[1])
        goto bad;
    memcpy(out->channel, arg, cn);
    out->given = eq + 1;
    strcpy(out->percent, "0");
    strcpy(out->fixed, "0");
    const char *r = eq + 1;
    const char *pct = strchr(r, '%');
    if (pct) {
        if (!copy_decimal(out->percent, sizeof out->percent, r, (size_t)(pct - r)))
            goto bad;
        r = pct + 1;
        if (!*r)
            return true;
        if (*r != '+' || !r[1])
            goto bad;
        r++;
    }
    if (strchr(r, '%') || !copy_decimal(out->fixed, sizeof out->fixed, r, strlen(r)))
        goto bad;
    return true;
bad:
    buf_printf(err, "--fee-rate takes CHANNEL=RATE, RATE a percentage, a fixed amount in the "
                    "currency's major unit, or both (wechat=0.6%%, stripe=2.9%%+0.30, "
                    "paypal=0.30); got '%s'", arg);
    return false;
}

/* One bound: "0" or a duration. */
static bool bound(const char *s, int64_t *out, buf *err)
{
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return true;
    }
    return recon_parse_duration(s, out, err);
}

bool settle_parse_window(const char *s, int64_t *min_s, int64_t *max_s, buf *err)
{
    *min_s = 0;
    *max_s = 3 * 86400;
    if (!s)
        return true;
    const char *dots = strstr(s, "..");
    char lo[32];
    size_t n = dots ? (size_t)(dots - s) : 0;
    if (!dots || n == 0 || n >= sizeof lo || !dots[2]) {
        buf_printf(err, "--settle-window takes MIN..MAX, each 0, Nd, Nh or Nm (0..3d); got '%s'",
                   s);
        return false;
    }
    memcpy(lo, s, n);
    lo[n] = '\0';
    buf e = BUF_INIT;
    bool ok = bound(lo, min_s, &e) && bound(dots + 2, max_s, &e);
    if (!ok)
        buf_printf(err, "--settle-window %s: %s", s, buf_cstr(&e));
    else if (*min_s > *max_s) {
        buf_printf(err, "--settle-window %s: MIN is after MAX", s);
        ok = false;
    }
    buf_free(&e);
    return ok;
}
