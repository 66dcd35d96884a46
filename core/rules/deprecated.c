/*
 * core/rules/deprecated: the rows of removed and renamed keys, which
 * core/config reports from its table of them.  Pure: a rule reads the
 * config through its struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

const struct rule_row rules_deprecated[] = {
	{ "deprecated.dataset_processes", SEV_WARNING,
	  "dataset_processes is deprecated",
	  "rename it to dataset_num_proc",
	  NULL },
	{ "deprecated.evaluation_strategy", SEV_WARNING,
	  "evaluation_strategy is deprecated",
	  "rename it to eval_strategy",
	  NULL },
	{ "deprecated.flash_attn_d512_alias", SEV_INFO,
	  "flash_attn_d512 is read as large_head_attention: auto",
	  "set large_head_attention: auto",
	  NULL },
	{ "deprecated.gc_steps", SEV_WARNING,
	  "gc_steps is deprecated",
	  "set torch_empty_cache_steps and gc_collect_steps",
	  NULL },
	{ "deprecated.gemma4_nonexpert_flags", SEV_WARNING,
	  "gemma4_*_nonexpert flags are deprecated",
	  "set nonexpert_quantization: fp8_blockwise or nf4",
	  NULL },
	{ "deprecated.rope_scaling_toplevel", SEV_ERROR,
	  "a top-level rope_scaling is refused",
	  "move it under model_config: (or overrides_of_model_config:)",
	  NULL },
	{ "deprecated.unsloth_flags_removed", SEV_ERROR,
	  "the unsloth_* flags were removed",
	  "use lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel",
	  NULL },
};
const size_t rules_deprecated_len =
    sizeof(rules_deprecated) / sizeof(rules_deprecated[0]);
