/*
 * settle_result.c - the gathered result of a settle run (see
 * settle_result.h): its names and its memory.
 */
#include "settle/settle_result.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[SETTLE_CATEGORY_COUNT] = {
    [SETTLE_FEE_MISMATCH] = "fee_mismatch",
    [SETTLE_PAYOUT_MISMATCH] = "payout_mismatch",
    [SETTLE_BALANCE_BREAK] = "balance_break",
    [SETTLE_PAYOUT_NOT_RECEIVED] = "payout_not_received",
    [SETTLE_UNEXPECTED_DEPOSIT] = "unexpected_deposit",
    [SETTLE_UNSETTLED_PAYMENT] = "unsettled_payment",
};

const char *settle_category_name(settle_category c)
{
    return (unsigned)c < SETTLE_CATEGORY_COUNT ? names[c] : "?";
}

int settle_category_of(const char *name)
{
    for (int c = 0; name && c < SETTLE_CATEGORY_COUNT; c++)
        if (strcmp(names[c], name) == 0)
            return c;
    return -1;
}

bool settle_has_discrepancies(const settle_result *r)
{
    for (int c = 0; c < SETTLE_CATEGORY_COUNT; c++)
        if (r->count[c])
            return true;
    return false;
}

void settle_line_free(settle_line *l)
{
    free(l->category);
    free(l->channel);
    free(l->day);
    free(l->subject);
    free(l->currency);
    free(l->expected);
    free(l->actual);
    free(l->difference);
    free(l->file);
    free(l->detail);
    free(l->first_seen);
    free(l->resolution);
    memset(l, 0, sizeof *l);
}

bool settle_lines_push(settle_lines *ls, settle_line *l)
{
    if (ls->n == ls->cap) {
        size_t cap = ls->cap ? ls->cap * 2 : 16;
        settle_line *v = realloc(ls->v, cap * sizeof *v);
        if (!v) {
            settle_line_free(l);
            return false;
        }
        ls->v = v;
        ls->cap = cap;
    }
    ls->v[ls->n++] = *l;
    memset(l, 0, sizeof *l);
    return true;
}

void settle_lines_free(settle_lines *ls)
{
    for (size_t i = 0; i < ls->n; i++)
        settle_line_free(&ls->v[i]);
    free(ls->v);
    memset(ls, 0, sizeof *ls);
}

void settle_result_free(settle_result *r)
{
    for (size_t i = 0; i < r->n_days; i++) {
        free(r->days[i].channel);
        free(r->days[i].day);
        free(r->days[i].categories);
        free(r->days[i].amounts);
    }
    free(r->days);
    for (size_t i = 0; i < r->n_files; i++)
        free(r->files[i].picked_name);
    free(r->files);
    free(r->zone);
    settle_lines_free(&r->examples);
    settle_lines_free(&r->carried);
    settle_lines_free(&r->resolved);
    memset(r, 0, sizeof *r);
}
