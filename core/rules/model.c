/*
 * core/rules/model: the model to load: base_model and the keys Axolotl's
 * validators read next to it (gptq with a revision, processor_kwargs,
 * image_resize_algorithm).  Pure: a rule reads the config through its
 * struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/* model.gptq_with_revision: ModelCompatibilityValidationMixin.
   check_gptq_w_revision reads revision_of_model under that name only. */
static int
check_model_gptq_revision(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "gptq") || !cfg_on(rc, "revision_of_model"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "revision_of_model"),
	    "revision_of_model does not work for GPTQ models; download the "
	    "revision and point base_model at it");
}

/* model.image_resize_algorithm: MultiModalConfig's field validator. */
static int
check_model_resize(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "image_resize_algorithm");
	char buf[32];
	const char *v;

	if (p == NULL || p->value->kind != DOC_STR)
		return 0;
	v = node_lower(p->value, buf, sizeof(buf));
	if (strcmp(v, "bilinear") == 0 || strcmp(v, "bicubic") == 0 ||
	    strcmp(v, "lanczos") == 0)
		return 0;
	return rule_report(rc, p, "image_resize_algorithm must be bilinear, "
	    "bicubic or lanczos, got '%.40s'", p->value->text);
}

/* model.path_not_string: TrainingValidationMixin.
   check_tokenizer_use_mistral_common calls .lower() on base_model,
   base_model_config and tokenizer_config when written, unless
   tokenizer_use_mistral_common is set; anything but a string (null too)
   makes the validator fail. */
static int
check_model_path_string(struct rule_ctx *rc)
{
	static const char *const keys[] = { "base_model", "base_model_config",
	    "tokenizer_config" };
	const struct doc_pair *t = cfg_pair(rc, "tokenizer_use_mistral_common");
	size_t i;

	if (t != NULL && t->value->kind != DOC_NULL)
		return 0;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct doc_pair *p = cfg_pair(rc, keys[i]);

		/* any() stops at the first name containing "magistral". */
		if (p != NULL && p->value->kind == DOC_STR &&
		    doc_text_has_ci(p->value->text, "magistral"))
			return 0;
		if (p != NULL && p->value->kind != DOC_STR)
			return rule_report(rc, p, "%s is %s, not a string: "
			    "Axolotl's validator fails reading it", keys[i],
			    p->value->kind == DOC_NULL ? "null" :
			    doc_kind_name(p->value->kind));
	}
	return 0;
}

/* model.trust_remote_code: ModelInputConfig.hint_trust_remote_code (a
   warning). */
static int
check_model_remote_code(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "trust_remote_code"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "trust_remote_code"),
	    "trust_remote_code runs the model repository's own code");
}

/* model.processor_kwargs_reserved: ModelInputConfig's field validator. */
static int
check_model_processor_kwargs(struct rule_ctx *rc)
{
	static const char *const keys[] = { "revision", "trust_remote_code" };
	const struct doc_pair *p = cfg_pair(rc, "processor_kwargs");
	size_t i;

	if (p == NULL || p->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < 2; i++)
		if (doc_map_get(p->value, keys[i]) != NULL)
			return rule_report(rc, doc_map_get(p->value, keys[i]),
			    "processor_kwargs.%s is reserved; use the top-level "
			    "%s", keys[i], i == 0 ? "revision_of_model" :
			    "trust_remote_code");
	return 0;
}

const struct rule_row rules_model[] = {
	{ "model.gptq_with_revision", SEV_ERROR,
	  "a GPTQ model with revision_of_model",
	  "download the revision and point base_model at it",
	  check_model_gptq_revision },
	{ "model.image_resize_algorithm", SEV_ERROR,
	  "an image_resize_algorithm Axolotl does not know",
	  "use bilinear, bicubic or lanczos",
	  check_model_resize },
	{ "model.path_not_string", SEV_ERROR,
	  "base_model, base_model_config or tokenizer_config is not a string",
	  "write the model path as a string, or remove the key",
	  check_model_path_string },
	{ "model.processor_kwargs_reserved", SEV_ERROR,
	  "processor_kwargs sets revision or trust_remote_code",
	  "set revision_of_model / trust_remote_code at the top level",
	  check_model_processor_kwargs },
	{ "model.trust_remote_code", SEV_WARNING,
	  "trust_remote_code is on",
	  "review the model repository's code first",
	  check_model_remote_code },
};
const size_t rules_model_len = sizeof(rules_model) / sizeof(rules_model[0]);
