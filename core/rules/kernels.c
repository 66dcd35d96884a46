/*
 * core/rules/kernels: the options of Axolotl's KernelsPlugin (MoE expert
 * backends, DeepSeek-V4 and GLM kernels, NVFP4 merge-aware LoRA, non-expert
 * quantization).  They exist only with the plugin listed, so every rule
 * here needs it; the conditions are KernelsArgs' before-validators, which
 * read the values as written after expert_backend has set use_scattermoe
 * or use_sonicmoe.  Pure: a rule reads the config through its struct
 * rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include <stdio.h>

/* expert_backend, lowercased, or NULL when not written. */
static const char *
expert_backend(const struct rule_ctx *rc, char *buf, size_t cap)
{
	const struct doc_pair *p = cfg_pair(rc, "expert_backend");

	if (p == NULL || p->value->kind == DOC_NULL)
		return NULL;
	return node_lower(p->value, buf, cap);
}

/* use_scattermoe / use_sonicmoe after expert_backend sets one of them. */
static bool
backend_on(const struct rule_ctx *rc, const char *flag, const char *name)
{
	char buf[32];
	const char *eb = expert_backend(rc, buf, sizeof(buf));

	return cfg_on(rc, flag) || (eb != NULL && strcmp(eb, name) == 0);
}

/* A string value of key, lowercased (Python str(v).lower()), must be one
   of the words in ok (NULL-terminated); *bad gets the pair otherwise. */
static bool
word_of(const struct rule_ctx *rc, const char *key,
    const char *const *ok, const struct doc_pair **bad)
{
	const struct doc_pair *p = cfg_pair(rc, key);
	char buf[64];
	const char *v;

	*bad = NULL;
	if (p == NULL || p->value->kind == DOC_NULL)
		return true;
	v = node_lower(p->value, buf, sizeof(buf));
	for (; *ok != NULL; ok++)
		if (strcmp(v, *ok) == 0)
			return true;
	*bad = p;
	return false;
}

/* kernels.dsv4_attention_lora */
static int
check_kernels_dsv4_lora(struct rule_ctx *rc)
{
	if (!plugin_on(rc, "kernels") || !cfg_on(rc, "use_dsv4_kernels") ||
	    !(cfg_on(rc, "lora_target_modules") ||
	    cfg_on(rc, "lora_target_linear")) ||
	    cfg_on(rc, "lora_exclude_modules"))
		return 0;
	return rule_report(rc, cfg_first(rc, "lora_target_modules",
	    "lora_target_linear"), "attention/module-level LoRA does not work "
	    "with use_dsv4_kernels; target the experts with "
	    "lora_target_parameters, or exclude the indexer projections with "
	    "lora_exclude_modules");
}

/* kernels.dsv4_fp4_grouped_mode */
static int
check_kernels_fp4_grouped(struct rule_ctx *rc)
{
	static const char *const ok[] = { "nvfp4", NULL };
	const struct doc_pair *bad;

	if (!plugin_on(rc, "kernels") ||
	    word_of(rc, "dsv4_fp4_grouped_mode", ok, &bad))
		return 0;
	return rule_report(rc, bad, "dsv4_fp4_grouped_mode must be nvfp4 "
	    "(fp8 is not implemented for training)");
}

/* kernels.dsv4_fp8_nonexpert_mode */
static int
check_kernels_fp8_nonexpert(struct rule_ctx *rc)
{
	static const char *const ok[] = { "float8tensor", "bf16", NULL };
	const struct doc_pair *bad;

	if (!plugin_on(rc, "kernels") ||
	    word_of(rc, "dsv4_fp8_nonexpert_mode", ok, &bad))
		return 0;
	return rule_report(rc, bad, "dsv4_fp8_nonexpert_mode must be "
	    "float8tensor or bf16");
}

/* kernels.expert_backend_values: _canonicalize_expert_backend. */
static int
check_kernels_expert_backend(struct rule_ctx *rc)
{
	static const char *const ok[] = { "scattermoe", "sonicmoe", "eager",
	    "builtin", NULL };
	const struct doc_pair *bad;
	char buf[32];
	const char *eb;
	const struct doc_pair *s = cfg_pair(rc, "use_scattermoe");
	const struct doc_pair *o = cfg_pair(rc, "use_sonicmoe");

	if (!plugin_on(rc, "kernels"))
		return 0;
	if (!word_of(rc, "expert_backend", ok, &bad))
		return rule_report(rc, bad, "expert_backend must be scattermoe, "
		    "sonicmoe, eager or builtin");
	eb = expert_backend(rc, buf, sizeof(buf));
	if (eb == NULL)
		return 0;
	if (s != NULL && node_is_true(s->value) &&
	    strcmp(eb, "scattermoe") != 0)
		return rule_report(rc, s, "expert_backend %s conflicts with "
		    "use_scattermoe: true; set only one", eb);
	if (o != NULL && node_is_true(o->value) && strcmp(eb, "sonicmoe") != 0)
		return rule_report(rc, o, "expert_backend %s conflicts with "
		    "use_sonicmoe: true; set only one", eb);
	return 0;
}

/* kernels.moe_dequant_chunk_size: a positive integer (an integral float
   or a numeric string is taken, a bool is not). */
static int
check_kernels_chunk(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "moe_dequant_chunk_size");
	const struct doc_node *v;
	bool ok = false;

	if (!plugin_on(rc, "kernels") || p == NULL ||
	    p->value->kind == DOC_NULL)
		return 0;
	v = p->value;
	if (v->kind == DOC_INT)
		ok = v->i > 0 || v->big;
	else if (v->kind == DOC_FLOAT)
		ok = v->f >= 1.0 && v->f == (double)(long long)v->f;
	else if (v->kind == DOC_STR) {
		/* int(str): optional sign and blanks, decimal digits. */
		const char *t = v->text;
		long long n = 0;
		bool digits = false, neg = false;

		while (*t == ' ' || *t == '\t')
			t++;
		if (*t == '+' || *t == '-')
			neg = *t++ == '-';
		for (; (*t >= '0' && *t <= '9') || (*t == '_' && digits); t++)
			if (*t != '_') {
				n = n < 1000000000 ? n * 10 + (*t - '0') : n;
				digits = true;
			}
		while (*t == ' ' || *t == '\t')
			t++;
		ok = digits && *t == '\0' && !neg && n > 0;
	}
	if (ok)
		return 0;
	return rule_report(rc, p, "moe_dequant_chunk_size must be a positive "
	    "integer");
}

/* kernels.moe_grouped_backend */
static int
check_kernels_grouped_backend(struct rule_ctx *rc)
{
	static const char *const ok[] = { "auto", "marlin", "cutlass",
	    "deepgemm", NULL };
	const struct doc_pair *bad;

	if (!plugin_on(rc, "kernels") ||
	    word_of(rc, "moe_grouped_backend", ok, &bad))
		return 0;
	return rule_report(rc, bad, "moe_grouped_backend must be auto, marlin, "
	    "cutlass or deepgemm (dequant is not implemented for training)");
}

/* kernels.nonexpert_quantization */
static int
check_kernels_nonexpert(struct rule_ctx *rc)
{
	static const char *const ok[] = { "none", "bf16", "fp8",
	    "fp8_blockwise", "nf4", "nvfp4", NULL };
	const struct doc_pair *bad;

	if (!plugin_on(rc, "kernels") ||
	    word_of(rc, "nonexpert_quantization", ok, &bad))
		return 0;
	return rule_report(rc, bad, "nonexpert_quantization must be none, "
	    "bf16, fp8, fp8_blockwise, nf4 or nvfp4");
}

/* kernels.nvfp4_merge_aware: KernelsArgs.check_nvfp4_merge_aware. */
static int
check_kernels_nvfp4(struct rule_ctx *rc)
{
	const struct doc_pair *st = cfg_pair(rc, "nvfp4_merge_aware_start_step");

	if (!plugin_on(rc, "kernels"))
		return 0;
	if (!cfg_on(rc, "nvfp4_merge_aware")) {
		if (st != NULL && st->value->kind != DOC_NULL)
			return rule_report(rc, st, "nvfp4_merge_aware_start_step "
			    "needs nvfp4_merge_aware: true");
		return 0;
	}
	if (!backend_on(rc, "use_sonicmoe", "sonicmoe"))
		return rule_report(rc, cfg_pair(rc, "nvfp4_merge_aware"),
		    "nvfp4_merge_aware needs the sonicmoe expert backend");
	if (!cfg_is(rc, "adapter", "lora"))
		return rule_report(rc, cfg_pair(rc, "nvfp4_merge_aware"),
		    "nvfp4_merge_aware needs adapter: lora");
	/* The lora_*_kernel flags are lora_kernels.nvfp4_merge_aware_
	   conflict's. */
	if (st != NULL && st->value->kind != DOC_NULL &&
	    (st->value->kind == DOC_BOOL ||
	    (st->value->kind == DOC_FLOAT && !(st->value->f > 0.0 &&
	    st->value->f < 1.0)) ||
	    (st->value->kind == DOC_INT && st->value->i < 0 && !st->value->big)))
		return rule_report(rc, st, "nvfp4_merge_aware_start_step must be "
		    "an int >= 0 or a float in (0, 1)");
	return 0;
}

const struct rule_row rules_kernels[] = {
	{ "kernels.dsv4_attention_lora", SEV_ERROR,
	  "module-level LoRA with the DeepSeek-V4 kernels",
	  "use lora_target_parameters, or set lora_exclude_modules",
	  check_kernels_dsv4_lora },
	{ "kernels.dsv4_fp4_grouped_mode", SEV_ERROR,
	  "a dsv4_fp4_grouped_mode other than nvfp4",
	  "set dsv4_fp4_grouped_mode: nvfp4, or remove it",
	  check_kernels_fp4_grouped },
	{ "kernels.dsv4_fp8_nonexpert_mode", SEV_ERROR,
	  "a dsv4_fp8_nonexpert_mode Axolotl does not know",
	  "use float8tensor or bf16",
	  check_kernels_fp8_nonexpert },
	{ "kernels.expert_backend_values", SEV_ERROR,
	  "an unknown expert_backend, or one that contradicts use_scattermoe / "
	  "use_sonicmoe",
	  "use scattermoe, sonicmoe, eager or builtin, and drop the legacy "
	  "flag",
	  check_kernels_expert_backend },
	{ "kernels.moe_dequant_chunk_size", SEV_ERROR,
	  "moe_dequant_chunk_size that is not a positive integer",
	  "set a positive integer, or remove it",
	  check_kernels_chunk },
	{ "kernels.moe_grouped_backend", SEV_ERROR,
	  "a moe_grouped_backend Axolotl does not know",
	  "use auto, marlin, cutlass or deepgemm",
	  check_kernels_grouped_backend },
	{ "kernels.nonexpert_quantization", SEV_ERROR,
	  "a nonexpert_quantization Axolotl does not know",
	  "use none, bf16, fp8, fp8_blockwise, nf4 or nvfp4",
	  check_kernels_nonexpert },
	{ "kernels.nvfp4_merge_aware", SEV_ERROR,
	  "nvfp4_merge_aware without what it needs",
	  "use expert_backend: sonicmoe and adapter: lora",
	  check_kernels_nvfp4 },
};
const size_t rules_kernels_len =
    sizeof(rules_kernels) / sizeof(rules_kernels[0]);
