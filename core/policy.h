/*
 * core/policy: an organization's policy over the rule catalog.
 *
 *   rules:                          # any rule's severity, or off
 *     schema.unknown_key_dropped: error
 *     deepspeed.single_gpu: off
 *   max_gpus: 64                    # policy.max_gpus
 *   allowed_gpus: [h100-sxm, h200]  # policy.allowed_gpus
 *   require_bf16: true              # policy.require_bf16
 *   forbid_inline_suppression: true # policy.inline_suppression
 *
 * Parsed with core/doc from bytes the caller read (CLI --policy, the
 * server's --policy, reloaded on SIGHUP).  No I/O.
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
	const char *id;		/* a rule id from the catalog */
	int severity;		/* enum severity, or POLICY_OFF */
};

struct policy {
	struct policy_rule *rules;	/* severity overrides */
	size_t nrules;
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
 * Apply p to a checked report (before report_finish): change or drop
 * findings by rule, add policy.* findings.  0 or ERR_NOMEM.
 */
int policy_apply(struct report *r, const struct policy *p, struct arena *a);

#endif /* CORE_POLICY_H */
