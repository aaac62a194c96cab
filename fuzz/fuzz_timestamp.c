/*
 * fuzz_timestamp.c - libFuzzer target: ts_parse on arbitrary bytes.
 *
 * Checked: a parse never reads past the text (ASan, the input being an
 * exact-size buffer); a failure always gives a reason; an accepted text
 * gives an instant that ts_format writes and ts_parse reads back to the
 * same microsecond (for years 0001..9999, which both accept), also with
 * white space around it; and the result does not depend on what follows
 * the text in memory.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "rules/timestamp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *why = NULL;
    int64_t us = 0;
    bool ok = ts_parse(text, size, &us, &why);

    if (!ok) {
        fuzz_check(why != NULL && why[0] != '\0');
        return 0;
    }
    {
        char out[TS_FORMAT_MAX];
        size_t n = ts_format(us, out);
        int64_t back = 0;

        fuzz_check(n < TS_FORMAT_MAX && out[n] == '\0' && strlen(out) == n);
        /* "YYYY-MM-DD HH:MM:SS.ffffff+00": 29 bytes when the year has four
         * digits and no BC suffix */
        if (n == 29) {
            char padded[TS_FORMAT_MAX + 4];

            if (!ts_parse(out, n, &back, &why))
                fuzz_fail("ts_format output \"%s\" refused: %s", out, why);
            fuzz_check(back == us);
            snprintf(padded, sizeof padded, " \t%s\n", out);
            fuzz_check(ts_parse(padded, strlen(padded), &back, &why) && back == us);
        }
    }
    /* the same bytes followed by junk, parsed as the same length */
    if (size < 256) {
        char copy[264];
        int64_t again = 0;

        memcpy(copy, data, size);
        memcpy(copy + size, "9:+Z.0 ", 7);
        fuzz_check(ts_parse(copy, size, &again, &why) && again == us);
    }
    return 0;
}
