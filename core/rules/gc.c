/*
 * core/rules/gc: gradient checkpointing, activation offloading and
 * selective checkpointing.  Pure: a rule reads the config through its
 * struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/gpu.h"
#include "core/models.h"

static bool
reentrant(const struct rule_ctx *rc)
{
	return cfg_sub_on(rc, "gradient_checkpointing_kwargs", "use_reentrant");
}

/* gc.activation_offloading_requires_gc */
static int
check_gc_offload_requires_gc(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_on(rc, "activation_offloading") ||
	    cfg_on(rc, "gradient_checkpointing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "activation_offloading"),
	    "activation_offloading needs gradient_checkpointing, which is "
	    "off");
}

/* gc.dpo_lora_ddp_hint */
static int
check_gc_dpo_lora_ddp(struct rule_ctx *rc)
{
	const struct doc_pair *gc = cfg_pair(rc, "gradient_checkpointing");
	const char *ad = cfg_str(rc, "adapter");

	if (!(gc == NULL || doc_truthy(gc->value)) || rc->ctx->gpus <= 1 ||
	    ad == NULL || !(strcmp(ad, "lora") == 0 ||
	    strcmp(ad, "qlora") == 0) || !cfg_is(rc, "rl", "dpo") ||
	    fsdp_on(rc) || cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "rl"), "DPO with LoRA under DDP and "
	    "gradient checkpointing needs use_reentrant: false "
	    "(gradient_checkpointing_kwargs)");
}

/* gc.gemma4_ddp_defaults */
static int
check_gc_gemma4(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);

	if (m == NULL || m->model_type == NULL ||
	    strncmp(m->model_type, "gemma4", 6) != 0 ||
	    !cfg_on(rc, "gradient_checkpointing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"), "Gemma-4 "
	    "forces use_reentrant: false and, under DDP, "
	    "ddp_find_unused_parameters: true");
}

/* gc.hidden_states_offload */
static int
check_gc_hidden_states(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "activation_offloading", "hidden_states"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "activation_offloading"),
	    "activation_offloading: hidden_states sets use_reentrant: false");
}

/* gc.layer_offloading_cuda */
static int
check_gc_layer_offloading(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (!cfg_true(rc, "layer_offloading"))
		return 0;
	if ((g != NULL && g->cc == 0) || !cfg_set(rc, "adapter"))
		return rule_report(rc, cfg_pair(rc, "layer_offloading"),
		    "layer_offloading helps on CUDA with an adapter (frozen "
		    "layers); here it %s", !cfg_set(rc, "adapter") ? "offloads "
		    "weights that all train" : "has no CUDA device");
	return 0;
}

/* gc.mpt_unsupported */
static int
check_gc_mpt(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!doc_text_has_ci(cfg_str(rc, "base_model"), "mpt") ||
	    !cfg_on(rc, "gradient_checkpointing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"),
	    "MPT models do not support gradient_checkpointing");
}

/* gc.nemotron_h_requires_packing */
static int
check_gc_nemotron_h(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!doc_text_has_ci(cfg_str(rc, "base_model"), "nemotron-h") ||
	    !cfg_on(rc, "gradient_checkpointing") ||
	    cfg_on(rc, "sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"),
	    "Nemotron-H with gradient_checkpointing needs sample_packing");
}

/* gc.offload_value_renamed */
static int
check_gc_offload_renamed(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "gradient_checkpointing");

	if (v == NULL || !(strcmp(v, "offload") == 0 ||
	    strcmp(v, "offload_disk") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"),
	    "gradient_checkpointing: %s is read as gradient_checkpointing: "
	    "true with activation_offloading: %s", v,
	    strcmp(v, "offload") == 0 ? "true" : "disk");
}

/* gc.reentrant_with_partial_freeze */
static int
check_gc_reentrant_freeze(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_sub(rc, "gradient_checkpointing_kwargs",
	    "use_reentrant");

	if (!cfg_on(rc, "unfrozen_parameters") || p == NULL ||
	    p->value->kind != DOC_BOOL || !p->value->b)
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing_kwargs"),
	    "use_reentrant: true does not work with unfrozen_parameters");
}

/* gc.rl_qlora_multi_gpu_reentrant */
static int
check_gc_rl_qlora_reentrant(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "rl") || !cfg_on(rc, "gradient_checkpointing") ||
	    !reentrant(rc) || !cfg_on(rc, "load_in_4bit") ||
	    !cfg_is(rc, "adapter", "qlora") || rc->ctx->gpus <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing_kwargs"),
	    "RL with QLoRA on %ld GPUs needs use_reentrant: false",
	    rc->ctx->gpus);
}

/* gc.selective_matmul_with_adapter */
static int
check_gc_selective_matmul(struct rule_ctx *rc)
{
	static const char *const ops[] = { "aten::mm", "aten::addmm",
	    "aten::matmul", "aten::bmm" };
	const struct doc_pair *save;
	size_t i, k;

	use_parsed(rc);  /* an after-validator */
	save = cfg_sub(rc, "selective_checkpointing",
	    "save");

	if (save == NULL || save->value->kind != DOC_SEQ || !cfg_set(rc, "adapter"))
		return 0;
	for (i = 0; i < save->value->n; i++) {
		const struct doc_node *v = save->value->items[i];

		if (v->kind != DOC_STR || strcmp(v->text, "attention") == 0)
			continue;
		for (k = 0; k < 4; k++)
			if (strstr(ops[k], v->text) != NULL)
				return rule_report(rc, save, "selective "
				    "checkpointing that saves %.40s does not "
				    "work with an adapter", v->text);
	}
	return 0;
}

/* gc.selective_offload_mode */
static int
check_gc_selective_offload(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_on(rc, "selective_checkpointing") ||
	    !cfg_on(rc, "activation_offloading") ||
	    cfg_is(rc, "activation_offloading", "hidden_states"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "activation_offloading"),
	    "with selective_checkpointing, activation_offloading must be "
	    "hidden_states");
}

/* gc.selective_requires_gc */
static int
check_gc_selective_gc(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_on(rc, "selective_checkpointing") ||
	    cfg_on(rc, "gradient_checkpointing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "selective_checkpointing"),
	    "selective_checkpointing needs gradient_checkpointing");
}

/* gc.selective_requires_non_reentrant */
static int
check_gc_selective_reentrant(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_on(rc, "selective_checkpointing") || !reentrant(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "selective_checkpointing"),
	    "selective_checkpointing needs use_reentrant: false");
}

/* gc.selective_with_compile */
static int
check_gc_selective_compile(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "selective_checkpointing") ||
	    !cfg_on(rc, "torch_compile"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "selective_checkpointing"), "selective "
	    "checkpointing with torch_compile is not validated");
}

/* gc.use_reentrant_default */
static int
check_gc_reentrant_default(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "gradient_checkpointing") ||
	    cfg_set(rc, "gradient_checkpointing_kwargs"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"), "Axolotl "
	    "sets use_reentrant: %s", cfg_set(rc, "rl") ||
	    cfg_set(rc, "unfrozen_parameters") ? "false" : "true");
}

const struct rule_row rules_gc[] = {
	{ "gc.activation_offloading_requires_gc", SEV_ERROR,
	  "activation offloading without gradient checkpointing",
	  "set gradient_checkpointing: true",
	  check_gc_offload_requires_gc },
	{ "gc.dpo_lora_ddp_hint", SEV_WARNING,
	  "DPO LoRA under DDP with reentrant checkpointing",
	  "set gradient_checkpointing_kwargs.use_reentrant: false",
	  check_gc_dpo_lora_ddp },
	{ "gc.gemma4_ddp_defaults", SEV_WARNING,
	  "Gemma-4 overrides the checkpointing and DDP defaults",
	  "nothing to fix; know that it happens",
	  check_gc_gemma4 },
	{ "gc.hidden_states_offload", SEV_INFO,
	  "hidden_states offloading sets use_reentrant: false",
	  "nothing to fix",
	  check_gc_hidden_states },
	{ "gc.layer_offloading_cuda", SEV_WARNING,
	  "layer_offloading where it does not help",
	  "use it on CUDA with an adapter",
	  check_gc_layer_offloading },
	{ "gc.mpt_unsupported", SEV_ERROR,
	  "gradient checkpointing on MPT",
	  "set gradient_checkpointing: false",
	  check_gc_mpt },
	{ "gc.nemotron_h_requires_packing", SEV_ERROR,
	  "Nemotron-H checkpointing without sample packing",
	  "set sample_packing: true",
	  check_gc_nemotron_h },
	{ "gc.offload_value_renamed", SEV_WARNING,
	  "gradient_checkpointing: offload is an old spelling",
	  "set gradient_checkpointing: true and activation_offloading",
	  check_gc_offload_renamed },
	{ "gc.reentrant_with_partial_freeze", SEV_ERROR,
	  "reentrant checkpointing with unfrozen_parameters",
	  "set gradient_checkpointing_kwargs.use_reentrant: false",
	  check_gc_reentrant_freeze },
	{ "gc.rl_qlora_multi_gpu_reentrant", SEV_ERROR,
	  "multi-GPU RL QLoRA with reentrant checkpointing",
	  "set gradient_checkpointing_kwargs.use_reentrant: false",
	  check_gc_rl_qlora_reentrant },
	{ "gc.selective_matmul_with_adapter", SEV_ERROR,
	  "selective checkpointing of matmuls with an adapter",
	  "save only attention",
	  check_gc_selective_matmul },
	{ "gc.selective_offload_mode", SEV_ERROR,
	  "selective checkpointing with the wrong offload mode",
	  "set activation_offloading: hidden_states",
	  check_gc_selective_offload },
	{ "gc.selective_requires_gc", SEV_ERROR,
	  "selective checkpointing without gradient checkpointing",
	  "set gradient_checkpointing: true",
	  check_gc_selective_gc },
	{ "gc.selective_requires_non_reentrant", SEV_ERROR,
	  "selective checkpointing with reentrant checkpointing",
	  "set gradient_checkpointing_kwargs.use_reentrant: false",
	  check_gc_selective_reentrant },
	{ "gc.selective_with_compile", SEV_WARNING,
	  "selective checkpointing with torch_compile",
	  "test it, or drop one",
	  check_gc_selective_compile },
	{ "gc.use_reentrant_default", SEV_INFO,
	  "use_reentrant is chosen for you",
	  "set gradient_checkpointing_kwargs.use_reentrant",
	  check_gc_reentrant_default },
};
const size_t rules_gc_len =
    sizeof(rules_gc) / sizeof(rules_gc[0]);
