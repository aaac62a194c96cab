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
    EXIT_INTERRUPTED = 130
};

/* Exit status 1 of the table tools (check, dedupe, create-index): they
 * finished, but found something the operator must act on (an unsafe
 * table, duplicates, refused keys).  It equals EXIT_REJECTS by design:
 * status 1 always means "finished, now look at what it found". */
#define EXIT_FINDINGS EXIT_REJECTS

/* The more severe of two statuses (130 > 4 > 3 > 2 > 1 > 0). */
static inline int exit_worst(int a, int b)
{
    return a > b ? a : b;
}

#endif
