/*
 * recon_read.c - reads the statement's files into the reconcile session
 * (see recon_read.h): import's own reading (pipeline_read_file: the
 * reading thread, validation, rejects and progress line) hands every row
 * to a consumer that sends them in one binary COPY per file (in 64 KiB
 * sends, so memory stays at the reading's two chunks and one buffer).
 * Each row goes with its money texts, read from its payload here
 * (stmt_texts.h), and with whether its key may have been listed before in the
 * run (import's Bloom filter of the keys, load/seen.h, over every file),
 * so that the server finds the keys listed more than once among those
 * rows' keys (SQL_RECON_REPEATED) rather than by a hash of every key
 * (135 MB at 1M keys: spilled to disk, 1.6 s of the comparison).
 */
#include "recon/recon_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk/chunk.h"
#include "db/recon_sql.h"
#include "input/profile.h"
#include "input/reader.h"
#include "load/copy_encode.h"
#include "load/seen.h"
#include "output/log.h"
#include "pipeline/pipeline.h"
#include "recon/stmt_texts.h"
#include "rules/timestamp.h"
#include "util/exitcodes.h"
#include "util/fault.h"

/* The COPY is sent in 64 KiB pieces: a send blocks until the server has
 * taken all but what the socket holds (about 200 KiB), and with 1 MiB
 * sends the client built each MiB while the server, its input read,
 * waited (the staging COPY at 1M rows: 2.5 s, now 2.2). */
#define COPY_FLUSH_BYTES (64u << 10)

/* The COPY of one file (the row_consumer's state): its number in the
 * staging table, the buffer sent in COPY_FLUSH_BYTES sends. */
typedef struct stage_copy {
    recon_ctx *x;
    int32_t file_no;
    buf out;
    recon_result *res;      /* the totals the bills state grow here */
    bool server_texts;      /* every row's texts and day read by the server
                               (a test's IDEMLOAD_FAULT=recon-server-texts) */
    bool lost;              /* the database failed: the COPY is over */
} stage_copy;

/* The database failed during the COPY: logged once, its status. */
static int copy_failed(stage_copy *c)
{
    c->lost = true;
    c->x->failed_logged = true;
    return tool_db_failure(c->x->tool.d, "reconcile: staging the statement (COPY)");
}

/* Out of memory encoding the rows: logged, set as the file's error. */
static int copy_oom(const char *path, file_report *rep)
{
    buf msg = BUF_INIT;
    buf_printf(&msg, "%s: out of memory", path);
    log_error("%s", buf_cstr(&msg));
    file_report_set_error(rep, buf_cstr(&msg));
    buf_free(&msg);
    return EXIT_INPUT;
}

static int copy_begin(void *st, const char *path, file_report *rep)
{
    stage_copy *c = st;
    if (!db_copy_begin(c->x->tool.d, SQL_RECON_COPY))
        return copy_failed(c);
    c->lost = false;
    if (copy_binary_header(&c->out))
        return EXIT_OK;
    /* No end follows a failed begin: the COPY is aborted here. */
    db_copy_end(c->x->tool.d, "out of memory");
    return copy_oom(path, rep);
}

/* May row i of ch carry a key an earlier row of the run carried?  The
 * filter starts over past SEEN_MAX_KEYS, forgetting the keys before: from
 * there on every row is taken as maybe listed again (more rows for the
 * server to look at, never a key listed twice unseen). */
static bool key_again(recon_ctx *x, const chunk *ch, size_t i)
{
    if (!x->seen_full && seen_count(x->seen) >= SEEN_MAX_KEYS)
        x->seen_full = true;
    return x->seen_full || seen_add(x->seen, chunk_key_hash64(ch, i));
}

/* The day of the instant us (microseconds since 1970-01-01 UTC) in the
 * fixed offset east (seconds east of UTC), as PostgreSQL's date counts
 * days (since 2000-01-01, day 10957 of 1970's): what
 * (received_at AT TIME ZONE zone)::date gives for that offset. */
static int32_t day_in(int64_t us, int32_t east)
{
    return (int32_t)(ts_day(us + (int64_t)east * 1000000) - 10957);
}

/* The currency text of lead cleaned as the server would clean it,
 * upper(nullif(btrim(text), '')), into ccy (CURRENCY_CLEAN_MAX bytes),
 * which the lead's text then is: spaces trimmed, ASCII letters
 * upper-cased.  False, the text left as it is, for one beyond ASCII or
 * longer (the server cleans it). */
#define CURRENCY_CLEAN_MAX 16
static bool clean_currency(copy_recon_lead *lead, char *ccy)
{
    const char *t = lead->text[STMT_CURRENCY];
    size_t n = lead->len[STMT_CURRENCY];
    if (!t)
        return true;
    while (n && *t == ' ') {
        t++;
        n--;
    }
    while (n && t[n - 1] == ' ')
        n--;
    if (n > CURRENCY_CLEAN_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)t[i];
        if (b >= 0x80)
            return false;
        ccy[i] = (char)(b >= 'a' && b <= 'z' ? b - 'a' + 'A' : b);
    }
    lead->text[STMT_CURRENCY] = n ? ccy : NULL;
    lead->len[STMT_CURRENCY] = n;
    return true;
}

/* Every valid row of the chunk, in file order, into the COPY. */
static int copy_take(void *st, const chunk *ch, file_report *rep)
{
    stage_copy *c = st;
    size_t n = chunk_size(ch);
    for (size_t k = 0; k < n; k++) {
        row r;
        chunk_get(ch, k, &r);
        copy_recon_lead lead = {.file_no = c->file_no, .line = (int64_t)r.line,
                                .maybe_again = key_again(c->x, ch, k),
                                .has_day = c->x->days_staged,
                                .day = day_in(r.received_us, c->x->days_east)};
        stmt_texts_of_row(c->x->texts, r.callback_type, r.callback_type_len, r.payload,
                          r.payload_len, &lead);
        char ccy[CURRENCY_CLEAN_MAX];
        lead.currency_clean = !lead.server && c->x->ascii_upper && clean_currency(&lead, ccy);
        if (c->server_texts && !lead.server) {
            lead.server = true;
            lead.has_day = false;
            lead.currency_clean = false;
            memset(lead.text, 0, sizeof lead.text);
            memset(lead.len, 0, sizeof lead.len);
            memset(lead.num, 0, sizeof lead.num);
        }
        if (!copy_binary_recon_row(&c->out, &lead, &r))
            return copy_oom(rep->path, rep);
        c->x->staged[c->file_no - 1]++;
        if (c->out.len >= COPY_FLUSH_BYTES) {
            if (!db_copy_send(c->x->tool.d, c->out.data, c->out.len))
                return copy_failed(c);
            buf_clear(&c->out);
        }
    }
    return EXIT_OK;
}

/* The COPY ended: the trailer and the last send when the file was read
 * whole (code EXIT_OK or EXIT_REJECTS), an abort otherwise. */
static int copy_finish(stage_copy *c, int code, file_report *rep)
{
    db *d = c->x->tool.d;
    if (c->lost)
        return code;
    if (code != EXIT_OK && code != EXIT_REJECTS) {
        db_copy_end(d, rep->error ? rep->error : "reconcile stopped");
        return code;
    }
    if (!copy_binary_trailer(&c->out))
        return copy_oom(rep->path, rep);
    if (!db_copy_send(d, c->out.data, c->out.len) || !db_copy_end(d, NULL))
        return copy_failed(c);
    return code;
}

/* Appends s to out as an element of a PostgreSQL array literal (quoted,
 * '"' and '\\' escaped); false when out of memory. */
static bool array_element(buf *out, const char *s, bool first)
{
    bool ok = (first || buf_append_char(out, ',')) && buf_append_char(out, '"');
    for (; ok && *s; s++)
        ok = (*s == '"' || *s == '\\' ? buf_append_char(out, '\\') : true) &&
             buf_append_char(out, *s);
    return ok && buf_append_char(out, '"');
}

/* The kinds file i cannot list (those its profile's covers rules name but
 * the one its header matched does not: SPEC.md, "Reconcile for finance")
 * into idemload_recon_cover, where SQL_RECON_PAIRS reads them: NULL, none,
 * for a canonical file or a profile that declares none.  False, logged, on
 * failure. */
static bool stage_cover(recon_ctx *x, size_t i, uint32_t matched)
{
    char **kinds = NULL;
    size_t n = 0;
    bool oom = false;
    buf lit = BUF_INIT;
    if (x->cfg->profile && profile_excluded_kinds(x->cfg->profile, matched, &kinds, &n, &oom)) {
        oom = !buf_append_char(&lit, '{');
        for (size_t k = 0; !oom && k < n; k++)
            oom = !array_element(&lit, kinds[k], k == 0);
        oom = oom || !buf_append_char(&lit, '}');
    }
    for (size_t k = 0; k < n; k++)
        free(kinds[k]);
    free(kinds);
    bool ok = false;
    if (oom) {
        log_error("reconcile: out of memory");
    } else {
        char file_no[24];
        snprintf(file_no, sizeof file_no, "%zu", i + 1);
        const char *p[] = {file_no, lit.len ? buf_cstr(&lit) : NULL};
        ok = recon_exec(x, "reconcile: the kinds the statement cannot list", SQL_RECON_COVER, 2, p);
    }
    buf_free(&lit);
    return ok;
}

/* Whether a stated total can stand beside the statement's compared amounts:
 * only when it adds up the very column the profile compares for its kind
 * (Alipay's 交易金额共 over 订单金额（元）), never a settlement or discount
 * column (商家实收共, 商家优惠共, WeChat's 应结订单总金额), which differs from
 * the compared amount on a bill that agrees with its callbacks. */
static void stated_comparable(const profile *pf, recon_stated *s)
{
    s->comparable = false;
    s->magnitude = false;
    for (size_t m = 0; pf && s->kind && s->column && m < pf->n_money; m++) {
        const money_fact *a = &pf->money[m].amount;
        if (!pf->money[m].kind || strcmp(pf->money[m].kind, s->kind) != 0)
            continue;
        s->comparable = (a->column && strcmp(a->column, s->column) == 0) ||
                        (a->column_alt && strcmp(a->column_alt, s->column) == 0);
        s->magnitude = a->magnitude;
    }
}

/* The money totals file i's bill stated (reader_stated_total) into
 * res->stated.  False when out of memory. */
static bool keep_stated(const config *cfg, size_t i, const reader *rdr, recon_result *res)
{
    reader_total t;
    for (size_t k = 0; reader_stated_total(rdr, k, &t); k++) {
        recon_stated *grown = realloc(res->stated, (res->n_stated + 1) * sizeof *grown);
        if (!grown)
            return false;
        res->stated = grown;
        recon_stated *s = &res->stated[res->n_stated++];
        bool oom = false;
        s->file = cfg->files[i];
        s->label = recon_dup_or_null(t.label, &oom);
        s->column = recon_dup_or_null(t.column, &oom);
        s->kind = recon_dup_or_null(t.kind, &oom);
        s->stated = recon_dup_or_null(t.stated, &oom);
        s->rows_sum = recon_dup_or_null(t.rows_sum, &oom);
        if (oom)
            return false;
        stated_comparable(cfg->profile, s);
    }
    return true;
}

/* After the file's rows: the COPY ended, then what the file says of
 * itself kept (the kinds it cannot list, the totals it states, its
 * window's zone).  Its status: a failure leaves the file failed. */
static int copy_end(void *st, const reader *rdr, int code, file_report *rep)
{
    stage_copy *c = st;
    recon_ctx *x = c->x;
    size_t i = (size_t)c->file_no - 1;
    code = copy_finish(c, code, rep);
    bool ok = code == EXIT_OK || code == EXIT_REJECTS;
    if (ok && !stage_cover(x, i, reader_covers_matched(rdr))) {
        code = x->failed_logged ? db_failure_exit(x->tool.d) : EXIT_INPUT;
        ok = false;
    }
    if (ok && !keep_stated(x->cfg, i, rdr, c->res)) {
        code = copy_oom("reconcile", rep);
        ok = false;
    }
    if (ok) {
        const char *wz = reader_window_zone(rdr);
        if (wz && !x->window_zone[0])
            snprintf(x->window_zone, sizeof x->window_zone, "%s", wz);
    } else {
        rep->status = FILE_FAILED;
    }
    return code;
}

int recon_stage_file(recon_ctx *x, size_t i, file_report *fr, recon_result *res)
{
    if (!x->seen && !(x->seen = seen_new())) {
        log_error("reconcile: out of memory");
        fr->path = x->cfg->files[i];
        fr->status = FILE_FAILED;
        file_report_set_error(fr, "out of memory");
        return EXIT_INPUT;
    }
    stage_copy c = {.x = x, .file_no = (int32_t)(i + 1), .out = BUF_INIT, .res = res,
                    .server_texts = fault_injected("recon-server-texts")};
    row_consumer use = {&c, copy_begin, copy_take, copy_end};
    int code = pipeline_read_file(x->reading, i, &use);
    buf_free(&c.out);
    /* Reconcile reads no chunks: its report gives no chunk count. */
    fr->counts.chunks = 0;
    if (code == EXIT_REJECTS)
        return EXIT_OK;
    if (code != EXIT_OK) {
        /* Nothing of it is compared (its rows are in a COPY that is
         * rolled back): its figures say so, as import's and validate's of
         * a file refused by its own totals. */
        fr->status = FILE_FAILED;
        memset(&fr->counts, 0, sizeof fr->counts);
    }
    return code;
}
