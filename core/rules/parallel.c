/*
 * core/rules/parallel: the N-D device mesh (dp_replicate x dp_shard x tp x
 * cp) against the GPUs, and tensor parallelism.  Pure: a rule reads the
 * config through its struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include <stdio.h>

#include "core/models.h"
#include "core/plan.h"

/* The first parallel-size key written (dp_shard_size, ...), or NULL. */
static const struct doc_pair *
first_of_sizes(const struct rule_ctx *rc)
{
	static const char *const keys[] = { "dp_shard_size",
	    "dp_replicate_size", "tensor_parallel_size",
	    "context_parallel_size", "expert_parallel_size" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (cfg_pair(rc, keys[i]) != NULL)
			return cfg_pair(rc, keys[i]);
	return NULL;
}

/* The tensor-parallel size of the plan. */
static long long
tp_size(const struct rule_ctx *rc)
{
	return rc->plan->tp;
}

/* parallel.ddp_with_tp_or_cp */
static int
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

/* parallel.deepspeed_only_tp */
static int
check_parallel_ds_only_tp(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepspeed") || !(cfg_set(rc, "dp_shard_size") ||
	    cfg_set(rc, "dp_replicate_size") ||
	    cfg_int(rc, "expert_parallel_size", 1) > 1))
		return 0;
	return rule_report(rc, first_of_sizes(rc), "DeepSpeed composes with "
	    "tensor parallelism only; dp_shard/dp_replicate/expert sizes are "
	    "for FSDP");
}

/* parallel.dp_shard_without_fsdp */
static int
check_parallel_dp_shard_no_fsdp(struct rule_ctx *rc)
{
	if (explicit_size(rc, "dp_shard_size") <= 1 ||
	    cfg_on(rc, "fsdp") || cfg_on(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "dp_shard_size"),
	    "dp_shard_size (%lld) without FSDP: nothing shards, and the mesh "
	    "does not match the run", explicit_size(rc, "dp_shard_size"));
}

/* parallel.fsdp1_ignores_nd_layout */
static int
check_parallel_fsdp1_nd(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp_config") || fsdp_version(rc) == 2 ||
	    !(rc->plan->tp > 1 || cp_of(rc) > 1 || cfg_set(rc, "dp_shard_size") ||
	    cfg_set(rc, "dp_replicate_size")))
		return 0;
	return rule_report(rc, first_of_sizes(rc), "FSDP1 ignores the N-D "
	    "layout (dp_shard/dp_replicate/tp/cp); use fsdp_version: 2");
}

/* parallel.nd_product_mismatch */
static int
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

/* parallel.replicate_leftover_without_fsdp */
static int
check_parallel_replicate_leftover(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (fsdp_on(rc) || p->mesh_error == NULL ||
	    strstr(p->mesh_error, "unassigned") == NULL)
		return 0;
	return rule_report(rc, first_of_sizes(rc), "on %lld GPUs %s; without "
	    "FSDP nothing takes the remaining ranks", p->world, p->mesh_error);
}

/* parallel.tp_bnb_8bit_optimizer */
static int
check_parallel_tp_bnb(struct rule_ctx *rc)
{
	const char *o = cfg_str(rc, "optimizer");

	if (rc->plan->tp <= 1 || o == NULL || !(strcmp(o, "paged_adamw_8bit")
	    == 0 || strcmp(o, "adamw_8bit") == 0 ||
	    strcmp(o, "adamw_bnb_8bit") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "bitsandbytes 8-bit "
	    "optimizers do not shard with tensor parallelism; use "
	    "adamw_torch_8bit");
}

/* parallel.tp_deepspeed_autotp_patch */
static int
check_parallel_tp_autotp(struct rule_ctx *rc)
{
	if (rc->plan->tp <= 1 || !cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "tensor_parallel_size"), "Axolotl "
	    "enables DeepSpeed AutoTP (tensor_parallel.autotp_size %lld) and "
	    "16-bit gathering on save", rc->plan->tp);
}

/* parallel.tp_liger_flce: LigerArgs' check_tensor_parallel_size_liger_
   fused_linear_cross_entropy.  Without the Liger plugin the key is dropped
   (schema.plugin_key_without_plugin), so this is not an error then. */
static int
check_parallel_tp_liger_flce(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!plugin_on(rc, "liger") ||
	    !cfg_on(rc, "liger_fused_linear_cross_entropy") || tp_size(rc) <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc,
	    "liger_fused_linear_cross_entropy"), "Liger fused linear cross "
	    "entropy does not work with tensor_parallel_size %lld",
	    tp_size(rc));
}

/* parallel.tp_liger_rms_norm: LigerArgs' check_liger_rms_norm_tensor_
   parallel (only with the Liger plugin). */
static int
check_parallel_tp_liger_rms(struct rule_ctx *rc)
{
	const struct doc_pair *tp = raw_pair(rc, "tensor_parallel_size");

	/* A before-validator: a string size is a TypeError there
	   (schema.compared_as_number), not this. */
	if (!plugin_on(rc, "liger") || !cfg_on(rc, "liger_rms_norm") ||
	    tp_size(rc) <= 1 || (tp != NULL && tp->value->kind == DOC_STR))
		return 0;
	return rule_report(rc, cfg_pair(rc, "liger_rms_norm"),
	    "liger_rms_norm does not work with tensor_parallel_size %lld",
	    tp_size(rc));
}

/* parallel.tp_tied_embeddings */
static int
check_parallel_tp_tied(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);

	if (rc->plan->tp <= 1 || m == NULL || m->tie_word_embeddings != 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "tensor_parallel_size"), "%s ties its "
	    "word embeddings, which tensor parallelism does not support",
	    m->hf_id);
}

const struct rule_row rules_parallel[] = {
	{ "parallel.ddp_with_tp_or_cp", SEV_ERROR,
	  "dp_replicate_size without dp_shard_size next to tensor or context parallelism",
	  "set dp_shard_size too, or drop dp_replicate_size",
	  check_parallel_ddp_tp_cp },
	{ "parallel.deepspeed_only_tp", SEV_WARNING,
	  "DeepSpeed with FSDP-only parallel sizes",
	  "drop dp_shard/dp_replicate/expert sizes, or use FSDP2",
	  check_parallel_ds_only_tp },
	{ "parallel.dp_shard_without_fsdp", SEV_ERROR,
	  "dp_shard_size without FSDP",
	  "add fsdp_config with fsdp_version: 2, or remove dp_shard_size",
	  check_parallel_dp_shard_no_fsdp },
	{ "parallel.fsdp1_ignores_nd_layout", SEV_WARNING,
	  "FSDP1 ignores the N-D layout",
	  "set fsdp_version: 2",
	  check_parallel_fsdp1_nd },
	{ "parallel.nd_product_mismatch", SEV_ERROR,
	  "parallel sizes do not multiply to the number of GPUs",
	  "make dp_replicate x dp_shard x tp x cp equal the GPUs",
	  check_parallel_nd_product },
	{ "parallel.replicate_leftover_without_fsdp", SEV_ERROR,
	  "parallel sizes leave GPUs unassigned without FSDP",
	  "add FSDP, or make the sizes cover every GPU",
	  check_parallel_replicate_leftover },
	{ "parallel.tp_bnb_8bit_optimizer", SEV_WARNING,
	  "a bitsandbytes 8-bit optimizer with tensor parallelism",
	  "use adamw_torch_8bit",
	  check_parallel_tp_bnb },
	{ "parallel.tp_deepspeed_autotp_patch", SEV_INFO,
	  "DeepSpeed AutoTP is configured for you",
	  "nothing to fix",
	  check_parallel_tp_autotp },
	{ "parallel.tp_liger_flce", SEV_ERROR,
	  "Liger fused linear cross entropy with tensor parallelism",
	  "set liger_fused_linear_cross_entropy: false",
	  check_parallel_tp_liger_flce },
	{ "parallel.tp_liger_rms_norm", SEV_ERROR,
	  "Liger RMSNorm with tensor parallelism",
	  "set liger_rms_norm: false",
	  check_parallel_tp_liger_rms },
	{ "parallel.tp_tied_embeddings", SEV_ERROR,
	  "tensor parallelism on a model with tied embeddings",
	  "drop tensor_parallel_size for this model",
	  check_parallel_tp_tied },
};
const size_t rules_parallel_len =
    sizeof(rules_parallel) / sizeof(rules_parallel[0]);
