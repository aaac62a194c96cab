/*
 * outfile.c - an output written whole or not at all (outfile.h): a new file
 * beside the path, renamed onto it.
 */
#include "output/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/log.h"

/* The temporary file's name: "." + the name (at most this many bytes of it,
 * so that a name near NAME_MAX still leaves room) + TMP_TAG + six letters. */
#define TMP_NAME_MAX 200
#define TMP_TAG ".idemload-"
#define TMP_LETTERS 6

struct outfile {
    FILE *fp;
    const char *path;   /* the file replaced: the caller's, or real */
    char *real;         /* where a symbolic link led (owned); NULL: none */
    char *dir;          /* path's directory, fsynced after the rename (owned) */
    char *tmp;      /* the new file, renamed onto path by commit; NULL: in place */
    bool is_std, synced;    /* is_std: fp is stdout or stderr (outfile_std_stream) */
};

/* path's directory ("." for a bare name) and the temporary files' prefix
 * within it, both allocated.  False when out of memory. */
static bool split_path(const char *path, char **dir, char **prefix)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t name_len = strlen(name);
    if (name_len > TMP_NAME_MAX)
        name_len = TMP_NAME_MAX;
    *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    *prefix = malloc(1 + name_len + sizeof TMP_TAG);
    if (!*dir || !*prefix) {
        free(*dir);
        free(*prefix);
        return false;
    }
    (*prefix)[0] = '.';
    memcpy(*prefix + 1, name, name_len);
    memcpy(*prefix + 1 + name_len, TMP_TAG, sizeof TMP_TAG);
    return true;
}

/* Removes the temporary files of path that no live writer holds (its flock)
 * and that belong to this user: a run killed before its rename left them.
 * Best effort: a directory that cannot be read is left alone. */
static void remove_stale(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t prefix_len = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strlen(e->d_name) != prefix_len + TMP_LETTERS ||
            memcmp(e->d_name, prefix, prefix_len) != 0)
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            flock(fd, LOCK_EX | LOCK_NB) == 0 && unlinkat(dirfd(d), e->d_name, 0) == 0)
            log_info("removed %s%s, the unfinished output of a run that was stopped",
                     strcmp(dir, ".") == 0 ? "" : dir, e->d_name);
        close(fd);
    }
    closedir(d);
}

/* Closes and removes the new file fd, tmp (freed), keeping errno. */
static void drop_new(int fd, char *tmp)
{
    int e = errno;
    close(fd);
    unlink(tmp);
    free(tmp);
    errno = e;
}

/* A new file beside path, locked, with st's mode and owner (st NULL: the
 * mode a plain fopen would give it).  NULL with errno. */
static FILE *open_beside(const char *dir, const char *prefix, const struct stat *st,
                         char **tmp_out)
{
    size_t dir_len = strcmp(dir, ".") == 0 ? 0 : strlen(dir);
    size_t n = dir_len + strlen(prefix) + TMP_LETTERS + 1;
    char *tmp = malloc(n);
    if (!tmp)
        return NULL;
    for (int attempt = 0; attempt < 8; attempt++) {
        snprintf(tmp, n, "%.*s%sXXXXXX", (int)dir_len, dir, prefix);
        int fd = mkstemp(tmp);
        if (fd < 0)
            break;
        /* Locked, then checked still to be the name: another run's
         * remove_stale() may have taken it in the instant between. */
        struct stat mine, named;
        if (flock(fd, LOCK_EX) != 0 || fstat(fd, &mine) != 0) {
            drop_new(fd, tmp);
            return NULL;
        }
        if (lstat(tmp, &named) != 0 || named.st_ino != mine.st_ino || named.st_dev != mine.st_dev) {
            close(fd);
            continue;
        }
        mode_t mode;
        if (st) {
            mode = st->st_mode & 07777;
            /* Root rewriting another user's report keeps it theirs; a user
             * who cannot give the file its owner back (EPERM) writes it in
             * place, as a plain write would. */
            if ((st->st_uid != mine.st_uid || st->st_gid != mine.st_gid) &&
                fchown(fd, st->st_uid, st->st_gid) != 0) {
                drop_new(fd, tmp);
                return NULL;
            }
        } else {
            mode_t mask = umask(0);
            umask(mask);
            mode = 0666 & ~mask;
        }
        FILE *fp = fchmod(fd, mode) == 0 ? fdopen(fd, "wb") : NULL;
        if (!fp) {
            drop_new(fd, tmp);
            return NULL;
        }
        *tmp_out = tmp;
        return fp;
    }
    int e = errno ? errno : EEXIST;
    free(tmp);
    errno = e;
    return NULL;
}

FILE *outfile_std_stream(const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    struct stat st, fd_st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    if (fstat(STDOUT_FILENO, &fd_st) == 0 && fd_st.st_dev == st.st_dev && fd_st.st_ino == st.st_ino)
        return stdout;
    if (fstat(STDERR_FILENO, &fd_st) == 0 && fd_st.st_dev == st.st_dev && fd_st.st_ino == st.st_ino)
        return stderr;
    return NULL;
}

outfile *outfile_open(const char *path)
{
    outfile *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->path = path;
    f->fp = outfile_std_stream(path);
    if (f->fp) {
        f->is_std = true;
        return f;
    }
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    /* A symbolic link stays one: the file it names is what is replaced. */
    if (exists && S_ISLNK(st.st_mode) && (f->real = realpath(path, NULL))) {
        path = f->path = f->real;
        exists = lstat(path, &st) == 0;
    }
    /* A hard-linked file is rewritten where it is, so that every name of it
     * sees the new content, as a plain write would. */
    bool replace = !exists || (S_ISREG(st.st_mode) && st.st_nlink == 1);
    char *dir = NULL, *prefix = NULL;
    if (replace && !split_path(path, &dir, &prefix)) {
        free(f->real);
        free(f);
        errno = ENOMEM;
        return NULL;
    }
    if (replace) {
        remove_stale(dir, prefix);
        f->fp = open_beside(dir, prefix, exists ? &st : NULL, &f->tmp);
        /* A directory this user cannot write to, holding a file it can (a
         * report path an administrator made), or a file of another owner
         * that this user may write but not give back: written in place. */
        if (!f->fp && exists && (errno == EACCES || errno == EPERM || errno == EROFS))
            replace = false;
    }
    f->dir = dir;
    free(prefix);
    if (!replace)
        f->fp = fopen(path, "wb");
    if (!f->fp) {
        int e = errno;
        free(f->tmp);
        free(f->real);
        free(f->dir);
        free(f);
        errno = e;
        return NULL;
    }
    return f;
}

FILE *outfile_stream(const outfile *f)
{
    return f->fp;
}

bool outfile_sync(outfile *f)
{
    if (fflush(f->fp) != 0)
        return false;
    /* A pipe or a device cannot be fsynced (EINVAL, ENOTSUP): nothing to make
     * durable there, as for the rejects and changes files.  A standard
     * stream redirected to a file is synced like any file. */
    if (fsync(fileno(f->fp)) != 0 && errno != EINVAL && errno != ENOTSUP)
        return false;
    f->synced = true;
    return true;
}

static void outfile_free(outfile **fp)
{
    outfile *f = *fp;
    *fp = NULL;
    if (f->fp && !f->is_std)
        fclose(f->fp);
    if (f->tmp)
        unlink(f->tmp);
    free(f->tmp);
    free(f->real);
    free(f->dir);
    free(f);
}

bool outfile_commit(outfile **fp)
{
    outfile *f = *fp;
    bool ok = f->synced || outfile_sync(f);
    int e = errno;
    /* Renamed while still open, so still locked: another run's
     * remove_stale() never takes a finished file for a stale one. */
    if (ok && f->tmp) {
        if (rename(f->tmp, f->path) != 0) {
            ok = false;
            e = errno;
        } else {
            free(f->tmp);
            f->tmp = NULL;
            /* The rename itself made durable: the directory's entry. */
            int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dfd >= 0) {
                (void)fsync(dfd);
                close(dfd);
            }
        }
    }
    if (!f->is_std) {
        if (fclose(f->fp) != 0 && ok) {
            ok = false;
            e = errno;
        }
        f->fp = NULL;
    }
    outfile_free(fp);
    errno = e;
    return ok;
}

void outfile_discard(outfile **fp)
{
    if (*fp)
        outfile_free(fp);
}
