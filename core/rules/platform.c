/*
 * core/rules/platform: platform limits: AMD GPUs, memory limits.  Pure: a
 * rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/gpu.h"

/* platform.memory_limits_exclusive */
static int
check_platform_memory_limits(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "max_memory") || !cfg_set(rc, "gpu_memory_limit"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gpu_memory_limit"),
	    "max_memory and gpu_memory_limit are both set; keep one");
}

/* platform.rocm_deepspeed */
static int
check_platform_rocm_ds(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (g == NULL || strcmp(g->vendor, "amd") != 0 ||
	    !cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "DeepSpeed on AMD GPUs "
	    "(%s) needs a ROCm build of DeepSpeed", g->id);
}

/* platform.rocm_xformers */
static int
check_platform_rocm_xformers(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);
	const char *be = attn_backend(rc);

	if (g == NULL || strcmp(g->vendor, "amd") != 0 || be == NULL ||
	    strcmp(be, "xformers") != 0)
		return 0;
	return rule_report(rc, NULL, "xformers attention is not supported on "
	    "AMD GPUs (%s)", g->id);
}

/* platform.torch_below_minimum: AxolotlConfigWCapabilities.
   check_min_torch_version (a warning). */
static int
check_platform_torch(struct rule_ctx *rc)
{
	if (rc->ctx->torch >= 2060)
		return 0;
	return rule_report(rc, NULL, "torch %d.%d is below the 2.6 Axolotl "
	    "supports", rc->ctx->torch / 1000, rc->ctx->torch % 1000 / 10);
}

/* platform.wandb_run_id_as_name: WandbConfig.check_wandb_run (a
   warning; it also names the run after the id). */
static int
check_platform_wandb(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "wandb_run_id") || cfg_on(rc, "wandb_name"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "wandb_run_id"), "wandb_run_id sets "
	    "the run's id; Axolotl also uses it as the run name (wandb_name)");
}

const struct rule_row rules_platform[] = {
	{ "platform.memory_limits_exclusive", SEV_ERROR,
	  "max_memory and gpu_memory_limit together",
	  "keep one of them",
	  check_platform_memory_limits },
	{ "platform.rocm_deepspeed", SEV_WARNING,
	  "DeepSpeed on AMD GPUs",
	  "use a ROCm DeepSpeed build, or FSDP",
	  check_platform_rocm_ds },
	{ "platform.rocm_xformers", SEV_WARNING,
	  "xformers on AMD GPUs",
	  "use sdpa or flash_attention_2",
	  check_platform_rocm_xformers },
	{ "platform.torch_below_minimum", SEV_WARNING,
	  "torch older than the 2.6 Axolotl supports",
	  "use torch 2.6 or newer",
	  check_platform_torch },
	{ "platform.wandb_run_id_as_name", SEV_WARNING,
	  "wandb_run_id without wandb_name",
	  "set wandb_name for the run's name",
	  check_platform_wandb },
};
const size_t rules_platform_len =
    sizeof(rules_platform) / sizeof(rules_platform[0]);
