/*
 * lane_sql.c - the statements of a lane, rendered from the target's names
 * (see lane_sql.h).
 */
#include "load/lane_sql.h"

#include "db/sql.h"

static const char *const names_of[] = {"table", "conflict", "active", "do_update",
                                       "missed_probe", "missed_direct", "extra_cols",
                                       "extra_vals", "inserted"};

static bool render(const lane_sql_names *n, buf *out, const char *tmpl, const char *do_update,
                   const char *inserted)
{
    const char *vals[] = {n->table,
                          n->conflict,
                          n->active,
                          do_update,
                          n->update ? SQL_MISSED_PROBE : SQL_MISSED_NONE,
                          n->update ? SQL_MISSED_DIRECT : SQL_MISSED_NOTHING,
                          n->extra_cols,
                          n->extra_vals,
                          inserted};
    buf_clear(out);
    return sql_render(out, tmpl, (int)(sizeof vals / sizeof vals[0]), names_of, vals);
}

bool lane_sql_render(const lane_sql_names *n, lane_sql *out)
{
    buf inserted = BUF_INIT, action = BUF_INIT, returning = BUF_INIT;
    bool ok = render(n, &inserted, n->partitioned ? SQL_INSERTED_SNAPSHOT : SQL_INSERTED_XMAX,
                     "", "") &&
              render(n, &action, n->update ? SQL_CONFLICT_UPDATE : SQL_CONFLICT_NOTHING, "",
                     buf_cstr(&inserted));
    /* The conflict action is followed by what the merge returns of each
     * written row: the single-server merges the key, a distributed one
     * (SQL_CITUS_MERGE) whether it inserted and the id. */
    if (ok && n->update) {
        ok = buf_append_str(&out->citus_action, buf_cstr(&action)) &&
             render(n, &returning, SQL_CITUS_RETURNING, "", buf_cstr(&inserted)) &&
             buf_append_str(&out->citus_action, buf_cstr(&returning)) &&
             render(n, &returning, SQL_CONFLICT_RETURNING, "", buf_cstr(&inserted)) &&
             buf_append_str(&action, buf_cstr(&returning));
    } else if (ok) {
        ok = buf_append_str(&out->citus_action, buf_cstr(&action));
    }
    ok = ok &&
              render(n, &out->merge_probe, SQL_MERGE_PROBE, buf_cstr(&action), "") &&
              render(n, &out->merge_direct, SQL_MERGE_DIRECT, buf_cstr(&action), "") &&
              render(n, &out->count_stale, SQL_COUNT_STALE, "", "") &&
              render(n, &out->merge_detail,
                     n->update ? SQL_MERGE_DETAIL : SQL_MERGE_DETAIL_NOTHING, buf_cstr(&action),
                     "") &&
              render(n, &out->stale_detail, SQL_STALE_DETAIL, "", "") &&
              render(n, &out->append, SQL_APPEND, "", "") &&
              render(n, &out->append_probe, SQL_APPEND_PROBE, "", "") &&
              render(n, &out->xmin_of_key, SQL_XMIN_OF_KEY, "", "") &&
              render(n, &out->supersede, SQL_SUPERSEDE, "", "");
    if (ok && n->shadow_of) {
        lane_sql_names src = *n;
        src.table = n->shadow_of;
        ok = render(&src, &out->shadow_fill, SQL_SHADOW_FILL, "", "");
    }
    buf_free(&inserted);
    buf_free(&action);
    buf_free(&returning);
    return ok;
}

void lane_sql_free(lane_sql *s)
{
    buf_free(&s->merge_probe);
    buf_free(&s->merge_direct);
    buf_free(&s->count_stale);
    buf_free(&s->merge_detail);
    buf_free(&s->stale_detail);
    buf_free(&s->append);
    buf_free(&s->append_probe);
    buf_free(&s->xmin_of_key);
    buf_free(&s->supersede);
    buf_free(&s->shadow_fill);
    buf_free(&s->citus_action);
}
