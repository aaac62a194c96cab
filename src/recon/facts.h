/*
 * facts.h - what reconcile compares and over which days (SPEC.md,
 * "Reconcile"): where each side keeps its money facts, the ISO 4217
 * exponents that scale minor units, the --period and the --grace.
 *
 * Nothing here touches the database or an amount's value: amounts are
 * parsed and compared as PostgreSQL numerics (recon_sql.h), never as
 * doubles.  A fact location is a payload path ("amount.total") or a
 * constant ("CNY"), with its unit.
 *
 * Ownership: facts_load() fills a facts_map freed by facts_free();
 * stmt_facts_from_profile() fills a stmt_facts freed by stmt_facts_free().
 */
#ifndef IDEMLOAD_RECON_FACTS_H
#define IDEMLOAD_RECON_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct profile;
struct config;

typedef enum recon_fact { FACT_AMOUNT, FACT_CURRENCY, FACT_FEE, FACT_TIME, FACT_COUNT } recon_fact;

/* Where one fact is: path (dotted payload path) or constant; neither: not
 * declared.  minor: minor units of the currency; magnitude: compare the
 * absolute value. */
typedef struct fact_loc {
    char *path;
    char *path_alt;     /* a statement's: the member an older layout holds
                           instead (a profile's [C, ALT]); NULL: none */
    char *constant;
    bool minor;
    bool magnitude;
    bool one_member;    /* path is one member's name, dots and all */
} fact_loc;

/* The path as a PostgreSQL text[] literal for #>> ("{\"amount\",\"total\"}"):
 * split at '.' unless one_member; appended to *out.  False when out of
 * memory. */
bool fact_path_literal(const fact_loc *l, buf *out);

static inline bool fact_declared(const fact_loc *l)
{
    return l->path || l->constant;
}

/* The table's facts of one channel and kind, resolved: every level's gaps
 * filled from the level above (kind, channel, "default", then the built-in
 * defaults).  channel NULL: the default; kind NULL: the channel's own. */
typedef struct facts_entry {
    char *channel;
    char *kind;
    fact_loc f[FACT_COUNT];
} facts_entry;

typedef struct facts_map {
    facts_entry *e;
    size_t n, cap;
} facts_map;

/* A --facts file larger than this is refused (exit 2): it names a few
 * paths per channel and kind, and its cost must stay bounded. */
#define FACTS_MAX_BYTES (1024 * 1024)

/*
 * Reads --facts (path NULL: only the defaults: amount in major units at
 * "amount", currency at "currency").  False with a message naming the file
 * and the bad member in *err (exit 2).
 */
bool facts_load(const char *path, facts_map *out, buf *err);
/* The same from JSON text (origin names it in messages). */
bool facts_parse(const char *json, size_t len, const char *origin, facts_map *out, buf *err);
void facts_free(facts_map *m);

/* The statement's facts per kind (kind NULL: every other kind). */
typedef struct stmt_facts_entry {
    char *kind;
    fact_loc f[FACT_COUNT];     /* FACT_TIME unused: the row's received_at */
    fact_loc record;            /* the row's own transaction id; undeclared:
                                   two rows are one record when their
                                   payloads are equal */
} stmt_facts_entry;

typedef struct stmt_facts {
    stmt_facts_entry *e;
    size_t n;
} stmt_facts;

/*
 * The statement side: a canonical file's payload "amount" (major) and
 * "currency" (p NULL); a profile's money facts per kind, each kind under
 * the name the rows carry after cfg's --kind renames.  False when out of
 * memory.
 */
bool stmt_facts_from_profile(const struct profile *p, const struct config *cfg, stmt_facts *out);
void stmt_facts_free(stmt_facts *s);

/* ISO 4217 minor-unit exponent of a currency code (case-insensitive): 2
 * for CNY and USD, 0 for JPY, 3 for KWD ...; -1 when the table does not
 * know the code.  recon_exponent_at(i) walks the table (false past it). */
int currency_exponent(const char *code);
bool currency_exponent_at(size_t i, const char **code, int *exponent);

/* --period: "YYYY-MM-DD" or "FROM..TO" (inclusive, FROM <= TO), copied into
 * from/to as "YYYY-MM-DD".  False with *err. */
bool recon_parse_period(const char *s, char from[11], char to[11], buf *err);

/* --grace: "Nd", "Nh" or "Nm" as seconds.  False with *err. */
bool recon_parse_duration(const char *s, int64_t *seconds, buf *err);

#endif
