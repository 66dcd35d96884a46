/*
 * core/rules/deepspeed: DeepSpeed: the JSON config Axolotl hands to the
 * trainer (read through core/plan) against the run.  Pure: a rule reads
 * the config through its struct rule_ctx and reports (docs/rules-
 * howto.md).
 */
#include "core/rules_int.h"

#include "core/plan.h"

static bool
ds_number(const struct doc_node *m, const char *key, long long *out)
{
	const struct doc_pair *v = doc_map_get(m, key);

	if (v == NULL || v->value->kind != DOC_INT)
		return false;
	*out = v->value->i;
	return true;
}

/* deepspeed.bf16_preset_requires_bf16 */
static int
check_ds_bf16(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;
	bool bf = strcmp(p->precision, "bf16") == 0;

	if (p->ds_map == NULL || strcmp(p->strategy, "deepspeed") != 0)
		return 0;
	if (p->ds_bf16 == 1 && !bf)
		return rule_report(rc, cfg_pair(rc, "deepspeed"), "the "
		    "DeepSpeed config hard-codes bf16, but this run resolves "
		    "to %s on %s", p->precision, rc->ctx->gpu);
	if (p->ds_fp16 == 1 && bf)
		return rule_report(rc, cfg_pair(rc, "deepspeed"), "the "
		    "DeepSpeed config hard-codes fp16, but this run resolves "
		    "to bf16");
	return 0;
}

/* deepspeed.hardcoded_value_mismatch (batch values) */
static int
check_ds_hardcoded(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;
	long long v;

	if (p->ds_map == NULL || strcmp(p->strategy, "deepspeed") != 0)
		return 0;
	if (ds_number(p->ds_map, "train_micro_batch_size_per_gpu", &v) &&
	    v != p->micro_batch_size)
		return rule_report(rc, cfg_pair(rc, "deepspeed"), "the "
		    "DeepSpeed config sets train_micro_batch_size_per_gpu %lld, "
		    "but micro_batch_size is %lld", v, p->micro_batch_size);
	if (ds_number(p->ds_map, "gradient_accumulation_steps", &v) &&
	    v != p->gradient_accumulation_steps)
		return rule_report(rc, cfg_pair(rc, "deepspeed"), "the "
		    "DeepSpeed config sets gradient_accumulation_steps %lld, "
		    "but Axolotl derives %lld", v,
		    p->gradient_accumulation_steps);
	if (ds_number(p->ds_map, "train_batch_size", &v) &&
	    v != mul_sat(mul_sat(p->world, p->micro_batch_size),
	    p->gradient_accumulation_steps))
		return rule_report(rc, cfg_pair(rc, "deepspeed"), "the "
		    "DeepSpeed config sets train_batch_size %lld, but %lld GPUs "
		    "x micro_batch_size %lld x gradient_accumulation_steps %lld "
		    "= %lld", v, p->world, p->micro_batch_size,
		    p->gradient_accumulation_steps, mul_sat(mul_sat(p->world,
		    p->micro_batch_size), p->gradient_accumulation_steps));
	return 0;
}

/* deepspeed.optimizer_block_overrides */
static int
check_ds_optimizer_block(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (p->ds_map == NULL || (doc_map_get(p->ds_map, "optimizer") ==
	    NULL && doc_map_get(p->ds_map, "scheduler") == NULL))
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "the DeepSpeed "
	    "config has its own optimizer or scheduler block, which overrides "
	    "Axolotl's optimizer and scheduler settings");
}

/* deepspeed.single_gpu */
static int
check_ds_single_gpu(struct rule_ctx *rc)
{
	if (rc->plan->ds == DS_NONE || rc->plan->world != 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "DeepSpeed on one "
	    "GPU adds nothing but startup problems (mpi4py)");
}

/* deepspeed.stage_env */
static int
check_ds_stage_env(struct rule_ctx *rc)
{
	if (rc->plan->ds == DS_NONE || fsdp_on(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "Axolotl launches with "
	    "DeepSpeed ZeRO stage %d%s", rc->plan->zero_stage,
	    rc->plan->zero_stage == 3 ? " and ZeRO-3 init" : "");
}

/* deepspeed.unreadable_config */
static int
check_ds_unreadable(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (p->ds != DS_UNREADABLE)
		return 0;
	if (p->zero_stage > 0)
		return rule_report(rc, cfg_pair(rc, "deepspeed"),
		    "preflight cannot open '%.120s'; by its name it is ZeRO "
		    "stage %d (pass --deepspeed-config FILE to check it)",
		    p->ds_name, p->zero_stage);
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "preflight cannot "
	    "open '%.120s', so its ZeRO stage is unknown (pass "
	    "--deepspeed-config FILE to check it)", p->ds_name);
}

/* deepspeed.zero3_16bit_gather_on_save */
static int
check_ds_zero3_gather(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;
	const struct doc_pair *z, *g;

	if (p->ds_map == NULL || p->zero_stage != 3 ||
	    strcmp(p->strategy, "deepspeed") != 0)
		return 0;
	z = doc_map_get(p->ds_map, "zero_optimization");
	g = z != NULL ? doc_map_get(z->value,
	    "gather_16bit_weights_on_model_save") : NULL;
	if (g == NULL && z != NULL)
		g = doc_map_get(z->value,
		    "stage3_gather_16bit_weights_on_model_save");
	if (g != NULL && g->value->kind == DOC_BOOL && g->value->b)
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "ZeRO-3 without "
	    "gather_16bit_weights_on_model_save: true fails at the final "
	    "save, after training");
}

/* deepspeed.mapping_opened_as_path: with tensor_parallel_size > 1
   (check_tensor_parallel_size_update_ds_json) or deepcompile
   (check_deepcompile) Axolotl's validator opens deepspeed as a file,
   which fails for a mapping written inline. */
static int
check_ds_mapping(struct rule_ctx *rc)
{
	const struct doc_pair *ds = cfg_pair(rc, "deepspeed");
	const struct doc_pair *tp = raw_pair(rc, "tensor_parallel_size");

	if (ds == NULL || ds->value->kind != DOC_MAP || ds->value->n == 0 ||
	    !(cfg_on(rc, "deepcompile") || cfg_int_of(tp, 1) > 1))
		return 0;
	return rule_report(rc, ds, "deepspeed is written inline, but with %s "
	    "Axolotl's validator opens it as a file path and fails",
	    cfg_on(rc, "deepcompile") ? "deepcompile" :
	    "tensor_parallel_size > 1");
}

const struct rule_row rules_deepspeed[] = {
	{ "deepspeed.bf16_preset_requires_bf16", SEV_ERROR,
	  "a DeepSpeed config whose hard-coded dtype contradicts the run",
	  "use deepspeed_configs/zero3.json (bf16/fp16 auto)",
	  check_ds_bf16 },
	{ "deepspeed.hardcoded_value_mismatch", SEV_ERROR,
	  "a DeepSpeed config with hard-coded batch values that differ from Axolotl's",
	  "set those JSON fields to \"auto\"",
	  check_ds_hardcoded },
	{ "deepspeed.mapping_opened_as_path", SEV_ERROR,
	  "an inline DeepSpeed mapping Axolotl opens as a file",
	  "write the DeepSpeed config to a JSON file and give its path",
	  check_ds_mapping },
	{ "deepspeed.optimizer_block_overrides", SEV_WARNING,
	  "a DeepSpeed config with its own optimizer or scheduler",
	  "remove the optimizer/scheduler block from the JSON",
	  check_ds_optimizer_block },
	{ "deepspeed.single_gpu", SEV_WARNING,
	  "DeepSpeed on a single GPU",
	  "remove deepspeed for single-GPU runs",
	  check_ds_single_gpu },
	{ "deepspeed.stage_env", SEV_INFO,
	  "DeepSpeed is launched with the config's ZeRO stage",
	  "nothing to fix",
	  check_ds_stage_env },
	{ "deepspeed.unreadable_config", SEV_INFO,
	  "a DeepSpeed config preflight cannot open",
	  "pass the file with --deepspeed-config, or use an Axolotl preset",
	  check_ds_unreadable },
	{ "deepspeed.zero3_16bit_gather_on_save", SEV_ERROR,
	  "ZeRO-3 without gathering 16-bit weights on save",
	  "set gather_16bit_weights_on_model_save: true in the JSON",
	  check_ds_zero3_gather },
};
const size_t rules_deepspeed_len =
    sizeof(rules_deepspeed) / sizeof(rules_deepspeed[0]);
