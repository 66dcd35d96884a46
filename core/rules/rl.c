/*
 * core/rules/rl: preference and RL training (rl: dpo, ipo, gdpo, simpo,
 * ebft, ...): the options each trainer takes.  The conditions are Axolotl's
 * RLValidationMixin, ComplexValidationMixin, EBFTValidationMixin and
 * AxolotlConfigWCapabilities.check_beta_and_trl_beta_match.  Pure: a rule
 * reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/* rl.beta_mismatch: a top-level beta (not a schema key, but the validator
   reads it) and trl.beta must match. */
static int
check_rl_beta(struct rule_ctx *rc)
{
	const struct doc_pair *b = cfg_pair(rc, "beta");
	const struct doc_pair *trl = cfg_pair(rc, "trl");
	const struct doc_node *tb;

	if (b == NULL || !doc_truthy(b->value))
		return 0;
	if (trl != NULL && trl->value->kind != DOC_MAP)
		return rule_report(rc, trl, "beta is set and trl is not a "
		    "mapping: Axolotl's validator fails reading trl.beta");
	tb = trl != NULL ? doc_map_value(trl->value, "beta") : NULL;
	if (tb == NULL || !doc_truthy(tb) || node_eq(b->value, tb))
		return 0;
	return rule_report(rc, b, "beta and trl.beta differ; keep one or "
	    "make them equal");
}

/* rl.dpo_loss_options: RLValidationMixin.check_dpo. */
static int
check_rl_dpo_loss(struct rule_ctx *rc)
{
	const struct doc_pair *t = cfg_pair(rc, "dpo_loss_type");
	const struct doc_pair *w = cfg_pair(rc, "dpo_loss_weights");
	bool ht = t != NULL && t->value->kind != DOC_NULL;
	bool hw = w != NULL && w->value->kind != DOC_NULL;

	if (!cfg_is(rc, "rl", "dpo")) {
		if (!ht && !hw)
			return 0;
		return rule_report(rc, ht ? t : w, "dpo_loss_type and "
		    "dpo_loss_weights are for rl: dpo only");
	}
	if (hw && !ht)
		return rule_report(rc, w, "dpo_loss_weights needs "
		    "dpo_loss_type");
	if (ht && hw && t->value->kind == DOC_SEQ &&
	    w->value->kind == DOC_SEQ && t->value->n != w->value->n)
		return rule_report(rc, w, "dpo_loss_type has %zu losses and "
		    "dpo_loss_weights %zu weights; they must match",
		    t->value->n, w->value->n);
	return 0;
}

/* rl.ebft_refused: with rl: ebft, EBFTValidationMixin refuses a config
   without an ebft section, and with one its after-validators call .get()
   on the parsed EBFTConfig, which fails: this Axolotl commit accepts no
   rl: ebft config. */
static int
check_rl_ebft(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "rl", "ebft"))
		return 0;
	if (!cfg_on(rc, "ebft"))
		return rule_report(rc, cfg_pair(rc, "rl"), "rl: ebft needs an "
		    "ebft: section (mode: structured or strided)");
	return rule_report(rc, cfg_pair(rc, "ebft"), "rl: ebft with an ebft "
	    "section fails Axolotl's validation at this version "
	    "(check_ebft_gradient_checkpointing_reentrant calls .get on the "
	    "parsed section)");
}

/* rl.gdpo_aggregation */
static int
check_rl_gdpo(struct rule_ctx *rc)
{
	const struct doc_pair *trl = cfg_pair(rc, "trl");

	if (!cfg_is(rc, "rl", "gdpo") || trl == NULL)
		return 0;
	if (trl->value->kind != DOC_MAP)
		return rule_report(rc, trl, "rl: gdpo with trl that is not a "
		    "mapping: Axolotl's validator fails reading it");
	if (!node_is(doc_map_value(trl->value, "multi_objective_aggregation"),
	    "sum_then_normalize"))
		return 0;
	return rule_report(rc, trl, "trl.multi_objective_aggregation: "
	    "sum_then_normalize is GRPO's; rl: gdpo refuses it");
}

/* rl.simpo_warmup_ratio */
static int
check_rl_simpo_warmup(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_is(rc, "rl", "simpo") || !cfg_on(rc, "warmup_ratio"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "warmup_ratio"), "the simpo "
	    "trainer does not take warmup_ratio; use warmup_steps");
}

const struct rule_row rules_rl[] = {
	{ "rl.beta_mismatch", SEV_ERROR,
	  "a top-level beta that differs from trl.beta",
	  "keep only trl.beta",
	  check_rl_beta },
	{ "rl.dpo_loss_options", SEV_ERROR,
	  "dpo_loss_type / dpo_loss_weights used wrongly",
	  "with rl: dpo give dpo_loss_type, and weights of the same length",
	  check_rl_dpo_loss },
	{ "rl.ebft_refused", SEV_ERROR,
	  "rl: ebft, which this Axolotl version cannot validate",
	  "use another rl trainer, or an Axolotl version that fixes EBFT",
	  check_rl_ebft },
	{ "rl.gdpo_aggregation", SEV_ERROR,
	  "rl: gdpo with GRPO's reward aggregation",
	  "remove trl.multi_objective_aggregation, or use rl: grpo",
	  check_rl_gdpo },
	{ "rl.simpo_warmup_ratio", SEV_ERROR,
	  "warmup_ratio with rl: simpo",
	  "use warmup_steps",
	  check_rl_simpo_warmup },
};
const size_t rules_rl_len = sizeof(rules_rl) / sizeof(rules_rl[0]);
