/*
 * exitcodes.h - the process exit statuses of SPEC.md, in one place.
 * Only main() turns them into an exit; everything below returns them.
 */
#ifndef IDEMLOAD_EXITCODES_H
#define IDEMLOAD_EXITCODES_H

enum exit_code {
    EXIT_OK = 0,          /* every row loaded (or would load) */
    EXIT_REJECTS = 1,     /* finished, some rows rejected */
    EXIT_USAGE = 2,       /* usage or configuration error */
    EXIT_INPUT = 3,       /* input unreadable or corrupt */
    EXIT_DATABASE = 4,    /* database error retries did not overcome */
    EXIT_DISCREPANCIES = 5, /* reconcile: the statements and the table disagree */
    EXIT_INTERRUPTED = 130
};

/* Exit status 1 of the table tools (check, dedupe, create-index): they
 * finished, but found something the operator must act on (an unsafe
 * table, duplicates, refused keys).  It equals EXIT_REJECTS by design:
 * status 1 always means "finished, now look at what it found". */
#define EXIT_FINDINGS EXIT_REJECTS

/* How severe a status is (SPEC.md, "Exit status": 4, 3, 2, 130, then 5,
 * then 1, then 0): a database error outranks an interrupt, and a found
 * discrepancy outranks rejected rows but not a failure.  An unknown status
 * ranks above everything, so it is never hidden. */
static inline int exit_rank(int code)
{
    switch (code) {
    case EXIT_OK: return 0;
    case EXIT_REJECTS: return 1;
    case EXIT_DISCREPANCIES: return 2;
    case EXIT_INTERRUPTED: return 3;
    case EXIT_USAGE: return 4;
    case EXIT_INPUT: return 5;
    case EXIT_DATABASE: return 6;
    default: return 7;
    }
}

/* The more severe of two statuses, by exit_rank. */
static inline int exit_worst(int a, int b)
{
    return exit_rank(a) >= exit_rank(b) ? a : b;
}

#endif
