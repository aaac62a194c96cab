/*
 * outputs.c - an output never names an input (see outputs.h).
 */
#include "cli/outputs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "input/profile.h"
#include "output/outfile.h"

typedef struct named_path {
    const char *what;       /* "--rejects", "input" ... */
    const char *path;
} named_path;

/* The file path names, when it names one: "-" and a path that does not
 * exist (yet) do not. */
static bool file_of(const char *path, struct stat *st)
{
    return path && strcmp(path, "-") != 0 && stat(path, st) == 0;
}

/* path's directory ("." for a bare name, "/" for a name in the root),
 * allocated; NULL when out of memory. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
}

/* Where a dangling symbolic link leads (the name writing through it would
 * create), relative to the link's own directory; NULL when path is no
 * symbolic link (or out of memory). */
static char *link_target(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return NULL;
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return NULL;
    target[n] = '\0';
    const char *slash = strrchr(path, '/');
    if (target[0] == '/' || !slash)
        return strdup(target);
    size_t dir_len = (size_t)(slash - path) + 1, len = dir_len + (size_t)n + 1;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%.*s%s", (int)dir_len, path, target);
    return out;
}

/* The file a path that does not exist yet would create, spelled one way:
 * its directory resolved (realpath), then its last name; the path as given
 * when its directory does not resolve either.  A dangling symbolic link is
 * followed to the name it would create first (`--report link.json --html
 * new.json`, the link naming new.json, are one file).  NULL when out of
 * memory. */
static char *new_file_name(const char *given)
{
    char *followed = NULL;
    for (int hops = 0; hops < 16; hops++) {
        char *next = link_target(followed ? followed : given);
        if (!next)
            break;
        free(followed);
        followed = next;
    }
    const char *path = followed ? followed : given;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    char *dir = dir_of(path);
    char *real = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!real) {
        char *out = strdup(path);
        free(followed);
        return out;
    }
    size_t n = strlen(real) + 1 + strlen(name) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s", real, name);
    free(real);
    free(followed);
    return out;
}

/* Would two paths that do not exist yet create one file ("out.json",
 * "./out.json", "$PWD/out.json")? */
static bool same_new_file(const char *a, const char *b)
{
    char *x = new_file_name(a), *y = new_file_name(b);
    bool same = x && y ? strcmp(x, y) == 0 : strcmp(a, b) == 0;
    free(x);
    free(y);
    return same;
}

/* Every output path of cfg (NULL where the command writes none), the
 * rejects file first. */
#define N_OUTPUTS 5
static void outputs_of(const config *cfg, named_path outs[N_OUTPUTS])
{
    outs[0] = (named_path){"the rejects file (--rejects)", cfg->rejects_path};
    outs[1] = (named_path){"--report", cfg->report_path};
    outs[2] = (named_path){"--changes", cfg->changes_path};
    outs[3] = (named_path){"--html", cfg->html_path};
    outs[4] = (named_path){"--discrepancies", cfg->discrepancies_path};
}

bool outputs_check(const config *cfg, buf *err)
{
    named_path outs[N_OUTPUTS];
    outputs_of(cfg, outs);
    const named_path others[] = {
        {"--tenant-map", cfg->tenant_map_path},
        {"--facts", cfg->facts_path},
        {"--profile", cfg->profile_name && profile_names_file(cfg->profile_name)
                          ? cfg->profile_name
                          : NULL},
    };
    size_t n_in = cfg->n_files + sizeof others / sizeof others[0];
    size_t n_out = N_OUTPUTS;
    /* Two outputs in one file: the one written last would replace the other
     * (the report renamed over the changes file).  Standard output, a pipe
     * or /dev/null may take several. */
    for (size_t a = 0; a < n_out; a++) {
        struct stat sa, sb;
        bool a_file = file_of(outs[a].path, &sa);
        /* Standard output, or the file it is redirected to (/dev/stdout >
         * f), is written through the stream: cli.c says which outputs may
         * share it. */
        if (!outs[a].path || outfile_std_stream(outs[a].path) == stdout || (a_file && !S_ISREG(sa.st_mode)))
            continue;
        for (size_t b = a + 1; b < n_out; b++) {
            if (!outs[b].path || outfile_std_stream(outs[b].path) == stdout)
                continue;
            bool same = a_file ? file_of(outs[b].path, &sb) && sb.st_dev == sa.st_dev &&
                                     sb.st_ino == sa.st_ino
                               : strcmp(outs[b].path, "-") != 0 && !file_of(outs[b].path, &sb) &&
                                     same_new_file(outs[a].path, outs[b].path);
            if (!same)
                continue;
            buf_printf(err, "%s %s and %s %s are the same file: one output would replace the "
                            "other; nothing was read or written (give each its own path)",
                       outs[a].what, outs[a].path, outs[b].what, outs[b].path);
            return false;
        }
    }
    for (size_t o = 0; o < n_out; o++) {
        struct stat so;
        if (!file_of(outs[o].path, &so))
            continue;
        for (size_t i = 0; i < n_in; i++) {
            named_path in = i < cfg->n_files ? (named_path){"input", cfg->files[i]}
                                             : others[i - cfg->n_files];
            struct stat si;
            if (!file_of(in.path, &si) || si.st_dev != so.st_dev || si.st_ino != so.st_ino)
                continue;
            buf_printf(err, "%s %s is the same file as the %s %s: an output would overwrite or "
                            "feed on an input; nothing was read or written (name another "
                            "output path, or leave that file out of the inputs)",
                       outs[o].what, outs[o].path, in.what, in.path);
            return false;
        }
    }
    return true;
}

/* Why a new file named path cannot be made in its directory ("" when it
 * can). */
static const char *no_new_file(const char *path)
{
    char *dir = dir_of(path);
    struct stat st;
    const char *why = "";
    if (!dir)
        why = "out of memory";
    else if (stat(dir, &st) != 0)
        why = errno == ENOENT ? "its directory does not exist" : strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "its directory is not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = errno == EACCES ? "its directory is not writable" : strerror(errno);
    free(dir);
    return why;
}

/* Why path cannot be written ("" when it can): an existing file this user
 * may write, or one its directory lets it replace (outfile.h), or a new
 * name (a dangling symbolic link followed to the one it would create) in
 * a directory that takes a file. */
static const char *unwritable(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return "it is a directory";
        struct statfs fs;
        if (S_ISREG(st.st_mode) && statfs(path, &fs) == 0 &&
            (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC))
            return "it is a file of the kernel's /proc or /sys, which takes no output";
        if (access(path, W_OK) == 0) {
            if (!S_ISREG(st.st_mode))
                return "";
            /* Permissions are not all: a /proc or /sys file refuses a
             * writer, root included.  Opened to append, nothing written. */
            int fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0)
                return strerror(errno);
            close(fd);
            return "";
        }
        int e = errno;
        char *real = realpath(path, NULL);
        const char *why = real ? no_new_file(real) : "out of memory";
        free(real);
        return *why ? strerror(e) : "";
    }
    if (errno != ENOENT)
        return strerror(errno);
    char *target = new_file_name(path);
    const char *why = target ? no_new_file(target) : "out of memory";
    free(target);
    return why;
}

bool outputs_writable(const config *cfg, buf *err, const char **refused)
{
    named_path outs[N_OUTPUTS];
    outputs_of(cfg, outs);
    /* The default rejects file is created only when a row is rejected. */
    if (strcmp(cfg->rejects_path, DEFAULT_REJECTS) == 0)
        outs[0].path = NULL;
    for (size_t o = 0; o < N_OUTPUTS; o++) {
        if (!outs[o].path || outfile_std_stream(outs[o].path))
            continue;
        const char *why = unwritable(outs[o].path);
        if (!*why)
            continue;
        buf_printf(err, "cannot write %s '%s': %s; nothing was read or loaded", outs[o].what,
                   outs[o].path, why);
        if (refused)
            *refused = outs[o].path;
        return false;
    }
    return true;
}
