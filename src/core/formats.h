/*
 * formats.h - the input formats, one table: the enum every stage names a
 * format by (config, the reader's dispatch, the report), and the names and
 * file name endings that choose one.
 *
 * Pure vocabulary: nothing here reads a byte.  The reader behind each
 * format is named in its row so that input/reader.c dispatches from this
 * same table; only reader.c expands that column.
 */
#ifndef IDEMLOAD_FORMATS_H
#define IDEMLOAD_FORMATS_H

#include <stdbool.h>

#include "util/buf.h"

/*
 * The input formats, one row each: the enum's name, the name --format takes
 * and the report prints, another name --format accepts ("" for none), and
 * the file name endings that choose it, blank-separated (each optionally
 * followed by .gz), and its reader (input/reader.h).  The enum, --format's
 * choices and help, the name checks and the dispatch (input/reader.c) all
 * come from this table; a new format is a row here and its reader.
 */
#define INPUT_FORMATS(X)                                         \
    X(CSV, "csv", "", ".csv", csv_reader_open)                   \
    X(NDJSON, "ndjson", "jsonl", ".ndjson .jsonl", ndjson_reader_open)

typedef enum input_format {
    FORMAT_AUTO,    /* not chosen: from each file's name */
#define INPUT_FORMAT_ENUM(id, name, alias, endings, open) FORMAT_##id,
    INPUT_FORMATS(INPUT_FORMAT_ENUM)
#undef INPUT_FORMAT_ENUM
} input_format;

/* For option tables: --format's choices ("csv|ndjson", a constant
 * pointer), and the name endings that choose a format as a string literal
 * with a blank before each (" .csv .ndjson .jsonl"). */
#define INPUT_FORMAT_CHOICE(id, name, alias, endings, open) "|" name
#define INPUT_FORMAT_CHOICES (&(INPUT_FORMATS(INPUT_FORMAT_CHOICE))[1])
#define INPUT_FORMAT_ENDING(id, name, alias, endings, open) " " endings
#define INPUT_FORMAT_ENDINGS INPUT_FORMATS(INPUT_FORMAT_ENDING)

/* The format a name ending in one of a format's endings (optionally
 * followed by .gz) chooses; FORMAT_AUTO when the name says none. */
input_format format_from_name(const char *path);
/* The format --format NAME means (its name or alias); FORMAT_AUTO when none. */
input_format format_parse(const char *name);
/* Appends the formats' names joined by sep ("csv or ndjson"). */
bool format_names(buf *out, const char *sep);
/* The format's name ("csv"); "unknown" for FORMAT_AUTO. */
const char *format_name(input_format f);
/* Sets err to "WHAT: cannot tell the format from the name; use --format
 * csv|ndjson" (WHAT a path, or "standard input" for "-"). */
void format_unknown(buf *err, const char *path);

#endif
