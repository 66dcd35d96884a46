/*
 * core/rules/dataset: datasets, streaming and pretraining datasets,
 * deduplication, pushing datasets to the hub.  The conditions are Axolotl's
 * before-validators (DatasetValidationMixin, PretrainingValidationMixin,
 * TrainingValidationMixin.pretrain_with_tps, AxolotlConfigWCapabilities'
 * deduplication checks) and SFTDataset's, which see the values as written.
 * Pure: a rule reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/*
 * Does validate_config() build SFTDataset for the entries of datasets?
 * (DPODataset for rl dpo/ipo/simpo, KTODataset for kto, SyntheticDataset
 * for type _synthetic.)
 */
static bool
sft_entry(const struct rule_ctx *rc, const struct doc_node *ds)
{
	return !(cfg_is(rc, "rl", "dpo") || cfg_is(rc, "rl", "ipo") ||
	    cfg_is(rc, "rl", "simpo") || cfg_is(rc, "rl", "kto") ||
	    node_is(doc_map_value(ds, "type"), "_synthetic"));
}

/* dataset.chat_template_jinja_required: SFTDataset.check_chat_template_
   config, per entry of datasets. */
static int
check_dataset_jinja(struct rule_ctx *rc)
{
	const struct doc_pair *ds = cfg_pair(rc, "datasets");
	size_t i;

	if (ds == NULL || ds->value->kind != DOC_SEQ)
		return 0;
	for (i = 0; i < ds->value->n; i++) {
		const struct doc_node *e = ds->value->items[i];
		const struct doc_pair *ct = doc_map_get(e, "chat_template");

		if (e->kind != DOC_MAP || !sft_entry(rc, e) || ct == NULL ||
		    !node_is(ct->value, "jinja") ||
		    doc_truthy(doc_map_value(e, "chat_template_jinja")))
			continue;
		return rule_report(rc, ct, "datasets[%zu].chat_template is jinja "
		    "but chat_template_jinja is not set", i);
	}
	return 0;
}

/* dataset.dedup_with_skip_prepare */
static int
check_dataset_dedup_skip(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "dataset_exact_deduplication") ||
	    !cfg_on(rc, "skip_prepare_dataset"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "dataset_exact_deduplication"),
	    "dataset_exact_deduplication does nothing with "
	    "skip_prepare_dataset (deduplication is part of the prepare "
	    "step); Axolotl refuses the config");
}

/* dataset.dedup_with_streaming */
static int
check_dataset_dedup_stream(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "dataset_exact_deduplication") ||
	    !(cfg_on(rc, "streaming") || cfg_on(rc, "pretraining_dataset")))
		return 0;
	return rule_report(rc, cfg_pair(rc, "dataset_exact_deduplication"),
	    "dataset_exact_deduplication is not available for streamed "
	    "datasets (%s)", cfg_on(rc, "streaming") ? "streaming" :
	    "pretraining_dataset");
}

/* dataset.message_field_conflict: handle_legacy_message_fields_logic,
   per entry of datasets. */
static int
check_dataset_message_fields(struct rule_ctx *rc)
{
	static const char *const legacy[][2] = {
		{ "message_field_role", "role" },
		{ "message_field_content", "content" },
	};
	const struct doc_pair *ds = cfg_pair(rc, "datasets");
	size_t i, k;

	if (ds == NULL || ds->value->kind != DOC_SEQ)
		return 0;
	for (i = 0; i < ds->value->n; i++) {
		const struct doc_node *e = ds->value->items[i];
		const struct doc_node *m = doc_map_value(e, "message_property_"
		    "mappings");

		if (e->kind != DOC_MAP || !sft_entry(rc, e) || m == NULL ||
		    m->kind != DOC_MAP)
			continue;
		for (k = 0; k < 2; k++) {
			const struct doc_pair *old = doc_map_get(e,
			    legacy[k][0]);
			const struct doc_node *now = doc_map_value(m,
			    legacy[k][1]);

			if (old == NULL || now == NULL ||
			    node_eq(old->value, now))
				continue;
			return rule_report(rc, old, "datasets[%zu].%s "
			    "conflicts with message_property_mappings.%s",
			    i, legacy[k][0], legacy[k][1]);
		}
	}
	return 0;
}

/* dataset.pretraining_requires_max_steps */
static int
check_dataset_pt_max_steps(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "pretraining_dataset") || cfg_on(rc, "max_steps"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "pretraining_dataset"), "a "
	    "pretraining_dataset is streamed, so the trainer cannot size the "
	    "schedule: max_steps must be set");
}

/* dataset.pretraining_group_by_length: PretrainingValidationMixin.
   check_pretraining_w_group_by_length (a warning). */
static int
check_dataset_pt_group(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "pretraining_dataset") || !cfg_on(rc, "group_by_length"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "group_by_length"),
	    "group_by_length makes a streamed pretraining_dataset download in "
	    "full");
}

/* dataset.pretraining_without_streaming: DatasetValidationMixin.
   check_pretraining_streaming_deprecation (a warning). */
static int
check_dataset_pt_streaming(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "pretraining_dataset") || cfg_on(rc, "streaming"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "pretraining_dataset"), "a "
	    "pretraining_dataset streams without streaming: true today; a "
	    "later Axolotl will not, so write streaming: true");
}

/* dataset.pretraining_with_tokens_per_second */
static int
check_dataset_pt_tps(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "pretraining_dataset") ||
	    !cfg_on(rc, "include_tokens_per_second"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "include_tokens_per_second"),
	    "include_tokens_per_second does not work with a "
	    "pretraining_dataset (it counts the tokens of the whole dataset)");
}

/* dataset.pretraining_with_val_set_size */
static int
check_dataset_pt_val(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "pretraining_dataset") || !cfg_on(rc, "val_set_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "val_set_size"), "val_set_size "
	    "does not work with a pretraining_dataset; evaluate with "
	    "test_datasets");
}

/* dataset.push_requires_auth_token */
static int
check_dataset_push_auth(struct rule_ctx *rc)
{
	const struct doc_pair *t = cfg_pair(rc, "hf_use_auth_token");

	if (!cfg_on(rc, "push_dataset_to_hub") ||
	    (t != NULL && node_is_true(t->value)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "push_dataset_to_hub"),
	    "push_dataset_to_hub needs hf_use_auth_token: true");
}

/* dataset.sharegpt_type_removed: the datasets field validator. */
static int
check_dataset_sharegpt(struct rule_ctx *rc)
{
	const struct doc_pair *ds = cfg_pair(rc, "datasets");
	size_t i;

	if (ds == NULL || ds->value->kind != DOC_SEQ)
		return 0;
	for (i = 0; i < ds->value->n; i++) {
		const struct doc_pair *t = doc_map_get(ds->value->items[i],
		    "type");

		if (t != NULL && t->value->kind == DOC_STR &&
		    strncmp(t->value->text, "sharegpt", 8) == 0)
			return rule_report(rc, t, "datasets[%zu].type '%.40s': "
			    "the sharegpt types were removed", i,
			    t->value->text);
	}
	return 0;
}

/*
 * dataset.datasets_null: the same field validator iterates the value as
 * written, so an explicit datasets: null (allowed by the field's type)
 * raises TypeError ("'NoneType' object is not iterable").  With no
 * pretraining_dataset either, schema.datasets_required says it.
 */
static int
check_dataset_null(struct rule_ctx *rc)
{
	const struct doc_pair *ds = cfg_pair(rc, "datasets");
	const struct doc_pair *pt = cfg_pair(rc, "pretraining_dataset");

	if (ds == NULL || ds->value->kind != DOC_NULL || pt == NULL ||
	    !doc_truthy(pt->value))
		return 0;
	return rule_report(rc, ds, "datasets is written as null: Axolotl's "
	    "datasets validator iterates it and fails with a TypeError");
}

/* dataset.streaming_requires_max_steps */
static int
check_dataset_stream_max_steps(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "streaming") || cfg_on(rc, "max_steps"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "streaming"), "streaming datasets "
	    "have no length, so the trainer cannot size the schedule: "
	    "max_steps must be set");
}

/* dataset.streaming_with_val_set_size */
static int
check_dataset_stream_val(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "streaming") || !cfg_on(rc, "val_set_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "val_set_size"), "val_set_size "
	    "does not work with streaming: true; evaluate with test_datasets");
}

const struct rule_row rules_dataset[] = {
	{ "dataset.chat_template_jinja_required", SEV_ERROR,
	  "a dataset with chat_template: jinja and no chat_template_jinja",
	  "add chat_template_jinja to the dataset, or pick a named template",
	  check_dataset_jinja },
	{ "dataset.datasets_null", SEV_ERROR,
	  "datasets: null next to a pretraining_dataset",
	  "remove the datasets line",
	  check_dataset_null },
	{ "dataset.dedup_with_skip_prepare", SEV_ERROR,
	  "dataset_exact_deduplication with skip_prepare_dataset",
	  "drop one of dataset_exact_deduplication and skip_prepare_dataset",
	  check_dataset_dedup_skip },
	{ "dataset.dedup_with_streaming", SEV_ERROR,
	  "dataset_exact_deduplication with a streamed dataset",
	  "remove dataset_exact_deduplication, or do not stream",
	  check_dataset_dedup_stream },
	{ "dataset.message_field_conflict", SEV_ERROR,
	  "a legacy message_field_* that contradicts message_property_mappings",
	  "keep only message_property_mappings",
	  check_dataset_message_fields },
	{ "dataset.pretraining_group_by_length", SEV_WARNING,
	  "group_by_length with a pretraining_dataset",
	  "set group_by_length: false",
	  check_dataset_pt_group },
	{ "dataset.pretraining_requires_max_steps", SEV_ERROR,
	  "pretraining_dataset without max_steps",
	  "set max_steps",
	  check_dataset_pt_max_steps },
	{ "dataset.pretraining_with_tokens_per_second", SEV_ERROR,
	  "pretraining_dataset with include_tokens_per_second",
	  "remove include_tokens_per_second",
	  check_dataset_pt_tps },
	{ "dataset.pretraining_with_val_set_size", SEV_ERROR,
	  "pretraining_dataset with val_set_size",
	  "remove val_set_size and use test_datasets",
	  check_dataset_pt_val },
	{ "dataset.pretraining_without_streaming", SEV_WARNING,
	  "pretraining_dataset without streaming: true",
	  "write streaming: true",
	  check_dataset_pt_streaming },
	{ "dataset.push_requires_auth_token", SEV_ERROR,
	  "push_dataset_to_hub without hf_use_auth_token: true",
	  "set hf_use_auth_token: true",
	  check_dataset_push_auth },
	{ "dataset.sharegpt_type_removed", SEV_ERROR,
	  "a dataset of a removed sharegpt type",
	  "use type: chat_template",
	  check_dataset_sharegpt },
	{ "dataset.streaming_requires_max_steps", SEV_ERROR,
	  "streaming without max_steps",
	  "set max_steps",
	  check_dataset_stream_max_steps },
	{ "dataset.streaming_with_val_set_size", SEV_ERROR,
	  "streaming with val_set_size",
	  "remove val_set_size and use test_datasets",
	  check_dataset_stream_val },
};
const size_t rules_dataset_len =
    sizeof(rules_dataset) / sizeof(rules_dataset[0]);
