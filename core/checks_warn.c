/*
 * core/checks_warn: the warning, info (what Axolotl silently changes) and
 * remaining gap rules of rules.md.  Conditions are rules.md's.  No I/O.
 */
#include "checks.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "estimate.h"
#include "gpu.h"
#include "models.h"
#include "plan.h"
#include "rules_int.h"

static bool
fsdp_on(const struct rule_ctx *rc)
{
	return cfg_on(rc, "fsdp_config") || cfg_on(rc, "fsdp");
}

static long long
cp_of(const struct rule_ctx *rc)
{
	return rc->plan->cp;
}

static bool
kernel_flag_true(const struct rule_ctx *rc)
{
	return cfg_true(rc, "lora_mlp_kernel") || cfg_true(rc, "lora_qkv_kernel")
	    || cfg_true(rc, "lora_o_kernel");
}

static const struct model_def *
model_of(const struct rule_ctx *rc)
{
	/* core/check runs the estimate before the rules; it has already
	   looked base_model (then base_model_config) up. */
	return rc->r->estimate != NULL ? rc->r->estimate->model : NULL;
}

/* ---- batch ---------------------------------------------------------- */

/* batch.batch_size_discouraged */
int
check_batch_bs_discouraged(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "batch_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_size"), "batch_size is "
	    "deprecated; Axolotl derives it from micro_batch_size and "
	    "gradient_accumulation_steps");
}

/* batch.batch_size_floor_division */
int
check_batch_bs_floor(struct rule_ctx *rc)
{
	const struct doc_pair *gas = cfg_pair(rc, "gradient_accumulation_steps");
	long long bs = cfg_int(rc, "batch_size", 0);
	long long mbs = cfg_int(rc, "micro_batch_size", 1);

	if (bs <= 0 || cfg_on(rc, "gradient_accumulation_steps"))
		return 0;
	if (gas == NULL)
		/* Wasteful, not fatal: Axolotl accepts it and the
		 * run starts, so warn (rules.md suggests error). */
		return rule_report_sev(rc, cfg_pair(rc, "batch_size"),
		    SEV_WARNING, "batch_size %lld with "
		    "gradient_accumulation_steps omitted: the schema's "
		    "default 1 wins and batch_size is not divided", bs);
	if (mbs > 0 && bs < mbs)
		return rule_report(rc, cfg_pair(rc, "batch_size"), "batch_size %lld "
		    "< micro_batch_size %lld: gradient_accumulation_steps "
		    "becomes 0", bs, mbs);
	if (mbs > 0 && bs % mbs != 0)
		return rule_report_sev(rc, cfg_pair(rc, "batch_size"), SEV_WARNING,
		    "batch_size %lld is not a multiple of micro_batch_size "
		    "%lld; the remainder is dropped", bs, mbs);
	return 0;
}

/* batch.global_batch_world_scaling */
int
check_batch_world_scaling(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (p->world == 1 || p->global_batch_size == p->batch_size)
		return 0;
	return rule_report(rc, NULL, "on %lld GPUs the batch per optimizer "
	    "step is %lld (micro_batch_size %lld x gradient_accumulation_steps "
	    "%lld x %lld data-parallel ranks)", p->world, p->global_batch_size,
	    p->micro_batch_size, p->gradient_accumulation_steps,
	    p->global_batch_size / (p->batch_size > 0 ? p->batch_size : 1));
}

/* batch.ddp_false_multi_gpu */
int
check_batch_ddp_false(struct rule_ctx *rc)
{
	if (!cfg_false(rc, "ddp") || rc->plan->world <= 1 || fsdp_on(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "ddp"), "ddp: false on %lld GPUs: the "
	    "batch is not scaled by the GPU count", rc->plan->world);
}

/* batch.eval_mbs_mismatch */
int
check_batch_eval_mbs(struct rule_ctx *rc)
{
	long long e = cfg_int(rc, "eval_batch_size", 0);
	long long m = cfg_int(rc, "micro_batch_size", 0);

	if (!cfg_on(rc, "eval_batch_size") || !cfg_on(rc, "micro_batch_size") ||
	    e == m)
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_batch_size"), "eval_batch_size "
	    "(%lld) differs from micro_batch_size (%lld)", e, m);
}

/* batch.eval_batch_size_default */
int
check_batch_eval_default(struct rule_ctx *rc)
{
	if (cfg_set(rc, "eval_batch_size"))
		return 0;
	return rule_report(rc, NULL, "eval_batch_size is unset: Axolotl uses "
	    "micro_batch_size (%lld)", rc->plan->micro_batch_size);
}

/* batch.dataloader_defaults */
int
check_batch_dataloader(struct rule_ctx *rc)
{
	if (cfg_set(rc, "dataloader_num_workers") ||
	    cfg_set(rc, "dataloader_pin_memory") ||
	    cfg_set(rc, "dataloader_prefetch_factor"))
		return 0;
	return rule_report(rc, NULL, "no dataloader settings: Axolotl uses "
	    "%ld worker%s, pinned memory and prefetch 256", rc->ctx->gpus,
	    rc->ctx->gpus == 1 ? "" : "s");
}

static bool
packing_backend(const char *be)
{
	static const char *const ok[] = { "flash_attention_2",
	    "flash_attention_3", "flex_attention", "xformers", "sage",
	    "kernels-community/flash-attn2", "kernels-community/flash-attn3" };
	size_t i;

	for (i = 0; be != NULL && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(be, ok[i]) == 0)
			return true;
	return false;
}

/* batch.flattening_requires_varlen_attention */
int
check_batch_flattening_varlen(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (!cfg_true(rc, "batch_flattening") || packing_backend(be))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_flattening"), "batch_flattening "
	    "needs a varlen attention backend (flash attention), not %s",
	    be != NULL ? be : "the default");
}

/* batch.flattening_mbs_one */
int
check_batch_flattening_mbs1(struct rule_ctx *rc)
{
	if (!cfg_true(rc, "batch_flattening") || rc->plan->micro_batch_size != 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_flattening"), "batch_flattening "
	    "with micro_batch_size 1 has nothing to flatten");
}

/* batch.flattening_auto_resolution */
int
check_batch_flattening_auto(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "batch_flattening", "auto"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_flattening"), "batch_flattening: "
	    "auto turns on only with micro_batch_size > 1, no packing and a "
	    "varlen backend");
}

/* batch.grpo_sp_group_divisibility */
int
check_batch_grpo_sp(struct rule_ctx *rc)
{
	const struct doc_pair *ng = cfg_sub(rc, "trl", "num_generations");
	long long b, n;

	if (!cfg_is(rc, "rl", "grpo") || cp_of(rc) <= 1 || ng == NULL ||
	    ng->value->kind != DOC_INT)
		return 0;
	n = ng->value->i;
	b = rc->plan->micro_batch_size * (rc->plan->world / cp_of(rc));
	if (n >= 2 && n <= b && b % n == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), "with context parallelism "
	    "GRPO needs num_generations (%lld) between 2 and %lld dividing "
	    "it (micro_batch_size x GPUs / cp)", n, b);
}

/* ---- packing -------------------------------------------------------- */

/* packing.pad_to_sequence_len_default */
int
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

/* packing.eval_sample_packing_default */
int
check_packing_eval_default(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sample_packing") || cfg_set(rc, "eval_sample_packing") ||
	    cfg_on(rc, "eval_table_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sample_packing"), "sample_packing "
	    "also packs evaluation (eval_sample_packing: true)");
}

/* packing.remove_unused_columns_autoset */
int
check_packing_ruc(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sample_packing") || !cfg_false(rc,
	    "eval_sample_packing") || cfg_set(rc, "remove_unused_columns"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_sample_packing"), "Axolotl sets "
	    "remove_unused_columns: false for unpacked evaluation");
}

/* packing.no_decontaminating_backend */
int
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

/* packing.sdpa_bf16_not_hopper */
int
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

/* packing.fp16_full_finetune_without_flash */
int
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

/* packing.causal_lm_eval_conflict */
int
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
int
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

/* packing.sdpa_varlen_inert */
int
check_packing_sdpa_varlen(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sdpa_varlen") || (cfg_on(rc, "sample_packing") &&
	    rc->ctx->torch >= 2100))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sdpa_varlen"), "sdpa_varlen does "
	    "nothing without sample_packing and torch 2.10 or newer");
}

/* packing.sage_without_padding */
int
check_packing_sage_padding(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (be == NULL || strcmp(be, "sage") != 0 ||
	    cfg_on(rc, "sample_packing") || cfg_on(rc, "pad_to_sequence_len"))
		return 0;
	return rule_report(rc, NULL, "sage attention without packing needs "
	    "pad_to_sequence_len: true");
}

/* packing.buffer_size_renamed */
int
check_packing_buffer_renamed(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "pretrain_multipack_buffer_size"))
		return 0;
	if (cfg_set(rc, "streaming_multipack_buffer_size"))
		return rule_report_sev(rc, cfg_pair(rc,
		    "pretrain_multipack_buffer_size"), SEV_ERROR,
		    "pretrain_multipack_buffer_size and its new name "
		    "streaming_multipack_buffer_size are both set");
	return rule_report(rc, cfg_pair(rc, "pretrain_multipack_buffer_size"),
	    "pretrain_multipack_buffer_size is renamed "
	    "streaming_multipack_buffer_size");
}

/* ---- attention and context parallel --------------------------------- */

/* attn.legacy_flag_renamed */
int
check_attn_legacy_renamed(struct rule_ctx *rc)
{
	size_t i;

	if (cfg_set(rc, "attn_implementation"))
		return 0;
	for (i = 0; i < plan_legacy_attn_len; i++)
		if (cfg_on(rc, plan_legacy_attn[i].flag))
			return rule_report(rc, cfg_pair(rc,
			    plan_legacy_attn[i].flag), "%s is a legacy flag; "
			    "Axolotl reads it as attn_implementation: %s",
			    plan_legacy_attn[i].flag, plan_legacy_attn[i].impl);
	return 0;
}

/* attn.gemma4_hybrid_requires_fa2 */
int
check_attn_gemma4_hybrid(struct rule_ctx *rc)
{
	const char *impl = cfg_str(rc, "attn_implementation");

	if (!cfg_on(rc, "gemma4_hybrid_attn_impl"))
		return 0;
	if (impl != NULL && strcmp(impl, "flash_attention_2") != 0)
		return rule_report(rc, cfg_pair(rc, "attn_implementation"),
		    "gemma4_hybrid_attn_impl needs attn_implementation: "
		    "flash_attention_2, got %s", impl);
	if (impl == NULL && attn_backend(rc) == NULL)
		return rule_report_sev(rc, cfg_pair(rc, "gemma4_hybrid_attn_impl"),
		    SEV_INFO, "gemma4_hybrid_attn_impl sets "
		    "attn_implementation: flash_attention_2");
	return 0;
}

/* attn.sage_full_finetune */
int
check_attn_sage_fft(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (be == NULL || strcmp(be, "sage") != 0 || cfg_set(rc, "adapter"))
		return 0;
	return rule_report(rc, NULL, "sage attention in a full fine-tune is "
	    "known to diverge; prefer it with LoRA");
}

/* cp.sequence_parallel_degree_renamed */
int
check_cp_spd_renamed(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sequence_parallel_degree") ||
	    cfg_on(rc, "context_parallel_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sequence_parallel_degree"),
	    "sequence_parallel_degree is renamed context_parallel_size");
}

/* cp.ring_attn_func_default */
int
check_cp_ring_default(struct rule_ctx *rc)
{
	if (cp_of(rc) <= 1 || cfg_set(rc, "ring_attn_func") ||
	    cfg_on(rc, "use_glm_dsa_kernels"))
		return 0;
	return rule_report(rc, NULL, "context parallelism uses ring_attn_func "
	    "%s", cfg_on(rc, "sample_packing") ? "varlen_llama3" :
	    "batch_ring");
}

/* cp.loss_reporting_note */
int
check_cp_loss_note(struct rule_ctx *rc)
{
	if (cp_of(rc) <= 1 || cfg_on(rc, "use_glm_dsa_kernels"))
		return 0;
	return rule_report(rc, NULL, "with context parallelism the logged "
	    "loss is averaged across the context-parallel group");
}

/* cp.ssm_hybrid_unvalidated */
int
check_cp_ssm_hybrid(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);

	if (cp_of(rc) <= 1 || m == NULL || m->model_type == NULL ||
	    !(strcmp(m->model_type, "nemotron_h") == 0 ||
	    strcmp(m->model_type, "falcon_h1") == 0 ||
	    strcmp(m->model_type, "granitemoehybrid") == 0))
		return 0;
	return rule_report(rc, NULL, "context parallelism on the hybrid SSM "
	    "model type %s is not validated", m->model_type);
}

/* cp.glm_dsa_exemption */
int
check_cp_glm_dsa(struct rule_ctx *rc)
{
	if (cp_of(rc) <= 1 || !cfg_on(rc, "use_glm_dsa_kernels"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_glm_dsa_kernels"), "GLM DSA "
	    "kernels bring their own context parallelism; ring attention "
	    "settings are ignored");
}

/* cp.heads_k_stride_divides_kv_heads */
int
check_cp_heads_k_stride(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);
	long long s = cfg_int(rc, "heads_k_stride", 0);

	if (cp_of(rc) <= 1 || s <= 0 || m == NULL ||
	    m->num_key_value_heads <= 0 || m->num_key_value_heads % s == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "heads_k_stride"), "heads_k_stride "
	    "(%lld) must divide the model's %lld key/value heads", s,
	    m->num_key_value_heads);
}

/* cp.grpo_async */
int
check_cp_grpo_async(struct rule_ctx *rc)
{
	const struct doc_pair *a = cfg_sub(rc, "trl", "async_prefetch");
	const struct doc_pair *d = cfg_sub(rc, "trl", "use_data_producer");

	if (!cfg_is(rc, "rl", "grpo") || cp_of(rc) <= 1 ||
	    !((a != NULL && doc_truthy(a->value)) ||
	    (d != NULL && doc_truthy(d->value))))
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), "asynchronous GRPO generation "
	    "does not work with context parallelism");
}

/* ---- parallel and expert parallel ----------------------------------- */

/* parallel.replicate_leftover_without_fsdp */
int
check_parallel_replicate_leftover(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (fsdp_on(rc) || p->mesh_error == NULL ||
	    strstr(p->mesh_error, "unassigned") == NULL)
		return 0;
	return rule_report(rc, first_of_sizes(rc), "on %lld GPUs %s; without "
	    "FSDP nothing takes the remaining ranks", p->world, p->mesh_error);
}

/* parallel.fsdp1_ignores_nd_layout */
int
check_parallel_fsdp1_nd(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp_config") || fsdp_version(rc) == 2 ||
	    !(rc->plan->tp > 1 || cp_of(rc) > 1 || cfg_set(rc, "dp_shard_size") ||
	    cfg_set(rc, "dp_replicate_size")))
		return 0;
	return rule_report(rc, first_of_sizes(rc), "FSDP1 ignores the N-D "
	    "layout (dp_shard/dp_replicate/tp/cp); use fsdp_version: 2");
}

/* parallel.deepspeed_only_tp */
int
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

/* parallel.tp_tied_embeddings */
int
check_parallel_tp_tied(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);

	if (rc->plan->tp <= 1 || m == NULL || m->tie_word_embeddings != 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "tensor_parallel_size"), "%s ties its "
	    "word embeddings, which tensor parallelism does not support",
	    m->hf_id);
}

/* parallel.tp_deepspeed_autotp_patch */
int
check_parallel_tp_autotp(struct rule_ctx *rc)
{
	if (rc->plan->tp <= 1 || !cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "tensor_parallel_size"), "Axolotl "
	    "enables DeepSpeed AutoTP (tensor_parallel.autotp_size %lld) and "
	    "16-bit gathering on save", rc->plan->tp);
}

/* parallel.tp_bnb_8bit_optimizer */
int
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

/* ep.rdma_bytes_warning */
int
check_ep_rdma(struct rule_ctx *rc)
{
	if (cfg_int(rc, "expert_parallel_size", 1) <= 1 ||
	    cfg_int(rc, "expert_parallel_num_rdma_bytes", 0) == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_num_rdma_bytes"),
	    "expert_parallel_num_rdma_bytes turns on the RDMA path, which "
	    "needs InfiniBand between nodes");
}

/* ep.partial_without_dp_or_cp */
int
check_ep_partial(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (p->ep <= 1 || p->ep >= p->world ||
	    cfg_int(rc, "dp_shard_size", 0) > 1 || p->cp > 1 || p->tp <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"), "expert "
	    "parallelism over part of the GPUs (%lld of %lld) needs "
	    "dp_shard_size or context parallelism, not tensor parallelism",
	    p->ep, p->world);
}

/* ep.num_experts_divisible */
int
check_ep_num_experts(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);
	long long ep = cfg_int(rc, "expert_parallel_size", 1);

	if (ep <= 1 || m == NULL || m->num_experts <= 0 ||
	    m->num_experts % ep == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"), "%s has %lld "
	    "experts, not divisible by expert_parallel_size %lld", m->hf_id,
	    m->num_experts, ep);
}

/* ep.hardware */
int
check_ep_hardware(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (cfg_int(rc, "expert_parallel_size", 1) <= 1 || g == NULL ||
	    ((g->cc == 80 || g->cc == 90) && strcmp(g->link, "nvlink") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"), "DeepEP expert "
	    "parallelism is built for A100/H100-class GPUs on NVLink; %s is "
	    "not", g->id);
}

/* ---- MoE ------------------------------------------------------------ */

/* moe.quantize_experts_fsdp2_ram_loading */
int
check_moe_quant_fsdp2_ram(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_sub(rc, "fsdp_config",
	    "cpu_ram_efficient_loading");

	if (!cfg_on(rc, "quantize_moe_experts") || !cfg_is(rc, "adapter",
	    "qlora") || fsdp_version(rc) != 2 || p == NULL ||
	    !doc_truthy(p->value))
		return 0;
	return rule_report(rc, p, "quantized MoE experts with FSDP2 "
	    "cpu_ram_efficient_loading are known to fail loading");
}

/* moe.experts_implementation_fallback */
int
check_moe_experts_impl(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "experts_implementation");

	if (v == NULL)
		return 0;
	if ((strcmp(v, "scattermoe") == 0 && !cfg_on(rc, "use_scattermoe")) ||
	    (strcmp(v, "sonicmoe") == 0 && !cfg_on(rc, "use_sonicmoe")) ||
	    !(strcmp(v, "scattermoe") == 0 || strcmp(v, "sonicmoe") == 0 ||
	    strcmp(v, "eager") == 0 || strcmp(v, "grouped_mm") == 0 ||
	    strcmp(v, "batched_mm") == 0))
		return rule_report(rc, cfg_pair(rc, "experts_implementation"),
		    "experts_implementation %.40s does not match the kernel "
		    "flags; Axolotl falls back", v);
	return 0;
}

/* ---- FSDP ----------------------------------------------------------- */

/* fsdp.v1_deprecated */
int
check_fsdp_v1(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp_config") || fsdp_version(rc) == 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"), "FSDP1 is deprecated; "
	    "set fsdp_version: 2");
}

/* fsdp.version_default_pinned */
int
check_fsdp_version_pinned(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp_config") || cfg_set(rc, "fsdp_version") ||
	    fsdp_pair(rc, "version") != NULL)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"), "no fsdp_version: "
	    "Axolotl pins FSDP1");
}

/* fsdp.version_in_fsdp_config */
int
check_fsdp_version_nested(struct rule_ctx *rc)
{
	const struct doc_pair *in = cfg_sub(rc, "fsdp_config", "version");

	if (in == NULL)
		in = cfg_sub(rc, "fsdp_config", "fsdp_version");
	if (in == NULL || cfg_set(rc, "fsdp_version"))
		return 0;
	return rule_report(rc, in, "fsdp_version inside fsdp_config is copied "
	    "to the top level");
}

/* fsdp.version_only_nested */
int
check_fsdp_version_only_nested(struct rule_ctx *rc)
{
	if (cfg_set(rc, "fsdp_version") || fsdp_version(rc) != 2 ||
	    !cfg_on(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"), "FSDP2 is declared only "
	    "inside fsdp_config; some checks read the top-level "
	    "fsdp_version, so write it there");
}

static const char *const fsdp_keys[] = { "fsdp_version", "version",
    "activation_checkpointing", "offload_params", "sync_module_states",
    "cpu_ram_efficient_loading", "cpu_offload_pin_memory", "use_orig_params",
    "state_dict_type", "final_state_dict_type", "auto_wrap_policy",
    "transformer_layer_cls_to_wrap", "min_num_params",
    "reshard_after_forward", "mixed_precision_policy" };

/* fsdp.prefixed_keys_renamed */
int
check_fsdp_prefixed(struct rule_ctx *rc)
{
	const struct doc_pair *f = cfg_pair(rc, "fsdp_config");
	size_t i;

	if (f == NULL || f->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < f->value->n; i++) {
		const struct doc_pair *p = &f->value->pairs[i];

		if (p->key->kind == DOC_STR && strncmp(p->key->text, "fsdp_",
		    5) == 0 && strcmp(p->key->text, "fsdp_version") != 0)
			return rule_report(rc, p, "fsdp_config keys lost their "
			    "fsdp_ prefix (%.60s is read as %.60s)",
			    p->key->text, p->key->text + 5);
	}
	return 0;
}

/* fsdp.unknown_fsdp_config_key */
int
check_fsdp_unknown_key(struct rule_ctx *rc)
{
	const struct doc_pair *f = cfg_pair(rc, "fsdp_config");
	size_t i, k;
	int rv;

	if (f == NULL || f->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < f->value->n; i++) {
		const struct doc_pair *p = &f->value->pairs[i];
		const char *key = p->key->text;
		bool known = false;

		if (p->key->kind != DOC_STR)
			continue;
		if (strncmp(key, "fsdp_", 5) == 0 &&
		    strcmp(key, "fsdp_version") != 0)
			key += 5;
		for (k = 0; k < sizeof(fsdp_keys) / sizeof(fsdp_keys[0]); k++)
			if (strcmp(key, fsdp_keys[k]) == 0)
				known = true;
		if (known)
			continue;
		rv = rule_report(rc, p, "fsdp_config.%.60s is not an FSDP "
		    "setting Axolotl knows; it is dropped%s", key,
		    strcmp(key, "sharding_strategy") == 0 ? " (FSDP2: use "
		    "reshard_after_forward)" : "");
		if (rv != 0)
			return rv;
	}
	return 0;
}

/* fsdp.legacy_list_deprecated */
int
check_fsdp_legacy_list(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "fsdp"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp"), "the fsdp list is deprecated; "
	    "use fsdp_version and fsdp_config");
}

/* fsdp.legacy_list_without_fsdp_config */
int
check_fsdp_legacy_no_config(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp") || cfg_set(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp"), "the fsdp list without "
	    "fsdp_config fails at launch");
}

/* fsdp.legacy_list_type */
int
check_fsdp_legacy_type(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "fsdp");
	size_t i;

	if (p == NULL || p->value->kind == DOC_NULL)
		return 0;
	if (p->value->kind == DOC_SEQ) {
		for (i = 0; i < p->value->n; i++)
			if (p->value->items[i]->kind != DOC_STR)
				break;
		if (i == p->value->n)
			return 0;
	}
	return rule_report(rc, p, "fsdp must be a list of words, e.g. "
	    "[full_shard, auto_wrap]");
}

/* fsdp.empty_config */
int
check_fsdp_empty(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "fsdp_config");
	size_t i;

	if (p == NULL || p->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < p->value->n; i++)
		if (p->value->pairs[i].value->kind != DOC_NULL)
			return 0;
	return rule_report(rc, p, "an empty fsdp_config turns FSDP off");
}

/* fsdp.fp32_norm_classes_ignored */
int
check_fsdp_fp32_classes(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "fp32_norm_classes") || cfg_on(rc, "fp32_norms"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp32_norm_classes"),
	    "fp32_norm_classes does nothing without fp32_norms: true");
}

/* fsdp.final_state_dict_type_toplevel_ignored */
int
check_fsdp_final_toplevel(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "fsdp_final_state_dict_type"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_final_state_dict_type"), "a "
	    "top-level fsdp_final_state_dict_type is never read; set "
	    "fsdp_config.final_state_dict_type");
}

/* fsdp.sharded_final_save */
int
check_fsdp_sharded_save(struct rule_ctx *rc)
{
	const struct doc_pair *f = fsdp_pair(rc, "final_state_dict_type");

	if (f == NULL)
		f = fsdp_pair(rc, "state_dict_type");
	if (!fsdp_on(rc) || f == NULL || f->value->kind != DOC_STR ||
	    strcmp(f->value->text, "SHARDED_STATE_DICT") != 0)
		return 0;
	return rule_report(rc, f, "the final save is sharded; Axolotl "
	    "merges the shards afterwards");
}

/* fsdp.offload_with_cp_torchao_optimizer */
int
check_fsdp_offload_cp_ao(struct rule_ctx *rc)
{
	const struct doc_pair *off = fsdp_pair(rc, "offload_params");
	const char *o = cfg_str(rc, "optimizer");

	if (off == NULL || !doc_truthy(off->value) || cp_of(rc) <= 1 ||
	    o == NULL || strncmp(o, "adamw_torch_", 12) != 0 ||
	    strstr(o, "bit") == NULL)
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "param offload with "
	    "context parallelism and a torchao low-bit optimizer is known to "
	    "fail");
}

/* ---- quantization and LoRA kernels ---------------------------------- */

/* quant.qlora_zero3_non_reentrant */
int
check_quant_qlora_zero3(struct rule_ctx *rc)
{
	const struct doc_pair *ur = cfg_sub(rc, "gradient_checkpointing_kwargs",
	    "use_reentrant");
	const char *ds = cfg_str(rc, "deepspeed");

	if (!cfg_is(rc, "adapter", "qlora") || ur == NULL ||
	    ur->value->kind != DOC_BOOL || ur->value->b || ds == NULL ||
	    strstr(ds, "zero3") == NULL)
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing_kwargs"),
	    "QLoRA with ZeRO-3 and use_reentrant: false is known to fail in "
	    "the backward pass");
}

/* quant.fsdp_qlora_quant_storage */
int
check_quant_fsdp_storage(struct rule_ctx *rc)
{
	const struct doc_pair *qs = cfg_sub(rc, "bnb_config_kwargs",
	    "bnb_4bit_quant_storage");
	const char *prec = rc->plan->precision;

	if (!fsdp_on(rc) || !cfg_is(rc, "adapter", "qlora"))
		return 0;
	if (qs != NULL && qs->value->kind == DOC_STR &&
	    strstr(qs->value->text, strcmp(prec, "fp16") == 0 ? "float16" :
	    "bfloat16") == NULL)
		return rule_report(rc, qs, "FSDP needs the QLoRA storage dtype "
		    "(%.40s) to match the training dtype (%s)", qs->value->text,
		    prec);
	if (qs == NULL && strcmp(prec, "fp16") == 0)
		return rule_report(rc, cfg_pair(rc, "adapter"), "FSDP QLoRA stores "
		    "4-bit weights as bfloat16 but this run is fp16; set "
		    "bnb_config_kwargs.bnb_4bit_quant_storage: float16");
	return 0;
}

/* quant.qlora_sharded_loading_inert */
int
check_quant_sharded_loading(struct rule_ctx *rc)
{
	const struct doc_pair *cr = fsdp_pair(rc, "cpu_ram_efficient_loading");

	if (!cfg_true(rc, "qlora_sharded_model_loading") ||
	    (fsdp_on(rc) && cfg_is(rc, "adapter", "qlora") && cr != NULL &&
	    doc_truthy(cr->value)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "qlora_sharded_model_loading"),
	    "qlora_sharded_model_loading does nothing without FSDP, QLoRA and "
	    "cpu_ram_efficient_loading");
}

/* quant.fsdp_qlora_model_types */
int
check_quant_fsdp_qlora_types(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);

	if (!fsdp_on(rc) || !cfg_is(rc, "adapter", "qlora") || m == NULL ||
	    m->model_type == NULL || strcmp(m->model_type, "llama") == 0 ||
	    strcmp(m->model_type, "mistral") == 0 ||
	    strcmp(m->model_type, "mixtral") == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "adapter"), "FSDP QLoRA is documented "
	    "for llama, mistral and mixtral; %s is %s", m->hf_id,
	    m->model_type);
}

/* lora_kernels.auto_enable */
int
check_lora_kernels_auto(struct rule_ctx *rc)
{
	static const char *const k[] = { "lora_mlp_kernel", "lora_qkv_kernel",
	    "lora_o_kernel", "lora_embedding_kernel" };
	const char *ad = cfg_str(rc, "adapter");
	size_t i;

	if (ad == NULL || !(strcmp(ad, "lora") == 0 ||
	    strcmp(ad, "qlora") == 0) || cfg_set(rc, "rl") ||
	    cfg_on(rc, "nvfp4_merge_aware") || cfg_on(rc, "trust_remote_code")
	    || (strcmp(ad, "lora") == 0 && cfg_on(rc, "load_in_8bit")))
		return 0;
	for (i = 0; i < 4; i++)
		if (cfg_set(rc, k[i]))
			return 0;
	if (rc->ctx->gpus > 1 && cfg_set(rc, "fsdp_config") &&
	    cfg_int(rc, "fsdp_version", 0) != 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "adapter"), "Axolotl turns the LoRA "
	    "kernels on (lora_mlp/qkv/o/embedding_kernel)");
}

/* lora_kernels.nvfp4_merge_aware_conflict */
int
check_lora_kernels_nvfp4(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "nvfp4_merge_aware") || !kernel_flag_true(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "nvfp4_merge_aware"),
	    "nvfp4_merge_aware does not work with the LoRA kernels");
}

/* lora_kernels.rl_not_supported */
int
check_lora_kernels_rl(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "rl") || !kernel_flag_true(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "rl"), "the LoRA kernels are not "
	    "supported for RL trainers");
}

/* ---- precision ------------------------------------------------------ */

/* precision.bf16_auto_resolution */
int
check_precision_bf16_auto(struct rule_ctx *rc)
{
	const struct doc_pair *bf = cfg_pair(rc, "bf16");
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (!(bf == NULL || (bf->value->kind == DOC_STR &&
	    strcmp(bf->value->text, "auto") == 0)) || cfg_on(rc, "fp16") ||
	    cfg_on(rc, "use_ray") || g == NULL)
		return 0;
	return rule_report(rc, bf, "bf16: auto resolves to %s on %s",
	    g->bf16 ? "bf16" : "fp16", g->id);
}

/* precision.bf16_and_fp16_both_true */
int
check_precision_both(struct rule_ctx *rc)
{
	const struct doc_pair *bf = cfg_pair(rc, "bf16");

	if (!cfg_true(rc, "fp16") || !(bf == NULL || doc_truthy(bf->value)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp16"), "bf16 and fp16 are both on; "
	    "Axolotl turns fp16 off");
}

/* precision.bf16_unsupported_gpu */
int
check_precision_bf16_gpu(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (g == NULL || g->bf16 || !(cfg_true(rc, "bf16") ||
	    cfg_true(rc, "bfloat16")) || cfg_on(rc, "merge_lora"))
		return 0;
	return rule_report(rc, cfg_first(rc, "bf16", "bfloat16"), "bf16 on "
	    "%s, which has no bf16 support", g->id);
}

/* precision.tf32_auto */
int
check_precision_tf32(struct rule_ctx *rc)
{
	const struct doc_pair *t = cfg_pair(rc, "tf32");
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (!(t == NULL || (t->value->kind == DOC_STR &&
	    strcmp(t->value->text, "auto") == 0)) || g == NULL)
		return 0;
	return rule_report(rc, t, "tf32: auto resolves to %s on %s",
	    g->cc >= 80 ? "true" : "false", g->id);
}

/* precision.fp8_without_compile */
int
check_precision_fp8_compile(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fp8") || cfg_on(rc, "torch_compile"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp8"), "fp8 without torch_compile is "
	    "slower than bf16");
}

/* precision.fp8_fsdp_activation_checkpointing */
int
check_precision_fp8_fsdp_ac(struct rule_ctx *rc)
{
	const struct doc_pair *ac = fsdp_pair(rc, "activation_checkpointing");

	if (!cfg_on(rc, "fp8") || ac == NULL || !doc_truthy(ac->value))
		return 0;
	return rule_report(rc, ac, "fp8 with FSDP activation checkpointing "
	    "is known to be slow or unstable; use gradient_checkpointing");
}

/* precision.fp8_ddp_compile */
int
check_precision_fp8_ddp(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fp8") || !cfg_on(rc, "torch_compile") ||
	    rc->plan->world <= 1 || fsdp_on(rc) || cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp8"), "fp8 with torch_compile under "
	    "plain DDP is documented as problematic; use FSDP2");
}

/* ---- checkpointing -------------------------------------------------- */

/* gc.offload_value_renamed */
int
check_gc_offload_renamed(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "gradient_checkpointing");

	if (v == NULL || !(strcmp(v, "offload") == 0 ||
	    strcmp(v, "offload_disk") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"),
	    "gradient_checkpointing: %s is read as gradient_checkpointing: "
	    "true with activation_offloading: %s", v,
	    strcmp(v, "offload") == 0 ? "true" : "disk");
}

/* gc.use_reentrant_default */
int
check_gc_reentrant_default(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "gradient_checkpointing") ||
	    cfg_set(rc, "gradient_checkpointing_kwargs"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"), "Axolotl "
	    "sets use_reentrant: %s", cfg_set(rc, "rl") ||
	    cfg_set(rc, "unfrozen_parameters") ? "false" : "true");
}

/* gc.hidden_states_offload */
int
check_gc_hidden_states(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "activation_offloading", "hidden_states"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "activation_offloading"),
	    "activation_offloading: hidden_states sets use_reentrant: false");
}

/* gc.selective_matmul_with_adapter */
int
check_gc_selective_matmul(struct rule_ctx *rc)
{
	static const char *const ops[] = { "aten::mm", "aten::addmm",
	    "aten::matmul", "aten::bmm" };
	const struct doc_pair *save = cfg_sub(rc, "selective_checkpointing",
	    "save");
	size_t i, k;

	if (save == NULL || save->value->kind != DOC_SEQ || !cfg_set(rc, "adapter"))
		return 0;
	for (i = 0; i < save->value->n; i++) {
		const struct doc_node *v = save->value->items[i];

		if (v->kind != DOC_STR || strcmp(v->text, "attention") == 0)
			continue;
		for (k = 0; k < 4; k++)
			if (strstr(ops[k], v->text) != NULL)
				return rule_report(rc, save, "selective "
				    "checkpointing that saves %.40s does not "
				    "work with an adapter", v->text);
	}
	return 0;
}

/* gc.selective_with_compile */
int
check_gc_selective_compile(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "selective_checkpointing") ||
	    !cfg_on(rc, "torch_compile"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "selective_checkpointing"), "selective "
	    "checkpointing with torch_compile is not validated");
}

/* gc.dpo_lora_ddp_hint */
int
check_gc_dpo_lora_ddp(struct rule_ctx *rc)
{
	const struct doc_pair *gc = cfg_pair(rc, "gradient_checkpointing");
	const char *ad = cfg_str(rc, "adapter");

	if (!(gc == NULL || doc_truthy(gc->value)) || rc->ctx->gpus <= 1 ||
	    ad == NULL || !(strcmp(ad, "lora") == 0 ||
	    strcmp(ad, "qlora") == 0) || !cfg_is(rc, "rl", "dpo") ||
	    fsdp_on(rc) || cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "rl"), "DPO with LoRA under DDP and "
	    "gradient checkpointing needs use_reentrant: false "
	    "(gradient_checkpointing_kwargs)");
}

/* gc.gemma4_ddp_defaults */
int
check_gc_gemma4(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);

	if (m == NULL || m->model_type == NULL ||
	    strncmp(m->model_type, "gemma4", 6) != 0 ||
	    !cfg_on(rc, "gradient_checkpointing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"), "Gemma-4 "
	    "forces use_reentrant: false and, under DDP, "
	    "ddp_find_unused_parameters: true");
}

/* gc.layer_offloading_cuda */
int
check_gc_layer_offloading(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (!cfg_true(rc, "layer_offloading"))
		return 0;
	if ((g != NULL && g->cc == 0) || !cfg_set(rc, "adapter"))
		return rule_report(rc, cfg_pair(rc, "layer_offloading"),
		    "layer_offloading helps on CUDA with an adapter (frozen "
		    "layers); here it %s", !cfg_set(rc, "adapter") ? "offloads "
		    "weights that all train" : "has no CUDA device");
	return 0;
}

/* ---- compile -------------------------------------------------------- */

/* compile.options_disallowed_key */
int
check_compile_options_keys(struct rule_ctx *rc)
{
	static const char *const ok[] = { "mode", "fullgraph", "dynamic",
	    "backend", "triton.cudagraphs", "max_autotune",
	    "epilogue_fusion", "shape_padding", "coordinate_descent_tuning" };
	const struct doc_pair *p = cfg_pair(rc, "torch_compile_options");
	size_t i, k;

	if (p == NULL || p->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < p->value->n; i++) {
		const struct doc_pair *kv = &p->value->pairs[i];
		bool good = false;

		for (k = 0; k < sizeof(ok) / sizeof(ok[0]); k++)
			if (kv->key->text != NULL &&
			    strcmp(kv->key->text, ok[k]) == 0)
				good = true;
		if (!good)
			return rule_report(rc, kv, "torch_compile_options."
			    "%.60s is not an option Axolotl passes on",
			    kv->key->text != NULL ? kv->key->text : "?");
	}
	return 0;
}

/* compile.options_require_compile */
int
check_compile_options_need(struct rule_ctx *rc)
{
	const struct doc_pair *tc = cfg_pair(rc, "torch_compile");

	if (!cfg_set(rc, "torch_compile_options") || (tc != NULL &&
	    (doc_truthy(tc->value))))
		return 0;
	return rule_report(rc, cfg_pair(rc, "torch_compile_options"),
	    "torch_compile_options needs torch_compile: true");
}

/* compile.auto_resolution */
int
check_compile_auto(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "torch_compile", "auto"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "torch_compile"), "torch_compile: auto "
	    "is %s with torch %d.%d", rc->ctx->torch >= 2051 ? "on" : "off",
	    rc->ctx->torch / 1000, rc->ctx->torch % 1000 / 10);
}

/* compile.deepcompile_requires_deepspeed */
int
check_compile_deepcompile(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepcompile") || cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepcompile"), "deepcompile needs "
	    "deepspeed");
}

/* compile.deepcompile_ignored_with_compile_block */
int
check_compile_deepcompile_block(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepcompile") || rc->plan->ds_map == NULL ||
	    doc_map_get(rc->plan->ds_map, "compile") == NULL)
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepcompile"), "the DeepSpeed config "
	    "already has a compile block; deepcompile is ignored");
}

/* compile.ebft_strided */
int
check_compile_ebft(struct rule_ctx *rc)
{
	const struct doc_pair *mode = cfg_sub(rc, "ebft", "mode");

	if (!cfg_is(rc, "rl", "ebft") || mode == NULL ||
	    mode->value->kind != DOC_STR ||
	    strcmp(mode->value->text, "strided") != 0 ||
	    !cfg_true(rc, "torch_compile"))
		return 0;
	if (cfg_on(rc, "gradient_checkpointing"))
		return rule_report(rc, cfg_pair(rc, "torch_compile"), "strided EBFT "
		    "with torch_compile and gradient checkpointing is refused");
	return rule_report_sev(rc, cfg_pair(rc, "torch_compile"), SEV_WARNING,
	    "strided EBFT with torch_compile is not validated");
}

/* ---- DeepSpeed, optimizers, losses ---------------------------------- */

/* deepspeed.stage_env */
int
check_ds_stage_env(struct rule_ctx *rc)
{
	if (rc->plan->ds == DS_NONE || fsdp_on(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "Axolotl launches with "
	    "DeepSpeed ZeRO stage %d%s", rc->plan->zero_stage,
	    rc->plan->zero_stage == 3 ? " and ZeRO-3 init" : "");
}

/* optim.qgalore_fp32_and_targets */
int
check_optim_qgalore_fp32(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "optimizer", "q_galore_adamw8bit"))
		return 0;
	if (!cfg_on(rc, "bf16") && !cfg_on(rc, "bfloat16") &&
	    !cfg_on(rc, "fp16"))
		return rule_report(rc, cfg_pair(rc, "optimizer"), "Q-GaLore without "
		    "bf16 or fp16 written runs in fp32");
	if (!cfg_set(rc, "optim_target_modules"))
		return rule_report_sev(rc, cfg_pair(rc, "optimizer"), SEV_INFO,
		    "Q-GaLore targets attn and mlp modules by default");
	return 0;
}

/* optim.adamw_params_without_adamw */
int
check_optim_adamw_params(struct rule_ctx *rc)
{
	const char *o = cfg_str(rc, "optimizer");

	if (!(cfg_set(rc, "adam_beta1") || cfg_set(rc, "adam_beta2") ||
	    cfg_set(rc, "adam_epsilon")) || (o != NULL &&
	    strstr(o, "adamw") != NULL) || o == NULL)
		return 0;
	return rule_report(rc, cfg_first(rc, "adam_beta1", "adam_beta2"),
	    "adam_* settings do nothing with optimizer %.40s", o);
}

/* optim.ao_deprecated */
int
check_optim_ao(struct rule_ctx *rc)
{
	const char *o = cfg_str(rc, "optimizer");

	if (o == NULL || !(strcmp(o, "ao_adamw_4bit") == 0 ||
	    strcmp(o, "ao_adamw_8bit") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "%s is deprecated; use "
	    "adamw_torch_%s", o, o + 9);
}

/* ce.cce_plugin_default_on */
int
check_ce_cce_default(struct rule_ctx *rc)
{
	if (!cfg_plugin(rc, "CutCrossEntropyPlugin") ||
	    cfg_set(rc, "cut_cross_entropy"))
		return 0;
	if (cfg_on(rc, "liger_cross_entropy") ||
	    cfg_on(rc, "liger_fused_linear_cross_entropy"))
		return rule_report(rc, cfg_pair(rc, "plugins"), "the CutCrossEntropy "
		    "plugin turns cut_cross_entropy on, which conflicts with "
		    "the Liger cross-entropy flags");
	if (!cfg_set(rc, "bf16") && !cfg_set(rc, "fp16"))
		return rule_report(rc, cfg_pair(rc, "plugins"), "the CutCrossEntropy "
		    "plugin turns cut_cross_entropy on, which needs bf16 or "
		    "fp16 written in the config");
	return 0;
}

/* ce.liger_swiglu_renamed */
int
check_ce_liger_swiglu(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "liger_swiglu"))
		return 0;
	if (cfg_set(rc, "liger_glu_activation"))
		return rule_report_sev(rc, cfg_pair(rc, "liger_swiglu"), SEV_ERROR,
		    "liger_swiglu and its new name liger_glu_activation are "
		    "both set");
	return rule_report(rc, cfg_pair(rc, "liger_swiglu"), "liger_swiglu is "
	    "renamed liger_glu_activation");
}

/* ---- Ray, platform, saving ------------------------------------------ */

/* ray.capability_checks_deferred */
int
check_ray_deferred(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "use_ray"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_ray"), "with Ray, GPU capability "
	    "checks run on the workers; preflight checks against %s",
	    rc->ctx->gpu);
}

/* ray.world_size_is_num_workers */
int
check_ray_world(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "use_ray"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_ray"), "with Ray the world size is "
	    "ray_num_workers (%lld)", cfg_int(rc, "ray_num_workers", 1));
}

/* ray.batch_derivation_on_worker */
int
check_ray_batch(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "use_ray"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_ray"), "with Ray the batch size is "
	    "derived on each worker");
}

/* ray.bf16_auto_unresolved */
int
check_ray_bf16(struct rule_ctx *rc)
{
	const struct doc_pair *bf = cfg_pair(rc, "bf16");
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (!cfg_on(rc, "use_ray") || !(bf == NULL ||
	    (bf->value->kind == DOC_STR && strcmp(bf->value->text, "auto") ==
	    0)) || cfg_set(rc, "fp16") || g == NULL || g->bf16)
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_ray"), "with Ray, bf16: auto is "
	    "not resolved and %s has no bf16; set bf16: false and fp16: true",
	    g->id);
}

/* platform.rocm_xformers */
int
check_platform_rocm_xformers(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);
	const char *be = attn_backend(rc);

	if (g == NULL || strcmp(g->vendor, "amd") != 0 || be == NULL ||
	    strcmp(be, "xformers") != 0)
		return 0;
	return rule_report(rc, NULL, "xformers attention is not supported on "
	    "AMD GPUs (%s)", g->id);
}

/* platform.rocm_deepspeed */
int
check_platform_rocm_ds(struct rule_ctx *rc)
{
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (g == NULL || strcmp(g->vendor, "amd") != 0 ||
	    !cfg_on(rc, "deepspeed"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "deepspeed"), "DeepSpeed on AMD GPUs "
	    "(%s) needs a ROCm build of DeepSpeed", g->id);
}

/* save.saves_per_epoch_conversion */
int
check_save_per_epoch(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "saves_per_epoch"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "saves_per_epoch"), "saves_per_epoch "
	    "is converted to save_steps from the dataset length");
}
