/*
 * fuzz_profile_reader.c - libFuzzer target: a channel bill read by a
 * built-in profile (framing, summary and count lines, field cleanup, GBK
 * conversion, zip members) and validated, on arbitrary bytes.
 *
 * The first byte picks the profile (bits 0-1: wechat-trade, alipay-trade,
 * stripe-balance, paypal-stl) and bit 2 flips its encoding (UTF-8 <-> GBK);
 * the rest is the file, plain, gzip or zip.  Invariants: lines strictly
 * increase; a record is rejected (reason set, no fields), skipped, or has
 * the profile's columns as texts and a payload that is a JSON object jsonb
 * takes; a row that validates has trimmed, non-blank keys and the channel
 * of its profile; READ_FAILED carries a message and is sticky.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_input.h"
#include "input/profile.h"
#include "input/reader.h"
#include "input/source.h"
#include "rules/json_scan.h"
#include "rules/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const channels[4] = {"wechat", "alipay", "stripe", "paypal"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static profile *profiles[8];
    buf err = BUF_INIT, reason = BUF_INIT;

    if (size < 1)
        return 0;
    int k = data[0] & 7;
    if (!profiles[k]) {
        profiles[k] = profile_builtin(profile_builtin_names[k & 3], &err);
        fuzz_check(profiles[k] != NULL);
        if (k & 4)
            fuzz_check(profile_override(profiles[k],
                                        profiles[k]->encoding == PROFILE_GBK ? "utf-8" : "gbk",
                                        NULL, &err));
    }
    reader_options opt;
    memset(&opt, 0, sizeof opt);
    opt.profile = profiles[k];
    opt.preset[COL_TENANT_ID] = true;
    presets pre;
    memset(&pre, 0, sizeof pre);
    pre.value[COL_TENANT_ID] = "42";

    source *src = source_open(fuzz_input_file(data + 1, size - 1), &err);
    if (src == NULL)
        fuzz_fail("source_open: %s", buf_cstr(&err));
    reader *r = reader_open(src, "fuzz-input", &opt, &err);
    if (r == NULL) {
        fuzz_check(err.len > 0);
    } else {
        raw_record rec;
        read_result rr;
        uint64_t last = 0;
        while ((rr = reader_next(r, &rec)) == READ_RECORD) {
            fuzz_check(rec.line > last);
            last = rec.line;
            fuzz_check(rec.raw != NULL || rec.raw_len == 0);
            fuzz_check(rec.raw_len == 0 || (rec.raw[rec.raw_len - 1] != '\n' &&
                                            rec.raw[rec.raw_len - 1] != '\r'));
            if (rec.error || rec.skipped) {
                fuzz_check(!(rec.error && rec.skipped));
                fuzz_check(!rec.error || rec.error[0] != '\0');
                continue;
            }
            const field *pf = &rec.fields[COL_PAYLOAD];
            json_kind jk;
            fuzz_check(pf->kind == FIELD_JSON && pf->json == pf->text);
            fuzz_check(json_validate(pf->text, pf->len, &jk, NULL) && jk == JSON_KIND_OBJECT);
            fuzz_check(rec.fields[COL_TENANT_ID].kind == FIELD_ABSENT);
            row rw;
            buf_clear(&reason);
            if (validate_record(&rec, &pre, false, &rw, &reason)) {
                fuzz_check(rw.tenant_id == 42 && rw.status == 2);
                fuzz_check(rw.channel_len == strlen(channels[k & 3]) &&
                           memcmp(rw.channel, channels[k & 3], rw.channel_len) == 0);
                fuzz_check(rw.out_trade_no_len > 0 && rw.callback_type_len > 0);
            } else {
                fuzz_check(reason.len > 0);
            }
        }
        fuzz_check(rr == READ_EOF || rr == READ_FAILED);
        if (rr == READ_FAILED)
            fuzz_check(reader_error(r)[0] != '\0');
        fuzz_check(reader_next(r, &rec) == rr);
        reader_close(&r);
    }
    source_close(&src);
    buf_free(&err);
    buf_free(&reason);
    return 0;
}
