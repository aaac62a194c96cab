/*
 * json_kind.h - the kinds of a JSON value, as the JSON scanner
 * (rules/json_scan.h) tells them and a record's fields (core/record.h)
 * carry them.
 */
#ifndef IDEMLOAD_JSON_KIND_H
#define IDEMLOAD_JSON_KIND_H

typedef enum json_kind {
    JSON_KIND_NULL,
    JSON_KIND_BOOL,
    JSON_KIND_NUMBER,
    JSON_KIND_STRING,
    JSON_KIND_ARRAY,
    JSON_KIND_OBJECT
} json_kind;

#endif
