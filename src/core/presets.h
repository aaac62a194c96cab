/*
 * presets.h - the values --set gives the row's own columns: config holds
 * them, the readers learn which columns need not be in a file, validation
 * fills them in (rules/validate.h).
 */
#ifndef IDEMLOAD_PRESETS_H
#define IDEMLOAD_PRESETS_H

#include "core/record.h"

/* Values --set supplies for columns a file lacks (NULL: none). */
typedef struct presets {
    const char *value[COL_COUNT];
} presets;

#endif
