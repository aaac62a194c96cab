/*
 * recon_result.c - the small helpers of a recon_result (see
 * recon_result.h): category names, verdict tests, freeing.
 */
#include "recon/recon_result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const category_names[CAT_COUNT] = {
    "missing_in_table",  "missing_in_statement",   "amount_mismatch", "currency_mismatch",
    "status_mismatch",   "duplicate_in_statement", "no_statement",
};

const char *recon_category_name(recon_category c)
{
    return c < CAT_COUNT ? category_names[c] : "";
}

recon_category recon_category_of(const char *s)
{
    for (int i = 0; i < CAT_COUNT; i++)
        if (strcmp(category_names[i], s) == 0)
            return (recon_category)i;
    return CAT_COUNT;
}

const char *recon_status_words(const recon_result *r, int status)
{
    for (size_t i = 0; r && i < r->n_statuses; i++)
        if (r->statuses[i].status == status)
            return r->statuses[i].words;
    return NULL;
}

const char *recon_status_text(const recon_result *r, int status, char out[], size_t n)
{
    const char *w = recon_status_words(r, status);
    if (w)
        snprintf(out, n, "%s (%d)", w, status);
    else
        snprintf(out, n, "%d", status);
    return out;
}

bool recon_has_discrepancies(const recon_result *r)
{
    for (int i = 0; i < CAT_COUNT; i++)
        if (r->cat_count[i] > 0)
            return true;
    return false;
}

bool recon_day_balanced(const recon_day *d)
{
    for (int c = 0; c < CAT_COUNT; c++)
        if (d->cat_count[c])
            return false;
    return true;
}

static void side_free(recon_side *s)
{
    for (size_t i = 0; i < s->n_amounts; i++) {
        free(s->amounts[i].currency);
        free(s->amounts[i].amount);
    }
    free(s->amounts);
    for (size_t i = 0; i < s->n_kinds; i++)
        side_free(&s->kinds[i]);
    free(s->kinds);
    free(s->kind);
}

static void facts_text_free(recon_facts *f)
{
    free(f->amount);
    free(f->currency);
    free(f->fee);
    free(f->time);
}

void recon_line_free(recon_line *l)
{
    free(l->channel);
    free(l->out_trade_no);
    free(l->callback_type);
    facts_text_free(&l->statement);
    facts_text_free(&l->table);
    free(l->difference);
    free(l->first_seen);
    for (size_t i = 0; i < l->n_listed; i++)
        facts_text_free(&l->listed[i].facts);
    free(l->listed);
    memset(l, 0, sizeof *l);
}

static void items_free(recon_carried *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        recon_carried *c = &items[i];
        free(c->category);
        free(c->channel);
        free(c->out_trade_no);
        free(c->callback_type);
        free(c->difference);
        free(c->first_seen);
        free(c->resolution);
    }
    free(items);
}

void recon_result_free(recon_result *r)
{
    for (size_t i = 0; i < r->n_days; i++) {
        recon_day *d = &r->days[i];
        free(d->channel);
        side_free(&d->statement);
        side_free(&d->table);
        for (int c = 0; c < CAT_COUNT; c++) {
            free(d->cat_amount[c]);
            free(d->cat_amounts[c]);
            free(d->cat_shown[c]);
            free(d->cat_gross[c]);
            free(d->cat_gross_shown[c]);
        }
        free(d->ccy_sides);
        for (size_t k = 0; k < d->n_diffs; k++) {
            free(d->diffs[k].currency);
            free(d->diffs[k].net);
            free(d->diffs[k].gross);
        }
        free(d->diffs);
    }
    free(r->days);
    side_free(&r->total_statement);
    side_free(&r->total_table);
    for (size_t i = 0; i < r->n_lines; i++)
        recon_line_free(&r->lines[i]);
    free(r->lines);
    items_free(r->carried, r->n_carried);
    items_free(r->appeared_items.items, r->appeared_items.n);
    items_free(r->resolved_items.items, r->resolved_items.n);
    for (size_t i = 0; i < r->n_repaired_keys; i++) {
        recon_key *k = &r->repaired_keys[i];
        free(k->channel);
        free(k->out_trade_no);
        free(k->callback_type);
        free(k->file);
    }
    free(r->repaired_keys);
    for (size_t i = 0; i < r->n_stated; i++) {
        free(r->stated[i].label);
        free(r->stated[i].column);
        free(r->stated[i].kind);
        free(r->stated[i].stated);
        free(r->stated[i].rows_sum);
    }
    free(r->stated);
    for (size_t i = 0; i < r->n_statuses; i++)
        free(r->statuses[i].words);
    free(r->statuses);
    free(r->zone);
    memset(r, 0, sizeof *r);
}

void recon_result_unregister(recon_result *r)
{
    items_free(r->appeared_items.items, r->appeared_items.n);
    items_free(r->resolved_items.items, r->resolved_items.n);
    memset(&r->appeared_items, 0, sizeof r->appeared_items);
    memset(&r->resolved_items, 0, sizeof r->resolved_items);
    r->registered = false;
    r->run_id = 0;
    r->appeared = r->resolved = r->escalated = 0;
}
