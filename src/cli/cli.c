/*
 * cli.c - commands and options as tables (see cli.h).
 *
 * Each option names the commands it applies to; the parser refuses an
 * option the command does not take, and --help lists exactly the options
 * the parser accepts for that command.
 */
#include "cli/cli.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "input/profile.h"
#include "input/profile_settle.h"
#include "input/tenant_map.h"
#include "output/outfile.h"
#include "rules/validate.h"

#define CMDBIT(c) (1u << (c))
#define ALL_DB (CMDBIT(CMD_IMPORT) | CMDBIT(CMD_CHECK) | CMDBIT(CMD_DEDUPE) | \
                CMDBIT(CMD_CREATE_INDEX) | CMDBIT(CMD_INIT) | CMDBIT(CMD_STATUS) | \
                CMDBIT(CMD_RECONCILE) | CMDBIT(CMD_SETTLE))
#define READING (CMDBIT(CMD_IMPORT) | CMDBIT(CMD_VALIDATE) | CMDBIT(CMD_RECONCILE))
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
    {CMD_PROFILES, "profiles", "[NAME]",
     "list the built-in channel profiles, or print one as a profile file"},
    {CMD_RECONCILE, "reconcile", "[OPTIONS] FILE...",
     "compare statements with the table over their period, both ways"},
    {CMD_SETTLE, "settle", "[OPTIONS] FILE...",
     "check fees, payouts, balances and bank credits: the money that arrives"},
};

typedef struct option_def option_def;

/* Applies one option's value to cfg: CLI_RUN, or CLI_ERROR with the one-line
 * message in *err (CLI_HELP, CLI_VERSION for those two). */
typedef cli_result (*option_setter)(const option_def *o, const char *arg, config *cfg,
                                    buf *err);

struct option_def {
    char short_name;        /* 0: none */
    const char *long_name;
    const char *arg;        /* NULL: a flag */
    unsigned commands;      /* CMDBIT mask */
    const char *help;
    option_setter set;
    size_t field;           /* offsetof(config, ...) the generic setters write */
    int64_t min, max;       /* set_count_*: the accepted range; set_choice: min is the
                             * value of the metavar's first word */
    const char *need;       /* set_text: what an empty value lacks ("a path"); NULL: may be empty */
};

static cli_result set_help(const option_def *, const char *, config *, buf *);
static cli_result set_version(const option_def *, const char *, config *, buf *);
static cli_result set_flag(const option_def *, const char *, config *, buf *);
static cli_result set_text(const option_def *, const char *, config *, buf *);
static cli_result set_count_int(const option_def *, const char *, config *, buf *);
static cli_result set_count_size(const option_def *, const char *, config *, buf *);
static cli_result set_count_i64(const option_def *, const char *, config *, buf *);
static cli_result set_seconds_ms(const option_def *, const char *, config *, buf *);
static cli_result set_format(const option_def *, const char *, config *, buf *);
static cli_result set_delimiter(const option_def *, const char *, config *, buf *);
static cli_result set_column(const option_def *, const char *, config *, buf *);
static cli_result set_choice(const option_def *, const char *, config *, buf *);
static cli_result set_final_status(const option_def *, const char *, config *, buf *);
static cli_result set_kind(const option_def *, const char *, config *, buf *);
static cli_result set_fee_rate(const option_def *, const char *, config *, buf *);
static cli_result set_tenant(const option_def *, const char *, config *, buf *);

#define FIELD(f) offsetof(config, f)
/* A numeric default written into a help text. */
#define DEFAULT_TEXT_(n) #n
#define DEFAULT_TEXT(n) DEFAULT_TEXT_(n)

/* Every option: what --help, the man page and the completion show, which
 * commands take it, and how its value is checked and stored (ranges here,
 * not in code). */
static const option_def options[] = {
    {'d', "dbname", "DB", ALL_DB,
     "database name, conninfo string or URI (else PGHOST, PGDATABASE, ... as psql)",
     .set = set_text, .field = FIELD(dbname)},
    {0, "table", "[SCHEMA.]NAME", ALL_DB, "target table (default " DEFAULT_TABLE ")",
     .set = set_text, .field = FIELD(table), .need = "a name"},
    {0, "format", INPUT_FORMAT_CHOICES, READING,
     "input format (default: from the name's ending:" INPUT_FORMAT_ENDINGS ", optionally then .gz)",
     .set = set_format},
    {0, "delimiter", "C", READING, "CSV field delimiter (default ,)", .set = set_delimiter},
    {0, "profile", "NAME|PATH.json", READING | CMDBIT(CMD_SETTLE),
     "read a channel's own bill: wechat-trade, alipay-trade, stripe-balance, paypal-stl, or "
     "a profile file ('idemload profiles' lists them); reconcile compares only the kinds the "
     "bill lists (a WeChat SUCCESS bill: payments); settle: a channel's settlement file "
     "(default: the built-in profile whose header the file matches; bank statements by "
     "content)",
     .set = set_text, .field = FIELD(profile_name)},
    {0, "encoding", "utf-8|gbk", READING,
     "with --profile: the bill's encoding (default: the profile's)",
     .set = set_text, .field = FIELD(encoding)},
    {0, "timezone", "ZONE", READING | CMDBIT(CMD_SETTLE),
     "with --profile: zone of timestamps without an offset, +08:00, Z or an IANA name such "
     "as Asia/Shanghai (default: the profile's); reconcile: also the zone its days are cut "
     "in, for a canonical file too (default UTC)",
     .set = set_text, .field = FIELD(timezone)},
    {0, "kind", "FROM=TO", READING,
     "with --profile: write the profile's kind FROM (the part of callback_type before ':') "
     "as TO, e.g. pay=pay_success (repeatable)",
     .set = set_kind},
    {0, "tenant-map", "FILE", READING,
     "with --profile: each row's tenant_id from its merchant, through a CSV with the header "
     "merchant,tenant_id (a bill listing many merchants)",
     .set = set_text, .field = FIELD(tenant_map_path), .need = "a path"},
    {0, "set", "COLUMN=VALUE", READING | CMDBIT(CMD_SETTLE),
     "supply a column the file does not have, or a constant for another column of the "
     "table, set on the rows it inserts (repeatable)",
     .set = set_column},
    {0, "rejects", "PATH|-", READING, "append rejected rows here (default " DEFAULT_REJECTS ")",
     .set = set_text, .field = FIELD(rejects_path), .need = "a path or -"},
    {0, "max-rejects", "N", READING, "stop a file once more than N rows are rejected",
     .set = set_count_i64, .field = FIELD(max_rejects), .min = 0, .max = INT64_MAX},
    {0, "chunk-rows", "N", READING,
     "rows per chunk and transaction (default " DEFAULT_TEXT(DEFAULT_CHUNK_ROWS) ")",
     .set = set_count_size, .field = FIELD(chunk_rows), .min = 1, .max = 10000000},
    {0, "on-conflict", "update|nothing", CMDBIT(CMD_IMPORT),
     "update: the newest version wins (default); nothing: the first write wins",
     .set = set_choice, .field = FIELD(conflict), .min = CONFLICT_UPDATE},
    {0, "final-status", "LIST", CMDBIT(CMD_IMPORT) | CMDBIT(CMD_DEDUPE),
     "comma-separated statuses that are final and never change (default 2)",
     .set = set_final_status},
    {'n', "dry-run", NULL, CMDBIT(CMD_IMPORT) | CMDBIT(CMD_RECONCILE) | CMDBIT(CMD_SETTLE),
     "compute the exact figures against the live table, then roll back (reconcile, settle: "
     "write nothing at all, not even the register)",
     .set = set_flag, .field = FIELD(dry_run)},
    {0, "period", "DAY|FROM..TO", CMDBIT(CMD_RECONCILE) | CMDBIT(CMD_SETTLE),
     "the days compared, YYYY-MM-DD inclusive, in the statement's zone (default: the days "
     "the statement's rows fall in)",
     .set = set_text, .field = FIELD(period), .need = "a day or FROM..TO"},
    {0, "grace", "DURATION", CMDBIT(CMD_RECONCILE) | CMDBIT(CMD_SETTLE),
     "a table row the statement lacks is pending, not missing, until this long after the "
     "end of its day: Nd, Nh or Nm (default 2d); settle: a table payment no batch paid "
     "is pending until this long after its time",
     .set = set_text, .field = FIELD(grace), .need = "a duration"},
    {0, "facts", "FILE", CMDBIT(CMD_RECONCILE) | CMDBIT(CMD_SETTLE),
     "JSON: where each channel's (and kind's) payload holds amount, currency, fee and time, "
     "and in which unit (default: amount in major units, currency); a row whose payload is "
     "a bill's row (--repair missing) is read by the profile's columns",
     .set = set_text, .field = FIELD(facts_path), .need = "a path"},
    {0, "discrepancies", "PATH|-", CMDBIT(CMD_RECONCILE) | CMDBIT(CMD_SETTLE),
     "write one line per discrepancy: NDJSON, or CSV with a byte-order mark when PATH ends "
     "in .csv (- for standard output)",
     .set = set_text, .field = FIELD(discrepancies_path), .need = "a path or -"},
    {0, "tenant", "N", CMDBIT(CMD_SETTLE),
     "the tenant of the rows whose file names none (a bank statement, a channel's file of "
     "one merchant): the same as --set tenant_id=N",
     .set = set_tenant},
    {0, "fee-rate", "CHANNEL=RATE", CMDBIT(CMD_SETTLE),
     "the fee a channel's contract charges a payment: a percentage, a fixed amount, or both "
     "(wechat=0.6%, stripe=2.9%+0.30), rounded half up to the currency's minor unit per "
     "payment (repeatable; without one, a payment's fee is compared only with another "
     "file's fee for it)",
     .set = set_fee_rate},
    {0, "settle-window", "MIN..MAX", CMDBIT(CMD_SETTLE),
     "a batch's bank credit is expected from MIN to MAX after the batch's day, Nd, Nh or Nm "
     "(default 0..3d; calendar days, business days not assumed); pending while it is open",
     .set = set_text, .field = FIELD(settle_window), .need = "a window MIN..MAX"},
    {0, "repair", "missing|merge", CMDBIT(CMD_RECONCILE),
     "missing: insert the rows the table lacks through the merge, changing no existing row; "
     "merge: import every row after the comparison",
     .set = set_choice, .field = FIELD(repair), .min = REPAIR_MISSING},
    {0, "report", "PATH|-", READING | CMDBIT(CMD_SETTLE) | CMDBIT(CMD_CHECK) | CMDBIT(CMD_DEDUPE) | CMDBIT(CMD_STATUS),
     "write a JSON report to PATH (- for standard output)",
     .set = set_text, .field = FIELD(report_path), .need = "a path or -"},
    {0, "html", "PATH|-", READING | CMDBIT(CMD_SETTLE),
     "write a self-contained HTML report to PATH (- for standard output): figures, charts "
     "per channel and over time, rejects by reason, files",
     .set = set_text, .field = FIELD(html_path), .need = "a path or -"},
    {0, "changes", "PATH|-", CMDBIT(CMD_IMPORT),
     "write one JSON line per row inserted or updated (or that would be, in a dry run) "
     "and per stale row, with its version before and after",
     .set = set_text, .field = FIELD(changes_path), .need = "a path or -"},
    {'q', "quiet", NULL, EVERY,
     "no progress line and no informational messages (the summary stays)",
     .set = set_flag, .field = FIELD(quiet)},
    {0, "force", NULL, CMDBIT(CMD_IMPORT), "load files the ledger holds as completed again",
     .set = set_flag, .field = FIELD(force)},
    {0, "supersede", NULL, CMDBIT(CMD_IMPORT),
     "correct an earlier load of the same file under other parameters (a wrong --timezone, "
     "say): its rows replace the active versions that load wrote, even newer ones, and "
     "nothing else",
     .set = set_flag, .field = FIELD(supersede)},
    {0, "no-append", NULL, CMDBIT(CMD_IMPORT),
     "stage and merge every row, also the keys met for the first time (by default those "
     "are COPYed straight into the table, which the unique index keeps safe)",
     .set = set_flag, .field = FIELD(no_append)},
    {0, "retries", "N", CMDBIT(CMD_IMPORT) | CMDBIT(CMD_VALIDATE) | CMDBIT(CMD_RECONCILE),
     "retries of a chunk after a lost connection or deadlock, and of an object's request "
     "after a dropped connection or a 5xx (default 5)",
     .set = set_count_int, .field = FIELD(retries), .min = 0, .max = 1000},
    {0, "cancel-wait", "SECONDS", CMDBIT(CMD_IMPORT),
     "after SIGINT/SIGTERM, how long to wait for the server to end the cancelled "
     "statements before closing the connections (default 10, for all of them together)",
     .set = set_seconds_ms, .field = FIELD(cancel_wait_ms), .min = 0, .max = 3600},
    {'j', "jobs", "N", CMDBIT(CMD_IMPORT),
     "connections merging at once, each with its share of a chunk's keys (default 2; "
     "1: one transaction per chunk; a dry run uses 1)",
     .set = set_count_int, .field = FIELD(jobs), .min = 1, .max = MAX_JOBS},
    {0, "apply", NULL, CMDBIT(CMD_DEDUPE),
     "soft-delete all but the earliest row of each duplicate key",
     .set = set_flag, .field = FIELD(apply)},
    {0, "include-final", NULL, CMDBIT(CMD_DEDUPE),
     "with --apply: also soft-delete rows with a final status",
     .set = set_flag, .field = FIELD(include_final)},
    {0, "batch-size", "N", CMDBIT(CMD_DEDUPE), "keys per transaction with --apply (default 1000)",
     .set = set_count_size, .field = FIELD(batch_size), .min = 1, .max = 1000000},
    {0, "limit", "N", CMDBIT(CMD_DEDUPE) | CMDBIT(CMD_CHECK),
     "duplicate keys to list (default 20; 0: all)",
     .set = set_count_size, .field = FIELD(limit), .min = 0, .max = INT32_MAX},
    {0, "index-name", "NAME", CMDBIT(CMD_CREATE_INDEX) | CMDBIT(CMD_INIT),
     "name of the unique index (default uk_<table>_biz_active)",
     .set = set_text, .field = FIELD(index_name), .need = "a name"},
    {0, "distributed", NULL, CMDBIT(CMD_INIT),
     "on a Citus coordinator: primary key (tenant_id, id), distributed by tenant_id",
     .set = set_flag, .field = FIELD(distributed)},
    {0, "shard-count", "N", CMDBIT(CMD_INIT),
     "with --distributed: the number of shards (default: citus.shard_count)",
     .set = set_count_int, .field = FIELD(shard_count), .min = 1, .max = 64000},
    {'h', "help", NULL, EVERY | CMDBIT(CMD_PROFILES), "show this help", .set = set_help},
    {'V', "version", NULL, EVERY, "show the version", .set = set_version},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])
#define N_OPTIONS (sizeof options / sizeof options[0])

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
static cli_result set_help(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o, (void)arg, (void)cfg, (void)err;
    return CLI_HELP;
}

static cli_result set_version(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o, (void)arg, (void)cfg, (void)err;
    return CLI_VERSION;
}

static cli_result set_flag(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)arg, (void)err;
    *(bool *)((char *)cfg + o->field) = true;
    return CLI_RUN;
}

static cli_result set_text(const option_def *o, const char *arg, config *cfg, buf *err)
{
    if (o->need && !*arg) {
        buf_printf(err, "--%s needs %s", o->long_name, o->need);
        return CLI_ERROR;
    }
    *(const char **)((char *)cfg + o->field) = arg;
    return CLI_RUN;
}

/* The option's count in [o->min, o->max], or CLI_ERROR saying the range. */
static cli_result count_of(const option_def *o, const char *arg, int64_t *v, buf *err)
{
    if (parse_count(arg, o->min, o->max, v))
        return CLI_RUN;
    if (o->max >= INT32_MAX)
        buf_printf(err, "--%s needs a count >= %lld, not '%s'", o->long_name, (long long)o->min,
                   arg);
    else
        buf_printf(err, "--%s needs a count from %lld to %lld, not '%s'", o->long_name,
                   (long long)o->min, (long long)o->max, arg);
    return CLI_ERROR;
}

static cli_result set_count_int(const option_def *o, const char *arg, config *cfg, buf *err)
{
    int64_t v;
    cli_result r = count_of(o, arg, &v, err);
    if (r == CLI_RUN)
        *(int *)((char *)cfg + o->field) = (int)v;
    return r;
}

static cli_result set_count_size(const option_def *o, const char *arg, config *cfg, buf *err)
{
    int64_t v;
    cli_result r = count_of(o, arg, &v, err);
    if (r == CLI_RUN)
        *(size_t *)((char *)cfg + o->field) = (size_t)v;
    return r;
}

static cli_result set_count_i64(const option_def *o, const char *arg, config *cfg, buf *err)
{
    int64_t v;
    cli_result r = count_of(o, arg, &v, err);
    if (r == CLI_RUN)
        *(int64_t *)((char *)cfg + o->field) = v;
    return r;
}

/* A whole number of seconds, stored as milliseconds in an int field. */
static cli_result set_seconds_ms(const option_def *o, const char *arg, config *cfg, buf *err)
{
    int64_t v;
    cli_result r = count_of(o, arg, &v, err);
    if (r == CLI_RUN)
        *(int *)((char *)cfg + o->field) = (int)(v * 1000);
    return r;
}

static cli_result set_format(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o;
    cfg->format = format_parse(arg);
    if (cfg->format == FORMAT_AUTO) {
        buf_append_str(err, "--format must be ");
        format_names(err, " or ");
        buf_printf(err, ", not '%s'", arg);
        return CLI_ERROR;
    }
    return CLI_RUN;
}

static cli_result set_delimiter(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o;
    if (strcmp(arg, "\\t") == 0 || strcmp(arg, "tab") == 0)
        arg = "\t";
    if (strlen(arg) != 1 || arg[0] == '"' || arg[0] == '\n' || arg[0] == '\r') {
        buf_printf(err, "--delimiter must be one character other than a quote or line break");
        return CLI_ERROR;
    }
    cfg->delimiter = arg[0];
    cfg->delimiter_set = true;
    return CLI_RUN;
}

/* --tenant N: --set tenant_id=N by a name of its own. */
static cli_result set_tenant(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o;
    if (cfg->presets.value[COL_TENANT_ID] && strcmp(cfg->presets.value[COL_TENANT_ID], arg) != 0) {
        buf_printf(err, "--tenant %s and --set tenant_id=%s disagree", arg,
                   cfg->presets.value[COL_TENANT_ID]);
        return CLI_ERROR;
    }
    if (!validate_preset(COL_TENANT_ID, arg, err))
        return CLI_ERROR;
    cfg->presets.value[COL_TENANT_ID] = arg;
    return CLI_RUN;
}

/* --fee-rate CHANNEL=RATE, kept as given; settle checks RATE (settle_opts.h). */
static cli_result set_fee_rate(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o;
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) {
        buf_printf(err, "--fee-rate takes CHANNEL=RATE (--fee-rate wechat=0.6%%); got '%s'", arg);
        return CLI_ERROR;
    }
    if (cfg->n_fee_rate == MAX_FEE_RATES) {
        buf_printf(err, "--fee-rate: at most %d channels", MAX_FEE_RATES);
        return CLI_ERROR;
    }
    cfg->fee_rate[cfg->n_fee_rate++] = arg;
    return CLI_RUN;
}

static cli_result set_kind(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o;
    const char *eq = strchr(arg, '=');
    size_t fn = eq ? (size_t)(eq - arg) : 0;
    if (!eq || fn == 0 || !eq[1] || memchr(arg, ':', fn)) {
        buf_printf(err, "--kind takes FROM=TO, a kind without ':' and its new name (--kind "
                        "pay=pay_success); got '%s'", arg);
        return CLI_ERROR;
    }
    if (fn >= sizeof cfg->kind_rename[0].from) {
        buf_printf(err, "--kind %.*s: a kind has at most 63 bytes", (int)fn, arg);
        return CLI_ERROR;
    }
    if (cfg->n_kind_rename == MAX_KIND_RENAMES) {
        buf_printf(err, "--kind: at most %d renames", MAX_KIND_RENAMES);
        return CLI_ERROR;
    }
    kind_rename *k = &cfg->kind_rename[cfg->n_kind_rename++];
    memcpy(k->from, arg, fn);
    k->from[fn] = '\0';
    k->to = eq + 1;
    return CLI_RUN;
}

/* --set for a column beyond idemload's own: checked against the catalog
 * (existence, type, constraints) once connected. */
static cli_result set_extra_column(const char *arg, size_t name_len, config *cfg, buf *err)
{
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
    cs->value = arg + name_len + 1;
    return CLI_RUN;
}

static cli_result set_column(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o;
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        buf_printf(err, "--set takes COLUMN=VALUE; got '%s'", arg);
        return CLI_ERROR;
    }
    int col = column_lookup(arg, (size_t)(eq - arg));
    if (col < 0)
        return set_extra_column(arg, (size_t)(eq - arg), cfg, err);
    if (!validate_preset((column)col, eq + 1, err))
        return CLI_ERROR;
    cfg->presets.value[col] = eq + 1;
    return CLI_RUN;
}

/* A word of the option's metavar ("update|nothing"): the enum field at
 * o->field gets o->min plus the word's position, so --help, the message and
 * the accepted words are one list. */
static cli_result set_choice(const option_def *o, const char *arg, config *cfg, buf *err)
{
    _Static_assert(sizeof(on_conflict) == sizeof(int) && sizeof(repair_mode) == sizeof(int),
                   "set_choice stores an enum as an int");
    size_t len = strlen(arg);
    int at = 0;
    for (const char *w = o->arg; *w; at++) {
        size_t n = strcspn(w, "|");
        if (len > 0 && n == len && memcmp(w, arg, n) == 0) {
            int v = (int)o->min + at;
            memcpy((char *)cfg + o->field, &v, sizeof v);
            return CLI_RUN;
        }
        w += n + (w[n] == '|');
    }
    buf_printf(err, "--%s must be ", o->long_name);
    for (const char *w = o->arg; *w;) {
        size_t n = strcspn(w, "|");
        const char *sep = w[n] != '|' ? "" : strchr(w + n + 1, '|') ? ", " : " or ";
        buf_printf(err, "%.*s%s", (int)n, w, sep);
        w += n + (w[n] == '|');
    }
    buf_printf(err, ", not '%s'", arg);
    return CLI_ERROR;
}

static cli_result set_final_status(const option_def *o, const char *arg, config *cfg, buf *err)
{
    (void)o;
    if (!parse_final_list(arg, cfg)) {
        buf_printf(err, "--final-status needs a comma-separated list of smallints, not '%s'",
                   arg);
        return CLI_ERROR;
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

/* Applies --delimiter, --kind and --tenant-map to the loaded profile. */
static bool cli_profile_extras(config *cfg, buf *err)
{
    if (cfg->delimiter_set)
        profile_override_delimiter(cfg->profile, cfg->delimiter);
    for (size_t i = 0; i < cfg->n_kind_rename; i++)
        if (!profile_add_kind_rename(cfg->profile, cfg->kind_rename[i].from,
                                     cfg->kind_rename[i].to, err))
            return false;
    if (!cfg->tenant_map_path)
        return true;
    if (cfg->presets.value[COL_TENANT_ID]) {
        buf_printf(err, "--tenant-map and --set tenant_id both say the tenant; give one");
        return false;
    }
    tenant_map *tm = tenant_map_load(cfg->tenant_map_path, err);
    return tm && profile_set_tenant_map(cfg->profile, tm, cfg->tenant_map_path, err);
}

/* Loads --profile and applies --encoding, --timezone, --delimiter, --kind
 * and --tenant-map to it. */
static bool cli_take_profile(config *cfg, buf *err)
{
    if (!cfg->profile_name) {
        /* reconcile cuts a canonical file's days in --timezone too. */
        const char *lone = cfg->encoding                                   ? "--encoding"
                           : (cfg->timezone && cfg->cmd != CMD_RECONCILE &&
                              cfg->cmd != CMD_SETTLE)                      ? "--timezone"
                           : cfg->n_kind_rename                           ? "--kind"
                           : cfg->tenant_map_path                         ? "--tenant-map"
                                                                          : NULL;
        if (lone) {
            buf_printf(err, "%s goes with --profile", lone);
            return false;
        }
        return true;
    }
    cfg->profile = profile_load(cfg->profile_name, err);
    if (!cfg->profile)
        return false;
    /* settle reads a channel's settlement file through the profile's settle
     * member; its tenant comes from the file or --set tenant_id. */
    if (cfg->cmd == CMD_SETTLE)
        return profile_override(cfg->profile, cfg->encoding, cfg->timezone, err);
    if (profile_settle_only(cfg->profile) &&
        (cfg->cmd == CMD_IMPORT || cfg->cmd == CMD_VALIDATE || cfg->cmd == CMD_RECONCILE)) {
        /* A WeChat 资金账单 lists money movements, not payments: no key. */
        buf_printf(err, "profile %s is read by settle only: its file names no payment's key "
                        "(out_trade_no), so %s cannot load or compare it (use 'idemload settle "
                        "--profile %s')", cfg->profile->name,
                   cfg->cmd == CMD_IMPORT ? "import" : cfg->cmd == CMD_VALIDATE ? "validate"
                                                                                : "reconcile",
                   cfg->profile->name);
        return false;
    }
    if (!profile_override(cfg->profile, cfg->encoding, cfg->timezone, err) ||
        !cli_profile_extras(cfg, err))
        return false;
    if (!cfg->profile->col[COL_TENANT_ID].set && !cfg->presets.value[COL_TENANT_ID] &&
        !cfg->profile->tenants) {
        buf_printf(err, "profile %s takes tenant_id from the command line: a channel bill "
                        "belongs to one merchant account; add --set tenant_id=N (or "
                        "--tenant-map FILE for a bill of many merchants)",
                   cfg->profile->name);
        return false;
    }
    if (!cfg->profile->col[COL_CHANNEL].set && !cfg->presets.value[COL_CHANNEL]) {
        buf_printf(err, "profile %s names no channel; add --set channel=NAME",
                   cfg->profile->name);
        return false;
    }
    return true;
}

/* The command word at argv[1] (after at most --help or --version). */
static cli_result parse_command(int argc, char **argv, config *cfg, buf *err)
{
    if (argc > 1 && argv[1][0] == '-') {
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
            return CLI_HELP;
        if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
            return CLI_VERSION;
        buf_printf(err, "unknown option '%s' before the command; try 'idemload --help'",
                   argv[1]);
        return CLI_ERROR;
    }
    if (argc < 2) {
        buf_printf(err, "no command given; try 'idemload --help'");
        return CLI_ERROR;
    }
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (strcmp(argv[1], commands[k].name) == 0)
            cfg->cmd = commands[k].cmd;
    if (cfg->cmd != CMD_NONE)
        return CLI_RUN;
    if (strcmp(argv[1], "help") == 0)
        return CLI_HELP;
    buf_printf(err, "unknown command '%s'; try 'idemload --help'", argv[1]);
    return CLI_ERROR;
}

/* The option at argv[*i] (its value inline or the next word, then *i moves
 * past it), applied to cfg. */
static cli_result parse_option(int argc, char **argv, int *i, const char *cmdname, config *cfg,
                               buf *err)
{
    const char *a = argv[*i];
    const option_def *o;
    const char *inline_arg = NULL;
    if (a[1] == '-') {
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        o = find_long(name, eq ? (size_t)(eq - name) : strlen(name));
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
    const char *arg = inline_arg;
    if (o->arg && !arg) {
        if (*i + 1 >= argc) {
            buf_printf(err, "option --%s needs a value (%s); try 'idemload %s --help'",
                       o->long_name, o->arg, cmdname);
            return CLI_ERROR;
        }
        arg = argv[++*i];
    } else if (!o->arg && arg) {
        buf_printf(err, "option --%s takes no value; try 'idemload %s --help'", o->long_name,
                   cmdname);
        return CLI_ERROR;
    }
    return o->set(o, arg, cfg, err);
}

/* What the options and files must say together, once all are read. */
static cli_result check_combination(config *cfg, const char *cmdname, buf *err)
{
    if (cfg->cmd == CMD_PROFILES) {
        if (cfg->n_files > 1) {
            buf_printf(err, "profiles takes at most one NAME; try 'idemload profiles --help'");
            return CLI_ERROR;
        }
        return CLI_RUN;
    }
    if (!cli_take_profile(cfg, err))
        return CLI_ERROR;
    bool wants_files =
        cfg->cmd == CMD_IMPORT || cfg->cmd == CMD_VALIDATE || cfg->cmd == CMD_RECONCILE ||
        cfg->cmd == CMD_SETTLE;
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
    /* Standard output takes one stream a reader can parse: the changes,
     * the discrepancies and the page each want it alone (the report and
     * the rejects may share it, as before).  A path naming the file
     * standard output is redirected to (/dev/stdout > f) is written through
     * it (outfile_std_stream), so it counts as "-". */
    const struct {
        const char *opt;
        const char *path;
        bool alone;
    } outs[] = {{"--changes", cfg->changes_path, true},
                {"--discrepancies", cfg->discrepancies_path, true},
                {"--html", cfg->html_path, true},
                {"--report", cfg->report_path, false},
                {"--rejects", cfg->rejects_path, false}};
    size_t n_outs = sizeof outs / sizeof outs[0];
    for (size_t a = 0; a < n_outs; a++) {
        if (!outs[a].alone || !outs[a].path || outfile_std_stream(outs[a].path) != stdout)
            continue;
        for (size_t b = 0; b < n_outs; b++) {
            if (b != a && outs[b].path && outfile_std_stream(outs[b].path) == stdout) {
                buf_printf(err, "%s %s cannot share standard output with %s %s: a reader could "
                                "parse neither (give one of them a file)",
                           outs[a].opt, outs[a].path, outs[b].opt, outs[b].path);
                return CLI_ERROR;
            }
        }
    }
    if (cfg->supersede && cfg->conflict != CONFLICT_UPDATE) {
        buf_printf(err, "--supersede goes with --on-conflict update");
        return CLI_ERROR;
    }
    if (cfg->supersede && (cfg->changes_path || cfg->dry_run)) {
        buf_printf(err, "--supersede cannot be combined with %s yet",
                   cfg->changes_path ? "--changes" : "--dry-run");
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

cli_result cli_parse(int argc, char **argv, config *cfg, buf *err)
{
    config_defaults(cfg);
    cli_result r = parse_command(argc, argv, cfg, err);
    if (r != CLI_RUN)
        return r;
    const char *cmdname = argv[1];
    cfg->files = calloc((size_t)argc, sizeof *cfg->files);
    if (!cfg->files) {
        buf_printf(err, "out of memory");
        return CLI_ERROR;
    }
    bool only_files = false;
    for (int i = 2; i < argc; i++) {
        char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            cfg->files[cfg->n_files++] = a;
        } else if (strcmp(a, "--") == 0) {
            only_files = true;
        } else if ((r = parse_option(argc, argv, &i, cmdname, cfg, err)) != CLI_RUN) {
            return r;
        }
    }
    return check_combination(cfg, cmdname, err);
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
                    "3 a file not readable or writable (or out of memory), 4 database error,\n"
                    "5 reconcile or settle found discrepancies, 130 interrupted.\n");
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
