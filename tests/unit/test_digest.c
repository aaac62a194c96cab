/*
 * test_digest.c - SHA-256 against the FIPS 180-4 example vectors ("", "abc",
 * the 448- and 896-bit messages, a million 'a'), lengths around the 55/56/64
 * byte padding edges (values from Python's hashlib), the same input fed in
 * two updates split at every offset and in pieces of every small size, and
 * digest_file on real files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/digest.h"
#include "helpers.h"

#define MSG448 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
#define MSG896 "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno" \
               "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"

static const struct {
    const char *msg;
    const char *hex;
} vectors[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {MSG448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {MSG896, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
};

/* sha256('a' * n), from Python's hashlib */
static const struct {
    size_t n;
    const char *hex;
} a_runs[] = {
    {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
    {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
    {57, "f13b2d724659eb3bf47f2dd6af1accc87b81f09f59f2b75e5c0bed6589dfe8c6"},
    {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
    {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
    {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
    {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
    {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
    {127, "c57e9278af78fa3cab38667bef4ce29d783787a2f731d4e12200270f0c32320a"},
    {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
    {1000, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"},
    {1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
};

static void hash_split(const void *data, size_t n, size_t split, char hex[65])
{
    sha256_ctx c;

    assert_true(sha256_init(&c));
    sha256_update(&c, data, split);
    sha256_update(&c, (const char *)data + split, n - split);
    assert_true(sha256_final_hex(&c, hex));
}

static void test_fips_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        size_t n = strlen(vectors[i].msg);
        char hex[65];

        /* one update, then split at every offset */
        for (size_t split = 0; split <= n; split++) {
            memset(hex, 'Z', sizeof hex);
            hash_split(vectors[i].msg, n, split, hex);
            if (strcmp(hex, vectors[i].hex) != 0)
                fail_msg("vector %zu split at %zu: %s", i, split, hex);
        }
        /* byte by byte, with empty updates in between */
        {
            sha256_ctx c;

            assert_true(sha256_init(&c));
            for (size_t k = 0; k < n; k++) {
                sha256_update(&c, vectors[i].msg + k, 1);
                sha256_update(&c, vectors[i].msg, 0);
            }
            assert_true(sha256_final_hex(&c, hex));
            assert_string_equal(hex, vectors[i].hex);
        }
    }
}

static void test_a_runs(void **state)
{
    char *a = malloc(1000000);

    (void)state;
    assert_non_null(a);
    memset(a, 'a', 1000000);
    for (size_t i = 0; i < sizeof a_runs / sizeof a_runs[0]; i++) {
        size_t n = a_runs[i].n;
        char hex[65];

        hash_split(a, n, 0, hex);
        if (strcmp(hex, a_runs[i].hex) != 0)
            fail_msg("a * %zu: %s", n, hex);
        if (n <= 1000) {
            for (size_t split = 0; split <= n; split++) {
                hash_split(a, n, split, hex);
                if (strcmp(hex, a_runs[i].hex) != 0)
                    fail_msg("a * %zu split at %zu", n, split);
            }
        } else {
            /* the million: splits near block edges and in pieces of 1..200 */
            static const size_t splits[] = {1, 55, 56, 63, 64, 65, 4095, 4096, 500000, 999999};

            for (size_t s = 0; s < sizeof splits / sizeof splits[0]; s++) {
                hash_split(a, n, splits[s], hex);
                assert_string_equal(hex, a_runs[i].hex);
            }
            for (size_t piece = 1; piece <= 200; piece += 13) {
                sha256_ctx c;

                sha256_init(&c);
                for (size_t off = 0; off < n; off += piece)
                    sha256_update(&c, a + off, n - off < piece ? n - off : piece);
                sha256_final_hex(&c, hex);
                if (strcmp(hex, a_runs[i].hex) != 0)
                    fail_msg("million in pieces of %zu", piece);
            }
        }
    }
    free(a);
}

/* Every byte value four times (1 KiB): three updates split at pairs of
 * offsets over the first 130 bytes give the digest of one update. */
static void test_binary_splits(void **state)
{
    unsigned char data[1024];
    char hex[65];
    const char *want = "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9";

    (void)state;
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)i;
    hash_split(data, sizeof data, 0, hex);
    assert_string_equal(hex, want);
    for (size_t s1 = 0; s1 <= 130; s1++) {
        for (size_t s2 = s1; s2 <= 130; s2 += 7) {
            sha256_ctx c;

            sha256_init(&c);
            sha256_update(&c, data, s1);
            sha256_update(&c, data + s1, s2 - s1);
            sha256_update(&c, data + s2, sizeof data - s2);
            sha256_final_hex(&c, hex);
            if (strcmp(hex, want) != 0)
                fail_msg("splits %zu/%zu", s1, s2);
        }
    }
}

static void test_digest_file(void **state)
{
    char *dir = tmpdir_make();
    char *p = path_in(dir, "f.bin");
    char hex[65];
    int64_t size = -1;
    buf err = BUF_INIT;
    char *a = malloc(1000000);

    (void)state;
    assert_non_null(a);
    memset(a, 'a', 1000000);
    write_bytes(p, a, 1000000);
    assert_true(digest_file(p, hex, &size, &err));
    assert_int_equal(size, 1000000);
    assert_string_equal(hex, a_runs[sizeof a_runs / sizeof a_runs[0] - 1].hex);

    write_bytes(p, "", 0);
    assert_true(digest_file(p, hex, &size, &err));
    assert_int_equal(size, 0);
    assert_string_equal(hex, vectors[0].hex);

    write_bytes(p, "abc", 3);
    assert_true(digest_file(p, hex, &size, &err));
    assert_int_equal(size, 3);
    assert_string_equal(hex, vectors[1].hex);

    /* 3 MiB + 1: several read blocks, checked against the update API */
    {
        size_t n = (3 << 20) + 1;
        unsigned char *big = malloc(n);
        char want[65];

        assert_non_null(big);
        for (size_t i = 0; i < n; i++)
            big[i] = (unsigned char)(i * 2654435761u >> 24);
        write_bytes(p, big, n);
        hash_split(big, n, 12345, want);
        assert_true(digest_file(p, hex, &size, &err));
        assert_int_equal(size, (int64_t)n);
        assert_string_equal(hex, want);
        free(big);
    }
    assert_int_equal(err.len, 0);

    unlink(p);
    assert_false(digest_file(p, hex, &size, &err));
    assert_non_null(strstr(buf_cstr(&err), p));
    assert_non_null(strstr(buf_cstr(&err), "cannot open"));
    buf_clear(&err);
    /* a directory opens but cannot be read */
    assert_false(digest_file(dir, hex, &size, &err));
    assert_non_null(strstr(buf_cstr(&err), dir));
    buf_free(&err);
    free(a);
    free(p);
    tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fips_vectors),
        cmocka_unit_test(test_a_runs),
        cmocka_unit_test(test_binary_splits),
        cmocka_unit_test(test_digest_file),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
