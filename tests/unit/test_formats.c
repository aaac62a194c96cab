/*
 * test_formats.c - the table of input formats (INPUT_FORMATS, core/formats.h): a
 * name's ending chooses the format (case-insensitive, optionally then
 * .gz), --format takes each format's name and alias, the names print back,
 * and the constants the option table uses say the same as the table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "input/reader.h"

static void test_from_name(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        input_format want;
    } cases[] = {
        {"a.csv", FORMAT_CSV},
        {"a.CSV.GZ", FORMAT_CSV},
        {"dir.ndjson/a.csv.gz", FORMAT_CSV},
        {"a.ndjson", FORMAT_NDJSON},
        {"a.jsonl.gz", FORMAT_NDJSON},
        {"a.json", FORMAT_AUTO},
        {"a.gz", FORMAT_AUTO},
        {"csv", FORMAT_AUTO},
        {"a.csv.gz.bak", FORMAT_AUTO},
        {"-", FORMAT_AUTO},
        {"", FORMAT_AUTO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (format_from_name(cases[i].path) != cases[i].want)
            fail_msg("%s: got %s", cases[i].path, format_name(format_from_name(cases[i].path)));
    }
}

static void test_parse_and_names(void **state)
{
    (void)state;
    assert_int_equal(format_parse("csv"), FORMAT_CSV);
    assert_int_equal(format_parse("ndjson"), FORMAT_NDJSON);
    assert_int_equal(format_parse("jsonl"), FORMAT_NDJSON);
    assert_int_equal(format_parse("CSV"), FORMAT_AUTO);
    assert_int_equal(format_parse(""), FORMAT_AUTO);
    assert_int_equal(format_parse("xml"), FORMAT_AUTO);
    assert_string_equal(format_name(FORMAT_CSV), "csv");
    assert_string_equal(format_name(FORMAT_NDJSON), "ndjson");
    assert_string_equal(format_name(FORMAT_AUTO), "unknown");
    /* Every name parses back to its format. */
    for (int f = FORMAT_CSV; f <= FORMAT_NDJSON; f++)
        assert_int_equal(format_parse(format_name((input_format)f)), f);
    buf b = BUF_INIT;
    assert_true(format_names(&b, " or "));
    assert_string_equal(buf_cstr(&b), "csv or ndjson");
    buf_free(&b);
    assert_string_equal(INPUT_FORMAT_CHOICES, "csv|ndjson");
    assert_string_equal(INPUT_FORMAT_ENDINGS, " .csv .ndjson .jsonl");
}

static void test_unknown_message(void **state)
{
    (void)state;
    buf b = BUF_INIT;
    format_unknown(&b, "-");
    assert_string_equal(buf_cstr(&b),
                        "standard input: cannot tell the format from the name; use --format csv|ndjson");
    buf_clear(&b);
    format_unknown(&b, "x.txt");
    assert_string_equal(buf_cstr(&b),
                        "x.txt: cannot tell the format from the name; use --format csv|ndjson");
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_name),
        cmocka_unit_test(test_parse_and_names),
        cmocka_unit_test(test_unknown_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
