/*
 * core/rules/schema: the rows of what core/doc and core/config report
 * while they read the file: duplicate keys, unknown keys, plugin keys
 * without their plugin, values of the wrong type, a missing dataset.
 * Pure: a rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/*
 * schema.string_compared_as_number: pydantic turns "2" into 2 for an int
 * field, but some before-validators compare the value as written with a
 * number first, and Python refuses str > int.
 */
static int
check_schema_string_number(struct rule_ctx *rc)
{
	const struct doc_pair *tp = raw_pair(rc, "tensor_parallel_size");
	const struct doc_pair *gc = raw_pair(rc, "gc_steps");
	const struct doc_pair *cp = raw_pair(rc, "context_parallel_size");

	/* check_tensor_parallel_size_update_ds_json: any value not None. */
	if (tp != NULL && tp->value->kind == DOC_STR)
		return rule_report(rc, tp, "tensor_parallel_size is the string "
		    "'%.20s'; Axolotl's validator compares it with 1 before "
		    "converting it and fails: write a number", tp->value->text);
	/* migrate_gc_steps, unless the new keys are set. */
	if (gc != NULL && gc->value->kind == DOC_STR &&
	    !cfg_set(rc, "torch_empty_cache_steps") &&
	    !cfg_set(rc, "gc_collect_steps"))
		return rule_report(rc, gc, "gc_steps is the string '%.20s'; "
		    "Axolotl's validator compares it with 0 and fails: write a "
		    "number", gc->value->text);
	/* check_grpo_liger_sequence_parallel. */
	if (cp != NULL && cp->value->kind == DOC_STR && cfg_is(rc, "rl", "grpo") &&
	    cfg_sub_on(rc, "trl", "use_liger_loss"))
		return rule_report(rc, cp, "context_parallel_size is the string "
		    "'%.20s'; Axolotl's GRPO check compares it with 1 and fails: "
		    "write a number", cp->value->text);
	return 0;
}

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
	{ "schema.string_compared_as_number", SEV_ERROR,
	  "a number written as a string where a validator compares it",
	  "write the number without quotes",
	  check_schema_string_number },
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
