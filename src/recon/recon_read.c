/*
 * recon_read.c - reads the statement's files into the reconcile session
 * (see recon_read.h): the same sources, readers and validation as import,
 * the valid rows sent in one binary COPY per file (in 1 MiB sends, so
 * memory stays at one buffer), the rejects made durable before the
 * comparison goes on.
 */
#include "recon/recon_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats.h"
#include "db/recon_sql.h"
#include "input/profile.h"
#include "input/reader.h"
#include "input/source.h"
#include "load/copy_encode.h"
#include "output/log.h"
#include "output/progress.h"
#include "pipeline/file.h"
#include "rules/validate.h"
#include "util/clock.h"
#include "util/exitcodes.h"
#include "util/signals.h"

#define COPY_FLUSH_BYTES (1u << 20)

/* One record of file i, validated: a rejected one to rj (counted in c), a
 * valid one encoded into out for the COPY.  EXIT_OK, or EXIT_INPUT with
 * err set: the rejects file cannot be written, --max-rejects is exceeded,
 * or out of memory. */
static int stage_record(const config *cfg, size_t i, const raw_record *rec, bool check_utf8,
                        rejects *rj, load_counts *c, buf *reason, buf *out, buf *err)
{
    const char *path = cfg->files[i];
    row r;
    buf_clear(reason);
    if (validate_record(rec, &cfg->presets, check_utf8, &r, reason)) {
        if (copy_binary_recon_row(out, (int32_t)(i + 1), (int64_t)rec->line, &r))
            return EXIT_OK;
        buf_clear(err);
        buf_printf(err, "%s: out of memory", path);
        return EXIT_INPUT;
    }
    c->rows_rejected++;
    if (!rejects_write_converted(rj, path, rec->line, buf_cstr(reason), rec->raw, rec->raw_len,
                                 rec->orig, rec->orig_len, err))
        return EXIT_INPUT;
    if (cfg->max_rejects >= 0 && c->rows_rejected > (uint64_t)cfg->max_rejects) {
        buf_printf(err, "%s: stopped: more than %lld rows rejected (--max-rejects)", path,
                   (long long)cfg->max_rejects);
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

/* Opens file i: its digest (not for standard input), then the source and
 * the reader.  EXIT_OK, or EXIT_USAGE / EXIT_INPUT with err set; *src and
 * *rdr are the caller's to close in every case. */
static int open_statement(const config *cfg, size_t i, input_format fmt, key_links *links,
                          file_report *fr, source **src, reader **rdr, buf *err)
{
    const char *path = cfg->files[i];
    if (fmt == FORMAT_AUTO && !cfg->profile) {
        format_unknown(err, path);
        return EXIT_USAGE;
    }
    source_identity id = {.size = -1};
    if (!source_path_is_stream(path)) {
        if (!source_identify(path, &id, err))
            return signals_interrupted() ? EXIT_INTERRUPTED : EXIT_INPUT;
        memcpy(fr->digest, id.digest, sizeof fr->digest);
    }
    *src = source_open_identified(path, &id, err);
    reader_options ropt = {
        .format = fmt, .delimiter = cfg->delimiter, .profile = cfg->profile, .links = links};
    for (int c = 0; c < COL_COUNT; c++)
        ropt.preset[c] = cfg->presets.value[c] != NULL;
    if (*src)
        *rdr = reader_open(*src, path, &ropt, err);
    if (*rdr)
        file_warn_unused_presets(cfg, *rdr, path);
    return *rdr ? EXIT_OK : signals_interrupted() ? EXIT_INTERRUPTED : EXIT_INPUT;
}

/* Sends file i's records, read from rdr, in the binary COPY the caller
 * began: header, every valid row (in 1 MiB sends), trailer.  EXIT_OK when
 * all is sent; otherwise the status with err set, and *copy_lost when the
 * database failed (the COPY is over: the caller must not end it). */
static int send_records(recon_ctx *x, size_t i, const source *src, reader *rdr, rejects *rj,
                        load_counts *c, buf *err, bool *copy_lost)
{
    const config *cfg = x->cfg;
    const char *path = cfg->files[i];
    bool check_utf8 = reader_records_need_utf8_check(rdr);
    buf reason = BUF_INIT, out = BUF_INIT;
    int code = EXIT_OK;
    bool oom = !copy_binary_header(&out);
    while (!oom) {
        if ((c->rows_read & 0x3ff) == 0) {
            if (signals_interrupted()) {
                buf_printf(err, "%s: interrupted", path);
                code = EXIT_INTERRUPTED;
                break;
            }
            progress_update(&x->prog, source_raw_offset(src), c->rows_read);
        }
        raw_record rec;
        read_result rr = reader_next(rdr, &rec);
        if (rr == READ_EOF) {
            oom = !copy_binary_trailer(&out);
            if (!oom && !db_copy_send(x->tool.d, out.data, out.len))
                *copy_lost = true;
            break;
        }
        if (rr == READ_FAILED) {
            buf_append_str(err, reader_error(rdr));
            code = signals_interrupted() ? EXIT_INTERRUPTED : EXIT_INPUT;
            break;
        }
        c->rows_read++;
        if (rec.skipped) {
            c->rows_skipped++;
            continue;
        }
        code = stage_record(cfg, i, &rec, check_utf8, rj, c, &reason, &out, err);
        if (code != EXIT_OK)
            break;
        if (out.len >= COPY_FLUSH_BYTES) {
            if (!db_copy_send(x->tool.d, out.data, out.len)) {
                *copy_lost = true;
                break;
            }
            buf_clear(&out);
        }
    }
    if (oom) {
        buf_clear(err);
        buf_printf(err, "%s: out of memory", path);
        code = EXIT_INPUT;
    }
    buf_free(&reason);
    buf_free(&out);
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

int recon_stage_file(recon_ctx *x, size_t i, rejects *rj, file_report *fr, recon_result *res)
{
    const config *cfg = x->cfg;
    const char *path = cfg->files[i];
    input_format fmt = cfg->format != FORMAT_AUTO ? cfg->format : format_from_name(path);
    fr->path = path;
    fr->format = cfg->profile ? cfg->profile->name : format_name(fmt);
    fr->status = FILE_FAILED;
    buf err = BUF_INIT;
    source *src = NULL;
    reader *rdr = NULL;
    double started = now_seconds();
    int code = open_statement(cfg, i, fmt, x->links, fr, &src, &rdr, &err);
    bool copy_lost = false;
    if (code == EXIT_OK && !db_copy_begin(x->tool.d, SQL_RECON_COPY)) {
        code = tool_db_failure(x->tool.d, "reconcile: staging the statement (COPY)");
        x->failed_logged = true;
    } else if (code == EXIT_OK) {
        progress_file(&x->prog, path, source_raw_size(src));
        code = send_records(x, i, src, rdr, rj, &fr->counts, &err, &copy_lost);
        if (code != EXIT_OK && !copy_lost)
            db_copy_end(x->tool.d, err.len ? buf_cstr(&err) : "reconcile stopped");
        else if (!copy_lost && !db_copy_end(x->tool.d, NULL))
            copy_lost = true;
        if (copy_lost) {
            code = tool_db_failure(x->tool.d, "reconcile: staging the statement (COPY)");
            x->failed_logged = true;
        } else if (code == EXIT_OK && !rejects_sync(rj, &err)) {
            code = EXIT_INPUT;
        }
    }
    if (code == EXIT_OK && !stage_cover(x, i, reader_covers_matched(rdr)))
        code = x->failed_logged ? db_failure_exit(x->tool.d) : EXIT_INPUT;
    if (code == EXIT_OK && !keep_stated(cfg, i, rdr, res)) {
        buf_printf(&err, "reconcile: out of memory");
        code = EXIT_INPUT;
    }
    if (code == EXIT_OK) {
        fr->status = FILE_OK;
        file_warn_money_unchecked(rdr, path, fr);
        const char *wz = reader_window_zone(rdr);
        if (wz && !x->window_zone[0])
            snprintf(x->window_zone, sizeof x->window_zone, "%s", wz);
    } else
        /* Nothing of it is compared (its rows are in a COPY that is
         * rolled back): its figures say so, as import's and validate's of
         * a file refused by its own totals. */
        memset(&fr->counts, 0, sizeof fr->counts);
    if (err.len) {
        log_error("%s", buf_cstr(&err));
        file_report_set_error(fr, buf_cstr(&err));
    }
    reader_close(&rdr);
    source_close(&src);
    buf_free(&err);
    fr->elapsed_s = now_seconds() - started;
    return code;
}
