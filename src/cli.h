/*
 * cli.h - the command line: a table of commands and options, parsed into a
 * config, with --help generated from the same table.  Never exits and
 * never prints except through the functions named for it.
 */
#ifndef IDEMLOAD_CLI_H
#define IDEMLOAD_CLI_H

#include <stdio.h>

#include "buf.h"
#include "config.h"

typedef enum cli_result {
    CLI_RUN,        /* cfg is ready to run */
    CLI_HELP,       /* --help asked for (cfg->cmd says for what, or none) */
    CLI_VERSION,    /* --version asked for */
    CLI_ERROR       /* usage error: the one-line message is in *err */
} cli_result;

cli_result cli_parse(int argc, char **argv, config *cfg, buf *err);

/* Writes the help of cmd (CMD_NONE: the overview) to fp. */
void cli_print_help(FILE *fp, command cmd);

/* The command's name as typed. */
const char *cli_command_name(command cmd);

#endif
