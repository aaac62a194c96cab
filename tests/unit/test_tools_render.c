/*
 * test_tools_render.c - the reports of check, dedupe and create-index as an
 * operator reads them, rendered from hand-built facts (tools/tools_facts.h),
 * no database: the exact text of each, the JSON members and their order
 * (the reports are written with JSON_PRESERVE_ORDER), and the exit status
 * each create-index verdict earns.  A reviewer reads here what the tools
 * print; tests/db/test_tools.sh checks the facts they gather.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/tools_facts.h"

/* ---- helpers -------------------------------------------------------------- */

/* Collects what a text renderer writes to a FILE. */
typedef struct capture {
    FILE *fp;
    char *text;
    size_t len;
} capture;

static void capture_open(capture *c)
{
    c->text = NULL;
    c->len = 0;
    c->fp = open_memstream(&c->text, &c->len);
    assert_non_null(c->fp);
}

static const char *capture_close(capture *c)
{
    assert_int_equal(fclose(c->fp), 0);
    return c->text;
}

/* Collects what index_render logs on stderr (file descriptor 2). */
typedef struct stderr_capture {
    int saved;
    FILE *tmp;
    char text[8192];
} stderr_capture;

static void stderr_begin(stderr_capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    assert_non_null(c->tmp);
    c->saved = dup(STDERR_FILENO);
    assert_true(c->saved >= 0);
    assert_true(dup2(fileno(c->tmp), STDERR_FILENO) >= 0);
}

static const char *stderr_end(stderr_capture *c)
{
    fflush(stderr);
    assert_true(dup2(c->saved, STDERR_FILENO) >= 0);
    close(c->saved);
    rewind(c->tmp);
    size_t n = fread(c->text, 1, sizeof c->text - 1, c->tmp);
    c->text[n] = '\0';
    fclose(c->tmp);
    return c->text;
}

/* The member names of a JSON object, in order, "a,b,c". */
static char *keys_of(json_t *obj)
{
    static char out[1024];
    out[0] = '\0';
    const char *k;
    json_t *v;
    assert_true(json_is_object(obj));
    json_object_foreach(obj, k, v) {
        (void)v;
        if (out[0])
            strcat(out, ",");
        strcat(out, k);
    }
    return out;
}

static void add_dup(dup_list *l, const char *tenant, const char *channel, const char *no,
                    const char *type, long long count, long long first, long long last)
{
    const char *key[KEY_NCOLUMNS] = {tenant, channel, no, type};
    assert_true(dup_list_add(l, key, count, first, last));
}

static void set_key(tool_key *k, const char *tenant, const char *channel, const char *no,
                    const char *type)
{
    const char *key[KEY_NCOLUMNS] = {tenant, channel, no, type};
    assert_true(tool_key_set(k, key));
}

/* ---- check ------------------------------------------------------------------ */

/* No usable index, an INVALID one, a nullable column, duplicates beyond
 * the limit. */
static void check_unsafe(check_facts *f)
{
    memset(f, 0, sizeof *f);
    f->table = "public.payment_callback";
    f->has_deleted_at = true;
    f->n_indexes = 1;
    f->indexes = calloc(1, sizeof *f->indexes);
    assert_non_null(f->indexes);
    f->indexes[0] = (check_index){.name = "uk_pc", .columns = "tenant_id,channel,out_trade_no,"
                                  "callback_type", .predicate = "(deleted_at IS NULL)",
                                  .valid = false, .ready = true, .counts = false,
                                  .note = strdup("INVALID: does not count")};
    assert_true(strlist_add(&f->nullable, "channel"));
    f->null_rows = 2;
    f->dups_counted = true;
    add_dup(&f->dups, "1", "wechat", "K1", "pay", 3, 1, 3);
    f->dups.keys = 4;
    f->dups.surplus = 5;
}

static void test_check_text_unsafe(void **state)
{
    (void)state;
    check_facts f;
    check_unsafe(&f);
    capture c;
    capture_open(&c);
    check_render_text(&f, c.fp);
    assert_string_equal(
        capture_close(&c),
        "table public.payment_callback\n"
        "  unique index on the business key: NONE usable\n"
        "    uk_pc: INVALID: does not count\n"
        "  key columns that allow NULL: channel (no NULLS NOT DISTINCT index covers them: rows "
        "with a NULL in the key never conflict; idemload rejects such rows, other writers may "
        "not)\n"
        "  active rows with a NULL in the key: 2\n"
        "  duplicate active keys: 4 (5 surplus rows); the largest:\n"
        "    tenant_id  channel  out_trade_no  callback_type  rows  first_id  last_id\n"
        "    1          wechat   K1            pay            3     1         3\n"
        "    (1 of 4 shown; --limit 0 lists all)\n"
        "verdict: NOT safe for import: no valid unique index covers exactly (tenant_id, "
        "channel, out_trade_no, callback_type) WHERE deleted_at IS NULL; 4 duplicate active "
        "keys (5 surplus rows)\n"
        "fix: 'idemload dedupe --apply' keeps the earliest active row of each key, then "
        "'idemload create-index' builds the index\n");
    free(c.text);
    assert_false(check_safe(&f));
    check_facts_free(&f);
}

static void test_check_json_unsafe(void **state)
{
    (void)state;
    check_facts f;
    check_unsafe(&f);
    json_t *r = check_render_json(&f);
    assert_non_null(r);
    assert_string_equal(keys_of(r), "command,table,safe,unique_index,indexes,"
                                    "nullable_key_columns,nulls_not_distinct,null_key_rows,"
                                    "duplicates,problems,warnings");
    assert_true(json_is_false(json_object_get(r, "safe")));
    assert_true(json_is_null(json_object_get(r, "unique_index")));
    json_t *ix = json_array_get(json_object_get(r, "indexes"), 0);
    assert_string_equal(keys_of(ix), "name,columns,predicate,valid,ready,nulls_not_distinct,"
                                     "deferrable,counts,note");
    json_t *d = json_object_get(r, "duplicates");
    assert_string_equal(keys_of(d), "counted,keys,surplus_rows,sample");
    json_t *s = json_array_get(json_object_get(d, "sample"), 0);
    assert_string_equal(keys_of(s), "tenant_id,channel,out_trade_no,callback_type,count,"
                                    "first_id,last_id");
    assert_true(json_is_integer(json_object_get(s, "tenant_id")));
    assert_int_equal(json_array_size(json_object_get(r, "problems")), 2);
    /* the INVALID index, the uncovered nullable column, the NULL-key rows */
    json_t *w = json_object_get(r, "warnings");
    assert_int_equal(json_array_size(w), 3);
    assert_string_equal(json_string_value(json_array_get(w, 0)),
                        "index uk_pc is INVALID and does not count");
    assert_string_equal(json_string_value(json_array_get(w, 2)),
                        "2 active rows have a NULL in the key");
    assert_int_equal(json_integer_value(json_object_get(r, "null_key_rows")), 2);
    json_decref(r);
    check_facts_free(&f);
}

static void test_check_safe(void **state)
{
    (void)state;
    check_facts f;
    memset(&f, 0, sizeof f);
    f.table = "billing.cb";
    f.has_deleted_at = true;
    f.key_index = "cb_key";
    f.key_predicate = "(deleted_at IS NULL)";
    f.null_rows = -1;
    f.dups_counted = false;
    capture c;
    capture_open(&c);
    check_render_text(&f, c.fp);
    assert_string_equal(capture_close(&c),
                        "table billing.cb\n"
                        "  unique index on the business key: cb_key, WHERE (deleted_at IS NULL)\n"
                        "  key columns that allow NULL: none\n"
                        "  duplicate active keys: none (the unique index guarantees it)\n"
                        "verdict: safe for import\n");
    free(c.text);
    json_t *r = check_render_json(&f);
    assert_true(json_is_true(json_object_get(r, "safe")));
    assert_string_equal(keys_of(json_object_get(r, "unique_index")),
                        "name,predicate,nulls_not_distinct");
    assert_true(json_is_null(json_object_get(r, "null_key_rows")));
    assert_int_equal(json_array_size(json_object_get(r, "problems")), 0);
    assert_int_equal(json_array_size(json_object_get(r, "warnings")), 0);
    json_decref(r);
    check_facts_free(&f);
}

/* ---- dedupe ----------------------------------------------------------------- */

static void test_dedupe_listing(void **state)
{
    (void)state;
    dedupe_listing l;
    memset(&l, 0, sizeof l);
    l.table = "public.t";
    l.finals = "2, 3";
    l.limit = 1;
    add_dup(&l.dups, "1", "wechat", "K1", "pay", 3, 1, 3);
    l.dups.keys = 2;
    l.dups.surplus = 3;
    l.n_blocked = 2;
    l.blocked = calloc(2, sizeof *l.blocked);
    assert_non_null(l.blocked);
    set_key(&l.blocked[0].key, "1", "alipay", "K4", "pay");
    l.blocked[0].final_ids = strdup("8");
    set_key(&l.blocked[1].key, "1", "we chat", "", "p=q");
    l.blocked[1].final_ids = strdup("15, 16");
    capture c;
    capture_open(&c);
    dedupe_listing_render_text(&l, c.fp);
    assert_string_equal(
        capture_close(&c),
        "duplicate active keys in public.t: 2 (3 surplus rows)\n"
        "  tenant_id  channel  out_trade_no  callback_type  rows  first_id  last_id\n"
        "  1          wechat   K1            pay            3     1         3\n"
        "  (1 of 2 shown; --limit 0 lists all)\n"
        "2 of these keys hold a final status (2, 3) in a row other than the earliest; --apply "
        "leaves them whole unless --include-final:\n"
        "  tenant_id=1 channel=alipay out_trade_no=K4 callback_type=pay: final row ids 8\n"
        "  (1 of 2 shown; --limit 0 lists all)\n"
        "'idemload dedupe --apply' soft-deletes all but the earliest active row of each key (by "
        "received_at, then id)\n");
    free(c.text);
    json_t *r = dedupe_listing_render_json(&l);
    assert_string_equal(keys_of(r), "command,table,apply,duplicate_keys,surplus_rows,"
                                    "duplicates,final_blocked,final_blocked_keys");
    /* the JSON lists every blocked key, whatever --limit */
    json_t *b = json_object_get(r, "final_blocked");
    assert_int_equal(json_array_size(b), 2);
    assert_string_equal(keys_of(json_array_get(b, 1)),
                        "tenant_id,channel,out_trade_no,callback_type,final_ids");
    assert_string_equal(json_string_value(json_object_get(json_array_get(b, 1), "channel")),
                        "we chat");
    json_decref(r);
    dedupe_listing_free(&l);

    memset(&l, 0, sizeof l);
    l.table = "public.t";
    capture_open(&c);
    dedupe_listing_render_text(&l, c.fp);
    assert_string_equal(capture_close(&c), "no duplicate active keys in public.t\n");
    free(c.text);
}

static void test_dedupe_batch_and_run(void **state)
{
    (void)state;
    batch_outcome b;
    memset(&b, 0, sizeof b);
    b.n = 2;
    b.keys = calloc(2, sizeof *b.keys);
    assert_non_null(b.keys);
    set_key(&b.keys[0].key, "1", "wechat", "K1", "pay");
    b.keys[0].kept_id = strdup("2");
    assert_true(strlist_add(&b.keys[0].deleted, "1"));
    assert_true(strlist_add(&b.keys[0].deleted, "3"));
    set_key(&b.keys[1].key, "1", "we chat", "", "p=q");
    b.keys[1].kept_id = strdup("14");
    b.keys[1].n_refused = 2;
    b.keys[1].refused = calloc(2, sizeof *b.keys[1].refused);
    assert_non_null(b.keys[1].refused);
    b.keys[1].refused[0] = (refused_row){15, 2, true};
    b.keys[1].refused[1] = (refused_row){16, 0, false};
    capture c;
    capture_open(&c);
    batch_render_text(&b, c.fp);
    assert_string_equal(
        capture_close(&c),
        "soft-deleted ids 1, 3 of tenant_id=1 channel=wechat out_trade_no=K1 callback_type=pay; "
        "kept id 2\n"
        "REFUSED tenant_id=1 channel=\"we chat\" out_trade_no=\"\" callback_type=\"p=q\": left "
        "whole, as the rows to soft-delete include a final status: ids 15 (status 2, final), 16 "
        "(status 0); kept id 14\n");
    free(c.text);

    /* the run: the refused key moved into it */
    dedupe_outcome o = {.table = "public.t", .finals = "2", .complete = true, .batches = 1,
                        .keys_fixed = 1, .rows = 2};
    o.refused = calloc(1, sizeof *o.refused);
    assert_non_null(o.refused);
    o.refused[0] = b.keys[1];
    memset(&b.keys[1], 0, sizeof b.keys[1]);
    o.n_refused = 1;
    batch_outcome_free(&b);
    capture_open(&c);
    dedupe_outcome_render_text(&o, c.fp);
    assert_string_equal(
        capture_close(&c),
        "dedupe of public.t: 2 rows soft-deleted, 1 keys deduplicated, 1 keys refused, in 1 "
        "batches\n"
        "the 1 refused keys (listed above) hold a final status (2) in a row that would be "
        "soft-deleted; review them, then run again with --include-final to soft-delete those "
        "rows too\n");
    free(c.text);
    json_t *r = dedupe_outcome_render_json(&o);
    assert_string_equal(keys_of(r), "command,table,apply,include_final,batches,"
                                    "keys_deduplicated,rows_soft_deleted,refused_keys,refused,"
                                    "complete");
    json_t *k = json_array_get(json_object_get(r, "refused"), 0);
    assert_string_equal(keys_of(k), "tenant_id,channel,out_trade_no,callback_type,kept_id,ids");
    assert_int_equal(json_integer_value(json_object_get(k, "kept_id")), 14);
    assert_string_equal(keys_of(json_array_get(json_object_get(k, "ids"), 0)), "id,status,final");
    json_decref(r);

    /* an interrupted run says nothing more in text; its JSON says incomplete */
    o.complete = false;
    capture_open(&c);
    dedupe_outcome_render_text(&o, c.fp);
    assert_string_equal(capture_close(&c), "");
    free(c.text);
    r = dedupe_outcome_render_json(&o);
    assert_true(json_is_false(json_object_get(r, "complete")));
    json_decref(r);
    dedupe_outcome_free(&o);

    dedupe_outcome none = {.table = "public.t", .complete = true};
    capture_open(&c);
    dedupe_outcome_render_text(&none, c.fp);
    assert_string_equal(capture_close(&c), "no duplicate active keys in public.t; nothing changed\n");
    free(c.text);
}

/* ---- create-index ------------------------------------------------------------ */

static void index_base(index_outcome *o, index_verdict v)
{
    index_outcome_init(o);
    o->verdict = v;
    o->table = "public.race";
    o->index = "public.uk_race_biz_active";
    o->schema = "public";
    o->schema_sql = "public";
    o->index_sql = "uk_race_biz_active";
}

static const char *render_index(const index_outcome *o, stderr_capture *c)
{
    stderr_begin(c);
    index_render_warnings(o);
    index_render(o);
    return stderr_end(c);
}

static void test_index_verdicts(void **state)
{
    (void)state;
    stderr_capture c;
    index_outcome o;
    static const struct {
        index_verdict v;
        int code;
        const char *start;      /* the first line starts so */
    } rows[] = {
        {IX_NO_DELETED_AT, EXIT_USAGE, "idemload: error: table public.race has no deleted_at"},
        {IX_NOT_AN_INDEX, EXIT_USAGE, "idemload: error: a relation named public.uk_race_biz_"
                                      "active exists and is not an index"},
        {IX_OTHER_TABLE, EXIT_USAGE, "idemload: error: an index named public.uk_race_biz_active "
                                     "exists on another table"},
        {IX_VALID_OTHER, EXIT_USAGE, "idemload: error: index public.uk_race_biz_active exists "
                                     "and is valid but"},
        {IX_BEING_BUILT, EXIT_FINDINGS, "idemload: error: index public.uk_race_biz_active is "
                                        "being built right now by another session (pid 0)"},
        {IX_BUILT_INVALID, EXIT_DATABASE, "idemload: error: index public.uk_race_biz_active was "
                                          "built but is not valid"},
        {IX_BUILT, EXIT_OK, "idemload: built index public.uk_race_biz_active in 0.0 s"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        index_base(&o, rows[i].v);
        const char *text = render_index(&o, &c);
        if (strncmp(text, rows[i].start, strlen(rows[i].start)) != 0)
            fail_msg("verdict %d: %s", (int)rows[i].v, text);
        assert_int_equal(index_exit_status(&o), rows[i].code);
        index_outcome_free(&o);
    }
    /* a failure logged where it happened: nothing more, its own status */
    index_base(&o, IX_FAILED);
    o.code = EXIT_INTERRUPTED;
    assert_string_equal(render_index(&o, &c), "");
    assert_int_equal(index_exit_status(&o), EXIT_INTERRUPTED);

    index_base(&o, IX_DUPLICATES);
    o.dup_keys = 4;
    o.surplus = 5;
    o.leftover = true;
    assert_true(strlist_add(&o.other_invalid, "race_old"));
    assert_string_equal(
        render_index(&o, &c),
        "idemload: warning: index public.race_old on the business key is INVALID too; it is "
        "not this one, so it stays: drop it with DROP INDEX CONCURRENTLY\n"
        "idemload: error: cannot build a unique index on public.race: 4 duplicate active keys "
        "(5 surplus rows) remain; 'idemload dedupe' lists them and 'idemload dedupe --apply' "
        "keeps the earliest row of each (a key whose later rows hold a final status is left "
        "whole unless --include-final); the INVALID index left by an earlier attempt stays "
        "until then\n");
    assert_int_equal(index_exit_status(&o), EXIT_FINDINGS);
    index_outcome_free(&o);
}

static void test_index_build_failures(void **state)
{
    (void)state;
    stderr_capture c;
    index_outcome o;
    /* a duplicate arrived while it waited for a writer */
    index_base(&o, IX_BUILD_FAILED);
    strcpy(o.failure.sqlstate, "23505");
    o.failure.message = strdup("could not create unique index");
    o.failure_exit = EXIT_DATABASE;
    o.locker = 42;
    o.cleanup = CLEANUP_DROPPED;
    o.dups_now = 1;
    assert_string_equal(
        render_index(&o, &c),
        "idemload: error: building index public.uk_race_biz_active on public.race failed: an "
        "active row with a duplicate key exists: another session wrote it while the index was "
        "being built ('idemload dedupe' lists such keys) (it was waiting for the transaction of "
        "pid 42): could not create unique index (SQLSTATE 23505)\n"
        "idemload: dropped the INVALID index public.uk_race_biz_active left behind by the "
        "failed build\n"
        "idemload: error: 1 duplicate active keys now; run 'idemload dedupe --apply', then "
        "create-index again\n");
    assert_int_equal(index_exit_status(&o), EXIT_FINDINGS);
    index_outcome_free(&o);

    /* the connection lost, no new one: exit 4 whatever the SQLSTATE */
    index_base(&o, IX_BUILD_FAILED);
    o.failure.message = strdup("server closed the connection unexpectedly");
    o.connection_lost = true;
    o.failure_exit = EXIT_DATABASE;
    o.cleanup = CLEANUP_NO_CONNECTION;
    o.reconnect_error = strdup("cannot connect to the database: refused");
    assert_string_equal(
        render_index(&o, &c),
        "idemload: error: building index public.uk_race_biz_active on public.race failed: the "
        "connection to the server was lost during the build: server closed the connection "
        "unexpectedly (SQLSTATE none)\n"
        "idemload: error: cannot reconnect to drop the INVALID index the build may have left: "
        "cannot connect to the database: refused; run 'idemload check'\n");
    assert_int_equal(index_exit_status(&o), EXIT_DATABASE);
    index_outcome_free(&o);

    /* interrupted: 130 even for a SQLSTATE an operator could act on */
    index_base(&o, IX_BUILD_FAILED);
    strcpy(o.failure.sqlstate, "57014");
    o.failure.interrupted = true;
    o.failure_exit = EXIT_INTERRUPTED;
    o.cleanup = CLEANUP_DROP_FAILED;
    strcpy(o.cleanup_failure.sqlstate, "55P03");
    o.cleanup_failure.message = strdup("lock timeout");
    const char *text = render_index(&o, &c);
    assert_non_null(strstr(text, "failed: interrupted: "));
    assert_non_null(strstr(text, "idemload: error: cannot drop the INVALID index "
                                 "public.uk_race_biz_active: lock timeout (SQLSTATE 55P03); drop "
                                 "it by hand (DROP INDEX CONCURRENTLY public.uk_race_biz_active)"));
    assert_int_equal(index_exit_status(&o), EXIT_INTERRUPTED);
    index_outcome_free(&o);

    /* refused by the server for another reason: the common rule */
    index_base(&o, IX_BUILD_FAILED);
    strcpy(o.failure.sqlstate, "42501");
    o.failure.message = strdup("permission denied");
    o.failure_exit = EXIT_USAGE;
    assert_non_null(strstr(render_index(&o, &c), "failed: the server refused it: permission "
                                                 "denied (SQLSTATE 42501)\n"));
    assert_int_equal(index_exit_status(&o), EXIT_USAGE);
    index_outcome_free(&o);
}

/* ---- the commands advised name the user's target ----------------------------- */

/* What tool_open renders for -d pay --table billing.callbacks (the quoting
 * and the password are test_advice.c's). */
#define ARGS " -d pay --table billing.callbacks"

static void test_advice_carries_target(void **state)
{
    (void)state;
    capture c;
    check_facts f;
    check_unsafe(&f);
    f.args = ARGS;
    capture_open(&c);
    check_render_text(&f, c.fp);
    assert_non_null(strstr(capture_close(&c),
                           "\nfix: 'idemload dedupe --apply" ARGS "' keeps the earliest active row "
                           "of each key, then 'idemload create-index" ARGS "' builds the index\n"));
    free(c.text);
    dup_list_free(&f.dups);
    capture_open(&c);
    check_render_text(&f, c.fp);
    assert_non_null(strstr(capture_close(&c), "\nfix: 'idemload create-index" ARGS "' builds the "
                                              "index without blocking writes\n"));
    free(c.text);
    check_facts_free(&f);

    dedupe_listing l;
    memset(&l, 0, sizeof l);
    l.table = "billing.callbacks";
    l.args = ARGS;
    add_dup(&l.dups, "1", "wechat", "K1", "pay", 2, 1, 2);
    l.dups.keys = 1;
    l.dups.surplus = 1;
    capture_open(&c);
    dedupe_listing_render_text(&l, c.fp);
    assert_non_null(strstr(capture_close(&c), "\n'idemload dedupe --apply" ARGS "' soft-deletes "
                                              "all but the earliest active row of each key"));
    free(c.text);
    dedupe_listing_free(&l);

    dedupe_outcome o = {.table = "billing.callbacks", .args = ARGS, .complete = true,
                        .batches = 1, .keys_fixed = 1, .rows = 1};
    capture_open(&c);
    dedupe_outcome_render_text(&o, c.fp);
    assert_non_null(strstr(capture_close(&c), "every active key is now unique; 'idemload "
                                              "create-index" ARGS "' can build the index\n"));
    free(c.text);

    stderr_capture e;
    index_outcome x;
    index_base(&x, IX_DUPLICATES);
    x.args = ARGS;
    x.index_args = ARGS " --index-name cb_key";
    x.dup_keys = 1;
    x.surplus = 1;
    assert_non_null(strstr(render_index(&x, &e), "remain; 'idemload dedupe" ARGS "' lists them "
                                                 "and 'idemload dedupe --apply" ARGS "' keeps"));
    x.verdict = IX_BEING_BUILT;
    assert_non_null(strstr(render_index(&x, &e), "then run 'idemload check" ARGS "'\n"));
    x.verdict = IX_VALID_OTHER;
    assert_non_null(strstr(render_index(&x, &e), "('idemload check" ARGS "' says why)"));
    x.verdict = IX_BUILT_INVALID;
    assert_non_null(strstr(render_index(&x, &e), "run 'idemload check" ARGS "'\n"));
    x.verdict = IX_BUILD_FAILED;
    strcpy(x.failure.sqlstate, "23505");
    x.failure.message = strdup("could not create unique index");
    x.cleanup = CLEANUP_DROP_FAILED;
    strcpy(x.cleanup_failure.sqlstate, "55P03");
    x.cleanup_failure.message = strdup("lock timeout");
    x.dups_now = 1;
    const char *text = render_index(&x, &e);
    assert_non_null(strstr(text, "('idemload dedupe" ARGS "' lists such keys)"));
    /* create-index itself again with the user's --index-name; no other
     * command takes it */
    assert_non_null(strstr(text, "or run 'idemload create-index" ARGS " --index-name cb_key' "
                                 "again, which drops it first\n"));
    assert_non_null(strstr(text, "run 'idemload dedupe --apply" ARGS "', then create-index "
                                 "again\n"));
    assert_int_equal(index_exit_status(&x), EXIT_FINDINGS);
    x.failure.sqlstate[0] = '\0';
    x.connection_lost = true;
    x.cleanup = CLEANUP_NO_CONNECTION;
    x.reconnect_error = strdup("refused");
    x.dups_now = -1;
    assert_non_null(strstr(render_index(&x, &e), "refused; run 'idemload check" ARGS "'\n"));
    index_outcome_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_text_unsafe),
        cmocka_unit_test(test_check_json_unsafe),
        cmocka_unit_test(test_check_safe),
        cmocka_unit_test(test_dedupe_listing),
        cmocka_unit_test(test_dedupe_batch_and_run),
        cmocka_unit_test(test_index_verdicts),
        cmocka_unit_test(test_index_build_failures),
        cmocka_unit_test(test_advice_carries_target),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
