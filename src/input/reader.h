/*
 * reader.h - turns a source's bytes into raw records, CSV or NDJSON.
 *
 * A reader never sees the database.  It reads the source incrementally, so
 * memory is bounded by the longest record (READER_MAX_RECORD), not the file.
 * Ownership: reader_open() takes no ownership of the source; the caller
 * closes the reader (reader_close sets the pointer to NULL), then the source.
 */
#ifndef IDEMLOAD_READER_H
#define IDEMLOAD_READER_H

#include <stdbool.h>

#include "core/formats.h"
#include "util/buf.h"
#include "core/record.h"
#include "input/source.h"

/* A record longer than this stops the file (likely an unterminated quote).
 * 32 MiB: a record is copied a few times on its way to the table (its raw
 * text, its fields, the validated row, the COPY line), and peak RSS stays
 * under 256 MiB for any input (SPEC.md "Hostile input"). */
#define READER_MAX_RECORD ((size_t)32 << 20)
/* A record of more fields than this stops the file the same way: each field
 * costs its offset and length, so 60 million empty fields (60 MB, a 61 KB
 * gzip) would cost over a gigabyte; a header of 80,000 columns is well
 * inside it. */
#define READER_MAX_FIELDS ((size_t)1 << 20)

struct profile;
struct key_links;

typedef struct reader_options {
    input_format format;          /* CSV or NDJSON, never AUTO; ignored with a profile */
    const struct profile *profile;/* non-NULL: a channel bill read by this
                                     profile (profile_reader.c) */
    char delimiter;               /* CSV only */
    bool preset[COL_COUNT];       /* columns --set supplies */
    struct key_links *links;      /* the command's payments' keys, for a
                                     profile with refund_of; NULL: none */
    bool framing_rows;            /* a profile with row types: framing rows
                                     after the header (PayPal's SH, SF, RF)
                                     are handed out too, skipped, their
                                     values by reader_source_value (the
                                     first is the row type); settle checks
                                     the money SF and RF state */
    bool values_only;             /* a profile's rows read for their values
                                     alone (settle): no payload is built,
                                     the record's payload is "{}" */
} reader_options;

typedef struct reader reader;

typedef enum read_result {
    READ_RECORD,  /* *out holds a record (possibly with out->error set) */
    READ_EOF,     /* clean end of input */
    READ_FAILED   /* the file cannot go on: reader_error() says why; every
                     later call returns READ_FAILED again */
} read_result;

/*
 * Opens a reader on src.  For CSV this reads the header at once; a header
 * lacking a required column that --set does not supply, or naming a column
 * twice, fails: returns NULL with the message in *err.
 */
reader *reader_open(source *src, const char *path, const reader_options *opt, buf *err);
read_result reader_next(reader *r, raw_record *out);
const char *reader_error(const reader *r);
void reader_close(reader **r);

/*
 * Whether records from r may hold invalid UTF-8 or a NUL byte that the
 * reader has not already rejected, so that validation must check their raw
 * text (CSV: libcsv splits bytes; the NDJSON and profile readers check
 * every line themselves).
 */
bool reader_records_need_utf8_check(const reader *r);

/* Does the file's header name column c (a CSV file; NDJSON and channel
 * bills have none)?  --set supplies a column a file lacks: where the
 * header has it, the file's values are taken, and the caller says so. */
bool reader_header_names(const reader *r, column c);

/* At the end of a channel bill that states money totals: how many of its
 * rows could not be counted in them (unreadable, or rejected before their
 * kind was known), so that the totals were not checked; 0 when they were,
 * or when the bill states none.  The caller says so: a bill edited beside
 * such a row is not caught. */
uint64_t reader_money_unchecked(const reader *r);

/* The offset ("-07:00") of the window a channel bill states for itself
 * (PayPal's SH: the profile's framing.row_type.zone), once the reader has
 * passed it; NULL when the bill states none. */
const char *reader_window_zone(const reader *r);

/* A channel bill's covers rules (profile.h) that its header matched, a bit
 * per rule (a file with several headers, such as PayPal's sections: each
 * header's rule); 0 for a file without a profile or of a profile that
 * declares none: every kind.  Complete once the header is read. */
uint32_t reader_covers_matched(const reader *r);
/* A money total a bill states, as its rows were checked against it (a
 * profile's trailer totals, profile.h money_total): where it is stated
 * (the summary's column, or the framing line's label), the rows' column
 * it adds up and of which kind (NULL: every row), the figure as the bill
 * writes it and the rows' sum.  The strings are the reader's: valid until
 * it is closed. */
typedef struct reader_total {
    const char *label;
    const char *column;
    const char *kind;
    const char *stated;
    char rows_sum[48];
} reader_total;
/* The i-th money total the bill stated, once it was read to the end and
 * its totals checked; false past the last (or for a file without any, or
 * one whose totals could not be checked). */
bool reader_stated_total(const reader *r, size_t i, reader_total *out);

/* A channel bill's source column called name (after the profile's
 * cleanup of the header): its index, -1 when the header has none or the
 * reader reads no channel bill.  Valid once the reader is open; a file
 * whose later header (PayPal's sections) differs may move it. */
int reader_source_column(const reader *r, const char *name);
/* The record just read: its value of source column idx, after the
 * profile's cleanup (len bytes, not NUL-terminated); NULL when idx is -1
 * or the record could not be split into its header's fields (its error
 * says why).  Valid until the next reader_next().  settle reads a
 * channel's settlement-side file this way (settle_channel.c). */
const char *reader_source_value(const reader *r, int idx, size_t *len);

/* Has the section (report: the report) whose footer was just handed out
 * started in this file?  A split report's later file holds the end of a
 * section begun in an earlier one, whose footer it cannot check (the
 * rules footer counts follow, profile.h footer_count). */
bool reader_scope_here(const reader *r, bool report);

/* Internal constructors, one per format (csv_reader.c, ndjson_reader.c). */
reader *csv_reader_open(source *src, const char *path, const reader_options *opt, buf *err);
reader *ndjson_reader_open(source *src, const char *path, const reader_options *opt, buf *err);
reader *profile_reader_open(source *src, const char *path, const reader_options *opt, buf *err);

#endif
