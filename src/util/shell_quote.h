/*
 * shell_quote.h - a word as a POSIX shell reads it back unchanged, for the
 * command lines idemload prints for a user to paste (db/advice.h).
 */
#ifndef IDEMLOAD_SHELL_QUOTE_H
#define IDEMLOAD_SHELL_QUOTE_H

#include <stdbool.h>

#include "util/buf.h"

/*
 * Appends word to out: as it is when it is not empty and holds only
 * [A-Za-z0-9_./:=@-], which no shell treats specially; otherwise in single
 * quotes, each ' written as '\''.  False: out of memory (out may then hold
 * part of the word).
 */
bool shell_quote_append(buf *out, const char *word);

#endif
