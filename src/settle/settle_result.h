/*
 * settle_result.h - what one `idemload settle` run found, gathered before
 * anything is rendered (STYLE "Gather, then render"): the files read, the
 * period, the figures per tenant, channel and day, each category's count,
 * the discrepancy lines kept as examples, what the register carried over
 * and resolved.  Internal to src/settle/.
 *
 * Ownership: a settle_result owns every string and array in it;
 * settle_result_free() releases them.
 */
#ifndef IDEMLOAD_SETTLE_RESULT_H
#define IDEMLOAD_SETTLE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum settle_category {
    SETTLE_FEE_MISMATCH,
    SETTLE_PAYOUT_MISMATCH,
    SETTLE_BALANCE_BREAK,
    SETTLE_PAYOUT_NOT_RECEIVED,
    SETTLE_UNEXPECTED_DEPOSIT,
    SETTLE_UNSETTLED_PAYMENT,
    SETTLE_CATEGORY_COUNT
} settle_category;

/* "fee_mismatch", ...; settle_category_of: -1 for none. */
const char *settle_category_name(settle_category c);
int settle_category_of(const char *name);

/* The examples of each category kept for the summary, report and page. */
#define SETTLE_EXAMPLES 20

/* One discrepancy (or pending) line, or a register item (carried over,
 * resolved): money as decimal text in the currency's minor unit. */
typedef struct settle_line {
    char *category;
    int64_t tenant_id;
    char *channel, *day, *subject, *currency;
    char *expected, *actual, *difference;   /* NULL: that side has none */
    char *file;                             /* NULL: none (a table row) */
    int64_t line;
    char *detail;           /* a JSON object's text (the linked kinds, the row
                               before a break, ...), NULL: none */
    bool pending;
    char *first_seen;       /* NULL: not registered (a dry run) */
    char *resolution;       /* a resolved item's; NULL otherwise */
    int64_t age_days;       /* a carried-over item's */
} settle_line;

typedef struct settle_lines {
    settle_line *v;
    size_t n, cap;
} settle_lines;

typedef struct settle_day {
    int64_t tenant_id;
    char *channel, *day;
    int64_t rows, pending, matched;
    char *categories;       /* JSON object {CATEGORY: count} */
    char *amounts;          /* JSON object {CURRENCY: "sum of |difference|"} */
} settle_day;

/* What each file was read as. */
typedef struct settle_file {
    const char *path;       /* borrowed: cfg->files */
    const char *reader;     /* "bank statement" or the profile's name (static/borrowed) */
    bool picked;            /* the profile was picked by the file's header */
    char *picked_name;      /* that profile's name (owned); reader points here */
    uint64_t channel_rows, bank_rows;
} settle_file;

typedef struct settle_result {
    bool compared;          /* the checks ran (every file read) */
    bool unreadable_time;   /* a row's time was no date: exit 3, nothing compared */
    bool dry_run;
    bool registered;        /* the register holds this run (committed) */
    int64_t run_id;
    char from[11], to[11];
    char *zone;
    bool zone_given;             /* --timezone or --profile named it; else each
                                    row's day is in its channel's own zone */
    bool has_bank, has_channel;
    settle_file *files;
    size_t n_files;
    settle_day *days;
    size_t n_days;
    uint64_t count[SETTLE_CATEGORY_COUNT];
    uint64_t pending;
    settle_lines examples;  /* at most SETTLE_EXAMPLES per category, and pending */
    uint64_t matched_reference, matched_amount, matched_day, day_credits, batches;
    settle_lines carried;   /* open items of earlier days */
    bool carried_unknown;   /* a dry run whose role may not read the register */
    settle_lines resolved;  /* items this run resolved */
    uint64_t opened;        /* items this run opened */
    uint64_t escalated;     /* pending items of earlier days now discrepancies */
} settle_result;

bool settle_has_discrepancies(const settle_result *r);
/* Appends a copy of *l's strings (moved: l's pointers are taken and l is
 * zeroed).  False when out of memory (l freed). */
bool settle_lines_push(settle_lines *ls, settle_line *l);
void settle_line_free(settle_line *l);
void settle_lines_free(settle_lines *ls);
void settle_result_free(settle_result *r);

#endif
