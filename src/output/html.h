/*
 * html.h - the --html report: one self-contained page rendered from the
 * facts a run gathered (run_report, report.h), with its charts drawn here
 * as inline SVG.  No script, no style sheet or font fetched from anywhere:
 * the page reads the same offline, in a mail attachment, years later.
 *
 * Every text that comes from the data (paths, keys, channels, reasons, raw
 * rows) goes through html_escape(): a payment key is attacker-controlled
 * text, and `</script><img src=x onerror=alert(1)>` must show as text.
 */
#ifndef IDEMLOAD_HTML_H
#define IDEMLOAD_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "output/report.h"
#include "util/buf.h"

/* Appends s[0..n) to out with & < > " ' as character references, a
 * control character (tab and line break included) or a bidirectional
 * control as its code (\u000A, \u202E), a byte that breaks UTF-8 as \xHH
 * and a NUL as \u0000, as the summary writes them.  False when memory runs
 * out. */
bool html_escape(buf *out, const char *s, size_t n);

/* Renders the page for rep (rep->exit_code already set) into *out.  False
 * when memory runs out. */
bool html_render(const run_report *rep, buf *out);

/* Renders and writes the page to path.  False with *err on failure. */
bool html_write(const run_report *rep, const char *path, buf *err);

/*
 * A comparing command's --report and --html (reconcile's, settle's): the
 * report as rep holds it (object_ok: its command's object was built; false:
 * out of memory), then the page with the command's section, built by
 * build(ctx, out) and taken over by rep.  NULL paths: not asked for.  code:
 * the run's status so far (the page shows it).  EXIT_OK, or EXIT_INPUT
 * with the cause logged.
 */
int html_report_outputs(const char *report_path, const char *html_path, run_report *rep,
                        bool object_ok, bool (*build)(const void *ctx, buf *out),
                        const void *ctx, int code);

#endif
