/*
 * profile_reader_parts.h - what the parts of the profile reader share: the
 * reader's state, and the functions each part gives the others.  The driver
 * (profile_reader.c) reads a bill line by line and calls the parts; the
 * parts never call the driver:
 *
 *   profile_lines.c   a bill's lines and fields: reading, converting to
 *                     UTF-8, splitting, cleaning
 *   profile_header.c  the header: its names, and the profile's column rules
 *                     compiled against it
 *   profile_row.c     a data row built into a record by the rules
 *   profile_totals.c  what the bill states of itself: counts, money totals,
 *                     footers, its summary, checked at the end
 *
 * Not for use outside these files; reader.h is the interface.
 */
#ifndef IDEMLOAD_PROFILE_READER_PARTS_H
#define IDEMLOAD_PROFILE_READER_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input/key_links.h"
#include "input/profile.h"
#include "input/reader_impl.h"
#include "input/transcode.h"
#include "rules/dec_total.h"
#include "util/name_set.h"

/* One piece of a compiled template: literal text, or a source column. */
typedef struct seg {
    char *lit;          /* owned; NULL for a column */
    size_t len;
    const char *name;   /* the column's name (points into the profile) */
    size_t name_len;
    int col;            /* header index, -1 when the header lacks it */
} seg;

typedef struct tmpl {
    seg *seg;
    size_t n, cap;      /* cap grows geometrically: linear in the segments */
} tmpl;

typedef struct rule_rt {
    const column_rule *r;
    int *from_idx;      /* per r->from: header index or -1 */
    int *with_idx;      /* per r->with: header index or -1 */
    tmpl value;
    tmpl fallback;
    tmpl **map;         /* per r->map: per result alternative */
} rule_rt;

/* A money total the bill states (profile.h, money_total) as it is read. */
typedef struct total_rt {
    int row_idx;        /* the rows' column it adds up; -1: not in the header */
    int summary_idx;    /* its summary column; -1: the summary lacks it */
    bool stated;
    dect stated_v;
    char stated_text[DECT_TEXT_MAX];
    dect sum;
} total_rt;

typedef enum pr_state { ST_ROWS, ST_SUMMARY_DATA, ST_AFTER_SUMMARY } pr_state;

typedef struct profile_reader {
    reader base;
    line_feed lf;
    const profile *pf;
    transcoder *tc;
    bool preset[COL_COUNT];
    bool at_eof;
    pr_state state;

    /* header */
    bool have_header;
    size_t ncols;
    buf hdr;                /* cleaned names, each followed by a NUL */
    size_t *hoff, *hlen;
    name_index hindex;      /* the header's names -> their index */
    buf hjson;              /* "name": for every column, back to back */
    size_t *hjoff, *hjlen;
    rule_rt rt[COL_COUNT];
    int count_idx;          /* summary column holding the count */

    /* the row count */
    uint64_t data_rows;
    uint64_t stated;
    bool have_count;

    /* money totals, merchants, footers (profile.h) */
    total_rt *tot;          /* per pf->totals */
    char totals_bad[256];   /* a row's amount that is not one: the first */
    uint64_t unsummed;      /* data rows unreadable or of the wrong width */
    int *merchant_idx;      /* per pf->merchant_from */
    key_links *links;       /* NULL: refunds keep their own key */
    int refund_of_idx;      /* pf->refund_of's header index; -1: none */
    char row_kind[64];      /* the row's kind (before --kind), "" when none */
    uint64_t section_base;  /* data_rows when the section started */
    bool section_here, saw_report_start, saw_file_start, saw_footer;
    /* a section, report or file opened whose count footer has not come */
    bool section_open, report_open, file_open;
    buf scratch;

    /* the record being read */
    buf raw;                /* original bytes of its lines */
    buf text;               /* the same in UTF-8 */
    buf lossy;              /* an unreadable record in UTF-8, its bad bytes
                               as U+FFFD (a reject's raw text) */
    uint64_t rec_line;
    buf vals;               /* split field values */
    size_t *voff, *vlen;
    size_t nvals, vcap;
    buf out;                /* built texts handed out */
    char msg[256];
    bool too_many_fields;   /* a record over READER_MAX_FIELDS: the file failed */
    char offset_text[8];    /* the fixed offset as "+HH:MM" */
    bool row_split;         /* the record handed out has the header's fields,
                               cleaned (reader_source_value) */
    bool framing_rows;      /* reader_options.framing_rows */
    bool values_only;       /* reader_options.values_only */
} profile_reader;

/* What became of a data row (pr_build_row): built, rejected (pr->msg says
 * why), skipped by its map, or out of memory. */
typedef enum row_outcome { ROW_OK, ROW_REJECT, ROW_SKIP, ROW_OOM } row_outcome;

/*
 * What advance's steps make of the current line: not decided yet (the next
 * step looks at it), taken (framing, a count, the header: read the next
 * line), or stop (advance returns the read_result the step set).
 */
typedef enum line_step { LINE_UNDECIDED, LINE_TAKEN, LINE_STOP, LINE_FRAMING } line_step;

/* A step that ends advance: *rr = r. */
static inline line_step stop(read_result *rr, read_result r)
{
    *rr = r;
    return LINE_STOP;
}

/* --- profile_lines.c ---------------------------------------------------- */

/* Whether s[0..n) starts with prefix. */
bool pr_starts_with(const char *s, size_t n, const char *prefix);
/* The length of the line break(s) that end s[0..n). */
size_t pr_break_len(const char *s, size_t n);
/* Whether rt[0..rn) is the row type name (false when name is NULL). */
bool pr_is_type(const char *rt, size_t rn, const char *name);
/* Appends the next physical line to pr->raw: 1, 0 at the end, -1 failed. */
int pr_read_line(profile_reader *pr, uint64_t *line);
/* Appends raw[from..] as UTF-8 to pr->text: 1, 0 not in the encoding
 * (pr->msg says where), -1 out of memory. */
int pr_to_text(profile_reader *pr, size_t from);
/* Splits a record into pr->vals: 1, 0 inside a quoted field, -1 out of
 * memory or too many fields. */
int pr_split_fields(profile_reader *pr, const char *s, size_t n);
/* The profile's cleanup of value i, in place. */
void pr_clean_value(profile_reader *pr, size_t i);
/* Appends s[0..n) to b as a JSON string; false out of memory. */
bool pr_json_escape(buf *b, const char *s, size_t n);

/* --- profile_header.c --------------------------------------------------- */

/* The header's index of a column name, -1 when the header lacks it. */
int pr_header_index(const profile_reader *pr, const char *name, size_t len);
/* Frees the rules compiled against the header. */
void pr_rules_free(profile_reader *pr);
/* The columns the profile expects of a header, for messages. */
void pr_expected_list(const profile *pf, const bool *preset, buf *b);
/* Takes the split values as the header; false with the reader failed. */
bool pr_take_header(profile_reader *pr);
/* Notes the first covers rule whose columns the header has. */
void pr_note_covers(profile_reader *pr);

/* --- profile_row.c ------------------------------------------------------ */

/* Fills the record's fields from the split, cleaned values of a data row. */
row_outcome pr_build_row(profile_reader *pr, raw_record *out);

/* --- profile_totals.c --------------------------------------------------- */

/* reader_stated_total. */
bool pr_stated_total(const reader *r, size_t i, reader_total *out);
/* The end of input: the stated counts, money totals and footers checked. */
read_result pr_at_end(profile_reader *pr);
/* A framing line stating total i: its amount noted; false with the reader
 * failed when what follows the label is not an amount. */
bool pr_line_total(profile_reader *pr, size_t i, const char *t, size_t n, uint64_t line);
/* The summary's header line, then its data line; LINE_UNDECIDED for
 * another line. */
line_step pr_summary_line(profile_reader *pr, uint64_t line, read_result *rr);
/* A framing row type: section, report and file starts noted, a footer's
 * count checked; false (*rr set) on a mismatch. */
bool pr_footer_row(profile_reader *pr, const char *rt, size_t rn, read_result *rr);
/* The profile's zone row: the bill's window's zone kept. */
void pr_zone_row(profile_reader *pr);
/* Adds a data row's amounts to the totals of its kind. */
void pr_add_to_totals(profile_reader *pr, uint64_t line);

#endif
