/*
 * main.c - parses the command line into a config, dispatches to the
 * command, prints the summary and report, and is the only place that exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_profiles.h"
#include "cli/outputs.h"
#include "input/profile.h"
#include "input/s3.h"
#include "util/exitcodes.h"
#include "load/loader.h"
#include "output/html.h"
#include "output/log.h"
#include "pipeline/pipeline.h"
#include "recon/recon.h"
#include "settle/settle.h"
#include "output/report.h"
#include "util/signals.h"
#include "tools/tools.h"

/* validate and import: run the pipeline, then summary and report. */
static int run_pipeline(const config *cfg)
{
    run_report rep;
    if (!run_report_init(&rep, cfg->n_files)) {
        log_error("out of memory");
        return EXIT_INPUT;
    }
    rep.validate_only = cfg->cmd == CMD_VALIDATE;
    rep.dry_run = cfg->dry_run;
    if (cfg->cmd == CMD_IMPORT)
        rep.target = strdup(cfg->table);
    int code = EXIT_OK;
    loader *ld = NULL;
    /* An output that cannot be written is found before anything is read:
     * found at the end, the load would have committed, and a rerun would
     * skip the completed file, so no report would ever carry its figures. */
    buf unwritable = BUF_INIT;
    const char *refused = NULL;
    if (!outputs_writable(cfg, &unwritable, &refused)) {
        log_error("%s", buf_cstr(&unwritable));
        code = EXIT_INPUT;
        buf why = BUF_INIT;
        buf_printf(&why, "not started: %s", buf_cstr(&unwritable));
        for (size_t i = 0; i < cfg->n_files; i++)
            pipeline_not_started(cfg, &rep.files[i], cfg->files[i], buf_cstr(&why));
        buf_free(&why);
    } else if (cfg->cmd == CMD_IMPORT) {
        ld = loader_open(cfg, &code);
        if (ld)
            rep.database = strdup(loader_database(ld));
        if (!ld) {
            /* No file was touched; the report still says so, file by file,
             * and why (a mailed report has no stderr beside it). */
            char *why = log_last_error();
            buf text = BUF_INIT;
            buf_printf(&text, "not loaded: the database or the target table could not be used%s%s",
                       why && *why ? ": " : " (see the error above)", why ? why : "");
            for (size_t i = 0; i < cfg->n_files; i++)
                pipeline_not_started(cfg, &rep.files[i], cfg->files[i], buf_cstr(&text));
            buf_free(&text);
            free(why);
        }
    }
    if (ld || (cfg->cmd == CMD_VALIDATE && !unwritable.len))
        code = pipeline_run(cfg, ld, &rep);
    buf_free(&unwritable);
    report_print_summary(&rep, stderr);
    /* An output refused above is not tried again (its refusal is logged). */
    if (cfg->report_path && cfg->report_path != refused) {
        buf err = BUF_INIT;
        if (!report_write_json(&rep, cfg->report_path, &err)) {
            log_error("%s", buf_cstr(&err));
            code = exit_worst(code, EXIT_INPUT);
        }
        buf_free(&err);
    }
    if (cfg->html_path && cfg->html_path != refused) {
        /* The page states the run's exit status, so it is rendered last;
         * failing to write it is itself an input/output failure (3). */
        buf err = BUF_INIT;
        rep.exit_code = code;
        if (!html_write(&rep, cfg->html_path, &err)) {
            log_error("%s", buf_cstr(&err));
            code = exit_worst(code, EXIT_INPUT);
        }
        buf_free(&err);
    }
    loader_close(&ld);
    run_report_free(&rep);
    return code;
}

/*
 * Objects among the files: reads the object storage settings and replaces
 * each prefix or glob by the objects it lists (s3.h), in *expanded, which
 * cfg->files then points into.  EXIT_OK; EXIT_USAGE when the settings are
 * missing or wrong; EXIT_INPUT when a pattern could not be listed or
 * matched nothing (logged, the others still run) or out of memory.
 */
static int expand_objects(config *cfg, s3_paths *expanded)
{
    if (!s3_any_url(cfg->files, cfg->n_files))
        return EXIT_OK;
    buf err = BUF_INIT;
    int code = EXIT_OK;
    size_t failed = 0;
    if (!s3_setup(cfg->retries, &err)) {
        log_error("object storage: %s", buf_cstr(&err));
        code = EXIT_USAGE;
    } else if (!s3_expand(cfg->files, cfg->n_files, expanded, &failed, &err)) {
        log_error("out of memory listing the objects");
        code = EXIT_INPUT;
    } else {
        /* One line per pattern that failed, each logged once. */
        for (char *line = err.data; failed && line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            log_error("%s", line);
            line = nl ? nl + 1 : NULL;
        }
        if (failed)
            code = EXIT_INPUT;
        cfg->files = expanded->v;
        cfg->n_files = expanded->n;
    }
    buf_free(&err);
    return code;
}

/*
 * The outputs of the config checked before anything is read or opened for
 * writing, whatever the command (import, validate, reconcile: each output).
 * EXIT_OK, or the exit status with the reason logged.
 */
static int check_outputs(const config *cfg)
{
    buf err = BUF_INIT;
    int code = EXIT_OK;
    if (!outputs_check(cfg, &err))
        code = EXIT_USAGE;
    /* import and validate check it in run_pipeline, so that their report
     * still says, file by file, that nothing was read. */
    else if (cfg->cmd != CMD_IMPORT && cfg->cmd != CMD_VALIDATE &&
             !outputs_writable(cfg, &err, NULL))
        code = EXIT_INPUT;
    if (code != EXIT_OK)
        log_error("%s", buf_cstr(&err));
    buf_free(&err);
    return code;
}

/* Runs the command (signals installed); its exit status. */
static int dispatch(const config *cfg)
{
    switch (cfg->cmd) {
    case CMD_IMPORT:
    case CMD_VALIDATE:
        return run_pipeline(cfg);
    case CMD_INIT:
        return tools_init(cfg);
    case CMD_CHECK:
        return tools_check(cfg);
    case CMD_DEDUPE:
        return tools_dedupe(cfg);
    case CMD_CREATE_INDEX:
        return tools_create_index(cfg);
    case CMD_STATUS:
        return tools_status(cfg);
    case CMD_PROFILES:
        return cli_profiles(cfg);
    case CMD_RECONCILE:
        return recon_run(cfg);
    case CMD_SETTLE:
        return settle_run(cfg);
    default:
        return EXIT_USAGE;
    }
}

int main(int argc, char **argv)
{
    config cfg;
    s3_paths expanded = {0};
    char **given = NULL;    /* cfg.files as parsed, before the expansion */
    int listed = EXIT_OK;
    buf err = BUF_INIT;
    int code = EXIT_OK;
    cli_result r = cli_parse(argc, argv, &cfg, &err);
    switch (r) {
    case CLI_ERROR:
        log_error("%s", buf_cstr(&err));
        code = EXIT_USAGE;
        goto out;
    case CLI_HELP:
        cli_print_help(stdout, cfg.cmd);
        goto out;
    case CLI_VERSION:
        printf("idemload %s\n", IDEMLOAD_VERSION);
        goto out;
    case CLI_RUN:
        break;
    }
    log_set_quiet(cfg.quiet);
    given = cfg.files;
    if (cfg.cmd == CMD_IMPORT || cfg.cmd == CMD_VALIDATE || cfg.cmd == CMD_RECONCILE) {
        listed = expand_objects(&cfg, &expanded);
        if (listed == EXIT_USAGE || (listed != EXIT_OK && cfg.n_files == 0)) {
            code = listed;
            goto out;
        }
    }
    code = check_outputs(&cfg);
    if (code != EXIT_OK)
        goto out;
    signals_install();
    code = dispatch(&cfg);
    code = exit_worst(code, listed);
out:
    if (fflush(stdout) != 0 || ferror(stdout)) {
        log_error("cannot write to standard output");
        code = exit_worst(code, EXIT_INPUT);
    }
    if (given)
        cfg.files = given;
    free(cfg.files);
    s3_paths_free(&expanded);
    s3_teardown();
    profile_free(&cfg.profile);
    buf_free(&err);
    return code;
}
