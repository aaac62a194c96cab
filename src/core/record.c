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
