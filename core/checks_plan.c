/*
 * core/checks_plan: rules that read the derived launch plan (core/plan):
 * the device mesh against the number of GPUs, expert parallelism, and the
 * DeepSpeed config Axolotl would hand to the trainer.  These are the
 * failures Axolotl's validator cannot see: they happen at launch, after
 * the GPUs are allocated.  No I/O.
 */
#include "checks.h"

#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "plan.h"
#include "rules_int.h"

static long long
explicit_size(const struct rule_ctx *rc, const char *key)
{
	return cfg_int(rc, key, 0);
}

static bool
ep_plugin(const struct rule_ctx *rc)
{
	const struct doc_pair *pl = cfg_pair(rc, "plugins");
	size_t i;

	for (i = 0; pl != NULL && pl->value->kind == DOC_SEQ &&
	    i < pl->value->n; i++)
		if (pl->value->items[i]->kind == DOC_STR &&
		    strstr(pl->value->items[i]->text, ".expert_parallel.") !=
		    NULL)
			return true;
	return false;
}

/* parallel.nd_product_mismatch */
int
check_parallel_nd_product(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;
	long long rr = explicit_size(rc, "dp_replicate_size");
	long long ss = explicit_size(rc, "dp_shard_size");
	long long R = rr > 0 ? rr : 1, S = ss > 0 ? ss : 1;
	long long E = ep_plugin(rc) ? p->ep : 1, W = p->world, prod;
	char dims[200];

	if (!(R > 1 || S > 1 || p->tp > 1 || p->cp > 1 || (E > 1 && S > 1)))
		return 0;
	/* cp alone not dividing W is cp.world_divisibility's. */
	if (p->cp > 1 && (W % p->cp != 0 || W < p->cp))
		return 0;
	prod = mul_sat(mul_sat(mul_sat(mul_sat(R, S), p->tp), p->cp), E);
	snprintf(dims, sizeof(dims), "dp_replicate_size (%lld) x "
	    "dp_shard_size (%lld) x tensor_parallel_size (%lld) x "
	    "context_parallel_size (%lld)%s = %lld", R, S, p->tp, p->cp,
	    E > 1 ? " x expert_parallel_size" : "", prod);
	if (W % prod != 0 || (rr > 0 && ss > 0 && prod != W))
		return rule_report(rc, first_of_sizes(rc), "%s, but %lld GPUs "
		    "were given", dims, W);
	if (prod < W)
		return rule_report_sev(rc, first_of_sizes(rc), SEV_WARNING,
		    "%s, less than the %lld GPUs: Axolotl's builder fills the "
		    "missing data-parallel dimension, accelerate's does not; "
		    "write it out", dims, W);
	return 0;
}

/* parallel.dp_shard_without_fsdp */
int
check_parallel_dp_shard_no_fsdp(struct rule_ctx *rc)
{
	if (explicit_size(rc, "dp_shard_size") <= 1 ||
	    cfg_on(rc, "fsdp") || cfg_on(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "dp_shard_size"),
	    "dp_shard_size (%lld) without FSDP: nothing shards, and the mesh "
	    "does not match the run", explicit_size(rc, "dp_shard_size"));
}

/* parallel.ddp_with_tp_or_cp */
int
check_parallel_ddp_tp_cp(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (explicit_size(rc, "dp_replicate_size") <= 1 ||
	    explicit_size(rc, "dp_shard_size") > 1 || (p->tp <= 1 &&
	    p->cp <= 1))
		return 0;
	return rule_report(rc, cfg_pair(rc, "dp_replicate_size"),
	    "dp_replicate_size without dp_shard_size cannot be combined with "
	    "tensor or context parallelism (accelerate refuses it)");
}

/* ep.must_divide_world */
int
check_ep_divide_world(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (p->ep <= 1 || p->world % p->ep == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"),
	    "expert_parallel_size (%lld) does not divide the %lld GPUs",
	    p->ep, p->world);
}

/* ep.product_equals_world */
int
check_ep_product(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;
	long long ss = explicit_size(rc, "dp_shard_size");
	long long prod = mul_sat(mul_sat(mul_sat(p->ep, ss > 0 ? ss : 1),
	    p->tp), p->cp);

	if (p->ep <= 1 || p->world % p->ep != 0 || prod == p->world ||
	    !ep_plugin(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"),
	    "expert_parallel_size (%lld) x dp_shard_size (%lld) x "
	    "tensor_parallel_size (%lld) x context_parallel_size (%lld) = "
	    "%lld, but %lld GPUs were given", p->ep, ss > 0 ? ss : 1, p->tp,
	    p->cp, prod, p->world);
}

/* ep.with_tp */
int
check_ep_with_tp(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (p->ep <= 1 || p->tp <= 1 ||
	    !(explicit_size(rc, "dp_shard_size") > 1 || p->cp > 1))
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"),
	    "expert parallelism with tensor parallelism and data sharding "
	    "or context parallelism is not implemented");
}

/* deepspeed.unreadable_config */
int
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
int
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

/* deepspeed.bf16_preset_requires_bf16 */
int
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

static bool
ds_number(const struct doc_node *m, const char *key, long long *out)
{
	const struct doc_pair *v = doc_map_get(m, key);

	if (v == NULL || v->value->kind != DOC_INT)
		return false;
	*out = v->value->i;
	return true;
}

/* deepspeed.hardcoded_value_mismatch (batch values) */
int
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

/* deepspeed.single_gpu */
int
check_ds_single_gpu(struct rule_ctx *rc)
{
	if (rc->plan->ds == DS_NONE || rc->plan->world != 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "DeepSpeed on one "
	    "GPU adds nothing but startup problems (mpi4py)");
}

/* deepspeed.optimizer_block_overrides */
int
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
