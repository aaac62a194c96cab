/*
 * profile_parse_trailer.c - a profile file's "trailer" member (see
 * profile_members.h): where a bill states its own row count (a summary
 * column or count lines), its money totals (a summary column, or a framing
 * line's label) and its footers' record counts per section, report and
 * file.
 */
#include "input/profile_members.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* trailer.totals: [{"summary": COLUMN | "line": PREFIX, "label": TEXT,
 * "sum": COLUMN, "kind": KIND}]. */
static bool parse_totals(parse_ctx *cx, json_t *tr, profile *p)
{
    json_t *a = json_object_get(tr, "totals");
    if (!a || json_is_null(a))
        return true;
    if (!json_is_array(a) || json_array_size(a) == 0)
        return member_bad(cx, "trailer.totals", "must be a non-empty array of totals");
    p->totals = calloc(json_array_size(a), sizeof *p->totals);
    if (!p->totals) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    static const char *const allowed[] = {"summary", "line", "label", "sum", "kind", "count",
                                          NULL};
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *t = json_array_get(a, i);
        char path[64], sub[96];
        snprintf(path, sizeof path, "trailer.totals[%zu]", i);
        if (!json_is_object(t))
            return member_bad(cx, path, "must be an object (summary or line and label, sum, kind)");
        money_total *m = &p->totals[p->n_totals++];
#define TOTAL_STR(name, field, req)                                                    \
    (snprintf(sub, sizeof sub, "%s.%s", path, name),                                   \
     member_str(cx, t, name, sub, req, false, &m->field))
        json_t *cnt = json_object_get(t, "count");
        if (cnt && !json_is_boolean(cnt))
            return member_bad(cx, (snprintf(sub, sizeof sub, "%s.count", path), sub),
                              "must be true or false");
        m->count = json_is_true(cnt);
        json_t *sum = json_object_get(t, "sum");
        if (!member_only(cx, t, path, allowed) || !TOTAL_STR("summary", summary, false) ||
            !TOTAL_STR("line", line, false) || !TOTAL_STR("label", label, false) ||
            !TOTAL_STR("kind", kind, false))
            return false;
        if (m->count && sum)
            return member_bad(cx, path, "counts rows (\"count\": true): it has no \"sum\"");
        if (json_is_array(sum)) {
            /* [C, ALT]: the column an older layout names instead. */
            snprintf(sub, sizeof sub, "%s.sum", path);
            json_t *c = json_array_get(sum, 0), *alt = json_array_get(sum, 1);
            if (json_array_size(sum) != 2 || !json_is_string(c) || !json_is_string(alt) ||
                json_string_length(c) == 0 || json_string_length(alt) == 0)
                return member_bad(cx, sub,
                                  "must be a column, or [column, the older layout's column]");
            if (!member_dup(cx, json_string_value(c), &m->sum) ||
                !member_dup(cx, json_string_value(alt), &m->sum_alt))
                return false;
        } else if (!m->count && !TOTAL_STR("sum", sum, true)) {
            return false;
        }
#undef TOTAL_STR
        if (!m->summary == !m->line)
            return member_bad(cx, path, "needs one of \"summary\" (a summary column) or \"line\" "
                                        "(a framing line's prefix, with \"label\")");
        if (m->summary && !p->end_prefix)
            return member_bad(cx, path,
                              "\"summary\" needs framing.end_prefix (the summary header)");
        if (m->line && !m->label)
            return member_bad(cx, path, "\"line\" needs \"label\": the text before the amount");
        if (m->label && !m->line)
            return member_bad(cx, path, "\"label\" goes with \"line\"");
    }
    return true;
}

/* trailer.footers: [{"row_type": "SC", "counts": "section|report|file",
 * "optional": true|false}],
 * with trailer.section_start and trailer.file_start. */
static bool parse_footers(parse_ctx *cx, json_t *tr, profile *p)
{
    if (!member_str(cx, tr, "section_start", "trailer.section_start", false, false,
                    &p->section_start) ||
        !member_str(cx, tr, "report_start", "trailer.report_start", false, false,
                    &p->report_start) ||
        !member_str(cx, tr, "file_start", "trailer.file_start", false, false, &p->file_start))
        return false;
    json_t *a = json_object_get(tr, "footers");
    if (!a || json_is_null(a)) {
        if (p->section_start || p->report_start || p->file_start)
            return member_bad(cx, p->section_start  ? "trailer.section_start"
                                  : p->report_start ? "trailer.report_start"
                                                    : "trailer.file_start",
                              "goes with trailer.footers");
        return true;
    }
    if (!p->row_type_header)
        return member_bad(cx, "trailer.footers", "needs framing.row_type (footers are row types)");
    if (!json_is_array(a) || json_array_size(a) == 0)
        return member_bad(cx, "trailer.footers", "must be a non-empty array");
    p->footers = calloc(json_array_size(a), sizeof *p->footers);
    if (!p->footers) {
        cx->oom = true;
        buf_printf(cx->err, "out of memory");
        return false;
    }
    static const char *const allowed[] = {"row_type", "counts", "optional", NULL};
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *f = json_array_get(a, i);
        char path[64], sub[96];
        snprintf(path, sizeof path, "trailer.footers[%zu]", i);
        if (!json_is_object(f))
            return member_bad(cx, path, "must be an object (row_type, counts)");
        footer_count *fc = &p->footers[p->n_footers++];
        char *counts = NULL;
        snprintf(sub, sizeof sub, "%s.row_type", path);
        if (!member_only(cx, f, path, allowed) ||
            !member_str(cx, f, "row_type", sub, true, false, &fc->row_type))
            return false;
        snprintf(sub, sizeof sub, "%s.counts", path);
        if (!member_str(cx, f, "counts", sub, true, false, &counts))
            return false;
        bool known = true;
        if (strcmp(counts, "section") == 0)
            fc->scope = FOOTER_SECTION;
        else if (strcmp(counts, "report") == 0)
            fc->scope = FOOTER_REPORT;
        else if (strcmp(counts, "file") == 0)
            fc->scope = FOOTER_FILE;
        else
            known = false;
        free(counts);
        if (!known)
            return member_bad(cx, sub, "must be \"section\", \"report\" or \"file\"");
        json_t *opt = json_object_get(f, "optional");
        snprintf(sub, sizeof sub, "%s.optional", path);
        if (opt && !json_is_boolean(opt))
            return member_bad(cx, sub, "must be true or false");
        fc->optional = opt && json_is_true(opt);
        if (fc->scope == FOOTER_SECTION && !p->section_start)
            return member_bad(cx, sub, "\"section\" needs trailer.section_start (the row type "
                                       "that starts a section)");
    }
    return true;
}

/* Needs framing parsed first: count_column goes with framing.end_prefix. */
bool profile_parse_trailer(parse_ctx *cx, json_t *root, profile *p)
{
    json_t *tr = json_object_get(root, "trailer");
    if (!tr || json_is_null(tr))
        return true;
    if (!json_is_object(tr))
        return member_bad(cx, "trailer", "must be an object");
    static const char *const allowed[] = {"count_column", "count_lines", "totals", "footers",
                                          "section_start", "report_start", "file_start", NULL};
    if (!member_only(cx, tr, "trailer", allowed) ||
        !member_str(cx, tr, "count_column", "trailer.count_column", false, false,
                    &p->count_column) ||
        !member_strv(cx, tr, "count_lines", "trailer.count_lines", &p->count_lines,
                     &p->n_count_lines) ||
        !parse_totals(cx, tr, p) || !parse_footers(cx, tr, p))
        return false;
    if (p->count_column && !p->end_prefix)
        return member_bad(cx, "trailer.count_column",
                          "needs framing.end_prefix (the summary header that holds the column)");
    if (p->count_column && p->count_lines)
        return member_bad(cx, "trailer", "has both count_column and count_lines; choose one");
    return true;
}
