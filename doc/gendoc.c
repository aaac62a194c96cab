/*
 * gendoc.c - build-time generator of idemload(1) and the bash completion:
 *   gendoc TEMPLATE OUTPUT [NAME=VALUE...]
 * expands TEMPLATE's placeholders from the command line tables (cli_doc.h)
 * and the NAME=VALUE arguments into OUTPUT, written whole or not at all (a temporary file, renamed).
 * Not installed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"
#include "cli/cli_doc.h"

static bool read_all(const char *path, buf *b)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return false;
    char chunk[8192];
    size_t n;
    bool ok = true;
    while (ok && (n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        ok = buf_append(b, chunk, n);
    ok = ok && !ferror(fp);
    fclose(fp);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gendoc TEMPLATE OUTPUT [NAME=VALUE...]\n");
        return 2;
    }
    int code = 1;
    buf tmpl = BUF_INIT, err = BUF_INIT, tmp = BUF_INIT;
    FILE *out = NULL;
    if (!read_all(argv[1], &tmpl)) {
        perror(argv[1]);
        goto out;
    }
    if (!buf_printf(&tmp, "%s.tmp", argv[2]) || !(out = fopen(buf_cstr(&tmp), "w"))) {
        perror(buf_cstr(&tmp));
        goto out;
    }
    bool ok = cli_doc_expand(out, buf_cstr(&tmpl), (const char *const *)argv + 3,
                             (size_t)(argc - 3), &err);
    if (fclose(out) != 0 && ok) {
        ok = false;
        buf_printf(&err, "write error");
    }
    out = NULL;
    if (!ok) {
        fprintf(stderr, "gendoc: %s: %s\n", argv[1], buf_cstr(&err));
        remove(buf_cstr(&tmp));
        goto out;
    }
    if (rename(buf_cstr(&tmp), argv[2]) != 0) {
        perror(argv[2]);
        goto out;
    }
    code = 0;
out:
    buf_free(&tmpl);
    buf_free(&err);
    buf_free(&tmp);
    return code;
}
