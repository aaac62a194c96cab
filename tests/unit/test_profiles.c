/*
 * test_profiles.c - the parts of channel-bill reading that are pure code:
 * time zones (fixed offsets and the tz database, DST gaps and overlaps,
 * names refused), GBK conversion, the zip member stream (through a source,
 * from a file: members stored and deflated, summary skipped, two details,
 * encryption, a bad CRC, a cut archive), and the profile file parser.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers.h"
#include <jansson.h>
#include "input/profile.h"
#include "input/profile_settle.h"
#include "input/profiles_json.h"
#include "input/source.h"
#include "input/transcode.h"
#include "rules/timestamp.h"
#include "rules/timezone.h"

/* ---- time zones -------------------------------------------------------- */

/* The offset (seconds) for a wall-clock "YYYY-MM-DD HH:MM:SS" in zone. */
static int32_t offset_for(const char *zone, const char *local)
{
    tz_zone z;
    buf err = BUF_INIT;
    if (!tz_resolve(zone, &z, &err))
        fail_msg("tz_resolve %s: %s", zone, buf_cstr(&err));
    char text[64];
    snprintf(text, sizeof text, "%sZ", local);
    int64_t us;
    const char *why;
    assert_true(ts_parse(text, strlen(text), &us, &why));
    int32_t off = tz_offset_at_local(&z, us / 1000000);
    tz_free(&z);
    buf_free(&err);
    return off;
}

static void test_fixed_offsets(void **state)
{
    (void)state;
    assert_int_equal(offset_for("+08:00", "2024-05-01 10:00:00"), 8 * 3600);
    assert_int_equal(offset_for("+0800", "2024-05-01 10:00:00"), 8 * 3600);
    assert_int_equal(offset_for("+08", "2024-05-01 10:00:00"), 8 * 3600);
    assert_int_equal(offset_for("-05:30", "2024-05-01 10:00:00"), -(5 * 3600 + 1800));
    assert_int_equal(offset_for("Z", "2024-05-01 10:00:00"), 0);
    assert_int_equal(offset_for("UTC", "2024-05-01 10:00:00"), 0);
    char out[8];
    tz_format_offset(-(5 * 3600 + 1800), out);
    assert_string_equal(out, "-05:30");
    tz_format_offset(8 * 3600, out);
    assert_string_equal(out, "+08:00");
}

static void test_iana_zones(void **state)
{
    (void)state;
    /* China: +08:00 now, but +09:00 in the summers of 1986-1991. */
    assert_int_equal(offset_for("Asia/Shanghai", "2024-05-01 10:00:00"), 8 * 3600);
    assert_int_equal(offset_for("Asia/Shanghai", "1988-07-01 12:00:00"), 9 * 3600);
    /* Los Angeles: PST and PDT. */
    assert_int_equal(offset_for("America/Los_Angeles", "2024-01-15 12:00:00"), -8 * 3600);
    assert_int_equal(offset_for("America/Los_Angeles", "2024-07-01 12:00:00"), -7 * 3600);
    /* The minute before and after the change (2024-03-10 02:00 PST). */
    assert_int_equal(offset_for("America/Los_Angeles", "2024-03-10 01:59:00"), -8 * 3600);
    assert_int_equal(offset_for("America/Los_Angeles", "2024-03-10 03:00:00"), -7 * 3600);
    /* PostgreSQL's rule (its docs, B.2 "Handling of Invalid or Ambiguous
     * Timestamps"; checked against the server in tests/db/test_hostile.sh):
     * an ambiguous time takes the offset after the fall-back change, a time
     * in the spring-forward gap the offset before it.  Berlin's overlap
     * (2024-10-27 02:30 happens twice): CET, +01:00. */
    assert_int_equal(offset_for("Europe/Berlin", "2024-10-27 02:30:00"), 1 * 3600);
    assert_int_equal(offset_for("Europe/Berlin", "2024-10-27 01:59:59"), 2 * 3600);
    assert_int_equal(offset_for("Europe/Berlin", "2024-10-27 03:30:00"), 1 * 3600);
    /* New York: 2026-03-08 02:30 does not exist: EST (-05:00), 07:30Z; the
     * 01:30 of 2026-11-01 happens twice: EST again, 06:30Z. */
    assert_int_equal(offset_for("America/New_York", "2026-03-08 02:30:00"), -5 * 3600);
    assert_int_equal(offset_for("America/New_York", "2026-03-08 03:00:00"), -4 * 3600);
    assert_int_equal(offset_for("America/New_York", "2026-11-01 01:30:00"), -5 * 3600);
    assert_int_equal(offset_for("America/New_York", "2026-11-01 00:59:59"), -4 * 3600);
    /* Berlin's gap (2024-03-31 02:30 does not exist): CET, before it. */
    assert_int_equal(offset_for("Europe/Berlin", "2024-03-31 02:30:00"), 1 * 3600);
    /* TZ is left as it was. */
    assert_null(getenv("TZ"));
}

static void test_zones_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"Mars/Olympus", "../../etc/passwd", "/etc/localtime",
                                      "+16:00", "+08:60", "+8", "08:00", "Asia/Shanghai ", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tz_zone z;
        buf err = BUF_INIT;
        if (tz_resolve(bad[i], &z, &err))
            fail_msg("'%s' was accepted", bad[i]);
        assert_true(err.len > 0);
        buf_free(&err);
    }
}

/* ---- GBK --------------------------------------------------------------- */

static void test_gbk(void **state)
{
    (void)state;
    buf err = BUF_INIT, out = BUF_INIT;
    transcoder *t = transcoder_open("GBK", &err);
    assert_non_null(t);
    size_t bad = 99;
    /* 汇总 in GBK */
    assert_int_equal(transcoder_run(t, "a\xbb\xe3\xd7\xdc" "b", 6, &out, &bad), 1);
    assert_string_equal(buf_cstr(&out), "a\xe6\xb1\x87\xe6\x80\xbb" "b");
    /* 0x81 0x20: a lead byte without a valid trail byte */
    buf_clear(&out);
    assert_int_equal(transcoder_run(t, "ab\x81 cd", 6, &out, &bad), 0);
    assert_int_equal(bad, 2);
    /* a lead byte cut off at the end */
    buf_clear(&out);
    assert_int_equal(transcoder_run(t, "\xbb\xe3\xd7", 3, &out, &bad), 0);
    assert_int_equal(bad, 2);
    /* the converter recovers for the next line */
    buf_clear(&out);
    assert_int_equal(transcoder_run(t, "\xd7\xdc", 2, &out, &bad), 1);
    assert_string_equal(buf_cstr(&out), "\xe6\x80\xbb");
    /* long input: the output buffer grows */
    char big[3000];
    for (size_t i = 0; i < sizeof big; i += 2)
        memcpy(big + i, "\xbb\xe3", 2);
    buf_clear(&out);
    assert_int_equal(transcoder_run(t, big, sizeof big, &out, &bad), 1);
    assert_int_equal(out.len, sizeof big / 2 * 3);
    transcoder_close(&t);
    assert_null(t);
    buf_free(&err);
    buf_free(&out);
}

/* ---- zip ----------------------------------------------------------------- */

typedef struct zmember {
    const char *name;
    const char *data;
    int method;        /* 0 stored, 8 deflate */
    bool descriptor;
    bool encrypted;
    bool bad_crc;
} zmember;

static void put16(buf *b, unsigned v)
{
    unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    buf_append(b, x, 2);
}

static void put32(buf *b, uint32_t v)
{
    put16(b, v & 0xffff);
    put16(b, v >> 16);
}

/* A zip of the members, written front to back; cut: keep only that many
 * bytes (0: all). */
static void write_zip(const char *path, const zmember *m, size_t n, size_t cut)
{
    buf z = BUF_INIT, cd = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(m[i].data);
        unsigned char body[4096];
        size_t blen = len;
        if (m[i].method == 8) {
            z_stream s;
            memset(&s, 0, sizeof s);
            assert_int_equal(deflateInit2(&s, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
            s.next_in = (Bytef *)m[i].data;
            s.avail_in = (uInt)len;
            s.next_out = body;
            s.avail_out = sizeof body;
            assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
            blen = sizeof body - s.avail_out;
            deflateEnd(&s);
        } else {
            memcpy(body, m[i].data, len);
        }
        uint32_t crc = (uint32_t)crc32(0, (const Bytef *)m[i].data, (uInt)len);
        if (m[i].bad_crc)
            crc ^= 1;
        unsigned flags = (m[i].descriptor ? 8 : 0) | (m[i].encrypted ? 1 : 0);
        size_t off = z.len;
        put32(&z, 0x04034b50);
        put16(&z, 20);
        put16(&z, flags);
        put16(&z, (unsigned)m[i].method);
        put32(&z, 0);
        put32(&z, m[i].descriptor ? 0 : crc);
        put32(&z, m[i].descriptor ? 0 : (uint32_t)blen);
        put32(&z, m[i].descriptor ? 0 : (uint32_t)len);
        put16(&z, (unsigned)strlen(m[i].name));
        put16(&z, 0);
        buf_append_str(&z, m[i].name);
        buf_append(&z, body, blen);
        if (m[i].descriptor) {
            put32(&z, 0x08074b50);
            put32(&z, crc);
            put32(&z, (uint32_t)blen);
            put32(&z, (uint32_t)len);
        }
        put32(&cd, 0x02014b50);
        put16(&cd, 20);
        put16(&cd, 20);
        put16(&cd, flags);
        put16(&cd, (unsigned)m[i].method);
        put32(&cd, 0);
        put32(&cd, crc);
        put32(&cd, (uint32_t)blen);
        put32(&cd, (uint32_t)len);
        put16(&cd, (unsigned)strlen(m[i].name));
        for (int k = 0; k < 4; k++)
            put16(&cd, 0);
        put32(&cd, 0);
        put32(&cd, (uint32_t)off);
        buf_append_str(&cd, m[i].name);
    }
    size_t cd_off = z.len;
    buf_append(&z, cd.data, cd.len);
    put32(&z, 0x06054b50);
    put16(&z, 0);
    put16(&z, 0);
    put16(&z, (unsigned)n);
    put16(&z, (unsigned)n);
    put32(&z, (uint32_t)cd.len);
    put32(&z, (uint32_t)cd_off);
    put16(&z, 0);
    write_bytes(path, z.data, cut ? cut : z.len);
    buf_free(&z);
    buf_free(&cd);
}

/* Reads the whole source: the bytes, or NULL with the error in *err. */
static char *read_source(const char *path, buf *err)
{
    source *s = source_open(path, err);
    assert_non_null(s);
    buf all = BUF_INIT;
    char tmp[7]; /* small reads: member and block edges inside the data */
    ssize_t n;
    while ((n = source_read(s, tmp, sizeof tmp)) > 0)
        buf_append(&all, tmp, (size_t)n);
    char *res = NULL;
    if (n == 0)
        res = strdup(buf_cstr(&all));
    else
        buf_append_str(err, source_error(s));
    source_close(&s);
    buf_free(&all);
    return res;
}

#define SUMMARY_GBK "bill_\xd2\xb5\xce\xf1\xc3\xf7\xcf\xb8(\xbb\xe3\xd7\xdc).csv" /* 业务明细(汇总) */
#define DETAIL "a,b\nDETAIL ROW 1\nDETAIL ROW 2 with some more text to deflate deflate deflate\n"

static void test_zip_members(void **state)
{
    (void)state;
    char *path = path_in(test_dir, "bill.zip");
    buf err = BUF_INIT;
    static const int methods[] = {0, 8};
    for (int i = 0; i < 2; i++)
        for (int d = 0; d < 2; d++) {
            if (methods[i] == 0 && d)
                continue; /* refused: tested below */
            zmember m[3] = {{"dir/", "", 0, false, false, false},
                            {SUMMARY_GBK, "summary,1\n", methods[i], d, false, false},
                            {"bill_detail.csv", DETAIL, methods[i], d, false, false}};
            write_zip(path, m, 3, 0);
            char *got = read_source(path, &err);
            if (!got)
                fail_msg("method %d descriptor %d: %s", methods[i], d, buf_cstr(&err));
            assert_string_equal(got, DETAIL);
            free(got);
        }
    /* refusals, each with its message */
    struct {
        zmember m[2];
        size_t n;
        const char *msg;
    } bad[] = {
        {{{"a.csv", DETAIL, 8, false, false, false}, {"b.csv", DETAIL, 8, false, false, false}}, 2,
         "more than one detail member (\"a.csv\" and \"b.csv\")"},
        {{{SUMMARY_GBK, "x\n", 8, false, false, false}}, 1, "no detail member"},
        {{{"a.csv", DETAIL, 8, false, true, false}}, 1, "is encrypted"},
        {{{"a.csv", DETAIL, 8, false, false, true}}, 1, "fails its CRC-32 check"},
        {{{"a.csv", DETAIL, 8, true, false, true}}, 1, "fails its CRC-32 check"},
        {{{"a.csv", DETAIL, 0, true, false, false}}, 1, "stored with a data descriptor"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        write_zip(path, bad[k].m, bad[k].n, 0);
        buf_clear(&err);
        char *got = read_source(path, &err);
        assert_null(got);
        if (!strstr(buf_cstr(&err), bad[k].msg))
            fail_msg("case %zu: '%s' lacks '%s'", k, buf_cstr(&err), bad[k].msg);
    }
    /* cut anywhere: always an error, never a quiet end */
    zmember one[2] = {{SUMMARY_GBK, "summary,1\n", 8, false, false, false},
                      {"bill_detail.csv", DETAIL, 8, false, false, false}};
    write_zip(path, one, 2, 0);
    size_t full;
    free(read_bytes(path, &full));
    for (size_t cut = 4; cut < full - 22; cut += 3) {
        write_zip(path, one, 2, cut);
        buf_clear(&err);
        char *got = read_source(path, &err);
        if (got)
            fail_msg("cut at %zu of %zu read as complete: [%s]", cut, full, got);
        assert_true(err.len > 0);
    }
    buf_free(&err);
    free(path);
}

/* ---- profile files --------------------------------------------------------- */

/* The built-in profiles are the JSON files of src/input/profiles/, one per
 * name `profiles` lists and none more; each file names itself, is the text
 * profile_builtin_source gives, and parses. */
static void test_builtins_are_the_files(void **state)
{
    (void)state;
    size_t names = 0, files = 0;
    for (const char *const *n = profile_builtin_names; *n; n++) {
        names++;
        const profile_json *f = profile_json_files;
        while (f->name && strcmp(f->name, *n) != 0)
            f++;
        assert_non_null(f->name);
        assert_ptr_equal(profile_builtin_source(*n), f->text);
        assert_int_equal(strlen(f->text), f->len);
        json_error_t je;
        json_t *root = json_loads(f->text, 0, &je);
        assert_non_null(root);
        assert_string_equal(json_string_value(json_object_get(root, "name")), *n);
        json_decref(root);
        buf err = BUF_INIT;
        profile *p = profile_builtin(*n, &err);
        assert_non_null(p);
        profile_free(&p);
        buf_free(&err);
    }
    for (const profile_json *f = profile_json_files; f->name; f++)
        files++;
    assert_int_equal(names, files);
}

static void test_builtins_round_trip(void **state)
{
    (void)state;
    for (const char *const *n = profile_builtin_names; *n; n++) {
        buf err = BUF_INIT, a = BUF_INIT, b = BUF_INIT;
        profile *p = profile_builtin(*n, &err);
        assert_non_null(p);
        assert_string_equal(p->name, *n);
        /* A profile only settle reads (wechat-fund) maps no key. */
        assert_true(profile_settle_only(p) ||
                    (p->col[COL_OUT_TRADE_NO].set && p->col[COL_CALLBACK_TYPE].set &&
                     p->col[COL_RECEIVED_AT].set));
        assert_true(p->col[COL_CHANNEL].set);
        assert_false(p->col[COL_TENANT_ID].set); /* from --set */
        assert_true(profile_to_json(p, &a));
        profile *q = profile_parse(a.data, a.len, "printed", &err);
        assert_non_null(q);
        assert_true(profile_to_json(q, &b));
        assert_string_equal(buf_cstr(&a), buf_cstr(&b));
        profile_free(&p);
        profile_free(&q);
        assert_null(p);
        buf_free(&err);
        buf_free(&a);
        buf_free(&b);
    }
}

/* `profiles NAME` prints the built-in itself: the printed file and the
 * built-in's own text are equal as JSON, member for member (a member the
 * printer drops, such as a footer's "optional", changes what a printed
 * profile does). */
static void test_builtins_printed_whole(void **state)
{
    (void)state;
    for (const char *const *n = profile_builtin_names; *n; n++) {
        buf err = BUF_INIT, a = BUF_INIT;
        profile *p = profile_builtin(*n, &err);
        assert_non_null(p);
        assert_true(profile_to_json(p, &a));
        json_error_t je;
        json_t *src = json_loads(profile_builtin_source(*n), 0, &je);
        json_t *printed = json_loadb(a.data, a.len, 0, &je);
        assert_non_null(src);
        assert_non_null(printed);
        if (!json_equal(src, printed)) {
            char *x = json_dumps(src, JSON_SORT_KEYS | JSON_COMPACT);
            char *y = json_dumps(printed, JSON_SORT_KEYS | JSON_COMPACT);
            print_error("%s built in:\n%s\nprinted:\n%s\n", *n, x, y);
            free(x);
            free(y);
            fail_msg("profiles %s prints a profile that differs from the built-in one", *n);
        }
        json_decref(src);
        json_decref(printed);
        profile_free(&p);
        buf_free(&err);
        buf_free(&a);
    }
    assert_null(profile_builtin_source("nope"));
}

static void test_profile_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *msg;
    } cases[] = {
        {"[]", "a profile is a JSON object"},
        {"{\"columns\": {}}", "member \"name\" is required"},
        {"{\"name\": \"x\", \"colums\": {}}", "member \"colums\" is not a member"},
        {"{\"name\": \"x\", \"columns\": {\"out_trade_no\": {\"from\": \"a\"}, \"callback_type\": "
         "{\"value\": \"pay\"}}}", "member \"columns.received_at\" is required"},
        {"{\"name\": \"x\", \"columns\": {\"out_trade_no\": {\"from\": \"a\", \"value\": \"b\"}}}",
         "has both \"from\" and \"value\""},
        {"{\"name\": \"x\", \"columns\": {\"out_trade_no\": {\"map\": {\"a\": \"b\"}}}}",
         "member \"columns.out_trade_no.map\" needs \"from\""},
        {"{\"name\": \"x\", \"columns\": {\"status\": {\"value\": \"x}y\"}}}",
         "member \"columns.status.value\" has a '}' without its '{'"},
        {"{\"name\": \"x\", \"columns\": {\"merchant\": {\"value\": \"1\"}}}",
         "member \"columns.merchant\" is not a column idemload fills"},
        {"{\"name\": \"x\", \"delimiter\": \"ab\", \"columns\": {}}", "member \"delimiter\""},
        {"{\"name\": \"x\", \"trailer\": {\"count_column\": \"n\"}, \"columns\": {}}",
         "needs framing.end_prefix"},
        {"{\"name\": \"x\", \"cleanup\": {\"trim\": \"yes\"}, \"columns\": {}}",
         "member \"cleanup.trim\" must be true or false"},
        {"{\"name\": \"x\", \"name\": \"y\", \"columns\": {}}", "not a valid profile file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf err = BUF_INIT;
        profile *p = profile_parse(cases[i].json, strlen(cases[i].json), "p.json", &err);
        if (p)
            fail_msg("case %zu accepted", i);
        if (!strstr(buf_cstr(&err), cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, buf_cstr(&err), cases[i].msg);
        buf_free(&err);
    }
}

static void test_profile_overrides(void **state)
{
    (void)state;
    buf err = BUF_INIT;
    profile *p = profile_builtin("wechat-trade", &err);
    assert_non_null(p);
    assert_true(profile_has_trailer(p));
    assert_int_equal(p->encoding, PROFILE_UTF8);
    assert_true(profile_override(p, "gbk", "Asia/Shanghai", &err));
    assert_int_equal(p->encoding, PROFILE_GBK);
    assert_false(p->tz.fixed);
    assert_string_equal(p->timezone, "Asia/Shanghai");
    assert_false(profile_override(p, "latin1", NULL, &err));
    assert_non_null(strstr(buf_cstr(&err), "--encoding must be utf-8 or gbk"));
    buf_clear(&err);
    assert_false(profile_override(p, NULL, "Nowhere/Land", &err));
    assert_string_equal(p->timezone, "Asia/Shanghai"); /* unchanged */
    profile_free(&p);
    p = profile_builtin("stripe-balance", &err);
    assert_false(profile_has_trailer(p));
    profile_free(&p);
    buf_free(&err);
}

/* The kinds a WeChat bill cannot list, by the rule its header matched,
 * under the names --kind gives them (SPEC.md, "Reconcile for finance"). */
static void test_excluded_kinds(void **state)
{
    (void)state;
    buf err = BUF_INIT;
    profile *p = profile_builtin("wechat-trade", &err);
    assert_non_null(p);
    assert_int_equal(p->n_covers, 3);
    char **k = NULL;
    size_t n = 0;
    bool oom = false;
    assert_false(profile_excluded_kinds(p, 0, &k, &n, &oom)); /* no header matched: none */
    assert_null(k);
    assert_false(profile_excluded_kinds(p, 1u << 1, &k, &n, &oom)); /* ALL: none */
    assert_true(profile_excluded_kinds(p, 1u << 0, &k, &n, &oom)); /* REFUND */
    assert_int_equal(n, 2);
    assert_string_equal(k[0], "pay");
    assert_string_equal(k[1], "revoked");
    for (size_t i = 0; i < n; i++)
        free(k[i]);
    free(k);
    assert_true(profile_add_kind_rename(p, "refund", "refund_done", &err));
    assert_true(profile_excluded_kinds(p, 1u << 2, &k, &n, &oom)); /* SUCCESS */
    assert_int_equal(n, 2);
    assert_string_equal(k[0], "refund_done");
    assert_string_equal(k[1], "revoked");
    for (size_t i = 0; i < n; i++)
        free(k[i]);
    free(k);
    assert_false(oom);
    profile_free(&p);
    p = profile_builtin("stripe-balance", &err); /* one rule: nothing left out */
    assert_false(profile_excluded_kinds(p, 1u << 0, &k, &n, &oom));
    profile_free(&p);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_are_the_files),
        cmocka_unit_test(test_fixed_offsets),
        cmocka_unit_test(test_iana_zones),
        cmocka_unit_test(test_zones_refused),
        cmocka_unit_test(test_gbk),
        cmocka_unit_test_setup_teardown(test_zip_members, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test(test_builtins_round_trip),
        cmocka_unit_test(test_builtins_printed_whole),
        cmocka_unit_test(test_profile_refusals),
        cmocka_unit_test(test_profile_overrides),
        cmocka_unit_test(test_excluded_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
