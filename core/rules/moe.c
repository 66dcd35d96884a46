/*
 * core/rules/moe: mixture-of-experts kernels and quantized experts.  Pure:
 * a rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/gpu.h"

/* moe.experts_implementation_fallback */
static int
check_moe_experts_impl(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "experts_implementation");

	/* KernelsArgs.check_experts_implementation (the plugin's). */
	if (v == NULL || !plugin_on(rc, "kernels"))
		return 0;
	if ((strcmp(v, "scattermoe") == 0 && !cfg_on(rc, "use_scattermoe")) ||
	    (strcmp(v, "sonicmoe") == 0 && !cfg_on(rc, "use_sonicmoe")) ||
	    !(strcmp(v, "scattermoe") == 0 || strcmp(v, "sonicmoe") == 0 ||
	    strcmp(v, "eager") == 0 || strcmp(v, "grouped_mm") == 0 ||
	    strcmp(v, "batched_mm") == 0))
		return rule_report(rc, cfg_pair(rc, "experts_implementation"),
		    "experts_implementation %.40s does not match the kernel "
		    "flags; Axolotl falls back", v);
	return 0;
}

/* moe.quantize_experts_cuda_only */
static int
check_moe_quant_cuda(struct rule_ctx *rc)
{
	const struct gpu *g = the_gpu(rc);

	if (!cfg_on(rc, "quantize_moe_experts") || g == NULL || g->cc > 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "quantize_moe_experts"),
	    "quantize_moe_experts runs on NVIDIA GPUs only, not %s", g->id);
}

/* moe.quantize_experts_fsdp2_ram_loading */
static int
check_moe_quant_fsdp2_ram(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_sub(rc, "fsdp_config",
	    "cpu_ram_efficient_loading");

	if (!cfg_on(rc, "quantize_moe_experts") || !cfg_is(rc, "adapter",
	    "qlora") || fsdp_version(rc) != 2 || p == NULL ||
	    !doc_truthy(p->value))
		return 0;
	return rule_report(rc, p, "quantized MoE experts with FSDP2 "
	    "cpu_ram_efficient_loading are known to fail loading");
}

/* moe.quantize_experts_requires_adapter */
static int
check_moe_quant_adapter(struct rule_ctx *rc)
{
	const char *ad = cfg_str(rc, "adapter");

	if (!cfg_on(rc, "quantize_moe_experts") || (ad != NULL &&
	    (strcmp(ad, "lora") == 0 || strcmp(ad, "qlora") == 0)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "quantize_moe_experts"),
	    "quantize_moe_experts needs adapter: lora or qlora");
}

/* moe.quantize_experts_requires_kbit */
static int
check_moe_quant_kbit(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "quantize_moe_experts") || cfg_on(rc, "load_in_4bit") ||
	    cfg_on(rc, "load_in_8bit"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "quantize_moe_experts"),
	    "quantize_moe_experts needs load_in_4bit or load_in_8bit");
}

/* moe.quantize_experts_target_linear */
static int
check_moe_quant_target_linear(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "quantize_moe_experts") ||
	    !cfg_on(rc, "lora_target_linear"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "lora_target_linear"),
	    "lora_target_linear does not work with quantize_moe_experts");
}

/* moe.scattermoe_sonicmoe_exclusive */
static int
check_moe_scatter_sonic(struct rule_ctx *rc)
{
	const char *eb = cfg_str(rc, "expert_backend");

	/* KernelsArgs.check_mutually_exclusive, after expert_backend sets
	   one of the two (a conflict with it is kernels.expert_backend_
	   values'). */
	if (!plugin_on(rc, "kernels") || eb != NULL ||
	    !cfg_on(rc, "use_scattermoe") || !cfg_on(rc, "use_sonicmoe"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_sonicmoe"),
	    "use_scattermoe and use_sonicmoe are two MoE kernels; pick one");
}

/* moe.target_parameters_dropout */
static int
check_moe_target_params_dropout(struct rule_ctx *rc)
{
	const struct doc_pair *d;

	use_parsed(rc);  /* an after-validator */
	d = cfg_pair(rc, "lora_dropout");

	if (!cfg_on(rc, "lora_target_parameters") || d == NULL ||
	    !doc_truthy(d->value))
		return 0;
	return rule_report(rc, d, "lora_target_parameters needs lora_dropout: "
	    "0");
}

const struct rule_row rules_moe[] = {
	{ "moe.experts_implementation_fallback", SEV_WARNING,
	  "experts_implementation does not match the kernel flags",
	  "set use_scattermoe/use_sonicmoe to match, or eager",
	  check_moe_experts_impl },
	{ "moe.quantize_experts_cuda_only", SEV_ERROR,
	  "quantized MoE experts on a non-NVIDIA GPU",
	  "run on NVIDIA GPUs, or drop quantize_moe_experts",
	  check_moe_quant_cuda },
	{ "moe.quantize_experts_fsdp2_ram_loading", SEV_WARNING,
	  "quantized MoE experts with FSDP2 RAM-efficient loading",
	  "set cpu_ram_efficient_loading: false",
	  check_moe_quant_fsdp2_ram },
	{ "moe.quantize_experts_requires_adapter", SEV_ERROR,
	  "quantized MoE experts without a LoRA adapter",
	  "set adapter: lora or qlora",
	  check_moe_quant_adapter },
	{ "moe.quantize_experts_requires_kbit", SEV_ERROR,
	  "quantized MoE experts without 4/8-bit loading",
	  "set load_in_4bit: true",
	  check_moe_quant_kbit },
	{ "moe.quantize_experts_target_linear", SEV_ERROR,
	  "quantized MoE experts with lora_target_linear",
	  "remove lora_target_linear",
	  check_moe_quant_target_linear },
	{ "moe.scattermoe_sonicmoe_exclusive", SEV_ERROR,
	  "ScatterMoE and SonicMoE together",
	  "keep one MoE kernel",
	  check_moe_scatter_sonic },
	{ "moe.target_parameters_dropout", SEV_ERROR,
	  "lora_target_parameters with LoRA dropout",
	  "set lora_dropout: 0",
	  check_moe_target_params_dropout },
};
const size_t rules_moe_len =
    sizeof(rules_moe) / sizeof(rules_moe[0]);
