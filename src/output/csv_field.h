/*
 * csv_field.h - one field of a CSV line (RFC 4180) as idemload's CSV
 * outputs write it: quoted when it holds a delimiter, a quote or a line
 * break, quotes doubled; a text of the data that a spreadsheet would run
 * as a formula guarded by an apostrophe (OWASP's "CSV injection").
 */
#ifndef IDEMLOAD_CSV_FIELD_H
#define IDEMLOAD_CSV_FIELD_H

#include <stdbool.h>

#include "util/buf.h"

/* Appends s (NULL: an empty field) to out, after a comma unless first;
 * text: s is the data's (a key, a name), never our own word or a number,
 * and is guarded when it starts with =, +, -, @, a tab or a carriage
 * return.  False when out of memory. */
bool csv_field_append(buf *out, const char *s, bool first, bool text);

#endif
