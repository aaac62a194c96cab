/*
 * final_status.h - the final statuses of --final-status (SPEC.md: a row
 * whose status is final is never overwritten by a later version) written
 * out, in the one way every command writes them.
 *
 * The functions take the array and its length (config's final_status and
 * n_final_status), so it depends on no stage (core/, the vocabulary every
 * stage shares, below all of them).  The text
 * is appended to *out; false when memory ran out (out unchanged or
 * partly appended: discard it).
 */
#ifndef IDEMLOAD_FINAL_STATUS_H
#define IDEMLOAD_FINAL_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* As a smallint[] literal for a $n parameter: "{2,3}"; "{}" when n is 0. */
bool final_status_array(const int16_t *statuses, size_t n, buf *out);

/* As --final-status takes it, for a command line: "2,3"; "" when n is 0. */
bool final_status_option(const int16_t *statuses, size_t n, buf *out);

/* For people: "2, 3"; "" when n is 0. */
bool final_status_text(const int16_t *statuses, size_t n, buf *out);

/* Is status one of them? */
bool final_status_has(const int16_t *statuses, size_t n, long status);

#endif
