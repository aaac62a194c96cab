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
 * local timestamps and the columns already in UTC, where the file states
 * its own row count, money totals and footer counts, the row's merchant
 * (for --tenant-map), and the money facts per kind (for reconcile).
 *
 * Ownership: profile_builtin()/profile_load_file() return a profile freed
 * with profile_free(), which sets the caller's pointer to NULL (and frees
 * the tenant map it was given).  The command line's overrides are applied
 * once, before any reading starts; after that nothing in a profile
 * changes, so reading threads share it.
 */
#ifndef IDEMLOAD_PROFILE_H
#define IDEMLOAD_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/record.h"
#include "rules/timezone.h"
#include "util/buf.h"

typedef enum profile_encoding { PROFILE_UTF8, PROFILE_GBK } profile_encoding;

typedef enum unmapped_action {
    UNMAPPED_REJECT,    /* a value the map does not list rejects the row */
    UNMAPPED_SKIP       /* ... skips it (counted in rows_skipped) */
} unmapped_action;

/* One entry of a value map: a source value (a pattern where '*' stands for
 * any run of characters) and the templates it yields: the first whose
 * columns are all present and not empty (a Stripe refund's key is its
 * source_id, else its balance_transaction_id). */
typedef struct map_entry {
    char *match;
    char **result;
    size_t n_result;
} map_entry;

/*
 * How one of idemload's columns is filled, in this order:
 * - from: the first of these source columns present in the header whose
 *   value (after cleanup) is not empty; with no map, that value itself;
 * - with: more source columns (the first present and not empty); the value
 *   looked up in the map is then "<from>/<with>" (PayPal's event code and
 *   its direction: "T0006/CR");
 * - map: the value of `from` looked up; the entry's template is the result;
 * - fallback ("default" in the file): the template used when no `from`
 *   column of the header holds a value (a layout without a state column);
 * - value: a template ("refund:{商户退款单号}", or a constant) when there is
 *   no `from`.
 * Templates name source columns in braces; "{{" and "}}" are literal braces.
 */
typedef struct column_rule {
    bool set;                 /* the profile fills this column */
    char **from;
    size_t n_from;
    char **with;
    size_t n_with;
    map_entry *map;
    size_t n_map;
    unmapped_action unmapped;
    char *value;
    char *fallback;
} column_rule;

/*
 * A money fact of a bill's row (SPEC.md, "Money facts"): where the row
 * holds it.  column names a source column (its value after the profile's
 * cleanup, which is also the payload member of that name); value is a
 * constant instead (a currency the bill never states).  minor: the amount
 * is in the currency's minor unit (PayPal's cents), else major (yuan).
 * magnitude: the bill writes this kind's amount signed (a refund as
 * -30.00); the fact is its absolute value.  Neither column nor value: the
 * profile does not declare the fact.  column_alt: the column an older
 * layout of the bill names instead ("column": [C, ALT]; WeChat's 24-column
 * bills hold 总金额 where later ones hold 应结订单金额), read where the row
 * has no column.
 */
typedef struct money_fact {
    char *column;
    char *column_alt;       /* NULL: none */
    char *value;
    bool minor;
    bool magnitude;
} money_fact;

/* The money facts of one kind of row (the profile's own kind names, before
 * any --kind rename: "pay", "refund", "revoked"; NULL: every kind the
 * profile does not list).  amount, currency and fee are what reconcile
 * compares with the callbacks (the money a callback carries: WeChat's
 * 订单金额, not what is settled after a coupon); settlement holds the
 * amount and fee the channel settles (WeChat's 应结订单金额 / 退款金额 and
 * 手续费), in the same currency, for the settlement side (SPEC.md,
 * "Settle"); reconcile does not compare them. */
typedef struct money_kind {
    char *kind;
    money_fact amount;
    money_fact currency;
    money_fact fee;
    money_fact record;      /* the row's own transaction id (Stripe's
                               balance_transaction_id, PayPal's Transaction
                               ID): two rows of one key with different ids
                               are two records, not one listed twice */
    struct {
        money_fact amount;
        money_fact fee;
    } settlement;
} money_kind;

/*
 * The kinds a file of this profile can list, decided by its header
 * (SPEC.md, "Reconcile for finance"): the first rule whose header_has
 * columns are all in the file's header (a rule without any: every header)
 * names them (the profile's own kind names, before any --kind rename).  A
 * WeChat SUCCESS bill lists payments only, a REFUND bill (退款申请时间)
 * refunds only: reconcile leaves out the table's rows of the kinds the
 * other rules name.  No rules, or none that matches: every kind.
 */
typedef struct cover_rule {
    char **header_has;
    size_t n_header_has;
    char **kinds;
    size_t n_kinds;
} cover_rule;

/* At most this many rules (a reader notes the ones matched as bits). */
#define PROFILE_MAX_COVERS 32

/*
 * A money total the bill states, checked against its rows exactly (SPEC.md,
 * "Money facts"): in the summary's column `summary` (WeChat), or on the
 * framing line starting with `line`, after `label` (Alipay's "#交易合计：
 * 2笔，商家实收共99.00元").  `sum` is the rows' column it adds up, over the
 * rows of kind `kind` (the profile's own kind, before --kind; NULL: every
 * row).  A total the bill does not state is not checked.
 */
typedef struct money_total {
    char *summary;
    char *line;
    char *label;
    char *sum;
    char *sum_alt;      /* the column an older layout names instead ("sum":
                           [C, ALT]: WeChat's 收支金额（元） and 收支金额(元)) */
    char *kind;
    bool count;         /* the figure is how many rows (of kind) the bill
                           holds, not a sum (WeChat's 收入笔数); no "sum" */
} money_total;

/* Footer records that state a record count (PayPal's SC/RC/FF; its SF/RF
 * hold money totals per currency): the row type, and what it counts: the
 * data rows of its section (since the last section_start row), of the
 * report, or of the file.  A report split over
 * several files: a section footer is checked only when its section starts
 * in the file, a report footer only when the report does (report_start
 * seen, or the file starts at a section: neither report_start nor
 * file_start seen); a file footer always. */
typedef enum footer_scope { FOOTER_SECTION, FOOTER_REPORT, FOOTER_FILE } footer_scope;

typedef struct footer_count {
    char *row_type;
    footer_scope scope;
    bool optional;          /* checked only when its first value is a count:
                             * a footer some files state counts in (SPEC.md's
                             * SF "4") and others money (PayPal's SF "USD",...) */
} footer_count;

/* A --kind FROM=TO (copied). */
typedef struct profile_kind_rename {
    char *from;
    char *to;
} profile_kind_rename;

struct tenant_map;
struct profile_settle;

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
    cover_rule *covers;       /* the kinds a file lists, by its header */
    size_t n_covers;
    money_total *totals;      /* money totals the bill states */
    size_t n_totals;
    char **utc_columns;       /* source columns in UTC: never shifted by the zone */
    size_t n_utc_columns;
    char *refund_of;          /* the column naming, on a payment row, the
                                 payment and, on a refund row, the payment
                                 it refunds (Stripe's charge_id): a refund
                                 takes its payment's key (key_links.h) */
    char **merchant_from;     /* the row's merchant: the first of these columns */
    size_t n_merchant_from;   /* holding a value not in merchant_none */
    char **merchant_none;
    size_t n_merchant_none;
    footer_count *footers;    /* row_type framing: footers stating counts */
    size_t n_footers;
    char *section_start;      /* row type that starts a section (SH) */
    char *report_start;       /* row type of the report's header (RH) */
    char *file_start;         /* row type of a file's header (FH) */
    char *zone_row;           /* framing.row_type.zone: the row type whose
                                 first field is a time with the offset of
                                 the bill's own window (PayPal's SH): the
                                 zone reconcile cuts days in when neither
                                 --timezone nor timezone names one */
    struct profile_settle *settle; /* how a row becomes a settle row
                                      (profile_settle.h); NULL: none */
    /* From the command line, not the profile file (profile_add_kind_rename,
     * profile_set_tenant_map): */
    profile_kind_rename *renames;
    size_t n_renames;
    struct tenant_map *tenants; /* owned */
    char *tenant_map_path;
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
/* Does --profile name_or_path name a file (not a built-in)? */
bool profile_names_file(const char *name_or_path);

/* Overrides from the command line (NULL: keep the profile's).  encoding is
 * "utf-8" or "gbk".  False with *err on a bad value. */
bool profile_override(profile *p, const char *encoding, const char *timezone, buf *err);

/* --delimiter: overrides the profile's delimiter. */
void profile_override_delimiter(profile *p, char delimiter);

/* --kind FROM=TO: the kind part (before ':') FROM of the callback_type the
 * profile writes becomes TO.  False with *err on a bad or repeated FROM. */
bool profile_add_kind_rename(profile *p, const char *from, const char *to, buf *err);

/* --tenant-map: each row's tenant_id from its merchant (the profile's
 * merchant member).  Takes ownership of map (also on failure).  False with
 * *err when the profile names no merchant column. */
bool profile_set_tenant_map(profile *p, struct tenant_map *map, const char *path, buf *err);

/* The money facts of a row whose callback_type is ct (as loaded, after any
 * --kind rename): the kind part before ':' mapped back through the renames
 * to the profile's own kind; the entry for that kind, else the one with
 * kind NULL, else NULL. */
const money_kind *profile_money_for(const profile *p, const char *ct, size_t len);

/* The kinds a file whose header matched the covers rules in matched (a bit
 * per rule, as reader_covers_matched gives them) cannot list: those other
 * rules name and the matched ones do not (a WeChat SUCCESS bill: refund,
 * revoked), each under the name the rows carry after the profile's --kind
 * renames, into *kinds (a new array the caller frees with each of its
 * strings).  A kind no rule names (a table's own kind the bill never
 * writes) is not among them: reconcile still compares it.  False when none
 * is left out (no rule matched, or the profile declares none, or the rule
 * lists every kind: *kinds NULL, *n_kinds 0), or when memory runs out
 * (*oom set). */
bool profile_excluded_kinds(const profile *p, uint32_t matched, char ***kinds, size_t *n_kinds,
                            bool *oom);

/* The profile as a profile file (JSON, pretty, UTF-8, ending in a newline). */
bool profile_to_json(const profile *p, buf *out);

/* Does the profile check the file's own row count, money totals or footer
 * counts (needs a first pass)? */
bool profile_has_trailer(const profile *p);

/* A one-line description of a built-in, for `idemload profiles`. */
const char *profile_builtin_summary(const char *name);

/* The built-in's own profile file text (what profile_builtin parses), or
 * NULL when name is no built-in: `profiles NAME` must print its equal. */
const char *profile_builtin_source(const char *name);

void profile_free(profile **p);

#endif
