/*
 * fuzz_csv_reader.c - libFuzzer target: the csv reader and the stages after it on
 * arbitrary bytes (see fuzz_reader.h for the option byte and the
 * invariants).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "fuzz_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(data, size, FORMAT_CSV);
}
