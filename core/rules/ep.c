/*
 * core/rules/ep: expert parallelism: its plugin, sizes against the GPUs
 * and the other dimensions, hardware.  Pure: a rule reads the config
 * through its struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/gpu.h"
#include "core/models.h"
#include "core/plan.h"

/* ep.hardware */
static int
check_ep_hardware(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (ep_size(rc) <= 1 || g == NULL ||
	    ((g->cc == 80 || g->cc == 90) && strcmp(g->link, "nvlink") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"), "DeepEP expert "
	    "parallelism is built for A100/H100-class GPUs on NVLink; %s is "
	    "not", g->id);
}

/* ep.must_divide_world */
static int
check_ep_divide_world(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;
	long long ep = ep_size(rc);

	if (ep <= 1 || p->world % ep == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"),
	    "expert_parallel_size (%lld) does not divide the %lld GPUs",
	    ep, p->world);
}

/* ep.num_experts_divisible */
static int
check_ep_num_experts(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);
	long long ep = ep_size(rc);

	if (ep <= 1 || m == NULL || m->num_experts <= 0 ||
	    m->num_experts % ep == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"), "%s has %lld "
	    "experts, not divisible by expert_parallel_size %lld", m->hf_id,
	    m->num_experts, ep);
}

/* ep.partial_without_dp_or_cp */
static int
check_ep_partial(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;
	long long ep = ep_size(rc);

	if (ep <= 1 || ep >= p->world ||
	    cfg_int(rc, "dp_shard_size", 0) > 1 || p->cp > 1 || p->tp <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"), "expert "
	    "parallelism over part of the GPUs (%lld of %lld) needs "
	    "dp_shard_size or context parallelism, not tensor parallelism",
	    ep, p->world);
}

/* ep.product_equals_world */
static int
check_ep_product(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;
	long long ss = explicit_size(rc, "dp_shard_size");
	long long prod = mul_sat(mul_sat(mul_sat(p->ep, ss > 0 ? ss : 1),
	    p->tp), p->cp);

	if (ep_size(rc) <= 1 || p->world % p->ep != 0 || prod == p->world)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"),
	    "expert_parallel_size (%lld) x dp_shard_size (%lld) x "
	    "tensor_parallel_size (%lld) x context_parallel_size (%lld) = "
	    "%lld, but %lld GPUs were given", p->ep, ss > 0 ? ss : 1, p->tp,
	    p->cp, prod, p->world);
}

/* ep.rdma_bytes_warning */
static int
check_ep_rdma(struct rule_ctx *rc)
{
	if (ep_size(rc) <= 1 ||
	    cfg_int(rc, "expert_parallel_num_rdma_bytes", 0) == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_num_rdma_bytes"),
	    "expert_parallel_num_rdma_bytes turns on the RDMA path, which "
	    "needs InfiniBand between nodes");
}

/* ep.requires_plugin: the key is dropped without its plugin; a warning,
   never an error about what it would have done (issue 14).  Without the
   plugin no model parses the key, so it is read as written (and as
   core/schema_check.c reads it), not as the plan's degree. */
static int
check_ep_requires_plugin(struct rule_ctx *rc)
{
	if (cfg_int(rc, "expert_parallel_size", 1) <= 1 || ep_plugin(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"),
	    "expert_parallel_size (%lld) without the ExpertParallelPlugin: "
	    "Axolotl drops the key and runs without expert parallelism",
	    cfg_int(rc, "expert_parallel_size", 1));
}

/* ep.size_minimum: ExpertParallelArgs._validate (only with the plugin). */
static int
check_ep_size_minimum(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "expert_parallel_size");
	long long v = cfg_int_of(p, 1);

	if (p == NULL || v >= 1 || !ep_plugin(rc))
		return 0;
	return rule_report(rc, p, "expert_parallel_size must be >= 1, got "
	    "%lld", v);
}

/* ep.token_capacity_minimum */
static int
check_ep_token_capacity(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc,
	    "expert_parallel_token_capacity");
	long long v = cfg_int_of(p, 1);

	if (p == NULL || v >= 1 || !ep_plugin(rc))
		return 0;
	return rule_report(rc, p, "expert_parallel_token_capacity must be "
	    ">= 1, got %lld", v);
}

/* ep.with_tp */
static int
check_ep_with_tp(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (ep_size(rc) <= 1 || p->tp <= 1 ||
	    !(explicit_size(rc, "dp_shard_size") > 1 || p->cp > 1))
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"),
	    "expert parallelism with tensor parallelism and data sharding "
	    "or context parallelism is not implemented");
}

const struct rule_row rules_ep[] = {
	{ "ep.hardware", SEV_WARNING,
	  "expert parallelism off A100/H100 with NVLink",
	  "expect DeepEP to be slow or unsupported here",
	  check_ep_hardware },
	{ "ep.must_divide_world", SEV_ERROR,
	  "expert_parallel_size does not divide the GPUs",
	  "use an expert_parallel_size that divides the GPUs",
	  check_ep_divide_world },
	{ "ep.num_experts_divisible", SEV_ERROR,
	  "experts not divisible by expert_parallel_size",
	  "pick an expert_parallel_size that divides the expert count",
	  check_ep_num_experts },
	{ "ep.partial_without_dp_or_cp", SEV_ERROR,
	  "partial expert parallelism with tensor parallelism",
	  "use dp_shard_size or context parallelism with EP",
	  check_ep_partial },
	{ "ep.product_equals_world", SEV_ERROR,
	  "expert x shard x tensor x context sizes differ from the GPUs",
	  "make ep x dp_shard x tp x cp equal the GPUs",
	  check_ep_product },
	{ "ep.rdma_bytes_warning", SEV_WARNING,
	  "DeepEP RDMA buffers are on",
	  "set expert_parallel_num_rdma_bytes: 0 on one node",
	  check_ep_rdma },
	{ "ep.requires_plugin", SEV_WARNING,
	  "expert parallelism without its plugin",
	  "add axolotl.integrations.expert_parallel.ExpertParallelPlugin to plugins:",
	  check_ep_requires_plugin },
	{ "ep.size_minimum", SEV_ERROR,
	  "expert_parallel_size below 1",
	  "set expert_parallel_size >= 1",
	  check_ep_size_minimum },
	{ "ep.token_capacity_minimum", SEV_ERROR,
	  "expert_parallel_token_capacity below 1",
	  "set it >= 1 or remove it",
	  check_ep_token_capacity },
	{ "ep.with_tp", SEV_ERROR,
	  "expert parallelism with tensor parallelism and sharding or context parallelism",
	  "drop tensor_parallel_size or the other dimension",
	  check_ep_with_tp },
};
const size_t rules_ep_len =
    sizeof(rules_ep) / sizeof(rules_ep[0]);
