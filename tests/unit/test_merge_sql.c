/*
 * test_merge_sql.c - the statements a lane runs (src/load/lane_sql.c),
 * rendered for the default table public.payment_callback and compared byte
 * for byte with tests/golden/NAME.sql, so a reviewer reads the SQL that runs,
 * whole: the probing and the direct merge, updating and not, the stale
 * count, one with a --set column beyond idemload's own, one for a
 * partitioned table, and the row-by-row forms --changes runs.
 *
 * The names are those target.c builds for the table of `idemload init`
 * (its index predicate as pg_get_expr prints it).  A golden file holds the
 * statement one clause per line, as sql.c writes it (a line break wherever
 * the rendered text has a run of blanks, that run's length kept as the
 * indentation), so a changed clause shows as one changed line in a diff.
 * The comparison is token for token: white space outside quotes compares
 * as one blank, inside a quoted literal or identifier byte for byte.
 * When the SQL changes on purpose, rewrite them:
 *   IDEMLOAD_GOLDEN_UPDATE=1 ctest -R unit/test_merge_sql   (then git diff)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/lane_sql.h"

#define TABLE "\"public\".\"payment_callback\""
#define ACTIVE "(deleted_at IS NULL)"
#define CONFLICT "(tenant_id, channel, out_trade_no, callback_type) WHERE " ACTIVE

enum which { PROBE, DIRECT, STALE, DETAIL, STALE_DETAIL, APPEND };

typedef struct golden_case {
    const char *file;
    enum which which;
    bool update;
    bool partitioned;
    const char *extra_cols, *extra_vals;
} golden_case;

static const golden_case cases[] = {
    {"merge_probe_update.sql", PROBE, true, false, "", ""},
    {"merge_direct_update.sql", DIRECT, true, false, "", ""},
    /* Rendered but never sent today: DO NOTHING writes no existing row, so
     * a lane under --on-conflict nothing always merges direct. */
    {"merge_probe_nothing.sql", PROBE, false, false, "", ""},
    {"merge_direct_nothing.sql", DIRECT, false, false, "", ""},
    {"count_stale.sql", STALE, true, false, "", ""},
    /* --set merchant_id=42 on a table with a NOT NULL merchant_id bigint:
     * its parameter follows $1..$3. */
    {"merge_direct_update_set.sql", DIRECT, true, false, ", \"merchant_id\"", ", $4::bigint"},
    {"merge_probe_update_set.sql", PROBE, true, false, ", \"merchant_id\"", ", $4::bigint"},
    /* A partitioned table returns no xmax: {inserted} asks the snapshot. */
    {"merge_probe_update_partitioned.sql", PROBE, true, true, "", ""},
    {"merge_direct_update_partitioned.sql", DIRECT, true, true, "", ""},
    /* --changes: every row's outcome with its versions before and after. */
    {"merge_detail_update.sql", DETAIL, true, false, "", ""},
    {"merge_detail_nothing.sql", DETAIL, false, false, "", ""},
    {"stale_detail.sql", STALE_DETAIL, true, false, "", ""},
    /* New keys straight into the target, in place of staging and merging. */
    {"append.sql", APPEND, true, false, "", ""},
};

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *data = malloc(cap);
    assert_non_null(data);
    size_t got;
    while ((got = fread(data + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            data = realloc(data, cap);
            assert_non_null(data);
        }
    }
    fclose(f);
    *len = n;
    return data;
}

/* The statement with each run of white space outside quotes made one
 * blank, and none at either end: what "token for token" compares. */
static void squeeze(const char *s, size_t n, buf *out)
{
    char quote = 0;
    bool blank = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!quote && (c == ' ' || c == '\n' || c == '\t' || c == '\r')) {
            blank = true;
            continue;
        }
        if (blank && out->len > 0)
            assert_true(buf_append(out, " ", 1));
        blank = false;
        if (quote && c == quote)
            quote = 0;
        else if (!quote && (c == '\'' || c == '"'))
            quote = c;
        assert_true(buf_append(out, &c, 1));
    }
}

/* The golden form: a line break before each run of two or more blanks
 * outside quotes (where sql.c's text broke its lines), the run kept as the
 * next line's indentation; a final newline. */
static void pretty(const char *s, size_t n, buf *out)
{
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!quote && c == ' ' && i + 1 < n && s[i + 1] == ' ') {
            size_t j = i;
            while (j < n && s[j] == ' ')
                j++;
            assert_true(buf_append(out, "\n", 1));
            assert_true(buf_append(out, s + i + 1, j - i - 1));
            i = j - 1;
            continue;
        }
        if (quote && c == quote)
            quote = 0;
        else if (!quote && (c == '\'' || c == '"'))
            quote = c;
        assert_true(buf_append(out, &c, 1));
    }
    assert_true(buf_append(out, "\n", 1));
}

/* The first byte where a and b differ, for the failure message. */
static size_t first_difference(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    return i;
}

static void check_case(const golden_case *gc)
{
    const char *dir = getenv("IDEMLOAD_GOLDEN");
    assert_non_null(dir);
    lane_sql_names names = {.table = TABLE,
                            .conflict = CONFLICT,
                            .active = ACTIVE,
                            .extra_cols = gc->extra_cols,
                            .extra_vals = gc->extra_vals,
                            .partitioned = gc->partitioned,
                            .update = gc->update};
    lane_sql sql = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    assert_true(lane_sql_render(&names, &sql));
    const buf *b = gc->which == PROBE          ? &sql.merge_probe
                   : gc->which == DIRECT       ? &sql.merge_direct
                   : gc->which == DETAIL       ? &sql.merge_detail
                   : gc->which == STALE_DETAIL ? &sql.stale_detail
                   : gc->which == APPEND       ? &sql.append
                                               : &sql.count_stale;
    buf want = BUF_INIT;
    pretty(b->data, b->len, &want);
    /* No template placeholder may survive the rendering. */
    assert_null(strstr(buf_cstr(&want), "{table}"));
    assert_null(strstr(buf_cstr(&want), "{inserted}"));

    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, gc->file);
    const char *update = getenv("IDEMLOAD_GOLDEN_UPDATE");
    if (update && strcmp(update, "1") == 0) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(want.data, 1, want.len, f), want.len);
        assert_int_equal(fclose(f), 0);
    }
    size_t len = 0;
    char *have = read_all(path, &len);
    if (!have)
        fail_msg("%s: cannot read (IDEMLOAD_GOLDEN_UPDATE=1 writes it)", path);
    buf g = BUF_INIT, r = BUF_INIT;
    squeeze(have, len, &g);
    squeeze(b->data, b->len, &r);
    if (g.len != r.len || memcmp(g.data, r.data, g.len) != 0) {
        size_t at = first_difference(g.data, g.len, r.data, r.len);
        fail_msg("%s differs from the rendered statement at token byte %zu:\n  golden:   %.60s\n"
                 "  rendered: %.60s\n(if the SQL changed on purpose: IDEMLOAD_GOLDEN_UPDATE=1)",
                 path, at, at < g.len ? g.data + at : "<end>",
                 at < r.len ? r.data + at : "<end>");
    }
    free(have);
    buf_free(&g);
    buf_free(&r);
    buf_free(&want);
    lane_sql_free(&sql);
}

static void test_golden(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

/* Updating and not, probing and not: the four merges differ from each
 * other, and only the updating ones carry the final statuses ($3). */
static void test_variants_differ(void **state)
{
    (void)state;
    lane_sql_names names = {.table = TABLE, .conflict = CONFLICT, .active = ACTIVE,
                            .extra_cols = "", .extra_vals = "", .update = true};
    lane_sql up = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT},
             no = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    assert_true(lane_sql_render(&names, &up));
    names.update = false;
    assert_true(lane_sql_render(&names, &no));
    assert_string_not_equal(buf_cstr(&up.merge_probe), buf_cstr(&up.merge_direct));
    assert_string_not_equal(buf_cstr(&up.merge_probe), buf_cstr(&no.merge_probe));
    assert_non_null(strstr(buf_cstr(&up.merge_direct), "$3::smallint[]"));
    assert_null(strstr(buf_cstr(&no.merge_direct), "$3"));
    assert_non_null(strstr(buf_cstr(&no.merge_direct), "DO NOTHING"));
    lane_sql_free(&up);
    lane_sql_free(&no);
}

/* The comparison itself: line breaks and indentation do not count, a
 * changed token does, and so does white space inside a quoted literal or
 * identifier; the golden form squeezes back to the rendered statement. */
static void test_comparison_is_token_for_token(void **state)
{
    (void)state;
    const char *pairs[][3] = {
        /* a, b, equal? ("1" or "0") */
        {"SELECT a,  b\n  FROM t", "SELECT a, b FROM t", "1"},
        {"SELECT a FROM t", "SELECT a FROM u", "0"},
        {"SELECT 'x  y'", "SELECT 'x y'", "0"},
        {"SELECT \"a  b\"", "SELECT \"a b\"", "0"},
        {"  SELECT 1 ", "SELECT 1", "1"},
        {"SELECT a<b", "SELECT a < b", "0"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        buf a = BUF_INIT, b = BUF_INIT;
        squeeze(pairs[i][0], strlen(pairs[i][0]), &a);
        squeeze(pairs[i][1], strlen(pairs[i][1]), &b);
        bool same = a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
        assert_int_equal(same, pairs[i][2][0] == '1');
        buf_free(&a);
        buf_free(&b);
    }
    const char *stmt = "WITH m AS (  INSERT INTO t    SELECT 'a  b' ) SELECT 1";
    buf p = BUF_INIT, x = BUF_INIT, y = BUF_INIT;
    pretty(stmt, strlen(stmt), &p);
    assert_non_null(strchr(buf_cstr(&p), '\n'));
    assert_non_null(strstr(buf_cstr(&p), "'a  b'"));
    squeeze(p.data, p.len, &x);
    squeeze(stmt, strlen(stmt), &y);
    assert_int_equal(x.len, y.len);
    assert_memory_equal(x.data, y.data, x.len);
    buf_free(&p);
    buf_free(&x);
    buf_free(&y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_comparison_is_token_for_token),
        cmocka_unit_test(test_variants_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
