/*
 * test_recon_columns.c - the column lists every command sends are the
 * column table's (core/columns.h): the fields a COPY tuple carries equal
 * the COPY's column list, name for name, and the staging table it copies
 * into has those columns in that order; for reconcile (idemload_recon_raw,
 * SQL_RECON_COPY, copy_binary_recon_row, the table read) and for import
 * (idemload_stage, SQL_COPY_STAGE, copy_binary_row; SQL_APPEND,
 * copy_binary_target_row).
 *
 * Built twice: as every unit test, and as unit/test_recon_columns_extra
 * with IDEMLOAD_TEST_EXTRA_COLUMN, a column table of one more column (a
 * fact, test_fact): a list written by hand instead of generated, as
 * SQL_RECON_COPY's was, passes the first and fails the second (the COPY
 * would send one more field than its list names, an error only at run time).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/columns.h"
#include "db/recon_sql.h"
#include "db/sql.h"
#include "load/copy_encode.h"

#define NAME_1(ID, name, member, kind, key, pos, dflt, A, B) #name,
static const char *const names[] = {IDEMLOAD_COLUMNS(NAME_1, ~, ~)};
enum { NCOL = sizeof names / sizeof names[0] };

#define MAXLIST 64

typedef struct list {
    int n;
    char item[MAXLIST][64];
} list;

/* A row with every member of the column table set. */
#define FILL_INT64(m) r.m = 7;
#define FILL_INT16(m) r.m = 2;
#define FILL_TEXT(m) r.m = #m; r.m##_len = strlen(#m);
#define FILL_JSON(m) r.m = "{\"a\":1}"; r.m##_len = strlen(r.m);
#define FILL_TIME(m) r.m = INT64_C(1772330400000000);
#define FILL_1(ID, name, member, kind, key, pos, dflt, A, B) FILL_##kind(member)
static row full_row(void)
{
    row r;
    memset(&r, 0, sizeof r);
    IDEMLOAD_COLUMNS(FILL_1, ~, ~)
    return r;
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The number of fields of the one tuple in out (its count, checked against
 * the fields that follow it, which must end exactly at the end). */
static int tuple_fields(const buf *out)
{
    const unsigned char *p = (const unsigned char *)out->data;
    assert_true(out->len >= 2);
    int n = p[0] << 8 | p[1];
    size_t at = 2;
    for (int i = 0; i < n; i++) {
        assert_true(at + 4 <= out->len);
        uint32_t len = get32(p + at);
        at += 4 + (len == UINT32_MAX ? 0 : len);   /* -1: NULL */
    }
    assert_int_equal(at, out->len);
    return n;
}

/* The first comma of s before e outside parentheses, else e. */
static const char *next_comma(const char *s, const char *e)
{
    int depth = 0;
    for (; s < e; s++) {
        if (*s == '(')
            depth++;
        else if (*s == ')')
            depth--;
        else if (*s == ',' && depth == 0)
            return s;
    }
    return e;
}

/* The comma-separated names (or expressions) from s up to e. */
static list split_span(const char *s, const char *e)
{
    list l = {0};
    while (s < e) {
        const char *c = next_comma(s, e);
        const char *a = s, *b = c;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        assert_true(l.n < MAXLIST && b - a < 64);
        memcpy(l.item[l.n], a, (size_t)(b - a));
        l.item[l.n][b - a] = '\0';
        l.n++;
        s = c + 1;
    }
    return l;
}

/* The comma-separated names from just after `open` up to `close` in sql. */
static list split_after(const char *sql, const char *open, const char *close)
{
    const char *s = strstr(sql, open);
    assert_non_null(s);
    s += strlen(open);
    const char *e = strstr(s, close);
    assert_non_null(e);
    return split_span(s, e);
}

/* The same from just after the last `open` before the first `close`: a
 * list in a sub-select, whose statement opens others before it. */
static list split_before(const char *sql, const char *open, const char *close)
{
    const char *e = strstr(sql, close);
    assert_non_null(e);
    const char *s = NULL;
    for (const char *p = strstr(sql, open); p && p < e; p = strstr(p + 1, open))
        s = p;
    assert_non_null(s);
    return split_span(s + strlen(open), e);
}

/* The column list `lead` (NULL for none) then the column table's names. */
/* l is the leading columns named (a NULL-ended list), then the table's. */
static void assert_columns_after(const list *l, const char *const *lead)
{
    int k = 0;
    for (; lead[k]; k++)
        assert_string_equal(l->item[k], lead[k]);
    assert_int_equal(l->n, k + NCOL);
    for (int i = 0; i < NCOL; i++)
        assert_string_equal(l->item[k + i], names[i]);
}
#define assert_columns(l, ...) assert_columns_after(l, (const char *const[]){__VA_ARGS__, NULL})

/* Column definitions "name type ... NOT NULL": the names.  Only the
 * texts, numbers and day reconcile stages beside a row (and its level)
 * may be NULL. */
static list def_names(const list *defs)
{
    static const char *const nullable[] = {"lvl ",      "a_text ", "c_text ", "f_text ",
                                           "rec_text ", "a_num ",  "f_num ",  "day "};
    list l = {0};
    for (int i = 0; i < defs->n; i++) {
        const char *d = defs->item[i];
        size_t len = strlen(d);
        bool may_be_null = false;
        for (size_t k = 0; k < sizeof nullable / sizeof *nullable; k++)
            may_be_null |= strncmp(d, nullable[k], strlen(nullable[k])) == 0;
        assert_true(may_be_null || (len > 9 && strcmp(d + len - 9, " NOT NULL") == 0));
        size_t w = strcspn(d, " ");
        memcpy(l.item[i], d, w);
        l.item[i][w] = '\0';
    }
    l.n = defs->n;
    return l;
}

static void test_build_has_its_columns(void **state)
{
    (void)state;
#ifdef IDEMLOAD_TEST_EXTRA_COLUMN
    assert_int_equal(NCOL, 8);
    assert_string_equal(names[NCOL - 1], "test_fact");
#else
    assert_int_equal(NCOL, 7);
#endif
}

static void test_recon_copy_list_is_the_tuple(void **state)
{
    (void)state;
    row r = full_row();
    buf out = BUF_INIT;
    copy_recon_lead lead = {.file_no = 3, .line = 12, .maybe_again = true, .level = 1,
                            .text = {"1.00", NULL, "0.01", "T1"}, .len = {4, 0, 4, 2},
                            .num = {"1.00"}, .num_len = {4}, .has_day = true, .day = 9800};
    assert_true(copy_binary_recon_row(&out, &lead, &r));
    list l = split_after(SQL_RECON_COPY, "COPY idemload_recon_raw (", ")");
    assert_int_equal(l.n, tuple_fields(&out));
    assert_int_equal(l.n, NCOL + 5 + COPY_RECON_TEXTS + COPY_RECON_NUMBERS + 2);
    assert_columns(&l, "file_no", "line", "maybe_again", "lvl", "facts_server", "a_text",
                   "c_text", "f_text", "rec_text", "a_num", "f_num", "day", "c_clean");
    buf_free(&out);
}

static void test_recon_stage_is_the_copy_list(void **state)
{
    (void)state;
    list defs = split_after(SQL_RECON_SETUP, "CREATE TEMP TABLE idemload_recon_raw (", ");");
    list l = def_names(&defs);
    assert_columns(&l, "file_no", "line", "maybe_again", "lvl", "facts_server", "a_text",
                   "c_text", "f_text", "rec_text", "a_num", "f_num", "day", "c_clean");
    /* the payload is staged as text, the form copy_binary_recon_row sends */
    for (int i = 0; i < defs.n; i++)
        if (strcmp(l.item[i], "payload") == 0)
            assert_string_equal(defs.item[i], "payload text NOT NULL");
}

/* The table's rows are read with every column, in each of the four reads. */
static void test_recon_table_read_has_every_column(void **state)
{
    (void)state;
    /* The one-server read scans the period's rows, then probes the keys
     * it left: both lists, each of the probe's two; --repair's empty
     * table and its reads, on one server and on Citus. */
    static const struct {
        const char *sql, *open, *before;
    } reads[] = {{SQL_RECON_TABLE_ROWS, "(SELECT ", ", NULL::boolean AS listed"},
                 {SQL_RECON_TABLE_PROBE, "(SELECT ", ", true AS listed"},
                 {SQL_RECON_TABLE_PROBE, "(SELECT ", " FROM {table} t WHERE"},
                 {SQL_RECON_TABLE_RAW_EMPTY, "SELECT ", ", true"},
                 {SQL_RECON_TABLE_ROWS_DISTRIBUTED, "SELECT ", ", k.tenant_id IS NOT NULL"},
                 {SQL_RECON_REPAIR_ROWS, "SELECT ", ", true"},
                 {SQL_RECON_REPAIR_ROWS_DISTRIBUTED, "SELECT ", ", true"}};
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        list l = split_before(reads[i].sql, reads[i].open, reads[i].before);
        assert_int_equal(l.n, NCOL);
        for (int c = 0; c < NCOL; c++) {
            char want[80];
            snprintf(want, sizeof want, "t.%s", names[c]);
            assert_string_equal(l.item[c], want);
        }
    }
}

/* The one-server scan passes every column on: each key column from the
 * table's row or, for a key the period lacks, the statement's; each fact
 * from the table's row. */
static void test_recon_table_scan_passes_every_key_column(void **state)
{
    (void)state;
    /* each key column of the scan's rows from the table's row, or from the
     * statement's key the window lacks */
    list l = split_after(SQL_RECON_TABLE_ROWS, "CREATE TEMP TABLE idemload_recon_t AS SELECT ",
                         ", v.status,");
    assert_int_equal(l.n, KEY_NCOLUMNS);
    for (int c = 0; c < KEY_NCOLUMNS; c++) {
        char want[200];
        snprintf(want, sizeof want, "coalesce(v.%s, k.%s) AS %s", names[c], names[c], names[c]);
        assert_string_equal(l.item[c], want);
    }
}

static void test_import_copy_lists_are_the_tuples(void **state)
{
    (void)state;
    row r = full_row();
    buf out = BUF_INIT;
    assert_true(copy_binary_row(&out, 1, &r));
    list l = split_after(SQL_COPY_STAGE, "COPY idemload_stage (", ")");
    assert_int_equal(l.n, tuple_fields(&out));
    assert_columns(&l, "ord");
    list defs = split_after(SQL_CREATE_STAGE, "idemload_stage (", ")");
    list d = def_names(&defs);
    assert_columns(&d, "ord");
    buf_clear(&out);
    assert_true(copy_binary_target_row(&out, &r));
    l = split_after(SQL_APPEND, "COPY {table} (", ")");
    assert_int_equal(l.n, tuple_fields(&out));
    assert_columns(&l, NULL);
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_has_its_columns),
        cmocka_unit_test(test_recon_copy_list_is_the_tuple),
        cmocka_unit_test(test_recon_stage_is_the_copy_list),
        cmocka_unit_test(test_recon_table_read_has_every_column),
        cmocka_unit_test(test_recon_table_scan_passes_every_key_column),
        cmocka_unit_test(test_import_copy_lists_are_the_tuples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
