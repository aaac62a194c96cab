/*
 * cli.c - commands and options as tables (see cli.h).
 *
 * Each option names the commands it applies to; the parser refuses an
 * option the command does not take, and --help lists exactly the options
 * the parser accepts for that command.
 */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

#define CMDBIT(c) (1u << (c))
#define ALL_DB (CMDBIT(CMD_IMPORT) | CMDBIT(CMD_CHECK) | CMDBIT(CMD_DEDUPE) | \
                CMDBIT(CMD_CREATE_INDEX) | CMDBIT(CMD_INIT) | CMDBIT(CMD_STATUS))
#define READING (CMDBIT(CMD_IMPORT) | CMDBIT(CMD_VALIDATE))
#define EVERY (ALL_DB | CMDBIT(CMD_VALIDATE))

typedef struct command_def {
    command cmd;
    const char *name;
    const char *args;
    const char *summary;
} command_def;

static const command_def commands[] = {
    {CMD_IMPORT, "import", "[OPTIONS] FILE...", "load files into the target table"},
    {CMD_VALIDATE, "validate", "[OPTIONS] FILE...",
     "parse, validate and deduplicate only; no database"},
    {CMD_CHECK, "check", "[OPTIONS]", "is the target table safe for idempotent loads?"},
    {CMD_DEDUPE, "dedupe", "[OPTIONS]",
     "list, or with --apply soft-delete, existing duplicate active rows"},
    {CMD_CREATE_INDEX, "create-index", "[OPTIONS]",
     "build the partial unique index CONCURRENTLY, with progress"},
    {CMD_INIT, "init", "[OPTIONS]", "create the table and its unique index if absent"},
    {CMD_STATUS, "status", "[OPTIONS]",
     "what the ledger holds: every file, its state, who loads it, how far"},
};

typedef enum opt_id {
    OPT_HELP, OPT_VERSION, OPT_DBNAME, OPT_TABLE, OPT_FORMAT, OPT_DELIMITER, OPT_SET,
    OPT_REJECTS, OPT_MAX_REJECTS, OPT_CHUNK_ROWS, OPT_ON_CONFLICT, OPT_FINAL_STATUS,
    OPT_DRY_RUN, OPT_REPORT, OPT_QUIET, OPT_FORCE, OPT_RETRIES, OPT_JOBS, OPT_APPLY,
    OPT_INCLUDE_FINAL, OPT_BATCH_SIZE, OPT_LIMIT, OPT_INDEX_NAME, OPT_DISTRIBUTED,
    OPT_SHARD_COUNT
} opt_id;

typedef struct option_def {
    opt_id id;
    char short_name;        /* 0: none */
    const char *long_name;
    const char *arg;        /* NULL: a flag */
    unsigned commands;      /* CMDBIT mask */
    const char *help;
} option_def;

static const option_def options[] = {
    {OPT_DBNAME, 'd', "dbname", "DB", ALL_DB,
     "database name, conninfo string or URI (else PGHOST, PGDATABASE, ... as psql)"},
    {OPT_TABLE, 0, "table", "[SCHEMA.]NAME", ALL_DB, "target table (default payment_callback)"},
    {OPT_FORMAT, 0, "format", "csv|ndjson", READING,
     "input format (default: from the name: .csv, .ndjson, .jsonl, optionally .gz)"},
    {OPT_DELIMITER, 0, "delimiter", "C", READING, "CSV field delimiter (default ,)"},
    {OPT_SET, 0, "set", "COLUMN=VALUE", READING,
     "supply a column the file does not have, or a constant for another column of the "
     "table, set on the rows it inserts (repeatable)"},
    {OPT_REJECTS, 0, "rejects", "PATH", READING,
     "append rejected rows here (default idemload-rejects.ndjson)"},
    {OPT_MAX_REJECTS, 0, "max-rejects", "N", READING,
     "stop a file once more than N rows are rejected"},
    {OPT_CHUNK_ROWS, 0, "chunk-rows", "N", READING, "rows per chunk and transaction"},
    {OPT_ON_CONFLICT, 0, "on-conflict", "update|nothing", CMDBIT(CMD_IMPORT),
     "update: the newest version wins (default); nothing: the first write wins"},
    {OPT_FINAL_STATUS, 0, "final-status", "LIST", CMDBIT(CMD_IMPORT) | CMDBIT(CMD_DEDUPE),
     "comma-separated statuses that are final and never change (default 2)"},
    {OPT_DRY_RUN, 'n', "dry-run", NULL, CMDBIT(CMD_IMPORT),
     "compute the exact figures against the live table, then roll back"},
    {OPT_REPORT, 0, "report", "PATH|-",
     READING | CMDBIT(CMD_CHECK) | CMDBIT(CMD_DEDUPE) | CMDBIT(CMD_STATUS),
     "write a JSON report to PATH (- for standard output)"},
    {OPT_QUIET, 'q', "quiet", NULL, EVERY, "no progress line and no informational messages (the summary stays)"},
    {OPT_FORCE, 0, "force", NULL, CMDBIT(CMD_IMPORT),
     "load files the ledger holds as completed again"},
    {OPT_RETRIES, 0, "retries", "N", CMDBIT(CMD_IMPORT),
     "retries of a chunk after a lost connection or deadlock (default 5)"},
    {OPT_JOBS, 'j', "jobs", "N", CMDBIT(CMD_IMPORT),
     "connections merging at once, each with its share of a chunk's keys (default 2; "
     "1: one transaction per chunk; a dry run uses 1)"},
    {OPT_APPLY, 0, "apply", NULL, CMDBIT(CMD_DEDUPE),
     "soft-delete all but the earliest row of each duplicate key"},
    {OPT_INCLUDE_FINAL, 0, "include-final", NULL, CMDBIT(CMD_DEDUPE),
     "with --apply: also soft-delete rows with a final status"},
    {OPT_BATCH_SIZE, 0, "batch-size", "N", CMDBIT(CMD_DEDUPE),
     "keys per transaction with --apply (default 1000)"},
    {OPT_LIMIT, 0, "limit", "N", CMDBIT(CMD_DEDUPE) | CMDBIT(CMD_CHECK),
     "duplicate keys to list (default 20; 0: all)"},
    {OPT_INDEX_NAME, 0, "index-name", "NAME", CMDBIT(CMD_CREATE_INDEX) | CMDBIT(CMD_INIT),
     "name of the unique index (default uk_<table>_biz_active)"},
    {OPT_DISTRIBUTED, 0, "distributed", NULL, CMDBIT(CMD_INIT),
     "on a Citus coordinator: primary key (tenant_id, id), distributed by tenant_id"},
    {OPT_SHARD_COUNT, 0, "shard-count", "N", CMDBIT(CMD_INIT),
     "with --distributed: the number of shards (default: citus.shard_count)"},
    {OPT_HELP, 'h', "help", NULL, EVERY, "show this help"},
    {OPT_VERSION, 'V', "version", NULL, EVERY, "show the version"},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])
#define N_OPTIONS (sizeof options / sizeof options[0])

void config_defaults(config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->table = "payment_callback";
    cfg->format = FORMAT_AUTO;
    cfg->delimiter = ',';
    cfg->rejects_path = "idemload-rejects.ndjson";
    cfg->max_rejects = -1;
    cfg->chunk_rows = DEFAULT_CHUNK_ROWS;
    cfg->conflict = CONFLICT_UPDATE;
    cfg->final_status[0] = 2;
    cfg->n_final_status = 1;
    cfg->retries = 5;
    cfg->jobs = DEFAULT_JOBS;
    cfg->batch_size = 1000;
    cfg->limit = 20;
}

const char *cli_command_name(command cmd)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (commands[i].cmd == cmd)
            return commands[i].name;
    return "";
}

bool cli_command_at(size_t i, cli_command_info *out)
{
    if (i >= N_COMMANDS)
        return false;
    *out = (cli_command_info){commands[i].cmd, commands[i].name, commands[i].args,
                              commands[i].summary};
    return true;
}

bool cli_option_at(size_t i, cli_option_info *out)
{
    if (i >= N_OPTIONS)
        return false;
    *out = (cli_option_info){options[i].short_name, options[i].long_name, options[i].arg,
                             options[i].help};
    return true;
}

bool cli_option_applies(size_t i, command cmd)
{
    return i < N_OPTIONS && (options[i].commands & CMDBIT(cmd)) != 0;
}

static bool parse_count(const char *s, int64_t min, int64_t max, int64_t *out)
{
    return parse_int_in_range(s, strlen(s), min, max, out);
}

static bool parse_final_list(const char *s, config *cfg)
{
    cfg->n_final_status = 0;
    const char *p = s;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        int64_t v;
        if (cfg->n_final_status == MAX_FINAL_STATUSES ||
            !parse_int_in_range(p, n, INT16_MIN, INT16_MAX, &v))
            return false;
        cfg->final_status[cfg->n_final_status++] = (int16_t)v;
        if (!comma)
            break;
        p = comma + 1;
    }
    return cfg->n_final_status > 0;
}

/* Applies one option with its argument (NULL for a flag). */
static cli_result apply(const option_def *o, const char *arg, config *cfg, buf *err)
{
    int64_t v;
    switch (o->id) {
    case OPT_HELP:
        return CLI_HELP;
    case OPT_VERSION:
        return CLI_VERSION;
    case OPT_DBNAME:
        cfg->dbname = arg;
        break;
    case OPT_TABLE:
        if (!*arg) {
            buf_printf(err, "--table needs a name");
            return CLI_ERROR;
        }
        cfg->table = arg;
        break;
    case OPT_FORMAT:
        if (strcmp(arg, "csv") == 0)
            cfg->format = FORMAT_CSV;
        else if (strcmp(arg, "ndjson") == 0 || strcmp(arg, "jsonl") == 0)
            cfg->format = FORMAT_NDJSON;
        else {
            buf_printf(err, "--format must be csv or ndjson, not '%s'", arg);
            return CLI_ERROR;
        }
        break;
    case OPT_DELIMITER:
        if (strcmp(arg, "\\t") == 0 || strcmp(arg, "tab") == 0)
            arg = "\t";
        if (strlen(arg) != 1 || arg[0] == '"' || arg[0] == '\n' || arg[0] == '\r') {
            buf_printf(err, "--delimiter must be one character other than a quote or line break");
            return CLI_ERROR;
        }
        cfg->delimiter = arg[0];
        break;
    case OPT_SET: {
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg) {
            buf_printf(err, "--set takes COLUMN=VALUE; got '%s'", arg);
            return CLI_ERROR;
        }
        size_t name_len = (size_t)(eq - arg);
        int col = column_lookup(arg, name_len);
        if (col >= 0) {
            if (!validate_preset((column)col, eq + 1, err))
                return CLI_ERROR;
            cfg->presets.value[col] = eq + 1;
            break;
        }
        /* Another column of the target: checked against the catalog (its
         * existence, type and constraints) once connected. */
        if (name_len >= sizeof cfg->extra_set[0].name) {
            buf_printf(err, "--set %.*s: a column name has at most 63 bytes", (int)name_len, arg);
            return CLI_ERROR;
        }
        for (size_t i = 0; i < cfg->n_extra_set; i++)
            if (strlen(cfg->extra_set[i].name) == name_len &&
                memcmp(cfg->extra_set[i].name, arg, name_len) == 0) {
                buf_printf(err, "--set %.*s is given twice", (int)name_len, arg);
                return CLI_ERROR;
            }
        if (cfg->n_extra_set == MAX_EXTRA_SETS) {
            buf_printf(err, "--set: at most %d columns beyond idemload's own", MAX_EXTRA_SETS);
            return CLI_ERROR;
        }
        column_set *cs = &cfg->extra_set[cfg->n_extra_set++];
        memcpy(cs->name, arg, name_len);
        cs->name[name_len] = '\0';
        cs->value = eq + 1;
        break;
    }
    case OPT_REJECTS:
        if (!*arg) {
            buf_printf(err, "--rejects needs a path");
            return CLI_ERROR;
        }
        cfg->rejects_path = arg;
        break;
    case OPT_MAX_REJECTS:
        if (!parse_count(arg, 0, INT64_MAX, &v)) {
            buf_printf(err, "--max-rejects needs a count >= 0, not '%s'", arg);
            return CLI_ERROR;
        }
        cfg->max_rejects = v;
        break;
    case OPT_CHUNK_ROWS:
        if (!parse_count(arg, 1, 10000000, &v)) {
            buf_printf(err, "--chunk-rows needs a count from 1 to 10000000, not '%s'", arg);
            return CLI_ERROR;
        }
        cfg->chunk_rows = (size_t)v;
        break;
    case OPT_ON_CONFLICT:
        if (strcmp(arg, "update") == 0)
            cfg->conflict = CONFLICT_UPDATE;
        else if (strcmp(arg, "nothing") == 0)
            cfg->conflict = CONFLICT_NOTHING;
        else {
            buf_printf(err, "--on-conflict must be update or nothing, not '%s'", arg);
            return CLI_ERROR;
        }
        break;
    case OPT_FINAL_STATUS:
        if (!parse_final_list(arg, cfg)) {
            buf_printf(err, "--final-status needs a comma-separated list of smallints, not '%s'",
                       arg);
            return CLI_ERROR;
        }
        break;
    case OPT_DRY_RUN:
        cfg->dry_run = true;
        break;
    case OPT_REPORT:
        if (!*arg) {
            buf_printf(err, "--report needs a path or -");
            return CLI_ERROR;
        }
        cfg->report_path = arg;
        break;
    case OPT_QUIET:
        cfg->quiet = true;
        break;
    case OPT_FORCE:
        cfg->force = true;
        break;
    case OPT_RETRIES:
        if (!parse_count(arg, 0, 1000, &v)) {
            buf_printf(err, "--retries needs a count from 0 to 1000, not '%s'", arg);
            return CLI_ERROR;
        }
        cfg->retries = (int)v;
        break;
    case OPT_JOBS:
        if (!parse_count(arg, 1, MAX_JOBS, &v)) {
            buf_printf(err, "--jobs needs a count from 1 to %d, not '%s'", MAX_JOBS, arg);
            return CLI_ERROR;
        }
        cfg->jobs = (int)v;
        break;
    case OPT_APPLY:
        cfg->apply = true;
        break;
    case OPT_INCLUDE_FINAL:
        cfg->include_final = true;
        break;
    case OPT_BATCH_SIZE:
        if (!parse_count(arg, 1, 1000000, &v)) {
            buf_printf(err, "--batch-size needs a count from 1 to 1000000, not '%s'", arg);
            return CLI_ERROR;
        }
        cfg->batch_size = (size_t)v;
        break;
    case OPT_LIMIT:
        if (!parse_count(arg, 0, INT32_MAX, &v)) {
            buf_printf(err, "--limit needs a count >= 0, not '%s'", arg);
            return CLI_ERROR;
        }
        cfg->limit = (size_t)v;
        break;
    case OPT_INDEX_NAME:
        if (!*arg) {
            buf_printf(err, "--index-name needs a name");
            return CLI_ERROR;
        }
        cfg->index_name = arg;
        break;
    case OPT_DISTRIBUTED:
        cfg->distributed = true;
        break;
    case OPT_SHARD_COUNT:
        if (!parse_count(arg, 1, 64000, &v)) {
            buf_printf(err, "--shard-count needs a count from 1 to 64000, not '%s'", arg);
            return CLI_ERROR;
        }
        cfg->shard_count = (int)v;
        break;
    }
    return CLI_RUN;
}

static const option_def *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (strlen(options[i].long_name) == len && strncmp(options[i].long_name, name, len) == 0)
            return &options[i];
    return NULL;
}

static const option_def *find_short(char c)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (options[i].short_name == c)
            return &options[i];
    return NULL;
}

cli_result cli_parse(int argc, char **argv, config *cfg, buf *err)
{
    config_defaults(cfg);
    int i = 1;
    /* Global options before the command: only --help and --version. */
    if (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return CLI_HELP;
        if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0)
            return CLI_VERSION;
        buf_printf(err, "unknown option '%s' before the command; try 'idemload --help'",
                   argv[i]);
        return CLI_ERROR;
    }
    if (i >= argc) {
        buf_printf(err, "no command given; try 'idemload --help'");
        return CLI_ERROR;
    }
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (strcmp(argv[i], commands[k].name) == 0)
            cfg->cmd = commands[k].cmd;
    if (cfg->cmd == CMD_NONE) {
        if (strcmp(argv[i], "help") == 0)
            return CLI_HELP;
        buf_printf(err, "unknown command '%s'; try 'idemload --help'", argv[i]);
        return CLI_ERROR;
    }
    const char *cmdname = argv[i];
    i++;

    cfg->files = calloc((size_t)argc, sizeof *cfg->files);
    if (!cfg->files) {
        buf_printf(err, "out of memory");
        return CLI_ERROR;
    }
    bool only_files = false;
    for (; i < argc; i++) {
        char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            cfg->files[cfg->n_files++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_files = true;
            continue;
        }
        const option_def *o;
        const char *inline_arg = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(name, len);
            if (eq)
                inline_arg = eq + 1;
        } else {
            o = find_short(a[1]);
            if (o && a[2])
                inline_arg = a + 2;
        }
        if (!o || !(o->commands & CMDBIT(cfg->cmd))) {
            buf_printf(err, "%s option '%s' for %s; try 'idemload %s --help'",
                       o ? "inapplicable" : "unknown", a, cmdname, cmdname);
            return CLI_ERROR;
        }
        const char *arg = NULL;
        if (o->arg) {
            if (inline_arg) {
                arg = inline_arg;
            } else if (i + 1 < argc) {
                arg = argv[++i];
            } else {
                buf_printf(err, "option --%s needs a value (%s); try 'idemload %s --help'",
                           o->long_name, o->arg, cmdname);
                return CLI_ERROR;
            }
        } else if (inline_arg) {
            buf_printf(err, "option --%s takes no value; try 'idemload %s --help'", o->long_name,
                       cmdname);
            return CLI_ERROR;
        }
        cli_result r = apply(o, arg, cfg, err);
        if (r != CLI_RUN)
            return r;
    }
    bool wants_files = cfg->cmd == CMD_IMPORT || cfg->cmd == CMD_VALIDATE;
    if (wants_files && cfg->n_files == 0) {
        buf_printf(err, "%s needs at least one FILE (or - for standard input); "
                        "try 'idemload %s --help'", cmdname, cmdname);
        return CLI_ERROR;
    }
    if (!wants_files && cfg->n_files > 0) {
        buf_printf(err, "%s takes no files (got '%s'); try 'idemload %s --help'", cmdname,
                   cfg->files[0], cmdname);
        return CLI_ERROR;
    }
    size_t stdin_uses = 0;
    for (size_t k = 0; k < cfg->n_files; k++)
        stdin_uses += strcmp(cfg->files[k], "-") == 0;
    if (stdin_uses > 1) {
        buf_printf(err, "standard input (-) can be read only once");
        return CLI_ERROR;
    }
    if (cfg->include_final && !cfg->apply) {
        buf_printf(err, "--include-final goes with --apply");
        return CLI_ERROR;
    }
    if (cfg->shard_count && !cfg->distributed) {
        buf_printf(err, "--shard-count goes with --distributed");
        return CLI_ERROR;
    }
    return CLI_RUN;
}

void cli_print_help(FILE *fp, command cmd)
{
    if (cmd == CMD_NONE) {
        fprintf(fp, "idemload %s - load payment statement files into PostgreSQL idempotently\n\n"
                    "Usage:\n", IDEMLOAD_VERSION);
        for (size_t k = 0; k < N_COMMANDS; k++)
            fprintf(fp, "  idemload %-12s %-18s %s\n", commands[k].name, commands[k].args,
                    commands[k].summary);
        fprintf(fp, "\n  idemload --help | --version\n"
                    "  idemload COMMAND --help      options of one command\n\n"
                    "Exit status: 0 all loaded, 1 some rows rejected, 2 usage or configuration,\n"
                    "3 unreadable or corrupt input, 4 database error, 130 interrupted.\n");
        return;
    }
    for (size_t k = 0; k < N_COMMANDS; k++) {
        if (commands[k].cmd != cmd)
            continue;
        fprintf(fp, "Usage: idemload %s %s\n%s\n\nOptions:\n", commands[k].name, commands[k].args,
                commands[k].summary);
    }
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option_def *o = &options[i];
        if (!(o->commands & CMDBIT(cmd)))
            continue;
        char left[64];
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->long_name,
                     o->arg ? " " : "", o->arg ? o->arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->long_name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        fprintf(fp, "  %-34s %s\n", left, o->help);
    }
}
