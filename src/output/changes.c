/*
 * changes.c - the --changes file (see changes.h), JSON through jansson.
 */
#include "output/changes.h"

#include "core/columns.h"
#include "output/outfile.h"
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
    bool is_std;            /* fp is stdout or stderr (outfile_std_stream) */
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
    /* "-", or the file standard output or error is redirected to
     * (/dev/stdout after `>> log`): through that stream, never truncating
     * what the shell's redirection keeps there. */
    if ((c->fp = outfile_std_stream(path))) {
        c->is_std = true;
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

/* A new line's object with the members naming file: "file" and, for a
 * name that is not UTF-8 (escaped there), its bytes in "file_base64".
 * NULL when out of memory. */
static json_t *file_members(const char *file)
{
    buf esc = BUF_INIT, b64 = BUF_INIT;
    bool exact = text_utf8_or_escaped(&esc, file);
    if (!exact)
        text_base64(&b64, file, strlen(file));
    json_t *o = json_object();
    bool ok = o && json_object_set_new(o, "file", json_stringn(buf_cstr(&esc), esc.len)) == 0 &&
              (exact || json_object_set_new(o, "file_base64",
                                            json_stringn(buf_cstr(&b64), b64.len)) == 0);
    buf_free(&esc);
    buf_free(&b64);
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

bool changes_render(buf *out, const char *file, const row *r, merge_action a,
                    const row_version *before, const row_version *after)
{
    json_t *o = file_members(file);
    /* Key texts are valid UTF-8 without NUL: validation saw to it. */
    bool ok = o && json_object_set_new(o, "line", json_integer((json_int_t)r->line)) == 0 &&
              json_object_set_new(o, "action", json_string(merge_action_name(a))) == 0
              IDEMLOAD_COLUMNS(KEY_JSON_1, o, r) &&
              json_object_set_new(o, "before", version_json(before)) == 0 &&
              json_object_set_new(o, "after", version_json(after)) == 0;
    char *text = ok ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
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

/* One rendered line (without its newline) with its file members replaced by
 * names' (which it copies), in changes_render's order, into *out with its
 * newline.  False when the line is not an object or memory runs out. */
static bool rename_line(const json_t *names, const char *line, size_t len, buf *out)
{
    json_t *old = json_loadb(line, len, 0, NULL);
    json_t *o = old && json_is_object(old) ? json_deep_copy(names) : NULL;
    bool ok = o != NULL;
    const char *key;
    json_t *value;
    json_object_foreach(old, key, value) {
        if (ok && strcmp(key, "file") != 0 && strcmp(key, "file_base64") != 0)
            ok = json_object_set(o, key, value) == 0;
    }
    char *text = ok ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    ok = text && buf_append_str(out, text) && buf_append(out, "\n", 1);
    free(text);
    json_decref(o);
    json_decref(old);
    return ok;
}

bool changes_write_lines(changes *c, const char *file, const char *text, size_t len, buf *err)
{
    /* A line whose start names file as this run does is written as it is
     * (the common case: the same command run again, in the same
     * directory); another is rewritten with this run's name. */
    json_t *names = file_members(file);
    char *head = names ? json_dumps(names, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (!head) {
        json_decref(names);
        buf_printf(err, "out of memory writing the changes file");
        return false;
    }
    size_t head_len = strlen(head);
    head[head_len - 1] = ',';           /* {"file":...} -> {"file":..., */
    static const char next[] = "\"line\":";
    bool ok = true;
    for (size_t at = 0; ok && at < len;) {
        const char *line = text + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t n = nl ? (size_t)(nl - line) : len - at;
        at += n + 1;
        if (n > head_len + sizeof next - 1 && memcmp(line, head, head_len) == 0 &&
            memcmp(line + head_len, next, sizeof next - 1) == 0) {
            ok = put_text(c, line, n, err) && put_text(c, "\n", 1, err);
        } else {
            buf_clear(&c->line);
            if (!rename_line(names, line, n, &c->line)) {
                buf_printf(err, "the changes file %s: a line kept in the ledger is not a JSON "
                                "object (or memory ran out)", c->path);
                ok = false;
            } else {
                ok = put_text(c, c->line.data, c->line.len, err);
            }
        }
        c->count += ok;
    }
    free(head);
    json_decref(names);
    return ok;
}

bool changes_sync(changes *c, buf *err)
{
    if (fflush(c->fp) != 0) {
        buf_printf(err, "cannot write the changes file %s: %s", c->path, strerror(errno));
        return false;
    }
    /* A pipe or a terminal cannot be synced (EINVAL, ENOTSUP); standard
     * output redirected to a file can. */
    if (fsync(fileno(c->fp)) != 0 && errno != EINVAL && errno != ENOTSUP) {
        buf_printf(err, "cannot sync the changes file %s to disk: %s", c->path, strerror(errno));
        return false;
    }
    return true;
}

bool changes_close(changes **cp, buf *err)
{
    changes *c = *cp;
    if (!c)
        return true;
    bool ok = c->is_std ? fflush(c->fp) == 0 : fclose(c->fp) == 0;
    if (!ok)
        buf_printf(err, "cannot write the changes file %s: %s", c->path, strerror(errno));
    buf_free(&c->line);
    free(c->path);
    free(c);
    *cp = NULL;
    return ok;
}
