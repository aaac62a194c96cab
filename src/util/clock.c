/*
 * clock.c - monotonic time (see clock.h).
 */
#include "util/clock.h"

#include <stdlib.h>
#include <time.h>

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *clock_test_now(void)
{
    const char *v = getenv("IDEMLOAD_NOW");
    return v && *v ? v : NULL;
}
