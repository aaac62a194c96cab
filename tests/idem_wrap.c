/*
 * idem_wrap: what the shell tests run as $IDEMLOAD (tests/lib.sh), so that
 * no call of idemload can hide a sanitizer finding, whatever the test does
 * with its exit status and its stderr (a `2>err.txt` the next call
 * overwrites, a status never read, a `$(...)`).
 *
 * It runs $IDEMLOAD_WRAP_REAL with its own arguments as its child, and
 * appends a line to $IDEMLOAD_WRAP_LOG (the test's .run_failures, which
 * `finish` fails on) when the child
 *   - exited 86, 87 or 88: the sanitizers' statuses (tests/CMakeLists.txt),
 *     never one of idemload's (0-5, 130);
 *   - wrote a sanitizer report to its stderr, when that is a regular file
 *     (the bytes it added are read, from where the file ended at the start).
 * Otherwise it is the child, as far as the test can tell: same stdin,
 * stdout and stderr, same exit status or the same signal death; SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to it go to the child;
 * kill -9 of it kills the child too (PR_SET_PDEATHSIG).  SIGSTOP cannot be
 * passed on: a test that stops idemload stops the child (real_pid in
 * tests/lib.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t child;

static void forward(int sig)
{
    if (child > 0)
        kill(child, sig);
}

/* Whether the bytes of fd 2 from offset `from` on hold a sanitizer report
 * (tests/lib.sh's SAN_RE); at most the last 64 MiB are read. */
static int report_in_stderr(off_t from)
{
    char path[64], file[4096];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/fd/2");
    ssize_t n = readlink(path, file, sizeof file - 1);
    if (n <= 0)
        return 0;
    file[n] = '\0';
    int fd = open(file, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= from) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    if (st.st_size - from > (off_t)64 << 20)
        from = st.st_size - ((off_t)64 << 20);
    size_t len = (size_t)(st.st_size - from);
    char *buf = malloc(len + 1);
    ssize_t got = buf ? pread(fd, buf, len, from) : -1;
    close(fd);
    if (got <= 0) {
        free(buf);
        return 0;
    }
    for (ssize_t i = 0; i < got; i++)   /* regexec stops at a NUL */
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[got] = '\0';
    regex_t re;
    int found = 0;
    if (regcomp(&re, "ERROR: (Address|Leak)Sanitizer|runtime error: |"
                "SUMMARY: (Address|Leak|UndefinedBehavior|Thread)Sanitizer|"
                "WARNING: ThreadSanitizer", REG_EXTENDED | REG_NOSUB) == 0) {
        found = regexec(&re, buf, 0, NULL, 0) == 0;
        regfree(&re);
    }
    free(buf);
    return found;
}

static void record(const char *log, int argc, char **argv, const char *why)
{
    FILE *f = fopen(log, "a");
    if (!f)
        return;
    fprintf(f, "idemload");
    for (int i = 1; i < argc && i < 12; i++)
        fprintf(f, " %.200s", argv[i]);
    fprintf(f, "%s: %s\n", argc > 12 ? " ..." : "", why);
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *real = getenv("IDEMLOAD_WRAP_REAL");
    const char *log = getenv("IDEMLOAD_WRAP_LOG");
    if (!real || !*real || !log || !*log) {
        fprintf(stderr, "idem_wrap: IDEMLOAD_WRAP_REAL and IDEMLOAD_WRAP_LOG must be set\n");
        return 2;
    }
    struct stat st;
    off_t from = fstat(2, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : 0;
    /* The signals to pass on are blocked until the child's pid is known. */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    sigset_t set, old;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaddset(&set, sigs[i]);
    sigprocmask(SIG_BLOCK, &set, &old);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("idem_wrap: fork");
        return 2;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(137);
        sigprocmask(SIG_SETMASK, &old, NULL);
        argv[0] = (char *)real;
        execv(real, argv);
        fprintf(stderr, "idem_wrap: %s: %s\n", real, strerror(errno));
        _exit(127);
    }
    child = pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &sa, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            perror("idem_wrap: waitpid");
            return 2;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) >= 86 && WEXITSTATUS(status) <= 88) {
        char why[64];
        snprintf(why, sizeof why, "exit %d (a sanitizer's)", WEXITSTATUS(status));
        record(log, argc, argv, why);
    }
    if (report_in_stderr(from))
        record(log, argc, argv, "a sanitizer report in its stderr");
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
        return 128 + sig;
    }
    return WEXITSTATUS(status);
}
