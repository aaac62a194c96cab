/*
 * settle_channel.c - a channel's settlement-side file (Stripe's balance and
 * payout reconciliation reports, PayPal STL, WeChat Pay 资金账单 and trade
 * bill, Alipay 账务明细 and trade bill) or a bank CSV, read through its
 * profile: settle_profile_open() (settle/settle_row.h).
 *
 * The profile reader (input/profile_reader.c) does the reading: framing,
 * encoding, cleanup, and the file's own counts and totals, checked when
 * the input ends (a mismatch fails the file there, before READ_EOF).  Here
 * each of its rows becomes a settle_row by the profile's "settle" member
 * (input/profile_settle.h): its kind, ids, time and money.  Money is added
 * and signed as exact decimals (rules/dec_total.h), never a float.
 *
 * Nothing is left out unsaid: a row whose kind the profile's map does not
 * name, whose amount is no decimal, whose time is none, whose net is not
 * its gross less its fee, or which the reader could not split, fails the
 * file (READ_FAILED, naming the line), as does a row the profile's columns
 * refuse (a state its map does not know).  Only rows the profile's map names
 * "skip" (a WeChat REVOKED row: no money moved) are passed over.
 */
#include "settle/settle_row.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/profile.h"
#include "input/profile_settle.h"
#include "input/reader.h"
#include "recon/facts.h"
#include "rules/dec_total.h"
#include "rules/timestamp.h"
#include "rules/timezone.h"
#include "util/star_match.h"

/* The strings of one row, each an offset into out (pointers are set once
 * the row is whole: appending may move the buffer). */
enum { S_TXN, S_ORDER, S_BATCH, S_TIME, S_CURRENCY, S_GROSS, S_FEE, S_NET, S_BALANCE,
       S_TEXT, S_ACCOUNT, S_TENANT, S_PAYOUT, S_BATCH_DATE, S_COUNT };

/* The money a footer states per currency (PayPal's SF, RF), as the rows
 * add it up: gross credits, gross debits, fee credits, fee debits, each a
 * magnitude in the currency's major unit. */
enum { M_GROSS_CR, M_GROSS_DR, M_FEE_CR, M_FEE_DR, M_COUNT };
#define MAX_FOOTER_CURRENCIES 64

typedef struct cur_sums {
    char cur[9];
    dect v[M_COUNT];
} cur_sums;

typedef struct footer_sums {
    cur_sums c[MAX_FOOTER_CURRENCIES];
    size_t n;
} footer_sums;

typedef struct channel_reader {
    settle_reader base;
    reader *rd;
    const profile *pf;
    const profile_settle *st;
    tz_zone zone;           /* --timezone (owned), or the profile's */
    bool own_zone;
    bool have_zone;
    char channel[64];
    buf out;
    size_t off[S_COUNT];
    char date_buf[11];          /* a row's batch date (value_date) */
    bool has[S_COUNT];
    char kind[64];          /* the row's profile kind (pay, refund), for money facts */
    /* the row's money, for footer_money */
    dect gross, fee;
    bool has_gross, has_fee;
    int exp;
    footer_sums section, report;
} channel_reader;

static read_result fail(channel_reader *cr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static read_result fail(channel_reader *cr, const char *fmt, ...)
{
    buf_clear(&cr->base.err);
    va_list ap;
    va_start(ap, fmt);
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    buf_printf(&cr->base.err, "%s: %s", cr->base.path, msg);
    return READ_FAILED;
}

/* The first of names whose column the row holds a value in. */
static const char *first_value(channel_reader *cr, char *const *names, size_t n, size_t *len,
                               const char **which)
{
    for (size_t i = 0; i < n; i++) {
        int k = reader_source_column(cr->rd, names[i]);
        const char *v = reader_source_value(cr->rd, k, len);
        if (v && *len) {
            if (which)
                *which = names[i];
            return v;
        }
    }
    *len = 0;
    return NULL;
}

/* Is any of names a column of the header? */
static bool header_has_any(channel_reader *cr, char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (reader_source_column(cr->rd, names[i]) >= 0)
            return true;
    return false;
}

/* The money facts of the row's kind (a trade bill's pay or refund). */
static const money_kind *row_money(const channel_reader *cr)
{
    const money_kind *any = NULL;
    for (size_t i = 0; i < cr->pf->n_money; i++) {
        const money_kind *m = &cr->pf->money[i];
        if (m->kind && strcmp(m->kind, cr->kind) == 0)
            return m;
        if (!m->kind)
            any = m;
    }
    return any;
}

static const money_fact *money_fact_named(const money_kind *m, const char *name)
{
    if (!m)
        return NULL;
    if (strcmp(name, "amount") == 0)
        return &m->amount;
    if (strcmp(name, "fee") == 0)
        return &m->fee;
    if (strcmp(name, "currency") == 0)
        return &m->currency;
    if (strcmp(name, "record") == 0)
        return &m->record;
    if (strcmp(name, "settlement.amount") == 0)
        return m->settlement.amount.column || m->settlement.amount.value ? &m->settlement.amount
                                                                         : &m->amount;
    if (strcmp(name, "settlement.fee") == 0)
        return m->settlement.fee.column || m->settlement.fee.value ? &m->settlement.fee
                                                                   : &m->fee;
    return NULL;
}

/* A money fact's text on this row: its column (or the older layout's),
 * or its constant; NULL when the row holds none. */
static const char *fact_text(channel_reader *cr, const money_fact *f, size_t *len,
                             const char **which)
{
    *len = 0;
    if (!f)
        return NULL;
    if (f->value) {
        *len = strlen(f->value);
        *which = "value";
        return f->value;
    }
    char *names[2] = {f->column, f->column_alt};
    return f->column ? first_value(cr, names, f->column_alt ? 2 : 1, len, which) : NULL;
}

/* A text field's value: NULL (with *len 0) when the row holds none. */
static const char *field_text(channel_reader *cr, const settle_field *f, size_t *len,
                              const char **which)
{
    *which = NULL;
    *len = 0;
    if (f->value) {
        *len = strlen(f->value);
        *which = "value";
        return f->value;
    }
    if (f->money)
        return fact_text(cr, money_fact_named(row_money(cr), f->money), len, which);
    return first_value(cr, f->column, f->n_column, len, which);
}

static bool put(channel_reader *cr, int slot, const char *v, size_t n)
{
    cr->off[slot] = cr->out.len;
    cr->has[slot] = true;
    return buf_append(&cr->out, v, n) && buf_append_char(&cr->out, '\0');
}

static void dect_negate(dect *d)
{
    d->v = -d->v;
}

static bool in_list(char *const *v, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(v[i]) == len && memcmp(v[i], s, len) == 0)
            return true;
    return false;
}

/* Parses an amount cell; minor: in the currency's minor unit (exp digits). */
static bool parse_amount(const char *v, size_t n, bool minor, int exp, dect *out)
{
    if (!dect_parse(v, n, out))
        return false;
    if (minor) {
        for (int i = 0; i < exp; i++)
            out->v /= 10; /* exact: v holds DECT_SCALE decimals, exp is at most 3 */
        out->scale = exp;
    }
    return true;
}

/*
 * The amount field f on this row into *d; *present false when the row
 * states none.  READ_FAILED (the file failed) on a cell that is no amount
 * or a direction the profile does not know.
 */
static read_result field_amount(channel_reader *cr, const settle_field *f, const char *name,
                                int exp, uint64_t line, dect *d, bool *present)
{
    *present = false;
    memset(d, 0, sizeof *d);
    if (!settle_field_set(f))
        return READ_RECORD;
    bool minor = cr->st->minor;
    size_t n;
    const char *which = NULL;
    if (f->n_in) {
        size_t ni, no;
        const char *wi = NULL, *wo = NULL;
        const char *vi = first_value(cr, f->in, f->n_in, &ni, &wi);
        const char *vo = first_value(cr, f->out, f->n_out, &no, &wo);
        dect a = {0}, b = {0};
        if (vi && !parse_amount(vi, ni, minor, exp, &a))
            return fail(cr, "line %llu: %s \"%.*s\" is not an amount", (unsigned long long)line,
                        wi, (int)(ni > 40 ? 40 : ni), vi);
        if (vo && !parse_amount(vo, no, minor, exp, &b))
            return fail(cr, "line %llu: %s \"%.*s\" is not an amount", (unsigned long long)line,
                        wo, (int)(no > 40 ? 40 : no), vo);
        if (!vi && !vo)
            return READ_RECORD;
        /* Alipay writes the money out unsigned ("0.00") or with its
         * minus: out of the account either way. */
        if (a.v < 0)
            dect_negate(&a);
        if (b.v > 0)
            dect_negate(&b);
        *d = a;
        (void)dect_add(d, &b);
        *present = true;
        return READ_RECORD;
    }
    const money_fact *mf = NULL;
    const char *v;
    if (f->money) {
        mf = money_fact_named(row_money(cr), f->money);
        v = fact_text(cr, mf, &n, &which);
        minor = minor || (mf && mf->minor);
    } else {
        v = field_text(cr, f, &n, &which);
    }
    if (!v)
        return READ_RECORD;
    if (!parse_amount(v, n, minor, exp, d))
        return fail(cr, "line %llu: %s (%s) \"%.*s\" is not an amount",
                    (unsigned long long)line, name, which ? which : "?", (int)(n > 40 ? 40 : n),
                    v);
    if (mf && mf->magnitude && d->v < 0)
        dect_negate(d);
    if (f->n_sign) {
        size_t sn;
        const char *sw = NULL;
        const char *s = first_value(cr, f->sign, f->n_sign, &sn, &sw);
        bool plus = s && in_list(f->plus, f->n_plus, s, sn);
        bool minus = s && in_list(f->minus, f->n_minus, s, sn);
        if (!plus && !minus)
            return fail(cr, "line %llu: %s: %s \"%.*s\" is no direction profile %s knows",
                        (unsigned long long)line, name, s ? sw : f->sign[0],
                        (int)(sn > 40 ? 40 : sn), s ? s : "", cr->pf->name);
        if (d->v < 0)
            dect_negate(d);
        if (minus)
            dect_negate(d);
    }
    *present = true;
    return READ_RECORD;
}

static bool put_amount(channel_reader *cr, int slot, const dect *d, int exp)
{
    char t[DECT_TEXT_MAX];
    int scale = d->scale > exp ? d->scale : exp;
    if (scale > DECT_SCALE)
        scale = DECT_SCALE;
    dect_format(d, scale, t);
    return put(cr, slot, t, strlen(t));
}

/* "YYYY-MM-DDTHH:MM:SS" of day y-m-d and second sod of it, then off, into
 * iso (cap bytes).  Without snprintf, which was a twentieth of the
 * client's time (every row's time passes here), but for a year outside
 * 0-9999. */
static void iso_text(char *iso, size_t cap, int64_t y, int m, int d, int64_t sod,
                     const char *off)
{
    if (y < 0 || y > 9999) {
        snprintf(iso, cap, "%04lld-%02d-%02dT%02lld:%02lld:%02lld%s", (long long)y, m, d,
                 (long long)(sod / 3600), (long long)(sod / 60 % 60), (long long)(sod % 60), off);
        return;
    }
    int f[7] = {(int)y / 100, (int)y % 100, m, d, (int)(sod / 3600), (int)(sod / 60 % 60),
                (int)(sod % 60)};
    const char sep[7] = {0, 0, '-', '-', 'T', ':', ':'};
    char *p = iso;
    for (int i = 0; i < 7; i++) {
        if (sep[i])
            *p++ = sep[i];
        *p++ = (char)('0' + f[i] / 10);
        *p++ = (char)('0' + f[i] % 10);
    }
    memcpy(p, off, strlen(off) + 1);
}

/*
 * The row's time as ISO 8601 with its offset ("2024-05-01T18:40:11+08:00"):
 * its own offset when it has one (PayPal's "2024/08/20 00:01:17 -0700"),
 * else 'Z' for a column the profile declares UTC, else the zone's.  A
 * date alone stays a date (a bank's booking date).
 */
static read_result put_time(channel_reader *cr, const char *v, size_t n, const char *col,
                            uint64_t line)
{
    char t[64];
    if (n >= sizeof t - 8)
        return fail(cr, "line %llu: %s \"%.40s...\" is not a time", (unsigned long long)line,
                    col, v);
    memcpy(t, v, n);
    t[n] = '\0';
    if (n >= 10 && t[4] == '/' && t[7] == '/')
        t[4] = t[7] = '-';
    int64_t us, local_us;
    const char *why = NULL;
    if (n == 10) {
        char d[80];
        snprintf(d, sizeof d, "%.10sT00:00Z", t);
        if (!ts_parse(d, strlen(d), &us, &why))
            return fail(cr, "line %llu: %s \"%s\" is not a date: %s", (unsigned long long)line,
                        col, t, why);
        return put(cr, S_TIME, t, 10) ? READ_RECORD : fail(cr, "out of memory");
    }
    bool has_offset = false;
    for (size_t i = 10; i < n && !has_offset; i++)
        has_offset = t[i] == '+' || t[i] == '-' || t[i] == 'Z' || t[i] == 'z';
    bool utc = false;
    for (size_t i = 0; i < cr->pf->n_utc_columns && !utc; i++)
        utc = strcmp(cr->pf->utc_columns[i], col) == 0;
    if (!has_offset) {
        if (!utc && !cr->have_zone)
            return fail(cr, "line %llu: %s \"%s\" has no offset and profile %s names no zone "
                            "(--timezone)", (unsigned long long)line, col, t, cr->pf->name);
        strcat(t, "Z");
        if (!ts_parse(t, strlen(t), &local_us, &why))
            return fail(cr, "line %llu: %s \"%.*s\" is not a time: %s",
                        (unsigned long long)line, col, (int)n, v, why);
        int32_t off = 0;
        if (!utc) {
            int64_t local_s = local_us / 1000000 - (local_us % 1000000 < 0);
            off = cr->zone.fixed ? cr->zone.offset_s : tz_offset_at_local(&cr->zone, local_s);
        }
        us = local_us - (int64_t)off * 1000000;
    } else if (!ts_parse(t, strlen(t), &us, &why)) {
        return fail(cr, "line %llu: %s \"%.*s\" is not a time: %s", (unsigned long long)line,
                    col, (int)n, v, why);
    } else {
        /* The wall clock as written, read as UTC: the offset is the difference. */
        size_t k = 10;
        while (k < n && t[k] != '+' && t[k] != '-' && t[k] != 'Z' && t[k] != 'z')
            k++;
        char wall[48];
        snprintf(wall, sizeof wall, "%.*sZ", (int)k, t);
        if (!ts_parse(wall, strlen(wall), &local_us, &why))
            local_us = us;
    }
    int64_t off_s = (local_us - us) / 1000000;
    /* The wall clock's day and second of it, both rounded down. */
    const int64_t day_us = INT64_C(86400000000);
    int64_t sod = (local_us % day_us + day_us) % day_us / 1000000;
    int64_t y;
    int m, d;
    ts_civil_from_days(ts_day(local_us), &y, &m, &d);
    char off[8], iso[96];
    tz_format_offset((int32_t)off_s, off);
    iso_text(iso, sizeof iso, y, m, d, sod, off);
    return put(cr, S_TIME, iso, strlen(iso)) ? READ_RECORD : fail(cr, "out of memory");
}

/* The row's kind by the profile's map: *k a settle_kind, or -2 to skip. */
static read_result row_kind(channel_reader *cr, const raw_record *rec, int *k)
{
    const profile_settle *st = cr->st;
    char key[256];
    const char *what;
    cr->kind[0] = '\0';
    if (st->n_kind_from) {
        size_t n, wn = 0;
        const char *which = NULL;
        const char *v = first_value(cr, st->kind_from, st->n_kind_from, &n, &which);
        const char *w = st->n_kind_with
                            ? first_value(cr, st->kind_with, st->n_kind_with, &wn, NULL)
                            : NULL;
        snprintf(key, sizeof key, "%.*s%s%.*s", (int)n, v ? v : "", st->n_kind_with ? "/" : "",
                 (int)wn, w ? w : "");
        what = which ? which : st->kind_from[0];
    } else {
        /* The kind part of the row's callback_type, the profile's own
         * (before any --kind rename). */
        const field *f = &rec->fields[COL_CALLBACK_TYPE];
        if (f->kind != FIELD_TEXT)
            return fail(cr, "line %llu: the row has no kind (callback_type): %s",
                        (unsigned long long)rec->line,
                        rec->error ? rec->error : rec->skipped ? "the profile skips it"
                                                               : "empty");
        const char *colon = memchr(f->text, ':', f->len);
        size_t kn = colon ? (size_t)(colon - f->text) : f->len;
        snprintf(key, sizeof key, "%.*s", (int)kn, f->text);
        for (size_t i = 0; i < cr->pf->n_renames; i++)
            if (strcmp(cr->pf->renames[i].to, key) == 0)
                snprintf(key, sizeof key, "%s", cr->pf->renames[i].from);
        snprintf(cr->kind, sizeof cr->kind, "%.63s", key);
        what = "callback_type";
    }
    for (size_t i = 0; i < st->n_kind_map; i++)
        if (star_match(st->kind_map[i].match, key, strlen(key))) {
            *k = profile_settle_kind(st->kind_map[i].kind);
            if (st->n_kind_from)
                snprintf(cr->kind, sizeof cr->kind, "%.63s", st->kind_map[i].kind);
            return READ_RECORD;
        }
    return fail(cr, "line %llu: %s \"%s\" is not a kind profile %s's settle map names (a "
                    "row left out would be money lost)",
                (unsigned long long)rec->line, what, key, cr->pf->name);
}

/* The date of the batch a row is paid out in, where the file states it
 * (Stripe's automatic_payout_effective_at: the day the payout is expected
 * in the bank), as settle_row.value_date: its first ten characters, which
 * must be a date YYYY-MM-DD.  Only for a row linked to a batch. */
static read_result batch_date(channel_reader *cr, settle_row *out, uint64_t line)
{
    if (!cr->has[S_BATCH_DATE] || !out->batch_id)
        return READ_RECORD;
    const char *v = buf_cstr(&cr->out) + cr->off[S_BATCH_DATE];
    static const int days[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool ok = strlen(v) >= 10 && v[4] == '-' && v[7] == '-' &&
              (v[10] == '\0' || v[10] == ' ' || v[10] == 'T');
    for (int i = 0; ok && i < 10; i++)
        ok = i == 4 || i == 7 || (v[i] >= '0' && v[i] <= '9');
    int y = ok ? atoi(v) : 0, m = ok ? atoi(v + 5) : 0, d = ok ? atoi(v + 8) : 0;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (!ok || y < 1900 || m < 1 || m > 12 || d < 1 || d > days[m - 1] ||
        (m == 2 && d == 29 && !leap))
        return fail(cr, "line %llu: the batch's date '%s' is no date (YYYY-MM-DD)",
                    (unsigned long long)line, v);
    cr->date_buf[10] = '\0';
    memcpy(cr->date_buf, v, 10);
    out->value_date = cr->date_buf;
    return READ_RECORD;
}

/* The text fields into out: txn_id (required), the others when present. */
static read_result row_texts(channel_reader *cr, uint64_t line)
{
    const profile_settle *st = cr->st;
    static const struct {
        int slot;
        size_t field_off;
    } texts[] = {
        {S_TXN, offsetof(profile_settle, txn_id)},
        {S_ORDER, offsetof(profile_settle, order_key)},
        {S_BATCH, offsetof(profile_settle, batch_id)},
        {S_PAYOUT, offsetof(profile_settle, payout_id)},
        {S_BATCH_DATE, offsetof(profile_settle, batch_date)},
        {S_TEXT, offsetof(profile_settle, text)},
        {S_ACCOUNT, offsetof(profile_settle, account)},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const settle_field *f = (const settle_field *)((const char *)st + texts[i].field_off);
        size_t n;
        const char *which;
        const char *v = field_text(cr, f, &n, &which);
        if (v && !put(cr, texts[i].slot, v, n))
            return fail(cr, "out of memory");
        if (!v && texts[i].slot == S_TXN)
            return fail(cr, "line %llu: the row has no id (%s)", (unsigned long long)line,
                        f->n_column ? f->column[0] : f->money ? f->money : "txn_id");
    }
    return READ_RECORD;
}

/* Currency (upper case, required) and the money: gross, fee, net, balance. */
static read_result row_money_fields(channel_reader *cr, int kind, uint64_t line)
{
    const profile_settle *st = cr->st;
    size_t n;
    const char *which;
    const char *cur = field_text(cr, &st->currency, &n, &which);
    if (!cur || n == 0 || n > 8)
        return fail(cr, "line %llu: the row states no currency", (unsigned long long)line);
    char c[9];
    for (size_t i = 0; i < n; i++)
        c[i] = (char)toupper((unsigned char)cur[i]);
    c[n] = '\0';
    if (!put(cr, S_CURRENCY, c, n))
        return fail(cr, "out of memory");
    int exp = currency_exponent(c);
    if (exp < 0) {
        if (st->minor)
            return fail(cr, "line %llu: currency %s: its minor unit is not known", (unsigned
                        long long)line, c);
        exp = 2;
    }
    dect gross, fee, net, bal;
    bool hg, hf, hn, hb;
    read_result rr;
    if ((rr = field_amount(cr, &st->gross, "gross", exp, line, &gross, &hg)) != READ_RECORD ||
        (rr = field_amount(cr, &st->fee, "fee", exp, line, &fee, &hf)) != READ_RECORD ||
        (rr = field_amount(cr, &st->net, "net", exp, line, &net, &hn)) != READ_RECORD ||
        (rr = field_amount(cr, &st->balance, "balance", exp, line, &bal, &hb)) != READ_RECORD)
        return rr;
    /* A trade bill's money facts are signed as each bill writes them
     * (WeChat's 退款金额 unsigned, Alipay's refund -30.00): settle takes
     * their size and the kind's direction.  A payment brings its gross
     * in and is charged its fee; a refund gives its gross back, and the
     * fee with it. */
    if (st->gross.money && hg && (gross.v < 0) != (kind == SETTLE_REFUND))
        dect_negate(&gross);
    if (st->fee.money && hf && (fee.v < 0) != (kind == SETTLE_REFUND))
        dect_negate(&fee);
    if (hn && hg) {
        dect want = gross, f = hf ? fee : (dect){0};
        dect_negate(&f);
        (void)dect_add(&want, &f);
        if (!dect_equal(&want, &net)) {
            char a[DECT_TEXT_MAX], b[DECT_TEXT_MAX], x[DECT_TEXT_MAX];
            dect_format(&net, net.scale, a);
            dect_format(&gross, gross.scale, b);
            dect_format(&f, f.scale, x);
            return fail(cr, "line %llu: net %s is not gross %s less fee %s",
                        (unsigned long long)line, a, b, x + (x[0] == '-'));
        }
    } else if (!hn) {
        if (!hg)
            return fail(cr, "line %llu: the row states no amount", (unsigned long long)line);
        net = gross;
        if (hf) {
            dect f = fee;
            dect_negate(&f);
            (void)dect_add(&net, &f);
            net.scale = gross.scale > fee.scale ? gross.scale : fee.scale;
        }
    }
    cr->gross = gross;
    cr->fee = fee;
    cr->has_gross = hg;
    cr->has_fee = hf;
    cr->exp = exp;
    if ((hg && !put_amount(cr, S_GROSS, &gross, exp)) || (hf && !put_amount(cr, S_FEE, &fee, exp)) ||
        !put_amount(cr, S_NET, &net, exp) || (hb && !put_amount(cr, S_BALANCE, &bal, exp)))
        return fail(cr, "out of memory");
    return READ_RECORD;
}

static cur_sums *sums_of(footer_sums *fs, const char *cur, bool add)
{
    for (size_t i = 0; i < fs->n; i++)
        if (strcmp(fs->c[i].cur, cur) == 0)
            return &fs->c[i];
    if (!add || fs->n == MAX_FOOTER_CURRENCIES)
        return NULL;
    cur_sums *c = &fs->c[fs->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->cur, sizeof c->cur, "%s", cur);
    return c;
}

/* The row's gross and fee into the section's and the report's sums. */
static read_result add_to_footers(channel_reader *cr, const char *cur, uint64_t line)
{
    footer_sums *fs[] = {&cr->section, &cr->report};
    for (int k = 0; k < 2; k++) {
        cur_sums *c = sums_of(fs[k], cur, true);
        if (!c)
            return fail(cr, "line %llu: more than %d currencies", (unsigned long long)line,
                        MAX_FOOTER_CURRENCIES);
        dect g = cr->gross, f = cr->fee;
        if (cr->has_gross) {
            bool cr_ = g.v >= 0;
            if (!cr_)
                dect_negate(&g);
            (void)dect_add(&c->v[cr_ ? M_GROSS_CR : M_GROSS_DR], &g);
        }
        if (cr->has_fee) {
            bool charged = f.v >= 0; /* a fee charged is a debit */
            if (!charged)
                dect_negate(&f);
            (void)dect_add(&c->v[charged ? M_FEE_DR : M_FEE_CR], &f);
        }
    }
    return READ_RECORD;
}

/*
 * A footer stating money (PayPal's SF or RF: currency, gross credits,
 * gross debits, fee credits, fee debits) against the rows of its scope.
 * One whose first value is a count states no money (the older layout).
 */
static read_result check_footer(channel_reader *cr, const char *type, footer_sums *fs,
                                const char *scope, uint64_t line)
{
    size_t n;
    const char *cur = reader_source_value(cr->rd, 1, &n);
    if (!cur || n != 3 || !isupper((unsigned char)cur[0]) || !isupper((unsigned char)cur[1]) ||
        !isupper((unsigned char)cur[2]))
        return READ_RECORD; /* a count, not money */
    char code[4];
    memcpy(code, cur, 3);
    code[3] = '\0';
    int exp = currency_exponent(code);
    if (exp < 0)
        exp = 2;
    static const char *const what[] = {"gross credits", "gross debits", "fee credits",
                                       "fee debits"};
    cur_sums *c = sums_of(fs, code, false);
    for (int k = 0; k < M_COUNT; k++) {
        const char *v = reader_source_value(cr->rd, 2 + k, &n);
        dect stated;
        if (!v || !parse_amount(v, n, cr->st->minor, exp, &stated))
            return fail(cr, "line %llu: the %s footer's %s %s is not an amount: \"%.*s\"",
                        (unsigned long long)line, type, code, what[k],
                        (int)(v && n < 40 ? n : 0), v ? v : "");
        dect got = c ? c->v[k] : (dect){0};
        if (!dect_equal(&stated, &got)) {
            char a[DECT_TEXT_MAX], b[DECT_TEXT_MAX];
            dect_format(&stated, exp, a);
            dect_format(&got, exp, b);
            return fail(cr, "line %llu: the %s footer states %s %s %s but %s's rows add up to "
                            "%s: truncated or edited; nothing is compared",
                        (unsigned long long)line, type, code, what[k], a, scope, b);
        }
    }
    return READ_RECORD;
}

/* A framing row handed out (footer_money): a section or report starts,
 * or a footer states its money. */
static read_result framing_row(channel_reader *cr, const char *type, uint64_t line)
{
    const profile *pf = cr->pf;
    const profile_settle *st = cr->st;
    if (pf->section_start && strcmp(type, pf->section_start) == 0)
        cr->section.n = 0;
    if (pf->report_start && strcmp(type, pf->report_start) == 0)
        cr->report.n = 0;
    if (st->footer_section && strcmp(type, st->footer_section) == 0 &&
        reader_scope_here(cr->rd, false))
        return check_footer(cr, type, &cr->section, "its section", line);
    if (st->footer_report && strcmp(type, st->footer_report) == 0 &&
        reader_scope_here(cr->rd, true))
        return check_footer(cr, type, &cr->report, "the report", line);
    return READ_RECORD;
}

/* The row read and checked (channel_next), from its slots in cr->out, as
 * the row handed out. */
static read_result hand_out(channel_reader *cr, int kind, uint64_t line, settle_row *out)
{
    read_result rr;
    const char *base = buf_cstr(&cr->out);
#define S(slot) (cr->has[slot] ? base + cr->off[slot] : NULL)
    memset(out, 0, sizeof *out);
    out->side = cr->st->bank ? SETTLE_SIDE_BANK : SETTLE_SIDE_CHANNEL;
    out->tenant = S(S_TENANT);
    out->channel = cr->channel;
    out->account = cr->has[S_ACCOUNT] ? base + cr->off[S_ACCOUNT] : "";
    out->txn_id = S(S_TXN);
    out->order_key = S(S_ORDER);
    out->batch_id = S(S_BATCH);
    /* A payout row's batch is itself (Stripe's po_ in source_id,
     * PayPal's withdrawal, WeChat's 业务凭证号). */
    if (kind == SETTLE_PAYOUT && cr->has[S_PAYOUT])
        out->batch_id = base + cr->off[S_PAYOUT];
    out->time = S(S_TIME);
    if ((rr = batch_date(cr, out, line)) != READ_RECORD)
        return rr;
    out->currency = S(S_CURRENCY);
    out->gross = S(S_GROSS);
    out->fee = S(S_FEE);
    out->net = S(S_NET);
    out->balance = S(S_BALANCE);
    out->text = S(S_TEXT);
    out->line = line;
    if (cr->st->bank) {
        out->kind = out->net[0] == '-' ? SETTLE_BANK_DEBIT : SETTLE_BANK_CREDIT;
        out->gross = out->fee = NULL;
    } else {
        out->kind = (settle_kind)kind;
    }
#undef S
    return READ_RECORD;
}

/* Is the record just read a framing row (not one of the data row types)? */
static bool is_framing(channel_reader *cr, const raw_record *rec, char *type, size_t cap)
{
    const profile *pf = cr->pf;
    if (!pf->row_type_header || !rec->skipped || rec->error)
        return false;
    size_t n;
    const char *t = reader_source_value(cr->rd, 0, &n);
    if (!t)
        return false;
    for (size_t i = 0; i < pf->n_row_type_data; i++)
        if (strlen(pf->row_type_data[i]) == n && memcmp(pf->row_type_data[i], t, n) == 0)
            return false;
    snprintf(type, cap, "%.*s", (int)(n < cap ? n : cap - 1), t);
    return true;
}

static read_result channel_next(settle_reader *r, settle_row *out)
{
    channel_reader *cr = (channel_reader *)r;
    for (;;) {
        raw_record rec;
        read_result rr = reader_next(cr->rd, &rec);
        if (rr == READ_EOF)
            return READ_EOF;
        if (rr == READ_FAILED) {
            buf_clear(&cr->base.err);
            buf_append_str(&cr->base.err, reader_error(cr->rd));
            return READ_FAILED;
        }
        char type[16];
        if (is_framing(cr, &rec, type, sizeof type)) {
            if ((rr = framing_row(cr, type, rec.line)) != READ_RECORD)
                return rr;
            continue;
        }
        /* Not split into the header's fields (a wrong width, bytes not in
         * the encoding), or refused by the profile's columns (a state its
         * map does not know, a merchant the tenant map lacks): its money
         * cannot be placed, and a row left out would be money lost. */
        if (rec.error)
            return fail(cr, "line %llu: %s", (unsigned long long)rec.line, rec.error);
        int kind = SETTLE_ADJUSTMENT;
        if (!cr->st->bank && (rr = row_kind(cr, &rec, &kind)) != READ_RECORD)
            return rr;
        if (kind == -2)
            continue; /* the profile says: no money of the settlement side */
        buf_clear(&cr->out);
        memset(cr->has, 0, sizeof cr->has);
        if ((rr = row_texts(cr, rec.line)) != READ_RECORD ||
            (rr = row_money_fields(cr, kind, rec.line)) != READ_RECORD)
            return rr;
        size_t n;
        const char *which;
        const char *tv = field_text(cr, &cr->st->time, &n, &which);
        if (!tv)
            return fail(cr, "line %llu: the row states no time", (unsigned long long)rec.line);
        if ((rr = put_time(cr, tv, n, which, rec.line)) != READ_RECORD)
            return rr;
        if ((cr->st->footer_section || cr->st->footer_report) &&
            (rr = add_to_footers(cr, buf_cstr(&cr->out) + cr->off[S_CURRENCY], rec.line)) !=
                READ_RECORD)
            return rr;
        const field *tf = &rec.fields[COL_TENANT_ID];
        if (!put(cr, S_TENANT, tf->kind == FIELD_TEXT ? tf->text : "",
                 tf->kind == FIELD_TEXT ? tf->len : 0))
            return fail(cr, "out of memory");
        return hand_out(cr, kind, rec.line, out);
    }
}

static void channel_close(settle_reader *r)
{
    channel_reader *cr = (channel_reader *)r;
    reader_close(&cr->rd);
    if (cr->own_zone)
        tz_free(&cr->zone);
    buf_free(&cr->out);
    buf_free(&cr->base.err);
    free(cr);
}

/* The header lacks every column of a field the rows need. */
static bool check_header(channel_reader *cr, buf *err)
{
    const profile_settle *st = cr->st;
    const settle_field *need[] = {&st->txn_id, &st->time, &st->currency, &st->net, &st->gross};
    const char *names[] = {"txn_id", "time", "currency", "net", "gross"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const settle_field *f = need[i];
        char *const *cols = f->n_column ? f->column : f->in;
        size_t n = f->n_column ? f->n_column : f->n_in;
        if (n == 0 || header_has_any(cr, cols, n))
            continue;
        buf_printf(err, "%s: the header has no column for settle.%s of profile %s (", cr->base.path,
                   names[i], cr->pf->name);
        for (size_t k = 0; k < n; k++)
            buf_printf(err, "%s%s", k ? " or " : "", cols[k]);
        buf_printf(err, ")");
        return false;
    }
    if (st->n_kind_from && !header_has_any(cr, st->kind_from, st->n_kind_from)) {
        buf_printf(err, "%s: the header has no column for settle.kind of profile %s (%s)",
                   cr->base.path, cr->pf->name, st->kind_from[0]);
        return false;
    }
    return true;
}

settle_reader *settle_profile_open(source *src, const char *path,
                                   const settle_read_options *opt, buf *err)
{
    const profile *pf = opt->profile;
    if (!pf || !pf->settle) {
        buf_printf(err, "%s: profile %s says nothing of settlement (it has no \"settle\" "
                        "member)", path, pf ? pf->name : "(none)");
        return NULL;
    }
    channel_reader *cr = calloc(1, sizeof *cr);
    if (!cr) {
        buf_printf(err, "%s: out of memory", path);
        return NULL;
    }
    cr->base.next = channel_next;
    cr->base.close = channel_close;
    cr->base.path = path;
    cr->pf = pf;
    cr->st = pf->settle;
    settle_reader *r = &cr->base;
    if (opt->zone) {
        if (!tz_resolve(opt->zone, &cr->zone, err)) {
            channel_close(r);
            return NULL;
        }
        cr->own_zone = cr->have_zone = true;
    } else if (pf->timezone) {
        cr->zone = pf->tz;
        cr->have_zone = true;
    }
    const column_rule *ch = &pf->col[COL_CHANNEL];
    snprintf(cr->channel, sizeof cr->channel, "%s",
             cr->st->bank ? "bank" : ch->set && ch->value ? ch->value : pf->name);
    reader_options ro;
    memset(&ro, 0, sizeof ro);
    ro.profile = pf;
    ro.framing_rows = cr->st->footer_section || cr->st->footer_report;
    ro.values_only = true;  /* the rows' values are read; a payload would go unused */
    cr->rd = reader_open(src, path, &ro, err);
    if (!cr->rd || !check_header(cr, err)) {
        channel_close(r);
        return NULL;
    }
    return r;
}
