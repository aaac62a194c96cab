/*
 * test_sql_render.c - sql_render (db/sql.h), the one way a template becomes
 * a statement: every {name} replaced by its caller's value, {key} by the
 * business key's column list unless the caller pairs it, an unknown
 * placeholder and an unclosed brace refused.  Then the facts the tools'
 * templates share: the key written once (KEY_COLUMNS and key_column_names
 * agree), the index DDL of init and create-index made of one fragment, and
 * every template of the tools renders with exactly the names its caller
 * gives (a template asking for a name the tools do not give would fail
 * only at run time).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "db/sql.h"

/* Renders tmpl with the pairs given; returns the text (static buffer) or
 * NULL when sql_render refused. */
static const char *render(const char *tmpl, int n, const char *const *names,
                          const char *const *values)
{
    static buf out = BUF_INIT;
    buf_free(&out);
    return sql_render(&out, tmpl, n, names, values) ? buf_cstr(&out) : NULL;
}

static void test_placeholders(void **state)
{
    (void)state;
    const char *names[] = {"table", "active", "index"};
    const char *values[] = {"\"s\".\"t\"", "(deleted_at IS NULL)", "\"ix\""};
    /* each one, repeated, adjacent, at both ends */
    assert_string_equal(render("SELECT 1 FROM {table}", 3, names, values),
                        "SELECT 1 FROM \"s\".\"t\"");
    assert_string_equal(render("{table}{index} WHERE {active} AND {active}", 3, names, values),
                        "\"s\".\"t\"\"ix\" WHERE (deleted_at IS NULL) AND (deleted_at IS NULL)");
    assert_string_equal(render("{index}", 3, names, values), "\"ix\"");
    /* no placeholder, and the empty template */
    assert_string_equal(render("SELECT 1", 3, names, values), "SELECT 1");
    assert_string_equal(render("", 0, NULL, NULL), "");
    /* a value holding braces is not expanded again */
    const char *n1[] = {"table"};
    const char *v1[] = {"\"{index}\""};
    assert_string_equal(render("FROM {table}", 1, n1, v1), "FROM \"{index}\"");
    /* a name is matched whole, not by prefix */
    const char *n2[] = {"ledger", "ledger_chunk"};
    const char *v2[] = {"L", "LC"};
    assert_string_equal(render("{ledger_chunk} {ledger}", 2, n2, v2), "LC L");
}

static void test_key(void **state)
{
    (void)state;
    assert_string_equal(render("GROUP BY {key}", 0, NULL, NULL),
                        "GROUP BY tenant_id, channel, out_trade_no, callback_type");
    /* a caller that pairs {key} itself wins */
    const char *n[] = {"key"};
    const char *v[] = {"k"};
    assert_string_equal(render("({key})", 1, n, v), "(k)");
    /* only the whole name */
    assert_null(render("{keys}", 0, NULL, NULL));
    assert_null(render("{ke}", 0, NULL, NULL));
}

static void test_refusals(void **state)
{
    (void)state;
    const char *names[] = {"table"};
    const char *values[] = {"t"};
    assert_null(render("SELECT {tabel}", 1, names, values));   /* unknown */
    assert_null(render("SELECT {}", 1, names, values));        /* empty name */
    assert_null(render("SELECT {table", 1, names, values));    /* unclosed */
    assert_null(render("{table} {", 1, names, values));        /* unclosed at the end */
    assert_null(render("SELECT {table}", 0, NULL, NULL));      /* not given */
    assert_null(render("'{}'::int[]", 1, names, values));      /* braces are never literal */
}

static void test_key_written_once(void **state)
{
    (void)state;
    buf joined = BUF_INIT;
    for (int k = 0; k < KEY_NCOLUMNS; k++)
        assert_true(buf_printf(&joined, "%s%s", k ? ", " : "", key_column_names[k]));
    assert_string_equal(buf_cstr(&joined), KEY_COLUMNS);
    assert_string_equal(KEY_COLUMNS, "tenant_id, channel, out_trade_no, callback_type");
    buf_free(&joined);
}

/* The statements init and create-index run, whole: the same index. */
static void test_index_ddl(void **state)
{
    (void)state;
    const char *names[] = {"table", "index"};
    const char *values[] = {"\"public\".\"payment_callback\"", "\"uk\""};
    const char *tail = " ON \"public\".\"payment_callback\" "
                       "(tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL";
    char want[256];
    snprintf(want, sizeof want, "CREATE UNIQUE INDEX IF NOT EXISTS \"uk\"%s", tail);
    assert_string_equal(render(SQL_INIT_INDEX, 2, names, values), want);
    snprintf(want, sizeof want, "CREATE UNIQUE INDEX CONCURRENTLY \"uk\"%s", tail);
    assert_string_equal(render(SQL_CREATE_INDEX, 2, names, values), want);
    assert_string_equal(render(SQL_KEY_INDEX_TAIL, 2, names, values), tail + 1);
}

/* Every template of the tools, with the names tools_shared.c's
 * tool_render (and tools.c's init) give: it renders, and nothing that
 * looks like a placeholder is left. */
static void test_tool_templates(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *tmpl;
    } tmpls[] = {
        {"SQL_INIT_TABLE", SQL_INIT_TABLE},
        {"SQL_INIT_INDEX", SQL_INIT_INDEX},
        {"SQL_DUPLICATES", SQL_DUPLICATES},
        {"SQL_DUPLICATE_COUNT", SQL_DUPLICATE_COUNT},
        {"SQL_NULLABLE_KEYS", SQL_NULLABLE_KEYS},
        {"SQL_DEDUPE_FINAL_BLOCKED", SQL_DEDUPE_FINAL_BLOCKED},
        {"SQL_DEDUPE_BATCH", SQL_DEDUPE_BATCH},
        {"SQL_DEDUPE_BATCH_DISTRIBUTED", SQL_DEDUPE_BATCH_DISTRIBUTED},
        {"SQL_CREATE_INDEX", SQL_CREATE_INDEX},
        {"SQL_DROP_INDEX", SQL_DROP_INDEX},
        {"SQL_INDEX_PROGRESS", SQL_INDEX_PROGRESS},
        {"SQL_INDEX_STATE", SQL_INDEX_STATE},
    };
    const char *names[] = {"table", "active", "schema", "index"};
    const char *values[] = {"T", "(A)", "S", "I"};
    for (size_t i = 0; i < sizeof tmpls / sizeof tmpls[0]; i++) {
        const char *sql = render(tmpls[i].tmpl, 4, names, values);
        if (!sql)
            fail_msg("%s does not render with table, active, schema, index", tmpls[i].name);
        if (strchr(sql, '{') || strchr(sql, '}'))
            fail_msg("%s keeps a brace: %s", tmpls[i].name, sql);
    }
    /* the nullable-key query names the key columns from the one list */
    assert_non_null(strstr(render(SQL_NULLABLE_KEYS, 0, NULL, NULL),
                           "string_to_array('tenant_id, channel, out_trade_no, callback_type', "
                           "', ')"));
}

/* The dedupe batch of a distributed table is the single server's without
 * its one row lock and with the soft-delete limited to active rows: nothing
 * else differs (the form tools_distributed.c once made by editing the text). */
static void test_dedupe_distributed(void **state)
{
    (void)state;
    const char *lock = "    FROM {table} t JOIN keys k USING ({key})   WHERE {active}    ";
    const char *del = "WHERE u.id = ANY (ARRAY(SELECT id FROM doomed))";
    const char *single = SQL_DEDUPE_BATCH, *dist = SQL_DEDUPE_BATCH_DISTRIBUTED;
    const char *l1 = strstr(single, lock), *l2 = strstr(dist, lock);
    assert_non_null(l1);
    assert_non_null(l2);
    size_t head = (size_t)(l1 - single) + strlen(lock);
    assert_int_equal(l2 - dist, l1 - single);
    assert_memory_equal(single, dist, head);
    assert_true(strncmp(single + head, " FOR UPDATE OF t), ", 19) == 0);
    assert_true(strncmp(dist + head, "), ", 3) == 0);
    const char *d1 = strstr(single + head, del), *d2 = strstr(dist + head, del);
    assert_non_null(d1);
    assert_non_null(d2);
    assert_int_equal(d1 - (single + head + 16), d2 - (dist + head));
    assert_memory_equal(single + head + 16, dist + head, (size_t)(d2 - (dist + head)));
    d1 += strlen(del);
    d2 += strlen(del);
    const char *guard = " AND u.deleted_at IS NULL";
    assert_true(strncmp(d2, guard, strlen(guard)) == 0);
    assert_string_equal(d1, d2 + strlen(guard));
    assert_null(strstr(dist, "FOR UPDATE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placeholders),
        cmocka_unit_test(test_key),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_key_written_once),
        cmocka_unit_test(test_index_ddl),
        cmocka_unit_test(test_tool_templates),
        cmocka_unit_test(test_dedupe_distributed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
