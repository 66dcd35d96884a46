/*
 * core/types_int.h: what core/types_explain.c uses of core/types_check.c
 * beyond types.h.  Internal to core/types*.c.
 */
#ifndef CORE_TYPES_INT_H
#define CORE_TYPES_INT_H

#include <stdbool.h>

#include "types.h"

struct doc_node;
struct doc_pair;

/* The pair of map for a field, under any of its names; NULL when the
   mapping has none of them. */
const struct doc_pair *ty_field_pair(const struct doc_node *map,
    const struct ty_field *f);

/* Is key one of the names of a field of m? */
bool ty_model_knows(const struct ty_model *m, const struct doc_node *key);

/* ty_accepts() without t's bounds: the kind and shape only. */
bool ty_kind_accepts(const struct ty *t, const struct doc_node *n);

#endif /* CORE_TYPES_INT_H */
