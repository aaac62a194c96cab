/*
 * bank_mt940.c - a SWIFT MT940 customer statement, read line by line.
 *
 * A file holds one message or several, each :20: reference, :25: account,
 * :28C: (or :28:) statement number, :60F:/:60M: opening balance, :61:
 * entries each optionally followed by its :86: details, :62F:/:62M:
 * closing balance, :64:/:65: available balances; with or without SWIFT
 * blocks ({1:...}{2:...}{4: before, -} or -}{5:...} after), with "-" lines
 * between messages or none, a bank's banner lines before (ABN AMRO's
 * "ABNANL2A / 940"), CRLF or LF.  Fields this reader does not use (:21:,
 * :NS:, :64:, ...) are passed over.
 *
 * Each message is checked when its :62F:/:62M: comes: opening + entries ==
 * closing, exactly; an intermediate closing balance (:62M:) must be the
 * next message's opening (:60M:) on the same account.  A message without a
 * closing balance (a truncated file) fails the file.
 *
 * An entry's text (:86:, else the :61:'s supplementary details) that is not
 * UTF-8 is read as ISO 8859-1 (the character set German and Dutch banks
 * write umlauts in), so no byte is lost and the row stays valid UTF-8; a GBK
 * text then reads as Latin-1 letters, from which its bytes can be recovered.
 */
#include "settle/bank_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/utf8.h"

#define MT_READ_CHUNK ((size_t)64 << 10)

typedef struct mt_field {
    bool set;
    char tag[4];            /* "20", "28C", "61", "NS" */
    buf body;               /* its lines, '\n' between */
    uint64_t line;
} mt_field;

typedef struct mt_reader {
    settle_reader base;
    char *path;
    bank_input in;
    char *rbuf;
    size_t rpos, rlen;
    bool eof, failed, done;
    uint64_t lineno;
    buf line;

    mt_field cur;           /* the field being read */
    mt_field held;          /* a field read ahead, not yet handled */
    bool ended;             /* a message end ("-", "-}") was read */

    /* the current message */
    bool in_msg, has_open, has_close;
    buf ref, stmt_no, account, ccy;
    dect open, total;
    char open_text[DECT_TEXT_MAX];
    uint64_t n_entries, msg_line, messages, ordinal;

    /* the last message's intermediate closing balance (:62M:) */
    bool carry;
    dect carry_v;
    char carry_text[DECT_TEXT_MAX];
    buf carry_account;

    buf o_net, o_txn, o_batch, o_time, o_val, o_text, o_ccy, o_account, tmp;
} mt_reader;

static read_result fail(mt_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static read_result fail(mt_reader *r, const char *fmt, ...)
{
    va_list ap;
    char tmp[1024];
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    buf_clear(&r->base.err);
    buf_printf(&r->base.err, "%s: %s", r->path, tmp);
    r->failed = true;
    return READ_FAILED;
}

/* The next line (without its CR LF) into r->line: 1, 0 at the end, -1 on
 * an error (already reported). */
static int next_line(mt_reader *r)
{
    bool saw_nl = false;
    buf_clear(&r->line);
    for (;;) {
        if (r->rpos == r->rlen) {
            if (r->eof)
                break;
            ssize_t got = bank_input_read(&r->in, r->rbuf, MT_READ_CHUNK);
            if (got < 0) {
                fail(r, "%s", source_error(r->in.src));
                return -1;
            }
            if (got == 0) {
                r->eof = true;
                break;
            }
            r->rpos = 0;
            r->rlen = (size_t)got;
        }
        const char *p = r->rbuf + r->rpos;
        size_t n = r->rlen - r->rpos;
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (r->line.len + take > BANK_MAX_VALUE) {
            fail(r, "line %" PRIu64 ": over %zu bytes: no MT940 line is that long",
                 r->lineno + 1, BANK_MAX_VALUE);
            return -1;
        }
        if (!buf_append(&r->line, p, take)) {
            fail(r, "out of memory");
            return -1;
        }
        r->rpos += take + (nl ? 1 : 0);
        if (nl) {
            saw_nl = true;
            break;
        }
    }
    if (r->eof && r->rpos == r->rlen && r->line.len == 0 && !saw_nl)
        return 0;
    r->lineno++;
    if (r->line.len && r->line.data[r->line.len - 1] == '\r')
        r->line.data[--r->line.len] = '\0';
    if (memchr(r->line.data ? r->line.data : "", '\0', r->line.len)) {
        fail(r, "line %" PRIu64 ": a NUL byte: not an MT940 text", r->lineno);
        return -1;
    }
    return 1;
}

/* Is line a field's first line ":TAG:" (two digits and an optional letter,
 * or two or three capitals such as :NS:)?  Sets the tag's length. */
static bool field_tag(const char *s, size_t n, size_t *tag_len)
{
    if (n < 4 || s[0] != ':')
        return false;
    size_t i = 1;
    while (i < n && i <= 4 && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'Z')))
        i++;
    if (i >= n || s[i] != ':' || i - 1 < 2 || i - 1 > 3)
        return false;
    bool digits = s[1] >= '0' && s[1] <= '9';
    if (digits && !(s[2] >= '0' && s[2] <= '9'))
        return false;
    if (digits && i - 1 == 3 && !(s[3] >= 'A' && s[3] <= 'Z'))
        return false;       /* ":940:" is a banner, not a field */
    *tag_len = i - 1;
    return true;
}

/* Starts r->cur with the field whose first line is s[0..n) (tag tl long). */
static void field_begin(mt_reader *r, const char *s, size_t n, size_t tl)
{
    memcpy(r->cur.tag, s + 1, tl);
    r->cur.tag[tl] = '\0';
    buf_clear(&r->cur.body);
    buf_append(&r->cur.body, s + tl + 2, n - tl - 2);
    r->cur.line = r->lineno;
    r->cur.set = true;
}

/* Hands the whole field r->cur out as *f (their buffers swapped). */
static void field_out(mt_reader *r, mt_field *f)
{
    mt_field t = *f;
    *f = r->cur;
    r->cur = t;
    r->cur.set = false;
    buf_clear(&r->cur.body);
}

/*
 * The next whole field into *f: 1, or 0 at the end of the file, -1 on an
 * error.  A message's end ("-", "-}...") is a field of tag "-".  A line
 * that starts no field continues the open one; before any field (a banner,
 * a SWIFT header) it is passed over.
 */
static int next_field(mt_reader *r, mt_field *f)
{
    if (r->held.set) {
        mt_field t = *f;
        *f = r->held;
        r->held = t;
        r->held.set = false;
        return 1;
    }
    if (r->ended) {
        r->ended = false;
        strcpy(f->tag, "-");
        buf_clear(&f->body);
        f->line = r->lineno;
        f->set = true;
        return 1;
    }
    for (;;) {
        int got = next_line(r);
        if (got < 0)
            return -1;
        if (got == 0) {
            if (!r->cur.set)
                return 0;
            field_out(r, f);
            return 1;
        }
        const char *s = r->line.data ? r->line.data : "";
        size_t n = r->line.len;
        size_t tl = 0;
        if (n && s[0] == '{') {
            /* {1:...}{2:...}{4: and perhaps the first field on the same line */
            const char *b4 = NULL;
            for (const char *q = s; (q = strstr(q, "{4:")) != NULL; q += 3)
                b4 = q;
            size_t skip = b4 ? (size_t)(b4 + 3 - s) : n;
            memmove(r->line.data, s + skip, n - skip + 1);
            r->line.len = n - skip;
            s = r->line.data;
            n = r->line.len;
        }
        bool end = n >= 1 && s[0] == '-' && (n == 1 || s[1] == '}');
        bool starts = !end && field_tag(s, n, &tl);
        if (end) {
            if (r->cur.set) {
                field_out(r, f);
                r->ended = true;
                return 1;
            }
            strcpy(f->tag, "-");
            buf_clear(&f->body);
            f->line = r->lineno;
            f->set = true;
            return 1;
        }
        if (starts) {
            if (r->cur.set) {
                field_out(r, f);
                field_begin(r, s, n, tl);
                return 1;
            }
            field_begin(r, s, n, tl);
            continue;
        }
        if (n == 0 || !r->cur.set)
            continue;       /* an empty line, a banner, a header */
        if (r->cur.body.len + 1 + n > BANK_MAX_VALUE) {
            fail(r, "line %" PRIu64 ": field :%s: runs over %zu bytes", r->lineno,
                 r->cur.tag, BANK_MAX_VALUE);
            return -1;
        }
        buf_append_char(&r->cur.body, '\n');
        buf_append(&r->cur.body, s, n);
    }
}

/* Text from the file into dst as UTF-8: as it is when it is UTF-8, else
 * each byte as the ISO 8859-1 character it stands for. */
static void mt_text(buf *dst, const char *s, size_t n)
{
    buf_clear(dst);
    if (utf8_check(s, n, NULL, NULL)) {
        buf_append(dst, s, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            buf_append_char(dst, (char)c);
        } else {
            buf_append_char(dst, (char)(0xC0 | (c >> 6)));
            buf_append_char(dst, (char)(0x80 | (c & 0x3F)));
        }
    }
}

/* The first line of a field's body, trimmed, as UTF-8, into dst. */
static void first_line(const mt_field *f, buf *dst)
{
    const char *s = f->body.data ? f->body.data : "";
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : f->body.len;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    mt_text(dst, s, n);
}

static int two(const char *s)
{
    return (s[0] - '0') * 10 + (s[1] - '0');
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* YYMMDD into *y *m *d: years 80..99 are 19YY, the others 20YY. */
static bool yymmdd(const char *s, int *y, int *m, int *d)
{
    if (!all_digits(s, 6))
        return false;
    *y = two(s);
    *y += *y >= 80 ? 1900 : 2000;
    *m = two(s + 2);
    *d = two(s + 4);
    return bank_date_valid(*y, *m, *d);
}

/* A balance field (:60F: :62M: ...): "C110522EUR3236,28". */
static read_result balance(mt_reader *r, const mt_field *f, dect *v, char *text,
                           buf *ccy_out)
{
    buf_clear(&r->tmp);
    first_line(f, &r->tmp);
    const char *s = buf_cstr(&r->tmp);
    size_t n = r->tmp.len;
    int y, m, d;
    if (n < 12 || (s[0] != 'C' && s[0] != 'D') || !yymmdd(s + 1, &y, &m, &d) ||
        !(s[7] >= 'A' && s[7] <= 'Z' && s[8] >= 'A' && s[8] <= 'Z' && s[9] >= 'A' && s[9] <= 'Z'))
        return fail(r, "line %" PRIu64 ": :%s: \"%s\" is not a balance (D/C mark, YYMMDD, "
                       "currency, amount)", f->line, f->tag, s);
    buf amt = BUF_INIT;
    bool ok = bank_amount(s + 10, n - 10, ',', s[0] == 'D', &amt, v);
    if (ok)
        snprintf(text, DECT_TEXT_MAX, "%s", buf_cstr(&amt));
    buf_free(&amt);
    if (!ok)
        return fail(r, "line %" PRIu64 ": :%s: amount \"%s\" is not an MT940 amount",
                    f->line, f->tag, s + 10);
    buf_clear(ccy_out);
    buf_append(ccy_out, s + 7, 3);
    return READ_RECORD;
}

static read_result message_start(mt_reader *r, const mt_field *f)
{
    if (r->in_msg && !r->has_close)
        return fail(r, "line %" PRIu64 ": a new message (:20:) before message \"%s\" "
                       "(line %" PRIu64 ") gave its closing balance (:62F:/:62M:)",
                    f->line, buf_cstr(&r->ref), r->msg_line);
    r->in_msg = true;
    r->has_open = r->has_close = false;
    first_line(f, &r->ref);
    buf_clear(&r->stmt_no);
    buf_clear(&r->account);
    buf_clear(&r->ccy);
    memset(&r->total, 0, sizeof r->total);
    r->n_entries = 0;
    r->msg_line = f->line;
    r->messages++;
    return READ_RECORD;
}

static read_result opening(mt_reader *r, const mt_field *f)
{
    if (!r->in_msg || r->has_open)
        return fail(r, "line %" PRIu64 ": an opening balance (:%s:) %s", f->line, f->tag,
                    r->in_msg ? "twice in one message" : "outside a message (no :20: before it)");
    buf ccy = BUF_INIT;
    read_result res = balance(r, f, &r->open, r->open_text, &ccy);
    if (res != READ_RECORD) {
        buf_free(&ccy);
        return res;
    }
    buf_clear(&r->ccy);
    buf_append(&r->ccy, ccy.data, ccy.len);
    buf_free(&ccy);
    bool mid = strcmp(f->tag, "60M") == 0;
    if (r->carry) {
        if (!mid)
            return fail(r, "line %" PRIu64 ": message \"%s\" opens with :60F: after the last "
                           "one closed with an intermediate balance (:62M:) %s",
                        f->line, buf_cstr(&r->ref), r->carry_text);
        if (!dect_equal(&r->carry_v, &r->open) ||
            strcmp(buf_cstr(&r->carry_account), buf_cstr(&r->account)) != 0)
            return fail(r, "line %" PRIu64 ": message \"%s\" opens (:60M:) at %s on %s, but "
                           "the last one closed (:62M:) at %s on %s", f->line,
                        buf_cstr(&r->ref), r->open_text, buf_cstr(&r->account), r->carry_text,
                        buf_cstr(&r->carry_account));
        r->carry = false;
    }
    r->has_open = true;
    return READ_RECORD;
}

static read_result closing(mt_reader *r, const mt_field *f)
{
    if (!r->has_open || r->has_close)
        return fail(r, "line %" PRIu64 ": a closing balance (:%s:) %s", f->line, f->tag,
                    r->has_close ? "twice in one message" : "before any opening balance (:60F:/:60M:)");
    dect close;
    char close_text[DECT_TEXT_MAX];
    buf ccy = BUF_INIT;
    read_result res = balance(r, f, &close, close_text, &ccy);
    bool same = strcmp(buf_cstr(&ccy), buf_cstr(&r->ccy)) == 0;
    buf_free(&ccy);
    if (res != READ_RECORD)
        return res;
    if (!same)
        return fail(r, "line %" PRIu64 ": message \"%s\" opens in %s and closes in another "
                       "currency", f->line, buf_cstr(&r->ref), buf_cstr(&r->ccy));
    dect end = r->open;
    char a[DECT_TEXT_MAX], b[DECT_TEXT_MAX];
    if (!dect_add(&end, &r->total) || !dect_equal(&end, &close)) {
        bank_dect_text(&r->total, 2, a);
        bank_dect_text(&end, 2, b);
        return fail(r, "line %" PRIu64 ": message \"%s\" (statement %s): opening balance %s "
                       "plus its %" PRIu64 " entries (%s) is %s, but its closing balance is %s",
                    f->line, buf_cstr(&r->ref), buf_cstr(&r->stmt_no), r->open_text,
                    r->n_entries, a, b, close_text);
    }
    r->has_close = true;
    r->carry = strcmp(f->tag, "62M") == 0;
    if (r->carry) {
        r->carry_v = close;
        snprintf(r->carry_text, sizeof r->carry_text, "%s", close_text);
        buf_clear(&r->carry_account);
        buf_append(&r->carry_account, r->account.data ? r->account.data : "", r->account.len);
    }
    return READ_RECORD;
}

/* The year of an entry date MMDD booked near the value date vy-vm-vd: the
 * value date's year, or the one before or after across a year end. */
static int entry_year(int vy, int vm, int em)
{
    if (em - vm > 6)
        return vy - 1;
    if (vm - em > 6)
        return vy + 1;
    return vy;
}

/* A :61: field (and its :86:, when d is not NULL) into the row. */
/* An entry's :61: line, as far as settle reads it (s[0..n), its first
 * line): the dates, the direction, the amount (into r->o_net and *v), the
 * customer and bank references. */
typedef struct mt_entry {
    int vy, vm, vd, by, bm, bd;     /* value date, entry (booking) date */
    bool credit;
    const char *ref, *bank;         /* customer reference, bank reference */
    size_t cust_n, bank_n;
} mt_entry;

static read_result parse_61(mt_reader *r, const mt_field *f, const char *s, size_t n,
                            mt_entry *e, dect *v)
{
    if (n < 6 || !yymmdd(s, &e->vy, &e->vm, &e->vd))
        return fail(r, "line %" PRIu64 ": :61: \"%.*s\" does not start with a value date "
                       "YYMMDD", f->line, (int)(n > 40 ? 40 : n), s);
    size_t i = 6;
    e->by = e->vy, e->bm = e->vm, e->bd = e->vd;
    if (n - i >= 4 && all_digits(s + i, 4)) {
        e->bm = two(s + i);
        e->bd = two(s + i + 2);
        e->by = entry_year(e->vy, e->vm, e->bm);
        if (!bank_date_valid(e->by, e->bm, e->bd))
            return fail(r, "line %" PRIu64 ": :61: entry date %.4s is no date", f->line, s + i);
        i += 4;
    } else {
        for (int k = 0; k < 4 && i < n && s[i] == ' '; k++)
            i++;        /* an entry date left blank (Citi) */
    }
    if (n - i >= 2 && s[i] == 'R' && (s[i + 1] == 'C' || s[i + 1] == 'D')) {
        e->credit = s[i + 1] == 'D';   /* reversal of a debit: money in */
        i += 2;
    } else if (n - i >= 1 && (s[i] == 'C' || s[i] == 'D')) {
        e->credit = s[i] == 'C';
        i += 1;
    } else {
        return fail(r, "line %" PRIu64 ": :61: no debit/credit mark (D, C, RD, RC) after "
                       "its dates", f->line);
    }
    if (i < n && s[i] >= 'A' && s[i] <= 'Z')
        i++;            /* funds code: the currency's third letter */
    size_t a0 = i;
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == ','))
        i++;
    if (!bank_amount(s + a0, i - a0, ',', !e->credit, &r->o_net, v))
        return fail(r, "line %" PRIu64 ": :61: amount \"%.*s\" is not an MT940 amount",
                    f->line, (int)(i - a0), s + a0);
    /* 1!a3!c: N, F or S and three characters (NTRF, FCHG, S103); a letter
     * at least, so that "10.50" is never read as 10 with a type ".50N1" */
    if (n - i < 4 || s[i] < 'A' || s[i] > 'Z')
        return fail(r, "line %" PRIu64 ": :61: no transaction type (NTRF, NMSC, ...) right "
                       "after its amount \"%.*s\"", f->line, (int)(i - a0), s + a0);
    i += 4;             /* transaction type: NTRF, NMSC, FCHG, S103 ... */
    e->ref = s + i;
    size_t ref_n = n - i;
    const char *sep = NULL;
    for (size_t k = 0; k + 1 < ref_n; k++)
        if (e->ref[k] == '/' && e->ref[k + 1] == '/') {
            sep = e->ref + k;
            break;
        }
    e->cust_n = sep ? (size_t)(sep - e->ref) : ref_n;
    e->bank = sep ? sep + 2 : "";
    e->bank_n = sep ? ref_n - e->cust_n - 2 : 0;
    while (e->cust_n && e->ref[e->cust_n - 1] == ' ')
        e->cust_n--;
    while (e->bank_n && e->bank[e->bank_n - 1] == ' ')
        e->bank_n--;
    return READ_RECORD;

}

static read_result entry(mt_reader *r, const mt_field *f, const mt_field *d, settle_row *out)
{
    if (!r->has_open || r->has_close)
        return fail(r, "line %" PRIu64 ": an entry (:61:) %s", f->line,
                    r->has_close ? "after the message's closing balance" :
                                   "before its message's opening balance (:60F:/:60M:)");
    const char *body = f->body.data ? f->body.data : "";
    const char *nl = strchr(body, '\n');
    size_t n = nl ? (size_t)(nl - body) : f->body.len;
    const char *s = body;
    mt_entry en;
    dect v;
    read_result rr = parse_61(r, f, s, n, &en, &v);
    if (rr != READ_RECORD)
        return rr;
    if (!dect_add(&r->total, &v))
        return fail(r, "line %" PRIu64 ": the entries' sum overflows", f->line);
    r->n_entries++;
    r->ordinal++;

    mt_text(&r->o_batch, en.ref, en.cust_n);
    bool has_batch = r->o_batch.len && strcmp(r->o_batch.data, "NONREF") != 0;
    mt_text(&r->o_txn, en.bank, en.bank_n);
    if (!r->o_txn.len || strcmp(r->o_txn.data, "NONREF") == 0) {
        buf_clear(&r->o_txn);
        buf_printf(&r->o_txn, "%s/%s/%" PRIu64, buf_cstr(&r->ref), buf_cstr(&r->stmt_no),
                   r->ordinal);
    }
    buf_clear(&r->o_time);
    buf_printf(&r->o_time, "%04d-%02d-%02d", en.by, en.bm, en.bd);
    buf_clear(&r->o_val);
    buf_printf(&r->o_val, "%04d-%02d-%02d", en.vy, en.vm, en.vd);
    if (d)
        mt_text(&r->o_text, d->body.data ? d->body.data : "", d->body.len);
    else if (nl)
        mt_text(&r->o_text, nl + 1, f->body.len - (size_t)(nl + 1 - body));
    else
        buf_clear(&r->o_text);
    buf_clear(&r->o_ccy);
    buf_append(&r->o_ccy, r->ccy.data, r->ccy.len);
    bank_pad_minor(&r->o_net, r->o_ccy.data);
    buf_clear(&r->o_account);
    buf_append(&r->o_account, r->account.data ? r->account.data : "", r->account.len);

    memset(out, 0, sizeof *out);
    out->side = SETTLE_SIDE_BANK;
    out->kind = en.credit ? SETTLE_BANK_CREDIT : SETTLE_BANK_DEBIT;
    out->tenant = "";
    out->channel = "bank";
    out->account = buf_cstr(&r->o_account);
    out->txn_id = buf_cstr(&r->o_txn);
    out->order_key = NULL;
    out->batch_id = has_batch ? buf_cstr(&r->o_batch) : NULL;
    out->time = buf_cstr(&r->o_time);
    out->value_date = buf_cstr(&r->o_val);
    out->currency = buf_cstr(&r->o_ccy);
    out->gross = out->fee = NULL;
    out->net = buf_cstr(&r->o_net);
    out->balance = NULL;
    out->text = r->o_text.len ? buf_cstr(&r->o_text) : NULL;
    out->line = f->line;
    return READ_RECORD;
}

static read_result message_end(mt_reader *r)
{
    if (r->in_msg && !r->has_close)
        return fail(r, "message \"%s\" (line %" PRIu64 ") ends without its closing balance "
                       "(:62F:/:62M:): the file is cut short or not a statement",
                    buf_cstr(&r->ref), r->msg_line);
    r->in_msg = false;
    return READ_RECORD;
}

static read_result mt_next(settle_reader *base, settle_row *out)
{
    mt_reader *r = (mt_reader *)base;
    if (r->failed)
        return READ_FAILED;
    if (r->done)
        return READ_EOF;
    mt_field f = {0}, d = {0};
    read_result res = READ_RECORD;
    while (res == READ_RECORD) {
        int got = next_field(r, &f);
        if (got < 0) {
            res = READ_FAILED;
            break;
        }
        if (got == 0) {
            if ((res = message_end(r)) != READ_RECORD)
                break;
            if (r->messages == 0) {
                res = fail(r, "no MT940 message (:20: ... :62F:) in it");
                break;
            }
            r->done = true;
            res = READ_EOF;
            break;
        }
        const char *t = f.tag;
        if (strcmp(t, "-") == 0)
            res = message_end(r);
        else if (strcmp(t, "20") == 0)
            res = message_start(r, &f);
        else if (!r->in_msg)
            res = fail(r, "line %" PRIu64 ": field :%s: outside a message (no :20: before it)",
                       f.line, t);
        else if (strcmp(t, "25") == 0)
            first_line(&f, &r->account);
        else if (strcmp(t, "28C") == 0 || strcmp(t, "28") == 0)
            first_line(&f, &r->stmt_no);
        else if (strcmp(t, "60F") == 0 || strcmp(t, "60M") == 0)
            res = opening(r, &f);
        else if (strcmp(t, "62F") == 0 || strcmp(t, "62M") == 0)
            res = closing(r, &f);
        else if (strcmp(t, "61") == 0) {
            /* its :86:, when the next field is one */
            int g = next_field(r, &d);
            if (g < 0) {
                res = READ_FAILED;
                break;
            }
            const mt_field *details = NULL;
            if (g == 1 && strcmp(d.tag, "86") == 0)
                details = &d;
            else if (g == 1) {
                mt_field t2 = r->held;
                r->held = d;
                r->held.set = true;
                d = t2;
            }
            res = entry(r, &f, details, out);
            if (res == READ_RECORD) {
                /* out points into r's buffers, not f's or d's */
                buf_free(&f.body);
                buf_free(&d.body);
                return READ_RECORD;
            }
        }
    }
    buf_free(&f.body);
    buf_free(&d.body);
    return res;
}

static void mt_close(settle_reader *base)
{
    mt_reader *r = (mt_reader *)base;
    if (!r)
        return;
    bank_input_free(&r->in);
    buf *b[] = {&r->base.err, &r->line, &r->cur.body, &r->held.body, &r->ref, &r->stmt_no,
                &r->account, &r->ccy, &r->carry_account, &r->o_net, &r->o_txn, &r->o_batch,
                &r->o_time, &r->o_val, &r->o_text, &r->o_ccy, &r->o_account, &r->tmp};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        buf_free(b[i]);
    free(r->rbuf);
    free(r->path);
    free(r);
}

settle_reader *bank_mt940_open(bank_input *in, const char *path, buf *err)
{
    mt_reader *r = calloc(1, sizeof *r);
    char *p = strdup(path);
    char *rb = malloc(MT_READ_CHUNK);
    if (!r || !p || !rb) {
        free(r);
        free(p);
        free(rb);
        bank_input_free(in);
        buf_printf(err, "%s: out of memory", path);
        return NULL;
    }
    r->base.next = mt_next;
    r->base.close = mt_close;
    r->path = p;
    r->base.path = p;
    r->rbuf = rb;
    r->in = *in;
    memset(in, 0, sizeof *in);
    return &r->base;
}
