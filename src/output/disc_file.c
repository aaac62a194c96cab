/*
 * disc_file.c - the --discrepancies file (disc_file.h).
 */
#include "output/disc_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output/csv_field.h"
#include "output/outfile.h"

/* Written out once this much is buffered. */
#define DISC_FLUSH_AT ((size_t)1 << 16)

struct disc_file {
    outfile *file;
    const char *path;
    bool csv;
    buf out;
};

static const char *disc_name(const disc_file *w)
{
    return strcmp(w->path, "-") == 0 ? "standard output" : w->path;
}

/* Hands the buffered text to the stream. */
static bool disc_flush(disc_file *w, buf *err)
{
    if (w->out.len && fwrite(w->out.data, 1, w->out.len, outfile_stream(w->file)) != w->out.len) {
        buf_printf(err, "cannot write the discrepancies to %s: %s", disc_name(w), strerror(errno));
        return false;
    }
    buf_clear(&w->out);
    return true;
}

disc_file *disc_file_open(const char *path, const char *const *columns, size_t n, buf *err)
{
    disc_file *w = calloc(1, sizeof *w);
    if (!w) {
        buf_printf(err, "--discrepancies %s: out of memory", path);
        return NULL;
    }
    w->path = path;
    size_t len = strlen(path);
    w->csv = strcmp(path, "-") != 0 && len >= 4 && strcasecmp(path + len - 4, ".csv") == 0;
    /* Renamed onto path once the run has committed (outfile.h): a failure
     * leaves what was there, never a list cut short. */
    if (!(w->file = outfile_open(path))) {
        buf_printf(err, "cannot write the discrepancies to %s: %s", disc_name(w), strerror(errno));
        free(w);
        return NULL;
    }
    bool ok = true;
    if (w->csv) {
        ok = buf_append_str(&w->out, "\xEF\xBB\xBF");
        for (size_t i = 0; ok && i < n; i++)
            ok = csv_field_append(&w->out, columns[i], i == 0, false);
        ok = ok && buf_append_str(&w->out, "\r\n");
    }
    if (!ok) {
        buf_printf(err, "--discrepancies %s: out of memory", path);
        disc_file_discard(&w);
        return NULL;
    }
    return w;
}

bool disc_file_is_csv(const disc_file *w)
{
    return w->csv;
}

buf *disc_file_buf(disc_file *w)
{
    return &w->out;
}

bool disc_file_wrote(disc_file *w, bool ok, buf *err)
{
    if (!ok) {
        buf_printf(err, "--discrepancies %s: out of memory", w->path);
        return false;
    }
    return w->out.len < DISC_FLUSH_AT || disc_flush(w, err);
}

bool disc_file_put_json(disc_file *w, json_t *o, buf *err)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    bool ok = text && buf_append_str(&w->out, text) && buf_append_char(&w->out, '\n');
    free(text);
    json_decref(o);
    return disc_file_wrote(w, ok, err);
}

bool disc_file_finish(disc_file *w, buf *err)
{
    if (!w)
        return true;
    if (!disc_flush(w, err))
        return false;
    if (!outfile_sync(w->file)) {
        buf_printf(err, "cannot write the discrepancies to %s: %s", disc_name(w), strerror(errno));
        return false;
    }
    return true;
}

bool disc_file_publish(disc_file **wp, buf *err)
{
    disc_file *w = *wp;
    if (!w)
        return true;
    bool ok = disc_flush(w, err);
    if (ok && !outfile_commit(&w->file)) {
        buf_printf(err, "cannot write the discrepancies to %s: %s", disc_name(w), strerror(errno));
        ok = false;
    }
    disc_file_discard(wp);
    return ok;
}

void disc_file_discard(disc_file **wp)
{
    disc_file *w = *wp;
    if (!w)
        return;
    *wp = NULL;
    outfile_discard(&w->file);
    buf_free(&w->out);
    free(w);
}
