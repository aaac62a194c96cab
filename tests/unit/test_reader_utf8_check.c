/*
 * test_reader_utf8_check.c - which readers leave the UTF-8/NUL check of their
 * records to validation (reader_records_need_utf8_check): the CSV reader
 * does, the NDJSON and profile readers check every line themselves.  The
 * pipeline asks the reader instead of knowing the formats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers.h"
#include "input/profile.h"

typedef struct reader_case {
    const char *name;        /* the file written */
    const char *text;        /* its content */
    input_format format;
    const char *profile;     /* a built-in profile, or NULL */
    bool needs_check;
} reader_case;

static const reader_case cases[] = {
    {"a.csv", "tenant_id,channel,out_trade_no,callback_type,received_at,payload\n",
     FORMAT_CSV, NULL, true},
    {"a.ndjson", "{\"tenant_id\": \"t\"}\n", FORMAT_NDJSON, NULL, false},
    {"b.csv", "reporting_category,charge_id,created_utc,source_id\n", FORMAT_CSV, "stripe-balance", false},
};

static void test_which_readers_leave_the_check(void **state)
{
    const char *dir = test_dir;

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const reader_case *c = &cases[i];
        char *path = path_in(dir, c->name);
        buf err = BUF_INIT;
        profile *pf = NULL;
        reader_options opt = {.format = c->format, .delimiter = ','};

        write_bytes(path, c->text, strlen(c->text));
        if (c->profile != NULL) {
            pf = profile_builtin(c->profile, &err);
            assert_non_null(pf);
            opt.profile = pf;
        }
        source *src = source_open(path, &err);
        assert_non_null(src);
        reader *r = reader_open(src, path, &opt, &err);
        if (r == NULL)
            fail_msg("%s: %s", c->name, buf_cstr(&err));
        if (reader_records_need_utf8_check(r) != c->needs_check)
            fail_msg("%s%s%s: reader_records_need_utf8_check is %d, expected %d", c->name,
                     c->profile ? " with profile " : "", c->profile ? c->profile : "",
                     !c->needs_check, c->needs_check);
        reader_close(&r);
        source_close(&src);
        profile_free(&pf);
        buf_free(&err);
        free(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_which_readers_leave_the_check),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
