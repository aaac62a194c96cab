/*
 * changes.c - the --changes file (see changes.h), JSON through jansson.
 */
#include "output/changes.h"

#include "core/columns.h"
#include "output/text_escape.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct changes {
    char *path;
    FILE *fp;
    bool is_stdout;
    uint64_t count;
    buf line;               /* scratch: the line being written */
};

changes *changes_open(const char *path, buf *err)
{
    changes *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        free(c);
        buf_printf(err, "out of memory");
        return NULL;
    }
    if (strcmp(path, "-") == 0) {
        c->fp = stdout;
        c->is_stdout = true;
    } else if (!(c->fp = fopen(path, "w"))) {
        buf_printf(err, "cannot create the changes file %s: %s", path, strerror(errno));
        free(c->path);
        free(c);
        return NULL;
    }
    return c;
}

bool changes_wanted(merge_action a)
{
    return a == MERGE_INSERTED || a == MERGE_UPDATED || a == MERGE_STALE;
}

static json_t *version_json(const row_version *v)
{
    if (!v)
        return json_null();
    return json_pack("{s:i, s:s}", "status", (int)v->status, "received_at", v->received_at);
}

/* A change line names its row by the key columns (core/columns.h), in
 * their order: an integer as a JSON number, a text as a string. */
#define KEY_JSON_INT64(r, m) json_integer((json_int_t)(r)->m)
#define KEY_JSON_TEXT(r, m) json_stringn((r)->m, (r)->m##_len)
#define KEY_JSON_1(ID, name, member, kind, key, pos, dflt, O, R) \
    COLUMN_IF_##key(&&json_object_set_new(O, #name, KEY_JSON_##kind(R, member)) == 0)

bool changes_render(buf *out, const char *file, const row *r, merge_action a,
                    const row_version *before, const row_version *after)
{
    json_t *o = json_object();
    /* A file name that is not UTF-8: escaped, its bytes in file_base64. */
    buf esc = BUF_INIT, b64 = BUF_INIT;
    bool exact = text_utf8_or_escaped(&esc, file);
    json_t *name = json_stringn(buf_cstr(&esc), esc.len);
    if (!exact)
        text_base64(&b64, file, strlen(file));
    buf_free(&esc);
    /* Key texts are valid UTF-8 without NUL: validation saw to it. */
    bool ok = o && json_object_set_new(o, "file", name) == 0 &&
              (exact || json_object_set_new(o, "file_base64",
                                            json_stringn(buf_cstr(&b64), b64.len)) == 0) &&
              json_object_set_new(o, "line", json_integer((json_int_t)r->line)) == 0 &&
              json_object_set_new(o, "action", json_string(merge_action_name(a))) == 0
              IDEMLOAD_COLUMNS(KEY_JSON_1, o, r) &&
              json_object_set_new(o, "before", version_json(before)) == 0 &&
              json_object_set_new(o, "after", version_json(after)) == 0;
    char *text = ok ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    buf_free(&b64);
    ok = text && buf_append_str(out, text) && buf_append(out, "\n", 1);
    free(text);
    return ok;
}

/* Writes len bytes of whole lines. */
static bool put_text(changes *c, const char *text, size_t len, buf *err)
{
    if (len > 0 && fwrite(text, 1, len, c->fp) != len) {
        buf_printf(err, "cannot write the changes file %s: %s", c->path, strerror(errno));
        return false;
    }
    return true;
}

bool changes_write(changes *c, const char *file, const row *r, merge_action a,
                   const row_version *before, const row_version *after, buf *err)
{
    buf_clear(&c->line);
    if (!changes_render(&c->line, file, r, a, before, after)) {
        buf_printf(err, "out of memory writing the changes file");
        return false;
    }
    if (!put_text(c, c->line.data, c->line.len, err))
        return false;
    c->count++;
    return true;
}

bool changes_write_lines(changes *c, const char *text, size_t len, buf *err)
{
    if (!put_text(c, text, len, err))
        return false;
    for (size_t i = 0; i < len; i++)
        c->count += text[i] == '\n';
    return true;
}

bool changes_sync(changes *c, buf *err)
{
    if (fflush(c->fp) != 0) {
        buf_printf(err, "cannot write the changes file %s: %s", c->path, strerror(errno));
        return false;
    }
    if (!c->is_stdout && fsync(fileno(c->fp)) != 0 && errno != EINVAL && errno != ENOTSUP) {
        buf_printf(err, "cannot sync the changes file %s to disk: %s", c->path, strerror(errno));
        return false;
    }
    return true;
}

uint64_t changes_count(const changes *c)
{
    return c->count;
}

bool changes_close(changes **cp, buf *err)
{
    changes *c = *cp;
    if (!c)
        return true;
    bool ok = c->is_stdout ? fflush(c->fp) == 0 : fclose(c->fp) == 0;
    if (!ok)
        buf_printf(err, "cannot write the changes file %s: %s", c->path, strerror(errno));
    buf_free(&c->line);
    free(c->path);
    free(c);
    *cp = NULL;
    return ok;
}
