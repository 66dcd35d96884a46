/*
 * api/encode: a core report -> the formats other tools parse.
 *
 * JSON follows DESIGN.md's report section and openapi.yaml's Report schema
 * (binding).  Text is compiler-style, one line per finding.
 */
#ifndef API_ENCODE_H
#define API_ENCODE_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "api/jsonw.h"
#include "core/report.h"

/*
 * The report as a JSON object; file, when not NULL, is added as "file".
 * New reference: the caller json_decref()s it.  NULL when out of memory.
 */
json_t *encode_report_json(const struct report *r, const char *file);

/*
 * The same object as compact JSON text (malloc'd; *len, when not NULL,
 * gets its length), or NULL when out of memory.  The hot paths use this.
 */
char *encode_report_json_text(const struct report *r, const char *file,
    size_t *len);

/*
 * The report's members written to w as an object that is still open (no
 * closing brace), so the daemon can append its own members ("id", ...).
 */
void encode_report_members(struct jsonw *w, const struct report *r,
    const char *file);

/* The "context" object as compact JSON text (malloc'd), or NULL. */
char *encode_context_json_text(const struct context *c);

/*
 * Write the report as text to out: one `file:line:col: severity: message
 * [rule]` line per finding, then a summary line.  colour adds ANSI colours.
 */
void encode_report_text(FILE *out, const struct report *r, const char *file,
    bool colour);

struct rule_def;

/* A catalog row as the API and `preflight rules --format json` give it:
   id, severity, title, hint, docs.  New reference, or NULL. */
json_t *encode_rule_json(const struct rule_def *r);

#endif /* API_ENCODE_H */
