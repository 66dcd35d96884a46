/*
 * core/policy: an organization's policy over the rule catalog.
 *
 *   rules:                          # any rule's severity, or off
 *     schema.unknown_key_dropped: error
 *     deepspeed.single_gpu: off
 *     "fsdp.*": warning               # every id starting with "fsdp."
 *     "*": off                        # every rule not named otherwise
 *   max_gpus: 64                    # policy.max_gpus
 *   allowed_gpus: [h100-sxm, h200]  # policy.allowed_gpus
 *   require_bf16: true              # policy.require_bf16
 *   forbid_inline_suppression: true # policy.inline_suppression
 *
 * Parsed with core/doc from bytes the caller read (CLI --policy or the
 * .preflight.yaml it finds, the server's --policy, reloaded on SIGHUP).
 * A rule's severity comes from its exact id when the policy names it,
 * else from the longest pattern ("prefix*") that matches it, "*" last.
 * The CLI's --ignore patterns turn rules off whatever the file says.
 * No I/O.
 */
#ifndef CORE_POLICY_H
#define CORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct arena;
struct report;

#define POLICY_OFF (-1)		/* a rule turned off */

struct policy_rule {
	const char *id;		/* a catalog id, or a pattern's prefix:
				   "fsdp." for "fsdp.*", "" for "*" */
	bool prefix;		/* id matches every id starting with it */
	int severity;		/* enum severity, or POLICY_OFF */
};

struct policy {
	struct policy_rule *rules;	/* severity overrides */
	size_t nrules;
	struct policy_rule *ignore;	/* --ignore: off, before rules */
	size_t nignore;
	long max_gpus;		/* 0: no limit */
	const char **allowed_gpus;	/* catalog ids; NULL: any */
	size_t nallowed;
	bool require_bf16;
	bool forbid_inline_suppression;
};

/*
 * Parse a policy file.  Errors (ERR_PARSE/ERR_SCHEMA with the line): not
 * YAML, unknown key, unknown rule id, a severity other than
 * off|info|warning|error, unknown GPU id.  *out lives in a.
 */
int policy_parse(struct policy **out, const char *buf, size_t len,
    struct arena *a, struct err *e);

/*
 * A rule pattern: an exact catalog id, or text ending in '*' that matches
 * every id starting with the text before it ("fsdp.*", "*").  *out gets
 * the pattern with severity POLICY_OFF; its id points into pattern's
 * copy in a.  ERR_SCHEMA: not a catalog id, a '*' other than at the end,
 * or a prefix no rule id starts with (a typo would silence nothing).
 */
int policy_pattern(struct policy_rule *out, const char *pattern,
    struct arena *a, struct err *e);

/* Add an --ignore pattern (policy_pattern's syntax) to p: matching rules
   are off.  ERR_SCHEMA as policy_pattern, or ERR_NOMEM. */
int policy_add_ignore(struct policy *p, const char *pattern,
    struct arena *a, struct err *e);

/* The severity p gives rule id whose default is sev: POLICY_OFF, or an
   enum severity. */
int policy_severity(const struct policy *p, const char *id, int sev);

/*
 * Apply p to a checked report (before report_finish): add policy.*
 * findings, then change or drop every finding by its rule (policy.*
 * included).  0 or ERR_NOMEM (set in e).
 */
int policy_apply(struct report *r, const struct policy *p, struct arena *a,
    struct err *e);

#endif /* CORE_POLICY_H */
