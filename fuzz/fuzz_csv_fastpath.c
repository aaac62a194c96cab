/*
 * fuzz_csv_fastpath.c - libFuzzer target: the CSV reader's fast path
 * (split_line in csv_reader.c) against libcsv.  Each input is read twice,
 * once as the command reads it and once with IDEMLOAD_CSV_FASTPATH=0 (every
 * line through libcsv), and everything the reader produces is written down
 * both times and must be byte for byte the same: whether the header opens
 * and why not, the column each header field maps to, and for every record
 * its line, raw text, error, every field it split (text, length, NULL, the
 * ones no column takes included) and the fields it hands on, then how the
 * file ends and with what message.
 *
 * The reader's own sources are compiled into this target (the #includes
 * below) so that it can see the fields of a record, and so that its read
 * window can be 64 bytes: the fuzz build's 16 bytes (fuzz/CMakeLists.txt)
 * would leave almost no line whole in a window, and only whole lines take
 * the fast path.  The library's copies of these two files are then never
 * linked (every symbol they define is defined here).
 *
 * The first input byte chooses options: bits 0-2 the delimiter (comma,
 * semicolon, tab, bar, space, colon, 'x', byte 0xE4), bit 3 whether --set
 * supplies every column (so that any header opens); the rest is the file,
 * plain or gzip.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define IDEMLOAD_READ_WINDOW 64
#include "input/reader_common.c"
#include "input/csv_reader.c"

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_bytes(buf *t, const char *p, size_t n)
{
    fuzz_check(buf_printf(t, "[%zu:", n));
    fuzz_check(n == 0 || buf_append(t, p, n));
    fuzz_check(buf_append_char(t, ']'));
}

/* What the reader made of one record: its head, the fields it split (seen
 * inside the reader), and the fields it handed on. */
static void put_record(buf *t, const csv_reader *c, const raw_record *rec)
{
    fuzz_check(buf_printf(t, "record line %llu raw", (unsigned long long)rec->line));
    put_bytes(t, rec->raw, rec->raw_len);
    if (rec->error) {
        fuzz_check(buf_append_str(t, " error "));
        put_bytes(t, rec->error, strlen(rec->error));
    }
    fuzz_check(buf_printf(t, " bad %d split %zu:", (int)c->rec_bad, c->nfields));
    if (!c->rec_bad) {
        for (size_t i = 0; i < c->nfields; i++) {
            if (c->null[i]) {
                fuzz_check(c->len[i] == 0);
                fuzz_check(buf_append_str(t, " NULL"));
            } else {
                put_bytes(t, field_text(c, i), c->len[i]);
            }
        }
    }
    fuzz_check(buf_append_str(t, " out:"));
    for (int col = 0; col < COL_COUNT; col++) {
        const field *f = &rec->fields[col];

        fuzz_check(buf_printf(t, " %d", (int)f->kind));
        if (f->kind == FIELD_TEXT)
            put_bytes(t, f->text, f->len);
    }
    fuzz_check(buf_append_char(t, '\n'));
}

/* Reads the whole input into *t; fast chooses the fast path or libcsv. */
static void transcript(const uint8_t *data, size_t size, bool fast, buf *t)
{
    static const char delims[8] = {',', ';', '\t', '|', ' ', ':', 'x', '\xe4'};
    reader_options opt;
    buf err = BUF_INIT;
    source *src;
    reader *r;

    memset(&opt, 0, sizeof opt);
    opt.format = FORMAT_CSV;
    opt.delimiter = delims[data[0] & 7];
    for (int col = 0; col < COL_COUNT; col++)
        opt.preset[col] = (data[0] & 8) != 0;
    if (fast)
        unsetenv("IDEMLOAD_CSV_FASTPATH");
    else
        setenv("IDEMLOAD_CSV_FASTPATH", "0", 1);
    src = source_open(fuzz_input_file(data + 1, size - 1), &err);
    if (src == NULL)
        fuzz_fail("source_open: %s", buf_cstr(&err));
    r = reader_open(src, "fuzz-input", &opt, &err);
    if (r == NULL) {
        fuzz_check(buf_append_str(t, "open failed: "));
        fuzz_check(buf_append(t, err.data, err.len));
    } else {
        const csv_reader *c = (const csv_reader *)r;
        raw_record rec;
        read_result rr;

        fuzz_check(c->fast == fast);
        fuzz_check(buf_printf(t, "header %zu:", c->header_fields));
        for (size_t i = 0; i < c->header_fields; i++)
            fuzz_check(buf_printf(t, " %d", c->map[i]));
        fuzz_check(buf_append_char(t, '\n'));
        while ((rr = reader_next(r, &rec)) == READ_RECORD)
            put_record(t, c, &rec);
        fuzz_check(buf_printf(t, "end %d: %s", (int)rr, reader_error(r)));
        reader_close(&r);
    }
    source_close(&src);
    buf_free(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    buf fast = BUF_INIT, slow = BUF_INIT;

    if (size < 1)
        return 0;
    transcript(data, size, true, &fast);
    transcript(data, size, false, &slow);
    if (fast.len != slow.len || memcmp(fast.data, slow.data, fast.len) != 0) {
        size_t at = 0;

        while (at < fast.len && at < slow.len && fast.data[at] == slow.data[at])
            at++;
        fprintf(stderr, "fast path and libcsv differ at byte %zu\n--- fast path:\n%.*s\n"
                "--- libcsv:\n%.*s\n", at, (int)fast.len, fast.data, (int)slow.len, slow.data);
        abort();
    }
    buf_free(&fast);
    buf_free(&slow);
    return 0;
}
