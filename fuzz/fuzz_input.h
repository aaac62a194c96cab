/*
 * fuzz_input.h - what the reader fuzz targets share: the fuzzer's bytes as
 * a file that source_open() can open, so the whole input path (gzip
 * sniffing, read-ahead, line splitting) runs as it does for a real file.
 *
 * The bytes go into one memfd per process, opened by path as
 * /proc/self/fd/N; nothing touches the disk and nothing is left behind.
 * Every failed invariant calls fuzz_fail(), which aborts so that libFuzzer
 * records the input.
 */
#ifndef IDEMLOAD_FUZZ_INPUT_H
#define IDEMLOAD_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define fuzz_fail(...)                                                    \
    do {                                                                  \
        fprintf(stderr, "invariant failed at %s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                     \
        fputc('\n', stderr);                                              \
        abort();                                                          \
    } while (0)

#define fuzz_check(cond)                                \
    do {                                                \
        if (!(cond))                                    \
            fuzz_fail("%s", #cond);                     \
    } while (0)

static int fuzz_fd = -1;
static char fuzz_path[64];

/* Replaces the memfd's content by data; returns the path to open. */
static inline const char *fuzz_input_file(const uint8_t *data, size_t size)
{
    if (fuzz_fd < 0) {
        fuzz_fd = memfd_create("idemload-fuzz", MFD_CLOEXEC);
        if (fuzz_fd < 0)
            fuzz_fail("memfd_create failed");
        snprintf(fuzz_path, sizeof fuzz_path, "/proc/self/fd/%d", fuzz_fd);
    }
    if (ftruncate(fuzz_fd, 0) != 0)
        fuzz_fail("ftruncate failed");
    for (size_t off = 0; off < size;) {
        ssize_t n = pwrite(fuzz_fd, data + off, size - off, (off_t)off);
        if (n <= 0)
            fuzz_fail("pwrite failed");
        off += (size_t)n;
    }
    return fuzz_path;
}

#endif
