/*
 * stmt_texts.c - a statement row's money texts on the client (see
 * stmt_texts.h).
 */
#include "recon/stmt_texts.h"

#include <stdlib.h>
#include <string.h>

#include "rules/json_path.h"

/* A path split into its elements, as fact_path_literal splits it for the
 * server (at '.', unless the fact names one member). */
typedef struct split_path {
    char *store;            /* the elements, NUL-separated */
    const char **elem;
    size_t n;
} split_path;

/* One text of a level: its constant, else its path, else its older
 * layout's path. */
typedef struct text_loc {
    const char *constant;
    split_path path, alt;
} text_loc;

typedef struct level {
    const char *kind;       /* NULL: every other kind */
    text_loc t[STMT_NTEXTS];
    bool major[COPY_RECON_NUMBERS];     /* the amount, the fee: in the major unit */
    bool magnitude[COPY_RECON_NUMBERS];
} level;

/* The texts staged as numbers too (copy_recon_lead's num), in order. */
static const int numbered[COPY_RECON_NUMBERS] = {STMT_AMOUNT, STMT_FEE};

struct stmt_texts {
    level *lv;
    size_t n;
};

static bool split(const char *path, bool one_member, split_path *out)
{
    memset(out, 0, sizeof *out);
    if (!path)
        return true;
    size_t len = strlen(path), n = 1;
    for (size_t i = 0; !one_member && i < len; i++)
        n += path[i] == '.';
    out->store = malloc(len + 1);
    out->elem = malloc(n * sizeof *out->elem);
    if (!out->store || !out->elem)
        return false;
    memcpy(out->store, path, len + 1);
    out->elem[0] = out->store;
    out->n = 1;
    for (size_t i = 0; !one_member && i < len; i++)
        if (out->store[i] == '.') {
            out->store[i] = '\0';
            out->elem[out->n++] = out->store + i + 1;
        }
    return true;
}

static bool locate(const fact_loc *l, bool with_constant, text_loc *out)
{
    out->constant = with_constant ? l->constant : NULL;
    return split(l->path, l->one_member, &out->path) &&
           split(l->path_alt, l->one_member, &out->alt);
}

void stmt_texts_free(stmt_texts *p)
{
    for (size_t i = 0; p && i < p->n; i++)
        for (int k = 0; k < STMT_NTEXTS; k++) {
            free(p->lv[i].t[k].path.store);
            free((void *)p->lv[i].t[k].path.elem);
            free(p->lv[i].t[k].alt.store);
            free((void *)p->lv[i].t[k].alt.elem);
        }
    if (p)
        free(p->lv);
    free(p);
}

stmt_texts *stmt_texts_new(const stmt_facts *sf)
{
    stmt_texts *p = calloc(1, sizeof *p);
    if (!p || !(p->lv = calloc(sf->n ? sf->n : 1, sizeof *p->lv))) {
        free(p);
        return NULL;
    }
    bool ok = true;
    for (size_t i = 0; i < sf->n; i++, p->n++) {
        const stmt_facts_entry *e = &sf->e[i];
        level *l = &p->lv[i];
        l->kind = e->kind;
        /* the record id has no constant: SQL_RECON_SFACTS stages none */
        l->major[0] = !e->f[FACT_AMOUNT].minor;
        l->magnitude[0] = e->f[FACT_AMOUNT].magnitude;
        l->major[1] = !e->f[FACT_FEE].minor;
        l->magnitude[1] = e->f[FACT_FEE].magnitude;
        ok = ok && locate(&e->f[FACT_AMOUNT], true, &l->t[STMT_AMOUNT]) &&
             locate(&e->f[FACT_CURRENCY], true, &l->t[STMT_CURRENCY]) &&
             locate(&e->f[FACT_FEE], true, &l->t[STMT_FEE]) &&
             locate(&e->record, false, &l->t[STMT_RECORD]);
    }
    if (!ok) {
        stmt_texts_free(p);
        return NULL;
    }
    return p;
}

/* The level of a row of kind [kind, kind + n): the server's choice
 * (RECON_KIND_FACTS: the kind's own level, else the one for every other
 * kind, the first of each). */
static int level_of(const stmt_texts *p, const char *kind, size_t n)
{
    int other = -1;
    for (size_t i = 0; i < p->n; i++) {
        const char *k = p->lv[i].kind;
        if (!k && other < 0)
            other = (int)i;
        else if (k && strlen(k) == n && memcmp(k, kind, n) == 0)
            return (int)i;
    }
    return other;
}

/* One path's value: false when only the server can tell it. */
static bool at_path(const split_path *sp, const char *payload, size_t len, const char **text,
                    size_t *text_len)
{
    *text = NULL;
    *text_len = 0;
    if (!sp->n)
        return true;
    switch (json_path_text(payload, len, sp->elem, sp->n, text, text_len)) {
    case JSON_PATH_TEXT:
        return true;
    case JSON_PATH_NULL:
        *text = NULL;
        return true;
    default:
        return false;
    }
}

void stmt_texts_of_row(const stmt_texts *p, const char *callback_type, size_t ct_len,
                       const char *payload, size_t payload_len, copy_recon_lead *out)
{
    out->server = false;
    memset(out->text, 0, sizeof out->text);
    memset(out->len, 0, sizeof out->len);
    memset(out->num, 0, sizeof out->num);
    const char *colon = memchr(callback_type, ':', ct_len);
    out->level = level_of(p, callback_type, colon ? (size_t)(colon - callback_type) : ct_len);
    if (out->level < 0)
        return;
    const level *l = &p->lv[out->level];
    for (int k = 0; k < STMT_NTEXTS; k++) {
        const text_loc *t = &l->t[k];
        if (t->constant) {
            out->text[k] = t->constant;
            out->len[k] = strlen(t->constant);
            continue;
        }
        bool told = at_path(&t->path, payload, payload_len, &out->text[k], &out->len[k]);
        if (told && !out->text[k])
            told = at_path(&t->alt, payload, payload_len, &out->text[k], &out->len[k]);
        if (!told) {
            memset(out->text, 0, sizeof out->text);
            memset(out->len, 0, sizeof out->len);
            out->server = true;
            return;
        }
    }
    for (int k = 0; k < COPY_RECON_NUMBERS; k++) {
        const char *t = out->text[numbered[k]];
        size_t n = out->len[numbered[k]];
        if (l->major[k] && t && copy_plain_decimal(t, n)) {
            out->num[k] = t;
            out->num_len[k] = n;
            out->magnitude[k] = l->magnitude[k];
        }
    }
}
