/*
 * zip_source.c - the detail member of a zip archive, streamed (see
 * zip_source.h).
 *
 * Why not libzip or minizip: both find members through the central
 * directory at the end of the file, so they need a seekable file (no pipe)
 * and a second dependency, while the archives idemload reads are written
 * front to back by one tool.  Reading the local headers over zlib's raw
 * inflate (zlib is already linked for gzip) streams from anything, in the
 * memory of one inflate window.
 */
#include "input/zip_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "input/transcode.h"
#include "rules/utf8.h"
#include "util/buf.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_DESCRIPTOR 0x08074b50u

#define FLAG_ENCRYPTED 0x0001u
#define FLAG_DESCRIPTOR 0x0008u
#define FLAG_UTF8 0x0800u

typedef enum zstate { Z_AT_HEADER, Z_IN_MEMBER, Z_TAIL, Z_DONE, Z_FAILED } zstate;

/* The end record is 22 bytes and a comment of at most 65535. */
#define END_MAX (22 + 65535)

struct zip_stream {
    zstate state;
    z_stream zs;
    bool zs_live;
    uint64_t offset;        /* archive bytes consumed */
    buf err;
    buf name;               /* current member's name, UTF-8 for messages */
    buf detail_name;
    bool have_detail;
    /* the current member */
    bool wanted;
    uint16_t flags, method;
    uint32_t crc_expected;
    uint64_t csize, usize;  /* from the header (or its zip64 extra) */
    bool zip64;
    uint64_t left;          /* stored: bytes still to copy */
    uint64_t produced;
    bool ended;             /* deflate: the stream's end was seen */
    uint32_t crc;
    unsigned char scratch[4096];
    buf tail;               /* the last bytes of the central directory part */
};

static uint32_t le16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
    return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

bool zip_magic(const unsigned char *b, size_t n)
{
    return n >= 4 && le32(b) == SIG_LOCAL;
}

zip_stream *zip_stream_new(void)
{
    zip_stream *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    if (inflateInit2(&z->zs, -MAX_WBITS) != Z_OK) {
        free(z);
        return NULL;
    }
    z->zs_live = true;
    return z;
}

void zip_stream_free(zip_stream **zp)
{
    zip_stream *z = *zp;
    if (!z)
        return;
    if (z->zs_live)
        inflateEnd(&z->zs);
    buf_free(&z->err);
    buf_free(&z->name);
    buf_free(&z->detail_name);
    buf_free(&z->tail);
    free(z);
    *zp = NULL;
}

const char *zip_stream_error(const zip_stream *z)
{
    return buf_cstr(&z->err);
}

static ssize_t fail(zip_stream *z, const char *what)
{
    if (z->state != Z_FAILED) {
        buf_clear(&z->err);
        buf_printf(&z->err, "%s", what);
    }
    z->state = Z_FAILED;
    return -1;
}

static void consume(zip_stream *z, const zip_io *io, size_t n)
{
    io->consume(io->ctx, n);
    z->offset += n;
}

/* Copies (dst non-NULL) or skips n archive bytes; false at a fault. */
static bool take(zip_stream *z, const zip_io *io, unsigned char *dst, uint64_t n)
{
    while (n > 0) {
        const unsigned char *p;
        size_t avail;
        if (!io->need(io->ctx, 1, &p, &avail)) {
            z->state = Z_FAILED;
            return false;
        }
        if (avail == 0) {
            buf_clear(&z->err);
            buf_printf(&z->err, "truncated zip: the input ends inside member \"%s\" at byte %llu",
                       buf_cstr(&z->name), (unsigned long long)z->offset);
            z->state = Z_FAILED;
            return false;
        }
        size_t k = avail < n ? avail : (size_t)n;
        if (dst) {
            memcpy(dst, p, k);
            dst += k;
        }
        consume(z, io, k);
        n -= k;
    }
    return true;
}

/* The member's name as UTF-8 for messages and the summary test. */
static void set_name(zip_stream *z, const unsigned char *raw, size_t n)
{
    buf_clear(&z->name);
    if ((z->flags & FLAG_UTF8) || utf8_check((const char *)raw, n, NULL, NULL)) {
        buf_append(&z->name, raw, n);
        return;
    }
    buf ignore = BUF_INIT;
    transcoder *t = transcoder_open("GBK", &ignore);
    size_t bad;
    if (!t || transcoder_run(t, (const char *)raw, n, &z->name, &bad) != 1) {
        buf_clear(&z->name);
        for (size_t i = 0; i < n; i++)
            buf_printf(&z->name, raw[i] >= 0x20 && raw[i] < 0x7f ? "%c" : "\\x%02x", raw[i]);
    }
    transcoder_close(&t);
    buf_free(&ignore);
}

static bool is_summary(const zip_stream *z)
{
    return strstr(buf_cstr(&z->name), "\xe6\xb1\x87\xe6\x80\xbb") != NULL; /* 汇总 */
}

/* Reads a local header (its signature already seen).  Returns false on a
 * fault. */
static bool read_header(zip_stream *z, const zip_io *io)
{
    unsigned char h[26]; /* the local header after its signature */
    if (!take(z, io, h, sizeof h))
        return false;
    z->flags = (uint16_t)le16(h + 2);
    z->method = (uint16_t)le16(h + 4);
    z->crc_expected = le32(h + 10);
    z->csize = le32(h + 14);
    z->usize = le32(h + 18);
    size_t nlen = le16(h + 22), xlen = le16(h + 24);
    unsigned char *name = malloc(nlen ? nlen : 1);
    unsigned char *extra = malloc(xlen ? xlen : 1);
    bool ok = name && extra && take(z, io, name, nlen) && take(z, io, extra, xlen);
    if (ok) {
        set_name(z, name, nlen);
        z->zip64 = false;
        for (size_t i = 0; i + 4 <= xlen;) {
            size_t id = le16(extra + i), len = le16(extra + i + 2);
            if (i + 4 + len > xlen)
                break;
            if (id == 0x0001) {
                const unsigned char *q = extra + i + 4;
                size_t qn = len;
                z->zip64 = true;
                if (z->usize == 0xffffffffu && qn >= 8) {
                    z->usize = le64(q);
                    q += 8;
                    qn -= 8;
                }
                if (z->csize == 0xffffffffu && qn >= 8)
                    z->csize = le64(q);
            }
            i += 4 + len;
        }
    } else if (!name || !extra) {
        fail(z, "out of memory");
    }
    free(name);
    free(extra);
    return ok;
}

static bool start_member(zip_stream *z, const zip_io *io)
{
    if (!read_header(z, io))
        return false;
    char msg[600];
    const char *name = buf_cstr(&z->name);
    size_t nl = strlen(name);
    bool dir = nl > 0 && name[nl - 1] == '/';
    z->wanted = !dir && !is_summary(z);
    if (z->flags & FLAG_ENCRYPTED) {
        snprintf(msg, sizeof msg, "zip member \"%s\" is encrypted", name);
        fail(z, msg);
        return false;
    }
    if (z->method != 0 && z->method != 8) {
        snprintf(msg, sizeof msg, "zip member \"%s\" uses compression method %u; only stored "
                                  "and deflate are read", name, z->method);
        fail(z, msg);
        return false;
    }
    if (z->method == 0 && (z->flags & FLAG_DESCRIPTOR)) {
        snprintf(msg, sizeof msg, "zip member \"%s\" is stored with a data descriptor: its end "
                                  "cannot be found while streaming; unzip it first", name);
        fail(z, msg);
        return false;
    }
    if (z->wanted && z->have_detail) {
        snprintf(msg, sizeof msg, "the zip holds more than one detail member (\"%s\" and "
                                  "\"%s\"); give the CSV itself", buf_cstr(&z->detail_name), name);
        fail(z, msg);
        return false;
    }
    if (z->wanted) {
        z->have_detail = true;
        buf_clear(&z->detail_name);
        buf_append_str(&z->detail_name, name);
    }
    if (z->method == 8 && inflateReset(&z->zs) != Z_OK) {
        fail(z, "cannot restart the inflater");
        return false;
    }
    z->left = z->csize;
    z->ended = false;
    z->produced = 0;
    z->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    z->state = Z_IN_MEMBER;
    return true;
}

/* After a member's data: the descriptor, then the CRC and size checks. */
static bool end_member(zip_stream *z, const zip_io *io)
{
    char msg[600];
    if (z->flags & FLAG_DESCRIPTOR) {
        unsigned char d[24];
        const unsigned char *p;
        size_t avail;
        if (!io->need(io->ctx, 4, &p, &avail)) {
            z->state = Z_FAILED;
            return false;
        }
        if (avail >= 4 && le32(p) == SIG_DESCRIPTOR)
            consume(z, io, 4);
        size_t len = z->zip64 ? 20 : 12;
        if (!take(z, io, d, len))
            return false;
        z->crc_expected = le32(d);
        z->usize = z->zip64 ? le64(d + 12) : le32(d + 8);
    }
    if (z->crc != z->crc_expected || z->produced != z->usize) {
        snprintf(msg, sizeof msg, "corrupt zip: member \"%s\" fails its %s check",
                 buf_cstr(&z->name), z->crc != z->crc_expected ? "CRC-32" : "size");
        fail(z, msg);
        return false;
    }
    z->state = Z_AT_HEADER;
    return true;
}

static ssize_t truncated(zip_stream *z)
{
    char msg[600];
    snprintf(msg, sizeof msg, "truncated zip: the input ends inside member \"%s\" at byte %llu",
             buf_cstr(&z->name), (unsigned long long)z->offset);
    return fail(z, msg);
}

/* Reads the central directory to the end of input, keeping its last
 * END_MAX bytes, and requires the end record there: an archive cut inside
 * its central directory is as truncated as one cut inside a member. */
static ssize_t read_tail(zip_stream *z, const zip_io *io)
{
    for (;;) {
        const unsigned char *p;
        size_t avail;
        if (!io->need(io->ctx, 1, &p, &avail)) {
            z->state = Z_FAILED;
            return -1;
        }
        if (avail == 0)
            break;
        if (!buf_append(&z->tail, p, avail))
            return fail(z, "out of memory");
        consume(z, io, avail);
        if (z->tail.len > 2 * END_MAX) {
            memmove(z->tail.data, z->tail.data + z->tail.len - END_MAX, END_MAX);
            z->tail.len = END_MAX;
        }
    }
    const unsigned char *t = (const unsigned char *)z->tail.data;
    for (size_t i = z->tail.len >= 22 ? z->tail.len - 22 + 1 : 0; i-- > 0;)
        if (le32(t + i) == SIG_END && i + 22 + le16(t + i + 20) == z->tail.len) {
            z->state = Z_DONE;
            return 0;
        }
    return fail(z, "truncated zip: the archive's end record is missing (cut inside its central "
                   "directory)");
}

/* Produces member bytes into out (cap > 0): >0, 0 at the member's end, -1. */
static ssize_t member_bytes(zip_stream *z, const zip_io *io, unsigned char *out, size_t cap)
{
    if (z->method == 0) {
        if (z->left == 0)
            return 0;
        size_t k = z->left < cap ? (size_t)z->left : cap;
        const unsigned char *p;
        size_t avail;
        if (!io->need(io->ctx, 1, &p, &avail)) {
            z->state = Z_FAILED;
            return -1;
        }
        if (avail == 0)
            return truncated(z);
        if (k > avail)
            k = avail;
        memcpy(out, p, k);
        consume(z, io, k);
        z->left -= k;
        return (ssize_t)k;
    }
    if (z->ended)
        return 0;
    z->zs.next_out = out;
    z->zs.avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
    for (;;) {
        const unsigned char *p;
        size_t avail;
        if (!io->need(io->ctx, 1, &p, &avail)) {
            z->state = Z_FAILED;
            return -1;
        }
        if (avail == 0)
            return truncated(z);
        z->zs.next_in = (Bytef *)p;
        z->zs.avail_in = (uInt)(avail > UINT32_MAX ? UINT32_MAX : avail);
        int rc = inflate(&z->zs, Z_NO_FLUSH);
        consume(z, io, avail - z->zs.avail_in);
        size_t produced = cap - z->zs.avail_out;
        if (rc == Z_STREAM_END) {
            z->ended = true;
            return (ssize_t)produced; /* 0 when nothing more: the end */
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            char msg[600];
            snprintf(msg, sizeof msg, "corrupt zip: member \"%s\" at byte %llu: %s",
                     buf_cstr(&z->name), (unsigned long long)z->offset,
                     z->zs.msg ? z->zs.msg : "bad deflate data");
            return fail(z, msg);
        }
        if (produced > 0)
            return (ssize_t)produced;
    }
}

ssize_t zip_stream_read(zip_stream *z, const zip_io *io, char *dst, size_t cap)
{
    for (;;) {
        switch (z->state) {
        case Z_FAILED:
            return -1;
        case Z_DONE:
            return 0;
        case Z_TAIL:
            return read_tail(z, io);
        case Z_IN_MEMBER: {
            unsigned char *out = z->wanted ? (unsigned char *)dst : z->scratch;
            size_t room = z->wanted ? cap : sizeof z->scratch;
            ssize_t n = member_bytes(z, io, out, room);
            if (n < 0)
                return -1;
            if (n > 0) {
                /* Held to its declared size as it inflates, not at its end:
                 * a member that says 100 bytes and inflates to 20,000 rows
                 * stops here, before a byte past its size reaches a row. */
                if (!(z->flags & FLAG_DESCRIPTOR) && z->produced + (uint64_t)n > z->usize) {
                    char msg[700];
                    snprintf(msg, sizeof msg, "corrupt zip: member \"%s\" inflates past its "
                                              "declared size of %llu bytes",
                             buf_cstr(&z->name), (unsigned long long)z->usize);
                    return fail(z, msg);
                }
                z->crc = (uint32_t)crc32(z->crc, out, (uInt)n);
                z->produced += (uint64_t)n;
                if (z->wanted)
                    return n;
                continue;
            }
            if (!end_member(z, io))
                return -1;
            continue;
        }
        case Z_AT_HEADER: {
            const unsigned char *p;
            size_t avail;
            if (!io->need(io->ctx, 4, &p, &avail)) {
                z->state = Z_FAILED;
                return -1;
            }
            if (avail < 4)
                return fail(z, "truncated zip: the input ends before the archive's central "
                               "directory");
            uint32_t sig = le32(p);
            if (sig == SIG_CENTRAL || sig == SIG_END || sig == SIG_END64) {
                if (!z->have_detail)
                    return fail(z, "the zip holds no detail member (only a summary or nothing)");
                z->state = Z_TAIL;
                continue;
            }
            if (sig != SIG_LOCAL) {
                char msg[120];
                snprintf(msg, sizeof msg, "corrupt zip: no member header at byte %llu",
                         (unsigned long long)z->offset);
                return fail(z, msg);
            }
            consume(z, io, 4);
            if (!start_member(z, io))
                return -1;
            continue;
        }
        }
    }
}
