/*
 * fault.c - fault injection for the tests (see fault.h).
 */
#include "util/fault.h"

#include <stdlib.h>
#include <string.h>

bool fault_injected(const char *name)
{
    const char *f = getenv("IDEMLOAD_FAULT");
    return f && strcmp(f, name) == 0;
}
