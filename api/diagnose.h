/*
 * api/diagnose: a core diagnosis (core/diagnose.h) as JSON and text, the
 * signature table as Markdown (docs/diagnose.md) (api/diagnose_encode.c),
 * and the HTTP handlers of POST /v1/diagnose and GET /v1/measurements
 * (api/diagnose.c; openapi.yaml: diagnose, listMeasurements).
 */
#ifndef API_DIAGNOSE_H
#define API_DIAGNOSE_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "core/diagnose.h"

/*
 * d as openapi.yaml's Diagnosis object (file, when not NULL, is added as
 * "file").  New reference: the caller json_decref()s it; NULL when out of
 * memory.
 */
json_t *diagnose_encode_json(const struct diag_report *d, const char *file);

/* d as text for a terminal: one block per diagnosis, then the numbers. */
void diagnose_encode_text(FILE *out, const struct diag_report *d,
    const char *file, bool colour);

/* The signature table as Markdown: docs/diagnose.md, generated. */
void diagnose_encode_markdown(FILE *out);

/* The table as JSON, one object per row.  New reference, or NULL. */
json_t *diagnose_encode_signatures(void);

/*
 * An object of config keys (a suggestion's "set") as YAML lines to paste
 * into the config; malloc'd (the caller frees), or NULL.
 */
char *diagnose_encode_yaml(const json_t *set);

/* A quoted line as {line, text}; JSON null for line 0.  New reference. */
json_t *diagnose_encode_line(const struct diag_line *l);

/* A GiB figure rounded to 2 decimals.  New reference. */
json_t *diagnose_encode_gib(double v);

#endif /* API_DIAGNOSE_H */
