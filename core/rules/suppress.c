/*
 * core/rules/suppress: the row of inline suppressions without a reason,
 * which core/suppress reports.  Pure: a rule reads the config through its
 * struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

const struct rule_row rules_suppress[] = {
	{ "suppress.no_reason", SEV_WARNING,
	  "an inline suppression without a reason",
	  "say why after the ]: # preflight: ignore[id] reason",
	  NULL },
};
const size_t rules_suppress_len =
    sizeof(rules_suppress) / sizeof(rules_suppress[0]);
