/*
 * fuzz_profile.c - libFuzzer target: profile files.  Arbitrary bytes are
 * either refused with a message naming what is wrong, or parsed into a
 * profile that prints as a profile file which parses back and prints
 * identically (what `idemload profiles NAME` promises for the built-ins,
 * held for every profile).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_input.h"
#include "input/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    buf err = BUF_INIT, a = BUF_INIT, b = BUF_INIT;
    profile *p = profile_parse((const char *)data, size, "fuzz.json", &err);
    if (!p) {
        fuzz_check(err.len > 0);
    } else {
        fuzz_check(profile_to_json(p, &a));
        profile *q = profile_parse(a.data, a.len, "printed.json", &err);
        if (!q)
            fuzz_fail("a printed profile does not parse back: %s", buf_cstr(&err));
        fuzz_check(profile_to_json(q, &b));
        fuzz_check(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        profile_free(&q);
        profile_free(&p);
    }
    buf_free(&err);
    buf_free(&a);
    buf_free(&b);
    return 0;
}
