/*
 * core/rules/save: checkpoint saving: save_strategy, save_steps, early
 * stopping, safetensors.  Pure: a rule reads the config through its struct
 * rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include <math.h>

/* save.best_requires_metric */
static int
check_save_best_metric(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "save_strategy", "best") ||
	    cfg_on(rc, "metric_for_best_model"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "save_strategy"),
	    "save_strategy: best needs metric_for_best_model");
}

/* save.early_stopping_steps */
static int
check_save_early_stopping(struct rule_ctx *rc)
{
	const struct doc_pair *sv;
	const struct doc_pair *ev;
	double s, e;

	use_parsed(rc);  /* an after-validator */
	sv = cfg_pair(rc, "save_steps");
	ev = cfg_pair(rc, "eval_steps");

	/* ComplexValidationMixin.check_early_stopping: truthiness, then
	   Python's save_steps % eval_steps. */
	if (!cfg_on(rc, "early_stopping_patience"))
		return 0;
	if (sv == NULL || ev == NULL || !doc_truthy(sv->value) ||
	    !doc_truthy(ev->value))
		return rule_report(rc, cfg_pair(rc, "early_stopping_patience"),
		    "early_stopping_patience needs save_steps and eval_steps");
	if (node_num(sv->value, &s) && node_num(ev->value, &e) && e != 0.0 &&
	    fmod(s, e) != 0.0)
		return rule_report(rc, sv, "save_steps (%g) must be a multiple "
		    "of eval_steps (%g) for early stopping", s, e);
	return 0;
}

/* save.hub_without_save: TrainingValidationMixin.check_push_save (a
   warning). */
static int
check_save_hub(struct rule_ctx *rc)
{
	const struct doc_pair *st = cfg_pair(rc, "save_strategy");

	if (!cfg_on(rc, "hub_model_id") || st == NULL ||
	    st->value->kind == DOC_NULL || node_is(st->value, "steps") ||
	    node_is(st->value, "epoch"))
		return 0;
	return rule_report(rc, st, "hub_model_id is set but save_strategy is "
	    "not steps or epoch: nothing is pushed");
}

/* save.safetensors_false */
static int
check_save_safetensors(struct rule_ctx *rc)
{
	if (!cfg_false(rc, "save_safetensors"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "save_safetensors"),
	    "save_safetensors: false is refused; Axolotl saves safetensors");
}

/* save.saves_per_epoch_conversion */
static int
check_save_per_epoch(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "saves_per_epoch"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "saves_per_epoch"), "saves_per_epoch "
	    "is converted to save_steps from the dataset length");
}

/* save.strategy_steps_mismatch */
static int
check_save_strategy_steps(struct rule_ctx *rc)
{
	const char *st = cfg_str(rc, "save_strategy");

	if (cfg_on(rc, "save_steps") && st != NULL && *st != '\0' &&
	    strcmp(st, "steps") != 0)
		return rule_report(rc, cfg_pair(rc, "save_strategy"),
		    "save_steps is set, so save_strategy must be steps, got "
		    "%.40s", st);
	if (cfg_on(rc, "saves_per_epoch") && cfg_on(rc, "save_steps"))
		return rule_report(rc, cfg_pair(rc, "saves_per_epoch"),
		    "saves_per_epoch and save_steps are both set; keep one");
	return 0;
}

const struct rule_row rules_save[] = {
	{ "save.best_requires_metric", SEV_ERROR,
	  "save_strategy: best without metric_for_best_model",
	  "set metric_for_best_model (e.g. eval_loss)",
	  check_save_best_metric },
	{ "save.early_stopping_steps", SEV_ERROR,
	  "early stopping without matching save and eval steps",
	  "set save_steps as a multiple of eval_steps",
	  check_save_early_stopping },
	{ "save.hub_without_save", SEV_WARNING,
	  "hub_model_id without checkpoints being saved",
	  "set save_strategy: steps or epoch",
	  check_save_hub },
	{ "save.safetensors_false", SEV_ERROR,
	  "save_safetensors: false",
	  "remove save_safetensors",
	  check_save_safetensors },
	{ "save.saves_per_epoch_conversion", SEV_INFO,
	  "saves_per_epoch becomes save_steps",
	  "nothing to fix",
	  check_save_per_epoch },
	{ "save.strategy_steps_mismatch", SEV_ERROR,
	  "save_steps with another save_strategy, or with saves_per_epoch",
	  "use save_strategy: steps, and one of save_steps / saves_per_epoch",
	  check_save_strategy_steps },
};
const size_t rules_save_len =
    sizeof(rules_save) / sizeof(rules_save[0]);
