/*
 * core/rules: the rule table.  Rules from the document layer live here
 * today; the rule core (issue #3) adds the Axolotl catalog.  Pure data.
 */
#include "rules.h"

#include <string.h>

static const struct rule_def rules[] = {
	{ "schema.duplicate_key", SEV_WARNING,
	  "a key is written twice in one mapping",
	  "remove one of the two; Axolotl uses the last value",
	  "docs/rules.md#schemaduplicate_key" },
};

const struct rule_def *
rules_all(size_t *n)
{
	*n = sizeof(rules) / sizeof(rules[0]);
	return rules;
}

const struct rule_def *
rules_find(const char *id)
{
	size_t lo = 0, hi = sizeof(rules) / sizeof(rules[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(id, rules[mid].id);

		if (c == 0)
			return &rules[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
