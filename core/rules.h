/*
 * core/rules: the rule catalog.  One row per rule: a stable id, its
 * severity, a title, a fix hint and a docs anchor (c-style.md section 6).
 * The table is the documentation: GET /v1/rules and `preflight rules`
 * serve it.  Ids are sorted and never reused.
 */
#ifndef CORE_RULES_H
#define CORE_RULES_H

#include <stddef.h>

#include "report.h"

struct rule_ctx;
struct doc;
struct arena;

/* A rule: reads the config through rc, reports; 0 or ERR_NOMEM. */
typedef int rule_fn(struct rule_ctx *rc);

struct rule_def {
	const char *id;		/* "schema.duplicate_key" */
	enum severity severity;	/* default severity */
	const char *title;	/* one line, plain words */
	const char *hint;	/* how to fix it */
	const char *docs;	/* anchor in docs/rules.md, computed from
				   the id: "docs/rules.md#" + id without dots */
	rule_fn *fn;		/* NULL: reported by core/doc, core/schema,
				   core/suppress, core/policy or
				   core/report */
};

/*
 * The catalog, sorted by id; *n gets its length.  Built once per process
 * from the topic files' rows (core/rules_int.h); NULL with *n = 0 when
 * that first build finds no memory.  Borrowed.
 */
const struct rule_def *rules_all(size_t *n);

/* A rules.md entry preflight cannot check, and why. */
struct rule_unchecked {
	const char *id;
	const char *why;
};

/* The rules.md entries that are not in the catalog, sorted; *n gets the
   count.  Borrowed. */
const struct rule_unchecked *rules_unchecked(size_t *n);

/* The row for id, or NULL (also when the catalog has no memory).
   Borrowed. */
const struct rule_def *rules_find(const char *id);

struct plan;

struct err;

/* Run every rule function over d for ctx into r; 0, or ERR_NOMEM (the
   request arena is spent) with e naming the rule that was running. */
int rules_run(struct report *r, const struct doc *d,
    const struct context *ctx, const struct plan *plan, struct arena *a,
    struct err *e);

#endif /* CORE_RULES_H */
