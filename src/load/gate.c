/*
 * gate.c - the commit gate and barrier of the chunk in flight (see gate.h).
 */
#include "load/gate.h"

#include <time.h>

#include "util/clock.h"

bool gate_init(gate *g)
{
    g->word = GATE_RUNNING;
    g->barrier = false;
    g->arrived = g->expected = 0;
    if (pthread_mutex_init(&g->mu, NULL) != 0)
        return false;
    if (pthread_cond_init(&g->cv, NULL) != 0) {
        pthread_mutex_destroy(&g->mu);
        return false;
    }
    g->inited = true;
    return true;
}

void gate_destroy(gate *g)
{
    if (!g->inited)
        return;
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    g->inited = false;
}

bool gate_cancelled(const gate *g)
{
    return __atomic_load_n(&g->word, __ATOMIC_SEQ_CST) == GATE_CANCELLED;
}

bool gate_may_commit(gate *g)
{
    int expected = GATE_RUNNING;
    __atomic_compare_exchange_n(&g->word, &expected, GATE_COMMITTING, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return expected != GATE_CANCELLED;
}

bool gate_cancel(gate *g)
{
    int expected = GATE_RUNNING;
    return __atomic_compare_exchange_n(&g->word, &expected, GATE_CANCELLED, false,
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ||
           expected == GATE_CANCELLED;
}

void gate_force_cancel(gate *g)
{
    __atomic_store_n(&g->word, GATE_CANCELLED, __ATOMIC_SEQ_CST);
}

void gate_reopen(gate *g)
{
    int committing = GATE_COMMITTING;
    __atomic_compare_exchange_n(&g->word, &committing, GATE_RUNNING, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
}

void gate_barrier_reset(gate *g, int expected, bool applies)
{
    g->arrived = 0;
    g->expected = expected;
    g->barrier = applies;
}

void gate_arrive(gate *g, bool *arrived, bool wait)
{
    if (!g->barrier || *arrived)
        return;
    pthread_mutex_lock(&g->mu);
    *arrived = true;
    g->arrived++;
    pthread_cond_broadcast(&g->cv);
    double end = now_seconds() + GATE_BARRIER_MS / 1000.0;
    /* Naps of 50 ms: the signal handler cannot wake a condition variable. */
    while (wait && g->arrived < g->expected && !gate_cancelled(g) && now_seconds() < end) {
        struct timespec nap;
        clock_gettime(CLOCK_REALTIME, &nap);
        nap.tv_nsec += 50000000L;
        if (nap.tv_nsec >= 1000000000L) {
            nap.tv_sec++;
            nap.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->cv, &g->mu, &nap);
    }
    pthread_mutex_unlock(&g->mu);
}

void gate_sleep_ms(const gate *g, long ms)
{
    while (ms > 0 && !gate_cancelled(g)) {
        long step = ms < 50 ? ms : 50;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}
