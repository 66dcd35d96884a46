/*
 * core/rules/eval: evaluation settings: eval_strategy, eval_steps,
 * evals_per_epoch, val_set_size, test_datasets, bench and causal-LM evals.
 * Each rule is one of Axolotl's before-validators (TrainingValidationMixin
 * check_evals and check_causal_lm_evals, DatasetValidationMixin
 * check_val_w_test_datasets), which read the values as written, with
 * evaluation_strategy already copied to eval_strategy (the rules' view).
 * Pure: a rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/* eval_strategy is set to something other than "steps". */
static bool
strategy_not_steps(const struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "eval_strategy");

	return p != NULL && doc_truthy(p->value) && !node_is(p->value,
	    "steps");
}

/* eval.bench_needs_schedule */
static int
check_eval_bench(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "do_bench_eval") || cfg_on(rc, "evals_per_epoch") ||
	    cfg_on(rc, "eval_steps"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "do_bench_eval"), "do_bench_eval "
	    "needs evals_per_epoch or eval_steps; Axolotl refuses the config");
}

/* eval.causal_lm_metrics: only sacrebleu, comet, ter, chrf, perplexity. */
static int
check_eval_metrics(struct rule_ctx *rc)
{
	static const char *const ok[] = { "sacrebleu", "comet", "ter",
	    "chrf", "perplexity" };
	const struct doc_pair *p = cfg_pair(rc, "eval_causal_lm_metrics");
	size_t i, k;

	if (p == NULL || !doc_truthy(p->value))
		return 0;
	if (p->value->kind != DOC_SEQ)
		return rule_report(rc, p, "eval_causal_lm_metrics must be a "
		    "list");
	for (i = 0; i < p->value->n; i++) {
		const struct doc_node *v = p->value->items[i];
		bool good = false;

		for (k = 0; k < sizeof(ok) / sizeof(ok[0]); k++)
			if (node_is(v, ok[k]))
				good = true;
		if (!good)
			return rule_report(rc, p, "eval_causal_lm_metrics item "
			    "'%.40s' is not one of sacrebleu, comet, ter, chrf, "
			    "perplexity", v->text != NULL ? v->text : "?");
	}
	return 0;
}

/* eval.no_validation_split */
static int
check_eval_no_split(struct rule_ctx *rc)
{
	const struct doc_pair *v = cfg_pair(rc, "val_set_size");

	/* val_set_size == 0 written out (absent is None, not 0); with
	   do_bench_eval Axolotl adds an empty test dataset first. */
	if (v == NULL || !node_is_zero(v->value) ||
	    !(cfg_on(rc, "eval_steps") || cfg_on(rc, "eval_strategy")) ||
	    cfg_on(rc, "test_datasets") || cfg_on(rc, "do_bench_eval") ||
	    cfg_is(rc, "eval_strategy", "no"))
		return 0;
	return rule_report(rc, v, "val_set_size is 0, so there is nothing "
	    "to evaluate, but %s is set; Axolotl refuses the config",
	    cfg_on(rc, "eval_steps") ? "eval_steps" : "eval_strategy");
}

/* eval.per_epoch_strategy */
static int
check_eval_per_epoch_strategy(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "evals_per_epoch") || !strategy_not_steps(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_strategy"), "evals_per_epoch "
	    "needs eval_strategy empty or steps");
}

/* eval.steps_and_per_epoch */
static int
check_eval_steps_per_epoch(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "evals_per_epoch") || !cfg_on(rc, "eval_steps"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_steps"), "eval_steps and "
	    "evals_per_epoch are both set; keep one");
}

/* eval.strategy_steps_mismatch */
static int
check_eval_strategy_steps(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "eval_steps") || !strategy_not_steps(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_strategy"), "eval_steps is "
	    "set, so eval_strategy must be steps");
}

/* eval.val_set_with_test_datasets */
static int
check_eval_val_and_test(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "test_datasets") || !cfg_on(rc, "val_set_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "val_set_size"), "val_set_size "
	    "and test_datasets are both set; Axolotl evaluates on one of "
	    "them and refuses the config");
}

const struct rule_row rules_eval[] = {
	{ "eval.bench_needs_schedule", SEV_ERROR,
	  "do_bench_eval without an evaluation schedule",
	  "set evals_per_epoch or eval_steps",
	  check_eval_bench },
	{ "eval.causal_lm_metrics", SEV_ERROR,
	  "eval_causal_lm_metrics that is not a list of known metrics",
	  "list some of sacrebleu, comet, ter, chrf, perplexity",
	  check_eval_metrics },
	{ "eval.no_validation_split", SEV_ERROR,
	  "evaluation is scheduled but val_set_size is 0",
	  "set val_set_size > 0, add test_datasets, or remove eval_steps / "
	  "eval_strategy",
	  check_eval_no_split },
	{ "eval.per_epoch_strategy", SEV_ERROR,
	  "evals_per_epoch with an eval_strategy other than steps",
	  "remove eval_strategy, or set it to steps",
	  check_eval_per_epoch_strategy },
	{ "eval.steps_and_per_epoch", SEV_ERROR,
	  "eval_steps and evals_per_epoch together",
	  "keep one of eval_steps and evals_per_epoch",
	  check_eval_steps_per_epoch },
	{ "eval.strategy_steps_mismatch", SEV_ERROR,
	  "eval_steps with an eval_strategy other than steps",
	  "set eval_strategy: steps, or remove eval_steps",
	  check_eval_strategy_steps },
	{ "eval.val_set_with_test_datasets", SEV_ERROR,
	  "val_set_size and test_datasets together",
	  "keep one of val_set_size and test_datasets",
	  check_eval_val_and_test },
};
const size_t rules_eval_len =
    sizeof(rules_eval) / sizeof(rules_eval[0]);
