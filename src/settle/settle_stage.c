/*
 * settle_stage.c - reading and staging settle's files (see
 * settle_stage.h).  A row travels as COPY text (its fields escaped: a
 * backslash, a tab, a line break), one send per 64 KiB, so the client's
 * memory stays at one buffer whatever the file's size.
 */
#include "settle/settle_stage.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/settle_sql.h"
#include "input/profile.h"
#include "input/profile_settle.h"
#include "output/log.h"
#include "rules/dec_total.h"
#include "rules/timestamp.h"
#include "settle/settle_row.h"
#include "util/exitcodes.h"
#include "util/signals.h"

/* Is the file a bank statement, told by its first bytes as the bank
 * reader tells them (bank_statement_sniff)?  Anything else is a channel's
 * file.  False with *err when it cannot be read. */
static bool sniff_bank(const char *path, bool *bank, buf *err)
{
    source *src = source_open(path, err);
    if (!src)
        return false;
    char head[BANK_SNIFF_BYTES];
    size_t n = 0;
    for (;;) {
        ssize_t got = source_read(src, head + n, sizeof head - n);
        if (got < 0) {
            buf_printf(err, "%s: %s", path, source_error(src));
            source_close(&src);
            return false;
        }
        if (got == 0 || (n += (size_t)got) == sizeof head)
            break;
    }
    source_close(&src);
    bank_format f = bank_statement_sniff(head, n);
    *bank = f == BANK_CAMT || f == BANK_MT940;
    return true;
}

/* One COPY text field: NULL as \N, else the text with \, tab, CR, LF
 * escaped; then the delimiter (a tab, or the line's end). */
static bool copy_field(buf *out, const char *s, bool last)
{
    bool ok = true;
    if (!s) {
        ok = buf_append_str(out, "\\N");
    } else {
        for (const char *p = s; ok && *p;) {
            size_t run = strcspn(p, "\\\t\n\r");  /* as it is, in one append */
            ok = buf_append(out, p, run);
            p += run;
            if (ok && *p) {
                char e[2] = {'\\', *p == '\\' ? '\\' : *p == '\t' ? 't' : *p == '\n' ? 'n' : 'r'};
                ok = buf_append(out, e, 2);
                p++;
            }
        }
    }
    return ok && buf_append_char(out, last ? '\n' : '\t');
}

/* A money text of the contract: a signed decimal (dec_total's grammar). */
static bool decimal_or_null(const char *s)
{
    dect d;
    return !s || dect_parse(s, strlen(s), &d);
}

/* A tenant: digits, an optional minus, fitting a bigint. */
static bool tenant_ok(const char *s)
{
    const char *p = s + (*s == '-');
    size_t n = strlen(p);
    return n > 0 && n <= 18 && strspn(p, "0123456789") == n;
}

/* v in decimal into out (24 bytes), as "%lld" would write it; returns
 * out.  Numbers are written for every row, where snprintf cost a tenth of
 * the client's time. */
static const char *int_text(char out[24], int64_t v)
{
    char tmp[24];
    size_t n = 0, k = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        out[k++] = '-';
    while (n)
        out[k++] = tmp[--n];
    out[k] = '\0';
    return out;
}

/* The readers' two shapes of a time, taken apart for the server (which
 * reads an instant from text at several times the cost): a channel row's
 * "YYYY-MM-DDTHH:MM:SS+HH:MM" (settle_channel.c put_time) and a bank
 * entry's booking date "YYYY-MM-DD" (midnight UTC), both checked against
 * the calendar here.  Into ts the instant in seconds since 1970, day the
 * wall clock's date, off the offset in seconds; all three empty (NULL on
 * the server, which then reads the text itself) for any other text. */
static void time_parts(const char *t, bool bank, char ts[24], char day[11], char off[24])
{
    size_t n = strlen(t);
    int64_t us;
    const char *why;
    ts[0] = day[0] = off[0] = '\0';
    bool dated = n == 10 && bank;
    bool timed = n == 25 && t[10] == 'T' && (t[19] == '+' || t[19] == '-') && t[22] == ':';
    char midnight[] = "YYYY-MM-DDT00:00:00Z";   /* a date's instant */
    if (dated)
        memcpy(midnight, t, 10);
    if (!(dated || timed) || !ts_parse(dated ? midnight : t, dated ? 20 : n, &us, &why))
        return;
    int off_s = 0;
    if (timed) {
        int hh = (t[20] - '0') * 10 + (t[21] - '0'), mm = (t[23] - '0') * 10 + (t[24] - '0');
        off_s = (t[19] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
    }
    int_text(ts, us / 1000000 - (us % 1000000 < 0));
    memcpy(day, t, 10);
    day[10] = '\0';
    int_text(off, off_s);
}

/* Checks row r of file path (the row's tenant resolved into *tenant) and
 * appends it as a COPY line.  EXIT_OK, or the status with err set. */
static int encode_row(buf *out, const settle_row *r, size_t file_no, uint64_t seq,
                      const char *tenant_default, const char *path, buf *err)
{
    const char *tenant = r->tenant && *r->tenant ? r->tenant : tenant_default;
    if (!tenant) {
        buf_printf(err, "%s:%llu: the row names no tenant; add --set tenant_id=N", path,
                   (unsigned long long)r->line);
        return EXIT_USAGE;
    }
    const char *bad = !tenant_ok(tenant)                ? "tenant"
                      : !decimal_or_null(r->net) || !r->net ? "net"
                      : !decimal_or_null(r->gross)      ? "gross"
                      : !decimal_or_null(r->fee)        ? "fee"
                      : !decimal_or_null(r->balance)    ? "balance"
                      : !r->currency || !*r->currency   ? "currency"
                      : !r->time || !*r->time           ? "time"
                      : !r->txn_id                      ? "txn_id"
                                                        : NULL;
    if (bad) {
        const char *v = strcmp(bad, "tenant") == 0 ? tenant
                        : strcmp(bad, "net") == 0   ? r->net
                        : strcmp(bad, "gross") == 0 ? r->gross
                        : strcmp(bad, "fee") == 0   ? r->fee
                        : strcmp(bad, "balance") == 0 ? r->balance
                                                      : NULL;
        buf_printf(err, "%s:%llu: the row's %s%s%s%s is not usable: nothing was compared", path,
                   (unsigned long long)r->line, bad, v ? " '" : "", v ? v : "", v ? "'" : "");
        return EXIT_INPUT;
    }
    char fno[24], sq[24], ln[24], ts[24], day[11], off[24];
    time_parts(r->time, r->side == SETTLE_SIDE_BANK, ts, day, off);
    int_text(fno, (int64_t)file_no);
    int_text(sq, (int64_t)seq);
    int_text(ln, (int64_t)r->line);
    const char *v[] = {fno, sq, ln, r->side == SETTLE_SIDE_BANK ? "bank" : "channel",
                       settle_kind_name(r->kind), tenant, r->channel ? r->channel : "",
                       r->account, r->txn_id, r->order_key, r->batch_id, r->time,
                       r->value_date, r->currency, r->gross, r->fee, r->net, r->balance,
                       r->text, ts[0] ? ts : NULL, day[0] ? day : NULL, off[0] ? off : NULL};
    size_t n = sizeof v / sizeof v[0];
    bool ok = true;
    for (size_t k = 0; ok && k < n; k++)
        ok = copy_field(out, v[k], k + 1 == n);
    if (!ok) {
        buf_printf(err, "%s: out of memory", path);
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

/* Sends rdr's rows in the COPY the caller began.  EXIT_OK when the file
 * ended and agreed with itself; else the status with err set. */
static int send_rows(recon_ctx *x, progress *prog, size_t i, source *src, settle_reader *rdr,
                     const char *tenant, settle_file *sf, file_report *fr, buf *err)
{
    const char *path = x->cfg->files[i];
    buf out = BUF_INIT;
    int code = EXIT_OK;
    settle_row sr;
    read_result rr;
    uint64_t seq = 0;
    while (code == EXIT_OK && (rr = settle_reader_next(rdr, &sr)) == READ_RECORD) {
        code = encode_row(&out, &sr, i + 1, ++seq, tenant, path, err);
        if (sr.side == SETTLE_SIDE_BANK)
            sf->bank_rows++;
        else
            sf->channel_rows++;
        fr->counts.rows_read++;
        if ((seq & 0x3ff) == 0) {
            if (signals_interrupted())
                code = EXIT_INTERRUPTED;
            progress_update(prog, source_raw_offset(src), seq);
        }
        if (code == EXIT_OK && out.len >= (1u << 16)) {
            if (!db_copy_send(x->tool.d, out.data, out.len))
                code = EXIT_DATABASE;
            buf_clear(&out);
        }
    }
    if (code == EXIT_OK && rr == READ_FAILED) {
        buf_printf(err, "%s", settle_reader_error(rdr));
        code = EXIT_INPUT;
    }
    if (code == EXIT_OK && out.len && !db_copy_send(x->tool.d, out.data, out.len))
        code = EXIT_DATABASE;
    buf_free(&out);
    return code;
}

/* Without --profile: the built-in profiles with a settle member whose
 * header the file's matches (settle_profile_open accepts it).  One, or
 * several that read a row the same way (equal settle members: Stripe's
 * balance and payout reconciliation reports share their columns): *out
 * takes the first (the caller's to free) and its name goes to the
 * summary; none, or several that would read it differently: EXIT_USAGE
 * with the candidates named in err. */
static int pick_profile(const config *cfg, const char *path, const source_identity *id,
                        profile **out, buf *err)
{
    buf names = BUF_INIT;
    size_t found = 0;
    bool differ = false;
    json_t *first = NULL;
    for (const char *const *n = profile_builtin_names; *n; n++) {
        buf e = BUF_INIT;
        profile *p = profile_builtin(*n, &e);
        bool usable = p && p->settle && profile_override(p, cfg->encoding, cfg->timezone, &e);
        source *src = usable ? source_open_identified(path, id, &e) : NULL;
        settle_read_options opt = {.profile = p, .zone = cfg->timezone};
        settle_reader *rdr = src ? settle_reader_open(src, path, &opt, &e) : NULL;
        if (rdr) {
            buf_printf(&names, "%s%s", found ? ", " : "", *n);
            json_t *member = profile_settle_json(p);
            if (found++ == 0) {
                first = member;
                *out = p;
                p = NULL;
            } else {
                differ = differ || !json_equal(first, member);
                json_decref(member);
            }
        }
        settle_reader_close(&rdr);
        source_close(&src);
        profile_free(&p);
        buf_free(&e);
    }
    int code = EXIT_OK;
    if (found == 0) {
        buf_printf(err, "%s: no built-in profile's header matches it, nor is it a bank statement "
                        "(camt.053, MT940): give --profile NAME", path);
        code = EXIT_USAGE;
    } else if (differ) {
        buf_printf(err, "%s: the headers of several profiles match it (%s): give --profile NAME",
                   path, buf_cstr(&names));
        profile_free(out);
        code = EXIT_USAGE;
    }
    json_decref(first);
    buf_free(&names);
    return code;
}

/* Sends file i's rows through rdr in one COPY.  EXIT_OK, or the status
 * (logged when the database failed). */
static int copy_file(recon_ctx *x, progress *prog, size_t i, source *src, settle_reader *rdr,
                     const char *tenant, settle_file *sf, file_report *fr, buf *err)
{
    if (!db_copy_begin(x->tool.d, SQL_SETTLE_COPY)) {
        x->failed_logged = true;
        return tool_db_failure(x->tool.d, "settle: COPY");
    }
    int code = send_rows(x, prog, i, src, rdr, tenant, sf, fr, err);
    bool ended = db_copy_end(x->tool.d, code == EXIT_OK ? NULL : "the file failed");
    if ((code == EXIT_OK && !ended) || code == EXIT_DATABASE) {
        x->failed_logged = true;
        return tool_db_failure(x->tool.d, "settle: COPY");
    }
    return code;
}

int settle_stage_file(recon_ctx *x, progress *prog, size_t i, const char *tenant,
                      file_report *fr, settle_result *res)
{
    const config *cfg = x->cfg;
    const char *path = cfg->files[i];
    settle_file *sf = &res->files[i];
    sf->path = path;
    fr->path = path;
    buf err = BUF_INIT;
    bool bank = false;
    int code = EXIT_OK;
    profile *picked = NULL;
    source_identity id = {.size = -1};
    if (source_path_is_stream(path)) {
        buf_printf(&err, "%s: settle reads each file more than once (its kind, then its rows): "
                         "give a file, not a stream", path);
        code = EXIT_USAGE;
    } else if (!source_identify(path, &id, &err) || !sniff_bank(path, &bank, &err)) {
        code = EXIT_INPUT;
    } else if (!bank && !cfg->profile) {
        code = pick_profile(cfg, path, &id, &picked, &err);
        sf->picked = picked != NULL;
    }
    memcpy(fr->digest, id.digest, sizeof fr->digest);
    const profile *pf = bank ? NULL : picked ? picked : cfg->profile;
    sf->reader = bank ? "bank statement" : pf ? pf->name : NULL;
    fr->format = sf->reader;
    source *src = NULL;
    settle_reader *rdr = NULL;
    settle_read_options opt = {.profile = pf, .zone = cfg->timezone};
    if (code == EXIT_OK) {
        src = source_open_identified(path, &id, &err);
        if (src)
            rdr = settle_reader_open(src, path, &opt, &err);
        if (!rdr)
            code = EXIT_INPUT;
    }
    if (code == EXIT_OK) {
        progress_file(prog, path, id.size);
        code = copy_file(x, prog, i, src, rdr, tenant, sf, fr, &err);
    }
    settle_reader_close(&rdr);
    source_close(&src);
    fr->status = code == EXIT_OK ? FILE_OK : FILE_FAILED;
    if (code != EXIT_OK && err.len) {
        log_error("%s", buf_cstr(&err));
        file_report_set_error(fr, buf_cstr(&err));
    }
    if (code != EXIT_OK)
        fr->counts.rows_read = 0;
    /* the picked profile's name outlives it: the report's and summary's */
    if (picked && (sf->picked_name = strdup(picked->name)))
        sf->reader = sf->picked_name;
    fr->format = sf->reader;
    profile_free(&picked);
    buf_free(&err);
    return code;
}
