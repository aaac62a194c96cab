/*
 * recon_result.h - what one `idemload reconcile` run found (SPEC.md,
 * "Reconcile: the statement against the table, both ways"), gathered by
 * the coordinator (recon.c, through its parts) and rendered by
 * recon_render.c: the categories, the figures per tenant, channel and
 * day, the example lines, the items carried over, what --repair
 * inserted.  Plain data and its small helpers only: nothing here queries
 * or prints, so both sides use it and neither calls the other back.
 * Ownership: a recon_result owns all its strings; recon_result_free()
 * releases them.
 */
#ifndef IDEMLOAD_RECON_RESULT_H
#define IDEMLOAD_RECON_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

/* The categories of a discrepancy, in the order reports list them. */
typedef enum recon_category {
    CAT_MISSING_IN_TABLE,
    CAT_MISSING_IN_STATEMENT,
    CAT_AMOUNT_MISMATCH,
    CAT_CURRENCY_MISMATCH,
    CAT_STATUS_MISMATCH,
    CAT_DUPLICATE_IN_STATEMENT,
    CAT_NO_STATEMENT,
    CAT_COUNT
} recon_category;

const char *recon_category_name(recon_category c);
/* The category named s, or CAT_COUNT. */
recon_category recon_category_of(const char *s);

/* An amount per currency ("" when the rows state none). */
typedef struct recon_amount {
    char *currency;
    char *amount;       /* decimal text, major unit */
} recon_amount;

/* Money differences in one currency: their net and the sum of their
 * absolute values (decimal text, major unit). */
typedef struct recon_money {
    char *currency;
    char *net;
    char *gross;
} recon_money;

/* One side's rows and money: of a day (or the period), every kind
 * together, then per kind (the part of callback_type before ':': a
 * payment and a refund are never added up without the two also shown
 * apart); a kind's entry has a name and no kinds of its own. */
typedef struct recon_side {
    char *kind;                 /* an entry of kinds: its name; else NULL */
    uint64_t rows;
    uint64_t without_amount;    /* rows with no readable amount: in no total */
    recon_amount *amounts;
    size_t n_amounts;
    struct recon_side *kinds;   /* by name */
    size_t n_kinds;
} recon_side;

typedef struct recon_day {
    int64_t tenant_id;
    char *channel;
    char day[11];
    recon_side statement, table;
    uint64_t matched, unverified, pending;
    uint64_t cat_count[CAT_COUNT];
    uint64_t cat_without[CAT_COUNT];  /* lines with no difference: in no amount */
    char *cat_amount[CAT_COUNT];    /* sum of differences; NULL: none, or in several
                                     * currencies (never added up) */
    char *cat_amounts[CAT_COUNT];   /* the sums per currency, a JSON object's text */
    char *cat_shown[CAT_COUNT];     /* what a reader sees: "CNY 149.00", "JPY 100, USD 1.00" */
    char *cat_gross[CAT_COUNT];     /* the sums of the absolute differences per currency,
                                     * a JSON object's text (finance reads -0.01 and +0.01
                                     * as 0.02 of errors beside the net 0.00) */
    char *cat_gross_shown[CAT_COUNT]; /* ... as a reader sees them: "CNY 0.02"; NULL: none */
    char *ccy_sides;                /* the currency_mismatch lines' two sides: "statement
                                     * USD 10.00; table CNY 70.00"; NULL: none */
    recon_money *diffs;             /* the day's money differences per currency, each
                                     * key once (two lines of one key are one difference) */
    size_t n_diffs;
    uint64_t diff_keys;             /* keys whose difference is not zero */
} recon_day;

/* One side's facts on a line (present false: the side has no row).  fee
 * is shown because a fee that differs is an amount_mismatch too (SPEC's
 * categories have no fee of their own): the line says which differed. */
typedef struct recon_facts {
    bool present;
    char *amount, *currency, *fee, *time;   /* fee NULL: none declared or held */
    int status;
} recon_facts;

/* One row of the statement listing a key (a duplicate_in_statement
 * line's listings). */
typedef struct recon_listing {
    recon_facts facts;
    const char *file;       /* cfg->files[...] (argv) */
    int64_t line;
} recon_listing;

typedef struct recon_line {
    recon_category category;
    int64_t tenant_id;
    char *channel;
    char *out_trade_no;     /* NULL for no_statement */
    char *callback_type;
    char day[11];
    recon_facts statement, table;
    char *difference;       /* NULL: none (currencies differ) */
    const char *file;       /* cfg->files[...] (argv); NULL: a table row */
    int64_t line;
    char *first_seen;       /* NULL: not registered (dry run) */
    recon_listing *listed;  /* duplicate_in_statement: the rows listing the key, in
                             * file and line order, the first RECON_LISTED_MAX_TEXT; else NULL */
    size_t n_listed;
    int64_t listed_rows;    /* how many rows list it (n_listed may be fewer) */
} recon_line;

/* How many of a duplicated key's rows a line lists (SQL_RECON_LISTED). */
#define RECON_LISTED_MAX_TEXT "20"

/* An item of the register: an open discrepancy of an earlier day (carried
 * over), or one this run opened or resolved. */
typedef struct recon_carried {
    char *category;
    int64_t tenant_id;
    char *channel;
    char *out_trade_no, *callback_type;
    char day[11];
    int64_t age_days;
    char *difference;
    char *first_seen;
    char *resolution;       /* a resolved item: why; else NULL */
} recon_carried;

/* Some items of the register, the first RECON_CARRIED_LISTED of them, and
 * how many there are in all. */
typedef struct recon_items {
    recon_carried *items;
    size_t n;
    uint64_t total;
} recon_items;

/* Carried-over items a recon_result lists (the report's
 * "carried_over_items", oldest first); beyond them only the count,
 * "carried_over" (a register of a million open items is counted, not read
 * into memory and the report). */
#define RECON_CARRIED_LISTED 1000

/* A row --repair inserted: its key, and where the statement lists it. */
typedef struct recon_key {
    int64_t tenant_id;
    char *channel, *out_trade_no, *callback_type;
    char *file;             /* NULL: not stated */
    int64_t line;
} recon_key;

/* Inserted rows a recon_result lists by key (the report's
 * "repaired_keys"); beyond them only the count, "repaired" (a repair of a
 * million missing rows lists the first thousand, not a megabyte of keys
 * per thousand rows in the report). */
#define RECON_REPAIR_LISTED 1000

/* Lines of each category a recon_result keeps as examples (the page's);
 * every line goes to the discrepancies file as it is fetched. */
#define RECON_EXAMPLES 10

/* A status number and the channel's own words for it: the profile's
 * status map read backwards ("SUCCESS/REVOKED" for 2 in WeChat's). */
typedef struct recon_status_word {
    int status;
    char *words;
} recon_status_word;

/* A money total a bill states, beside the sum of the rows' column it adds
 * up (checked equal before anything was compared) and, when rendered, the
 * statement's compared amounts of that kind. */
typedef struct recon_stated {
    const char *file;       /* cfg->files[...] (argv) */
    char *label;            /* 应结订单总金额, 商家实收共, ... */
    char *column;           /* the rows' column it adds up */
    char *kind;             /* NULL: every row */
    char *stated;           /* as the bill writes it */
    char *rows_sum;
    bool comparable;        /* its column is the amount reconcile compares for
                               its kind (not a settlement or discount column) */
    bool magnitude;         /* ... compared as a magnitude (refunds: -50.00
                               stated, 50.00 compared) */
} recon_stated;

typedef struct recon_result {
    char from[11], to[11];      /* the period ("" when the statement had no row) */
    recon_status_word *statuses;  /* the profile's words per status (none: a
                                     canonical statement, or a constant status) */
    size_t n_statuses;
    recon_stated *stated;       /* the bills' own stated totals, in file order */
    size_t n_stated;
    char *zone;
    bool compared;              /* the comparison ran */
    recon_day *days;
    size_t n_days;
    recon_line *lines;          /* examples: the first RECON_EXAMPLES lines of each
                                   category, in the file's order */
    size_t n_lines;
    uint64_t cat_count[CAT_COUNT];
    recon_side total_statement, total_table;  /* every day of every pair together */
    uint64_t matched, unverified, pending;
    uint64_t outside_period;
    bool dry_run;
    bool registered;            /* the register was written (not a dry run) */
    bool seen_again;            /* some lines were items the register held open */
    int64_t run_id;
    recon_carried *carried;     /* the first RECON_CARRIED_LISTED, oldest first */
    size_t n_carried;
    uint64_t carried_over;      /* all of them */
    int64_t carried_oldest;     /* the age of the oldest, in days */
    bool carried_unknown;       /* a dry run that may not read the register */
    uint64_t appeared, resolved;
    uint64_t escalated;         /* of appeared: earlier days' pending items past
                                   their grace (carried over, not this run's verdict) */
    recon_items appeared_items; /* the discrepancies this run opened or escalated */
    recon_items resolved_items; /* the items it resolved */
    repair_mode repair;
    uint64_t repaired;          /* --repair: rows inserted */
    uint64_t repair_resolved;   /* of resolved: missing_in_table items whose
                                   rows the repair inserted */
    recon_key *repaired_keys;   /* --repair missing: the first RECON_REPAIR_LISTED
                                   inserted, in the files' order */
    size_t n_repaired_keys;
} recon_result;

/* The channel's words for status (the profile's map read backwards), or
 * NULL when the profile has none for it. */
const char *recon_status_words(const recon_result *r, int status);
/* Status as finance reads it: "SUCCESS (2)", or "2" without words. */
const char *recon_status_text(const recon_result *r, int status, char out[], size_t n);

/* Any discrepancy in this run's days? (Carried-over items do not count.) */
bool recon_has_discrepancies(const recon_result *r);
/* No discrepancy on that day (pending and unverified rows do not count). */
bool recon_day_balanced(const recon_day *d);
/* Frees a line's strings and zeroes it (a line not kept in a result). */
void recon_line_free(recon_line *l);
void recon_result_free(recon_result *r);
/* The register's part of r dropped (its transaction rolled back): not
 * registered, no run number, nothing appeared, resolved or escalated. */
void recon_result_unregister(recon_result *r);

#endif
