/*
 * bank_camt.c - an ISO 20022 camt.053 statement (BkToCstmrStmt, versions
 * .001.02 to .001.08 and later), read by libxml2's streaming xmlTextReader:
 * the XML is never parsed by hand, and never held whole.
 *
 * Elements are matched by local name (the namespace differs per version):
 * per Stmt its Id, account (Acct/Id/IBAN or Acct/Id/Othr/Id), currency
 * (Acct/Ccy, else its balances'), the opening (OPBD, else PRCD, else the
 * first ITBD) and closing (CLBD, else the last ITBD) balances, TxsSummry,
 * and each Ntry, which becomes one row when its status (Sts, or Sts/Cd from
 * .001.08 on) is BOOK; a PDNG, INFO or FUTR entry is no booked movement and
 * is in no booked balance, so it is left out (and out of the check).  A
 * batched entry (several TxDtls) is one row of the entry's amount.  At the
 * end of each Stmt: opening + booked entries == closing, exactly, and the
 * counts and sums of TxsSummry, when stated; a mismatch fails the file.
 *
 * Hostile XML: the parser runs with XML_PARSE_NONET and without
 * XML_PARSE_NOENT, XML_PARSE_DTDLOAD, XML_PARSE_DTDATTR, XML_PARSE_DTDVALID,
 * XML_PARSE_XINCLUDE or XML_PARSE_HUGE, so no external entity or DTD is
 * fetched or loaded and libxml2's own limits hold (a text node of at most
 * 10,000,000 bytes, names of 50,000, nesting of 256, entity amplification);
 * the process's external entity loader refuses every resource; a DOCTYPE
 * (where entities are declared) and an entity reference fail the file, since
 * no camt.053 has either; nesting is refused past CAMT_MAX_DEPTH and a kept
 * value past BANK_MAX_VALUE.  Memory is the reader's window on the stream,
 * the current node and one entry: a few megabytes whatever the file's size,
 * far under the 256 MiB SPEC.md "Hostile input" allows.
 */
#include "settle/bank_impl.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlreader.h>

/* The deepest element a camt.053 has is about 16 levels down
 * (Document/BkToCstmrStmt/Stmt/Ntry/NtryDtls/TxDtls/RmtInf/Strd/...). */
#define CAMT_MAX_DEPTH 48

/* The statement's path prefix every element we read is under. */
#define CAMT_STMT "Document/BkToCstmrStmt/Stmt"

typedef struct camt_money {
    bool set;
    dect v;
    char text[DECT_TEXT_MAX];   /* as stated, signed */
} camt_money;

typedef struct camt_count {
    bool set;
    uint64_t n;
} camt_count;

typedef struct camt_reader {
    settle_reader base;
    char *path;
    bank_input in;
    xmlTextReaderPtr xr;
    buf xml_err;            /* libxml2's first error, with its line */
    buf src_err;            /* the source's error, when reading failed */
    bool failed, done;

    buf el;                 /* the current element path, names joined by '/' */
    size_t el_off[CAMT_MAX_DEPTH + 1];
    int depth;
    buf text;               /* the current element's text */
    uint64_t ordinal;       /* booked entries so far in the file */
    uint64_t stmts;

    /* the current Stmt */
    buf stmt_id, account, acct_ccy, bal_ccy;
    camt_money open, close, itbd_first, itbd_last;
    int itbd_n;
    buf bal_type, bal_amt, bal_amt_ccy, bal_cdi;
    camt_count sum_nb, cdt_nb, dbt_nb;
    camt_money sum_sum, cdt_sum, dbt_sum, net;
    buf net_amt, net_cdi;
    uint64_t booked, all, n_cdt, n_dbt, in_stmt;
    dect total, abs_total, cdt_total, dbt_total;

    /* the current Ntry */
    buf amt, amt_ccy, cdi, sts, bookg, valdt, svcr_ref, pmtinf, e2e, ustrd, addtl;
    bool e2e_mixed;
    size_t ustrd_last;      /* where the last Ustrd starts in ustrd */
    uint64_t txdtls;

    /* the row handed out */
    buf o_net, o_txn, o_batch, o_time, o_val, o_text, o_ccy;
} camt_reader;

static const int camt_options = XML_PARSE_NONET | XML_PARSE_NOCDATA;

int bank_camt_parse_options(void)
{
    return camt_options;
}

/* No resource outside the statement is ever read: every external entity,
 * DTD or XInclude libxml2 would load comes here and is refused. */
static atomic_ulong camt_refused;

static xmlParserInputPtr refuse_external(const char *url, const char *id,
                                         xmlParserCtxtPtr ctxt)
{
    (void)url;
    (void)id;
    (void)ctxt;
    atomic_fetch_add(&camt_refused, 1);
    return NULL;
}

unsigned long bank_camt_refused_loads(void)
{
    return atomic_load(&camt_refused);
}

static pthread_once_t camt_once = PTHREAD_ONCE_INIT;

static void camt_init(void)
{
    xmlInitParser();
    xmlSetExternalEntityLoader(refuse_external);
}

static int camt_read_cb(void *ctx, char *buffer, int len)
{
    camt_reader *r = ctx;
    ssize_t got = bank_input_read(&r->in, buffer, (size_t)len);
    if (got < 0) {
        buf_clear(&r->src_err);
        buf_append_str(&r->src_err, source_error(r->in.src));
        return -1;
    }
    return (int)got;
}

static int camt_close_cb(void *ctx)
{
    (void)ctx;
    return 0;
}

static void camt_error_cb(void *arg, xmlErrorPtr e)
{
    camt_reader *r = arg;
    if (!e || e->level < XML_ERR_ERROR || r->xml_err.len)
        return;
    const char *msg = e->message ? e->message : "unknown error";
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        n--;
    buf_printf(&r->xml_err, "line %d: %.*s", e->line, (int)n, msg);
}

static read_result fail(camt_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static read_result fail(camt_reader *r, const char *fmt, ...)
{
    va_list ap;
    buf_clear(&r->base.err);
    buf_printf(&r->base.err, "%s: ", r->path);
    char tmp[1024];
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    buf_append_str(&r->base.err, tmp);
    r->failed = true;
    return READ_FAILED;
}

/* The element path below CAMT_STMT ("" for Stmt itself), or NULL when the
 * current element is not inside a Stmt. */
static const char *stmt_rel(const camt_reader *r)
{
    size_t n = strlen(CAMT_STMT);
    if (r->el.len < n || memcmp(r->el.data, CAMT_STMT, n) != 0)
        return NULL;
    if (r->el.len == n)
        return "";
    if (r->el.data[n] != '/')
        return NULL;
    return r->el.data + n + 1;
}

/* The current text without surrounding white space into *dst. */
static bool take_text(camt_reader *r, buf *dst)
{
    const char *p = r->text.data ? r->text.data : "";
    size_t n = r->text.len;
    while (n && strchr(" \t\r\n", *p)) {
        p++;
        n--;
    }
    while (n && strchr(" \t\r\n", p[n - 1]))
        n--;
    buf_clear(dst);
    return buf_append(dst, p, n);
}

static void stmt_reset(camt_reader *r)
{
    buf_clear(&r->stmt_id);
    buf_clear(&r->account);
    buf_clear(&r->acct_ccy);
    buf_clear(&r->bal_ccy);
    memset(&r->open, 0, sizeof r->open);
    memset(&r->close, 0, sizeof r->close);
    memset(&r->itbd_first, 0, sizeof r->itbd_first);
    memset(&r->itbd_last, 0, sizeof r->itbd_last);
    r->itbd_n = 0;
    memset(&r->sum_nb, 0, sizeof r->sum_nb);
    memset(&r->cdt_nb, 0, sizeof r->cdt_nb);
    memset(&r->dbt_nb, 0, sizeof r->dbt_nb);
    memset(&r->sum_sum, 0, sizeof r->sum_sum);
    memset(&r->cdt_sum, 0, sizeof r->cdt_sum);
    memset(&r->dbt_sum, 0, sizeof r->dbt_sum);
    memset(&r->net, 0, sizeof r->net);
    buf_clear(&r->net_amt);
    buf_clear(&r->net_cdi);
    r->booked = r->all = r->n_cdt = r->n_dbt = r->in_stmt = 0;
    memset(&r->total, 0, sizeof r->total);
    memset(&r->abs_total, 0, sizeof r->abs_total);
    memset(&r->cdt_total, 0, sizeof r->cdt_total);
    memset(&r->dbt_total, 0, sizeof r->dbt_total);
}

static void entry_reset(camt_reader *r)
{
    buf *b[] = {&r->amt, &r->amt_ccy, &r->cdi, &r->sts, &r->bookg, &r->valdt,
                &r->svcr_ref, &r->pmtinf, &r->e2e, &r->ustrd, &r->addtl};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        buf_clear(b[i]);
    r->e2e_mixed = false;
    r->ustrd_last = 0;
    r->txdtls = 0;
}

static bool valid_ccy(const buf *c)
{
    if (c->len != 3)
        return false;
    for (size_t i = 0; i < 3; i++)
        if (c->data[i] < 'A' || c->data[i] > 'Z')
            return false;
    return true;
}

/* A date "YYYY-MM-DD" (or the date of a date-time) into dst. */
static bool camt_date(const buf *s, buf *dst)
{
    int y, m, d;
    char tail;
    if (s->len < 10 || (s->len > 10 && s->data[10] != 'T'))
        return false;
    for (size_t i = 0; i < 10; i++)
        if ((i == 4 || i == 7) ? s->data[i] != '-' : (s->data[i] < '0' || s->data[i] > '9'))
            return false;
    if (sscanf(s->data, "%4d-%2d-%2d%c", &y, &m, &d, &tail) < 3 || !bank_date_valid(y, m, d))
        return false;
    buf_clear(dst);
    return buf_append(dst, s->data, 10);
}

/* A stated amount and its CdtDbtInd into *m. */
static bool camt_money_set(const buf *amt, const buf *cdi, camt_money *m)
{
    bool debit;
    if (cdi->len == 4 && memcmp(cdi->data, "DBIT", 4) == 0)
        debit = true;
    else if (cdi->len == 4 && memcmp(cdi->data, "CRDT", 4) == 0)
        debit = false;
    else
        return false;
    buf t = BUF_INIT;
    bool ok = bank_amount(amt->data ? amt->data : "", amt->len, '.', debit, &t, &m->v);
    if (ok) {
        snprintf(m->text, sizeof m->text, "%s", buf_cstr(&t));
        m->set = true;
    }
    buf_free(&t);
    return ok;
}

static bool camt_count_set(camt_reader *r, camt_count *c)
{
    buf t = BUF_INIT;
    take_text(r, &t);
    char *end = NULL;
    bool ok = t.len > 0 && t.len <= 15 && t.data[0] >= '0' && t.data[0] <= '9';
    if (ok) {
        c->n = strtoull(t.data, &end, 10);
        ok = end && *end == '\0';
        c->set = ok;
    }
    buf_free(&t);
    return ok;
}

static bool camt_sum_set(camt_reader *r, camt_money *m)
{
    buf t = BUF_INIT, out = BUF_INIT;
    take_text(r, &t);
    bool ok = bank_amount(buf_cstr(&t), t.len, '.', false, &out, &m->v);
    if (ok) {
        snprintf(m->text, sizeof m->text, "%s", buf_cstr(&out));
        m->set = true;
    }
    buf_free(&t);
    buf_free(&out);
    return ok;
}

static read_result bal_end(camt_reader *r)
{
    camt_money m = {0};
    if (!camt_money_set(&r->bal_amt, &r->bal_cdi, &m))
        return fail(r, "statement %s: balance %s: amount \"%s\" %s is not a camt.053 amount",
                    buf_cstr(&r->stmt_id), buf_cstr(&r->bal_type), buf_cstr(&r->bal_amt),
                    buf_cstr(&r->bal_cdi));
    if (r->bal_amt_ccy.len && !r->bal_ccy.len)
        buf_append(&r->bal_ccy, r->bal_amt_ccy.data, r->bal_amt_ccy.len);
    const char *t = buf_cstr(&r->bal_type);
    if (strcmp(t, "OPBD") == 0)
        r->open = m;
    else if (strcmp(t, "PRCD") == 0 && !r->open.set)
        r->open = m;
    else if (strcmp(t, "CLBD") == 0)
        r->close = m;
    else if (strcmp(t, "ITBD") == 0) {
        if (r->itbd_n++ == 0)
            r->itbd_first = m;
        r->itbd_last = m;
    }
    return READ_RECORD;
}

/* The entry's text: its remittance information, then AddtlNtryInf. */
static void entry_text(camt_reader *r)
{
    buf_clear(&r->o_text);
    if (r->ustrd.len)
        buf_append(&r->o_text, r->ustrd.data, r->ustrd.len);
    if (r->addtl.len) {
        if (r->o_text.len)
            buf_append_str(&r->o_text, " / ");
        buf_append(&r->o_text, r->addtl.data, r->addtl.len);
    }
}

/* The booked entry just checked (entry_end) as the row handed out: its
 * net in the currency's minor digits, the bank's reference or else the
 * statement's id and the entry's place, the batch it names. */
static void entry_row(camt_reader *r, const camt_money *m, bool debit, bool has_val,
                      settle_row *out)
{
    buf_clear(&r->o_net);
    buf_append_str(&r->o_net, m->text);
    buf_clear(&r->o_ccy);
    buf_append(&r->o_ccy, r->amt_ccy.data, r->amt_ccy.len);
    bank_pad_minor(&r->o_net, r->o_ccy.data);
    buf_clear(&r->o_txn);
    /* no reference of the bank's: the statement's id and the entry's place
     * among the file's booked entries (unique in the file even when a
     * statement's id repeats, and the same when the file is read again) */
    if (r->svcr_ref.len && strcmp(r->svcr_ref.data, "NONREF") != 0)
        buf_append(&r->o_txn, r->svcr_ref.data, r->svcr_ref.len);
    else
        buf_printf(&r->o_txn, "%s/%" PRIu64, buf_cstr(&r->stmt_id), r->ordinal);
    const char *batch = NULL;
    if (r->pmtinf.len)
        batch = buf_cstr(&r->pmtinf);
    else if (r->e2e.len && !r->e2e_mixed && strcmp(r->e2e.data, "NOTPROVIDED") != 0)
        batch = buf_cstr(&r->e2e);
    if (batch != buf_cstr(&r->o_batch)) {
        buf_clear(&r->o_batch);
        if (batch)
            buf_append_str(&r->o_batch, batch);
    }
    entry_text(r);

    memset(out, 0, sizeof *out);
    out->side = SETTLE_SIDE_BANK;
    out->kind = debit ? SETTLE_BANK_DEBIT : SETTLE_BANK_CREDIT;
    out->tenant = "";
    out->channel = "bank";
    out->account = buf_cstr(&r->account);
    out->txn_id = buf_cstr(&r->o_txn);
    out->order_key = NULL;
    out->batch_id = batch ? buf_cstr(&r->o_batch) : NULL;
    out->time = buf_cstr(&r->o_time);
    out->value_date = has_val ? buf_cstr(&r->o_val) : NULL;
    out->currency = buf_cstr(&r->o_ccy);
    out->gross = out->fee = NULL;
    out->net = buf_cstr(&r->o_net);
    out->balance = NULL;
    out->text = r->o_text.len ? buf_cstr(&r->o_text) : NULL;
    out->line = r->ordinal;
}

static read_result entry_end(camt_reader *r, settle_row *out, bool *row)
{
    const char *id = buf_cstr(&r->stmt_id);
    uint64_t nth = r->all + 1;
    r->all++;
    const char *sts = buf_cstr(&r->sts);
    if (strcmp(sts, "PDNG") == 0 || strcmp(sts, "INFO") == 0 || strcmp(sts, "FUTR") == 0)
        return READ_RECORD;     /* not booked: in no booked balance */
    if (strcmp(sts, "BOOK") != 0)
        return fail(r, "statement %s, entry %" PRIu64 ": status \"%s\" is none of BOOK, "
                       "PDNG, INFO, FUTR", id, nth, sts);
    camt_money m = {0};
    if (!camt_money_set(&r->amt, &r->cdi, &m))
        return fail(r, "statement %s, entry %" PRIu64 ": amount \"%s\" %s is not a camt.053 "
                       "amount with CRDT or DBIT", id, nth, buf_cstr(&r->amt), buf_cstr(&r->cdi));
    const buf *ccy = r->acct_ccy.len ? &r->acct_ccy : &r->bal_ccy;
    if (!valid_ccy(&r->amt_ccy))
        return fail(r, "statement %s, entry %" PRIu64 ": currency \"%s\" is not an ISO 4217 code",
                    id, nth, buf_cstr(&r->amt_ccy));
    if (ccy->len && strcmp(ccy->data, r->amt_ccy.data) != 0)
        return fail(r, "statement %s, entry %" PRIu64 ": an amount in %s on a statement in %s",
                    id, nth, r->amt_ccy.data, ccy->data);
    if (!camt_date(&r->bookg, &r->o_time))
        return fail(r, "statement %s, entry %" PRIu64 ": booking date \"%s\" is no date",
                    id, nth, buf_cstr(&r->bookg));
    bool has_val = r->valdt.len > 0;
    if (has_val && !camt_date(&r->valdt, &r->o_val))
        return fail(r, "statement %s, entry %" PRIu64 ": value date \"%s\" is no date",
                    id, nth, buf_cstr(&r->valdt));
    bool debit = strcmp(buf_cstr(&r->cdi), "DBIT") == 0;
    dect abs = m.v;
    abs.v = debit ? -abs.v : abs.v;
    if (!dect_add(&r->total, &m.v) || !dect_add(&r->abs_total, &abs) ||
        !dect_add(debit ? &r->dbt_total : &r->cdt_total, &abs))
        return fail(r, "statement %s, entry %" PRIu64 ": the entries' sum overflows", id, nth);
    r->booked++;
    r->in_stmt++;
    if (debit)
        r->n_dbt++;
    else
        r->n_cdt++;
    r->ordinal++;

    entry_row(r, &m, debit, has_val, out);
    *row = true;
    return READ_RECORD;
}

static bool count_ok(const camt_count *c, uint64_t booked, uint64_t all)
{
    return !c->set || c->n == booked || c->n == all;
}

static bool sum_ok(const camt_money *m, const dect *v)
{
    return !m->set || dect_equal(&m->v, v);
}

static read_result stmt_end(camt_reader *r)
{
    const char *id = buf_cstr(&r->stmt_id);
    char a[DECT_TEXT_MAX], b[DECT_TEXT_MAX], c[DECT_TEXT_MAX];
    r->stmts++;
    if (!r->open.set && r->itbd_n > 0) {
        r->open = r->itbd_first;
        r->itbd_n--;
    }
    if (!r->close.set && r->itbd_n > 0)
        r->close = r->itbd_last;
    if (!r->open.set)
        return fail(r, "statement %s states no opening balance (OPBD, PRCD or ITBD): "
                       "its entries cannot be checked", id);
    if (!r->close.set)
        return fail(r, "statement %s states no closing balance (CLBD or ITBD): "
                       "its entries cannot be checked", id);
    dect end = r->open.v;
    if (!dect_add(&end, &r->total))
        return fail(r, "statement %s: its balance overflows", id);
    if (!dect_equal(&end, &r->close.v)) {
        bank_dect_text(&r->total, 2, a);
        bank_dect_text(&end, 2, b);
        return fail(r, "statement %s: opening balance %s plus its %" PRIu64 " booked entries "
                       "(%s) is %s, but its closing balance is %s",
                    id, r->open.text, r->booked, a, b, r->close.text);
    }
    if (!count_ok(&r->sum_nb, r->booked, r->all))
        return fail(r, "statement %s: TxsSummry states %" PRIu64 " entries (NbOfNtries), "
                       "it has %" PRIu64 " booked", id, r->sum_nb.n, r->booked);
    if (!count_ok(&r->cdt_nb, r->n_cdt, r->n_cdt) || !count_ok(&r->dbt_nb, r->n_dbt, r->n_dbt))
        return fail(r, "statement %s: TxsSummry states %" PRIu64 " credit and %" PRIu64
                       " debit entries, it has %" PRIu64 " and %" PRIu64, id,
                    r->cdt_nb.set ? r->cdt_nb.n : r->n_cdt,
                    r->dbt_nb.set ? r->dbt_nb.n : r->n_dbt, r->n_cdt, r->n_dbt);
    const struct { const camt_money *m; const dect *v; const char *what; } sums[] = {
        {&r->sum_sum, &r->abs_total, "TtlNtries/Sum"},
        {&r->cdt_sum, &r->cdt_total, "TtlCdtNtries/Sum"},
        {&r->dbt_sum, &r->dbt_total, "TtlDbtNtries/Sum"},
        {&r->net, &r->total, "TtlNtries net amount"},
    };
    for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++)
        if (!sum_ok(sums[i].m, sums[i].v)) {
            bank_dect_text(sums[i].v, 2, c);
            return fail(r, "statement %s: TxsSummry states %s %s, its booked entries make %s",
                        id, sums[i].what, sums[i].m->text, c);
        }
    return READ_RECORD;
}

/* Appends the current text to a list kept in dst, "; " between, unless it
 * repeats the item before it (a batch's transactions often share one). */
static void text_list_add(camt_reader *r, buf *dst, size_t *last)
{
    buf t = BUF_INIT;
    take_text(r, &t);
    bool repeat = dst->len && dst->len - *last == t.len &&
                  memcmp(dst->data + *last, t.data, t.len) == 0;
    if (t.len && !repeat) {
        if (dst->len)
            buf_append_str(dst, "; ");
        *last = dst->len;
        buf_append(dst, t.data, t.len);
    }
    buf_free(&t);
}

/* An element of a Stmt ended; rel is its path below Stmt. */
/* A leaf of the statement the reader keeps (its text into the member the
 * table names): true when rel is one. */
static bool take_leaf(camt_reader *r, const char *rel)
{
    static const struct { const char *path; size_t off; } leaves[] = {
        {"Id", offsetof(camt_reader, stmt_id)},
        {"Acct/Id/IBAN", offsetof(camt_reader, account)},
        {"Acct/Id/Othr/Id", offsetof(camt_reader, account)},
        {"Acct/Ccy", offsetof(camt_reader, acct_ccy)},
        {"Bal/Tp/CdOrPrtry/Cd", offsetof(camt_reader, bal_type)},
        {"Bal/Amt", offsetof(camt_reader, bal_amt)},
        {"Bal/CdtDbtInd", offsetof(camt_reader, bal_cdi)},
        {"TxsSummry/TtlNtries/TtlNetNtry/Amt", offsetof(camt_reader, net_amt)},
        {"TxsSummry/TtlNtries/TtlNetNtryAmt", offsetof(camt_reader, net_amt)},
        {"TxsSummry/TtlNtries/TtlNetNtry/CdtDbtInd", offsetof(camt_reader, net_cdi)},
        {"TxsSummry/TtlNtries/CdtDbtInd", offsetof(camt_reader, net_cdi)},
        {"Ntry/Amt", offsetof(camt_reader, amt)},
        {"Ntry/CdtDbtInd", offsetof(camt_reader, cdi)},
        {"Ntry/Sts", offsetof(camt_reader, sts)},
        {"Ntry/Sts/Cd", offsetof(camt_reader, sts)},
        {"Ntry/BookgDt/Dt", offsetof(camt_reader, bookg)},
        {"Ntry/BookgDt/DtTm", offsetof(camt_reader, bookg)},
        {"Ntry/ValDt/Dt", offsetof(camt_reader, valdt)},
        {"Ntry/ValDt/DtTm", offsetof(camt_reader, valdt)},
        {"Ntry/AcctSvcrRef", offsetof(camt_reader, svcr_ref)},
        {"Ntry/NtryDtls/Btch/PmtInfId", offsetof(camt_reader, pmtinf)},
        {"Ntry/AddtlNtryInf", offsetof(camt_reader, addtl)},
    };
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++)
        if (strcmp(rel, leaves[i].path) == 0) {
            buf *dst = (buf *)((char *)r + leaves[i].off);
            buf t = BUF_INIT;
            take_text(r, &t);
            /* "Ntry/Sts" also ends around Sts/Cd (.001.08 on): keep the code. */
            if (!(dst == &r->sts && t.len == 0)) {
                buf_clear(dst);
                buf_append(dst, t.data ? t.data : "", t.len);
            }
            buf_free(&t);
            return true;
        }
    return false;
}

static read_result stmt_element_end(camt_reader *r, const char *rel, settle_row *out, bool *row)
{
    if (take_leaf(r, rel))
        return READ_RECORD;
    if (strcmp(rel, "") == 0)
        return stmt_end(r);
    if (strcmp(rel, "Bal") == 0)
        return bal_end(r);
    if (strcmp(rel, "Ntry") == 0)
        return entry_end(r, out, row);
    if (strcmp(rel, "Ntry/NtryDtls/TxDtls") == 0) {
        r->txdtls++;
        return READ_RECORD;
    }
    if (strcmp(rel, "Ntry/NtryDtls/TxDtls/Refs/EndToEndId") == 0) {
        buf t = BUF_INIT;
        take_text(r, &t);
        if (!r->e2e.len && !r->e2e_mixed)
            buf_append(&r->e2e, t.data, t.len);
        else if (t.len != r->e2e.len || memcmp(t.data, r->e2e.data, t.len) != 0)
            r->e2e_mixed = true;
        buf_free(&t);
        return READ_RECORD;
    }
    if (strcmp(rel, "Ntry/NtryDtls/TxDtls/RmtInf/Ustrd") == 0) {
        text_list_add(r, &r->ustrd, &r->ustrd_last);
        return READ_RECORD;
    }
    bool ok = true;
    if (strcmp(rel, "TxsSummry/TtlNtries/NbOfNtries") == 0)
        ok = camt_count_set(r, &r->sum_nb);
    else if (strcmp(rel, "TxsSummry/TtlCdtNtries/NbOfNtries") == 0)
        ok = camt_count_set(r, &r->cdt_nb);
    else if (strcmp(rel, "TxsSummry/TtlDbtNtries/NbOfNtries") == 0)
        ok = camt_count_set(r, &r->dbt_nb);
    else if (strcmp(rel, "TxsSummry/TtlNtries/Sum") == 0)
        ok = camt_sum_set(r, &r->sum_sum);
    else if (strcmp(rel, "TxsSummry/TtlCdtNtries/Sum") == 0)
        ok = camt_sum_set(r, &r->cdt_sum);
    else if (strcmp(rel, "TxsSummry/TtlDbtNtries/Sum") == 0)
        ok = camt_sum_set(r, &r->dbt_sum);
    else if (strcmp(rel, "TxsSummry") == 0 && r->net_amt.len)
        ok = camt_money_set(&r->net_amt, &r->net_cdi, &r->net);
    if (!ok)
        return fail(r, "statement %s: %s \"%s\" is not a figure", buf_cstr(&r->stmt_id),
                    rel, buf_cstr(&r->text));
    return READ_RECORD;
}

/* An element starts (and, when empty, ends at once). */
static read_result element_start(camt_reader *r, settle_row *out, bool *row)
{
    const char *name = (const char *)xmlTextReaderConstLocalName(r->xr);
    bool empty = xmlTextReaderIsEmptyElement(r->xr) == 1;
    if (r->depth >= CAMT_MAX_DEPTH)
        return fail(r, "elements nested deeper than %d levels: no camt.053 is", CAMT_MAX_DEPTH);
    if (!name || strlen(name) > 64)
        return fail(r, "an element name of over 64 characters: no camt.053 has one");
    r->el_off[r->depth++] = r->el.len;
    if (r->el.len)
        buf_append_char(&r->el, '/');
    buf_append_str(&r->el, name);
    buf_clear(&r->text);
    if (r->depth == 1 && strcmp(name, "Document") != 0)
        return fail(r, "not an ISO 20022 statement: its root element is <%s>, not <Document>",
                    name);
    if (r->depth == 2 && strcmp(name, "BkToCstmrStmt") != 0)
        return fail(r, "not a camt.053 statement: <Document> holds <%s>, not <BkToCstmrStmt>",
                    name);
    const char *rel = stmt_rel(r);
    if (rel) {
        if (strcmp(rel, "") == 0)
            stmt_reset(r);
        else if (strcmp(rel, "Ntry") == 0)
            entry_reset(r);
        else if (strcmp(rel, "Bal") == 0) {
            buf_clear(&r->bal_type);
            buf_clear(&r->bal_amt);
            buf_clear(&r->bal_amt_ccy);
            buf_clear(&r->bal_cdi);
        } else if (strcmp(rel, "Ntry/Amt") == 0 || strcmp(rel, "Bal/Amt") == 0) {
            xmlChar *ccy = xmlTextReaderGetAttribute(r->xr, BAD_CAST "Ccy");
            buf *dst = rel[0] == 'N' ? &r->amt_ccy : &r->bal_amt_ccy;
            buf_clear(dst);
            if (ccy)
                buf_append_str(dst, (const char *)ccy);
            xmlFree(ccy);
        }
    }
    if (!empty)
        return READ_RECORD;
    read_result res = READ_RECORD;
    if (rel)
        res = stmt_element_end(r, rel, out, row);
    r->el.len = r->el_off[--r->depth];
    if (r->el.data)
        r->el.data[r->el.len] = '\0';
    return res;
}

static read_result camt_next(settle_reader *base, settle_row *out)
{
    camt_reader *r = (camt_reader *)base;
    if (r->failed)
        return READ_FAILED;
    if (r->done)
        return READ_EOF;
    for (;;) {
        int got = xmlTextReaderRead(r->xr);
        if (got < 0) {
            if (r->src_err.len)
                return fail(r, "%s", buf_cstr(&r->src_err));
            return fail(r, "not well-formed XML: %s",
                        r->xml_err.len ? buf_cstr(&r->xml_err) : "libxml2 stopped");
        }
        if (got == 0) {
            if (r->xml_err.len)
                return fail(r, "not well-formed XML: %s", buf_cstr(&r->xml_err));
            if (r->stmts == 0)
                return fail(r, "no statement (BkToCstmrStmt/Stmt) in it");
            r->done = true;
            return READ_EOF;
        }
        bool row = false;
        read_result res = READ_RECORD;
        switch (xmlTextReaderNodeType(r->xr)) {
        case XML_READER_TYPE_ELEMENT:
            res = element_start(r, out, &row);
            break;
        case XML_READER_TYPE_END_ELEMENT: {
            const char *rel = stmt_rel(r);
            if (rel)
                res = stmt_element_end(r, rel, out, &row);
            if (r->depth > 0)
                r->el.len = r->el_off[--r->depth];
            if (r->el.data)
                r->el.data[r->el.len] = '\0';
            buf_clear(&r->text);
            break;
        }
        case XML_READER_TYPE_TEXT:
        case XML_READER_TYPE_CDATA:
        case XML_READER_TYPE_WHITESPACE:
        case XML_READER_TYPE_SIGNIFICANT_WHITESPACE: {
            const char *v = (const char *)xmlTextReaderConstValue(r->xr);
            size_t n = v ? strlen(v) : 0;
            if (r->text.len + n > BANK_MAX_VALUE)
                return fail(r, "line %d: a text of over %zu bytes: no camt.053 value is that long",
                            xmlTextReaderGetParserLineNumber(r->xr), BANK_MAX_VALUE);
            if (!buf_append(&r->text, v ? v : "", n))
                return fail(r, "out of memory");
            break;
        }
        case XML_READER_TYPE_ENTITY_REFERENCE:
            return fail(r, "line %d: an entity reference (&%s;) is refused: a camt.053 "
                           "statement has none", xmlTextReaderGetParserLineNumber(r->xr),
                        (const char *)xmlTextReaderConstLocalName(r->xr));
        case XML_READER_TYPE_DOCUMENT_TYPE:
            return fail(r, "line %d: a document type declaration (<!DOCTYPE>) is refused: "
                           "a camt.053 statement has none, and entities are declared there",
                        xmlTextReaderGetParserLineNumber(r->xr));
        default:
            break;
        }
        if (res != READ_RECORD)
            return res;
        if (row)
            return READ_RECORD;
    }
}

static void camt_close(settle_reader *base)
{
    camt_reader *r = (camt_reader *)base;
    if (!r)
        return;
    if (r->xr)
        xmlFreeTextReader(r->xr);
    bank_input_free(&r->in);
    buf *b[] = {&r->base.err, &r->xml_err, &r->src_err, &r->el, &r->text, &r->stmt_id,
                &r->account, &r->acct_ccy, &r->bal_ccy, &r->bal_type, &r->bal_amt,
                &r->bal_amt_ccy, &r->bal_cdi, &r->net_amt, &r->net_cdi, &r->amt,
                &r->amt_ccy, &r->cdi, &r->sts, &r->bookg, &r->valdt, &r->svcr_ref,
                &r->pmtinf, &r->e2e, &r->ustrd, &r->addtl, &r->o_net, &r->o_txn,
                &r->o_batch, &r->o_time, &r->o_val, &r->o_text, &r->o_ccy};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        buf_free(b[i]);
    free(r->path);
    free(r);
}

settle_reader *bank_camt_open(bank_input *in, const char *path, buf *err)
{
    pthread_once(&camt_once, camt_init);
    camt_reader *r = calloc(1, sizeof *r);
    char *p = strdup(path);
    if (!r || !p) {
        free(r);
        free(p);
        bank_input_free(in);
        buf_printf(err, "%s: out of memory", path);
        return NULL;
    }
    r->base.next = camt_next;
    r->base.close = camt_close;
    r->path = p;
    r->base.path = p;
    r->in = *in;
    memset(in, 0, sizeof *in);
    r->xr = xmlReaderForIO(camt_read_cb, camt_close_cb, r, path, NULL, camt_options);
    if (!r->xr) {
        buf_printf(err, "%s: %s", path,
                   r->src_err.len ? buf_cstr(&r->src_err) : "libxml2 could not start reading it");
        camt_close(&r->base);
        return NULL;
    }
    xmlTextReaderSetStructuredErrorHandler(r->xr, camt_error_cb, r);
    return &r->base;
}
