/*
 * helpers.h - what several unit tests share: a private temporary directory,
 * files written into it, gzip members made with zlib (through gzopen/gzwrite,
 * or crafted byte by byte with stored blocks when a member must have an exact
 * size), and a reader driven to its end with copies of every record.
 *
 * Header-only, every function static inline, so each test stays a single
 * file in tests/unit/CMakeLists.txt's glob and unused helpers cost nothing.
 * Include after cmocka.h.  Everything returned is the caller's to free().
 */
#ifndef IDEMLOAD_TEST_HELPERS_H
#define IDEMLOAD_TEST_HELPERS_H

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "input/reader.h"
#include "input/source.h"

/* ---- temporary directory -------------------------------------------------- */

/* A fresh directory under $TMPDIR (or /tmp), made with mkdtemp. */
static inline char *tmpdir_make(void)
{
    const char *base = getenv("TMPDIR");
    char *dir;

    if (base == NULL || *base == '\0')
        base = "/tmp";
    dir = malloc(strlen(base) + 32);
    assert_non_null(dir);
    sprintf(dir, "%s/idemload-unit-XXXXXX", base);
    assert_non_null(mkdtemp(dir));
    return dir;
}

/* Removes dir and the files in it (the tests make no subdirectories). */
static inline void tmpdir_remove(char *dir)
{
    DIR *d;
    struct dirent *e;

    if (dir == NULL)
        return;
    d = opendir(dir);
    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            char *p;

            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            p = malloc(strlen(dir) + strlen(e->d_name) + 2);
            assert_non_null(p);
            sprintf(p, "%s/%s", dir, e->d_name);
            unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

/* The temporary directory of a test file: made by the group setup below,
 * removed with its contents by the teardown. */
static char *test_dir __attribute__((unused));

static inline int tmpdir_setup(void **state)
{
    (void)state;
    test_dir = tmpdir_make();
    /* a closed pipe must be an error in the code under test, not death */
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static inline int tmpdir_teardown(void **state)
{
    (void)state;
    tmpdir_remove(test_dir);
    test_dir = NULL;
    return 0;
}

static inline char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);

    assert_non_null(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static inline void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    if (n > 0)
        assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static inline unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    size_t len = 0, cap = 0;

    assert_non_null(f);
    for (;;) {
        size_t got;

        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 65536;
            data = realloc(data, cap);
            assert_non_null(data);
        }
        got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    assert_int_equal(ferror(f), 0);
    fclose(f);
    *n = len;
    return data;
}

/* ---- gzip ------------------------------------------------------------------ */

/* One gzip member holding data, written with gzopen/gzwrite at level. */
static inline void write_gzip_file(const char *path, const void *data, size_t n, int level)
{
    char mode[8];
    gzFile gz;

    snprintf(mode, sizeof mode, "wb%d", level);
    gz = gzopen(path, mode);
    assert_non_null(gz);
    if (n > 0)
        assert_int_equal(gzwrite(gz, data, (unsigned)n), (int)n);
    assert_int_equal(gzclose(gz), Z_OK);
}

/* The bytes of one gzip member holding data (through a scratch file in dir). */
static inline unsigned char *gzip_member(const char *dir, const void *data, size_t n,
                                         size_t *out_len)
{
    char *p = path_in(dir, "member.scratch.gz");
    unsigned char *bytes;

    write_gzip_file(p, data, n, 6);
    bytes = read_bytes(p, out_len);
    unlink(p);
    free(p);
    return bytes;
}

/*
 * One gzip member holding data in stored (uncompressed) deflate blocks of at
 * most `block` bytes, so its size is known in advance:
 * 10 (header) + 5 per block + n + 8 (trailer); an empty input is one empty
 * final block.  Lets a test put a member boundary at an exact offset.
 */
static inline size_t stored_member_size(size_t n, size_t block)
{
    size_t blocks = n == 0 ? 1 : (n + block - 1) / block;

    return 10 + 5 * blocks + n + 8;
}

static inline unsigned char *stored_member(const void *data, size_t n, size_t block,
                                           size_t *out_len)
{
    static const unsigned char header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    size_t size = stored_member_size(n, block);
    unsigned char *m = malloc(size);
    const unsigned char *src = data;
    size_t p = 0, done = 0;
    uLong crc = crc32(0L, Z_NULL, 0);

    assert_true(block > 0 && block <= 65535);
    assert_non_null(m);
    memcpy(m, header, sizeof header);
    p = sizeof header;
    do {
        size_t take = n - done < block ? n - done : block;
        bool last = done + take == n;

        m[p++] = last ? 1 : 0; /* BFINAL, BTYPE 00 (stored), byte aligned */
        m[p++] = (unsigned char)(take & 0xff);
        m[p++] = (unsigned char)(take >> 8);
        m[p++] = (unsigned char)(~take & 0xff);
        m[p++] = (unsigned char)((~take >> 8) & 0xff);
        if (take > 0)
            memcpy(m + p, src + done, take);
        p += take;
        done += take;
    } while (done < n);
    if (n > 0)
        crc = crc32(crc, src, (uInt)n);
    for (int i = 0; i < 4; i++)
        m[p++] = (unsigned char)(crc >> (8 * i));
    for (int i = 0; i < 4; i++)
        m[p++] = (unsigned char)((uint64_t)n >> (8 * i));
    assert_int_equal(p, size);
    *out_len = size;
    return m;
}

/* ---- standard input through a pipe ------------------------------------------ */

/*
 * Replaces standard input by a pipe that a child process fills with bytes:
 * first `first` bytes at once, then pieces of `piece` bytes, pausing
 * briefly between the first few, so reads of "-" see partial data.
 * stdin_feed_end() waits for the child and restores standard input.
 */
typedef struct stdin_feed {
    pid_t pid;
    int saved;
} stdin_feed;

static inline void stdin_feed_start(stdin_feed *f, const void *bytes, size_t n, size_t first,
                                    size_t piece)
{
    int fds[2];
    const unsigned char *b = bytes;

    f->saved = dup(STDIN_FILENO);
    assert_true(f->saved >= 0);
    assert_int_equal(pipe(fds), 0);
    f->pid = fork();
    assert_true(f->pid >= 0);
    if (f->pid == 0) {
        size_t off = 0;
        int pieces = 0;

        close(fds[0]);
        while (off < n) {
            size_t want = off == 0 && first > 0 ? first : piece;
            size_t k = n - off < want ? n - off : want;
            struct timespec ts = {0, 1000000};

            if (write(fds[1], b + off, k) != (ssize_t)k)
                _exit(1);
            off += k;
            if (pieces++ < 20)
                nanosleep(&ts, NULL);
        }
        _exit(0);
    }
    close(fds[1]);
    assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
    close(fds[0]);
}

static inline void stdin_feed_end(stdin_feed *f)
{
    int status;
    char sink[4096];

    /* drain what the reader left, so the child can finish */
    while (read(STDIN_FILENO, sink, sizeof sink) > 0)
        ;
    assert_int_equal(dup2(f->saved, STDIN_FILENO), STDIN_FILENO);
    close(f->saved);
    assert_int_equal(waitpid(f->pid, &status, 0), f->pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- readers ----------------------------------------------------------------- */

/* A copy of one raw_record, owning its texts. */
typedef struct rec_copy {
    uint64_t line;
    char *raw;
    size_t raw_len;
    char *error;        /* NULL: none */
    struct {
        field_kind kind;
        json_kind jkind;
        char *text;     /* NULL when the field has no text */
        size_t len;
        char *json;
        size_t json_len;
    } f[COL_COUNT];
} rec_copy;

typedef struct read_all_result {
    rec_copy *recs;
    size_t n;
    read_result last;   /* READ_EOF or READ_FAILED */
    char *error;        /* reader_error() after READ_FAILED */
} read_all_result;

/* The reader reached the end and returned n_want records (else fails). */
static inline void check_record_count(const char *name, const char *how,
                                      const read_all_result *res, size_t n_want)
{
    if (res->last != READ_EOF)
        fail_msg("%s (%s): reader failed: %s", name, how, res->error);
    if (res->n != n_want)
        fail_msg("%s (%s): %zu records, want %zu", name, how, res->n, n_want);
}

/*
 * Record i starts on `line`, has the raw text `raw` (NULL: unchecked) and
 * the error containing `error` (NULL: no error; then no field may be set).
 * Returns true when its fields are still to be checked (no error wanted).
 */
static inline bool check_record_head(const char *name, const char *how, size_t i,
                                     const rec_copy *g, uint64_t line, const char *raw,
                                     const char *error)
{
    if (g->line != line)
        fail_msg("%s (%s): record %zu on line %llu, want %llu", name, how, i,
                 (unsigned long long)g->line, (unsigned long long)line);
    if (raw != NULL && (g->raw_len != strlen(raw) || memcmp(g->raw, raw, g->raw_len)))
        fail_msg("%s (%s): record %zu raw \"%s\", want \"%s\"", name, how, i, g->raw, raw);
    if (error == NULL && g->error != NULL)
        fail_msg("%s (%s): record %zu: unexpected error \"%s\"", name, how, i, g->error);
    if (error == NULL)
        return true;
    if (g->error == NULL || strstr(g->error, error) == NULL)
        fail_msg("%s (%s): record %zu: error \"%s\", want \"%s\"", name, how, i,
                 g->error ? g->error : "(none)", error);
    for (int col = 0; col < COL_COUNT; col++)
        if (g->f[col].kind != FIELD_ABSENT)
            fail_msg("%s: record %zu has an error and fields", name, i);
    return false;
}

static inline char *dup_bytes(const char *p, size_t n)
{
    char *d = malloc(n + 1);

    assert_non_null(d);
    if (n > 0)
        memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

/* Reads r to its end (or failure), copying every record. */
static inline void read_all(reader *r, read_all_result *res)
{
    size_t cap = 0;

    memset(res, 0, sizeof *res);
    for (;;) {
        raw_record rec;
        read_result rr;
        rec_copy *c;

        memset(&rec, 0xA5, sizeof rec); /* the reader must fill it all in */
        rr = reader_next(r, &rec);
        if (rr != READ_RECORD) {
            res->last = rr;
            if (rr == READ_FAILED)
                res->error = dup_bytes(reader_error(r), strlen(reader_error(r)));
            /* EOF and failure are sticky */
            assert_int_equal(reader_next(r, &rec), rr);
            return;
        }
        if (res->n == cap) {
            cap = cap ? cap * 2 : 16;
            res->recs = realloc(res->recs, cap * sizeof *res->recs);
            assert_non_null(res->recs);
        }
        c = &res->recs[res->n++];
        memset(c, 0, sizeof *c);
        c->line = rec.line;
        assert_non_null(rec.raw);
        c->raw = dup_bytes(rec.raw, rec.raw_len);
        c->raw_len = rec.raw_len;
        if (rec.error != NULL)
            c->error = dup_bytes(rec.error, strlen(rec.error));
        for (int col = 0; col < COL_COUNT; col++) {
            const field *f = &rec.fields[col];

            c->f[col].kind = f->kind;
            if (f->kind == FIELD_ABSENT || f->kind == FIELD_NULL)
                continue;
            c->f[col].jkind = f->jkind;
            assert_true(f->text != NULL || f->len == 0);
            c->f[col].text = dup_bytes(f->text ? f->text : "", f->len);
            c->f[col].len = f->len;
            if (f->json != NULL) {
                c->f[col].json = dup_bytes(f->json, f->json_len);
                c->f[col].json_len = f->json_len;
            }
        }
    }
}

static inline void read_all_free(read_all_result *res)
{
    for (size_t i = 0; i < res->n; i++) {
        free(res->recs[i].raw);
        free(res->recs[i].error);
        for (int col = 0; col < COL_COUNT; col++) {
            free(res->recs[i].f[col].text);
            free(res->recs[i].f[col].json);
        }
    }
    free(res->recs);
    free(res->error);
    memset(res, 0, sizeof *res);
}

/*
 * Opens path as a source and a reader of the given format; on success reads
 * everything into *res and returns true.  When reader_open fails, returns
 * false with its message in *open_err (caller frees it).
 */
static inline bool read_file(const char *path, input_format format, char delimiter,
                             const bool *preset, read_all_result *res, char **open_err)
{
    buf err = BUF_INIT;
    source *src = source_open(path, &err);
    reader_options opt;
    reader *r;

    if (src == NULL)
        fail_msg("source_open(%s): %s", path, buf_cstr(&err));
    memset(&opt, 0, sizeof opt);
    opt.format = format;
    opt.delimiter = delimiter;
    if (preset != NULL)
        memcpy(opt.preset, preset, sizeof opt.preset);
    r = reader_open(src, path, &opt, &err);
    if (r == NULL) {
        *open_err = dup_bytes(buf_cstr(&err), err.len);
        buf_free(&err);
        source_close(&src);
        return false;
    }
    *open_err = NULL;
    read_all(r, res);
    reader_close(&r);
    assert_null(r);
    source_close(&src);
    assert_null(src);
    buf_free(&err);
    return true;
}

#endif
