/*
 * core/rules/lora: LoRA and other adapters: which adapter names exist,
 * the PEFT layer options, lora_target_modules, ReLoRA.  The conditions are
 * Axolotl's LoraConfig.validate_adapter, LoRAValidationMixin,
 * AxolotlInputConfig.check_lora_target_modules_regex and
 * ComplexValidationMixin.check_relora.  (The fused LoRA kernels are
 * core/rules/lora_kernels.c.)  Pure: a rule reads the config through its
 * struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/* The adapters Axolotl builds itself. */
static bool
builtin_adapter(const struct doc_node *v)
{
	return node_is(v, "lora") || node_is(v, "qlora") ||
	    node_is(v, "llama-adapter");
}

/* An adapter a listed plugin registers (get_adapter_capabilities): MoRA
   registers "mora", with ReLoRA support. */
static bool
plugin_adapter(const struct rule_ctx *rc, const struct doc_node *v)
{
	return node_is(v, "mora") && plugin_on(rc, "mora");
}

/* lora.adapter_unknown: LoraConfig.validate_adapter. */
static int
check_lora_adapter_unknown(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "adapter");

	if (p == NULL || !doc_truthy(p->value) || builtin_adapter(p->value) ||
	    plugin_adapter(rc, p->value))
		return 0;
	return rule_report(rc, p, "adapter '%.60s' is not built in (lora, "
	    "qlora, llama-adapter) and no listed plugin registers it",
	    p->value->text != NULL ? p->value->text :
	    doc_kind_name(p->value->kind));
}

/* Is token id v (an int) in the indices (an int, or a list of ints)? */
static bool
token_in(const struct doc_node *idx, const struct doc_node *v)
{
	size_t i;

	if (idx->kind == DOC_SEQ) {
		for (i = 0; i < idx->n; i++)
			if (node_eq(idx->items[i], v))
				return true;
		return false;
	}
	return idx->kind != DOC_MAP && node_eq(idx, v);
}

/* lora.untrained_token_not_trainable: AxolotlInputConfig.
   warn_peft_trainable_token_to_fix_untrained (a warning). */
static int
check_lora_untrained(struct rule_ctx *rc)
{
	const struct doc_pair *idx = cfg_pair(rc, "peft_trainable_token_indices");
	const struct doc_pair *fix = cfg_pair(rc, "fix_untrained_tokens");
	const struct doc_node *one;
	size_t i, n;

	if (idx == NULL || fix == NULL || !doc_truthy(idx->value) ||
	    !doc_truthy(fix->value))
		return 0;
	n = fix->value->kind == DOC_SEQ ? fix->value->n : 1;
	for (i = 0; i < n; i++) {
		one = fix->value->kind == DOC_SEQ ? fix->value->items[i] :
		    fix->value;
		if (!token_in(idx->value, one))
			return rule_report(rc, fix, "token %.20s is fixed by "
			    "fix_untrained_tokens but not in "
			    "peft_trainable_token_indices, so it is not "
			    "trained", one->text != NULL ? one->text : "?");
	}
	return 0;
}

/* lora.lr_groups_with_loraplus */
static int
check_lora_lr_groups(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "lr_groups") || !cfg_on(rc, "loraplus_lr_ratio"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "loraplus_lr_ratio"), "lr_groups "
	    "and loraplus_lr_ratio both set learning rates per parameter "
	    "group; keep one");
}

/* lora.onebitllms_adapter: an after-validator (use_onebitllms as a
   bool). */
static int
check_lora_onebitllms(struct rule_ctx *rc)
{
	const char *ad;

	use_parsed(rc);  /* an after-validator */
	ad = cfg_str(rc, "adapter");

	if (!cfg_on(rc, "use_onebitllms") || ad == NULL ||
	    !(strcmp(ad, "lora") == 0 || strcmp(ad, "qlora") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_onebitllms"), "use_onebitllms "
	    "does not work with adapter: %s", ad);
}

/* lora.peft_layers_pattern_needs_layers */
static int
check_lora_layers_pattern(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "peft_layers_pattern") ||
	    cfg_on(rc, "peft_layers_to_transform"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "peft_layers_pattern"),
	    "peft_layers_pattern needs peft_layers_to_transform");
}

/* lora.peft_layers_with_unfrozen */
static int
check_lora_layers_unfrozen(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "adapter") || !cfg_on(rc, "peft_layers_to_transform") ||
	    !cfg_on(rc, "unfrozen_parameters"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "unfrozen_parameters"),
	    "unfrozen_parameters with peft_layers_to_transform is refused "
	    "(unexpected behaviour)");
}

/* lora.relora_requirements: check_relora's conditions other than
   FSDP/DeepSpeed (fsdp.relora_unsupported) and fused MLP
   (attn.fused_mlp_with_lora). */
static int
check_lora_relora(struct rule_ctx *rc)
{
	const struct doc_pair *ad;

	use_parsed(rc);  /* an after-validator */
	ad = cfg_pair(rc, "adapter");

	if (!cfg_on(rc, "relora"))
		return 0;
	if (!cfg_on(rc, "jagged_restart_steps"))
		return rule_report(rc, cfg_pair(rc, "relora"), "relora needs "
		    "jagged_restart_steps");
	if (ad == NULL || !(node_is(ad->value, "lora") ||
	    node_is(ad->value, "qlora") || plugin_adapter(rc, ad->value)))
		return rule_report(rc, ad != NULL ? ad : cfg_pair(rc, "relora"),
		    "relora needs an adapter that supports restarts (lora, "
		    "qlora, or a plugin's such as mora)");
	if (cfg_is(rc, "lr_scheduler", "one_cycle"))
		return rule_report(rc, cfg_pair(rc, "lr_scheduler"), "relora "
		    "does not work with lr_scheduler: one_cycle");
	return 0;
}

/* lora.target_modules_regex */
static int
check_lora_target_regex(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "lora_target_modules");
	char why[96];
	size_t i;

	if (p == NULL || p->value->kind != DOC_SEQ)
		return 0;
	for (i = 0; i < p->value->n; i++) {
		const struct doc_node *v = p->value->items[i];

		if (v->kind != DOC_STR || pyre_valid(v->text, v->len, why,
		    sizeof(why)))
			continue;
		return rule_report(rc, p, "lora_target_modules entry '%.60s' is "
		    "not a valid Python regular expression (%s)", v->text,
		    why);
	}
	return 0;
}

const struct rule_row rules_lora[] = {
	{ "lora.adapter_unknown", SEV_ERROR,
	  "an adapter that is not built in and no listed plugin registers",
	  "use lora or qlora, or list the plugin that provides the adapter",
	  check_lora_adapter_unknown },
	{ "lora.lr_groups_with_loraplus", SEV_ERROR,
	  "lr_groups with loraplus_lr_ratio",
	  "keep one of lr_groups and loraplus_lr_ratio",
	  check_lora_lr_groups },
	{ "lora.onebitllms_adapter", SEV_ERROR,
	  "use_onebitllms with a LoRA/QLoRA adapter",
	  "train without the adapter, or without use_onebitllms",
	  check_lora_onebitllms },
	{ "lora.peft_layers_pattern_needs_layers", SEV_ERROR,
	  "peft_layers_pattern without peft_layers_to_transform",
	  "set peft_layers_to_transform",
	  check_lora_layers_pattern },
	{ "lora.peft_layers_with_unfrozen", SEV_ERROR,
	  "peft_layers_to_transform with unfrozen_parameters",
	  "keep one of peft_layers_to_transform and unfrozen_parameters",
	  check_lora_layers_unfrozen },
	{ "lora.relora_requirements", SEV_ERROR,
	  "relora without what it needs",
	  "set jagged_restart_steps and a LoRA adapter, and another "
	  "lr_scheduler than one_cycle",
	  check_lora_relora },
	{ "lora.target_modules_regex", SEV_ERROR,
	  "a lora_target_modules entry that is not a valid regular expression",
	  "fix the pattern, or write the module name plainly",
	  check_lora_target_regex },
	{ "lora.untrained_token_not_trainable", SEV_WARNING,
	  "a token fix_untrained_tokens fixes that the adapter does not train",
	  "add it to peft_trainable_token_indices",
	  check_lora_untrained },
};
const size_t rules_lora_len = sizeof(rules_lora) / sizeof(rules_lora[0]);
