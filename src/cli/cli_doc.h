/*
 * cli_doc.h - the man page idemload(1) and the bash completion, written
 * from the command and option tables of cli.c, the same tables --help
 * prints and the parser accepts: neither can list an option --help does
 * not, or miss one.  Run at build time by doc/gendoc.c; the command
 * itself never calls it.
 */
#ifndef IDEMLOAD_CLI_DOC_H
#define IDEMLOAD_CLI_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/buf.h"

/*
 * Copies the template text tmpl to out, replacing each @NAME@ with what the
 * tables say:
 *   @VERSION@                     IDEMLOAD_VERSION
 *   @NAME@ for each "NAME=VALUE" of vars (n_vars of them): VALUE
 *   @MAN_SYNOPSIS@, @MAN_COMMANDS@, @MAN_EXIT_STATUS@    roff for idemload(1)
 *   @BASH_COMMANDS@               the command names, space-separated
 *   @BASH_COMMAND_OPTIONS@        case arms: command) options of the command
 *   @BASH_OPTION_ARGUMENTS@       case arms: option) how its value completes
 * A placeholder is '@', capitals or underscores, '@'; any other '@' is
 * text.  An unknown placeholder or a write error returns false with the
 * reason in *err (what was written so far stays in out).
 */
bool cli_doc_expand(FILE *out, const char *tmpl, const char *const *vars, size_t n_vars,
                    buf *err);

#endif
