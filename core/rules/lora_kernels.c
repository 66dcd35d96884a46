/*
 * core/rules/lora_kernels: the LoRA kernels
 * (lora_mlp/qkv/o/embedding_kernel): Axolotl's auto-enable and where they
 * are refused.  Pure: a rule reads the config through its struct rule_ctx
 * and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include <strings.h>

/*
 * Whether a LoRA kernel flag is on, as Axolotl reads them: truthy
 * (data.get("lora_mlp_kernel") or ...; the trainer's cfg.lora_*_kernel
 * after pydantic made them bools).
 */
static bool
kernels_on(const struct rule_ctx *rc)
{
	return cfg_on(rc, "lora_mlp_kernel") || cfg_on(rc, "lora_qkv_kernel") ||
	    cfg_on(rc, "lora_o_kernel");
}

/*
 * The KernelsPlugin's disable_mlp_kernel (a plugin before-validator, so
 * ahead of the mixins') sets lora_mlp_kernel false when it and
 * use_dsv4_kernels are true under the scattermoe or sonicmoe experts.
 */
static bool
mlp_kernel_disabled(const struct rule_ctx *rc)
{
	const char *eb = cfg_str(rc, "expert_backend");
	bool moe = cfg_true(rc, "use_scattermoe") || cfg_true(rc, "use_sonicmoe") ||
	    (eb != NULL && (strcasecmp(eb, "scattermoe") == 0 ||
	    strcasecmp(eb, "sonicmoe") == 0));

	return moe && plugin_on(rc, "kernels") &&
	    cfg_true(rc, "lora_mlp_kernel") && cfg_true(rc, "use_dsv4_kernels");
}

/* kernels_on() as the mixins' before-validators see the flags. */
static bool
kernels_on_for_mixins(const struct rule_ctx *rc)
{
	return (cfg_on(rc, "lora_mlp_kernel") && !mlp_kernel_disabled(rc)) ||
	    cfg_on(rc, "lora_qkv_kernel") || cfg_on(rc, "lora_o_kernel");
}

/* lora_kernels.auto_enable */
static int
check_lora_kernels_auto(struct rule_ctx *rc)
{
	static const char *const k[] = { "lora_mlp_kernel", "lora_qkv_kernel",
	    "lora_o_kernel", "lora_embedding_kernel" };
	const char *ad = cfg_str(rc, "adapter");
	size_t i;

	if (ad == NULL || !(strcmp(ad, "lora") == 0 ||
	    strcmp(ad, "qlora") == 0) || cfg_set(rc, "rl") ||
	    cfg_on(rc, "nvfp4_merge_aware") || cfg_on(rc, "trust_remote_code")
	    || (strcmp(ad, "lora") == 0 && cfg_on(rc, "load_in_8bit")))
		return 0;
	for (i = 0; i < 4; i++)
		if (cfg_set(rc, k[i]))
			return 0;
	if (rc->ctx->gpus > 1 && cfg_set(rc, "fsdp_config") &&
	    cfg_int(rc, "fsdp_version", 0) != 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "adapter"), "Axolotl turns the LoRA "
	    "kernels on (lora_mlp/qkv/o/embedding_kernel)");
}

/* lora_kernels.fsdp1_multi_gpu */
static int
check_lora_kernels_fsdp1(struct rule_ctx *rc)
{
	const struct doc_pair *v = cfg_pair(rc, "fsdp_version");
	long long ver = 0;

	if (!(kernels_on(rc) || cfg_on(rc, "lora_embedding_kernel")) ||
	    rc->ctx->gpus <= 1 || !cfg_set(rc, "fsdp_config"))
		return 0;
	if (v != NULL && node_version(v->value, &ver) && ver == 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"), "LoRA kernels "
	    "with FSDP1 on %ld GPUs are refused; set fsdp_version: 2 at the "
	    "top level", rc->ctx->gpus);
}

/* lora_kernels.lora_8bit */
static int
check_lora_kernels_8bit(struct rule_ctx *rc)
{
	static const char *const k[] = { "lora_mlp_kernel", "lora_qkv_kernel",
	    "lora_o_kernel" };
	const char *ad = cfg_str(rc, "adapter");
	size_t i;

	if (ad == NULL || strcmp(ad, "lora") != 0 ||
	    !cfg_on(rc, "load_in_8bit"))
		return 0;
	for (i = 0; i < 3; i++)
		if (cfg_on(rc, k[i]) && !(i == 0 && mlp_kernel_disabled(rc)))
			return rule_report(rc, cfg_pair(rc, k[i]),
			    "%s does not work with an 8-bit LoRA "
			    "(load_in_8bit); Axolotl refuses it", k[i]);
	return 0;
}

/* lora_kernels.nvfp4_merge_aware_conflict */
static int
check_lora_kernels_nvfp4(struct rule_ctx *rc)
{
	/* KernelsArgs.check_nvfp4_merge_aware (the KernelsPlugin's), after
	   disable_mlp_kernel turned lora_mlp_kernel off under the
	   DeepSeek-V4 MoE kernels. */
	if (!plugin_on(rc, "kernels") || !cfg_on(rc, "nvfp4_merge_aware") ||
	    !(cfg_true(rc, "lora_qkv_kernel") || cfg_true(rc, "lora_o_kernel") ||
	    (cfg_true(rc, "lora_mlp_kernel") && !mlp_kernel_disabled(rc))))
		return 0;
	return rule_report(rc, cfg_pair(rc, "nvfp4_merge_aware"),
	    "nvfp4_merge_aware does not work with the LoRA kernels");
}

/* lora_kernels.rl_not_supported */
static int
check_lora_kernels_rl(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "rl") || !kernels_on(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "rl"), "the LoRA kernels are not "
	    "supported for RL trainers");
}

/* lora_kernels.trust_remote_code */
static int
check_lora_kernels_remote(struct rule_ctx *rc)
{
	if (!kernels_on_for_mixins(rc) || !cfg_on(rc, "trust_remote_code"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "trust_remote_code"),
	    "LoRA kernels do not work with trust_remote_code models");
}

const struct rule_row rules_lora_kernels[] = {
	{ "lora_kernels.auto_enable", SEV_INFO,
	  "the LoRA kernels are turned on for you",
	  "set lora_*_kernel: false to keep them off",
	  check_lora_kernels_auto },
	{ "lora_kernels.fsdp1_multi_gpu", SEV_ERROR,
	  "LoRA kernels with FSDP1 on several GPUs",
	  "set fsdp_version: 2 at the top level",
	  check_lora_kernels_fsdp1 },
	{ "lora_kernels.lora_8bit", SEV_ERROR,
	  "LoRA kernels with an 8-bit LoRA",
	  "remove the lora_*_kernel flags, or use 4-bit QLoRA",
	  check_lora_kernels_8bit },
	{ "lora_kernels.nvfp4_merge_aware_conflict", SEV_ERROR,
	  "nvfp4_merge_aware with LoRA kernels",
	  "set the lora_*_kernel flags to false",
	  check_lora_kernels_nvfp4 },
	{ "lora_kernels.rl_not_supported", SEV_WARNING,
	  "LoRA kernels with an RL trainer",
	  "set the lora_*_kernel flags to false",
	  check_lora_kernels_rl },
	{ "lora_kernels.trust_remote_code", SEV_ERROR,
	  "LoRA kernels with trust_remote_code",
	  "remove the lora_*_kernel flags",
	  check_lora_kernels_remote },
};
const size_t rules_lora_kernels_len =
    sizeof(rules_lora_kernels) / sizeof(rules_lora_kernels[0]);
