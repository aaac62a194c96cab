/*
 * cli_profiles.c - `idemload profiles [NAME]` (see cli_profiles.h).
 */
#include "cli/cli_profiles.h"

#include <stdio.h>

#include "input/profile.h"
#include "output/log.h"
#include "util/exitcodes.h"

int cli_profiles(const config *cfg)
{
    if (cfg->n_files == 0) {
        for (const char *const *n = profile_builtin_names; *n; n++)
            printf("%-16s %s\n", *n, profile_builtin_summary(*n));
        printf("\n'idemload profiles NAME > my.json' prints one as a profile file (its columns, "
               "states, money facts and totals); edit it and load with --profile my.json.\n"
               "With a profile, 'idemload import --kind pay=pay_success' renames a kind and "
               "--tenant-map FILE (merchant,tenant_id) gives each merchant of a bill its tenant.\n");
        return EXIT_OK;
    }
    buf err = BUF_INIT, out = BUF_INIT;
    int code = EXIT_OK;
    profile *p = profile_load(cfg->files[0], &err);
    if (!p) {
        log_error("%s", buf_cstr(&err));
        code = EXIT_USAGE;
    } else if (!profile_to_json(p, &out)) {
        log_error("out of memory");
        code = EXIT_INPUT;
    } else {
        fwrite(out.data, 1, out.len, stdout);
    }
    profile_free(&p);
    buf_free(&err);
    buf_free(&out);
    return code;
}
