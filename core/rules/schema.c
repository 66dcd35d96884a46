/*
 * core/rules/schema: the rows of what core/doc and core/schema_check report
 * while they read the file: duplicate keys, unknown keys, plugin keys
 * without their plugin, values of the wrong type, a missing dataset.
 * Pure: a rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/*
 * schema.compared_as_number: pydantic turns "2" into 2 for an int field,
 * but some before-validators compare the value as written with a number
 * first, and Python refuses str > int and None > int.
 */

/* A value as written that a comparison with a number fails on. */
static bool
not_comparable(const struct doc_pair *p, bool null_too)
{
	return p != NULL && (p->value->kind == DOC_STR ||
	    (null_too && p->value->kind == DOC_NULL));
}

static int
number_report(struct rule_ctx *rc, const struct doc_pair *p, const char *who,
    int with)
{
	if (p->value->kind == DOC_NULL)
		return rule_report(rc, p, "%s is written as null; %s compares "
		    "it with %d and fails: write a number or remove the line",
		    p->key->text, who, with);
	return rule_report(rc, p, "%s is the string '%.20s'; %s compares it "
	    "with %d before converting it and fails: write a number",
	    p->key->text, p->value->text, who, with);
}

static int
check_schema_compared_number(struct rule_ctx *rc)
{
	const struct doc_pair *tp = raw_pair(rc, "tensor_parallel_size");
	const struct doc_pair *gc = raw_pair(rc, "gc_steps");
	const struct doc_pair *cp = raw_pair(rc, "context_parallel_size");
	const struct doc_pair *rl = raw_pair(rc, "rl");
	const struct doc_pair *rms = raw_pair(rc, "liger_rms_norm");

	/* LigerArgs.check_liger_rms_norm_tensor_parallel (with the Liger
	   plugin): data.get("tensor_parallel_size", 1) > 1. */
	if (plugin_on(rc, "liger") && rms != NULL && doc_truthy(rms->value) &&
	    not_comparable(tp, true))
		return number_report(rc, tp, "the Liger plugin's check", 1);
	/* check_tensor_parallel_size_update_ds_json: any value not None. */
	if (not_comparable(tp, false))
		return number_report(rc, tp, "Axolotl's validator", 1);
	/* migrate_gc_steps, unless the new keys are set. */
	if (not_comparable(gc, false) &&
	    !cfg_set(rc, "torch_empty_cache_steps") &&
	    !cfg_set(rc, "gc_collect_steps"))
		return number_report(rc, gc, "Axolotl's validator", 0);
	/* check_grpo_liger_sequence_parallel:
	   data.get("context_parallel_size", 1) > 1. */
	if (not_comparable(cp, true) && rl != NULL &&
	    rl->value->kind == DOC_STR && strcmp(rl->value->text, "grpo") == 0 &&
	    cfg_sub_on(rc, "trl", "use_liger_loss"))
		return number_report(rc, cp, "Axolotl's GRPO check", 1);
	return 0;
}

const struct rule_row rules_schema[] = {
	{ "schema.compared_as_number", SEV_ERROR,
	  "a string or null where a validator compares the value with a "
	  "number",
	  "write the number without quotes (or remove the line)",
	  check_schema_compared_number },
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
