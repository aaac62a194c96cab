/*
 * transcode.h - text in a channel's encoding (GBK) to UTF-8, through
 * glibc's iconv.
 *
 * Works on whole lines: GBK's trail bytes are never a line break, comma,
 * quote or '#', so a GBK file can be split into lines and fields before or
 * after conversion alike, and a bad byte sequence spoils only its line.
 * Ownership: transcoder_open() returns an object freed by
 * transcoder_close(), which sets the caller's pointer to NULL.
 */
#ifndef IDEMLOAD_TRANSCODE_H
#define IDEMLOAD_TRANSCODE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

typedef struct transcoder transcoder;

/* A converter from encoding `from` (an iconv name: "GBK") to UTF-8; NULL
 * with the reason in *err when iconv does not know it. */
transcoder *transcoder_open(const char *from, buf *err);

/*
 * Appends in[0..n) converted to UTF-8 to *out.  Returns 1 on success, 0
 * when in holds a byte sequence invalid (or cut short) in the source
 * encoding, with its offset in *bad_off (*out then holds an unspecified
 * part), -1 when out of memory.  Pure ASCII is copied without iconv.
 */
int transcoder_run(transcoder *t, const char *in, size_t n, buf *out, size_t *bad_off);

/*
 * The same, never failing on the text: a byte that does not start a valid
 * sequence becomes U+FFFD and the conversion goes on after it, so a bill
 * line with one bad byte still shows its Chinese (a rejected row's "raw").
 * Returns false only when out of memory.
 */
bool transcoder_run_lossy(transcoder *t, const char *in, size_t n, buf *out);

void transcoder_close(transcoder **t);

#endif
