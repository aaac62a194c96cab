/*
 * profile.h - how to read a file a payment channel publishes (SPEC.md,
 * "Channel exports: profiles"): the built-in profiles (wechat-trade,
 * alipay-trade, stripe-balance, paypal-stl) and custom ones from a JSON
 * file of the shape profile_to_json() prints.
 *
 * A profile says how to find the header among framing lines, how to clean
 * each field, which column feeds which of idemload's columns (a column, a
 * template such as "refund:{商户退款单号}", a constant, or a value map whose
 * unmapped values are skipped or rejected), the encoding, the time zone of
 * local timestamps, and where the file states its own row count.
 *
 * Ownership: profile_builtin()/profile_load_file() return a profile freed
 * with profile_free(), which sets the caller's pointer to NULL.  Nothing in
 * a profile changes after it is loaded, so reading threads share it.
 */
#ifndef IDEMLOAD_PROFILE_H
#define IDEMLOAD_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "input/record.h"
#include "rules/timezone.h"
#include "util/buf.h"

typedef enum profile_encoding { PROFILE_UTF8, PROFILE_GBK } profile_encoding;

typedef enum unmapped_action {
    UNMAPPED_REJECT,    /* a value the map does not list rejects the row */
    UNMAPPED_SKIP       /* ... skips it (counted in rows_skipped) */
} unmapped_action;

/* One entry of a value map: a source value (or a prefix, when it ends in
 * '*') and the template it yields. */
typedef struct map_entry {
    char *match;
    char *result;
} map_entry;

/*
 * How one of idemload's columns is filled, in this order:
 * - from: the first of these source columns present in the header whose
 *   value (after cleanup) is not empty; with no map, that value itself;
 * - map: the value of `from` looked up; the entry's template is the result;
 * - value: a template ("refund:{商户退款单号}", or a constant) when there is
 *   no `from`.
 * Templates name source columns in braces; "{{" and "}}" are literal braces.
 */
typedef struct column_rule {
    bool set;                 /* the profile fills this column */
    char **from;
    size_t n_from;
    map_entry *map;
    size_t n_map;
    unmapped_action unmapped;
    char *value;
} column_rule;

/*
 * A money fact of a bill's row (SPEC.md, "Money facts"): where the row
 * holds it.  column names a source column (its value after the profile's
 * cleanup, which is also the payload member of that name); value is a
 * constant instead (a currency the bill never states).  minor: the amount
 * is in the currency's minor unit (PayPal's cents), else major (yuan).
 * magnitude: the bill writes this kind's amount signed (a refund as
 * -30.00); the fact is its absolute value.  Neither column nor value: the
 * profile does not declare the fact.
 */
typedef struct money_fact {
    char *column;
    char *value;
    bool minor;
    bool magnitude;
} money_fact;

/* The money facts of one kind of row (the profile's own kind names, before
 * any --kind rename: "pay", "refund", "revoked"; NULL: every kind the
 * profile does not list). */
typedef struct money_kind {
    char *kind;
    money_fact amount;
    money_fact currency;
    money_fact fee;
} money_kind;

typedef struct profile {
    char *name;
    char *description;
    profile_encoding encoding;
    char *timezone;           /* as written; resolved into tz */
    tz_zone tz;
    char delimiter;
    char **skip_prefix;       /* lines starting so are framing, anywhere */
    size_t n_skip_prefix;
    char *row_type_header;    /* non-NULL: the first field is a row type; */
    char **row_type_data;     /* rows of this type name the columns, rows of */
    size_t n_row_type_data;   /* these types are data, the rest framing */
    char *end_prefix;         /* a line starting so ends the rows; the
                                 summary follows */
    char *strip_prefix;       /* cleanup of every field (and header name) */
    char *strip_suffix;
    bool trim;                /* Unicode white space at both ends */
    char *count_column;       /* trailer: the summary's column holding the
                                 row count (the line after end_prefix's) */
    char **count_lines;       /* trailer: lines starting so state counts */
    size_t n_count_lines;     /* (the first integer after the prefix), summed */
    column_rule col[COL_COUNT];
    money_kind *money;        /* the money facts, per kind (may be empty) */
    size_t n_money;
} profile;

/* Names of the built-in profiles, NULL-terminated. */
extern const char *const profile_builtin_names[];

/* The built-in profile name, or NULL (err set) when there is none. */
profile *profile_builtin(const char *name, buf *err);
/* Reads a profile file; NULL with a message naming the bad member. */
profile *profile_load_file(const char *path, buf *err);
/* Parses a profile from JSON text (what profile_load_file reads); origin
 * names it in messages. */
profile *profile_parse(const char *json, size_t len, const char *origin, buf *err);
/* NAME (a built-in) or PATH (ending .json, or containing '/'). */
profile *profile_load(const char *name_or_path, buf *err);

/* Overrides from the command line (NULL: keep the profile's).  encoding is
 * "utf-8" or "gbk".  False with *err on a bad value. */
bool profile_override(profile *p, const char *encoding, const char *timezone, buf *err);

/* The profile as a profile file (JSON, pretty, UTF-8, ending in a newline). */
bool profile_to_json(const profile *p, buf *out);

/* Does the profile check the file's own row count (needs a first pass)? */
bool profile_has_trailer(const profile *p);

/* A one-line description of a built-in, for `idemload profiles`. */
const char *profile_builtin_summary(const char *name);

void profile_free(profile **p);

#endif
