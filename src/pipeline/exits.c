/*
 * exits.c - the exit statuses and messages of a file's load (exits.h).
 */
#include "pipeline/exits.h"

#include "util/exitcodes.h"

int exit_of_fill(const config *cfg, const char *path, fill_result fres, buf *err)
{
    switch (fres) {
    case FILL_TOO_MANY:
        buf_clear(err);
        buf_printf(err, "%s: stopped: more than %lld rows rejected (--max-rejects)", path,
                   (long long)cfg->max_rejects);
        return EXIT_INPUT;
    case FILL_NO_MEMORY:
        buf_clear(err);
        buf_printf(err, "%s: out of memory", path);
        return EXIT_INPUT;
    case FILL_INTERRUPTED:
        buf_clear(err);
        buf_printf(err, "%s: interrupted", path);
        return EXIT_INTERRUPTED;
    default: /* FILL_INPUT_FAILED, FILL_REJECTS_FAILED: the message is set */
        return EXIT_INPUT;
    }
}

const char *chunk_failure_text(int code, const char *why)
{
    return code == EXIT_INTERRUPTED ? "interrupted; the chunk in flight was rolled back"
           : why                    ? why
                                    : "database error (see the log)";
}

int exit_of_read(int code, bool loading, bool committed, file_report *rep)
{
    if (code != EXIT_OK && rep->status != FILE_OK)
        rep->status = committed && loading ? FILE_PARTIAL : FILE_FAILED;
    if (code == EXIT_INTERRUPTED && !loading)
        rep->status = FILE_PARTIAL;
    if (code == EXIT_OK && rep->counts.rows_rejected > 0)
        code = EXIT_REJECTS;
    return code;
}
