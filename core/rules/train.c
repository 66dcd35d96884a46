/*
 * core/rules/train: training hyperparameters that Axolotl's validators
 * relate to each other: warmup, NEFTune noise.  Pure: a rule reads the
 * config through its struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/* train.neftune_alpha_positive: ComplexValidationMixin's field validator
   validate_neftune_noise_alpha (noisy_embedding_alpha is copied to
   neftune_noise_alpha first: the rules' view). */
static int
check_train_neftune(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "neftune_noise_alpha");
	double v;

	if (p == NULL || !node_num(p->value, &v) || v > 0.0)
		return 0;
	return rule_report(rc, p, "neftune_noise_alpha must be > 0, got %g",
	    v);
}

/* train.warmup_steps_and_ratio: TrainingValidationMixin.check_warmup. */
static int
check_train_warmup(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "warmup_steps") || !cfg_on(rc, "warmup_ratio"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "warmup_ratio"), "warmup_steps "
	    "and warmup_ratio are both set; Axolotl takes one of them");
}

const struct rule_row rules_train[] = {
	{ "train.neftune_alpha_positive", SEV_ERROR,
	  "neftune_noise_alpha that is not positive",
	  "set neftune_noise_alpha > 0, or remove it",
	  check_train_neftune },
	{ "train.warmup_steps_and_ratio", SEV_ERROR,
	  "warmup_steps and warmup_ratio together",
	  "keep one of warmup_steps and warmup_ratio",
	  check_train_warmup },
};
const size_t rules_train_len =
    sizeof(rules_train) / sizeof(rules_train[0]);
