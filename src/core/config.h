/*
 * config.h - everything the command line says, as one struct.
 *
 * cli.c fills it; nothing below main() reads the command line or any
 * global option state.  Strings point into argv (which outlives the run)
 * except where noted.
 */
#ifndef IDEMLOAD_CONFIG_H
#define IDEMLOAD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/formats.h"
#include "core/presets.h"

typedef enum command {
    CMD_NONE,
    CMD_IMPORT,
    CMD_VALIDATE,
    CMD_CHECK,
    CMD_DEDUPE,
    CMD_CREATE_INDEX,
    CMD_INIT,
    CMD_STATUS,
    CMD_PROFILES,
    CMD_RECONCILE,
    CMD_SETTLE,
    CMD_COUNT
} command;

typedef enum on_conflict { CONFLICT_UPDATE, CONFLICT_NOTHING } on_conflict;

/* The table of every command without --table. */
#define DEFAULT_TABLE "payment_callback"
#define DEFAULT_REJECTS "idemload-rejects.ndjson" /* --rejects when not given */
#define DEFAULT_FINAL_STATUS 2      /* --final-status when not given */
#define MAX_FINAL_STATUSES 32
#define DEFAULT_CHUNK_ROWS 20000
/* Connections of one import: each merges the keys whose hash falls in its
 * lane, so two connections never touch one key (BENCHMARKS.md). */
#define DEFAULT_JOBS 2
#define MAX_JOBS 16
/* --set for columns of the target beyond idemload's own. */
#define MAX_EXTRA_SETS 32
/* --kind FROM=TO renames of the kinds a profile writes. */
#define MAX_KIND_RENAMES 32

/* One --set COLUMN=VALUE for a column idemload does not write itself: a
 * constant for every row it inserts (name copied: argv holds "COLUMN=VALUE"). */
typedef struct column_set {
    char name[64];          /* PostgreSQL names have at most 63 bytes */
    const char *value;
} column_set;

/* One --kind FROM=TO: the kind part (before ':') of a profile's
 * callback_type FROM becomes TO (SPEC.md, "Channel exports: profiles"). */
typedef struct kind_rename {
    char from[64];
    const char *to;
} kind_rename;

/* --fee-rate CHANNEL=RATE of settle, at most this many. */
#define MAX_FEE_RATES 16

/* --repair of reconcile. */
typedef enum repair_mode { REPAIR_NONE, REPAIR_MISSING, REPAIR_MERGE } repair_mode;

typedef struct config {
    command cmd;
    const char *dbname;          /* -d: name, conninfo or URI; NULL: PG* env */
    const char *table;           /* [schema.]name */
    input_format format;         /* FORMAT_AUTO: from each file's name */
    char delimiter;
    bool delimiter_set;          /* --delimiter given (overrides a profile's) */
    presets presets;
    column_set extra_set[MAX_EXTRA_SETS];
    size_t n_extra_set;
    const char *rejects_path;
    int64_t max_rejects;         /* -1: no limit */
    size_t chunk_rows;
    on_conflict conflict;
    int16_t final_status[MAX_FINAL_STATUSES];
    size_t n_final_status;
    bool dry_run;
    bool quiet;
    bool force;
    bool no_append;         /* --no-append: merge every row (lane.h) */
    bool supersede;         /* --supersede: this load replaces the versions the same
                             * file's earlier load, under other parameters, left */
    const char *report_path;     /* NULL: none; "-": stdout */
    const char *html_path;       /* --html: NULL: none */
    const char *changes_path;    /* --changes: NULL: none; "-": stdout */
    int retries;
    int jobs;                    /* connections merging at once (--jobs) */
    bool apply;
    bool include_final;
    size_t batch_size;
    size_t limit;                /* rows of a listing to show */
    const char *index_name;      /* NULL: the default name */
    bool distributed;            /* init --distributed: a Citus distributed table */
    int shard_count;             /* init --shard-count; 0: Citus's default */
    char **files;
    size_t n_files;
    /* --profile: a channel bill's layout (owned: profile_free in main);
     * NULL reads idemload's own CSV/NDJSON columns. */
    struct profile *profile;
    const char *profile_name;    /* as given */
    const char *encoding;        /* --encoding, NULL: the profile's */
    const char *timezone;        /* --timezone, NULL: the profile's */
    kind_rename kind_rename[MAX_KIND_RENAMES];   /* --kind FROM=TO */
    size_t n_kind_rename;
    const char *tenant_map_path; /* --tenant-map FILE (CSV merchant,tenant_id) */
    /* reconcile (SPEC.md, "Reconcile") */
    const char *period;          /* --period DAY or FROM..TO; NULL: the statement's days */
    const char *grace;           /* --grace DURATION (Nd, Nh, Nm); NULL: 2d */
    const char *facts_path;      /* --facts FILE; NULL: the defaults */
    const char *discrepancies_path; /* --discrepancies PATH ("-": stdout; .csv: CSV) */
    repair_mode repair;          /* --repair missing|merge */
    /* settle (SPEC.md, "Settle: the money that arrives"; settle.h) */
    const char *fee_rate[MAX_FEE_RATES]; /* --fee-rate CHANNEL=RATE, as given */
    size_t n_fee_rate;
    const char *settle_window;   /* --settle-window MIN..MAX; NULL: 0..3d */
    /* SIGINT/SIGTERM: milliseconds to wait for cancelled queries before the
     * connections are closed (--cancel-wait; all connections together). */
    int cancel_wait_ms;
} config;

/* Fills cfg with the defaults of every option. */
void config_defaults(config *cfg);

#endif
