/*
 * core/rules: the rule table.  Rules from the document layer live here
 * today; the rule core (issue #3) adds the Axolotl catalog.  Pure data.
 */
#include "rules.h"

#include <string.h>

static const struct rule_def rules[] = {
	{ "attn.s2_removed", SEV_ERROR,
	  "a removed attention feature (s2_attention, flash_attn_rms_norm)",
	  "remove it and pick a supported attention backend",
	  "docs/rules.md#attns2_removed" },
	{ "deprecated.dataset_processes", SEV_WARNING,
	  "dataset_processes is deprecated", "rename it to dataset_num_proc",
	  "docs/rules.md#deprecateddataset_processes" },
	{ "deprecated.evaluation_strategy", SEV_WARNING,
	  "evaluation_strategy is deprecated", "rename it to eval_strategy",
	  "docs/rules.md#deprecatedevaluation_strategy" },
	{ "deprecated.flash_attn_d512_alias", SEV_INFO,
	  "flash_attn_d512 is read as large_head_attention: auto",
	  "set large_head_attention: auto",
	  "docs/rules.md#deprecatedflash_attn_d512_alias" },
	{ "deprecated.gc_steps", SEV_WARNING,
	  "gc_steps is deprecated",
	  "set torch_empty_cache_steps and gc_collect_steps",
	  "docs/rules.md#deprecatedgc_steps" },
	{ "deprecated.gemma4_nonexpert_flags", SEV_WARNING,
	  "gemma4_*_nonexpert flags are deprecated",
	  "set nonexpert_quantization: fp8_blockwise or nf4",
	  "docs/rules.md#deprecatedgemma4_nonexpert_flags" },
	{ "deprecated.rope_scaling_toplevel", SEV_ERROR,
	  "a top-level rope_scaling is refused",
	  "move it under model_config: (or overrides_of_model_config:)",
	  "docs/rules.md#deprecatedrope_scaling_toplevel" },
	{ "deprecated.unsloth_flags_removed", SEV_ERROR,
	  "the unsloth_* flags were removed",
	  "use lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel",
	  "docs/rules.md#deprecatedunsloth_flags_removed" },
	{ "optim.fsdp2_bnb_8bit", SEV_ERROR,
	  "bitsandbytes 8-bit AdamW under FSDP2",
	  "set optimizer: adamw_torch_8bit",
	  "docs/rules.md#optimfsdp2_bnb_8bit" },
	{ "packing.max_packed_sequence_len_removed", SEV_ERROR,
	  "max_packed_sequence_len was removed",
	  "set sample_packing: true and sequence_len",
	  "docs/rules.md#packingmax_packed_sequence_len_removed" },
	{ "schema.datasets_required", SEV_ERROR,
	  "neither datasets nor pretraining_dataset is set",
	  "add a datasets: list (or pretraining_dataset:)",
	  "docs/rules.md#schemadatasets_required" },
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
