/*
 * signals.c - interruption flag and hook (see signals.h).
 */
#include "util/signals.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>

static volatile sig_atomic_t interrupted;
static void (*volatile hook)(void *);
static void *volatile hook_arg;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
    void (*fn)(void *) = hook;
    if (fn)
        fn(hook_arg);
}

void signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A closed stdout pipe (report to `| head`) must be an error, not death. */
    signal(SIGPIPE, SIG_IGN);
}

bool signals_interrupted(void)
{
    return interrupted != 0;
}

void signals_set_hook(void (*fn)(void *arg), void *arg)
{
    hook = NULL;
    hook_arg = arg;
    hook = fn;
}
