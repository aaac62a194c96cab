/*
 * rejects.c - the rejects file (see rejects.h).  JSON is written through
 * jansson, which escapes every string correctly.
 */
#include "output/rejects.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/log.h"
#include "output/outfile.h"
#include "output/text_escape.h"

#include "rules/json_scan.h"
#include "rules/utf8.h"

/* Lines wait in memory up to this many bytes, then go out in one write. */
#define PENDING_MAX (64 * 1024)

struct rejects {
    char *path;
    int fd;                 /* -1 until the first reject */
    FILE *std;              /* stdout or stderr (outfile_std_stream): written through it */
    buf pending;            /* whole lines not yet written */
    uint64_t count;
    reject_summary summary;
    size_t cap_groups;
    pthread_mutex_t lock;
};

/*
 * The length of fd's (a regular file of size bytes) content up to and
 * including its last newline: what stays when a torn last line is cut.
 * -1 when it cannot be read.
 */
static off_t whole_lines_end(int fd, off_t size)
{
    char block[4096];
    off_t end = size;
    while (end > 0) {
        size_t n = end > (off_t)sizeof block ? sizeof block : (size_t)end;
        ssize_t got = pread(fd, block, n, end - (off_t)n);
        if (got != (ssize_t)n)
            return -1;
        for (size_t i = n; i > 0; i--)
            if (block[i - 1] == '\n')
                return end - (off_t)n + (off_t)i;
        end -= (off_t)n;
    }
    return 0;
}

/* A torn tail longer than this is not read back to see whether it is whole:
 * it is cut (no reject line comes near it: a record is limited far below). */
#define TAIL_CHECK_MAX ((off_t)64 * 1024 * 1024)

/* Is the tail [keep, size) of fd one whole JSON object (a line that lost
 * only its newline)? */
static bool tail_is_object(int fd, off_t keep, off_t size)
{
    if (size - keep > TAIL_CHECK_MAX)
        return false;
    size_t n = (size_t)(size - keep);
    char *text = malloc(n ? n : 1);
    if (!text)
        return false;
    json_kind kind;
    bool whole = pread(fd, text, n, keep) == (ssize_t)n && json_validate(text, n, &kind, NULL) &&
                 kind == JSON_KIND_OBJECT;
    free(text);
    return whole;
}

/*
 * Mends the end of an existing rejects file that a crash, a kill or a full
 * disk left without its newline, so the next line does not continue it and
 * every line stays one JSON object (SPEC.md "The side outputs are part of
 * the load"): a last line that is a whole JSON object gets its newline
 * (nothing is lost; its row may be written again if its chunk is redone,
 * which the spec allows); a fragment is cut (a torn line is never one a
 * commit relies on: rejects_sync wrote whole lines and synced them before
 * every commit, so its row is written again by the run that redoes its
 * chunk).  Done when the run starts, whether or not it appends.
 *
 * Other processes may be appending to the same file (the default rejects
 * file is shared): each write of theirs holds a shared flock
 * (write_pending), and this holds an exclusive one from the size it reads
 * to the cut, so it never sees a write half done nor cuts lines appended
 * after it looked.  A file that cannot be locked or mended is left as it
 * is: the first write says why it cannot be written, if it cannot.
 */
static void mend_torn_tail(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        return;
    }
    int locked;
    while ((locked = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
        ;
    if (locked != 0 && errno != ENOLCK && errno != EOPNOTSUPP) {
        close(fd);
        return;
    }
    off_t keep = fstat(fd, &st) == 0 ? whole_lines_end(fd, st.st_size) : -1;
    if (keep >= 0 && keep < st.st_size) {
        long long torn = (long long)(st.st_size - keep);
        if (tail_is_object(fd, keep, st.st_size)) {
            if (pwrite(fd, "\n", 1, st.st_size) == 1)
                log_warn("rejects file %s: its last line (%lld bytes) had no newline; it is "
                         "whole and was completed",
                         path, torn);
            else
                log_warn("rejects file %s: cannot complete its last line: %s", path,
                         strerror(errno));
        } else if (ftruncate(fd, keep) == 0) {
            log_warn("rejects file %s: removed a torn last line (%lld bytes) an interrupted "
                     "run left; its row is written again when its chunk is loaded again",
                     path, torn);
        } else {
            log_warn("rejects file %s: cannot cut its torn last line: %s", path,
                     strerror(errno));
        }
    }
    close(fd);  /* releases the lock */
}

/* Writes out the pending lines (under the lock): false with *err. */
static bool write_pending(rejects *rj, buf *err)
{
    size_t done = 0;
    errno = 0;
    if (rj->std) {
        done = rj->pending.len ? fwrite(rj->pending.data, 1, rj->pending.len, rj->std) : 0;
    } else {
        /* Shared with other writers, exclusive of a starting run's
         * mend_torn_tail: see there.  Without locks (ENOLCK, a file system
         * without them) the lines still go out whole, in one write each. */
        bool locked = flock(rj->fd, LOCK_SH) == 0;
        while (done < rj->pending.len) {
            ssize_t n = write(rj->fd, rj->pending.data + done, rj->pending.len - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            done += (size_t)n;
        }
        int saved = errno;
        if (locked)
            flock(rj->fd, LOCK_UN);
        errno = saved;
    }
    bool ok = done == rj->pending.len;
    if (!ok)
        buf_printf(err, "cannot write rejects file %s: %s", rj->path,
                   errno ? strerror(errno) : "short write");
    buf_clear(&rj->pending);
    return ok;
}

rejects *rejects_open(const char *path)
{
    rejects *rj = calloc(1, sizeof *rj);
    if (!rj)
        return NULL;
    rj->path = strdup(path);
    if (!rj->path) {
        free(rj);
        return NULL;
    }
    rj->fd = -1;
    pthread_mutex_init(&rj->lock, NULL);
    /* Standard output or error, or the file one of them is redirected to
     * (`--rejects /dev/stdout >> run.log`): the shell's file, not one whose
     * last line is a reject to mend. */
    if (!outfile_std_stream(path))
        mend_torn_tail(path);
    return rj;
}

/* Copies s with every byte that breaks UTF-8 replaced by U+FFFD. */
static void lossy_utf8(const char *s, size_t n, buf *out)
{
    while (n > 0) {
        size_t bad;
        bool is_nul;
        if (utf8_check(s, n, &bad, &is_nul)) {
            buf_append(out, s, n);
            return;
        }
        buf_append(out, s, bad);
        if (is_nul)
            buf_append(out, "", 1);
        else
            buf_append_str(out, "\xEF\xBF\xBD");
        s += bad + 1;
        n -= bad + 1;
    }
}

/* Valid UTF-8 apart from NUL bytes, which JSON carries as \u0000? */
static bool utf8_ignoring_nul(const char *s, size_t n)
{
    size_t bad;
    bool is_nul;
    while (!utf8_check(s, n, &bad, &is_nul)) {
        if (!is_nul)
            return false;
        s += bad + 1;
        n -= bad + 1;
    }
    return true;
}

/* A JSON string of s, each byte that breaks UTF-8 replaced by U+FFFD: a
 * file name can be any bytes, and a reason quoting part of a field can cut
 * a character in two.  NULL only when memory runs out. */
static json_t *text_string(const char *s)
{
    json_t *j = json_string(s);
    if (!j) {
        buf b = BUF_INIT;
        lossy_utf8(s, strlen(s), &b);
        j = json_stringn(buf_cstr(&b), b.len);
        buf_free(&b);
    }
    return j;
}

void reject_reason_group(const char *reason, buf *out)
{
    size_t n = strcspn(reason, "\"");
    const char *at = strstr(reason, " at byte ");
    if (at && (size_t)(at - reason) < n)
        n = (size_t)(at - reason);
    while (n > 0 && (reason[n - 1] == ' ' || reason[n - 1] == ':'))
        n--;
    buf_clear(out);
    buf_append(out, reason, n ? n : strlen(reason));
}

static char *copy_text(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* Counts a reject in its group (under the lock).  Memory running out only
 * loses the example, never the row: the rejects file has it. */
static void summary_add(rejects *rj, const char *file, uint64_t line, const char *reason,
                        const char *raw, size_t raw_len)
{
    buf key = BUF_INIT;
    reject_reason_group(reason, &key);
    reject_summary *s = &rj->summary;
    reject_group *g = NULL;
    for (size_t i = 0; i < s->n_groups && !g; i++)
        if (strcmp(s->groups[i].reason, buf_cstr(&key)) == 0)
            g = &s->groups[i];
    if (!g && s->n_groups == REJECT_MAX_GROUPS) {
        for (size_t i = 0; i < s->n_groups && !g; i++)
            if (strcmp(s->groups[i].reason, REJECT_OTHER_REASONS) == 0)
                g = &s->groups[i];
        if (!g) {
            g = &s->groups[s->n_groups - 1];
            free(g->reason);
            g->reason = strdup(REJECT_OTHER_REASONS);
        }
    }
    if (!g) {
        if (s->n_groups == rj->cap_groups) {
            size_t cap = rj->cap_groups ? rj->cap_groups * 2 : 8;
            reject_group *ng = realloc(s->groups, cap * sizeof *ng);
            if (!ng)
                goto out;
            s->groups = ng;
            rj->cap_groups = cap;
        }
        g = &s->groups[s->n_groups];
        memset(g, 0, sizeof *g);
        g->reason = copy_text(key.data ? key.data : "", key.len);
        if (!g->reason)
            goto out;
        s->n_groups++;
    }
    g->count++;
    if (g->n_examples < REJECT_EXAMPLES) {
        reject_example *e = &g->example[g->n_examples];
        size_t n = raw_len > REJECT_EXAMPLE_BYTES ? REJECT_EXAMPLE_BYTES : raw_len;
        e->file = strdup(file);
        e->raw = copy_text(raw, n);
        e->raw_len = n;
        e->raw_cut = n < raw_len;
        e->line = line;
        if (e->file && e->raw) {
            g->n_examples++;
        } else {
            free(e->file);
            free(e->raw);
        }
    }
out:
    buf_free(&key);
}

void rejects_take_summary(rejects *rj, reject_summary *out)
{
    pthread_mutex_lock(&rj->lock);
    *out = rj->summary;
    memset(&rj->summary, 0, sizeof rj->summary);
    rj->cap_groups = 0;
    pthread_mutex_unlock(&rj->lock);
}

void reject_summary_free(reject_summary *s)
{
    for (size_t i = 0; i < s->n_groups; i++) {
        free(s->groups[i].reason);
        for (size_t k = 0; k < s->groups[i].n_examples; k++) {
            free(s->groups[i].example[k].file);
            free(s->groups[i].example[k].raw);
        }
    }
    free(s->groups);
    s->groups = NULL;
    s->n_groups = 0;
}

bool rejects_write(rejects *rj, const char *file, uint64_t line, const char *reason,
                   const char *raw, size_t raw_len, buf *err)
{
    return rejects_write_converted(rj, file, line, reason, raw, raw_len, NULL, 0, err);
}

bool rejects_write_converted(rejects *rj, const char *file, uint64_t line, const char *reason,
                             const char *raw, size_t raw_len, const char *orig,
                             size_t orig_len, buf *err)
{
    bool ok = false;
    buf text = BUF_INIT, b64 = BUF_INIT;
    json_t *obj = json_object();
    bool exact = utf8_ignoring_nul(raw, raw_len);
    if (!exact)
        lossy_utf8(raw, raw_len, &text);
    if (!obj)
        goto out;
    /* A file name is any bytes (SPEC.md "Hostile input"): one that is not
     * UTF-8 is escaped as in the report and the changes file, its bytes in
     * file_base64. */
    buf name = BUF_INIT;
    bool exact_name = text_utf8_or_escaped(&name, file);
    json_object_set_new(obj, "file", json_stringn(buf_cstr(&name), name.len));
    buf_free(&name);
    if (!exact_name) {
        text_base64(&b64, file, strlen(file));
        json_object_set_new(obj, "file_base64", json_stringn(buf_cstr(&b64), b64.len));
    }
    json_object_set_new(obj, "line", json_integer((json_int_t)line));
    json_object_set_new(obj, "reason", text_string(reason));
    if (exact)
        json_object_set_new(obj, "raw", json_stringn(raw, raw_len));
    else
        json_object_set_new(obj, "raw", json_stringn(buf_cstr(&text), text.len));
    if (!exact || orig) {
        buf_clear(&b64);
        text_base64(&b64, orig ? orig : raw, orig ? orig_len : raw_len);
        json_object_set_new(obj, "raw_base64", json_stringn(buf_cstr(&b64), b64.len));
    }
    char *line_text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!line_text)
        goto out;
    pthread_mutex_lock(&rj->lock);
    if (rj->fd < 0) {
        if ((rj->std = outfile_std_stream(rj->path))) {
            rj->fd = fileno(rj->std);
        } else {
            rj->fd = open(rj->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
        }
    }
    if (rj->fd < 0) {
        buf_printf(err, "cannot open rejects file %s: %s", rj->path, strerror(errno));
    } else if (!buf_append_str(&rj->pending, line_text) || !buf_append(&rj->pending, "\n", 1)) {
        buf_printf(err, "out of memory writing a reject");
    } else if (rj->pending.len >= PENDING_MAX && !write_pending(rj, err)) {
        /* the message is set */
    } else {
        rj->count++;
        summary_add(rj, file, line, reason, raw, raw_len);
        ok = true;
    }
    pthread_mutex_unlock(&rj->lock);
    free(line_text);
out:
    if (!ok && err->len == 0)
        buf_append_str(err, "out of memory writing a reject");
    json_decref(obj);
    buf_free(&text);
    buf_free(&b64);
    return ok;
}

bool rejects_sync(rejects *rj, buf *err)
{
    bool ok = true;
    pthread_mutex_lock(&rj->lock);
    if (rj->fd >= 0) {
        ok = write_pending(rj, err);
        if (ok && rj->std && fflush(rj->std) != 0) {
            buf_printf(err, "cannot write rejects file %s: %s", rj->path, strerror(errno));
            ok = false;
        } else if (ok && fsync(rj->fd) != 0 && errno != EINVAL && errno != ENOTSUP) {
            /* EINVAL, ENOTSUP: a pipe or device that keeps nothing to sync
             * (standard output redirected to a file is synced as a file). */
            buf_printf(err, "cannot sync rejects file %s to disk: %s", rj->path,
                       strerror(errno));
            ok = false;
        }
    }
    pthread_mutex_unlock(&rj->lock);
    return ok;
}

uint64_t rejects_count(const rejects *rj)
{
    return rj->count;
}

bool rejects_close(rejects **rjp, buf *err)
{
    rejects *rj = *rjp;
    if (!rj)
        return true;
    bool ok = true;
    if (rj->fd >= 0) {
        ok = write_pending(rj, err);
        if (rj->std) {
            if (ok && fflush(rj->std) != 0) {
                buf_printf(err, "cannot write rejects file %s: %s", rj->path, strerror(errno));
                ok = false;
            }
        } else if (close(rj->fd) != 0 && ok) {
            buf_printf(err, "cannot write rejects file %s: %s", rj->path, strerror(errno));
            ok = false;
        }
    }
    pthread_mutex_destroy(&rj->lock);
    reject_summary_free(&rj->summary);
    buf_free(&rj->pending);
    free(rj->path);
    free(rj);
    *rjp = NULL;
    return ok;
}
