/*
 * core/rules/policy: the rows of team policy findings, which core/policy
 * reports.  Pure: a rule reads the config through its struct rule_ctx and
 * reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

const struct rule_row rules_policy[] = {
	{ "policy.allowed_gpus", SEV_ERROR,
	  "a GPU the policy does not allow",
	  "use one of the policy's allowed_gpus",
	  NULL },
	{ "policy.inline_suppression", SEV_ERROR,
	  "an inline suppression where the policy forbids them",
	  "remove the marker",
	  NULL },
	{ "policy.max_gpus", SEV_ERROR,
	  "more GPUs than the policy allows",
	  "ask for fewer GPUs",
	  NULL },
	{ "policy.require_bf16", SEV_ERROR,
	  "a run that is not bf16 where the policy requires it",
	  "set bf16: true on a GPU with bf16",
	  NULL },
};
const size_t rules_policy_len =
    sizeof(rules_policy) / sizeof(rules_policy[0]);
