/*
 * core/rules/memory: the findings of the memory estimate (DESIGN.md:
 * every reason for a verdict is a finding): estimate.*, memory.*, perf.*.
 * Reads rc->r->estimate.
 */
#include "core/rules_int.h"

#include <stddef.h>
#include <string.h>

#include "core/estimate.h"
#include "core/gpu.h"
#include "core/models.h"
#include "core/plan.h"
#include "core/report.h"

/* Static, reached through the rows; declared ahead so the rows can come
   first and the definitions below read as they did in
   core/checks_estimate.c. */
static rule_fn check_estimate_model_unknown, check_memory_exceeds,
    check_memory_headroom, check_perf_comm_bound, check_perf_tp_nodes,
    check_memory_host;

const struct rule_row rules_memory[] = {
	{ "estimate.model_unknown", SEV_WARNING,
	  "no memory estimate: the model's architecture is not in the catalog",
	  "pass the model's config.json (--model-config FILE, or \"model\" in "
	  "the request context), or use a catalog model's Hugging Face id "
	  "(GET /v1/catalog/models lists them) as base_model",
	  check_estimate_model_unknown },
	{ "memory.cpu_offload_exceeds_host", SEV_WARNING,
	  "what the run offloads to host memory exceeds the node's RAM",
	  "offload less (optimizer only, not parameters), use more nodes, or "
	  "shard over more GPUs",
	  check_memory_host },
	{ "memory.exceeds_capacity", SEV_ERROR,
	  "the estimated per-GPU peak memory exceeds the GPU's memory",
	  "shard the model (ZeRO-3 or FSDP), use LoRA or QLoRA, turn on "
	  "gradient_checkpointing, lower micro_batch_size or sequence_len, or "
	  "use more GPUs",
	  check_memory_exceeds },
	{ "memory.low_headroom", SEV_WARNING,
	  "the estimated per-GPU peak leaves under 10% of the GPU's memory free",
	  "leave room for fragmentation and longer samples: the same changes "
	  "as for memory.exceeds_capacity",
	  check_memory_headroom },
	{ "perf.comm_bound", SEV_WARNING,
	  "collective traffic takes longer than the compute it should hide behind",
	  "keep sharding inside a node (HSDP: dp_shard_size = GPUs per node), "
	  "raise gradient_accumulation_steps, or use a faster interconnect",
	  check_perf_comm_bound },
	{ "perf.tp_across_nodes", SEV_WARNING,
	  "tensor parallelism spans nodes: its per-layer all-reduces cross the slow link",
	  "keep tensor_parallel_size within the GPUs of one node and use data "
	  "or context parallelism across nodes",
	  check_perf_tp_nodes },
};
const size_t rules_memory_len =
    sizeof(rules_memory) / sizeof(rules_memory[0]);

static const struct doc_pair *
model_key(const struct rule_ctx *rc)
{
	return cfg_first(rc, "base_model", "base_model_config");
}

/* estimate.model_unknown */
int
check_estimate_model_unknown(struct rule_ctx *rc)
{
	const struct estimate *e = rc->r->estimate;
	const struct doc_pair *k = model_key(rc);

	if (e != NULL && k == NULL && rc->ctx->model == NULL &&
	    gpu_find(rc->ctx->gpu) != NULL)
		return rule_report(rc, NULL, "no base_model is set, so there "
		    "is no model whose memory to estimate");
	if (e == NULL || k == NULL || k->value->kind != DOC_STR ||
	    gpu_find(rc->ctx->gpu) == NULL ||
	    (e->known && !e->nominal && !e->derived))
		return 0;
	if (e->model != NULL && e->derived)
		return rule_report(rc, k, "the catalog has no verified "
		    "parameter count for %.200s (%.60s): the estimate counts "
		    "%.1fB parameters from its architecture with the dense/MoE "
		    "formula, which its special layers may not follow",
		    e->model->hf_id, e->model->model_type != NULL ?
		    e->model->model_type : "unknown type",
		    (double)e->params / 1e9);
	if (e->model != NULL && e->nominal)
		return rule_report(rc, k, "the catalog's architecture facts "
		    "for %.200s are unverified: the memory estimate assumes a "
		    "Llama-like shape of its nominal %.1fB parameters and a "
		    "128k vocabulary", e->model->hf_id,
		    (double)e->params / 1e9);
	if (e->model != NULL)
		return rule_report(rc, k, "the catalog has no size for %.200s, "
		    "so its memory is not estimated", e->model->hf_id);
	return rule_report(rc, k, "%.200s is not in the model catalog, so its "
	    "memory is not estimated", k->value->text);
}

/* memory.exceeds_capacity */
int
check_memory_exceeds(struct rule_ctx *rc)
{
	const struct estimate *e = rc->r->estimate;

	if (e == NULL || !e->known || e->fits)
		return 0;
	return rule_report(rc, model_key(rc), "estimated peak %.1f GiB per GPU "
	    "exceeds the %.1f GiB of %s; the largest term is %s (%.1f GiB)",
	    e->per_gpu_peak_gib, e->capacity_gib, rc->ctx->gpu,
	    e->largest_term, e->largest_gib);
}

/* memory.low_headroom */
int
check_memory_headroom(struct rule_ctx *rc)
{
	const struct estimate *e = rc->r->estimate;

	if (e == NULL || !e->known || !e->fits)
		return 0;
	if (e->per_gpu_peak_gib >= 0.9 * e->capacity_gib)
		return rule_report(rc, model_key(rc), "estimated peak %.1f GiB "
		    "per GPU leaves %.1f GiB of the %.1f GiB of %s free (under "
		    "10%%)", e->per_gpu_peak_gib, e->capacity_gib -
		    e->per_gpu_peak_gib, e->capacity_gib, rc->ctx->gpu);
	if (e->range_gib[1] > e->capacity_gib)
		return rule_report(rc, model_key(rc), "estimated peak %.1f GiB "
		    "per GPU fits the %.1f GiB of %s, but the high end of its "
		    "range (%.1f GiB, the spread of measured runs) does not",
		    e->per_gpu_peak_gib, e->capacity_gib, rc->ctx->gpu,
		    e->range_gib[1]);
	return 0;
}

/* perf.comm_bound */
int
check_perf_comm_bound(struct rule_ctx *rc)
{
	const struct estimate *e = rc->r->estimate;
	const struct doc_pair *at;

	if (e == NULL || !e->known || e->bound == NULL ||
	    strcmp(e->bound, "communication") != 0)
		return 0;
	at = cfg_first(rc, "deepspeed", "fsdp_config");
	if (at == NULL)
		at = cfg_first(rc, "tensor_parallel_size",
		    "context_parallel_size");
	return rule_report(rc, at, "each optimizer step moves %.1f GB per GPU "
	    "over %s: %.2f s of communication against %.2f s of compute",
	    e->comm_gb, rc->ctx->interconnect != NULL ?
	    rc->ctx->interconnect : "the interconnect", e->comm_time_s,
	    e->compute_time_s);
}

/* perf.tp_across_nodes */
int
check_perf_tp_nodes(struct rule_ctx *rc)
{
	long long tp = rc->plan->tp;

	if (tp <= 1 || rc->ctx->nodes <= 1 || tp <= rc->ctx->gpus_per_node)
		return 0;
	return rule_report(rc, cfg_pair(rc, "tensor_parallel_size"),
	    "tensor_parallel_size (%lld) is more than the %ld GPUs of one "
	    "node, so tensor-parallel all-reduces cross nodes", tp,
	    rc->ctx->gpus_per_node);
}

/* memory.cpu_offload_exceeds_host (with --host-memory-gib) */
int
check_memory_host(struct rule_ctx *rc)
{
	const struct estimate *e = rc->r->estimate;
	double need;

	if (e == NULL || !e->known || rc->ctx->host_memory_gib <= 0)
		return 0;
	need = e->cpu_offload_gib * (double)rc->ctx->gpus_per_node;
	if (need <= rc->ctx->host_memory_gib)
		return 0;
	return rule_report(rc, cfg_first(rc, "deepspeed", "fsdp_config"),
	    "the %ld GPUs of a node offload %.1f GiB to host memory, more "
	    "than its %.1f GiB", rc->ctx->gpus_per_node, need,
	    rc->ctx->host_memory_gib);
}
