/*
 * core/rules/chat: the chat template and tokenizer options Axolotl checks
 * against each other: chat_template: jinja, the mistral-common tokenizer.
 * The conditions are ChatTemplateValidationMixin.check_chat_template_config
 * and TrainingValidationMixin.check_mistral_common_incompatible_options
 * (both before-validators, on the values as written).  Pure: a rule reads
 * the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/* chat.jinja_template_required */
static int
check_chat_jinja(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "chat_template", "jinja") ||
	    cfg_on(rc, "chat_template_jinja"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "chat_template"), "chat_template: "
	    "jinja needs the template in chat_template_jinja");
}

/* chat.mistral_common_overrides: the tokenizer of mistral-common cannot
   be edited. */
static int
check_chat_mistral_common(struct rule_ctx *rc)
{
	static const char *const keys[] = { "added_tokens_overrides",
	    "special_tokens", "tokens", "chat_template", "processor_kwargs" };
	size_t i;

	if (!cfg_on(rc, "tokenizer_use_mistral_common"))
		return 0;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (cfg_on(rc, keys[i]))
			return rule_report(rc, cfg_pair(rc, keys[i]), "%s does "
			    "not work with tokenizer_use_mistral_common",
			    keys[i]);
	return 0;
}

const struct rule_row rules_chat[] = {
	{ "chat.jinja_template_required", SEV_ERROR,
	  "chat_template: jinja without chat_template_jinja",
	  "set chat_template_jinja to the template text",
	  check_chat_jinja },
	{ "chat.mistral_common_overrides", SEV_ERROR,
	  "tokenizer edits with the mistral-common tokenizer",
	  "remove the tokenizer edits, or tokenizer_use_mistral_common",
	  check_chat_mistral_common },
};
const size_t rules_chat_len = sizeof(rules_chat) / sizeof(rules_chat[0]);
