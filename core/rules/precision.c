/*
 * core/rules/precision: bf16/fp16/tf32/fp8 against the GPU and each other.
 * Pure: a rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/gpu.h"
#include "core/plan.h"

/* precision.bf16_and_fp16_both_true */
static int
check_precision_both(struct rule_ctx *rc)
{
	const struct doc_pair *bf = cfg_pair(rc, "bf16");

	if (!cfg_true(rc, "fp16") || !(bf == NULL || doc_truthy(bf->value)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp16"), "bf16 and fp16 are both on; "
	    "Axolotl turns fp16 off");
}

/* precision.bf16_auto_resolution */
static int
check_precision_bf16_auto(struct rule_ctx *rc)
{
	const struct doc_pair *bf = cfg_pair(rc, "bf16");
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (!(bf == NULL || (bf->value->kind == DOC_STR &&
	    strcmp(bf->value->text, "auto") == 0)) || cfg_on(rc, "fp16") ||
	    cfg_on(rc, "use_ray") || g == NULL)
		return 0;
	return rule_report(rc, bf, "bf16: auto resolves to %s on %s",
	    g->bf16 ? "bf16" : "fp16", g->id);
}

/* precision.bf16_full_rejected */
static int
check_precision_bf16_full(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "bf16");

	/* pydantic reads "true", "no", "1"... as the bool. */
	if (v == NULL || strcmp(v, "auto") == 0 ||
	    py_bool_word(cfg_pair(rc, "bf16")->value, NULL))
		return 0;
	return rule_report(rc, cfg_pair(rc, "bf16"), "bf16 takes true, false "
	    "or auto, got '%.40s'", v);
}

/* precision.bf16_unsupported_gpu */
static int
check_precision_bf16_gpu(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (g == NULL || g->bf16 || !(cfg_true(rc, "bf16") ||
	    cfg_true(rc, "bfloat16")) || cfg_on(rc, "merge_lora"))
		return 0;
	return rule_report(rc, cfg_first(rc, "bf16", "bfloat16"), "bf16 on "
	    "%s, which has no bf16 support", g->id);
}

/* precision.cce_requires_half: CutCrossEntropyArgs.check_dtype_is_half,
   which reads the raw values (bf16 written, not its "auto" default). */
static int
check_precision_cce_half(struct rule_ctx *rc)
{
	if (!plugin_on(rc, "cut_cross_entropy") ||
	    !cfg_on(rc, "cut_cross_entropy") || cfg_on(rc, "bf16") ||
	    cfg_on(rc, "fp16"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "cut_cross_entropy"),
	    "cut_cross_entropy needs bf16 or fp16 written in the config");
}

/* precision.fp8_all_gather_requires_fsdp2 */
static int
check_precision_fp8_all_gather(struct rule_ctx *rc)
{
	const struct doc_pair *v = cfg_pair(rc, "fsdp_version");

	if (!cfg_on(rc, "fp8_enable_fsdp_float8_all_gather") ||
	    (v != NULL && v->value->kind == DOC_INT && v->value->i == 2))
		return 0;
	return rule_report(rc, cfg_pair(rc,
	    "fp8_enable_fsdp_float8_all_gather"), "fp8 all-gather needs "
	    "fsdp_version: 2 at the top level");
}

/* precision.fp8_ddp_compile */
static int
check_precision_fp8_ddp(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fp8") || !cfg_on(rc, "torch_compile") ||
	    rc->plan->world <= 1 || fsdp_on(rc) || cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp8"), "fp8 with torch_compile under "
	    "plain DDP is documented as problematic; use FSDP2");
}

/* precision.fp8_fsdp_activation_checkpointing */
static int
check_precision_fp8_fsdp_ac(struct rule_ctx *rc)
{
	const struct doc_pair *ac = fsdp_pair(rc, "activation_checkpointing");

	if (!cfg_on(rc, "fp8") || ac == NULL || !doc_truthy(ac->value))
		return 0;
	return rule_report(rc, ac, "fp8 with FSDP activation checkpointing "
	    "is known to be slow or unstable; use gradient_checkpointing");
}

/* precision.fp8_gpu_support */
static int
check_precision_fp8_gpu(struct rule_ctx *rc)
{
	const struct gpu *g;

	use_parsed(rc);  /* an after-validator */
	g = the_gpu(rc);

	if (!cfg_on(rc, "fp8") || g == NULL || g->cc == 0 || g->cc >= 90)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp8"), "fp8 training needs "
	    "compute capability 9.0 or newer; %s is %u.%u", g->id,
	    g->cc / 10, g->cc % 10);
}

/* precision.fp8_without_compile */
static int
check_precision_fp8_compile(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fp8") || cfg_on(rc, "torch_compile"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp8"), "fp8 without torch_compile is "
	    "slower than bf16");
}

/* precision.tf32_auto */
static int
check_precision_tf32(struct rule_ctx *rc)
{
	const struct doc_pair *t = cfg_pair(rc, "tf32");
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (!(t == NULL || (t->value->kind == DOC_STR &&
	    strcmp(t->value->text, "auto") == 0)) || g == NULL)
		return 0;
	return rule_report(rc, t, "tf32: auto resolves to %s on %s",
	    g->cc >= 80 ? "true" : "false", g->id);
}

const struct rule_row rules_precision[] = {
	{ "precision.bf16_and_fp16_both_true", SEV_WARNING,
	  "bf16 and fp16 both on",
	  "keep one of them",
	  check_precision_both },
	{ "precision.bf16_auto_resolution", SEV_INFO,
	  "bf16: auto is resolved from the GPU",
	  "set bf16: true or false to decide",
	  check_precision_bf16_auto },
	{ "precision.bf16_full_rejected", SEV_ERROR,
	  "bf16 set to a string other than auto",
	  "use bf16: true, false or auto",
	  check_precision_bf16_full },
	{ "precision.bf16_unsupported_gpu", SEV_WARNING,
	  "bf16 on a GPU without bf16",
	  "set bf16: false and fp16: true",
	  check_precision_bf16_gpu },
	{ "precision.cce_requires_half", SEV_ERROR,
	  "Cut Cross Entropy without bf16 or fp16 written",
	  "write bf16: true (or auto)",
	  check_precision_cce_half },
	{ "precision.fp8_all_gather_requires_fsdp2", SEV_ERROR,
	  "fp8 FSDP all-gather without a top-level fsdp_version: 2",
	  "set fsdp_version: 2 at the top level",
	  check_precision_fp8_all_gather },
	{ "precision.fp8_ddp_compile", SEV_WARNING,
	  "fp8 and torch_compile under plain DDP",
	  "use FSDP2",
	  check_precision_fp8_ddp },
	{ "precision.fp8_fsdp_activation_checkpointing", SEV_WARNING,
	  "fp8 with FSDP activation checkpointing",
	  "use gradient_checkpointing instead",
	  check_precision_fp8_fsdp_ac },
	{ "precision.fp8_gpu_support", SEV_ERROR,
	  "fp8 training on a GPU without fp8",
	  "set fp8: false, or use a Hopper-class GPU",
	  check_precision_fp8_gpu },
	{ "precision.fp8_without_compile", SEV_WARNING,
	  "fp8 without torch_compile",
	  "set torch_compile: true",
	  check_precision_fp8_compile },
	{ "precision.tf32_auto", SEV_INFO,
	  "tf32: auto is resolved from the GPU",
	  "set tf32 to decide",
	  check_precision_tf32 },
};
const size_t rules_precision_len =
    sizeof(rules_precision) / sizeof(rules_precision[0]);
