/*
 * recon_disc.c - the --discrepancies file of reconcile (see
 * recon_render.h): one line per discrepancy as NDJSON, or CSV with a
 * byte-order mark, written as the lines are fetched.
 */
#include "recon/recon_render.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output/csv_field.h"
#include "output/disc_file.h"
#include "output/text_escape.h"
#include "recon/recon_render_parts.h"

/* ---- the discrepancies file ------------------------------------------ */

json_t *recon_json_str(const char *s)
{
    return s ? json_string(s) : json_null();
}


/* A side's facts; status_word: the channel's words for its status (the
 * profile's map read backwards), null without them. */
static json_t *facts_json(const recon_facts *f, const recon_result *res)
{
    if (!f->present)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "amount", recon_json_str(f->amount));
    json_object_set_new(o, "currency", recon_json_str(f->currency));
    json_object_set_new(o, "fee", recon_json_str(f->fee));
    json_object_set_new(o, "status", json_integer(f->status));
    json_object_set_new(o, "status_word", recon_json_str(recon_status_words(res, f->status)));
    json_object_set_new(o, "time", recon_json_str(f->time));
    return o;
}

/* o's "file": a file name is any bytes; one that is not UTF-8 is escaped
 * as in the report, its exact bytes in file_base64 (jansson refuses it as
 * it is).  NULL: null. */
void recon_file_json(json_t *o, const char *file)
{
    if (!file) {
        json_object_set_new(o, "file", json_null());
        return;
    }
    buf name = BUF_INIT, b64 = BUF_INIT;
    bool exact = text_utf8_or_escaped(&name, file);
    json_object_set_new(o, "file", json_stringn(buf_cstr(&name), name.len));
    if (!exact) {
        text_base64(&b64, file, strlen(file));
        json_object_set_new(o, "file_base64", json_stringn(buf_cstr(&b64), b64.len));
    }
    buf_free(&name);
    buf_free(&b64);
}

static json_t *line_json(const recon_line *l, const recon_result *res)
{
    json_t *o = json_object();
    json_object_set_new(o, "category", json_string(recon_category_name(l->category)));
    json_object_set_new(o, "tenant_id", json_integer(l->tenant_id));
    json_object_set_new(o, "channel", recon_json_str(l->channel));
    json_object_set_new(o, "out_trade_no", recon_json_str(l->out_trade_no));
    json_object_set_new(o, "callback_type", recon_json_str(l->callback_type));
    json_object_set_new(o, "day", json_string(l->day));
    json_object_set_new(o, "statement", facts_json(&l->statement, res));
    json_object_set_new(o, "table", facts_json(&l->table, res));
    json_object_set_new(o, "difference", recon_json_str(l->difference));
    recon_file_json(o, l->file);
    json_object_set_new(o, "line", l->file ? json_integer(l->line) : json_null());
    json_object_set_new(o, "first_seen", recon_json_str(l->first_seen));
    json_t *listed = l->listed_rows ? json_array() : json_null();
    for (size_t i = 0; i < l->n_listed; i++) {
        const recon_listing *g = &l->listed[i];
        json_t *f = facts_json(&g->facts, res);
        recon_file_json(f, g->file);
        json_object_set_new(f, "line", g->file ? json_integer(g->line) : json_null());
        json_array_append_new(listed, f);
    }
    json_object_set_new(o, "listed", listed);
    json_object_set_new(o, "listed_rows", l->listed_rows ? json_integer(l->listed_rows)
                                                         : json_null());
    return o;
}

/* A listing as a reader sees it: "FILE:LINE CNY 21.00, fee 0.10, status 1,
 * TIME" (a file name that is not UTF-8 escaped). */
static bool listing_text(buf *out, const recon_listing *g, const recon_result *res)
{
    const recon_facts *f = &g->facts;
    char st[96];
    bool ok = true;
    if (g->file) {
        buf name = BUF_INIT;
        text_utf8_or_escaped(&name, g->file);
        ok = buf_append_str(out, buf_cstr(&name)) &&
             buf_printf(out, ":%lld ", (long long)g->line);
        buf_free(&name);
    }
    return ok && buf_printf(out, "%s%s%s", f->currency ? f->currency : "",
                            f->currency ? " " : "", f->amount ? f->amount : "no amount") &&
           (!f->fee || buf_printf(out, ", fee %s", f->fee)) &&
           buf_printf(out, ", status %s", recon_status_text(res, f->status, st, sizeof st)) &&
           (!f->time || buf_printf(out, ", %s", f->time));
}

/* Every listing of a line, "; " between them, and how many more there are. */
bool recon_listings_text(buf *out, const recon_line *l, const recon_result *res)
{
    bool ok = true;
    for (size_t i = 0; ok && i < l->n_listed; i++)
        ok = (i == 0 || buf_append_str(out, "; ")) && listing_text(out, &l->listed[i], res);
    if (ok && (uint64_t)l->listed_rows > l->n_listed)
        ok = buf_printf(out, "; and %lld more rows", (long long)(l->listed_rows - (int64_t)l->n_listed));
    return ok;
}

static const char *const csv_columns[] = {
    "category",          "tenant_id",       "channel",           "out_trade_no",
    "callback_type",     "day",             "statement_amount",  "statement_currency",
    "statement_fee",     "statement_status", "statement_time",   "table_amount",
    "table_currency",    "table_fee",       "table_status",      "table_time",
    "difference",        "file",            "line",              "first_seen",
    "listed_rows",       "listed",          "statement_status_word", "table_status_word",
    "difference_is",
};

static bool csv_line(buf *out, const recon_line *l, const recon_result *res)
{
    char tenant[24], sst[16], tst[16], line[24], rows[24];
    snprintf(tenant, sizeof tenant, "%lld", (long long)l->tenant_id);
    snprintf(rows, sizeof rows, "%lld", (long long)l->listed_rows);
    buf listed = BUF_INIT;
    if (l->listed_rows && !recon_listings_text(&listed, l, res)) {
        buf_free(&listed);
        return false;
    }
    snprintf(sst, sizeof sst, "%d", l->statement.status);
    snprintf(tst, sizeof tst, "%d", l->table.status);
    snprintf(line, sizeof line, "%lld", (long long)l->line);
    const recon_facts *s = &l->statement, *t = &l->table;
    const char *v[] = {recon_category_name(l->category), tenant, l->channel, l->out_trade_no,
                       l->callback_type, l->day,
                       s->present ? s->amount : NULL, s->present ? s->currency : NULL,
                       s->present ? s->fee : NULL, s->present ? sst : NULL,
                       s->present ? s->time : NULL,
                       t->present ? t->amount : NULL, t->present ? t->currency : NULL,
                       t->present ? t->fee : NULL, t->present ? tst : NULL,
                       t->present ? t->time : NULL,
                       l->difference, l->file, l->file ? line : NULL, l->first_seen,
                       l->listed_rows ? rows : NULL, l->listed_rows ? buf_cstr(&listed) : NULL,
                       s->present ? recon_status_words(res, s->status) : NULL,
                       t->present ? recon_status_words(res, t->status) : NULL,
                       DIFFERENCE_IS};
    /* the data's texts: channel, key, currencies, file, the listings, the
     * profile's status words */
    static const bool text[] = {false, false, true, true, true, false, false, true, false, false,
                                false, false, true, false, false, false, false, true, false, false,
                                false, true, true, true, false};
    _Static_assert(sizeof text / sizeof text[0] == sizeof csv_columns / sizeof csv_columns[0],
                   "one flag per column");
    buf name = BUF_INIT;
    if (l->file && !text_utf8_or_escaped(&name, l->file))
        v[17] = buf_cstr(&name);
    bool ok = true;
    for (size_t i = 0; ok && i < sizeof v / sizeof v[0]; i++)
        ok = csv_field_append(out, v[i], i == 0, text[i]);
    buf_free(&name);
    buf_free(&listed);
    return ok && buf_append_str(out, "\r\n");
}

struct recon_disc {
    disc_file *f;
    const recon_result *res;
};

recon_disc *recon_disc_open(const char *path, const recon_result *res, buf *err)
{
    recon_disc *w = calloc(1, sizeof *w);
    if (!w) {
        buf_printf(err, "--discrepancies %s: out of memory", path);
        return NULL;
    }
    w->res = res;
    w->f = disc_file_open(path, csv_columns, sizeof csv_columns / sizeof csv_columns[0], err);
    if (!w->f) {
        free(w);
        return NULL;
    }
    return w;
}

bool recon_disc_write(recon_disc *w, const recon_line *l, buf *err)
{
    if (disc_file_is_csv(w->f))
        return disc_file_wrote(w->f, csv_line(disc_file_buf(w->f), l, w->res), err);
    return disc_file_put_json(w->f, line_json(l, w->res), err);
}

bool recon_disc_finish(recon_disc *w, buf *err)
{
    return disc_file_finish(w ? w->f : NULL, err);
}

bool recon_disc_publish(recon_disc **wp, buf *err)
{
    recon_disc *w = *wp;
    if (!w)
        return true;
    bool ok = disc_file_publish(&w->f, err);
    free(w);
    *wp = NULL;
    return ok;
}

void recon_disc_discard(recon_disc **wp)
{
    recon_disc *w = *wp;
    if (!w)
        return;
    *wp = NULL;
    disc_file_discard(&w->f);
    free(w);
}
