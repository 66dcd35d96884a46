/*
 * core/rules/train: training hyperparameters that Axolotl's validators
 * relate to each other: warmup, NEFTune noise.  Pure: a rule reads the
 * config through its struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/types.h"

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

/* train.learning_rate_number: HyperparametersConfig.convert_learning_rate
   turns a string into a float (learning_rate takes str or float). */
static int
check_train_lr(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "learning_rate");

	if (p == NULL || p->value->kind != DOC_STR || p->value->len == 0 ||
	    ty_python_float(p->value->text, p->value->len))
		return 0;
	return rule_report(rc, p, "learning_rate '%.40s' is not a number",
	    p->value->text);
}

/* train.reward_model_padding: TrainingValidationMixin.
   hint_reward_model_pad (a warning). */
static int
check_train_reward_pad(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "reward_model") || cfg_on(rc, "pad_to_sequence_len"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "reward_model"), "a reward model "
	    "trains best with pad_to_sequence_len: true");
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
	{ "train.learning_rate_number", SEV_ERROR,
	  "a learning_rate string that is not a number",
	  "write learning_rate as a number (2.0e-5)",
	  check_train_lr },
	{ "train.neftune_alpha_positive", SEV_ERROR,
	  "neftune_noise_alpha that is not positive",
	  "set neftune_noise_alpha > 0, or remove it",
	  check_train_neftune },
	{ "train.reward_model_padding", SEV_WARNING,
	  "reward_model without pad_to_sequence_len",
	  "set pad_to_sequence_len: true",
	  check_train_reward_pad },
	{ "train.warmup_steps_and_ratio", SEV_ERROR,
	  "warmup_steps and warmup_ratio together",
	  "keep one of warmup_steps and warmup_ratio",
	  check_train_warmup },
};
const size_t rules_train_len =
    sizeof(rules_train) / sizeof(rules_train[0]);
