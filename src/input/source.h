/*
 * source.h - the bytes of one input: a file or standard input, gzip or plain.
 *
 * gzip is recognised by its magic bytes, never by the name.  A multi-member
 * gzip stream (cat a.gz b.gz) is read to its end; anything after a member
 * that is not another gzip member is reported as corrupt rather than
 * silently ignored, and a stream that ends inside a member is reported as
 * truncated, with how far it got.  A zip archive (recognised by its magic
 * bytes too) yields its one detail member, streamed (zip_source.h).  Plain
 * input is passed through unchanged.
 *
 * Ownership: source_open() returns a source the caller frees with
 * source_close(), which sets the caller's pointer to NULL.
 */
#ifndef IDEMLOAD_SOURCE_H
#define IDEMLOAD_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "input/s3.h"
#include "util/buf.h"

typedef struct source source;

/*
 * What names an input before it is read, for the ledger and the report.
 * A file: the SHA-256 of its bytes (read once, whole) and its size.  An
 * object: one HEAD request, its size and ETag; its digest is then the
 * SHA-256 of its bucket, key, size and ETag (s3_identity_digest), so a
 * rerun knows it without downloading it, and a new version is a new file.
 */
typedef struct source_identity {
    char digest[65];
    int64_t size;
    bool object;            /* an object: head holds what the HEAD said */
    s3_head head;
} source_identity;

/* Identifies path (a file or an object; not a stream).  False with a
 * message naming it in *err. */
bool source_identify(const char *path, source_identity *id, buf *err);

/* source_open() of what source_identify() named: an object is read pinned
 * to the version identified (another version fails the read), a file as
 * source_open() reads it. */
source *source_open_identified(const char *path, const source_identity *id, buf *err);

/*
 * Opens path ("-" is standard input; an object URL is identified with a
 * HEAD first).  Returns NULL and writes a message
 * naming the path into *err when it cannot be opened or read at all.
 */
source *source_open(const char *path, buf *err);

/* Can path be read only once: "-" (standard input), a pipe (`<(zcat f.gz)`
 * is /dev/fd/63), a FIFO, a device?  Such a file is not hashed first, nor
 * read twice: a first pass would consume what the load must read (it left
 * nothing, and a load of 0 rows said exit 0).  False for a regular file,
 * and for a path that cannot be looked at (opening it will say why). */
bool source_path_is_stream(const char *path);

/* The gzip inflaters.  DEFAULT is ISA-L's when the build has it, else
 * zlib's; zlib's is always built. */
typedef enum {
    SOURCE_INFLATE_DEFAULT,
    SOURCE_INFLATE_ZLIB,
    SOURCE_INFLATE_ISAL
} source_inflate;

/* Whether this build has that inflater. */
bool source_inflate_built(source_inflate which);
/* "zlib" or "isa-l": the inflater `which` stands for in this build. */
const char *source_inflate_name(source_inflate which);
/* source_open() with the inflater named (one this build has, or NULL with a
 * message): for the tests and the fuzz target that hold both to the same
 * results. */
source *source_open_with(const char *path, source_inflate which, buf *err);

/*
 * Reads up to cap decoded bytes into dst.  Returns the count (> 0), 0 at the
 * clean end of the input, or -1 on a read error, truncation or corruption;
 * source_error() then says what and where.  After -1 or 0 it keeps
 * returning the same.
 */
ssize_t source_read(source *src, char *dst, size_t cap);

/* The last error's text ("" if none): names the input and the offsets. */
const char *source_error(const source *src);

bool source_is_gzip(const source *src);
/* An object read to its end: the SHA-256 hex of its bytes; "" otherwise
 * (a file, or an object not read through). */
const char *source_object_sha256(const source *src);
/* Bytes consumed from the underlying file so far (compressed bytes). */
uint64_t source_raw_offset(const source *src);
/* Size of the underlying file, or -1 when unknown (a pipe). */
int64_t source_raw_size(const source *src);
/* Decoded bytes handed out so far. */
uint64_t source_decoded_offset(const source *src);

void source_close(source **src);

#endif
