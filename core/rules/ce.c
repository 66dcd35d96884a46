/*
 * core/rules/ce: cross-entropy optimizations: cut_cross_entropy, chunked
 * cross entropy and the Liger losses, one at a time.  Pure: a rule reads
 * the config through its struct rule_ctx and reports (docs/rules-
 * howto.md).
 */
#include "core/rules_int.h"

/* ce.cce_plugin_default_on */
static int
check_ce_cce_default(struct rule_ctx *rc)
{
	if (!cfg_plugin(rc, "CutCrossEntropyPlugin") ||
	    cfg_set(rc, "cut_cross_entropy"))
		return 0;
	if (cfg_on(rc, "liger_cross_entropy") ||
	    cfg_on(rc, "liger_fused_linear_cross_entropy"))
		return rule_report(rc, cfg_pair(rc, "plugins"), "the CutCrossEntropy "
		    "plugin turns cut_cross_entropy on, which conflicts with "
		    "the Liger cross-entropy flags");
	if (!cfg_set(rc, "bf16") && !cfg_set(rc, "fp16"))
		return rule_report(rc, cfg_pair(rc, "plugins"), "the CutCrossEntropy "
		    "plugin turns cut_cross_entropy on, which needs bf16 or "
		    "fp16 written in the config");
	return 0;
}

/* ce.cce_with_chunked_ce */
static int
check_ce_cce_chunked(struct rule_ctx *rc)
{
	if (!plugin_on(rc, "cut_cross_entropy") ||
	    !cfg_on(rc, "chunked_cross_entropy"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "chunked_cross_entropy"),
	    "chunked_cross_entropy does not work with the CutCrossEntropy "
	    "plugin listed");
}

/* ce.liger_ce_and_flce */
static int
check_ce_liger_pair(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "liger_cross_entropy") ||
	    !cfg_on(rc, "liger_fused_linear_cross_entropy"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "liger_cross_entropy"),
	    "liger_cross_entropy and liger_fused_linear_cross_entropy are "
	    "two losses; keep one");
}

/* ce.liger_glu_with_tiled_mlp: LigerArgs.check_tiled_mlp_conflict. */
static int
check_ce_glu_tiled(struct rule_ctx *rc)
{
	if (!plugin_on(rc, "liger") || !cfg_true(rc, "liger_glu_activation") ||
	    !cfg_true(rc, "tiled_mlp") ||
	    cfg_on(rc, "tiled_mlp_use_original_mlp"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "tiled_mlp"), "tiled_mlp with "
	    "liger_glu_activation needs tiled_mlp_use_original_mlp: true");
}

/* ce.liger_swiglu_renamed: LigerArgs.check_deprecated_swiglu. */
static int
check_ce_liger_swiglu(struct rule_ctx *rc)
{
	if (!plugin_on(rc, "liger") || !cfg_set(rc, "liger_swiglu"))
		return 0;
	if (cfg_set(rc, "liger_glu_activation"))
		return rule_report_sev(rc, cfg_pair(rc, "liger_swiglu"), SEV_ERROR,
		    "liger_swiglu and its new name liger_glu_activation are "
		    "both set");
	return rule_report(rc, cfg_pair(rc, "liger_swiglu"), "liger_swiglu is "
	    "renamed liger_glu_activation");
}

/* ce.liger_token_scaling_requires_flce: LigerArgs'
   check_liger_use_token_scaling_flce. */
static int
check_ce_token_scaling(struct rule_ctx *rc)
{
	if (!plugin_on(rc, "liger") || !cfg_on(rc, "liger_use_token_scaling") ||
	    cfg_on(rc, "liger_fused_linear_cross_entropy"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "liger_use_token_scaling"),
	    "liger_use_token_scaling needs liger_fused_linear_cross_entropy");
}

/* ce.single_optimization */
static int
check_ce_single(struct rule_ctx *rc)
{
	static const char *const k[] = { "cut_cross_entropy",
	    "chunked_cross_entropy", "liger_cross_entropy",
	    "liger_fused_linear_cross_entropy" };
	const char *on[4];
	int n = 0, i;

	for (i = 0; i < 4; i++)
		if (cfg_on(rc, k[i]))
			on[n++] = k[i];
	/* Only the Liger pair: ce.liger_ce_and_flce says it. */
	if (n < 2 || (n == 2 && strncmp(on[0], "liger", 5) == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, on[1]), "%s and %s are both on; "
	    "Axolotl takes one cross-entropy optimization", on[0], on[1]);
}

const struct rule_row rules_ce[] = {
	{ "ce.cce_plugin_default_on", SEV_ERROR,
	  "the CutCrossEntropy plugin on by default in a conflicting config",
	  "set cut_cross_entropy explicitly",
	  check_ce_cce_default },
	{ "ce.cce_with_chunked_ce", SEV_ERROR,
	  "chunked cross entropy with the CutCrossEntropy plugin",
	  "remove chunked_cross_entropy",
	  check_ce_cce_chunked },
	{ "ce.liger_ce_and_flce", SEV_ERROR,
	  "two Liger cross-entropy losses",
	  "keep liger_fused_linear_cross_entropy only",
	  check_ce_liger_pair },
	{ "ce.liger_glu_with_tiled_mlp", SEV_ERROR,
	  "Liger GLU with tiled_mlp",
	  "set tiled_mlp_use_original_mlp: true",
	  check_ce_glu_tiled },
	{ "ce.liger_swiglu_renamed", SEV_WARNING,
	  "liger_swiglu is renamed",
	  "rename it to liger_glu_activation",
	  check_ce_liger_swiglu },
	{ "ce.liger_token_scaling_requires_flce", SEV_ERROR,
	  "Liger token scaling without fused linear cross entropy",
	  "set liger_fused_linear_cross_entropy: true",
	  check_ce_token_scaling },
	{ "ce.single_optimization", SEV_ERROR,
	  "more than one cross-entropy optimization",
	  "keep one of cut_cross_entropy, chunked_cross_entropy, the Liger losses",
	  check_ce_single },
};
const size_t rules_ce_len =
    sizeof(rules_ce) / sizeof(rules_ce[0]);
