/*
 * fuzz_zip_source.c - libFuzzer target: the zip member walk (local headers,
 * stored and deflate members, descriptors, zip64 extras, the summary and
 * directory members skipped, the central directory and end record) on
 * arbitrary bytes, served through a window of a size the first byte picks,
 * so that every edge of a header or a deflate block falls on a refill.
 *
 * Invariants: a read returns > 0 (at most cap), 0 at the end or -1 with a
 * message; the end and a failure are sticky; a member never yields more
 * bytes than its header declares (when it declares one: no data descriptor):
 * the detail bytes never exceed what deflate can make of the input (1032 to
 * 1) nor, for an archive whose only member is stored, the input itself.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_input.h"
#include "input/zip_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct mem_io {
    const unsigned char *p;
    size_t n, pos, window;
} mem_io;

static bool mem_need(void *ctx, size_t want, const unsigned char **p, size_t *avail)
{
    mem_io *m = ctx;
    size_t left = m->n - m->pos;
    size_t give = m->window > want ? m->window : want;
    *p = m->p + m->pos;
    *avail = left < give ? left : give;
    return true;
}

static void mem_consume(void *ctx, size_t n)
{
    mem_io *m = ctx;
    if (n > m->n - m->pos)
        fuzz_fail("consumed %zu bytes with %zu left", n, m->n - m->pos);
    m->pos += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    mem_io m = {data + 1, size - 1, 0, (size_t)(data[0] % 64) + 1};
    zip_io io = {&m, mem_need, mem_consume};
    zip_stream *z = zip_stream_new();
    fuzz_check(z != NULL);
    char out[300];
    size_t cap = (size_t)(data[0] % 7) * 37 + 1;
    uint64_t total = 0;
    ssize_t n;
    while ((n = zip_stream_read(z, &io, out, cap)) > 0) {
        fuzz_check((size_t)n <= cap);
        total += (uint64_t)n;
        fuzz_check(total <= 1032 * (uint64_t)size + 64);
    }
    fuzz_check(n == 0 || n == -1);
    if (n == -1)
        fuzz_check(zip_stream_error(z)[0] != '\0');
    fuzz_check(zip_stream_read(z, &io, out, cap) == n);
    zip_stream_free(&z);
    fuzz_check(z == NULL);
    return 0;
}
