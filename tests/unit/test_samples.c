/*
 * test_samples.c - the files in samples/ through the pure stages (source,
 * reader, validate, one chunk), against the figures samples/README.md
 * states: records read, the lines of the rejected rows, rows deduplicated,
 * distinct keys, and the unionpay file refused without --set channel.
 *
 * The directory comes from IDEMLOAD_SAMPLES (set by tests/CMakeLists.txt);
 * a sample that is not there skips its test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunk/chunk.h"
#include "input/reader.h"
#include "input/source.h"
#include "rules/validate.h"

typedef struct sample {
    const char *name;
    const char *set_channel;    /* --set channel=..., or NULL */
    uint64_t rows_read;
    uint64_t rejected_lines[4]; /* 0-terminated */
    uint64_t deduplicated;
    uint64_t multi_line_start;  /* a record spanning two lines starts here (0: none) */
} sample;

static const sample samples[] = {
    {"statements-wechat-2026-11-28.csv.gz", NULL, 30, {9, 16, 23, 0}, 9, 12},
    {"statements-alipay-2026-11-28.ndjson", NULL, 21, {5, 9, 0}, 5, 0},
    {"statements-mixed-2026-11-29.ndjson.gz", NULL, 22, {0}, 2, 0},
    {"statements-unionpay-nochannel-2026-11-29.csv", "unionpay", 20, {8, 0}, 3, 0},
};

static char *sample_path(const char *name)
{
    const char *dir = getenv("IDEMLOAD_SAMPLES");
    char *p;

    if (dir == NULL)
        dir = "samples";
    p = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void run_sample(const sample *s)
{
    char *path = sample_path(s->name);
    buf err = BUF_INIT, reason = BUF_INIT;
    reader_options opt;
    presets pre;
    source *src;
    reader *r;
    chunk *ch;
    raw_record rec;
    read_result rr;
    uint64_t read = 0, rejected = 0, last_line = 0;
    size_t nrej = 0;
    bool saw_multi = false;

    if (access(path, R_OK) != 0) {
        /* A sample the test names must exist: a skip would count as a pass. */
        fail_msg("sample %s cannot be read", path);
    }
    memset(&opt, 0, sizeof opt);
    memset(&pre, 0, sizeof pre);
    opt.format = format_from_name(path);
    opt.delimiter = ',';
    if (s->set_channel != NULL) {
        opt.preset[COL_CHANNEL] = true;
        pre.value[COL_CHANNEL] = s->set_channel;
    }
    src = source_open(path, &err);
    if (src == NULL)
        fail_msg("%s", buf_cstr(&err));
    r = reader_open(src, path, &opt, &err);
    if (r == NULL)
        fail_msg("%s", buf_cstr(&err));
    ch = chunk_new(16);
    while ((rr = reader_next(r, &rec)) == READ_RECORD) {
        row rw;

        read++;
        assert_true(rec.line > last_line);
        if (rec.line == s->multi_line_start) {
            assert_non_null(memchr(rec.raw, '\n', rec.raw_len));
            saw_multi = true;
        }
        last_line = rec.line;
        buf_clear(&reason);
        if (validate_record(&rec, &pre, opt.format == FORMAT_CSV, &rw, &reason)) {
            assert_true(chunk_add(ch, &rw));
            continue;
        }
        rejected++;
        if (nrej >= 3 || s->rejected_lines[nrej] != rec.line)
            fail_msg("%s: line %llu rejected (%s)", s->name, (unsigned long long)rec.line,
                     buf_cstr(&reason));
        nrej++;
    }
    if (rr != READ_EOF)
        fail_msg("%s: %s", s->name, reader_error(r));
    assert_int_equal(s->rejected_lines[nrej], 0);
    assert_int_equal(read, s->rows_read);
    assert_int_equal(chunk_counts_of(ch)->rows_deduplicated, s->deduplicated);
    assert_int_equal(chunk_size(ch), read - rejected - s->deduplicated);
    assert_true(saw_multi || s->multi_line_start == 0);
    chunk_free(&ch);
    reader_close(&r);
    source_close(&src);
    buf_free(&err);
    buf_free(&reason);
    free(path);
}

static void test_wechat(void **state)
{
    (void)state;
    run_sample(&samples[0]);
}

static void test_alipay(void **state)
{
    (void)state;
    run_sample(&samples[1]);
}

static void test_mixed(void **state)
{
    (void)state;
    run_sample(&samples[2]);
}

static void test_unionpay(void **state)
{
    (void)state;
    run_sample(&samples[3]);
}

/* Without --set channel the unionpay file fails before any row. */
static void test_unionpay_needs_channel(void **state)
{
    char *path = sample_path(samples[3].name);
    buf err = BUF_INIT;
    reader_options opt;
    source *src;

    (void)state;
    if (access(path, R_OK) != 0) {
        /* A sample the test names must exist: a skip would count as a pass. */
        fail_msg("sample %s cannot be read", path);
    }
    memset(&opt, 0, sizeof opt);
    opt.format = FORMAT_CSV;
    opt.delimiter = ',';
    src = source_open(path, &err);
    assert_non_null(src);
    assert_null(reader_open(src, path, &opt, &err));
    assert_non_null(strstr(buf_cstr(&err), "no channel column"));
    assert_non_null(strstr(buf_cstr(&err), "--set channel=VALUE"));
    source_close(&src);
    buf_free(&err);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wechat),
        cmocka_unit_test(test_alipay),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_unionpay),
        cmocka_unit_test(test_unionpay_needs_channel),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
