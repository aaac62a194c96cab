/*
 * prepass.c - the profile pre-pass (prepass.h).
 */
#include "pipeline/prepass.h"

#include <stdint.h>

#include "input/profile.h"
#include "input/source.h"
#include "util/signals.h"

bool prepass_wanted(const config *cfg, bool loading)
{
    return loading && cfg->profile && profile_has_trailer(cfg->profile);
}

bool prepass_count(const char *path, const source_identity *id, const reader_options *ropt,
                   buf *err)
{
    source *src = source_open_identified(path, id, err);
    if (!src)
        return false;
    reader *rdr = reader_open(src, path, ropt, err);
    bool ok = rdr != NULL;
    uint64_t n = 0;
    while (ok) {
        raw_record rec;
        read_result rr = reader_next(rdr, &rec);
        if (rr == READ_EOF)
            break;
        if (rr == READ_FAILED) {
            buf_append_str(err, reader_error(rdr));
            ok = false;
        }
        if ((++n & 0x3ff) == 0 && signals_interrupted()) {
            buf_printf(err, "%s: interrupted", path);
            ok = false;
        }
    }
    reader_close(&rdr);
    source_close(&src);
    return ok;
}
