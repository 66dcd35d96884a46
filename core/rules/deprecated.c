/*
 * core/rules/deprecated: removed and renamed keys.  core/schema_check reports
 * most of them from its table (rows without a function here); this file
 * also builds the view the rules read, with the renamed keys mapped the
 * way Axolotl maps them before its validators look (deprecated_view).
 * Pure: a rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/arena.h"

/*
 * A deprecated key Axolotl copies to its new name, and when.  `truthy`:
 * the old value must be truthy (else: not null); the copy happens only
 * when the new key is falsy (`new_falsy`) or absent/null.
 */
static const struct rename {
	const char *old_key;
	const char *new_key;
	bool truthy;
	bool new_falsy;
} renames[] = {
	/* ComplexValidationMixin.check_context_parallel_size */
	{ "sequence_parallel_degree", "context_parallel_size", true, true },
	/* TrainingValidationMixin.check_eval_strategy */
	{ "evaluation_strategy", "eval_strategy", false, false },
	/* AxolotlConfigWCapabilities.default_dataset_num_proc */
	{ "dataset_processes", "dataset_num_proc", false, false },
	/* TrainingValidationMixin.check_neftune */
	{ "noisy_embedding_alpha", "neftune_noise_alpha", true, true },
	/* TrainingValidationMixin.check_multipack_buffer_size */
	{ "pretrain_multipack_buffer_size", "streaming_multipack_buffer_size",
	  true, true },
};

/* Does the rename apply to root? */
static bool
rename_applies(const struct rename *r, const struct doc_node *root)
{
	const struct doc_pair *o = doc_map_get(root, r->old_key);
	const struct doc_pair *n = doc_map_get(root, r->new_key);

	if (o == NULL || (r->truthy ? !doc_truthy(o->value) :
	    o->value->kind == DOC_NULL))
		return false;
	if (n == NULL)
		return true;
	return r->new_falsy ? !doc_truthy(n->value) :
	    n->value->kind == DOC_NULL;
}

int
deprecated_view(const struct doc_node **out, const struct doc_node *root,
    struct arena *a)
{
	struct doc_node *view, *key;
	struct doc_pair *pairs;
	size_t i, k, n = root->n, extra = 0;
	bool any = false;

	*out = root;
	for (k = 0; k < sizeof(renames) / sizeof(renames[0]); k++)
		if (rename_applies(&renames[k], root)) {
			any = true;
			if (doc_map_get(root, renames[k].new_key) == NULL)
				extra++;
		}
	if (!any)
		return 0;	/* the common case: the document itself */
	view = ARENA_NEW(a, struct doc_node, 1);
	pairs = ARENA_NEW(a, struct doc_pair, n + extra);
	if (view == NULL || pairs == NULL)
		return ERR_NOMEM;
	*view = *root;
	if (n > 0)
		memcpy(pairs, root->pairs, n * sizeof(pairs[0]));
	for (k = 0; k < sizeof(renames) / sizeof(renames[0]); k++) {
		const struct rename *r = &renames[k];
		const struct doc_pair *o;

		if (!rename_applies(r, root))
			continue;
		o = doc_map_get(root, r->old_key);
		for (i = 0; i < n; i++)
			if (pairs[i].key->kind == DOC_STR &&
			    strcmp(pairs[i].key->text, r->new_key) == 0)
				break;
		if (i == n) {
			/* A key node of the new name, where the old was. */
			key = ARENA_NEW(a, struct doc_node, 1);
			if (key == NULL)
				return ERR_NOMEM;
			*key = *o->key;
			key->text = r->new_key;
			key->len = strlen(r->new_key);
			pairs[n].key = key;
			n++;
		}
		pairs[i].value = o->value;
		pairs[i].key_loc = o->key_loc;
		pairs[i].value_loc = o->value_loc;
		pairs[i].merged = o->merged;
	}
	view->pairs = pairs;
	view->n = n;
	doc_map_index(view, a);
	*out = view;
	return 0;
}

/* deprecated.noisy_embedding_alpha: TrainingValidationMixin.check_neftune
   copies it to neftune_noise_alpha, and refuses both set. */
static int
check_deprecated_noisy(struct rule_ctx *rc)
{
	const struct doc_pair *o = raw_pair(rc, "noisy_embedding_alpha");
	const struct doc_pair *n = raw_pair(rc, "neftune_noise_alpha");

	if (o == NULL || !doc_truthy(o->value))
		return 0;
	if (n != NULL && doc_truthy(n->value))
		return rule_report_sev(rc, o, SEV_ERROR, "noisy_embedding_alpha "
		    "and its new name neftune_noise_alpha are both set");
	return rule_report(rc, o, "noisy_embedding_alpha is renamed "
	    "neftune_noise_alpha; Axolotl copies it there");
}

const struct rule_row rules_deprecated[] = {
	{ "deprecated.dataset_processes", SEV_WARNING,
	  "dataset_processes is deprecated",
	  "rename it to dataset_num_proc",
	  NULL },
	{ "deprecated.dpo_beta", SEV_WARNING,
	  "dpo_beta is deprecated",
	  "rename it to rl_beta",
	  NULL },
	{ "deprecated.eval_generation_options", SEV_WARNING,
	  "eval_table_size / eval_max_new_tokens are deprecated",
	  "use generate_samples, num_generation_samples and "
	  "generation_max_new_tokens",
	  NULL },
	{ "deprecated.evaluation_strategy", SEV_WARNING,
	  "evaluation_strategy is deprecated",
	  "rename it to eval_strategy",
	  NULL },
	{ "deprecated.flash_attn_d512_alias", SEV_INFO,
	  "flash_attn_d512 is read as large_head_attention: auto",
	  "set large_head_attention: auto",
	  NULL },
	{ "deprecated.gc_steps", SEV_WARNING,
	  "gc_steps is deprecated",
	  "set torch_empty_cache_steps and gc_collect_steps",
	  NULL },
	{ "deprecated.gemma4_nonexpert_flags", SEV_WARNING,
	  "gemma4_*_nonexpert flags are deprecated",
	  "set nonexpert_quantization: fp8_blockwise or nf4",
	  NULL },
	{ "deprecated.noisy_embedding_alpha", SEV_WARNING,
	  "noisy_embedding_alpha is renamed",
	  "rename it to neftune_noise_alpha",
	  check_deprecated_noisy },
	{ "deprecated.rope_scaling_toplevel", SEV_ERROR,
	  "a top-level rope_scaling is refused",
	  "move it under model_config: (or overrides_of_model_config:)",
	  NULL },
	{ "deprecated.trl_options_removed", SEV_ERROR,
	  "a DPO/RPO option TRL 0.29 removed",
	  "remove it",
	  NULL },
	{ "deprecated.unsloth_flags_removed", SEV_ERROR,
	  "the unsloth_* flags were removed",
	  "use lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel",
	  NULL },
};
const size_t rules_deprecated_len =
    sizeof(rules_deprecated) / sizeof(rules_deprecated[0]);
