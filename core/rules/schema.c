/*
 * core/rules/schema: the rows of what core/doc and core/config report
 * while they read the file: duplicate keys, unknown keys, plugin keys
 * without their plugin, values of the wrong type, a missing dataset.
 * Pure: a rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

const struct rule_row rules_schema[] = {
	{ "schema.datasets_required", SEV_ERROR,
	  "neither datasets nor pretraining_dataset is set",
	  "add a datasets: list (or pretraining_dataset:)",
	  NULL },
	{ "schema.duplicate_key", SEV_WARNING,
	  "a key is written twice in one mapping",
	  "remove one of the two; Axolotl uses the last value",
	  NULL },
	{ "schema.plugin_key_without_plugin", SEV_WARNING,
	  "a plugin's key is set but the plugin is not listed",
	  "add the plugin's class to plugins:, or remove the key",
	  NULL },
	{ "schema.plugin_not_loadable", SEV_ERROR,
	  "a plugins entry Axolotl's plugin loader fails on",
	  "list the plugin as axolotl.integrations.<module>.<PluginClass>",
	  NULL },
	{ "schema.required", SEV_ERROR,
	  "a key Axolotl requires is not set",
	  "set it (base_model and learning_rate have no default)",
	  NULL },
	{ "schema.type", SEV_ERROR,
	  "a value has a type Axolotl's schema rejects",
	  "write the value in the type the key takes",
	  NULL },
	{ "schema.unknown_key_dropped", SEV_WARNING,
	  "a key Axolotl does not know, so it is dropped",
	  "fix the spelling, or remove the key",
	  NULL },
};
const size_t rules_schema_len =
    sizeof(rules_schema) / sizeof(rules_schema[0]);
