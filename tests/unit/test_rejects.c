/*
 * test_rejects.c - the rejects file: created only at the first reject,
 * appended to, one JSON object per line with file, line, reason and raw in
 * that order; raw texts with quotes, control characters, NUL bytes (as
 * \u0000) and invalid UTF-8 (U+FFFD in "raw", exact bytes in "raw_base64");
 * several threads writing at once; write errors reported.
 *
 * Every line written is read back with jansson and compared byte for byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "output/rejects.h"

static bool exists(const char *p)
{
    struct stat st;

    return stat(p, &st) == 0;
}

/* The file's lines, each parsed (every line must be one JSON object). */
static json_t **read_lines(const char *p, size_t *count, char ***texts)
{
    size_t n;
    unsigned char *data = read_bytes(p, &n);
    json_t **objs = NULL;
    size_t k = 0, start = 0;

    *texts = NULL;
    assert_null(memchr(data, '\0', n)); /* JSON text never holds a raw NUL */
    for (size_t i = 0; i < n; i++) {
        if (data[i] != '\n')
            continue;
        {
            json_error_t jerr;
            json_t *o = json_loadb((const char *)data + start, i - start, JSON_ALLOW_NUL, &jerr);

            if (o == NULL || !json_is_object(o))
                fail_msg("line %zu is not a JSON object: %s", k + 1, jerr.text);
            objs = realloc(objs, (k + 1) * sizeof *objs);
            *texts = realloc(*texts, (k + 1) * sizeof **texts);
            assert_non_null(objs);
            assert_non_null(*texts);
            objs[k] = o;
            (*texts)[k] = dup_bytes((const char *)data + start, i - start);
            k++;
            start = i + 1;
        }
    }
    assert_int_equal(start, n); /* the file ends with a line break */
    free(data);
    *count = k;
    return objs;
}

static void free_lines(json_t **objs, char **texts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(objs[i]);
        free(texts[i]);
    }
    free(objs);
    free(texts);
}

static const char *str_member(json_t *o, const char *key, size_t *len)
{
    json_t *v = json_object_get(o, key);

    if (v == NULL || !json_is_string(v))
        fail_msg("member %s missing or not a string", key);
    if (len != NULL)
        *len = json_string_length(v);
    return json_string_value(v);
}

static unsigned char *unbase64(const char *s, size_t *out_len)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), k = 0;
    unsigned char *out = malloc(n / 4 * 3 + 3);
    uint32_t acc = 0;
    int bits = 0;

    assert_non_null(out);
    assert_int_equal(n % 4, 0);
    for (size_t i = 0; i < n; i++) {
        const char *p;

        if (s[i] == '=') {
            assert_true(i >= n - 2); /* padding only at the end */
            continue;
        }
        p = strchr(tbl, s[i]);
        assert_non_null(p);
        acc = (acc << 6) | (uint32_t)(p - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (unsigned char)(acc >> bits);
        }
    }
    *out_len = k;
    return out;
}

/* ---- laziness and appending --------------------------------------------- */

static void test_lazy_and_append(void **state)
{
    char *p = path_in(test_dir, "rejects.ndjson");
    rejects *rj;
    buf err = BUF_INIT;
    json_t **objs;
    char **texts;
    size_t n;

    (void)state;
    /* no reject: no file */
    rj = rejects_open(p);
    assert_non_null(rj);
    assert_true(rejects_sync(rj, &err));
    assert_int_equal(rejects_count(rj), 0);
    assert_true(rejects_close(&rj, &err));
    assert_null(rj);
    assert_false(exists(p));
    assert_true(rejects_close(&rj, &err)); /* NULL: no-op */

    /* an existing file is appended to, never truncated */
    write_bytes(p, "{\"earlier\":true}\n", 17);
    rj = rejects_open(p);
    assert_true(rejects_write(rj, "a.csv", 3, "tenant_id is missing", "x,y", 3, &err));
    assert_true(rejects_write(rj, "a.csv", 9, "payload is null", "1,2", 3, &err));
    assert_int_equal(rejects_count(rj), 2);
    assert_true(rejects_sync(rj, &err));
    assert_true(rejects_close(&rj, &err));
    rj = rejects_open(p);
    assert_true(rejects_write(rj, "b.ndjson", 1, "r", "{}", 2, &err));
    assert_true(rejects_close(&rj, &err));
    assert_int_equal(err.len, 0);

    objs = read_lines(p, &n, &texts);
    assert_int_equal(n, 4);
    assert_string_equal(texts[0], "{\"earlier\":true}");
    /* members in this order, compact */
    assert_string_equal(texts[1], "{\"file\":\"a.csv\",\"line\":3,\"reason\":\"tenant_id is "
                                  "missing\",\"raw\":\"x,y\"}");
    assert_int_equal(json_integer_value(json_object_get(objs[2], "line")), 9);
    assert_string_equal(str_member(objs[2], "reason", NULL), "payload is null");
    assert_string_equal(str_member(objs[3], "file", NULL), "b.ndjson");
    assert_null(json_object_get(objs[3], "raw_base64"));
    free_lines(objs, texts, n);
    free(p);
    buf_free(&err);
}

/* ---- raw texts ------------------------------------------------------------ */

typedef struct raw_case {
    const char *raw;
    size_t len;
    bool exact;          /* valid UTF-8 (NULs allowed): raw holds it exactly */
    const char *lossy;   /* !exact: the expected "raw" text */
    size_t lossy_len;
} raw_case;

#define EXACT(s) {s, sizeof(s) - 1, true, NULL, 0}
#define LOSSY(s, l) {s, sizeof(s) - 1, false, l, sizeof(l) - 1}
#define FFFD "\xef\xbf\xbd"

static const raw_case raw_cases[] = {
    EXACT(""),
    EXACT("plain,text"),
    EXACT("quotes \" and \\ backslashes"),
    EXACT("1,\"multi\nline\r\nrecord\",x"),
    EXACT("tab\there, bell\a, esc\x1b, del\x7f"),
    EXACT("caf\xc3\xa9 \xe5\xbe\xae\xe4\xbf\xa1 \xf0\x9f\x98\x80 \xe2\x80\xa8"),
    EXACT("nul\0in the middle"),
    EXACT("\0"),
    EXACT("\0\0trailing\0"),
    EXACT("</script>"),
    LOSSY("bad \xff byte", "bad " FFFD " byte"),
    LOSSY("\xff", FFFD),
    LOSSY("\xff\xfe", FFFD FFFD),
    LOSSY("\xc3", FFFD),                      /* truncated at the end */
    LOSSY("\xe2\x82x", FFFD FFFD "x"),         /* truncated sequence: each byte */
    LOSSY("\xc0\xaf", FFFD FFFD),              /* overlong */
    LOSSY("\xed\xa0\x80", FFFD FFFD FFFD),     /* a surrogate */
    LOSSY("ok \xc3\xa9 then \x80", "ok \xc3\xa9 then " FFFD),
    LOSSY("nul\0and \xff", "nul\0and " FFFD), /* both: NUL kept, bad byte replaced */
    LOSSY("\xff\0", FFFD "\0"),
};

static void test_raw_texts(void **state)
{
    char *p = path_in(test_dir, "raw.ndjson");
    rejects *rj = rejects_open(p);
    buf err = BUF_INIT;
    json_t **objs;
    char **texts;
    size_t n, count = sizeof raw_cases / sizeof raw_cases[0];

    (void)state;
    for (size_t i = 0; i < count; i++)
        assert_true(rejects_write(rj, "f.csv", i + 1, "bad row", raw_cases[i].raw,
                                  raw_cases[i].len, &err));
    assert_true(rejects_close(&rj, &err));
    objs = read_lines(p, &n, &texts);
    assert_int_equal(n, count);
    for (size_t i = 0; i < count; i++) {
        const raw_case *c = &raw_cases[i];
        size_t len;
        const char *raw = str_member(objs[i], "raw", &len);
        json_t *b64 = json_object_get(objs[i], "raw_base64");

        assert_int_equal(json_integer_value(json_object_get(objs[i], "line")), i + 1);
        /* a NUL travels as \u0000 (read_lines saw no raw NUL byte) */
        if (memchr(c->raw, '\0', c->len) != NULL)
            assert_non_null(strstr(texts[i], "\\u0000"));
        if (c->exact) {
            if (len != c->len || memcmp(raw, c->raw, len) != 0)
                fail_msg("raw case %zu: not kept exactly", i);
            assert_null(b64);
        } else {
            size_t bl;
            unsigned char *bytes;

            if (len != c->lossy_len || memcmp(raw, c->lossy, len) != 0)
                fail_msg("raw case %zu: lossy text differs (%zu bytes)", i, len);
            assert_non_null(b64);
            bytes = unbase64(json_string_value(b64), &bl);
            assert_int_equal(bl, c->len);
            assert_memory_equal(bytes, c->raw, bl);
            free(bytes);
        }
    }
    free_lines(objs, texts, n);
    free(p);
    buf_free(&err);
}

/* base64 of every length 0..7 (padding 0, 1 and 2) and every byte value. */
static void test_base64_lengths(void **state)
{
    char *p = path_in(test_dir, "b64.ndjson");
    rejects *rj = rejects_open(p);
    buf err = BUF_INIT;
    unsigned char all[256 + 8];
    json_t **objs;
    char **texts;
    size_t n;

    (void)state;
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)(255 - i); /* starts with 0xff: never valid UTF-8 */
    for (size_t len = 1; len <= 8; len++)
        assert_true(rejects_write(rj, "f", len, "r", (const char *)all, len, &err));
    assert_true(rejects_write(rj, "f", 256, "r", (const char *)all, 256, &err));
    assert_true(rejects_close(&rj, &err));
    objs = read_lines(p, &n, &texts);
    assert_int_equal(n, 9);
    for (size_t i = 0; i < n; i++) {
        size_t want = i < 8 ? i + 1 : 256, bl;
        json_t *b64 = json_object_get(objs[i], "raw_base64");
        unsigned char *bytes;

        assert_non_null(b64);
        assert_int_equal(strlen(json_string_value(b64)), (want + 2) / 3 * 4);
        bytes = unbase64(json_string_value(b64), &bl);
        assert_int_equal(bl, want);
        assert_memory_equal(bytes, all, want);
        free(bytes);
    }
    /* spot check against a known encoding */
    assert_string_equal(json_string_value(json_object_get(objs[2], "raw_base64")), "//79");
    free_lines(objs, texts, n);
    free(p);
    buf_free(&err);
}

/* Reasons and file names that are not valid UTF-8 still give valid JSON. */
static void test_reason_and_file_not_utf8(void **state)
{
    char *p = path_in(test_dir, "names.ndjson");
    rejects *rj = rejects_open(p);
    buf err = BUF_INIT;
    json_t **objs;
    char **texts;
    size_t n;

    (void)state;
    /* a reason quoting 40 bytes of a field can cut a character in two */
    assert_true(rejects_write(rj, "ok.csv", 1, "tenant_id is not an integer: \"\xe5\xbe", "r", 1,
                              &err));
    assert_true(rejects_write(rj, "caf\xe9.csv", 2, "r", "r", 1, &err));
    assert_true(rejects_close(&rj, &err));
    objs = read_lines(p, &n, &texts);
    assert_int_equal(n, 2);
    assert_string_equal(str_member(objs[0], "reason", NULL),
                        "tenant_id is not an integer: \"" FFFD FFFD);
    /* a file name is escaped as in the report, its bytes kept in base64 */
    assert_string_equal(str_member(objs[1], "file", NULL), "caf\\xE9.csv");
    assert_string_equal(str_member(objs[1], "file_base64", NULL), "Y2Fm6S5jc3Y=");
    assert_null(json_object_get(objs[0], "file_base64"));
    assert_int_equal(json_integer_value(json_object_get(objs[1], "line")), 2);
    free_lines(objs, texts, n);
    free(p);
    buf_free(&err);
}

static void test_big_raw(void **state)
{
    char *p = path_in(test_dir, "big.ndjson");
    rejects *rj = rejects_open(p);
    buf err = BUF_INIT;
    size_t len = (1 << 20) + 3, got;
    char *raw = malloc(len);
    json_t **objs;
    char **texts;
    size_t n;

    (void)state;
    assert_non_null(raw);
    for (size_t i = 0; i < len; i++)
        raw[i] = "ab\"\\\n\t\x01z"[i % 8];
    assert_true(rejects_write(rj, "big.csv", 123456789012ULL, "too big", raw, len, &err));
    assert_true(rejects_close(&rj, &err));
    objs = read_lines(p, &n, &texts);
    assert_int_equal(n, 1);
    {
        const char *r = str_member(objs[0], "raw", &got);

        assert_int_equal(got, len);
        assert_memory_equal(r, raw, len);
    }
    assert_int_equal(json_integer_value(json_object_get(objs[0], "line")), 123456789012LL);
    free_lines(objs, texts, n);
    free(raw);
    free(p);
    buf_free(&err);
}

/* A torn last line (an interrupted run's, without its newline) is cut
 * before the next reject is appended; one that is a whole JSON object is
 * completed with its newline (nothing lost): every line stays one JSON
 * object. */
static void test_torn_tail(void **state)
{
    static const struct {
        const char *text;
        bool kept;
    } torn[] = {
        {"{\"file\":\"kr.csv.gz\",\"li", false},         /* a fragment */
        {"{\"file\":\"kr.csv.gz\",\"line\":3}", true},   /* whole JSON, no newline */
        {"{\"a\":1} {", false},                          /* a whole object, then more */
        {"[1]", false},                                  /* whole JSON, not an object */
        {"{", false},                                    /* one byte */
    };
    char *p = path_in(test_dir, "torn.ndjson");
    buf err = BUF_INIT;
    json_t **objs;
    char **texts;
    size_t n;

    (void)state;
    for (size_t t = 0; t < sizeof torn / sizeof torn[0]; t++) {
        buf content = BUF_INIT;
        buf_append_str(&content, "{\"earlier\":1}\n");
        buf_append_str(&content, torn[t].text);
        write_bytes(p, content.data, content.len);
        buf_free(&content);
        rejects *rj = rejects_open(p);
        assert_true(rejects_write(rj, "kr.csv.gz", 3426, "r", "x", 1, &err));
        assert_true(rejects_sync(rj, &err));
        assert_true(rejects_close(&rj, &err));
        objs = read_lines(p, &n, &texts);
        assert_int_equal(n, torn[t].kept ? 3 : 2);
        assert_string_equal(texts[0], "{\"earlier\":1}");
        if (torn[t].kept)
            assert_string_equal(texts[1], torn[t].text);
        assert_int_equal(json_integer_value(json_object_get(objs[n - 1], "line")), 3426);
        free_lines(objs, texts, n);
    }
    /* only a fragment, no whole line at all: the file starts again */
    write_bytes(p, "{\"fi", 4);
    rejects *rj = rejects_open(p);
    assert_true(rejects_write(rj, "a", 1, "r", "x", 1, &err));
    assert_true(rejects_close(&rj, &err));
    objs = read_lines(p, &n, &texts);
    assert_int_equal(n, 1);
    free_lines(objs, texts, n);
    assert_int_equal(err.len, 0);
    buf_free(&err);
    free(p);
}

static void test_write_errors(void **state)
{
    char *p = path_in(test_dir, "no/such/dir/rejects.ndjson");
    rejects *rj = rejects_open(p);
    buf err = BUF_INIT;

    (void)state;
    assert_false(rejects_write(rj, "f", 1, "r", "raw", 3, &err));
    assert_non_null(strstr(buf_cstr(&err), "cannot open rejects file"));
    assert_non_null(strstr(buf_cstr(&err), p));
    assert_int_equal(rejects_count(rj), 0);
    assert_true(rejects_close(&rj, &err));
    buf_free(&err);
    free(p);

    /* a full device: the write or at the latest the flush/close fails */
    if (exists("/dev/full")) {
        bool ok;

        rj = rejects_open("/dev/full");
        ok = rejects_write(rj, "f", 1, "r", "raw", 3, &err);
        ok = rejects_sync(rj, &err) && ok;
        assert_false(ok);
        assert_non_null(strstr(buf_cstr(&err), "cannot write rejects file /dev/full"));
        buf_clear(&err);
        rejects_close(&rj, &err);
        assert_null(rj);
        buf_free(&err);
    }
}

/* ---- threads -------------------------------------------------------------- */

typedef struct writer_arg {
    rejects *rj;
    int id;
} writer_arg;

static void *writer(void *p)
{
    writer_arg *a = p;
    buf err = BUF_INIT;
    char raw[200];

    for (int i = 0; i < 500; i++) {
        int n = snprintf(raw, sizeof raw, "thread %d row %d %0120d", a->id, i, i);

        if (!rejects_write(a->rj, "t.csv", (uint64_t)(a->id * 1000 + i), "r", raw, (size_t)n,
                           &err))
            return (void *)1;
    }
    buf_free(&err);
    return NULL;
}

static void test_threads(void **state)
{
    char *p = path_in(test_dir, "threads.ndjson");
    rejects *rj = rejects_open(p);
    pthread_t t[4];
    writer_arg args[4];
    buf err = BUF_INIT;
    json_t **objs;
    char **texts;
    size_t n;
    int seen[4] = {0};

    (void)state;
    for (int i = 0; i < 4; i++) {
        args[i].rj = rj;
        args[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, writer, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *ret;

        assert_int_equal(pthread_join(t[i], &ret), 0);
        assert_null(ret);
    }
    assert_int_equal(rejects_count(rj), 2000);
    assert_true(rejects_close(&rj, &err));
    objs = read_lines(p, &n, &texts);
    assert_int_equal(n, 2000);
    for (size_t i = 0; i < n; i++) {
        int line = (int)json_integer_value(json_object_get(objs[i], "line"));
        char want[200];

        snprintf(want, sizeof want, "thread %d row %d %0120d", line / 1000, line % 1000,
                 line % 1000);
        assert_string_equal(str_member(objs[i], "raw", NULL), want);
        /* each thread's rows in its own order */
        assert_int_equal(line % 1000, seen[line / 1000]++);
    }
    free_lines(objs, texts, n);
    free(p);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lazy_and_append),
        cmocka_unit_test(test_raw_texts),
        cmocka_unit_test(test_base64_lengths),
        cmocka_unit_test(test_reason_and_file_not_utf8),
        cmocka_unit_test(test_big_raw),
        cmocka_unit_test(test_torn_tail),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_threads),
    };

    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
