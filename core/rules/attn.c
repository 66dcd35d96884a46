/*
 * core/rules/attn: the attention backend: attn_implementation and the
 * legacy flags, their values, and what each backend needs (torch, GPU,
 * precision).  Pure: a rule reads the config through its struct rule_ctx
 * and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include <strings.h>

#include "core/gpu.h"
#include "core/plan.h"

/* attn.flash_optimum_with_amp */
static int
check_attn_flash_optimum(struct rule_ctx *rc)
{
	const struct doc_pair *bf;

	use_parsed(rc);  /* an after-validator */
	bf = cfg_pair(rc, "bf16");

	if (!cfg_true(rc, "flash_optimum"))
		return 0;
	/* bf16 defaults to "auto", which is truthy here. */
	if (!cfg_on(rc, "fp16") && bf != NULL && !doc_truthy(bf->value))
		return 0;
	return rule_report(rc, cfg_pair(rc, "flash_optimum"),
	    "flash_optimum does not work with mixed precision (bf16 or "
	    "fp16; bf16 defaults to auto): set bf16: false and fp16: false");
}

/* attn.flex_torch_version */
static int
check_attn_flex_torch(struct rule_ctx *rc)
{
	const char *be;

	use_parsed(rc);  /* an after-validator */
	be = attn_backend(rc);

	if (be == NULL || strcmp(be, "flex_attention") != 0 ||
	    rc->ctx->torch >= 2060)
		return 0;
	return rule_report(rc, cfg_first(rc, "attn_implementation",
	    "flex_attention"), "flex attention needs torch 2.6 or newer");
}

/* attn.fp8_preflight */
static int
check_attn_fp8(struct rule_ctx *rc)
{
	const struct gpu *g;

	use_parsed(rc);  /* an after-validator */
	g = the_gpu(rc);

	if (!cfg_is(rc, "attn_implementation", "fp8"))
		return 0;
	if (g != NULL && g->cc > 0 && g->cc < 90)
		return rule_report(rc, cfg_pair(rc, "attn_implementation"),
		    "fp8 attention needs compute capability 9.0 or newer; %s "
		    "is %u.%u", g->id, g->cc / 10, g->cc % 10);
	if (rc->ctx->torch < 2110)
		return rule_report(rc, cfg_pair(rc, "attn_implementation"),
		    "fp8 attention needs torch 2.11 or newer");
	return 0;
}

/* attn.fused_mlp_with_lora */
static int
check_attn_fused_mlp_lora(struct rule_ctx *rc)
{
	const char *ad;

	use_parsed(rc);  /* an after-validator */
	ad = cfg_str(rc, "adapter");

	if (!cfg_on(rc, "flash_attn_fuse_mlp"))
		return 0;
	if (!(ad != NULL && (strcmp(ad, "lora") == 0 ||
	    strcmp(ad, "qlora") == 0)) && !cfg_on(rc, "relora"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "flash_attn_fuse_mlp"),
	    "flash_attn_fuse_mlp does not work with LoRA adapters");
}

/* attn.gemma4_hybrid_requires_fa2 */
static int
check_attn_gemma4_hybrid(struct rule_ctx *rc)
{
	const char *impl = cfg_str(rc, "attn_implementation");

	if (!cfg_on(rc, "gemma4_hybrid_attn_impl"))
		return 0;
	if (impl != NULL && strcmp(impl, "flash_attention_2") != 0)
		return rule_report(rc, cfg_pair(rc, "attn_implementation"),
		    "gemma4_hybrid_attn_impl needs attn_implementation: "
		    "flash_attention_2, got %s", impl);
	if (impl == NULL && attn_backend(rc) == NULL)
		return rule_report_sev(rc, cfg_pair(rc, "gemma4_hybrid_attn_impl"),
		    SEV_INFO, "gemma4_hybrid_attn_impl sets "
		    "attn_implementation: flash_attention_2");
	return 0;
}

/* attn.invalid_value */
static int
check_attn_invalid(struct rule_ctx *rc)
{
	static const char *const ok[] = { "eager", "sdpa",
	    "flash_attention_2", "flash_attention_3", "flex_attention",
	    "xformers", "sage", "fp8" };
	const char *v = cfg_str(rc, "attn_implementation");
	size_t i;

	if (v == NULL || strchr(v, '/') != NULL)
		return 0;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(v, ok[i]) == 0)
			return 0;
	return rule_report(rc, cfg_pair(rc, "attn_implementation"),
	    "attn_implementation '%.60s' is not a backend Axolotl knows%s", v,
	    strcmp(v, "flash") == 0 ? " (flash_attention_2?)" :
	    strcmp(v, "flex") == 0 ? " (flex_attention?)" :
	    strcmp(v, "sdp") == 0 ? " (sdpa?)" : "");
}

/* attn.large_head_attention_values */
static int
check_attn_large_head(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "large_head_attention");

	if (v == NULL || strcasecmp(v, "auto") == 0 ||
	    strcasecmp(v, "sdpa") == 0 || strcasecmp(v, "triton_flash") == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "large_head_attention"),
	    "large_head_attention must be auto, sdpa or triton_flash, got "
	    "'%.60s'", v);
}

/* attn.legacy_flag_renamed */
static int
check_attn_legacy_renamed(struct rule_ctx *rc)
{
	size_t i;

	if (cfg_set(rc, "attn_implementation"))
		return 0;
	for (i = 0; i < plan_legacy_attn_len; i++)
		if (cfg_on(rc, plan_legacy_attn[i].flag))
			return rule_report(rc, cfg_pair(rc,
			    plan_legacy_attn[i].flag), "%s is a legacy flag; "
			    "Axolotl reads it as attn_implementation: %s",
			    plan_legacy_attn[i].flag, plan_legacy_attn[i].impl);
	return 0;
}

/* attn.legacy_flag_with_attn_implementation */
static int
check_attn_legacy_with_impl(struct rule_ctx *rc)
{
	static const char *const flags[] = { "xformers_attention",
	    "sage_attention", "flex_attention", "flash_attention",
	    "sdp_attention", "eager_attention" };
	size_t i;
	int rv;

	if (cfg_str(rc, "attn_implementation") == NULL)
		return 0;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (cfg_on(rc, flags[i])) {
			rv = rule_report(rc, cfg_pair(rc, flags[i]),
			    "%s is a legacy flag and attn_implementation is "
			    "set too; Axolotl refuses the mix", flags[i]);
			if (rv != 0)
				return rv;
		}
	return 0;
}

/* attn.sage_compute_capability */
static int
check_attn_sage_cc(struct rule_ctx *rc)
{
	const struct gpu *g;
	const char *be;

	use_parsed(rc);  /* an after-validator */
	g = the_gpu(rc);
	be = attn_backend(rc);

	if (be == NULL || strcmp(be, "sage") != 0 || g == NULL)
		return 0;
	if (g->cc == 80 || g->cc == 86 || g->cc == 89 || g->cc == 90 ||
	    g->cc == 120)
		return 0;
	return rule_report(rc, cfg_first(rc, "attn_implementation",
	    "sage_attention"), "sage attention does not run on %s (compute "
	    "capability %u.%u); it needs sm_80, 86, 89, 90 or 120", g->id,
	    g->cc / 10, g->cc % 10);
}

/* attn.sage_full_finetune */
static int
check_attn_sage_fft(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (be == NULL || strcmp(be, "sage") != 0 || cfg_set(rc, "adapter"))
		return 0;
	return rule_report(rc, NULL, "sage attention in a full fine-tune is "
	    "known to diverge; prefer it with LoRA");
}

/* attn.scaling_softmax_requires_flex */
static int
check_attn_scaling_softmax(struct rule_ctx *rc)
{
	const char *be;

	use_parsed(rc);  /* an after-validator */
	be = attn_backend(rc);

	if (!cfg_on(rc, "scaling_softmax") ||
	    (be != NULL && strcmp(be, "flex_attention") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "scaling_softmax"),
	    "scaling_softmax needs attn_implementation: flex_attention");
}

const struct rule_row rules_attn[] = {
	{ "attn.flash_optimum_with_amp", SEV_ERROR,
	  "flash_optimum with mixed precision",
	  "set bf16: false and fp16: false, or drop flash_optimum",
	  check_attn_flash_optimum },
	{ "attn.flex_torch_version", SEV_ERROR,
	  "flex attention on torch older than 2.6",
	  "upgrade torch, or pick another backend",
	  check_attn_flex_torch },
	{ "attn.fp8_preflight", SEV_ERROR,
	  "fp8 attention on an older GPU or torch",
	  "use a Hopper-class GPU with torch 2.11, or another backend",
	  check_attn_fp8 },
	{ "attn.fused_mlp_with_lora", SEV_ERROR,
	  "flash_attn_fuse_mlp with a LoRA adapter",
	  "remove flash_attn_fuse_mlp",
	  check_attn_fused_mlp_lora },
	{ "attn.gemma4_hybrid_requires_fa2", SEV_ERROR,
	  "Gemma-4 hybrid attention needs flash_attention_2",
	  "set attn_implementation: flash_attention_2",
	  check_attn_gemma4_hybrid },
	{ "attn.invalid_value", SEV_ERROR,
	  "an attn_implementation Axolotl does not know",
	  "use eager, sdpa, flash_attention_2, flash_attention_3, flex_attention, xformers, sage or fp8",
	  check_attn_invalid },
	{ "attn.large_head_attention_values", SEV_ERROR,
	  "a large_head_attention value Axolotl does not know",
	  "use auto, sdpa or triton_flash",
	  check_attn_large_head },
	{ "attn.legacy_flag_renamed", SEV_WARNING,
	  "a legacy attention flag",
	  "set attn_implementation instead",
	  check_attn_legacy_renamed },
	{ "attn.legacy_flag_with_attn_implementation", SEV_ERROR,
	  "a legacy attention flag next to attn_implementation",
	  "remove the legacy flag; attn_implementation decides",
	  check_attn_legacy_with_impl },
	{ "attn.s2_removed", SEV_ERROR,
	  "a removed attention feature (s2_attention, flash_attn_rms_norm)",
	  "remove it and pick a supported attention backend",
	  NULL },
	{ "attn.sage_compute_capability", SEV_ERROR,
	  "sage attention on a GPU it does not support",
	  "use flash_attention_2 or sdpa on this GPU",
	  check_attn_sage_cc },
	{ "attn.sage_full_finetune", SEV_WARNING,
	  "sage attention in a full fine-tune",
	  "use an adapter, or another backend",
	  check_attn_sage_fft },
	{ "attn.scaling_softmax_requires_flex", SEV_ERROR,
	  "scaling_softmax without flex attention",
	  "set attn_implementation: flex_attention",
	  check_attn_scaling_softmax },
};
const size_t rules_attn_len =
    sizeof(rules_attn) / sizeof(rules_attn[0]);
