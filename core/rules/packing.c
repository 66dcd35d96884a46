/*
 * core/rules/packing: sample packing and its evaluation, streaming and
 * attention interplay.  Pure: a rule reads the config through its struct
 * rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/gpu.h"

/* packing.buffer_size_renamed */
static int
check_packing_buffer_renamed(struct rule_ctx *rc)
{
	const struct doc_pair *now = raw_pair(rc,
	    "streaming_multipack_buffer_size");

	/* check_multipack_buffer_size: the old name is copied to the new one
	   unless that is truthy too, which is refused. */
	if (!cfg_on(rc, "pretrain_multipack_buffer_size"))
		return 0;
	if (now != NULL && doc_truthy(now->value))
		return rule_report_sev(rc, cfg_pair(rc,
		    "pretrain_multipack_buffer_size"), SEV_ERROR,
		    "pretrain_multipack_buffer_size and its new name "
		    "streaming_multipack_buffer_size are both set");
	return rule_report(rc, cfg_pair(rc, "pretrain_multipack_buffer_size"),
	    "pretrain_multipack_buffer_size is renamed "
	    "streaming_multipack_buffer_size");
}

/* packing.causal_lm_eval_conflict */
static int
check_packing_causal_lm_eval(struct rule_ctx *rc)
{
	bool esp = cfg_on(rc, "eval_sample_packing") ||
	    (!cfg_set(rc, "eval_sample_packing") && cfg_on(rc, "sample_packing") &&
	    !cfg_on(rc, "eval_table_size"));

	if (!cfg_on(rc, "do_causal_lm_eval") || !esp)
		return 0;
	return rule_report(rc, cfg_pair(rc, "do_causal_lm_eval"),
	    "do_causal_lm_eval does not work with packed evaluation; set "
	    "eval_sample_packing: false");
}

/* packing.cudagraphs_dynamic_shapes */
static int
check_packing_cudagraphs(struct rule_ctx *rc)
{
	const struct doc_pair *cg = cfg_sub(rc, "torch_compile_options",
	    "triton.cudagraphs");

	if (cg == NULL || !doc_truthy(cg->value) ||
	    !cfg_on(rc, "sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "torch_compile_options"), "CUDA graphs "
	    "with sample_packing recompile for every packed shape");
}

/* packing.eval_sample_packing_default */
static int
check_packing_eval_default(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sample_packing") || cfg_set(rc, "eval_sample_packing") ||
	    cfg_on(rc, "eval_table_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sample_packing"), "sample_packing "
	    "also packs evaluation (eval_sample_packing: true)");
}

/* packing.eval_table_size_conflict */
static int
check_packing_eval_table(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sample_packing") || !cfg_on(rc, "eval_table_size") ||
	    cfg_false(rc, "eval_sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_table_size"),
	    "eval_table_size needs eval_sample_packing: false when "
	    "sample_packing is on");
}

/* packing.fp16_full_finetune_without_flash */
static int
check_packing_fp16_fft(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (!cfg_false(rc, "bf16") || cfg_on(rc, "bfloat16") ||
	    !(cfg_on(rc, "fp16") || cfg_on(rc, "float16")) ||
	    cfg_set(rc, "adapter") || (be != NULL && (strcmp(be,
	    "flash_attention_2") == 0 || strcmp(be, "flash_attention_3") == 0))
	    || !cfg_on(rc, "sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sample_packing"), "fp16 full "
	    "fine-tuning with packing and without flash attention is "
	    "numerically fragile");
}

/* packing.kto_incompatible */
static int
check_packing_kto(struct rule_ctx *rc)
{
	const char *rl = cfg_str(rc, "rl");
	const struct doc_pair *ruc = cfg_pair(rc, "remove_unused_columns");

	if (rl == NULL || strcmp(rl, "kto") != 0)
		return 0;
	/* Before check_kto_config, Axolotl sets remove_unused_columns:
	   false when unset and skip_prepare_dataset is on
	   (check_mm_prepare), and so does the Hatchery plugin's register(). */
	if ((ruc == NULL || ruc->value->kind == DOC_NULL) &&
	    (cfg_on(rc, "skip_prepare_dataset") || plugin_on(rc, "hatchery")))
		ruc = NULL;
	else if (ruc == NULL || ruc->value->kind != DOC_BOOL || ruc->value->b)
		ruc = ruc != NULL ? ruc : cfg_pair(rc, "rl");
	else
		ruc = NULL;
	if (cfg_on(rc, "sample_packing") || cfg_on(rc, "eval_sample_packing"))
		return rule_report(rc, cfg_pair(rc, cfg_on(rc,
		    "sample_packing") ? "sample_packing" :
		    "eval_sample_packing"), "rl: kto does not work with "
		    "sample packing");
	if (ruc != NULL)
		return rule_report(rc, ruc, "rl: kto needs "
		    "remove_unused_columns: false");
	return 0;
}

/* packing.no_decontaminating_backend */
static int
check_packing_decontaminate(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (!cfg_on(rc, "sample_packing") || packing_backend(be) ||
	    (be != NULL && (strcmp(be, "sdpa") == 0 ||
	    strcmp(be, "eager") == 0)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sample_packing"), "sample_packing "
	    "with attention backend %s may let packed samples attend to each "
	    "other", be != NULL ? be : "unset");
}

/* packing.pad_to_sequence_len_default */
static int
check_packing_pad_default(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sample_packing"))
		return 0;
	if (cfg_false(rc, "pad_to_sequence_len"))
		return rule_report_sev(rc, cfg_pair(rc, "pad_to_sequence_len"),
		    SEV_WARNING, "pad_to_sequence_len: false with "
		    "sample_packing gives varying shapes (slower, more "
		    "memory fragmentation)");
	if (cfg_set(rc, "pad_to_sequence_len"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sample_packing"), "sample_packing "
	    "turns pad_to_sequence_len on");
}

/* packing.remove_unused_columns_autoset */
static int
check_packing_ruc(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sample_packing") || !cfg_false(rc,
	    "eval_sample_packing") || cfg_set(rc, "remove_unused_columns"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_sample_packing"), "Axolotl sets "
	    "remove_unused_columns: false for unpacked evaluation");
}

/* packing.rl_incompatible */
static int
check_packing_rl(struct rule_ctx *rc)
{
	const struct doc_pair *rl = cfg_pair(rc, "rl");

	if (rl == NULL || !doc_truthy(rl->value) ||
	    !cfg_on(rc, "sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sample_packing"),
	    "sample_packing does not work with rl: %s",
	    rl->value->text != NULL ? rl->value->text : "set");
}

/* packing.sage_without_padding */
static int
check_packing_sage_padding(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (be == NULL || strcmp(be, "sage") != 0 ||
	    cfg_on(rc, "sample_packing") || cfg_on(rc, "pad_to_sequence_len"))
		return 0;
	return rule_report(rc, NULL, "sage attention without packing needs "
	    "pad_to_sequence_len: true");
}

/* packing.sdpa_bf16_not_hopper */
static int
check_packing_sdpa_bf16(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);
	const struct doc_pair *bf = cfg_pair(rc, "bf16");

	if (!cfg_on(rc, "sample_packing") ||
	    !cfg_is(rc, "attn_implementation", "sdpa") ||
	    !(bf == NULL || doc_truthy(bf->value) || cfg_on(rc, "bfloat16")) ||
	    g == NULL || g->cc == 90)
		return 0;
	return rule_report(rc, cfg_pair(rc, "attn_implementation"), "packed sdpa "
	    "in bf16 is only validated on Hopper (sm_90); %s may produce "
	    "wrong attention", g->id);
}

/* packing.sdpa_varlen_inert */
static int
check_packing_sdpa_varlen(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sdpa_varlen") || (cfg_on(rc, "sample_packing") &&
	    rc->ctx->torch >= 2100))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sdpa_varlen"), "sdpa_varlen does "
	    "nothing without sample_packing and torch 2.10 or newer");
}

/* packing.streaming_multiple_datasets */
static int
check_packing_streaming_multi(struct rule_ctx *rc)
{
	const struct doc_pair *ds = cfg_pair(rc, "datasets");

	if (!cfg_on(rc, "streaming") || !cfg_on(rc, "sample_packing") ||
	    ds == NULL || ds->value->kind != DOC_SEQ || ds->value->n <= 1)
		return 0;
	return rule_report(rc, ds, "streaming with sample_packing takes one "
	    "dataset, got %zu", ds->value->n);
}

const struct rule_row rules_packing[] = {
	{ "packing.buffer_size_renamed", SEV_WARNING,
	  "pretrain_multipack_buffer_size is renamed",
	  "rename it to streaming_multipack_buffer_size",
	  check_packing_buffer_renamed },
	{ "packing.causal_lm_eval_conflict", SEV_ERROR,
	  "causal LM evaluation with packed evaluation",
	  "set eval_sample_packing: false",
	  check_packing_causal_lm_eval },
	{ "packing.cudagraphs_dynamic_shapes", SEV_WARNING,
	  "CUDA graphs with sample packing",
	  "drop triton.cudagraphs or sample_packing",
	  check_packing_cudagraphs },
	{ "packing.eval_sample_packing_default", SEV_INFO,
	  "sample_packing also packs evaluation",
	  "set eval_sample_packing: false to evaluate unpacked",
	  check_packing_eval_default },
	{ "packing.eval_table_size_conflict", SEV_ERROR,
	  "eval_table_size with packed evaluation",
	  "set eval_sample_packing: false",
	  check_packing_eval_table },
	{ "packing.fp16_full_finetune_without_flash", SEV_WARNING,
	  "fp16 full fine-tune with packing and no flash attention",
	  "use bf16, an adapter, or flash attention",
	  check_packing_fp16_fft },
	{ "packing.kto_incompatible", SEV_ERROR,
	  "KTO with sample packing, or without remove_unused_columns: false",
	  "drop the packing keys and set remove_unused_columns: false",
	  check_packing_kto },
	{ "packing.max_packed_sequence_len_removed", SEV_ERROR,
	  "max_packed_sequence_len was removed",
	  "set sample_packing: true and sequence_len",
	  NULL },
	{ "packing.no_decontaminating_backend", SEV_WARNING,
	  "packing with a backend that may mix samples",
	  "use flash_attention_2, sdpa or eager with packing",
	  check_packing_decontaminate },
	{ "packing.pad_to_sequence_len_default", SEV_INFO,
	  "sample_packing sets pad_to_sequence_len",
	  "set pad_to_sequence_len: true",
	  check_packing_pad_default },
	{ "packing.remove_unused_columns_autoset", SEV_INFO,
	  "Axolotl sets remove_unused_columns: false",
	  "set it yourself to silence this",
	  check_packing_ruc },
	{ "packing.rl_incompatible", SEV_ERROR,
	  "sample packing with an RL / preference trainer",
	  "set sample_packing: false",
	  check_packing_rl },
	{ "packing.sage_without_padding", SEV_WARNING,
	  "sage attention without padding",
	  "set pad_to_sequence_len: true",
	  check_packing_sage_padding },
	{ "packing.sdpa_bf16_not_hopper", SEV_WARNING,
	  "packed sdpa in bf16 off Hopper",
	  "use flash_attention_2 for packing on this GPU",
	  check_packing_sdpa_bf16 },
	{ "packing.sdpa_varlen_inert", SEV_WARNING,
	  "sdpa_varlen that does nothing",
	  "use it with sample_packing on torch 2.10+",
	  check_packing_sdpa_varlen },
	{ "packing.streaming_multiple_datasets", SEV_ERROR,
	  "streaming packing over several datasets",
	  "stream one dataset, or turn off sample_packing",
	  check_packing_streaming_multi },
};
const size_t rules_packing_len =
    sizeof(rules_packing) / sizeof(rules_packing[0]);
