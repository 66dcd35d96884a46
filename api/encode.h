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

enum text_style {
	TEXT_PLAIN,		/* compiler-style finding lines */
	TEXT_GITHUB		/* findings as GitHub workflow commands */
};

struct text_opts {
	bool colour;		/* ANSI colours: a tty, NO_COLOR unset */
	enum text_style style;
	const char *path;	/* TEXT_GITHUB: the file's path from the
				   workspace root; NULL: file */
};

/*
 * Write the report as text to out (issue 17): each finding of
 * r->findings as `file:line:col: severity: message [rule]` with its hint
 * on the next line (`    fix: ...`), or as a workflow command
 * (`::error file=F,line=L,col=C,title=RULE::message%0Afix: hint`); then
 * the memory line (`file: memory: 46.2 of 79.6 GiB per GPU (weights 15.1,
 * ...), ~48.6k tokens/s`), one line per suggestion, and the summary,
 * which counts every finding (r->count) and says how many r->findings
 * leaves out (a caller shows only some severities).  o NULL: plain text
 * without colour.
 */
void encode_report_text(FILE *out, const struct report *r, const char *file,
    const struct text_opts *o);

/*
 * Write s to out with its control characters as escapes: \n, \r, \t,
 * \x1b (every other C0 byte and DEL as \xNN), the C1 controls and the
 * Unicode line and paragraph separators as \uNNNN.  Text that comes from
 * a config (its keys) or from the file system (a file name) must not
 * start a line of its own in a CI log, where `::error::...` is a workflow
 * command, nor move a terminal's cursor.  Everything else as is.
 */
void encode_text_safe(FILE *out, const char *s);

/*
 * One GitHub Actions workflow command, which GitHub turns into an
 * annotation on the pull request: `::error file=PATH,line=L,col=C,
 * title=TITLE::message%0Afix: hint` (notice/warning/error by sev; hint
 * may be NULL), with GitHub's escaping of properties and data.
 */
void encode_github_command(FILE *out, enum severity sev, const char *path,
    unsigned line, unsigned col, const char *title, const char *message,
    const char *hint);

struct rule_def;

/* A catalog row as the API and `preflight rules --format json` give it:
   id, severity, title, hint, docs.  New reference, or NULL. */
json_t *encode_rule_json(const struct rule_def *r);

#endif /* API_ENCODE_H */
