/*
 * test_chunk.c - in-chunk deduplication by business key: the latest
 * received_at instant wins, a tie goes to the row read later, each loser
 * is counted once; keys compared exactly (no structural collisions between
 * "ab"+"c" and "a"+"bc"); growth far beyond the initial capacity; sorting by
 * key (bytewise, unsigned); reset and reuse; the final-status and
 * keep-first policies.  A randomised run is checked
 * against a plain reference computed without the hash table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk/chunk.h"

static row mk(int64_t tenant, const char *channel, const char *otn, const char *cb,
              int64_t us, const char *payload, uint64_t line)
{
    row r;

    memset(&r, 0, sizeof r);
    r.line = line;
    r.tenant_id = tenant;
    r.status = (int16_t)(line % 3);
    r.received_us = us;
    r.channel = channel;
    r.channel_len = strlen(channel);
    r.out_trade_no = otn;
    r.out_trade_no_len = strlen(otn);
    r.callback_type = cb;
    r.callback_type_len = strlen(cb);
    r.payload = payload;
    r.payload_len = strlen(payload);
    r.raw = payload;
    r.raw_len = strlen(payload);
    return r;
}

static bool text_is(const char *p, size_t n, const char *want)
{
    return n == strlen(want) && memcmp(p, want, n) == 0;
}

/* The row held for a key, or -1. */
static long find(const chunk *ch, int64_t tenant, const char *channel, const char *otn,
                 const char *cb)
{
    long found = -1;

    for (size_t i = 0; i < chunk_size(ch); i++) {
        row r;

        chunk_get(ch, i, &r);
        if (r.tenant_id == tenant && text_is(r.channel, r.channel_len, channel) &&
            text_is(r.out_trade_no, r.out_trade_no_len, otn) &&
            text_is(r.callback_type, r.callback_type_len, cb)) {
            assert_int_equal(found, -1); /* one row per key */
            found = (long)i;
        }
    }
    return found;
}

/* ---- table: sequences of rows and the survivors ---------------------------- */

typedef struct in_row {
    int64_t tenant;
    const char *channel, *otn, *cb;
    int64_t us;
    const char *payload;
} in_row;

typedef struct dedup_case {
    const char *name;
    in_row rows[8];
    size_t n_rows;
    size_t want_size;
    uint64_t want_dedup;
    /* for every key, the payload that must survive (NULL-terminated) */
    const char *survivors[8];
} dedup_case;

static const dedup_case cases[] = {
    {"distinct keys",
     {{1, "wechat", "T1", "pay", 10, "a"}, {1, "wechat", "T2", "pay", 10, "b"},
      {2, "wechat", "T1", "pay", 10, "c"}, {1, "alipay", "T1", "pay", 10, "d"},
      {1, "wechat", "T1", "refund", 10, "e"}},
     5, 5, 0, {"a", "b", "c", "d", "e", NULL}},
    {"later instant wins, whatever the order",
     {{1, "wechat", "T1", "pay", 10, "old"}, {1, "wechat", "T1", "pay", 30, "new"},
      {1, "wechat", "T1", "pay", 20, "mid"}},
     3, 1, 2, {"new", NULL}},
    {"tie: the row read later wins",
     {{1, "wechat", "T1", "pay", 10, "first"}, {1, "wechat", "T1", "pay", 10, "second"},
      {1, "wechat", "T1", "pay", 10, "third"}},
     3, 1, 2, {"third", NULL}},
    {"tie after an older row",
     {{1, "wechat", "T1", "pay", 50, "a"}, {1, "wechat", "T1", "pay", 40, "b"},
      {1, "wechat", "T1", "pay", 50, "c"}},
     3, 1, 2, {"c", NULL}},
    {"no structural collisions",
     {{1, "ab", "c", "x", 1, "p1"}, {1, "a", "bc", "x", 2, "p2"}, {1, "abc", "", "x", 3, "p3"},
      {1, "", "abc", "x", 4, "p4"}, {1, "a", "b", "cx", 5, "p5"}, {1, "a", "bcx", "", 6, "p6"}},
     6, 6, 0, {"p1", "p2", "p3", "p4", "p5", "p6", NULL}},
    {"tenant ids that differ in one byte",
     {{1, "c", "o", "t", 1, "a"}, {257, "c", "o", "t", 1, "b"}, {-1, "c", "o", "t", 1, "c"},
      {INT64_MIN, "c", "o", "t", 1, "d"}, {INT64_MAX, "c", "o", "t", 1, "e"},
      {1, "c", "o", "t", 2, "f"}},
     6, 5, 1, {"f", "b", "c", "d", "e", NULL}},
    {"keys are compared bytewise, case and all",
     {{1, "WeChat", "T1", "pay", 1, "a"}, {1, "wechat", "T1", "pay", 1, "b"},
      {1, "wechat", "t1", "pay", 1, "c"}, {1, "wechat", "T1 ", "pay", 1, "d"}},
     4, 4, 0, {"a", "b", "c", "d", NULL}},
    {"negative instants (before 1970)",
     {{1, "c", "o", "t", -5, "a"}, {1, "c", "o", "t", -10, "b"}, {1, "c", "o", "t", INT64_MIN, "z"}},
     3, 1, 2, {"a", NULL}},
};

static void test_dedup_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const dedup_case *c = &cases[i];

        /* capacity 1 forces growth; capacity 100 does not */
        for (size_t cap = 1; cap <= 100; cap += 99) {
            chunk *ch = chunk_new(cap);

            assert_non_null(ch);
            for (size_t k = 0; k < c->n_rows; k++) {
                const in_row *in = &c->rows[k];
                row r = mk(in->tenant, in->channel, in->otn, in->cb, in->us, in->payload,
                           k + 1);

                assert_true(chunk_add(ch, &r));
            }
            if (chunk_size(ch) != c->want_size)
                fail_msg("%s: size %zu, want %zu", c->name, chunk_size(ch), c->want_size);
            assert_int_equal(chunk_counts_of(ch)->rows_deduplicated, c->want_dedup);
            /* every survivor is there with its own key, payload, line and time */
            for (size_t s = 0; c->survivors[s] != NULL; s++) {
                size_t k;
                long at;
                row r;

                for (k = c->n_rows; k-- > 0;)
                    if (strcmp(c->rows[k].payload, c->survivors[s]) == 0)
                        break;
                at = find(ch, c->rows[k].tenant, c->rows[k].channel, c->rows[k].otn,
                          c->rows[k].cb);
                if (at < 0)
                    fail_msg("%s: key of %s missing", c->name, c->survivors[s]);
                chunk_get(ch, (size_t)at, &r);
                if (!text_is(r.payload, r.payload_len, c->survivors[s]))
                    fail_msg("%s: %.*s survived instead of %s", c->name, (int)r.payload_len,
                             r.payload, c->survivors[s]);
                assert_int_equal(r.line, k + 1);
                assert_int_equal(r.received_us, c->rows[k].us);
                assert_int_equal(r.status, (int16_t)((k + 1) % 3));
                assert_true(text_is(r.raw, r.raw_len, c->survivors[s]));
            }
            chunk_free(&ch);
            assert_null(ch);
        }
    }
}

/* The chunk copies texts: the caller's buffers may change right after. */
static void test_owns_copies(void **state)
{
    chunk *ch = chunk_new(4);
    char channel[16], payload[64];
    row r, got;

    (void)state;
    strcpy(channel, "wechat");
    strcpy(payload, "{\"v\":1}");
    r = mk(1, channel, "T1", "pay", 5, payload, 1);
    assert_true(chunk_add(ch, &r));
    memset(channel, 'X', 6);
    memset(payload, 'Y', 7);
    chunk_get(ch, 0, &got);
    assert_true(text_is(got.channel, got.channel_len, "wechat"));
    assert_true(text_is(got.payload, got.payload_len, "{\"v\":1}"));
    /* a duplicate with the mangled channel is another key */
    r = mk(1, channel, "T1", "pay", 9, payload, 2);
    assert_true(chunk_add(ch, &r));
    assert_int_equal(chunk_size(ch), 2);
    chunk_free(&ch);
    chunk_free(&ch); /* NULL: no-op */
}

/* Far beyond the initial capacity, with duplicates interleaved, and big
 * texts so the arena moves many times. */
static void test_growth(void **state)
{
    const size_t keys = 50000;
    chunk *ch = chunk_new(1);
    char otn[32], payload[300];

    (void)state;
    assert_non_null(ch);
    for (size_t pass = 0; pass < 3; pass++) {
        for (size_t k = 0; k < keys; k++) {
            row r;

            snprintf(otn, sizeof otn, "T%zu", k);
            snprintf(payload, sizeof payload, "{\"k\":%zu,\"pass\":%zu,\"pad\":\"%0200zu\"}", k,
                     pass, k);
            /* pass 1 is older than pass 0 (loses); pass 2 ties with 0 (wins) */
            r = mk((int64_t)(k % 7), "wechat", otn, "pay",
                   pass == 1 ? 100 : 200, payload, pass * keys + k + 1);
            assert_true(chunk_add(ch, &r));
        }
    }
    assert_int_equal(chunk_size(ch), keys);
    assert_int_equal(chunk_counts_of(ch)->rows_deduplicated, 2 * keys);
    for (size_t i = 0; i < chunk_size(ch); i++) {
        row r;
        char want[300];
        size_t k;

        chunk_get(ch, i, &r);
        assert_true(r.out_trade_no_len > 1);
        k = (size_t)strtoull(r.out_trade_no + 1, NULL, 10);
        assert_int_equal(r.tenant_id, (int64_t)(k % 7));
        snprintf(want, sizeof want, "{\"k\":%zu,\"pass\":2,\"pad\":\"%0200zu\"}", k, k);
        if (!text_is(r.payload, r.payload_len, want))
            fail_msg("row %zu: wrong payload", i);
        assert_int_equal(r.line, 2 * keys + k + 1);
    }
    chunk_free(&ch);
}

static int cmp_key(const row *a, const row *b)
{
    const char *ta[3] = {a->channel, a->out_trade_no, a->callback_type};
    const char *tb[3] = {b->channel, b->out_trade_no, b->callback_type};
    size_t la[3] = {a->channel_len, a->out_trade_no_len, a->callback_type_len};
    size_t lb[3] = {b->channel_len, b->out_trade_no_len, b->callback_type_len};

    if (a->tenant_id != b->tenant_id)
        return a->tenant_id < b->tenant_id ? -1 : 1;
    for (int k = 0; k < 3; k++) {
        size_t n = la[k] < lb[k] ? la[k] : lb[k];
        int c = memcmp(ta[k], tb[k], n);

        if (c != 0)
            return c;
        if (la[k] != lb[k])
            return la[k] < lb[k] ? -1 : 1;
    }
    return 0;
}

static void test_sort(void **state)
{
    static const in_row rows[] = {
        {2, "wechat", "T1", "pay", 1, "a"},
        {-5, "wechat", "T1", "pay", 1, "b"},
        {2, "alipay", "T9", "pay", 1, "c"},
        {2, "wechat", "T1", "pa", 1, "d"},
        {2, "wechat", "T10", "pay", 1, "e"},
        {2, "wechat", "T1\xc3\xa9", "pay", 1, "f"},  /* high bytes sort after ASCII */
        {2, "wechat", "T1~", "pay", 1, "g"},
        {INT64_MIN, "z", "z", "z", 1, "h"},
        {INT64_MAX, "a", "a", "a", 1, "i"},
        {2, "wechat", "T1", "payz", 1, "j"},
        {2, "", "x", "y", 1, "k"},
    };
    static const char *const order = "hbkcdajegfi";
    chunk *ch = chunk_new(2);

    (void)state;
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        row r = mk(rows[k].tenant, rows[k].channel, rows[k].otn, rows[k].cb, rows[k].us,
                   rows[k].payload, k + 1);

        assert_true(chunk_add(ch, &r));
    }
    chunk_sort(ch);
    assert_int_equal(chunk_size(ch), strlen(order));
    for (size_t i = 0; i < chunk_size(ch); i++) {
        row r;

        chunk_get(ch, i, &r);
        if (r.payload_len != 1 || r.payload[0] != order[i])
            fail_msg("position %zu: %.*s, want %c", i, (int)r.payload_len, r.payload, order[i]);
    }
    /* a sorted chunk is done taking rows; reset makes it new again */
    chunk_reset(ch);
    {
        row r = mk(2, "wechat", "T1", "pay", 7, "A", 99);

        assert_true(chunk_add(ch, &r));
        r = mk(2, "wechat", "T1", "pay", 8, "B", 100);
        assert_true(chunk_add(ch, &r));
        assert_int_equal(chunk_size(ch), 1);
        assert_int_equal(chunk_counts_of(ch)->rows_deduplicated, 1);
        chunk_get(ch, 0, &r);
        assert_true(text_is(r.payload, r.payload_len, "B"));
    }
    chunk_free(&ch);
}

/* Random rows from a small key space, checked against a reference. */
static void test_random_against_reference(void **state)
{
    enum { N = 20000, KEYS = 1500 };
    row *ref = calloc(KEYS, sizeof *ref);
    bool *seen = calloc(KEYS, sizeof *seen);
    char (*otn)[16] = malloc(sizeof *otn * KEYS);
    char (*pl)[24] = malloc(sizeof *pl * N);
    uint32_t x = 12345;
    uint64_t dups = 0;
    size_t distinct = 0;
    chunk *ch = chunk_new(64);

    (void)state;
    assert_non_null(ref);
    assert_non_null(seen);
    assert_non_null(otn);
    assert_non_null(pl);
    for (size_t k = 0; k < KEYS; k++)
        snprintf(otn[k], sizeof otn[k], "O%zu", k * 37 % KEYS);
    for (size_t i = 0; i < N; i++) {
        size_t k;
        row r;

        x = x * 1103515245u + 12345u;
        k = (x >> 8) % KEYS;
        x = x * 1103515245u + 12345u;
        snprintf(pl[i], sizeof pl[i], "p%zu", i);
        r = mk((int64_t)(k % 3), k % 2 ? "wechat" : "alipay", otn[k], "pay",
               (int64_t)((x >> 8) % 50), pl[i], i + 1);
        assert_true(chunk_add(ch, &r));
        if (!seen[k]) {
            seen[k] = true;
            ref[k] = r;
            distinct++;
        } else {
            dups++;
            if (r.received_us >= ref[k].received_us)
                ref[k] = r;
        }
    }
    assert_int_equal(chunk_size(ch), distinct);
    assert_int_equal(chunk_counts_of(ch)->rows_deduplicated, dups);
    for (size_t k = 0; k < KEYS; k++) {
        long at;
        row got;

        if (!seen[k])
            continue;
        at = find(ch, ref[k].tenant_id, k % 2 ? "wechat" : "alipay", otn[k], "pay");
        assert_true(at >= 0);
        chunk_get(ch, (size_t)at, &got);
        assert_true(row_same_key(&got, &ref[k]));
        assert_int_equal(got.line, ref[k].line);
        assert_int_equal(got.received_us, ref[k].received_us);
        assert_true(text_is(got.payload, got.payload_len, ref[k].payload));
    }
    /* sorted order is a strict order by key */
    chunk_sort(ch);
    for (size_t i = 1; i < chunk_size(ch); i++) {
        row a, b;

        chunk_get(ch, i - 1, &a);
        chunk_get(ch, i, &b);
        assert_true(cmp_key(&a, &b) < 0);
    }
    chunk_free(&ch);
    free(ref);
    free(seen);
    free(otn);
    free(pl);
}

static void test_reset_and_counts(void **state)
{
    chunk *ch = chunk_new(8);
    chunk_counts *cc;

    (void)state;
    cc = chunk_counts_of(ch);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 20; i++) {
            row r = mk(round, "c", i % 2 ? "odd" : "even", "t", i, "p", (uint64_t)i + 1);

            assert_true(chunk_add(ch, &r));
        }
        cc->rows_read += 22;
        cc->rows_rejected += 2;
        assert_int_equal(chunk_size(ch), 2);
        assert_int_equal(cc->rows_deduplicated, 18);
        assert_int_equal(cc->rows_read, 22);
        assert_int_equal(cc->rows_rejected, 2);
        chunk_reset(ch);
        assert_int_equal(chunk_size(ch), 0);
        assert_int_equal(cc->rows_read, 0);
        assert_int_equal(cc->rows_rejected, 0);
        assert_int_equal(cc->rows_deduplicated, 0);
        /* after reset, the old keys are gone */
        assert_int_equal(find(ch, round, "c", "odd", "t"), -1);
    }
    chunk_sort(ch); /* empty: fine */
    chunk_free(&ch);
}

static void test_row_same_key(void **state)
{
    row a = mk(1, "c", "o", "t", 1, "x", 1);
    row b = mk(1, "c", "o", "t", 99, "different payload", 2);

    (void)state;
    assert_true(row_same_key(&a, &b));
    b.tenant_id = 2;
    assert_false(row_same_key(&a, &b));
    b = mk(1, "c", "o", "t2", 1, "x", 1);
    assert_false(row_same_key(&a, &b));
    b = mk(1, "c", "oo", "t", 1, "x", 1);
    assert_false(row_same_key(&a, &b));
    b = mk(1, "C", "o", "t", 1, "x", 1);
    assert_false(row_same_key(&a, &b));
}

/* The key hash splits keys over an import's connections, and the ledger
 * relies on the split to resume a file, so its values must never change:
 * these were computed independently (FNV-1a as documented in chunk.c). */
static void test_key_hash_is_stable(void **state)
{
    row a = mk(42, "wechat", "T20261130000001", "pay", 1, "{}", 1);
    row b = mk(-1, "", "", "", 1, "{}", 1);
    row c = mk(7, "alipay", "\xe8\xae\xa2\xe5\x8d\x95-1", "refund", 1, "{}", 1);

    (void)state;
    assert_int_equal(row_key_hash(&a), 0xb366f854u);
    assert_int_equal(row_key_hash(&b), 0x96985c93u);
    assert_int_equal(row_key_hash(&c), 0x065121ccu);
    chunk *ch = chunk_new(4);
    assert_non_null(ch);
    assert_true(chunk_add(ch, &a));
    assert_int_equal(chunk_key_hash(ch, 0), 0xb366f854u);
    chunk_free(&ch);
}

/* The dedup policies: a final status of any row of the key reaches the
 * kept (latest) row, the first final status in file order staying; with
 * keep_first the first row in file order is kept whatever its instant. */
static void test_policies(void **state)
{
    static const int16_t finals[] = {2, 3};
    static const struct {
        bool keep_first;
        int16_t status[3];
        int64_t us[3];
        int n;
        int16_t want_status;
        const char *want_payload;
    } policy_cases[] = {
        /* latest: the newer row keeps its payload, takes the older final status */
        {false, {2, 1}, {10, 11}, 2, 2, "p1"},
        {false, {1, 2}, {11, 10}, 2, 2, "p0"},
        /* no final status: the latest row, its own status */
        {false, {1, 0}, {10, 11}, 2, 0, "p1"},
        {false, {0, 1}, {11, 10}, 2, 0, "p0"},
        /* a tie goes to the row read later; a final one reaches it */
        {false, {2, 0}, {10, 10}, 2, 2, "p1"},
        /* two final statuses: the first in file order stays */
        {false, {3, 2, 1}, {10, 11, 12}, 3, 3, "p2"},
        {false, {1, 2, 3}, {12, 11, 10}, 3, 2, "p0"},
        /* keep_first: the first row, whatever its instant or status */
        {true, {0, 2}, {10, 11}, 2, 0, "p0"},
        {true, {1, 2}, {11, 10}, 2, 1, "p0"},
    };
    static const char *const payloads[] = {"p0", "p1", "p2"};

    (void)state;
    for (size_t c = 0; c < sizeof policy_cases / sizeof policy_cases[0]; c++) {
        chunk *ch = chunk_new(2);
        chunk_policy pol = {policy_cases[c].keep_first, finals, 2, false};
        row got;

        chunk_set_policy(ch, &pol);
        for (int i = 0; i < policy_cases[c].n; i++) {
            row r = mk(1, "wx", "K", "pay", policy_cases[c].us[i], payloads[i], (uint64_t)i + 1);

            r.status = policy_cases[c].status[i];
            assert_true(chunk_add(ch, &r));
        }
        assert_int_equal(chunk_size(ch), 1);
        assert_int_equal(chunk_counts_of(ch)->rows_deduplicated, policy_cases[c].n - 1);
        chunk_get(ch, 0, &got);
        if (got.status != policy_cases[c].want_status ||
            !text_is(got.payload, got.payload_len, policy_cases[c].want_payload))
            fail_msg("case %zu: status %d payload %.*s, want %d %s", c, got.status,
                     (int)got.payload_len, got.payload, policy_cases[c].want_status,
                     policy_cases[c].want_payload);
        chunk_free(&ch);
    }
}

/* The policy that keeps every row (reconcile, which counts each row of a
 * statement): duplicate keys all stay, in file order, none counted as
 * deduplicated. */
static void test_keep_every_row(void **state)
{
    static const int16_t finals[] = {2};
    chunk *ch = chunk_new(2);
    chunk_policy pol = {.final_status = finals, .n_final_status = 1, .keep_every_row = true};
    row got;

    (void)state;
    chunk_set_policy(ch, &pol);
    for (int i = 0; i < 5; i++) {
        row r = mk(1, "wx", i == 3 ? "L" : "K", "pay", 10 - i, i % 2 ? "odd" : "even",
                   (uint64_t)i + 1);

        r.status = (int16_t)(i == 1 ? 2 : 0);
        assert_true(chunk_add(ch, &r));
    }
    assert_int_equal(chunk_size(ch), 5);
    assert_int_equal(chunk_counts_of(ch)->rows_deduplicated, 0);
    for (size_t i = 0; i < 5; i++) {
        chunk_get(ch, i, &got);
        assert_int_equal(got.line, i + 1);
        assert_int_equal(got.status, i == 1 ? 2 : 0);
        assert_true(text_is(got.out_trade_no, got.out_trade_no_len, i == 3 ? "L" : "K"));
        assert_true(text_is(got.payload, got.payload_len, i % 2 ? "odd" : "even"));
    }
    chunk_reset(ch);
    assert_int_equal(chunk_size(ch), 0);
    chunk_free(&ch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dedup_table),
        cmocka_unit_test(test_owns_copies),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_reset_and_counts),
        cmocka_unit_test(test_row_same_key),
        cmocka_unit_test(test_key_hash_is_stable),
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_keep_every_row),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
