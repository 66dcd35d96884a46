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
	{ "schema.plugin_key_without_plugin", SEV_WARNING,
	  "a plugin's key is set but the plugin is not listed",
	  "add the plugin's class to plugins:, or remove the key",
	  "docs/rules.md#schemaplugin_key_without_plugin" },
	{ "schema.type", SEV_ERROR,
	  "a value has a type Axolotl's schema rejects",
	  "write the value in the type the key takes",
	  "docs/rules.md#schematype" },
	{ "schema.unknown_key_dropped", SEV_WARNING,
	  "a key Axolotl does not know, so it is dropped",
	  "fix the spelling, or remove the key",
	  "docs/rules.md#schemaunknown_key_dropped" },
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
