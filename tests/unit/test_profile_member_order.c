/*
 * test_profile_member_order.c - a profile file wrong in two members is
 * refused for the one the parser reaches first (name, description, the
 * timezone's text, encoding, delimiter, the zone itself, framing, cleanup,
 * trailer, columns), and a member that depends on another (trailer on
 * framing) sees it parsed.  test_profiles.c refuses one fault at a time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "input/profile.h"

static const struct {
    const char *json;
    const char *msg;
} cases[] = {
    {"{\"description\": 5, \"columns\": {}}", "member \"name\" is required"},
    {"{\"name\": \"x\", \"description\": 5, \"timezone\": 5, \"columns\": {}}",
     "member \"description\" must be a string"},
    {"{\"name\": \"x\", \"timezone\": 5, \"encoding\": \"latin1\", \"columns\": {}}",
     "member \"timezone\" must be a string"},
    {"{\"name\": \"x\", \"encoding\": \"latin1\", \"delimiter\": \"ab\", \"columns\": {}}",
     "member \"encoding\" must be"},
    {"{\"name\": \"x\", \"delimiter\": \"ab\", \"timezone\": \"Mars/Olympus\", \"columns\": {}}",
     "member \"delimiter\" must be one character"},
    {"{\"name\": \"x\", \"timezone\": \"Mars/Olympus\", \"framing\": 5, \"columns\": {}}",
     "member \"timezone\" "},
    {"{\"name\": \"x\", \"framing\": 5, \"cleanup\": 5, \"columns\": {}}",
     "member \"framing\" must be an object"},
    {"{\"name\": \"x\", \"framing\": {\"row_type\": {\"header\": \"CH\"}}, \"cleanup\": 5, "
     "\"columns\": {}}", "member \"framing.row_type.data\" is required"},
    {"{\"name\": \"x\", \"cleanup\": 5, \"trailer\": 5, \"columns\": {}}",
     "member \"cleanup\" must be an object"},
    {"{\"name\": \"x\", \"trailer\": 5, \"columns\": 5}", "member \"trailer\" must be an object"},
    {"{\"name\": \"x\", \"framing\": {\"end_prefix\": \"T\"}, \"trailer\": {\"count_column\": "
     "\"n\"}, \"columns\": {}}", "member \"columns.out_trade_no\" is required"},
    {"{\"name\": \"x\", \"columns\": 5}", "member \"columns\" must be an object"},
};

static void test_first_fault_wins(void **state)
{
    (void)state;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_fault_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
