/*
 * cli_doc.c - idemload(1) and the bash completion from cli.c's tables
 * (see cli_doc.h).
 *
 * The prose lives in the templates (doc/idemload.1.in, doc/idemload.bash.in);
 * everything that lists commands or options, or says what an exit status
 * number means, is written here from the tables and from exitcodes.h.
 */
#include "cli/cli_doc.h"

#include <string.h>

#include "cli/cli.h"
#include "util/exitcodes.h"

typedef struct exit_doc {
    int code;
    const char *meaning;
} exit_doc;

/* What each status of exitcodes.h means to whoever reads a cron mail. */
static const exit_doc exit_docs[] = {
    {EXIT_OK, "Every row of every file loaded (in a dry run: would load). A file the ledger "
              "holds as completed, and so skips, counts as loaded. check: the table is safe "
              "for idempotent loads; dedupe: no duplicate active keys."},
    {EXIT_REJECTS, "Finished, but some rows were rejected: they are in the rejects file with "
                   "their reason, every other row loaded. check, dedupe, create-index: the "
                   "table is not safe yet (duplicates, no valid index), as the output says."},
    {EXIT_USAGE, "Usage or configuration error: a bad option, no target table, no matching "
                 "unique index (the message gives the CREATE UNIQUE INDEX that fixes it). "
                 "Nothing was loaded."},
    {EXIT_INPUT, "A file could not be read or written: an input unreadable or corrupt (a "
                 "truncated gzip, a required column missing, --max-rejects exceeded), an "
                 "output (rejects, report, changes, page) not writable, or the client out of "
                 "memory. Chunks committed before the fault stay; loading the fixed file "
                 "again is safe."},
    {EXIT_DATABASE, "A database error that the retries (--retries) did not overcome, in every "
                    "command: an unreachable server, a privilege or object the server "
                    "refuses, a table truncated or dropped by another session while a file "
                    "loaded. The message names the last committed chunk, and the same "
                    "command run again resumes after it."},
    {EXIT_DISCREPANCIES, "Reconcile: the statements and the table disagree: at least one "
                         "discrepancy was found in the period (pending and unverified rows and "
                         "items carried over from earlier days do not count); they are in the "
                         "report and the --discrepancies file. Settle: a fee, a payout, a "
                         "balance, a bank credit or a payment does not settle (pending and "
                         "carried-over items do not count). A failure (4, 3, 2, 130) "
                         "outranks it; it outranks rejected rows (1)."},
    {EXIT_INTERRUPTED, "Interrupted (SIGINT, SIGTERM): the chunk in flight is rolled back, "
                       "committed chunks stay, and the same command run again resumes."},
};

/* Writes s as roff text: backslashes escaped, a leading control character
 * made literal, and a hyphen that starts a word (an option, "-" for
 * standard input, a negative number) written as a minus sign so that it
 * can be copied from the page. */
static void roff_text(FILE *out, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", out);
    for (const char *p = s; *p; p++) {
        if (*p == '\\')
            fputs("\\e", out);
        else if (*p == '-' && (p == s || strchr(" (|[,/=", p[-1]) || p[-1] == '-'))
            fputs("\\-", out);
        else
            fputc(*p, out);
    }
}

static void man_synopsis(FILE *out)
{
    cli_command_info c;
    for (size_t k = 0; cli_command_at(k, &c); k++) {
        fputs(".br\n\\fBidemload ", out);
        roff_text(out, c.name);
        fputs("\\fR \\fI", out);
        roff_text(out, c.args);
        fputs("\\fR\n", out);
    }
}

/* One .TP entry: the option as --help's left column shows it, then its help. */
static void man_option(FILE *out, const cli_option_info *o)
{
    fputs(".TP\n", out);
    if (o->short_name)
        fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
    fputs("\\fB\\-\\-", out);
    roff_text(out, o->long_name);
    fputs("\\fR", out);
    if (o->arg) {
        fputs(" \\fI", out);
        roff_text(out, o->arg);
        fputs("\\fR", out);
    }
    fputc('\n', out);
    roff_text(out, o->help);
    fputc('\n', out);
}

/* Per command, the same entries as `idemload COMMAND --help`, in its order. */
static void man_commands(FILE *out)
{
    cli_command_info c;
    for (size_t k = 0; cli_command_at(k, &c); k++) {
        fputs(".SS \"idemload ", out);
        roff_text(out, c.name);
        fputc(' ', out);
        roff_text(out, c.args);
        fputs("\"\n", out);
        /* The summary as a sentence: --help's "load files into ..." */
        size_t n = strlen(c.summary);
        fputc(c.summary[0] >= 'a' && c.summary[0] <= 'z' ? c.summary[0] - 'a' + 'A'
                                                          : c.summary[0], out);
        roff_text(out, c.summary + (n > 0));
        fputs(n > 0 && strchr(".?!", c.summary[n - 1]) ? "\n" : ".\n", out);
        cli_option_info o;
        for (size_t i = 0; cli_option_at(i, &o); i++)
            if (cli_option_applies(i, c.cmd))
                man_option(out, &o);
    }
}

static void man_exit_status(FILE *out)
{
    for (size_t i = 0; i < sizeof exit_docs / sizeof exit_docs[0]; i++) {
        fprintf(out, ".TP\n.B %d\n", exit_docs[i].code);
        roff_text(out, exit_docs[i].meaning);
        fputc('\n', out);
    }
}

static void bash_commands(FILE *out)
{
    cli_command_info c;
    for (size_t k = 0; cli_command_at(k, &c); k++)
        fprintf(out, "%s%s", k ? " " : "", c.name);
}

/* Case arms "        import) opts='-d --dbname ...' ;;", one per command. */
static void bash_command_options(FILE *out)
{
    cli_command_info c;
    for (size_t k = 0; cli_command_at(k, &c); k++) {
        fprintf(out, "        %s) opts='", c.name);
        const char *sep = "";
        cli_option_info o;
        for (size_t i = 0; cli_option_at(i, &o); i++) {
            if (!cli_option_applies(i, c.cmd))
                continue;
            if (o.short_name)
                fprintf(out, "%s-%c", sep, o.short_name), sep = " ";
            fprintf(out, "%s--%s", sep, o.long_name), sep = " ";
        }
        fputs("' ;;\n", out);
    }
}

/* Whether every '|'-separated alternative of arg is a literal lowercase
 * word (csv|ndjson), which completion can offer as it is. */
static bool literal_choices(const char *arg)
{
    if (!strchr(arg, '|'))
        return false;
    for (const char *p = arg; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '|'))
            return false;
    return true;
}

/*
 * Case arms saying how the value of each option that takes one completes:
 * literal choices as words, a PATH as file names (and "-" when the option
 * allows standard output), a profile as the names `idemload profiles`
 * lists and file names, anything else (a count, a name) as nothing, so
 * that the value is never offered an option or a file by mistake.
 */
static void bash_option_arguments(FILE *out)
{
    cli_option_info o;
    for (size_t i = 0; cli_option_at(i, &o); i++) {
        if (!o.arg)
            continue;
        fputs("        ", out);
        if (o.short_name)
            fprintf(out, "-%c|", o.short_name);
        fprintf(out, "--%s) ", o.long_name);
        if (strcmp(o.long_name, "profile") == 0)
            fputs("_idemload_profiles \"${COMP_WORDS[0]}\"; _idemload_files", out);
        else if (literal_choices(o.arg)) {
            fputs("_idemload_words '", out);
            for (const char *p = o.arg; *p; p++)
                fputc(*p == '|' ? ' ' : *p, out);
            fputc('\'', out);
        }
        else if (strstr(o.arg, "PATH") || strstr(o.arg, "FILE"))
            fprintf(out, "_idemload_files%s", strstr(o.arg, "|-") ? "; _idemload_words -" : "");
        else if (strstr(o.arg, "DIR"))
            fputs("_idemload_dirs", out);
        else
            fputs(":", out);
        fputs(" ;;\n", out);
    }
}

/* Length of the placeholder name after the '@' at p ("@NAME@": NAME of
 * capitals and underscores), 0 when p starts none: an '@' of anything else
 * (bash's "${a[@]}", an address) is text. */
static size_t placeholder_len(const char *p)
{
    size_t n = 1;
    while ((p[n] >= 'A' && p[n] <= 'Z') || p[n] == '_')
        n++;
    return n > 1 && p[n] == '@' ? n - 1 : 0;
}

/* The value of NAME in vars ("NAME=VALUE" strings), NULL when absent. */
static const char *var_value(const char *const *vars, size_t n_vars, const char *name,
                             size_t n)
{
    for (size_t i = 0; i < n_vars; i++)
        if (strncmp(vars[i], name, n) == 0 && vars[i][n] == '=')
            return vars[i] + n + 1;
    return NULL;
}

bool cli_doc_expand(FILE *out, const char *tmpl, const char *const *vars, size_t n_vars,
                    buf *err)
{
    const char *p = tmpl;
    while (*p) {
        size_t n = *p == '@' ? placeholder_len(p) : 0;
        if (n == 0) {
            fputc(*p++, out);
            continue;
        }
        const char *name = p + 1;
        p += n + 2;
        /* Blocks end with their own newline: the template's after a block
         * placeholder would be a blank line (in roff, vertical space). */
        bool block = true;
#define IS(s) (n == sizeof s - 1 && strncmp(name, s, n) == 0)
        if (IS("VERSION"))
            fputs(IDEMLOAD_VERSION, out), block = false;
        else if (var_value(vars, n_vars, name, n))
            fputs(var_value(vars, n_vars, name, n), out), block = false;
        else if (IS("BASH_COMMANDS"))
            bash_commands(out), block = false;
        else if (IS("MAN_SYNOPSIS"))
            man_synopsis(out);
        else if (IS("MAN_COMMANDS"))
            man_commands(out);
        else if (IS("MAN_EXIT_STATUS"))
            man_exit_status(out);
        else if (IS("BASH_COMMAND_OPTIONS"))
            bash_command_options(out);
        else if (IS("BASH_OPTION_ARGUMENTS"))
            bash_option_arguments(out);
        else {
            buf_printf(err, "unknown placeholder @%.*s@", (int)n, name);
            return false;
        }
#undef IS
        if (block && *p == '\n')
            p++;
    }
    if (fflush(out) != 0 || ferror(out)) {
        buf_printf(err, "write error");
        return false;
    }
    return true;
}
