/*
 * html.c - the --html report (see html.h).
 *
 * The page reads top down like pgBadger's: what ran where and how it
 * ended, the figures as tiles, then the charts (figures per channel and
 * kind, rows over time per channel with the holes marked), then the
 * details (rejects by reason with examples, the files).  Everything is
 * rendered from the run_report; nothing here queries or reads a file.
 */
#include "output/html.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/log.h"
#include "output/outfile.h"
#include "output/text_escape.h"
#include "rules/utf8.h"
#include "util/exitcodes.h"

/* The page being built: out of memory once, the whole page fails. */
typedef struct page {
    buf *out;
    bool ok;
} page;

static void put(page *pg, const char *s)
{
    pg->ok = buf_append_str(pg->out, s) && pg->ok;
}

static void putf(page *pg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(page *pg, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        pg->ok = false;
        return;
    }
    if ((size_t)n < sizeof small) {
        put(pg, small);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        pg->ok = false;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    put(pg, big);
    free(big);
}

/* The page's escaper: markup characters as references; a control character
 * or a bidirectional control as its code, never applied (SPEC.md "Hostile
 * input"), a tab and a newline too (a file name or a key with a line break
 * would read as two words), except in a block of text (html_one_block). */
static size_t html_one(const char *s, size_t n, char tmp[16], const char **instead)
{
    switch (*s) {
    case '&': *instead = "&amp;"; return 1;
    case '<': *instead = "&lt;"; return 1;
    case '>': *instead = "&gt;"; return 1;
    case '"': *instead = "&quot;"; return 1;
    case '\'': *instead = "&#39;"; return 1;
    default: break;
    }
    size_t w = text_control_width(s, n);
    if (w > 0) {
        snprintf(tmp, 16, "\\u%04X", text_control_code(s, w));
        *instead = tmp;
    }
    return w;
}

/* A byte that is not UTF-8 as \xHH, a NUL as \u0000, as the summary and
 * the logs write them (README "Hostile input"): two names that differ only
 * there (f\xFE.csv, f\xFF.csv) stay two on the page. */
bool html_escape(buf *out, const char *s, size_t n)
{
    return text_escape_walk(out, s, n, html_one, text_escape_bad_code);
}

/* The same for a block of text shown as written (a rejected row's raw
 * text in a <pre>): its tabs and line breaks stay. */
static size_t html_one_block(const char *s, size_t n, char tmp[16], const char **instead)
{
    return *s == '\t' || *s == '\n' ? 0 : html_one(s, n, tmp, instead);
}

static void text_block(page *pg, const char *s, size_t n)
{
    pg->ok = text_escape_walk(pg->out, s, n, html_one_block, text_escape_bad_code) && pg->ok;
}

/* Data text, escaped. */
static void text(page *pg, const char *s)
{
    pg->ok = html_escape(pg->out, s ? s : "", s ? strlen(s) : 0) && pg->ok;
}

static void textn(page *pg, const char *s, size_t n)
{
    pg->ok = html_escape(pg->out, s, n) && pg->ok;
}

/* How wide a chart's label shows, in em of the page's sans-serif (DejaVu
 * Sans, the widest of the usual ones, measured and rounded up; bold a
 * tenth wider): a label is drawn leftwards from the bars, and what does not
 * fit runs off the chart's edge, hidden.  Counted as the page shows it: a
 * control as its code (\u202E, six characters), a byte that is not UTF-8
 * as \xHH, CJK and emoji a whole em, a combining mark nothing. */
#define LABEL_ELLIPSIS_EM 1.0

static double glyph_em(unsigned cp)
{
    if (cp == ' ')
        return 0.32;
    if (cp >= '0' && cp <= '9')
        return 0.64;
    if (cp >= 'a' && cp <= 'z')
        return cp == 'm' || cp == 'w' ? 1.0 : 0.6;
    if (cp >= 'A' && cp <= 'Z')
        return cp == 'M' || cp == 'W' ? 1.0 : 0.72;
    if (cp < 0x80)
        return cp == '<' || cp == '>' || cp == '=' || cp == '+' || cp == '~' || cp == '@' ||
                       cp == '%' || cp == '&' || cp == '#'
                   ? 0.9
                   : 0.5;
    if ((cp >= 0x300 && cp <= 0x36F) || (cp >= 0x200B && cp <= 0x200F) ||
        (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0x1F3FB && cp <= 0x1F3FF) ||
        (cp >= 0xE0000 && cp <= 0xE007F))
        return 0; /* combining marks, zero-width and joiners, variation
                   * selectors, skin tones, tags */
    if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
        (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
        (cp >= 0xFFE0 && cp <= 0xFFE6) || cp >= 0x1F000)
        return 1.0; /* East Asian wide and fullwidth, emoji */
    return 0.8;
}

/* The first character of s[0..n) (n > 0): its length in bytes and its
 * width as the page shows it (escaped as html_one and the walk do). */
static size_t char_em(const char *s, size_t n, double *em, unsigned *prev)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = u[0] < 0x80 ? 1 : u[0] >= 0xC2 && u[0] <= 0xDF ? 2
                 : u[0] >= 0xE0 && u[0] <= 0xEF                   ? 3
                 : u[0] >= 0xF0 && u[0] <= 0xF4                   ? 4
                                                                  : 0;
    if (len == 0 || len > n || !utf8_check(s, len, NULL, NULL)) {
        *em = 4 * 0.7; /* \xHH */
        *prev = 0;
        return 1;
    }
    if (text_control_width(s, len) > 0) {
        *em = 6 * 0.7; /* \u202E */
        *prev = 0;
        return len;
    }
    unsigned cp = len == 1 ? u[0]
                  : len == 2 ? ((u[0] & 0x1Fu) << 6) | (u[1] & 0x3Fu)
                  : len == 3 ? ((u[0] & 0x0Fu) << 12) | ((u[1] & 0x3Fu) << 6) | (u[2] & 0x3Fu)
                             : ((u[0] & 0x07u) << 18) | ((u[1] & 0x3Fu) << 12) |
                                   ((u[2] & 0x3Fu) << 6) | (u[3] & 0x3Fu);
    *em = *prev == 0x200D ? 0 : glyph_em(cp); /* joined into the emoji before */
    *prev = cp;
    return len;
}

/* The bytes of s that fit in budget em (all of it when it fits), and the
 * width of the whole of s in *whole. */
static size_t text_fit(const char *s, double budget, double bold, double *whole)
{
    size_t n = strlen(s), i = 0, fit = 0;
    double used = 0;
    unsigned prev = 0;
    bool fits = true;
    while (i < n) {
        double em;
        i += char_em(s + i, n - i, &em, &prev);
        used += em * bold;
        if (fits && used <= budget)
            fit = i;
        else
            fits = false;
    }
    *whole = used;
    return fit;
}

static double text_em(const char *s, double bold)
{
    double whole;
    text_fit(s, 0, bold, &whole);
    return whole;
}

/* s, escaped, cut with an ellipsis after it to what shows in budget em:
 * a chart's label has a fixed width (the full text is in the element's
 * <title> and in the tables). */
static void text_cut(page *pg, const char *s, double budget, double bold)
{
    s = s ? s : "";
    double whole;
    size_t n = text_fit(s, budget, bold, &whole);
    if (whole <= budget) {
        text(pg, s);
        return;
    }
    n = text_fit(s, budget - LABEL_ELLIPSIS_EM * bold, bold, &whole);
    textn(pg, s, n);
    put(pg, "\xE2\x80\xA6");
}

/* The UTC time of unix_s as "2026-11-28 10:00:00" (what: TIME_SECONDS),
 * "2026-11-28 10:00" (TIME_HOUR) or "2026-11-28" (TIME_DAY). */
typedef enum time_shape { TIME_SECONDS, TIME_HOUR, TIME_DAY } time_shape;

static void utc_text(char *out, size_t size, int64_t unix_s, time_shape what)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, size, "@%" PRId64, unix_s);
        return;
    }
    long long y = (long long)tm.tm_year + 1900;
    if (what == TIME_DAY)
        snprintf(out, size, "%04lld-%02d-%02d", y, tm.tm_mon + 1, tm.tm_mday);
    else if (what == TIME_HOUR)
        snprintf(out, size, "%04lld-%02d-%02d %02d:00", y, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour);
    else
        snprintf(out, size, "%04lld-%02d-%02d %02d:%02d:%02d", y, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static const char STYLE[] =
    "body{font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:0;"
    "color:#222;background:#f4f5f7}"
    "header{background:#24364b;color:#fff;padding:18px 28px}"
    "header h1{margin:0 0 6px;font-size:22px}"
    "header dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:8px 0 0;"
    "font-size:14px}"
    "header dt{color:#b8c4d2}header dd{margin:0;overflow-wrap:anywhere}"
    "main{padding:18px 28px}"
    "section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:14px 18px;"
    "margin:0 0 18px}"
    "h2{font-size:17px;margin:0 0 10px}"
    ".status{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600}"
    ".s0{background:#d7f0dc;color:#1b5e20}.s1{background:#fff1c9;color:#7a5200}"
    ".sx{background:#fbd5d5;color:#8e1b1b}"
    ".verdict.good strong{color:#1b5e20}.verdict.bad strong{color:#8e1b1b}"
    ".verdict.none strong{color:#5a6675}"
    "tr.discrepancies td.verdict{background:#fbd5d5;color:#8e1b1b;font-weight:600}"
    "tr.balanced td.verdict{background:#d7f0dc;color:#1b5e20}"
    ".tiles{display:flex;flex-wrap:wrap;gap:10px;margin:0 0 18px}"
    ".tile{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 16px;"
    "min-width:110px}"
    ".tile .n{font-size:24px;font-weight:600}.tile .l{font-size:13px;color:#5a6675}"
    ".tile.inserted{border-top:4px solid #2e7d32}.tile.updated{border-top:4px solid #1565c0}"
    ".tile.unchanged{border-top:4px solid #9e9e9e}.tile.stale{border-top:4px solid #ef6c00}"
    ".tile.existing{border-top:4px solid #6a1b9a}.tile.rejected{border-top:4px solid #c62828}"
    "table{border-collapse:collapse;width:100%;font-size:13px}"
    "th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceef1;vertical-align:top}"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
    "pre{white-space:pre-wrap;word-break:break-all;margin:2px 0;font-size:12px;"
    "background:#f7f7f9;padding:4px 6px;border-radius:3px}"
    "code{font-size:12px;word-break:break-all}"
    ".note{color:#5a6675;font-size:13px}.gaps{color:#b71c1c;font-size:13px}"
    "svg text{font-family:inherit}"
    /* a phone's width: charts scale down, a wide table scrolls inside its
     * card, a long key without spaces wraps instead of pushing columns out */
    "svg{max-width:100%;height:auto}section{overflow-x:auto}"
    "td{overflow-wrap:anywhere}td.num,th.num{white-space:nowrap}"
    /* ... but only a key breaks anywhere: a tenant, a day, an amount or a
     * category squeezed by a long key beside it would break inside itself
     * and read as two figures ("12345678901234568" over "1.90") */
    "td.whole{white-space:nowrap}.gaps{overflow-wrap:anywhere}"
    "#reconciliation td{overflow-wrap:normal}#reconciliation td.key{overflow-wrap:anywhere}"
    "#reconciliation th,#reconciliation td{padding:4px 5px}"
    /* the days' table holds both sides' kinds and each category's money: a
     * size smaller, so that it fits a desktop's width without breaking a figure */
    "#recon-days{font-size:12px}#recon-days th,#recon-days td{padding:3px 4px}"
    "#recon-stated tr.differs td.mark{background:#fbd5d5;color:#8e1b1b;font-weight:600}"
    "#reconciliation span.net{font-weight:600}#reconciliation span.time{white-space:nowrap}";

typedef struct figure {
    const char *name;
    uint64_t value;
} figure;

static void tile(page *pg, const char *cls, const char *label, uint64_t n)
{
    putf(pg, "<div class=\"tile %s\" data-figure=\"%s\"><div class=\"n\">%llu</div>"
             "<div class=\"l\">%s</div></div>\n",
         cls, cls, (unsigned long long)n, label);
}

/* reconcile's command line and what it wrote, for the header. */
static void reconcile_mode(page *pg, const run_report *rep, bool command)
{
    if (command && rep->settle) {
        put(pg, rep->dry_run ? "settle --dry-run" : "settle");
        return;
    }
    if (rep->settle) {
        put(pg, "settle: fees, payouts, balances and bank credits checked");
        put(pg, rep->dry_run ? "; a dry run: nothing written, no register"
                             : "; the register written, the table untouched");
        return;
    }
    if (command) {
        put(pg, "reconcile");
        if (rep->repair)
            putf(pg, " --repair %s", rep->repair);
        if (rep->dry_run)
            put(pg, " --dry-run");
        return;
    }
    put(pg, "reconcile: the statements compared with the table, both ways");
    if (rep->repair)
        putf(pg, "; then %s through the merge",
             strcmp(rep->repair, "missing") == 0 ? "the rows missing in the table inserted"
                                                 : "every statement row merged as import does");
    put(pg, rep->dry_run ? "; a dry run: nothing written, no register"
            : rep->repair ? "; the register written, the merge committed"
                          : "; the register written, the table untouched");
}

static void render_header(page *pg, const run_report *rep)
{
    const char *cmd = rep->validate_only ? "validate" : rep->dry_run ? "import --dry-run" : "import";
    char when[64];
    utc_text(when, sizeof when, rep->started_at, TIME_SECONDS);
    put(pg, "<header><h1>idemload ");
    if (rep->reconcile)
        reconcile_mode(pg, rep, true);
    else
        put(pg, cmd);
    put(pg, " report</h1><dl>\n<dt>target</dt><dd id=\"target\">");
    if (rep->validate_only && !rep->reconcile)
        put(pg, "none (validate reads no database)");
    else
        text(pg, rep->target);
    if (rep->database) {
        put(pg, "</dd>\n<dt>database</dt><dd id=\"database\">");
        text(pg, rep->database);
    }
    put(pg, "</dd>\n<dt>mode</dt><dd id=\"mode\">");
    if (rep->reconcile)
        reconcile_mode(pg, rep, false);
    else
        put(pg, rep->validate_only ? "validate: parse, validate and deduplicate only"
                : rep->dry_run     ? "dry run: figures computed against the live table, then "
                                     "rolled back"
                                   : "import: written and committed");
    put(pg, "</dd>\n");
    putf(pg, "<dt>started</dt><dd>%s UTC</dd>\n<dt>elapsed</dt><dd>%.2f s</dd>\n", when,
         rep->elapsed_s);
    putf(pg, "<dt>files</dt><dd>%zu</dd>\n", rep->n_files);
    putf(pg, "<dt>exit status</dt><dd><span id=\"exit-status\" class=\"status %s\">%d</span> %s"
             "</dd>\n</dl></header>\n",
         rep->exit_code == 0 ? "s0" : rep->exit_code == 1 ? "s1" : "sx", rep->exit_code,
         exit_status_meaning(rep, rep->exit_code));
}

static void render_tiles(page *pg, const run_report *rep)
{
    const load_counts *t = &rep->totals;
    put(pg, "<div class=\"tiles\" id=\"figures\">\n");
    tile(pg, "read", "rows read", t->rows_read);
    tile(pg, "rejected", "rejected", t->rows_rejected);
    if (t->rows_skipped)
        tile(pg, "skipped", "skipped by the profile", t->rows_skipped);
    tile(pg, "deduplicated", "deduplicated", t->rows_deduplicated);
    uint64_t kept = t->rows_read - t->rows_rejected - t->rows_skipped - t->rows_deduplicated;
    if (rep->reconcile && rep->validate_only) {
        tile(pg, "compared", "compared", kept);
    } else if (rep->validate_only) {
        tile(pg, "merge", "would merge", kept);
    } else {
        tile(pg, "inserted", rep->dry_run ? "would insert" : "inserted", t->inserted);
        tile(pg, "updated", rep->dry_run ? "would update" : "updated", t->updated);
        tile(pg, "unchanged", "unchanged", t->unchanged);
        tile(pg, "stale", "stale", t->stale);
        tile(pg, "existing", "existing", t->existing);
    }
    if (!rep->reconcile || !rep->validate_only)
        tile(pg, "chunks", "chunks", t->chunks);
    put(pg, "</div>\n");
}

static const struct {
    const char *name;
    const char *color;
} ACTIONS[] = {{"inserted", "#2e7d32"}, {"updated", "#1565c0"}, {"unchanged", "#9e9e9e"},
               {"stale", "#ef6c00"},    {"existing", "#6a1b9a"}};
#define N_ACTIONS (sizeof ACTIONS / sizeof ACTIONS[0])

static void action_values(const load_counts *c, uint64_t v[N_ACTIONS])
{
    v[0] = c->inserted;
    v[1] = c->updated;
    v[2] = c->unchanged;
    v[3] = c->stale;
    v[4] = c->existing;
}

/* A group in full, as its tooltip and the table name it. */
static void group_label(page *pg, const group_report *g)
{
    putf(pg, "tenant %lld \xC2\xB7 ", (long long)g->tenant_id);
    text(pg, g->channel);
    put(pg, " \xC2\xB7 ");
    text(pg, g->kind);
}

/* The chart's labels: 12px text ending 8px left of the bars, label_w from
 * the chart's left edge. */
#define GROUP_LABEL_W 330
#define GROUP_LABEL_EM ((GROUP_LABEL_W - 8 - 4) / 12.0)

/* A group as the chart's label, its names cut so that the whole label
 * shows: the kind keeps up to a third of the room the tenant leaves, or
 * what the channel does not need. */
static void group_label_cut(page *pg, const group_report *g)
{
    char tenant[64];
    snprintf(tenant, sizeof tenant, "tenant %lld \xC2\xB7 ", (long long)g->tenant_id);
    const char *channel = g->channel ? g->channel : "", *kind = g->kind ? g->kind : "";
    double room = GROUP_LABEL_EM - text_em(tenant, 1) - text_em(" \xC2\xB7 ", 1);
    double wc = text_em(channel, 1), wk = text_em(kind, 1);
    double for_kind = wk, for_channel = wc;
    if (wc + wk > room) {
        for_kind = wk < room / 3 ? wk : room / 3;
        if (room - wc > for_kind)
            for_kind = room - wc;
        for_channel = room - for_kind;
    }
    put(pg, tenant);
    text_cut(pg, channel, for_channel, 1);
    put(pg, " \xC2\xB7 ");
    text_cut(pg, kind, for_kind, 1);
}

/* One group's row of the chart at height y: its label (cut to the chart's
 * width, the whole one as its tooltip), its stacked bar scaled to max, and
 * its merged rows after it. */
static void render_group_bar(page *pg, const group_report *g, int y, uint64_t max,
                             int label_w, int bar_w)
{
    put(pg, "<g><title>");
    group_label(pg, g);
    putf(pg, "</title><text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">",
         label_w - 8, y + 15);
    group_label_cut(pg, g);
    put(pg, "</text></g>\n");
    uint64_t v[N_ACTIONS];
    action_values(&g->counts, v);
    double x = label_w;
    for (size_t a = 0; a < N_ACTIONS; a++) {
        if (!v[a])
            continue;
        double w = (double)bar_w * (double)v[a] / (double)max;
        if (w < 1)
            w = 1;
        putf(pg, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\">"
                 "<title>%s %llu</title></rect>\n",
             x, y + 3, w, ACTIONS[a].color, ACTIONS[a].name, (unsigned long long)v[a]);
        x += w;
    }
    putf(pg, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#5a6675\">%llu</text>\n",
         x + 6, y + 15, (unsigned long long)load_counts_merged(&g->counts));
}

/* Horizontal stacked bars, one per group (the first 60), with a legend. */
static void render_group_chart(page *pg, const run_report *rep)
{
    uint64_t max = 1;
    for (size_t i = 0; i < rep->n_groups; i++) {
        uint64_t m = load_counts_merged(&rep->groups[i].counts);
        if (m > max)
            max = m;
    }
    const size_t shown = rep->n_groups < 60 ? rep->n_groups : 60;
    const int label_w = GROUP_LABEL_W, bar_w = 640, row_h = 22, top = 28;
    int height = top + (int)shown * row_h + 8;
    putf(pg, "<svg width=\"1100\" height=\"%d\" viewBox=\"0 0 1100 %d\" role=\"img\" "
             "aria-label=\"figures per group\">\n", height, height);
    for (size_t a = 0; a < N_ACTIONS; a++)
        putf(pg, "<rect x=\"%d\" y=\"6\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                 "<text x=\"%d\" y=\"17\" font-size=\"12\">%s</text>\n",
             label_w + (int)a * 110, ACTIONS[a].color, label_w + (int)a * 110 + 16,
             ACTIONS[a].name);
    for (size_t i = 0; i < shown; i++)
        render_group_bar(pg, &rep->groups[i], top + (int)i * row_h, max, label_w, bar_w);
    put(pg, "</svg>\n");
    if (shown < rep->n_groups)
        putf(pg, "<p class=\"note\">The chart shows the first %zu of %zu groups; the table has "
                 "them all.</p>\n", shown, rep->n_groups);
}

/* The table of every group's figures. */
static void render_group_table(page *pg, const run_report *rep)
{
    put(pg, "<table id=\"group-table\"><tr><th>tenant</th><th>channel</th><th>kind</th>"
            "<th class=\"num\">rows</th>");
    for (size_t a = 0; a < N_ACTIONS; a++)
        putf(pg, "<th class=\"num\">%s</th>", ACTIONS[a].name);
    put(pg, "</tr>\n");
    for (size_t i = 0; i < rep->n_groups; i++) {
        const group_report *g = &rep->groups[i];
        uint64_t v[N_ACTIONS];
        action_values(&g->counts, v);
        putf(pg, "<tr><td class=\"whole\">%lld</td><td>", (long long)g->tenant_id);
        text(pg, g->channel);
        put(pg, "</td><td>");
        text(pg, g->kind);
        putf(pg, "</td><td class=\"num\">%llu</td>",
             (unsigned long long)load_counts_merged(&g->counts));
        for (size_t a = 0; a < N_ACTIONS; a++)
            putf(pg, "<td class=\"num\">%llu</td>", (unsigned long long)v[a]);
        put(pg, "</tr>\n");
    }
    put(pg, "</table>");
}

/* The figures per group: the chart and the table, or why there are none. */
static void render_groups(page *pg, const run_report *rep)
{
    put(pg, "<section id=\"groups\"><h2>Figures per tenant, channel and kind</h2>\n");
    if (rep->validate_only) {
        put(pg, "<p class=\"note\">validate does not merge: the figures per group come from "
                "an import or a dry run.</p></section>\n");
        return;
    }
    if (rep->n_groups == 0) {
        put(pg, "<p class=\"note\">No row reached the merge.</p></section>\n");
        return;
    }
    render_group_chart(pg, rep);
    render_group_table(pg, rep);
    put(pg, "</section>\n");
}

/* The timeline's buckets: hours for up to a week, else days (or several
 * days each, so a stray far date cannot make the chart endless). */
#define TIMELINE_MAX_HOURS (24 * 7)
#define TIMELINE_MAX_BUCKETS 400

static void bucket_label(char *out, size_t size, int64_t hour, int64_t bucket_hours)
{
    utc_text(out, size, hour * 3600, bucket_hours < 24 ? TIME_HOUR : TIME_DAY);
}

/* The timeline chart's periods and geometry. */
typedef struct tl_axis {
    int64_t first;          /* the first period's start, hours since the epoch */
    int64_t bucket_hours;
    size_t n;               /* periods */
    const char *unit;       /* "hour", "day" or "period" */
    double bw;              /* width of a period in the plot */
} tl_axis;

enum { TL_LABEL_W = 150, TL_PLOT_W = 920, TL_BAND_H = 64, TL_GAP = 14, TL_TOP = 8 };
#define TL_LABEL_BOLD 1.12 /* a band's label is bold (font-weight 600) */

/* The spans of consecutive empty periods of one channel, as a list item. */
static void list_holes(page *gp, const tl_axis *ax, const char *channel, const uint64_t *counts,
                       size_t empty)
{
    put(gp, "<li>");
    text(gp, channel);
    putf(gp, ": %zu empty %s%s:", empty, ax->unit, empty == 1 ? "" : "s");
    size_t spans = 0;
    for (size_t k = 0; k < ax->n; k++) {
        if (counts[k] != 0 || (k > 0 && counts[k - 1] == 0))
            continue;
        size_t e = k;
        while (e + 1 < ax->n && counts[e + 1] == 0)
            e++;
        if (spans++ == 12) {
            put(gp, " \xE2\x80\xA6");
            break;
        }
        /* Hours are a span of time, its end exclusive ("10:00 – 12:00");
         * days are dates, the last one inclusive ("2026-11-04 – 2026-11-06",
         * or one date alone): an exclusive end date read as one more empty
         * day, a day that has rows. */
        char s1[40], s2[40];
        int64_t end = ax->first + (int64_t)(e + 1) * ax->bucket_hours;
        bucket_label(s1, sizeof s1, ax->first + (int64_t)k * ax->bucket_hours, ax->bucket_hours);
        bucket_label(s2, sizeof s2, ax->bucket_hours < 24 ? end : end - 24, ax->bucket_hours);
        if (strcmp(s1, s2) == 0)
            putf(gp, "%s %s", spans > 1 ? ";" : "", s1);
        else
            putf(gp, "%s %s \xE2\x80\x93 %s", spans > 1 ? ";" : "", s1, s2);
    }
    put(gp, "</li>\n");
}

/* One channel's band: its label, a bar per period, empty periods shaded;
 * its holes also go to gp as text. */
static void render_band(page *pg, page *gp, const tl_axis *ax, const char *channel,
                        const uint64_t *counts, int y0)
{
    uint64_t max = 1, total = 0;
    size_t empty = 0;
    for (size_t k = 0; k < ax->n; k++) {
        if (counts[k] > max)
            max = counts[k];
        total += counts[k];
        empty += counts[k] == 0;
    }
    put(pg, "<g><title>");
    text(pg, channel);
    putf(pg, "</title><text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"end\" "
             "font-weight=\"600\">", TL_LABEL_W - 10, y0 + TL_BAND_H / 2);
    text_cut(pg, channel, (TL_LABEL_W - 10 - 4) / 13.0, TL_LABEL_BOLD);
    putf(pg, "</text><text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\" "
             "fill=\"#5a6675\">%llu %s</text></g>\n", TL_LABEL_W - 10, y0 + TL_BAND_H / 2 + 15,
         (unsigned long long)total, total == 1 ? "row" : "rows");
    putf(pg, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f7f8fa\"/>\n",
         TL_LABEL_W, y0, TL_PLOT_W, TL_BAND_H);
    double bw = ax->bw;
    for (size_t k = 0; k < ax->n; k++) {
        double x = TL_LABEL_W + bw * (double)k;
        char when[40];
        bucket_label(when, sizeof when, ax->first + (int64_t)k * ax->bucket_hours,
                     ax->bucket_hours);
        if (counts[k] == 0) {
            putf(pg, "<rect class=\"gap\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
                     "fill=\"#fbdada\"><title>%s: no rows</title></rect>\n",
                 x, y0, bw, TL_BAND_H, when);
            continue;
        }
        double h = (double)(TL_BAND_H - 4) * (double)counts[k] / (double)max;
        if (h < 1)
            h = 1;
        putf(pg, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                 "fill=\"#3f6fa8\"><title>%s: %llu %s</title></rect>\n",
             x + (bw > 3 ? 0.5 : 0), y0 + TL_BAND_H - h, bw > 3 ? bw - 1 : bw, h, when,
             (unsigned long long)counts[k], counts[k] == 1 ? "row" : "rows");
    }
    if (empty)
        list_holes(gp, ax, channel, counts, empty);
}

/* The time axis under the bands: about eight labels. */
static void render_time_axis(page *pg, const tl_axis *ax, int ya)
{
    size_t step = ax->n > 8 ? (ax->n + 7) / 8 : 1;
    for (size_t k = 0; k < ax->n && ax->bw * (double)k < TL_PLOT_W - 90; k += step) {
        char when[40];
        bucket_label(when, sizeof when, ax->first + (int64_t)k * ax->bucket_hours,
                     ax->bucket_hours);
        putf(pg, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#5a6675\">%s</text>\n",
             TL_LABEL_W + ax->bw * (double)k, ya + 10, when);
    }
}

/* Hours, or days (or longer periods) for long ranges, and what they cover. */
static tl_axis timeline_axis(int64_t first, int64_t last)
{
    tl_axis ax = {.first = first, .bucket_hours = 1};
    if (last - first + 1 > TIMELINE_MAX_HOURS) {
        ax.first -= ((first % 24) + 24) % 24; /* days start at 00:00 UTC */
        int64_t days = (last - ax.first) / 24 + 1;
        ax.bucket_hours = 24 * ((days + TIMELINE_MAX_BUCKETS - 1) / TIMELINE_MAX_BUCKETS);
    }
    ax.n = (size_t)((last - ax.first) / ax.bucket_hours + 1);
    ax.unit = ax.bucket_hours == 1 ? "hour" : ax.bucket_hours == 24 ? "day" : "period";
    ax.bw = (double)TL_PLOT_W / (double)ax.n;
    return ax;
}

static void render_timeline(page *pg, const run_report *rep)
{
    const timeline *tl = rep->timeline;
    int64_t first, last;
    put(pg, "<section id=\"timeline\"><h2>Rows per ");
    if (!tl || !timeline_range(tl, &first, &last)) {
        put(pg, "hour of received_at</h2><p class=\"note\">No valid row: nothing to chart."
                "</p></section>\n");
        return;
    }
    tl_axis ax = timeline_axis(first, last);
    putf(pg, "%s of received_at, per channel</h2>\n", ax.unit);
    char a[40], b[40];
    bucket_label(a, sizeof a, ax.first, ax.bucket_hours);
    bucket_label(b, sizeof b, ax.first + (int64_t)(ax.n - 1) * ax.bucket_hours, ax.bucket_hours);
    putf(pg, "<p class=\"note\">Valid rows (before deduplication) from %s to %s UTC, %zu %s%s "
             "of %lld hour%s each. Periods with no row of a channel inside the files' range "
             "are shaded red: a hole in a statement.</p>\n",
         a, b, ax.n, ax.unit, ax.n == 1 ? "" : "s", (long long)ax.bucket_hours,
         ax.bucket_hours == 1 ? "" : "s");
    uint64_t *counts = calloc(ax.n, sizeof *counts);
    if (!counts) {
        pg->ok = false;
        put(pg, "</section>\n");
        return;
    }
    size_t n_ch = timeline_channels(tl);
    int height = TL_TOP + (int)n_ch * (TL_BAND_H + TL_GAP) + 24;
    putf(pg, "<svg width=\"1100\" height=\"%d\" viewBox=\"0 0 1100 %d\" role=\"img\" "
             "aria-label=\"rows per %s per channel\">\n", height, height, ax.unit);
    buf gaps = BUF_INIT;
    page gp = {&gaps, true};
    for (size_t c = 0; c < n_ch; c++) {
        timeline_buckets(tl, c, ax.first, ax.bucket_hours, counts, ax.n);
        render_band(pg, &gp, &ax, timeline_channel(tl, c), counts,
                    TL_TOP + (int)c * (TL_BAND_H + TL_GAP));
    }
    render_time_axis(pg, &ax, TL_TOP + (int)n_ch * (TL_BAND_H + TL_GAP) + 4);
    put(pg, "</svg>\n");
    pg->ok = pg->ok && gp.ok;
    if (gaps.len) {
        put(pg, "<ul class=\"gaps\" id=\"empty-periods\">\n");
        put(pg, buf_cstr(&gaps));
        put(pg, "</ul>\n");
    } else {
        put(pg, "<p class=\"note\" id=\"empty-periods\">No empty period inside the range.</p>\n");
    }
    if (n_ch && strcmp(timeline_channel(tl, n_ch - 1), TIMELINE_OTHER) == 0)
        putf(pg, "<p class=\"note\" id=\"channels-lumped\">Channels past the first %d are "
                 "charted together as %s: a hole of one of them alone is not seen here "
                 "(validate or reconcile that channel's files apart to chart them).</p>\n",
             TIMELINE_MAX_CHANNELS - 1, TIMELINE_OTHER);
    if (timeline_uncharted(tl))
        putf(pg, "<p class=\"note\">%llu rows could not be charted (out of memory).</p>\n",
             (unsigned long long)timeline_uncharted(tl));
    buf_free(&gaps);
    free(counts);
    put(pg, "</section>\n");
}

static void render_rejects(page *pg, const run_report *rep)
{
    const reject_summary *s = &rep->rejects;
    put(pg, "<section id=\"rejects\"><h2>Rejects by reason</h2>\n");
    if (s->n_groups == 0) {
        put(pg, "<p class=\"note\">No row was rejected.</p></section>\n");
        return;
    }
    put(pg, "<table id=\"reject-table\"><tr><th>reason</th><th class=\"num\">rows</th><th>first examples "
            "(file:line, the raw text)</th></tr>\n");
    for (size_t i = 0; i < s->n_groups; i++) {
        const reject_group *g = &s->groups[i];
        put(pg, "<tr><td>");
        text(pg, g->reason);
        putf(pg, "</td><td class=\"num\">%llu</td><td>", (unsigned long long)g->count);
        for (size_t k = 0; k < g->n_examples; k++) {
            const reject_example *e = &g->example[k];
            put(pg, "<code>");
            text(pg, e->file);
            putf(pg, ":%llu</code><pre>", (unsigned long long)e->line);
            text_block(pg, e->raw, e->raw_len);
            if (e->raw_cut)
                put(pg, " \xE2\x80\xA6");
            put(pg, "</pre>");
        }
        put(pg, "</td></tr>\n");
    }
    put(pg, "</table></section>\n");
}

static void render_files(page *pg, const run_report *rep)
{
    put(pg, "<section id=\"files\"><h2>Files</h2>\n<table id=\"file-table\"><tr><th>file</th><th>format</th>"
            "<th>status</th><th>SHA-256</th><th class=\"num\">time</th>"
            "<th class=\"num\">read</th><th class=\"num\">rejected</th>"
            "<th class=\"num\">dedup.</th>");
    /* the files' figures add up as the report's do (README "The files"):
     * read = rejected + skipped + dedup. + what was kept */
    bool skipped = rep->totals.rows_skipped > 0;
    if (skipped)
        put(pg, "<th class=\"num\">skipped</th>");
    if (!rep->validate_only)
        for (size_t a = 0; a < N_ACTIONS; a++)
            putf(pg, "<th class=\"num\">%s</th>", ACTIONS[a].name);
    else
        put(pg, rep->reconcile ? "<th class=\"num\">compared</th>"
                               : "<th class=\"num\">would merge</th>");
    put(pg, "</tr>\n");
    for (size_t i = 0; i < rep->n_files; i++) {
        const file_report *f = &rep->files[i];
        put(pg, "<tr><td>");
        text(pg, f->path ? f->path : "");
        if (f->error) {
            put(pg, "<div class=\"gaps\">");
            text(pg, f->error);
            put(pg, "</div>");
        }
        if (f->reload_reason) {
            put(pg, "<div class=\"note\">ledger: ");
            text(pg, f->reload_reason);
            put(pg, "</div>");
        }
        if (f->note) {
            put(pg, "<div class=\"note\">");
            text(pg, f->note);
            put(pg, "</div>");
        }
        put(pg, "</td><td>");
        text(pg, f->format);
        putf(pg, "</td><td><span class=\"status %s\">%s</span></td><td><code>%s"
                 "</code></td>",
             f->status == FILE_OK || f->status == FILE_SKIPPED ? "s0"
                                         : f->status == FILE_PARTIAL                       ? "s1"
                                                                                           : "sx",
             file_status_name(f->status), f->digest[0] ? f->digest
                         : f->path && strcmp(f->path, "-") == 0 ? "none (standard input)"
                                                                : "not computed");
        if (f->elapsed_s >= 0)
            putf(pg, "<td class=\"num\">%.2f s</td>", f->elapsed_s);
        else
            put(pg, "<td class=\"num\">-</td>");
        putf(pg, "<td class=\"num\">%llu</td><td class=\"num\">%llu</td><td class=\"num\">%llu"
                 "</td>",
             (unsigned long long)f->counts.rows_read, (unsigned long long)f->counts.rows_rejected,
             (unsigned long long)f->counts.rows_deduplicated);
        if (skipped)
            putf(pg, "<td class=\"num\">%llu</td>", (unsigned long long)f->counts.rows_skipped);
        if (!rep->validate_only) {
            uint64_t v[N_ACTIONS];
            action_values(&f->counts, v);
            for (size_t a = 0; a < N_ACTIONS; a++)
                putf(pg, "<td class=\"num\">%llu</td>", (unsigned long long)v[a]);
        } else {
            putf(pg, "<td class=\"num\">%llu</td>",
                 (unsigned long long)load_counts_kept(&f->counts));
        }
        put(pg, "</tr>\n");
    }
    put(pg, "</table></section>\n");
}

bool html_render(const run_report *rep, buf *out)
{
    page pg = {out, true};
    char when[64];
    utc_text(when, sizeof when, rep->started_at, TIME_SECONDS);
    put(&pg, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
             "style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'\">\n<title>idemload ");
    put(&pg, rep->reconcile ? "reconcile"
             : rep->validate_only ? "validate"
             : rep->dry_run       ? "dry run"
                                  : "import");
    if (rep->target && (!rep->validate_only || rep->reconcile)) {
        put(&pg, rep->reconcile ? " against " : " into ");
        text(&pg, rep->target);
    }
    putf(&pg, ", %s UTC</title>\n<style>%s</style></head><body>\n", when, STYLE);
    render_header(&pg, rep);
    put(&pg, "<main>\n");
    /* reconcile's section (recon_render.c, its values escaped there) comes
     * first: the verdict is what its reader opens the page for. */
    if (rep->html_section)
        put(&pg, rep->html_section);
    render_tiles(&pg, rep);
    /* reconcile merges only with --repair and charts no timeline: its
     * sections say so by their absence, not by a note that fits import */
    if (!rep->reconcile || rep->n_groups)
        render_groups(&pg, rep);
    int64_t first, last;
    if (!rep->reconcile || (rep->timeline && timeline_range(rep->timeline, &first, &last)))
        render_timeline(&pg, rep);
    render_rejects(&pg, rep);
    render_files(&pg, rep);
    putf(&pg, "<p class=\"note\">Written by idemload %s.</p>\n</main></body></html>\n",
         IDEMLOAD_VERSION);
    return pg.ok;
}

bool html_write(const run_report *rep, const char *path, buf *err)
{
    buf page_text = BUF_INIT;
    if (!html_render(rep, &page_text)) {
        buf_free(&page_text);
        buf_printf(err, "out of memory rendering the HTML report");
        return false;
    }
    /* Written whole or not at all (outfile.h): a run killed while writing
     * it leaves the page that was there, never half of one. */
    outfile *f = outfile_open(path);
    bool ok = f && fwrite(page_text.data, 1, page_text.len, outfile_stream(f)) == page_text.len &&
              outfile_commit(&f);
    if (!ok)
        buf_printf(err, "cannot write the HTML report to %s: %s",
                   strcmp(path, "-") == 0 ? "standard output" : path, strerror(errno));
    outfile_discard(&f);
    buf_free(&page_text);
    return ok;
}

int html_report_outputs(const char *report_path, const char *html_path, run_report *rep,
                        bool object_ok, bool (*build)(const void *ctx, buf *out),
                        const void *ctx, int code)
{
    int out = EXIT_OK;
    if (report_path) {
        buf err = BUF_INIT;
        if (!object_ok || !report_write_json(rep, report_path, &err)) {
            log_error("%s", err.len ? buf_cstr(&err) : "out of memory building the report");
            out = EXIT_INPUT;
        }
        buf_free(&err);
    }
    if (html_path) {
        buf section = BUF_INIT, err = BUF_INIT;
        if (!build(ctx, &section)) {
            log_error("out of memory rendering the HTML report");
            out = EXIT_INPUT;
        } else {
            rep->html_section = section.data;
            section = (buf)BUF_INIT;
            rep->exit_code = exit_worst(code, out);
            if (!html_write(rep, html_path, &err)) {
                log_error("%s", buf_cstr(&err));
                out = EXIT_INPUT;
            }
        }
        buf_free(&section);
        buf_free(&err);
    }
    return out;
}
