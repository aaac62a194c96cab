/*
 * record.c - the names of the columns idemload knows (from the column
 * table, core/columns.h), and which of them a file must provide (see
 * record.h).
 */
#include "core/record.h"

#include <string.h>
#include <strings.h>

#define COLUMN_NAME_1(ID, name, member, kind, key, pos, dflt, A, B) [COL_##ID] = #name,
static const char *const column_names[COL_COUNT] = {IDEMLOAD_COLUMNS(COLUMN_NAME_1, ~, ~)};

/* What the generators of core/columns.h rely on, checked at build time:
 * the key columns first, the first row FIRST, the first fact FIRST_FACT
 * and no other row either. */
enum { N_KEY = KEY_NCOLUMNS }; /* (not expandable inside IDEMLOAD_COLUMNS) */
#define KEY_FIRST_1(ID, name, member, kind, key, pos, dflt, A, B) \
    COLUMN_IF_##key(_Static_assert((int)COL_##ID < (int)N_KEY, #name ": key columns come first");)
#define POS_AT_FIRST(ID) COL_##ID == 0
#define POS_AT_FIRST_FACT(ID) (int)COL_##ID == (int)N_KEY
#define POS_AT_NEXT(ID) COL_##ID != 0 && (int)COL_##ID != (int)N_KEY
#define POS_1(ID, name, member, kind, key, pos, dflt, A, B) \
    _Static_assert(POS_AT_##pos(ID), #name ": FIRST, FIRST_FACT or NEXT misplaced");
IDEMLOAD_COLUMNS(KEY_FIRST_1, ~, ~)
IDEMLOAD_COLUMNS(POS_1, ~, ~)
_Static_assert(KEY_NCOLUMNS > 0 && KEY_NCOLUMNS < COL_COUNT, "a key and at least one fact");

const char *column_name(column c)
{
    return column_names[c];
}

int column_lookup(const char *name, size_t len)
{
    for (int c = 0; c < COL_COUNT; c++)
        if (strlen(column_names[c]) == len && strncasecmp(column_names[c], name, len) == 0)
            return c;
    return -1;
}

bool column_required(column c)
{
    return c != COL_STATUS;
}
