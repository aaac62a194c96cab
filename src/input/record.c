/*
 * record.c - the column table: the names of the columns idemload knows, and
 * which of them a file must provide (see record.h).
 */
#include "input/record.h"

#include <string.h>
#include <strings.h>

static const char *const column_names[COL_COUNT] = {
    [COL_TENANT_ID] = "tenant_id",
    [COL_CHANNEL] = "channel",
    [COL_OUT_TRADE_NO] = "out_trade_no",
    [COL_CALLBACK_TYPE] = "callback_type",
    [COL_STATUS] = "status",
    [COL_PAYLOAD] = "payload",
    [COL_RECEIVED_AT] = "received_at",
};

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
