/*
 * core/rules/compile: torch_compile, its options and DeepSpeed
 * deepcompile.  Pure: a rule reads the config through its struct rule_ctx
 * and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/plan.h"

/* compile.auto_resolution */
static int
check_compile_auto(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "torch_compile", "auto"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "torch_compile"), "torch_compile: auto "
	    "is %s with torch %d.%d", rc->ctx->torch >= 2051 ? "on" : "off",
	    rc->ctx->torch / 1000, rc->ctx->torch % 1000 / 10);
}

/* compile.deepcompile_ignored_with_compile_block */
static int
check_compile_deepcompile_block(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepcompile") || rc->plan->ds_map == NULL ||
	    doc_map_get(rc->plan->ds_map, "compile") == NULL)
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepcompile"), "the DeepSpeed config "
	    "already has a compile block; deepcompile is ignored");
}

/* compile.deepcompile_requires_deepspeed */
static int
check_compile_deepcompile(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepcompile") || cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepcompile"), "deepcompile needs "
	    "deepspeed");
}

/* compile.ebft_strided */
static int
check_compile_ebft(struct rule_ctx *rc)
{
	const struct doc_pair *mode = cfg_sub(rc, "ebft", "mode");

	if (!cfg_is(rc, "rl", "ebft") || mode == NULL ||
	    mode->value->kind != DOC_STR ||
	    strcmp(mode->value->text, "strided") != 0 ||
	    !cfg_true(rc, "torch_compile"))
		return 0;
	if (cfg_on(rc, "gradient_checkpointing"))
		return rule_report(rc, cfg_pair(rc, "torch_compile"), "strided EBFT "
		    "with torch_compile and gradient checkpointing is refused");
	return rule_report_sev(rc, cfg_pair(rc, "torch_compile"), SEV_WARNING,
	    "strided EBFT with torch_compile is not validated");
}

/* compile.options_disallowed_key */
static int
check_compile_options_keys(struct rule_ctx *rc)
{
	/* INDUCTOR_COMPILE_OPTIONS_ALLOWLIST (schemas/enums.py). */
	static const char *const ok[] = { "coordinate_descent_tuning",
	    "coordinate_descent_check_all_directions", "shape_padding",
	    "epilogue_fusion", "max_autotune_gemm", "fx_graph_cache",
	    "assume_aligned_inputs", "comprehensive_padding",
	    "decompose_mem_bound_mm", "triton.cudagraphs" };
	const struct doc_pair *p = cfg_pair(rc, "torch_compile_options");
	size_t i, k;

	if (p == NULL || p->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < p->value->n; i++) {
		const struct doc_pair *kv = &p->value->pairs[i];
		bool good = false;

		for (k = 0; k < sizeof(ok) / sizeof(ok[0]); k++)
			if (kv->key->text != NULL &&
			    strcmp(kv->key->text, ok[k]) == 0)
				good = true;
		if (!good)
			return rule_report(rc, kv, "torch_compile_options."
			    "%.60s is not an option Axolotl passes on",
			    kv->key->text != NULL ? kv->key->text : "?");
	}
	return 0;
}

/* compile.options_require_compile */
static int
check_compile_options_need(struct rule_ctx *rc)
{
	const struct doc_pair *tc;

	use_parsed(rc);  /* an after-validator */
	tc = cfg_pair(rc, "torch_compile");

	if (!cfg_set(rc, "torch_compile_options") || (tc != NULL &&
	    (doc_truthy(tc->value))))
		return 0;
	return rule_report(rc, cfg_pair(rc, "torch_compile_options"),
	    "torch_compile_options needs torch_compile: true");
}

const struct rule_row rules_compile[] = {
	{ "compile.auto_resolution", SEV_INFO,
	  "torch_compile: auto is resolved",
	  "set true or false to decide",
	  check_compile_auto },
	{ "compile.deepcompile_ignored_with_compile_block", SEV_WARNING,
	  "deepcompile with a compile block in the DeepSpeed config",
	  "drop one of them",
	  check_compile_deepcompile_block },
	{ "compile.deepcompile_requires_deepspeed", SEV_ERROR,
	  "deepcompile without DeepSpeed",
	  "set deepspeed, or drop deepcompile",
	  check_compile_deepcompile },
	{ "compile.ebft_strided", SEV_ERROR,
	  "strided EBFT with torch_compile",
	  "turn torch_compile off",
	  check_compile_ebft },
	{ "compile.options_disallowed_key", SEV_ERROR,
	  "a torch_compile_options key Axolotl does not pass",
	  "remove the key",
	  check_compile_options_keys },
	{ "compile.options_require_compile", SEV_ERROR,
	  "torch_compile_options without torch_compile",
	  "set torch_compile: true",
	  check_compile_options_need },
};
const size_t rules_compile_len =
    sizeof(rules_compile) / sizeof(rules_compile[0]);
