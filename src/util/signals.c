/*
 * signals.c - interruption flag and hook (see signals.h).
 *
 * The hook is published through one atomic pointer to a slot holding the
 * function and its argument, so the handler always sees a matching pair:
 * signals_set_hook() fills the slot not in use, then swaps the pointer.
 */
#include "util/signals.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

typedef struct hook_slot {
    void (*fn)(void *);
    void *arg;
} hook_slot;

/* Set in the handler, read by every thread (the reader thread polls it):
 * a lock-free atomic, which is also async-signal-safe. */
static atomic_int interrupted;
static hook_slot slots[2];
static _Atomic(hook_slot *) hook;   /* NULL: none */

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;  /* the hook (PQcancel) may set it under the interrupted code */
    atomic_store(&interrupted, 1);
    hook_slot *h = atomic_load(&hook);
    if (h)
        h->fn(h->arg);
    errno = saved;
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
    /* So must a file grown past the file-size limit (`ulimit -f`): the
     * write fails with EFBIG, the output is not writable (exit 3). */
    signal(SIGXFSZ, SIG_IGN);
}

bool signals_interrupted(void)
{
    return atomic_load(&interrupted) != 0;
}

void signals_set_hook(void (*fn)(void *arg), void *arg)
{
    if (!fn) {
        atomic_store(&hook, NULL);
        return;
    }
    hook_slot *cur = atomic_load(&hook);
    hook_slot *next = cur == &slots[0] ? &slots[1] : &slots[0];
    next->fn = fn;
    next->arg = arg;
    atomic_store(&hook, next);
}
