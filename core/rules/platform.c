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
};
const size_t rules_platform_len =
    sizeof(rules_platform) / sizeof(rules_platform[0]);
