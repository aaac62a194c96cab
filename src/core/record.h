/*
 * record.h - the columns idemload knows (the enum and names of the column
 * table, core/columns.h), and one record as a reader hands it over: raw
 * field texts, not yet validated.
 *
 * Pointers in a raw_record point into the reader's buffers and stay valid
 * only until the next call of reader_next() on the same reader.
 */
#ifndef IDEMLOAD_RECORD_H
#define IDEMLOAD_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/columns.h"
#include "core/json_kind.h"

/* COL_TENANT_ID .. COL_RECEIVED_AT, in the order of the column table. */
#define COLUMN_ENUM_1(ID, name, member, kind, key, pos, dflt, A, B) COL_##ID,
typedef enum column { IDEMLOAD_COLUMNS(COLUMN_ENUM_1, ~, ~) COL_COUNT } column;

/* The column's name as files and --set spell it. */
const char *column_name(column c);
/* The column named name[0..len) (case-insensitive), or -1. */
int column_lookup(const char *name, size_t len);
/* Columns a file must provide (from its header, members or --set). */
bool column_required(column c);

typedef enum field_kind {
    FIELD_ABSENT,   /* the column is not in the record */
    FIELD_NULL,     /* CSV: empty unquoted field; NDJSON: null */
    FIELD_TEXT,     /* plain text (CSV field, decoded JSON string) */
    FIELD_JSON      /* NDJSON: the exact, already validated JSON text of a
                       non-string value (number, bool, object, array) or of a
                       string with its quotes (for payload) */
} field_kind;

typedef struct field {
    field_kind kind;
    json_kind jkind;      /* for FIELD_JSON: the value's kind */
    const char *text;     /* FIELD_TEXT: text; FIELD_JSON: JSON text */
    size_t len;
    const char *json;     /* NDJSON strings: the quoted JSON text too, so a
                             string payload can be stored as written */
    size_t json_len;
} field;

typedef struct raw_record {
    uint64_t line;        /* 1-based line where the record starts */
    const char *raw;      /* the record's original text, without its final
                             line break; raw_len bytes, not always followed
                             by a NUL (the CSV fast path points into its
                             read window): never print it with %s */
    size_t raw_len;
    const char *orig;     /* non-NULL when raw is a conversion (a GBK bill's
                             line in UTF-8): the bytes as the file wrote
                             them, orig_len of them, for a reject's
                             raw_base64; same lifetime as raw */
    size_t orig_len;
    const char *error;    /* non-NULL: the reader could not split this record
                             into fields; the reason to reject it with */
    bool skipped;         /* a channel profile skips this row on purpose (a
                             Stripe payout): counted as rows_skipped, neither
                             rejected nor loaded */
    field fields[COL_COUNT];
} raw_record;

#endif
