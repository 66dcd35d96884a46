/*
 * core/rules: the rule table, sorted by id.  A row with a function is run
 * by rules_run(); a row without one is reported by core/doc or
 * core/config, which see the document as they build it.  Pure.
 */
#include "rules.h"

#include <string.h>

#include "checks.h"
#include "doc.h"
#include "rules_int.h"

static const struct rule_def rules[] = {
	{ "attn.legacy_flag_with_attn_implementation", SEV_ERROR,
	  "a legacy attention flag next to attn_implementation",
	  "remove the legacy flag; attn_implementation decides",
	  "docs/rules.md#attnlegacy_flag_with_attn_implementation", check_attn_legacy_with_impl },
	{ "attn.s2_removed", SEV_ERROR,
	  "a removed attention feature (s2_attention, flash_attn_rms_norm)",
	  "remove it and pick a supported attention backend",
	  "docs/rules.md#attns2_removed", NULL },
	{ "batch.gas_and_batch_size_both_set", SEV_ERROR,
	  "gradient_accumulation_steps and batch_size are both set",
	  "keep only one of them",
	  "docs/rules.md#batchgas_and_batch_size_both_set", check_batch_gas_and_bs },
	{ "batch.two_of_three_required", SEV_ERROR,
	  "fewer than two of micro_batch_size, gradient_accumulation_steps, batch_size",
	  "set micro_batch_size and gradient_accumulation_steps",
	  "docs/rules.md#batchtwo_of_three_required", check_batch_two_of_three },
	{ "cp.packing_requires_mbs_one", SEV_ERROR,
	  "context parallelism with packing needs micro_batch_size 1",
	  "set micro_batch_size: 1 and raise gradient_accumulation_steps",
	  "docs/rules.md#cppacking_requires_mbs_one", check_cp_packing_mbs },
	{ "cp.requires_flash_attention", SEV_ERROR,
	  "context parallelism without flash attention",
	  "set attn_implementation: flash_attention_2",
	  "docs/rules.md#cprequires_flash_attention", check_cp_requires_flash },
	{ "deprecated.dataset_processes", SEV_WARNING,
	  "dataset_processes is deprecated", "rename it to dataset_num_proc",
	  "docs/rules.md#deprecateddataset_processes", NULL },
	{ "deprecated.evaluation_strategy", SEV_WARNING,
	  "evaluation_strategy is deprecated", "rename it to eval_strategy",
	  "docs/rules.md#deprecatedevaluation_strategy", NULL },
	{ "deprecated.flash_attn_d512_alias", SEV_INFO,
	  "flash_attn_d512 is read as large_head_attention: auto",
	  "set large_head_attention: auto",
	  "docs/rules.md#deprecatedflash_attn_d512_alias", NULL },
	{ "deprecated.gc_steps", SEV_WARNING,
	  "gc_steps is deprecated",
	  "set torch_empty_cache_steps and gc_collect_steps",
	  "docs/rules.md#deprecatedgc_steps", NULL },
	{ "deprecated.gemma4_nonexpert_flags", SEV_WARNING,
	  "gemma4_*_nonexpert flags are deprecated",
	  "set nonexpert_quantization: fp8_blockwise or nf4",
	  "docs/rules.md#deprecatedgemma4_nonexpert_flags", NULL },
	{ "deprecated.rope_scaling_toplevel", SEV_ERROR,
	  "a top-level rope_scaling is refused",
	  "move it under model_config: (or overrides_of_model_config:)",
	  "docs/rules.md#deprecatedrope_scaling_toplevel", NULL },
	{ "deprecated.unsloth_flags_removed", SEV_ERROR,
	  "the unsloth_* flags were removed",
	  "use lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel",
	  "docs/rules.md#deprecatedunsloth_flags_removed", NULL },
	{ "fsdp.deepspeed_exclusive_legacy", SEV_ERROR,
	  "deepspeed and the legacy fsdp list together",
	  "keep one sharding strategy",
	  "docs/rules.md#fsdpdeepspeed_exclusive_legacy", check_fsdp_deepspeed_legacy },
	{ "gc.activation_offloading_requires_gc", SEV_ERROR,
	  "activation offloading without gradient checkpointing",
	  "set gradient_checkpointing: true",
	  "docs/rules.md#gcactivation_offloading_requires_gc", check_gc_offload_requires_gc },
	{ "lora_kernels.lora_8bit", SEV_ERROR,
	  "LoRA kernels with an 8-bit LoRA",
	  "remove the lora_*_kernel flags, or use 4-bit QLoRA",
	  "docs/rules.md#lora_kernelslora_8bit", check_lora_kernels_8bit },
	{ "optim.fsdp1_offload_8bit", SEV_ERROR,
	  "an 8-bit optimizer with FSDP1 param offload",
	  "use fsdp_version: 2 with adamw_torch_8bit, or offload_params: false",
	  "docs/rules.md#optimfsdp1_offload_8bit", check_optim_fsdp1_offload_8bit },
	{ "optim.fsdp2_bnb_8bit", SEV_ERROR,
	  "bitsandbytes 8-bit AdamW under FSDP2",
	  "set optimizer: adamw_torch_8bit",
	  "docs/rules.md#optimfsdp2_bnb_8bit", NULL },
	{ "optim.muon_sharding", SEV_ERROR,
	  "Muon with DeepSpeed or FSDP1",
	  "use DDP or FSDP2 (fsdp_version: 2)",
	  "docs/rules.md#optimmuon_sharding", check_optim_muon_sharding },
	{ "packing.kto_incompatible", SEV_ERROR,
	  "KTO with sample packing, or without remove_unused_columns: false",
	  "drop the packing keys and set remove_unused_columns: false",
	  "docs/rules.md#packingkto_incompatible", check_packing_kto },
	{ "packing.max_packed_sequence_len_removed", SEV_ERROR,
	  "max_packed_sequence_len was removed",
	  "set sample_packing: true and sequence_len",
	  "docs/rules.md#packingmax_packed_sequence_len_removed", NULL },
	{ "packing.rl_incompatible", SEV_ERROR,
	  "sample packing with an RL / preference trainer",
	  "set sample_packing: false",
	  "docs/rules.md#packingrl_incompatible", check_packing_rl },
	{ "quant.kbit_requires_adapter", SEV_ERROR,
	  "a quantized model without an adapter",
	  "set adapter: qlora (4-bit) or lora (8-bit)",
	  "docs/rules.md#quantkbit_requires_adapter", check_quant_kbit_adapter },
	{ "quant.qlora_requires_4bit", SEV_ERROR,
	  "QLoRA with the wrong quantization",
	  "set load_in_4bit: true and unset load_in_8bit and gptq",
	  "docs/rules.md#quantqlora_requires_4bit", check_quant_qlora_4bit },
	{ "schema.datasets_required", SEV_ERROR,
	  "neither datasets nor pretraining_dataset is set",
	  "add a datasets: list (or pretraining_dataset:)",
	  "docs/rules.md#schemadatasets_required", NULL },
	{ "schema.duplicate_key", SEV_WARNING,
	  "a key is written twice in one mapping",
	  "remove one of the two; Axolotl uses the last value",
	  "docs/rules.md#schemaduplicate_key", NULL },
	{ "schema.plugin_key_without_plugin", SEV_WARNING,
	  "a plugin's key is set but the plugin is not listed",
	  "add the plugin's class to plugins:, or remove the key",
	  "docs/rules.md#schemaplugin_key_without_plugin", NULL },
	{ "schema.type", SEV_ERROR,
	  "a value has a type Axolotl's schema rejects",
	  "write the value in the type the key takes",
	  "docs/rules.md#schematype", NULL },
	{ "schema.unknown_key_dropped", SEV_WARNING,
	  "a key Axolotl does not know, so it is dropped",
	  "fix the spelling, or remove the key",
	  "docs/rules.md#schemaunknown_key_dropped", NULL },
};

const struct rule_def *
rules_all(size_t *n)
{
	*n = sizeof(rules) / sizeof(rules[0]);
	return rules;
}

int
rules_run(struct report *r, const struct doc *d, const struct context *ctx,
    struct arena *a)
{
	struct rule_ctx rc;
	size_t i;
	int rv;

	rc.root = d->root;
	rc.ctx = ctx;
	rc.r = r;
	rc.a = a;
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].fn == NULL)
			continue;
		rc.rule = &rules[i];
		rv = rules[i].fn(&rc);
		if (rv != 0)
			return rv;
	}
	return 0;
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
