/*
 * cli.h - the command line: a table of commands and options, parsed into a
 * config, with --help generated from the same table.  Never exits and
 * never prints except through the functions named for it.
 */
#ifndef IDEMLOAD_CLI_H
#define IDEMLOAD_CLI_H

#include <stdio.h>

#include "util/buf.h"
#include "core/config.h"

typedef enum cli_result {
    CLI_RUN,        /* cfg is ready to run */
    CLI_HELP,       /* --help asked for (cfg->cmd says for what, or none) */
    CLI_VERSION,    /* --version asked for */
    CLI_ERROR       /* usage error: the one-line message is in *err */
} cli_result;

cli_result cli_parse(int argc, char **argv, config *cfg, buf *err);

/* Writes the help of cmd (CMD_NONE: the overview) to fp. */
void cli_print_help(FILE *fp, command cmd);

/* The two tables, read-only, for the man page and the bash completion
 * (cli_doc.c), so that they list exactly what --help lists. */
typedef struct cli_command_info {
    command cmd;
    const char *name;
    const char *args;       /* "[OPTIONS] FILE..." */
    const char *summary;
} cli_command_info;

typedef struct cli_option_info {
    char short_name;        /* 0: none */
    const char *long_name;
    const char *arg;        /* NULL: a flag */
    const char *help;
} cli_option_info;

/* The i-th command / option, in --help's order; false past the last. */
bool cli_command_at(size_t i, cli_command_info *out);
bool cli_option_at(size_t i, cli_option_info *out);
/* Whether command cmd takes the i-th option. */
bool cli_option_applies(size_t i, command cmd);

#endif
