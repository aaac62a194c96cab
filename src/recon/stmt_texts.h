/*
 * stmt_texts.h - a statement row's money texts, worked out on the client
 * while the row is read: the amount, currency and fee texts and the
 * record id the row's level of the statement's facts (stmt_facts) names,
 * each exactly what the server's `payload #>> path` would give
 * (rules/json_path.h), so that the row is staged with its texts and its
 * payload as plain text, not parsed as jsonb and read by path on the
 * server (at 1M rows, 1.0 s of the COPY and 1.0 s of the keys' facts).
 * A row whose payload only the server can read so (an escaped string, a
 * number with an exponent, an object where the path ends) is marked, and
 * the server reads all of that row's texts from its payload itself, as it
 * did for every row.
 *
 * Ownership: stmt_texts_new() returns a plan freed by stmt_texts_free();
 * the texts a row gets point into the row or into the statement's facts.
 */
#ifndef IDEMLOAD_RECON_STMT_TEXTS_H
#define IDEMLOAD_RECON_STMT_TEXTS_H

#include <stdbool.h>
#include <stddef.h>

#include "load/copy_encode.h"
#include "recon/facts.h"

/* The texts of one row, in the order idemload_recon_raw stages them (a
 * copy_recon_lead's text and len). */
enum { STMT_AMOUNT, STMT_CURRENCY, STMT_FEE, STMT_RECORD, STMT_NTEXTS };
_Static_assert(STMT_NTEXTS == COPY_RECON_TEXTS, "the texts a row is staged with");

typedef struct stmt_texts stmt_texts;

/* The paths of sf's levels, split as the server splits them
 * (fact_path_literal).  NULL when out of memory. */
stmt_texts *stmt_texts_new(const stmt_facts *sf);
void stmt_texts_free(stmt_texts *p);

/* Row (callback_type, payload)'s level and texts into the lead it is
 * staged with (out's level, server, text and len; the rest is left as
 * it is): its level is the one of its kind (callback_type before ':'),
 * else the one for every other kind (-1: none); each text the level's
 * constant, else the value at its path, else at the path an older layout
 * used, as the server's coalesce reads them; server, with no text, when
 * only the server can read one of them so.  The amount and fee are staged
 * as numbers too (out's num) where the text is a plain decimal in the
 * major unit: what idemload_money reads as it is (recon_stage_sql.c), so
 * the server parses no money text for the common row (0.9 s of the keys'
 * facts at 1M rows); any other (dressed, in minor units) it reads. */
void stmt_texts_of_row(const stmt_texts *p, const char *callback_type, size_t ct_len,
                       const char *payload, size_t payload_len, copy_recon_lead *out);

#endif
