/*
 * recon_render_parts.h - what reconcile's renderers (recon_render.c: the
 * summary and the report; recon_disc.c: the discrepancies file;
 * recon_page.c: the page's section) share: a line's JSON and listings
 * (recon_disc.c), and what a reader sees of a result (recon_text.c).
 */
#ifndef IDEMLOAD_RECON_RENDER_PARTS_H
#define IDEMLOAD_RECON_RENDER_PARTS_H

#include <jansson.h>
#include <stdbool.h>

#include "recon/recon_result.h"
#include "util/buf.h"

/* What a difference is, wherever a reader sees one. */
#define DIFFERENCE_IS "statement minus table (the channel minus our records)"

/* The run's verdict: "not compared", "discrepancies" or "balanced". */
const char *recon_verdict(const recon_result *r);

/* s as a JSON string, NULL as null. */
json_t *recon_json_str(const char *s);
/* o's "file": a file name is any bytes; one that is not UTF-8 is escaped
 * as in the report, its exact bytes in file_base64.  NULL: null. */
void recon_file_json(json_t *o, const char *file);
/* A duplicate_in_statement line's listings as text, appended to *out
 * (nothing for another line).  False when out of memory. */
bool recon_listings_text(buf *out, const recon_line *l, const recon_result *res);

/* The statement's compared amounts of a stated total's kind, over the
 * run; NULL: no kind, none, or a total of another column. */
const recon_side *recon_stated_compared(const recon_result *r, const recon_stated *st);
/* 1: the stated figure differs from the compared amount; 0: equal; -1:
 * not comparable. */
int recon_stated_differs(const recon_side *k, const recon_stated *st);

/* A category's money on day d as a reader sees it, appended to *out;
 * the day's money differences, each key once, likewise.  False when out
 * of memory. */
bool recon_category_money_text(buf *out, const recon_day *d, int c);
bool recon_day_money_text(buf *out, const recon_day *d);

#endif
