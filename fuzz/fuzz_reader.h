/*
 * fuzz_reader.h - one fuzz iteration of a reader and everything after it:
 * source -> reader -> validate -> chunk -> COPY encoding, with rejected
 * records written to a rejects file on /dev/null (its UTF-8 repair and
 * base64 paths included).
 *
 * The first input byte chooses options (the CSV delimiter and which columns
 * --set supplies); the rest is the file, plain or gzip.  Invariants checked
 * on every record: lines strictly increase, raw text is no longer than what
 * was decoded and carries no final line break (NDJSON: no LF at all), field
 * spans are sane, a
 * good row's keys are trimmed of Unicode white space and zero-width
 * characters (checked against fuzz_white_space.h) and non-blank, its payload is JSON that jsonb
 * takes, and its COPY line has eight columns.  For NDJSON, every string
 * field decodes (through jansson) to exactly its text.
 */
#ifndef IDEMLOAD_FUZZ_READER_H
#define IDEMLOAD_FUZZ_READER_H

#include <jansson.h>

#include "chunk/chunk.h"
#include "load/copy_encode.h"
#include "fuzz_input.h"
#include "fuzz_white_space.h"
#include "rules/json_scan.h"
#include "input/reader.h"
#include "output/rejects.h"
#include "input/source.h"
#include "rules/validate.h"

/* --set values for the columns the option byte marks as preset. */
static const char *const preset_values[COL_COUNT] = {
    [COL_TENANT_ID] = "42",
    [COL_CHANNEL] = "wechat",
    [COL_OUT_TRADE_NO] = "T-1",
    [COL_CALLBACK_TYPE] = "pay",
    [COL_STATUS] = "2",
    [COL_PAYLOAD] = "{\"preset\":true}",
    [COL_RECEIVED_AT] = "2026-03-01T10:00:00+08:00",
};

static void check_key(const char *p, size_t n)
{
    fuzz_check(p != NULL && n > 0);
    fuzz_check(ref_trimmed_at((const unsigned char *)p, n) == 0);
    fuzz_check(ref_trimmed_before((const unsigned char *)p, n) == 0);
}

static void check_field(const field *f, bool ndjson)
{
    switch (f->kind) {
    case FIELD_ABSENT:
    case FIELD_NULL:
        break;
    case FIELD_TEXT:
        fuzz_check(f->text != NULL || f->len == 0);
        if (ndjson) {
            /* the decoded text is what jansson makes of the quoted JSON */
            json_t *v;

            fuzz_check(f->json != NULL && f->json_len >= 2);
            fuzz_check(f->jkind == JSON_KIND_STRING);
            v = json_loadb(f->json, f->json_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
            fuzz_check(v != NULL && json_is_string(v));
            fuzz_check(json_string_length(v) == f->len);
            fuzz_check(f->len == 0 || memcmp(json_string_value(v), f->text, f->len) == 0);
            json_decref(v);
        }
        break;
    case FIELD_JSON: {
        json_kind k;

        fuzz_check(ndjson);
        fuzz_check(f->text != NULL && f->len > 0);
        fuzz_check(json_validate(f->text, f->len, &k, NULL));
        fuzz_check(k == f->jkind && k != JSON_KIND_STRING && k != JSON_KIND_NULL);
        break;
    }
    default:
        fuzz_fail("field kind %d", (int)f->kind);
    }
}

/* A validated row's COPY tuple: eight fields, its length exactly the
 * fields', and no NUL in a text (the server refuses NUL in text). */
static void check_copy_tuple(const buf *t, const row *rw)
{
    size_t texts = rw->channel_len + rw->out_trade_no_len + rw->callback_type_len + rw->payload_len;

    fuzz_check(t->len == 2 + 8 * 4 + 4 + 8 + 2 + 8 + texts);
    fuzz_check((unsigned char)t->data[0] == 0 && (unsigned char)t->data[1] == 8);
    fuzz_check(memchr(rw->channel, 0, rw->channel_len) == NULL);
    fuzz_check(memchr(rw->out_trade_no, 0, rw->out_trade_no_len) == NULL);
    fuzz_check(memchr(rw->callback_type, 0, rw->callback_type_len) == NULL);
    fuzz_check(memchr(rw->payload, 0, rw->payload_len) == NULL);
}

static int fuzz_reader(const uint8_t *data, size_t size, input_format format)
{
    static const char delims[4] = {',', ';', '\t', '|'};
    static rejects *rj;
    reader_options opt;
    presets pre;
    buf err = BUF_INIT, reason = BUF_INIT, line = BUF_INIT;
    source *src;
    reader *r;

    if (size < 1)
        return 0;
    if (rj == NULL)
        rj = rejects_open("/dev/null");
    memset(&opt, 0, sizeof opt);
    memset(&pre, 0, sizeof pre);
    opt.format = format;
    opt.delimiter = delims[data[0] & 3];
    for (int c = 0; c < 6; c++) {
        /* bits 2..7: tenant_id, channel, out_trade_no, callback_type,
         * payload, received_at */
        int col = c < 4 ? c : c + 1;

        if (data[0] & (4 << c)) {
            opt.preset[col] = true;
            pre.value[col] = preset_values[col];
        }
    }
    src = source_open(fuzz_input_file(data + 1, size - 1), &err);
    if (src == NULL)
        fuzz_fail("source_open: %s", buf_cstr(&err));
    r = reader_open(src, "fuzz-input", &opt, &err);
    if (r == NULL) {
        fuzz_check(err.len > 0);
        fuzz_check(format == FORMAT_CSV); /* an NDJSON reader opens on anything */
    } else {
        chunk *ch = chunk_new(8);
        uint64_t last_line = 0;
        raw_record rec;
        read_result rr;

        fuzz_check(ch != NULL);
        fuzz_check(reader_records_need_utf8_check(r) == (format == FORMAT_CSV));
        while ((rr = reader_next(r, &rec)) == READ_RECORD) {
            row rw;

            fuzz_check(rec.line > last_line);
            last_line = rec.line;
            fuzz_check(rec.raw != NULL);
            fuzz_check(rec.raw_len <= source_decoded_offset(src));
            if (format == FORMAT_CSV)
                fuzz_check(rec.raw_len == 0 || (rec.raw[rec.raw_len - 1] != '\n' &&
                                                rec.raw[rec.raw_len - 1] != '\r'));
            else /* one line; a lone CR is white space there */
                fuzz_check(memchr(rec.raw, '\n', rec.raw_len) == NULL);
            if (rec.error != NULL) {
                fuzz_check(rec.error[0] != '\0');
                for (int c = 0; c < COL_COUNT; c++)
                    fuzz_check(rec.fields[c].kind == FIELD_ABSENT);
            } else {
                for (int c = 0; c < COL_COUNT; c++)
                    check_field(&rec.fields[c], format == FORMAT_NDJSON);
            }
            buf_clear(&reason);
            if (validate_record(&rec, &pre, reader_records_need_utf8_check(r), &rw, &reason)) {
                json_kind k;

                fuzz_check(reason.len == 0);
                check_key(rw.channel, rw.channel_len);
                check_key(rw.out_trade_no, rw.out_trade_no_len);
                check_key(rw.callback_type, rw.callback_type_len);
                fuzz_check(json_validate(rw.payload, rw.payload_len, &k, NULL));
                fuzz_check(k != JSON_KIND_NULL);
                fuzz_check(chunk_add(ch, &rw));
                buf_clear(&line);
                fuzz_check(copy_binary_row(&line, 1, &rw));
                check_copy_tuple(&line, &rw);
            } else {
                fuzz_check(reason.len > 0);
                buf_clear(&err);
                if (!rejects_write(rj, "fuzz-input", rw.line, buf_cstr(&reason), rw.raw,
                                   rw.raw_len, &err))
                    fuzz_fail("rejects_write: %s", buf_cstr(&err));
            }
            if (chunk_size(ch) >= 64)
                chunk_reset(ch);
        }
        fuzz_check(rr == READ_EOF || rr == READ_FAILED);
        if (rr == READ_FAILED)
            fuzz_check(reader_error(r)[0] != '\0');
        fuzz_check(reader_next(r, &rec) == rr); /* sticky */
        chunk_sort(ch);
        for (size_t i = 1; i < chunk_size(ch); i++) {
            row a, b;

            chunk_get(ch, i - 1, &a);
            chunk_get(ch, i, &b);
            fuzz_check(!row_same_key(&a, &b));
        }
        chunk_free(&ch);
        reader_close(&r);
    }
    source_close(&src);
    buf_free(&err);
    buf_free(&reason);
    buf_free(&line);
    return 0;
}

#endif
