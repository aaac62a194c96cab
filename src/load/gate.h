/*
 * gate.h - the commit gate and the commit barrier of the chunk in flight,
 * so an interrupt leaves whole chunks and the lanes of a chunk commit
 * together.  Knows nothing of the loader: the coordinator owns one gate,
 * the lanes and the signal hook use it.
 *
 * The gate is one word: RUNNING, COMMITTING or CANCELLED.  The signal hook
 * moves it from RUNNING to CANCELLED (gate_cancel) and then cancels every
 * statement; the first lane ready to commit moves it from RUNNING to
 * COMMITTING (gate_may_commit), after which an interrupt lets the chunk's
 * lanes finish and commit (the import stops after it).  Compare-and-swap on
 * the word, so gate_cancel is async-signal-safe.  CANCELLED is final.
 *
 * Ownership: the caller owns the struct; gate_init() before use,
 * gate_destroy() after the last thread that used it has stopped.
 */
#ifndef IDEMLOAD_GATE_H
#define IDEMLOAD_GATE_H

#include <pthread.h>
#include <stdbool.h>

enum { GATE_RUNNING, GATE_COMMITTING, GATE_CANCELLED };

/*
 * The commit barrier: a lane ready to commit waits until every lane of the
 * chunk is ready, so their COMMITs go out together and a crash can hardly
 * fall between them; a lane that gives up arrives without waiting.  The
 * wait ends after GATE_BARRIER_MS whatever happens: a waiting lane holds its
 * row locks, and two imports waiting at their barriers for lanes blocked by
 * each other's locks would otherwise never end.
 */
#define GATE_BARRIER_MS 2000

typedef struct gate {
    int word;               /* GATE_*, atomic */
    pthread_mutex_t mu;     /* the barrier's counts */
    pthread_cond_t cv;
    bool inited;
    bool barrier;           /* does the barrier apply to the chunk in flight? */
    int arrived, expected;
} gate;

/* Prepares a gate, open (RUNNING); false when the mutex or condition
 * variable cannot be made. */
bool gate_init(gate *g);
void gate_destroy(gate *g);

/* Has an interrupt cancelled the chunk in flight? */
bool gate_cancelled(const gate *g);

/* May a lane commit?  False once cancelled; the first lane to ask closes
 * the gate to cancelling (COMMITTING). */
bool gate_may_commit(gate *g);

/* From the signal handler: cancels the chunk in flight unless a lane has
 * begun to commit.  True when the chunk is cancelled (now or before): the
 * caller then cancels the statements in flight.  Async-signal-safe. */
bool gate_cancel(gate *g);

/* Cancels the chunk in flight even when a lane has begun to commit (the
 * wait for a hung server is over: its connections are being closed).
 * Async-signal-safe. */
void gate_force_cancel(gate *g);

/* Between chunks: a gate left COMMITTING opens again (RUNNING); a
 * cancelled one stays cancelled. */
void gate_reopen(gate *g);

/* Before the lanes of a chunk start (no lane running): `expected` lanes
 * will arrive; `applies` false switches the barrier off for this chunk (a
 * dry run, one connection, or a connection running several lanes). */
void gate_barrier_reset(gate *g, int expected, bool applies);

/*
 * A lane arrives at the barrier; *arrived is the lane's own flag (a lane
 * arrives once per chunk: later calls do nothing).  With wait, blocks until
 * every expected lane has arrived, the chunk is cancelled or
 * GATE_BARRIER_MS have passed.
 */
void gate_arrive(gate *g, bool *arrived, bool wait);

/* Sleeps ms milliseconds, waking early when the chunk is cancelled
 * (signals reach only the main thread, so other threads look at the gate
 * between short naps). */
void gate_sleep_ms(const gate *g, long ms);

#endif
