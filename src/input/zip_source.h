/*
 * zip_source.h - the detail member of a zip archive, as a stream of bytes
 * (Alipay's bill download: a .zip holding the detail CSV and a 汇总
 * summary CSV, both GBK, their names GBK without the UTF-8 flag).
 *
 * Read front to back through the local headers, inflating with zlib's raw
 * inflate, never seeking: a pipe works, and a 2 GB member streams through
 * in bounded memory (no temporary file, no central directory needed up
 * front).  Members whose name marks them as a summary (汇总, in UTF-8 or
 * GBK) and directories are skipped; exactly one other member must be
 * there, and it is what the reader gets.  Each member's CRC-32 and size
 * are checked, and the input must run through the central directory to its
 * end record: a zip cut
 * short is an error, never a quiet end.  Stored members with a data
 * descriptor (their end cannot be found without the central directory),
 * encrypted members and methods other than stored and deflate are refused
 * with a message saying so.
 *
 * Ownership: zip_stream_new() returns an object freed by zip_stream_free(),
 * which sets the caller's pointer to NULL.
 */
#ifndef IDEMLOAD_ZIP_SOURCE_H
#define IDEMLOAD_ZIP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where the archive's bytes come from (source.c's raw buffer). */
typedef struct zip_io {
    void *ctx;
    /* Makes at least want (<= 32) bytes available at *p, fewer only at the
     * end of input; *avail says how many.  False on a read error (the
     * provider keeps its message). */
    bool (*need)(void *ctx, size_t want, const unsigned char **p, size_t *avail);
    void (*consume)(void *ctx, size_t n);
} zip_io;

typedef struct zip_stream zip_stream;

/* True when b[0..n) starts like a zip archive (a local file header). */
bool zip_magic(const unsigned char *b, size_t n);

zip_stream *zip_stream_new(void);

/*
 * Reads up to cap bytes of the detail member into dst.  Returns the count
 * (> 0), 0 at the end of the archive, or -1: zip_stream_error() then says
 * what ("" when the provider's read failed).
 */
ssize_t zip_stream_read(zip_stream *z, const zip_io *io, char *dst, size_t cap);

const char *zip_stream_error(const zip_stream *z);

void zip_stream_free(zip_stream **z);

#endif
