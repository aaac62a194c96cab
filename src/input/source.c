/*
 * source.c - plain or gzip bytes from a file or standard input (see
 * source.h).  gzip is inflated here member by member rather than with
 * gzread(), because gzread() silently ignores anything after a gzip member
 * that does not look like another member; for payment data a damaged
 * second member must be an error, not a quiet end of file.
 *
 * Two inflaters sit behind one step function (inflate_step): zlib's
 * inflate(), always built, and ISA-L's isal_inflate() when the build found
 * libisal (CMake IDEMLOAD_ISAL, which defines IDEMLOAD_HAVE_ISAL); the
 * latter is then the default, for it inflates in well under half zlib's
 * CPU time.  Both check the gzip header, the CRC-32 and the length; the member walk,
 * trailing garbage and truncation are decided here, the same for both.
 */
#include "input/source.h"

#include "input/zip_source.h"
#include "util/digest.h"
#include "util/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#ifdef IDEMLOAD_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

/* Buffer sizes.  The fuzz build (fuzz/CMakeLists.txt) shrinks them so that
 * refills, gzip member edges and read-ahead block edges happen inside
 * inputs of fuzzer size. */
#ifndef IDEMLOAD_RAW_CHUNK
#define IDEMLOAD_RAW_CHUNK (256 * 1024)
#endif
#ifndef IDEMLOAD_RA_BLOCK_SIZE
#define IDEMLOAD_RA_BLOCK_SIZE (256 * 1024)
#endif
#define RAW_CHUNK IDEMLOAD_RAW_CHUNK
#define RA_BLOCKS 4
#define RA_BLOCK_SIZE IDEMLOAD_RA_BLOCK_SIZE

typedef struct ra_block {
    char *data;
    size_t len;
    uint64_t raw_offset;    /* raw bytes consumed when the block was full */
} ra_block;

struct source {
    int fd;
    s3_object *obj;         /* an object: its bytes instead of fd's */
    bool owns_fd;
    char *name;             /* for messages: the path or "standard input" */
    bool gzip;
    zip_stream *zip;        /* a zip archive: its detail member (zip_source.h) */
    bool eof;               /* no more raw bytes */
    bool done;              /* no more decoded bytes */
    bool failed;
    source_inflate inflater;    /* SOURCE_INFLATE_ZLIB or _ISAL */
    z_stream zs;
    bool zs_live;
#ifdef IDEMLOAD_HAVE_ISAL
    struct inflate_state *isal; /* ~90 KiB, hence on the heap */
    bool isal_header_checked;   /* this member's CM and FLG bytes seen */
#endif
    bool member_open;       /* inside a gzip member */
    unsigned char *raw;     /* raw input buffer */
    size_t raw_len, raw_pos;
    uint64_t raw_offset;    /* raw bytes consumed */
    uint64_t raw_read;      /* raw bytes read from the fd */
    int64_t raw_size;
    uint64_t decoded;
    unsigned members;
    buf err;
    /* read-ahead: blocks decoded by the thread, consumed by source_read */
    pthread_t ra_thread;
    bool ra_live;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ra_block ra[RA_BLOCKS];
    size_t ra_head, ra_count, ra_pos;
    bool ra_done, ra_stop;
    bool interrupted;           /* the caller's wait ended by SIGINT/SIGTERM */
    buf interrupted_msg;        /* its message (the caller's thread only) */
    uint64_t consumed_raw, consumed_decoded;
};

static void set_error(source *s, const char *what)
{
    buf_clear(&s->err);
    buf_printf(&s->err, "%s: %s", s->name, what);
    s->failed = true;
}

/* Refills the raw buffer, keeping unconsumed bytes.  Returns false on a read
 * error (already recorded). */
static bool fill_raw(source *s)
{
    if (s->raw_pos > 0) {
        memmove(s->raw, s->raw + s->raw_pos, s->raw_len - s->raw_pos);
        s->raw_len -= s->raw_pos;
        s->raw_pos = 0;
    }
    while (s->raw_len < RAW_CHUNK && !s->eof) {
        /* The only place the read-ahead thread may be cancelled (see
         * source_close): a read from a pipe can block for ever. */
        ssize_t n;
        if (s->obj) {
            /* Not cancellable: source_close stops it (s3_object_stop). */
            n = s3_object_read(s->obj, s->raw + s->raw_len, RAW_CHUNK - s->raw_len);
            if (n < 0) {
                buf_clear(&s->err);
                buf_append_str(&s->err, s3_object_error(s->obj));
                s->failed = true;
                return false;
            }
        } else {
            pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
            n = read(s->fd, s->raw + s->raw_len, RAW_CHUNK - s->raw_len);
            pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        }
        if (n < 0) {
            if (errno == EINTR && !signals_interrupted())
                continue;
            buf_clear(&s->err);
            if (errno == EINTR) {
                buf_printf(&s->err, "%s: interrupted while waiting for input", s->name);
                s->failed = true;
                return false;
            }
            buf_printf(&s->err, "%s: read error after %llu bytes: %s", s->name,
                       (unsigned long long)s->raw_read, strerror(errno));
            s->failed = true;
            return false;
        }
        if (n == 0) {
            s->eof = true;
            break;
        }
        s->raw_len += (size_t)n;
        s->raw_read += (uint64_t)n;
        /* A pipe delivers in small pieces; do not wait for a full buffer. */
        break;
    }
    return true;
}

/* ---- the inflaters (see the head of this file) ---------------------------- */

typedef enum {
    STEP_MORE,          /* call again (more input or more output room) */
    STEP_MEMBER_END,    /* the member's trailer has been read and checked */
    STEP_FAILED         /* the data is corrupt: *why says how */
} step_result;

static source_inflate resolve_inflater(source_inflate which)
{
    if (which != SOURCE_INFLATE_DEFAULT)
        return which;
#ifdef IDEMLOAD_HAVE_ISAL
    return SOURCE_INFLATE_ISAL;
#else
    return SOURCE_INFLATE_ZLIB;
#endif
}

bool source_inflate_built(source_inflate which)
{
#ifdef IDEMLOAD_HAVE_ISAL
    (void)which;
    return true;
#else
    return which != SOURCE_INFLATE_ISAL;
#endif
}

const char *source_inflate_name(source_inflate which)
{
    return resolve_inflater(which) == SOURCE_INFLATE_ISAL ? "isa-l" : "zlib";
}

/* Starts s->inflater for the first member.  Returns false when it cannot. */
static bool inflater_start(source *s)
{
#ifdef IDEMLOAD_HAVE_ISAL
    if (s->inflater == SOURCE_INFLATE_ISAL) {
        s->isal = malloc(sizeof *s->isal);
        if (!s->isal)
            return false;
        isal_inflate_init(s->isal);
        s->isal->crc_flag = ISAL_GZIP;  /* header, CRC-32 and length checked */
        return true;
    }
#endif
    /* 16 + MAX_WBITS: gzip wrapper only, with its CRC and length check. */
    if (inflateInit2(&s->zs, 16 + MAX_WBITS) != Z_OK)
        return false;
    s->zs_live = true;
    return true;
}

/* Makes the inflater ready for the next member. */
static bool inflater_restart(source *s)
{
#ifdef IDEMLOAD_HAVE_ISAL
    if (s->isal) {
        isal_inflate_reset(s->isal);
        s->isal->crc_flag = ISAL_GZIP;
        s->isal_header_checked = false;
        return true;
    }
#endif
    return inflateReset(&s->zs) == Z_OK;
}

static void inflater_end(source *s)
{
    if (s->zs_live)
        inflateEnd(&s->zs);
    s->zs_live = false;
#ifdef IDEMLOAD_HAVE_ISAL
    free(s->isal);
    s->isal = NULL;
#endif
}

static step_result zlib_step(source *s, unsigned char *dst, size_t cap, size_t *used,
                             size_t *made, const char **why)
{
    size_t avail = s->raw_len - s->raw_pos;
    s->zs.next_in = s->raw + s->raw_pos;
    s->zs.avail_in = (uInt)avail;
    s->zs.next_out = dst;
    s->zs.avail_out = (uInt)cap;
    int rc = inflate(&s->zs, Z_NO_FLUSH);
    *used = avail - s->zs.avail_in;
    *made = cap - s->zs.avail_out;
    if (rc == Z_STREAM_END)
        return STEP_MEMBER_END;
    /* Z_BUF_ERROR: no progress possible, output full or input needed. */
    if (rc == Z_OK || rc == Z_BUF_ERROR)
        return STEP_MORE;
    *why = s->zs.msg ? s->zs.msg : "data error";
    return STEP_FAILED;
}

#ifdef IDEMLOAD_HAVE_ISAL
/* ISA-L's error codes in zlib's words, so that messages read alike. */
static const char *isal_why(int rc, const struct inflate_state *st)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK:
        return "invalid block";
    case ISAL_INVALID_SYMBOL:
        return "invalid code";
    case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
        return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
        /* ISA-L moves to FINISH before it compares the trailer. */
        return st->block_state == ISAL_BLOCK_FINISH ? "incorrect data or length check"
                                                    : "header crc mismatch";
    default:
        return "data error";
    }
}

static step_result isal_step(source *s, unsigned char *dst, size_t cap, size_t *used,
                             size_t *made, const char **why)
{
    struct inflate_state *st = s->isal;
    size_t avail = s->raw_len - s->raw_pos;
    *used = *made = 0;
    if (!s->isal_header_checked) {
        /* zlib refuses a method other than deflate and the reserved flag
         * bits as soon as it has the CM and FLG bytes; ISA-L ignores the
         * flag bits.  Check both here, in zlib's order, so that the two
         * inflaters refuse the same headers (the member starts at raw_pos). */
        if (avail < 4 && !s->eof)
            return STEP_MORE;   /* read_gzip reads more */
        if (avail >= 4) {
            if (s->raw[s->raw_pos + 2] != Z_DEFLATED) {
                *why = "unknown compression method";
                return STEP_FAILED;
            }
            if (s->raw[s->raw_pos + 3] & 0xe0) {
                *why = "unknown header flags set";
                return STEP_FAILED;
            }
        }
        s->isal_header_checked = true;
    }
    st->next_in = s->raw + s->raw_pos;
    st->avail_in = (uint32_t)avail;
    st->next_out = dst;
    st->avail_out = (uint32_t)cap;
    int rc = isal_inflate(st);
    *used = avail - st->avail_in;
    *made = cap - st->avail_out;
    if (rc < 0) {
        *why = isal_why(rc, st);
        return STEP_FAILED;
    }
    return st->block_state == ISAL_BLOCK_FINISH ? STEP_MEMBER_END : STEP_MORE;
}
#endif

/* Inflates from the raw buffer at raw_pos into dst: *used raw bytes
 * consumed, *made bytes written. */
static step_result inflate_step(source *s, unsigned char *dst, size_t cap, size_t *used,
                                size_t *made, const char **why)
{
#ifdef IDEMLOAD_HAVE_ISAL
    if (s->isal)
        return isal_step(s, dst, cap, used, made, why);
#endif
    return zlib_step(s, dst, cap, used, made, why);
}

static void *read_ahead(void *arg);

bool source_path_is_stream(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0)
        return true;
    if (s3_is_url(path))
        return false;   /* an object can be read again */
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* Opens path (or takes standard input for "-") into s->fd and s->name. */
static bool open_fd(source *s, const char *path, buf *err)
{
    if (strcmp(path, "-") == 0) {
        s->fd = STDIN_FILENO;
        s->name = strdup("standard input");
    } else {
        s->fd = open(path, O_RDONLY | O_CLOEXEC);
        s->owns_fd = true;
        s->name = strdup(path);
        if (s->fd < 0 && errno == EINTR && signals_interrupted()) {
            /* A FIFO no writer has opened yet: waiting, not unreadable. */
            buf_printf(err, "%s: interrupted while waiting for a writer to open it", path);
            s->owns_fd = false;
            return false;
        }
        if (s->fd < 0) {
            buf_printf(err, "%s: cannot open: %s", path, strerror(errno));
            s->owns_fd = false;
            return false;
        }
    }
    s->raw = malloc(RAW_CHUNK);
    if (!s->name || !s->raw) {
        buf_printf(err, "%s: out of memory", path);
        return false;
    }
    return true;
}

/* Starts reading the object id names into s->obj (instead of a fd). */
static bool open_object(source *s, const char *path, const source_identity *id, buf *err)
{
    s->fd = -1;
    s->name = strdup(path);
    s->raw = malloc(RAW_CHUNK);
    if (!s->name || !s->raw) {
        buf_printf(err, "%s: out of memory", path);
        return false;
    }
    s->obj = s3_object_open(path, &id->head, err);
    s->raw_size = id->head.size;
    return s->obj != NULL;
}

bool source_identify(const char *path, source_identity *id, buf *err)
{
    memset(id, 0, sizeof *id);
    if (!s3_is_url(path))
        return digest_file(path, id->digest, &id->size, err);
    id->object = true;
    if (!s3_head_object(path, &id->head, err))
        return false;
    id->size = id->head.size;
    if (!s3_identity_digest(path, &id->head, id->digest)) {
        buf_printf(err, "%s: out of memory", path);
        return false;
    }
    return true;
}

/* Refuses a directory; notes a regular file's size for progress. */
static bool check_file_type(source *s, const char *path, buf *err)
{
    struct stat st;
    if (s->obj)
        return true;
    if (fstat(s->fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            buf_printf(err, "%s: is a directory", path);
            return false;
        }
        if (S_ISREG(st.st_mode))
            s->raw_size = (int64_t)st.st_size;
    }
    return true;
}

/* Reads the magic bytes and starts the gzip or zip decoder they name
 * (plain bytes need none). */
static bool start_decoder(source *s, const char *path, buf *err)
{
    /* Sniff the magic bytes: read until four bytes are there or input ends. */
    while (s->raw_len < 4 && !s->eof) {
        if (!fill_raw(s)) {
            buf_append_str(err, buf_cstr(&s->err));
            return false;
        }
    }
    if (s->raw_len >= 2 && s->raw[0] == 0x1f && s->raw[1] == 0x8b) {
        s->gzip = true;
        if (!inflater_start(s)) {
            buf_printf(err, "%s: cannot start gzip decoder", path);
            return false;
        }
        s->member_open = true;
        s->members = 1;
    } else if (zip_magic(s->raw, s->raw_len)) {
        s->zip = zip_stream_new();
        if (!s->zip) {
            buf_printf(err, "%s: out of memory", path);
            return false;
        }
    }
    return true;
}

/* Allocates the read-ahead blocks and starts the thread that fills them. */
static bool start_read_ahead(source *s, const char *path, buf *err)
{
    for (int i = 0; i < RA_BLOCKS; i++) {
        s->ra[i].data = malloc(RA_BLOCK_SIZE);
        if (!s->ra[i].data) {
            buf_printf(err, "%s: out of memory", path);
            return false;
        }
    }
    if (pthread_create(&s->ra_thread, NULL, read_ahead, s) != 0) {
        buf_printf(err, "%s: cannot start the read-ahead thread", path);
        return false;
    }
    s->ra_live = true;
    return true;
}

source *source_open(const char *path, buf *err)
{
    return source_open_with(path, SOURCE_INFLATE_DEFAULT, err);
}

/* Opens path (id: what source_identify said of an object, else NULL). */
static source *open_source(const char *path, const source_identity *id, source_inflate which,
                           buf *err);

source *source_open_with(const char *path, source_inflate which, buf *err)
{
    if (s3_is_url(path)) {
        source_identity id;
        if (!source_identify(path, &id, err))
            return NULL;
        return open_source(path, &id, which, err);
    }
    return open_source(path, NULL, which, err);
}

source *source_open_identified(const char *path, const source_identity *id, buf *err)
{
    if (!id || !id->object)
        return source_open_with(path, SOURCE_INFLATE_DEFAULT, err);
    return open_source(path, id, SOURCE_INFLATE_DEFAULT, err);
}

static source *open_source(const char *path, const source_identity *id, source_inflate which,
                           buf *err)
{
    if (!source_inflate_built(which)) {
        buf_printf(err, "%s: this build has no %s inflater", path, source_inflate_name(which));
        return NULL;
    }
    source *s = calloc(1, sizeof *s);
    if (!s) {
        buf_printf(err, "%s: out of memory", path);
        return NULL;
    }
    s->inflater = resolve_inflater(which);
    s->raw_size = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (!(id ? open_object(s, path, id, err) : open_fd(s, path, err)) ||
        !check_file_type(s, path, err) ||
        !start_decoder(s, path, err) || !start_read_ahead(s, path, err)) {
        source_close(&s);
        return NULL;
    }
    return s;
}

static ssize_t read_plain(source *s, char *dst, size_t cap)
{
    if (s->raw_pos == s->raw_len) {
        if (s->eof) {
            s->done = true;
            return 0;
        }
        if (!fill_raw(s))
            return -1;
        if (s->raw_len == 0) {
            s->done = true;
            return 0;
        }
    }
    size_t n = s->raw_len - s->raw_pos;
    if (n > cap)
        n = cap;
    memcpy(dst, s->raw + s->raw_pos, n);
    s->raw_pos += n;
    s->raw_offset += n;
    return (ssize_t)n;
}

/* Called at the end of a member: decides between another member, a clean
 * end and trailing garbage.  Returns false on error (recorded). */
static bool next_member(source *s)
{
    s->member_open = false;
    for (;;) {
        if (s->raw_len - s->raw_pos >= 2 || s->eof)
            break;
        if (!fill_raw(s))
            return false;
    }
    size_t avail = s->raw_len - s->raw_pos;
    if (avail == 0) {
        s->done = true;
        return true;
    }
    if (avail >= 2 && s->raw[s->raw_pos] == 0x1f && s->raw[s->raw_pos + 1] == 0x8b) {
        if (!inflater_restart(s)) {
            set_error(s, "cannot restart gzip decoder");
            return false;
        }
        s->member_open = true;
        s->members++;
        return true;
    }
    char msg[160];
    snprintf(msg, sizeof msg,
             "corrupt gzip: unexpected data after member %u at byte %llu "
             "(%llu bytes decoded)", s->members,
             (unsigned long long)s->raw_offset, (unsigned long long)s->decoded);
    set_error(s, msg);
    return false;
}

/* Records where a member stopped short: at the end of the input. */
static void set_truncated(source *s)
{
    char msg[200];
    snprintf(msg, sizeof msg,
             "truncated gzip: input ends inside member %u after %llu "
             "compressed bytes (%llu bytes decoded)", s->members,
             (unsigned long long)s->raw_offset, (unsigned long long)s->decoded);
    set_error(s, msg);
}

static void set_corrupt(source *s, const char *why)
{
    char msg[200];
    snprintf(msg, sizeof msg,
             "corrupt gzip in member %u at compressed byte %llu (%llu bytes "
             "decoded): %s", s->members, (unsigned long long)s->raw_offset,
             (unsigned long long)s->decoded, why);
    set_error(s, msg);
}

/* The input ended inside a member.  zlib compares the CRC-32 as soon as it
 * has the trailer's first four bytes, ISA-L only once it has all eight; so
 * that a damaged member that eats into its trailer is called corrupt by
 * both, the CRC is compared here against the trailer bytes ISA-L holds. */
static void set_ended_inside_member(source *s)
{
#ifdef IDEMLOAD_HAVE_ISAL
    const struct inflate_state *st = s->isal;
    if (st && st->block_state == ISAL_CHECKSUM_CHECK && st->tmp_in_size >= 4) {
        const unsigned char *t = st->tmp_in_buffer;
        uint32_t crc = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
                       (uint32_t)t[3] << 24;
        if (crc != st->crc) {
            set_corrupt(s, "incorrect data check");
            return;
        }
    }
#endif
    set_truncated(s);
}

/* The inflater took nothing and gave nothing: it needs more input than the
 * raw buffer holds.  Reads more; false (recorded) when there is no more. */
static bool feed_stalled(source *s)
{
    if (s->eof) {
        set_ended_inside_member(s);
        return false;
    }
    if (s->raw_pos == 0 && s->raw_len == RAW_CHUNK) {
        set_corrupt(s, "the decoder made no progress");
        return false;
    }
    return fill_raw(s);
}

static ssize_t read_gzip(source *s, char *dst, size_t cap)
{
    size_t out = 0;
    if (cap > UINT32_MAX)
        cap = UINT32_MAX;
    while (!s->done && out == 0) {
        if (!s->member_open) {
            if (!next_member(s))
                return -1;
            if (s->done)
                break;
        }
        if (s->raw_pos == s->raw_len) {
            if (!fill_raw(s))
                return -1;
            if (s->raw_len == 0 && s->eof) {
                set_ended_inside_member(s);
                return -1;
            }
        }
        size_t used = 0, made = 0;
        const char *why = NULL;
        step_result r = inflate_step(s, (unsigned char *)dst, cap, &used, &made, &why);
        s->raw_pos += used;
        s->raw_offset += used;
        if (r == STEP_FAILED) {
            set_corrupt(s, why);
            return -1;
        }
        if (r == STEP_MEMBER_END)
            s->member_open = false;
        else if (used == 0 && made == 0 && !feed_stalled(s))
            return -1;
        out = made;
    }
    return (ssize_t)out;
}

/* zip_io over the raw buffer (see zip_source.h). */
static bool zip_need(void *ctx, size_t want, const unsigned char **p, size_t *avail)
{
    source *s = ctx;
    while (s->raw_len - s->raw_pos < want && !s->eof)
        if (!fill_raw(s))
            return false;
    *p = s->raw + s->raw_pos;
    *avail = s->raw_len - s->raw_pos;
    return true;
}

static void zip_consume(void *ctx, size_t n)
{
    source *s = ctx;
    s->raw_pos += n;
    s->raw_offset += n;
}

static ssize_t read_zip(source *s, char *dst, size_t cap)
{
    zip_io io = {s, zip_need, zip_consume};
    ssize_t n = zip_stream_read(s->zip, &io, dst, cap);
    if (n < 0 && !s->failed)
        set_error(s, zip_stream_error(s->zip));
    if (n == 0)
        s->done = true;
    return n;
}

/* Decodes the next bytes (runs on the read-ahead thread). */
static ssize_t decode_read(source *s, char *dst, size_t cap)
{
    if (s->failed)
        return -1;
    if (s->done || cap == 0)
        return 0;
    ssize_t n = s->gzip ? read_gzip(s, dst, cap)
                : s->zip ? read_zip(s, dst, cap) : read_plain(s, dst, cap);
    if (n > 0)
        s->decoded += (uint64_t)n;
    return n;
}

/*
 * The read-ahead thread: decodes into free blocks until the input ends,
 * fails, or the source is closed.  Decompression thus runs on its own core
 * while the caller parses, and memory stays at RA_BLOCKS blocks.
 */
static void *read_ahead(void *arg)
{
    source *s = arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (s->ra_count == RA_BLOCKS && !s->ra_stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->ra_stop) {
            pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        ra_block *b = &s->ra[(s->ra_head + s->ra_count) % RA_BLOCKS];
        pthread_mutex_unlock(&s->mu);

        size_t len = 0;
        ssize_t n = 1;
        while (len < RA_BLOCK_SIZE) {
            n = decode_read(s, b->data + len, RA_BLOCK_SIZE - len);
            if (n <= 0)
                break;
            len += (size_t)n;
            /* From a pipe, hand over what arrived rather than wait for a
             * full block: a slow producer must not delay the rows. */
            if (s->raw_size < 0)
                break;
        }
        pthread_mutex_lock(&s->mu);
        b->len = len;
        b->raw_offset = s->raw_offset;
        if (len > 0)
            s->ra_count++;
        if (n <= 0)
            s->ra_done = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (n <= 0)
            return NULL;
    }
}

/* Waits for the read-ahead thread on s->cv (s->mu held) at most 200 ms, so
 * that SIGINT or SIGTERM stops a reader waiting on a pipe that sends
 * nothing (a stalled producer): the handler wakes no condition variable. */
static void wait_for_block(source *s)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&s->cv, &s->mu, &until);
}

ssize_t source_read(source *s, char *dst, size_t cap)
{
    if (cap == 0)
        return 0;
    pthread_mutex_lock(&s->mu);
    while (s->ra_count == 0 && !s->ra_done && !signals_interrupted())
        wait_for_block(s);
    if (s->ra_count == 0 && !s->ra_done) {
        /* Interrupted while the input sent nothing. */
        pthread_mutex_unlock(&s->mu);
        s->interrupted = true;
        buf_clear(&s->interrupted_msg);
        buf_printf(&s->interrupted_msg, "%s: interrupted while waiting for input", s->name);
        return -1;
    }
    if (s->ra_count == 0) {
        bool failed = s->failed;
        /* The thread has stopped: the bytes it consumed after its last
         * block (a gzip trailer, an empty member) count as consumed too. */
        s->consumed_raw = s->raw_offset;
        pthread_mutex_unlock(&s->mu);
        return failed ? -1 : 0;
    }
    ra_block *b = &s->ra[s->ra_head];
    pthread_mutex_unlock(&s->mu);
    /* The producer never touches a published block: copy without the lock. */
    size_t n = b->len - s->ra_pos;
    if (n > cap)
        n = cap;
    memcpy(dst, b->data + s->ra_pos, n);
    s->ra_pos += n;
    s->consumed_decoded += n;
    s->consumed_raw = b->raw_offset;
    if (s->ra_pos == b->len) {
        pthread_mutex_lock(&s->mu);
        s->ra_head = (s->ra_head + 1) % RA_BLOCKS;
        s->ra_count--;
        s->ra_pos = 0;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    return (ssize_t)n;
}

const char *source_error(const source *s)
{
    return s->interrupted ? buf_cstr(&s->interrupted_msg) : buf_cstr(&s->err);
}

const char *source_object_sha256(const source *s)
{
    return s->obj ? s3_object_sha256(s->obj) : "";
}

bool source_is_gzip(const source *s)
{
    return s->gzip;
}

uint64_t source_raw_offset(const source *s)
{
    return s->consumed_raw;
}

int64_t source_raw_size(const source *s)
{
    return s->raw_size;
}

uint64_t source_decoded_offset(const source *s)
{
    return s->consumed_decoded;
}

void source_close(source **sp)
{
    source *s = *sp;
    if (!s)
        return;
    if (s->ra_live) {
        if (s->obj)
            s3_object_stop(s->obj);
        pthread_mutex_lock(&s->mu);
        s->ra_stop = true;
        bool running = !s->ra_done;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        /* Closed before the end of a pipe (a bad header, an interrupt): the
         * thread may sit in read() for as long as the writer keeps the pipe
         * open.  It accepts cancellation only there. */
        if (running && s->raw_size < 0)
            pthread_cancel(s->ra_thread);
        pthread_join(s->ra_thread, NULL);
    }
    for (int i = 0; i < RA_BLOCKS; i++)
        free(s->ra[i].data);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    inflater_end(s);
    zip_stream_free(&s->zip);
    s3_object_close(&s->obj);
    if (s->owns_fd)
        close(s->fd);
    free(s->raw);
    free(s->name);
    buf_free(&s->err);
    buf_free(&s->interrupted_msg);
    free(s);
    *sp = NULL;
}
