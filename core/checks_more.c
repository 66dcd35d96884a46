/*
 * core/checks_more: the rest of the config-only rules of rules.md (raw and
 * model phase), plus the world-size and GPU checks that need the context.
 * Each function quotes its rule id; the condition is rules.md's.  No I/O.
 */
#include "checks.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gpu.h"
#include "rules_int.h"

/* ---- small helpers -------------------------------------------------- */

static long long
tp_size(const struct rule_ctx *rc)
{
	return cfg_int(rc, "tensor_parallel_size", 1);
}

static long long
cp_size(const struct rule_ctx *rc)
{
	long long cp = cfg_int(rc, "context_parallel_size", 0);

	return cp > 0 ? cp : cfg_int(rc, "sequence_parallel_degree", 1);
}

static bool
kernels_on(const struct rule_ctx *rc)
{
	return cfg_on(rc, "lora_mlp_kernel") || cfg_on(rc, "lora_qkv_kernel") ||
	    cfg_on(rc, "lora_o_kernel");
}

/* ---- batch and packing ---------------------------------------------- */

/* batch.flattening_with_sample_packing */
int
check_batch_flattening_packing(struct rule_ctx *rc)
{
	if (!cfg_true(rc, "batch_flattening") || !cfg_on(rc, "sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_flattening"),
	    "batch_flattening: true and sample_packing are two ways to pack; "
	    "Axolotl takes one");
}

/* batch.grpo_generation_divisibility and batch.grpo_world_groups share
   the numbers: G generations per step, num_generations per prompt. */
static bool
grpo_numbers(const struct rule_ctx *rc, long long *g, long long *n)
{
	const struct doc_pair *ng = cfg_sub(rc, "trl", "num_generations");
	const struct doc_pair *gb = cfg_sub(rc, "trl", "generation_batch_size");

	if (!cfg_is(rc, "rl", "grpo") || ng == NULL ||
	    ng->value->kind != DOC_INT)
		return false;
	*n = ng->value->i;
	if (gb != NULL && gb->value->kind == DOC_INT)
		*g = gb->value->i;
	else
		*g = mul_sat(cfg_on(rc, "micro_batch_size") ?
		    cfg_int(rc, "micro_batch_size", 1) : 1,
		    cfg_on(rc, "gradient_accumulation_steps") ?
		    cfg_int(rc, "gradient_accumulation_steps", 1) : 1);
	return true;
}

/* batch.grpo_generation_divisibility */
int
check_batch_grpo_divisibility(struct rule_ctx *rc)
{
	long long g, n;

	if (!grpo_numbers(rc, &g, &n))
		return 0;
	if (n >= 2 && g % n == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), n < 2 ?
	    "trl.num_generations is %lld; GRPO needs at least 2 (generation "
	    "batch %lld)" : "the generation batch (%lld) is not a multiple of "
	    "trl.num_generations (%lld)", n < 2 ? n : g, n < 2 ? g : n);
}

/* batch.grpo_world_groups */
int
check_batch_grpo_world(struct rule_ctx *rc)
{
	long long g, n, w = rc->ctx->gpus;

	if (!grpo_numbers(rc, &g, &n) || n < 2 || w <= 1 ||
	    g >= mul_sat(n, w))
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), "on %lld GPUs GRPO needs "
	    "a generation batch of at least num_generations x GPUs = %lld, "
	    "got %lld", w, mul_sat(n, w), g);
}

/* packing.eval_table_size_conflict */
int
check_packing_eval_table(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "sample_packing") || !cfg_on(rc, "eval_table_size") ||
	    cfg_false(rc, "eval_sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_table_size"),
	    "eval_table_size needs eval_sample_packing: false when "
	    "sample_packing is on");
}

/* packing.streaming_multiple_datasets */
int
check_packing_streaming_multi(struct rule_ctx *rc)
{
	const struct doc_pair *ds = cfg_pair(rc, "datasets");

	if (!cfg_on(rc, "streaming") || !cfg_on(rc, "sample_packing") ||
	    ds == NULL || ds->value->kind != DOC_SEQ || ds->value->n <= 1)
		return 0;
	return rule_report(rc, ds, "streaming with sample_packing takes one "
	    "dataset, got %zu", ds->value->n);
}

/* ---- attention ------------------------------------------------------ */

/* attn.invalid_value */
int
check_attn_invalid(struct rule_ctx *rc)
{
	static const char *const ok[] = { "eager", "sdpa",
	    "flash_attention_2", "flash_attention_3", "flex_attention",
	    "xformers", "sage", "fp8" };
	const char *v = cfg_str(rc, "attn_implementation");
	size_t i;

	if (v == NULL || strchr(v, '/') != NULL)
		return 0;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(v, ok[i]) == 0)
			return 0;
	return rule_report(rc, cfg_pair(rc, "attn_implementation"),
	    "attn_implementation '%.60s' is not a backend Axolotl knows%s", v,
	    strcmp(v, "flash") == 0 ? " (flash_attention_2?)" :
	    strcmp(v, "flex") == 0 ? " (flex_attention?)" :
	    strcmp(v, "sdp") == 0 ? " (sdpa?)" : "");
}

/* attn.scaling_softmax_requires_flex */
int
check_attn_scaling_softmax(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (!cfg_on(rc, "scaling_softmax") ||
	    (be != NULL && strcmp(be, "flex_attention") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "scaling_softmax"),
	    "scaling_softmax needs attn_implementation: flex_attention");
}

/* attn.large_head_attention_values */
int
check_attn_large_head(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "large_head_attention");

	if (v == NULL || strcasecmp(v, "auto") == 0 ||
	    strcasecmp(v, "sdpa") == 0 || strcasecmp(v, "triton_flash") == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "large_head_attention"),
	    "large_head_attention must be auto, sdpa or triton_flash, got "
	    "'%.60s'", v);
}

/* attn.flash_optimum_with_amp */
int
check_attn_flash_optimum(struct rule_ctx *rc)
{
	const struct doc_pair *bf = cfg_pair(rc, "bf16");

	if (!cfg_true(rc, "flash_optimum"))
		return 0;
	/* bf16 defaults to "auto", which is truthy here. */
	if (!cfg_on(rc, "fp16") && bf != NULL && !doc_truthy(bf->value))
		return 0;
	return rule_report(rc, cfg_pair(rc, "flash_optimum"),
	    "flash_optimum does not work with mixed precision (bf16 or "
	    "fp16; bf16 defaults to auto): set bf16: false and fp16: false");
}

/* attn.fused_mlp_with_lora */
int
check_attn_fused_mlp_lora(struct rule_ctx *rc)
{
	const char *ad = cfg_str(rc, "adapter");

	if (!cfg_on(rc, "flash_attn_fuse_mlp"))
		return 0;
	if (!(ad != NULL && (strcmp(ad, "lora") == 0 ||
	    strcmp(ad, "qlora") == 0)) && !cfg_on(rc, "relora"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "flash_attn_fuse_mlp"),
	    "flash_attn_fuse_mlp does not work with LoRA adapters");
}

/* ---- context and tensor parallel ------------------------------------ */

/* cp.ring_attn_func_values */
int
check_cp_ring_attn_func(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "ring_attn_func");

	if (v == NULL || strcmp(v, "varlen_llama3") == 0 ||
	    strcmp(v, "batch_ring") == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "ring_attn_func"),
	    "ring_attn_func must be varlen_llama3 or batch_ring, got "
	    "'%.60s'", v);
}

/* cp.grpo_liger_loss */
int
check_cp_grpo_liger(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "rl", "grpo") || !cfg_sub_on(rc, "trl", "use_liger_loss") ||
	    cfg_int(rc, "context_parallel_size", 1) <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), "trl.use_liger_loss does "
	    "not work with context parallelism in GRPO");
}

/* cp.world_divisibility */
int
check_cp_world(struct rule_ctx *rc)
{
	long long cp = cp_size(rc), w = rc->ctx->gpus;

	if (cp <= 1 || (w >= cp && w % cp == 0))
		return 0;
	return rule_report(rc, cfg_first(rc, "context_parallel_size",
	    "sequence_parallel_degree"), "context_parallel_size (%lld) must "
	    "divide the number of GPUs (%lld); the launch fails building the "
	    "device mesh", cp, w);
}

/* parallel.tp_liger_rms_norm */
int
check_parallel_tp_liger_rms(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "liger_rms_norm") || tp_size(rc) <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "liger_rms_norm"),
	    "liger_rms_norm does not work with tensor_parallel_size %lld",
	    tp_size(rc));
}

/* parallel.tp_liger_flce */
int
check_parallel_tp_liger_flce(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "liger_fused_linear_cross_entropy") || tp_size(rc) <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc,
	    "liger_fused_linear_cross_entropy"), "Liger fused linear cross "
	    "entropy does not work with tensor_parallel_size %lld",
	    tp_size(rc));
}

/* ---- expert parallel and MoE ---------------------------------------- */

/* ep.requires_plugin */
int
check_ep_requires_plugin(struct rule_ctx *rc)
{
	const struct doc_pair *pl = cfg_pair(rc, "plugins");
	size_t i;

	if (cfg_int(rc, "expert_parallel_size", 1) <= 1)
		return 0;
	for (i = 0; pl != NULL && pl->value->kind == DOC_SEQ &&
	    i < pl->value->n; i++)
		if (pl->value->items[i]->kind == DOC_STR &&
		    strstr(pl->value->items[i]->text,
		    ".expert_parallel.") != NULL)
			return 0;
	return rule_report(rc, cfg_pair(rc, "expert_parallel_size"),
	    "expert_parallel_size (%lld) without the ExpertParallelPlugin: "
	    "Axolotl drops the key and runs without expert parallelism",
	    cfg_int(rc, "expert_parallel_size", 1));
}

/* ep.size_minimum */
int
check_ep_size_minimum(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "expert_parallel_size");

	if (p == NULL || p->value->kind != DOC_INT || p->value->i >= 1)
		return 0;
	return rule_report(rc, p, "expert_parallel_size must be >= 1, got "
	    "%lld", p->value->i);
}

/* ep.token_capacity_minimum */
int
check_ep_token_capacity(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc,
	    "expert_parallel_token_capacity");

	if (p == NULL || p->value->kind != DOC_INT || p->value->i >= 1)
		return 0;
	return rule_report(rc, p, "expert_parallel_token_capacity must be "
	    ">= 1, got %lld", p->value->i);
}

/* moe.quantize_experts_requires_adapter */
int
check_moe_quant_adapter(struct rule_ctx *rc)
{
	const char *ad = cfg_str(rc, "adapter");

	if (!cfg_on(rc, "quantize_moe_experts") || (ad != NULL &&
	    (strcmp(ad, "lora") == 0 || strcmp(ad, "qlora") == 0)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "quantize_moe_experts"),
	    "quantize_moe_experts needs adapter: lora or qlora");
}

/* moe.quantize_experts_requires_kbit */
int
check_moe_quant_kbit(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "quantize_moe_experts") || cfg_on(rc, "load_in_4bit") ||
	    cfg_on(rc, "load_in_8bit"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "quantize_moe_experts"),
	    "quantize_moe_experts needs load_in_4bit or load_in_8bit");
}

/* moe.quantize_experts_target_linear */
int
check_moe_quant_target_linear(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "quantize_moe_experts") ||
	    !cfg_on(rc, "lora_target_linear"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "lora_target_linear"),
	    "lora_target_linear does not work with quantize_moe_experts");
}

/* moe.target_parameters_dropout */
int
check_moe_target_params_dropout(struct rule_ctx *rc)
{
	const struct doc_pair *d = cfg_pair(rc, "lora_dropout");

	if (!cfg_on(rc, "lora_target_parameters") || d == NULL ||
	    !doc_truthy(d->value))
		return 0;
	return rule_report(rc, d, "lora_target_parameters needs lora_dropout: "
	    "0");
}

/* moe.scattermoe_sonicmoe_exclusive */
int
check_moe_scatter_sonic(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "use_scattermoe") || !cfg_on(rc, "use_sonicmoe"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_sonicmoe"),
	    "use_scattermoe and use_sonicmoe are two MoE kernels; pick one");
}

/* ---- FSDP ----------------------------------------------------------- */

/* fsdp.deepspeed_with_fsdp_config */
int
check_fsdp_deepspeed_config(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepspeed") || !cfg_on(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"),
	    "deepspeed and fsdp_config are both set: two sharding strategies "
	    "for one run");
}

static bool
node_version(const struct doc_node *v, long long *out)
{
	if (v->kind == DOC_INT) {
		*out = v->i;
		return true;
	}
	if (v->kind == DOC_STR && (strcmp(v->text, "1") == 0 ||
	    strcmp(v->text, "2") == 0)) {
		*out = v->text[0] - '0';
		return true;
	}
	return false;
}

/* fsdp.version_conflict */
int
check_fsdp_version_conflict(struct rule_ctx *rc)
{
	const struct doc_pair *top = cfg_pair(rc, "fsdp_version");
	const struct doc_pair *in = fsdp_pair(rc, "version");
	long long a, b;

	if (in == NULL)
		in = fsdp_pair(rc, "fsdp_version");
	if (top == NULL || in == NULL || !node_version(top->value, &a) ||
	    !node_version(in->value, &b) || a == b)
		return 0;
	return rule_report(rc, top, "fsdp_version is %lld at the top and %lld "
	    "in fsdp_config; Axolotl uses the top one", a, b);
}

/* fsdp.version_values */
int
check_fsdp_version_values(struct rule_ctx *rc)
{
	const struct doc_pair *ps[3];
	size_t i;
	long long v;

	ps[0] = cfg_pair(rc, "fsdp_version");
	ps[1] = fsdp_pair(rc, "version");
	ps[2] = fsdp_pair(rc, "fsdp_version");
	for (i = 0; i < 3; i++) {
		if (ps[i] == NULL || ps[i]->value->kind == DOC_NULL)
			continue;
		if (node_version(ps[i]->value, &v) && (v == 1 || v == 2))
			continue;
		return rule_report(rc, ps[i], "fsdp_version must be 1 or 2, "
		    "got %.40s", ps[i]->value->text != NULL ?
		    ps[i]->value->text : "a collection");
	}
	return 0;
}

/* fsdp.enum_values */
int
check_fsdp_enum_values(struct rule_ctx *rc)
{
	static const char *const sd[] = { "FULL_STATE_DICT",
	    "LOCAL_STATE_DICT", "SHARDED_STATE_DICT" };
	const struct doc_pair *ps[3];
	const struct doc_pair *wrap = fsdp_pair(rc, "auto_wrap_policy");
	const struct doc_pair *mnp = fsdp_pair(rc, "min_num_params");
	size_t i, k;
	int rv;

	ps[0] = fsdp_pair(rc, "state_dict_type");
	ps[1] = fsdp_pair(rc, "final_state_dict_type");
	ps[2] = cfg_pair(rc, "fsdp_final_state_dict_type");
	for (i = 0; i < 3; i++) {
		bool ok = false;

		if (ps[i] == NULL || ps[i]->value->kind == DOC_NULL)
			continue;
		for (k = 0; k < 3 && ps[i]->value->kind == DOC_STR; k++)
			if (strcmp(ps[i]->value->text, sd[k]) == 0)
				ok = true;
		if (!ok) {
			rv = rule_report(rc, ps[i], "%s must be "
			    "FULL_STATE_DICT, LOCAL_STATE_DICT or "
			    "SHARDED_STATE_DICT", ps[i]->key->text);
			if (rv != 0)
				return rv;
		}
	}
	if (wrap != NULL && wrap->value->kind != DOC_NULL &&
	    !(wrap->value->kind == DOC_STR &&
	    (strcmp(wrap->value->text, "TRANSFORMER_BASED_WRAP") == 0 ||
	    strcmp(wrap->value->text, "SIZE_BASED_WRAP") == 0))) {
		rv = rule_report(rc, wrap, "auto_wrap_policy must be "
		    "TRANSFORMER_BASED_WRAP or SIZE_BASED_WRAP");
		if (rv != 0)
			return rv;
	}
	if (mnp != NULL && mnp->value->kind == DOC_INT && mnp->value->i < 1)
		return rule_report(rc, mnp, "min_num_params must be >= 1");
	return 0;
}

/* fsdp.size_wrap_needs_min_num_params */
int
check_fsdp_size_wrap(struct rule_ctx *rc)
{
	const struct doc_pair *wrap = fsdp_pair(rc, "auto_wrap_policy");
	const struct doc_pair *mnp = fsdp_pair(rc, "min_num_params");

	if (wrap == NULL || wrap->value->kind != DOC_STR ||
	    strcmp(wrap->value->text, "SIZE_BASED_WRAP") != 0 ||
	    (mnp != NULL && mnp->value->kind != DOC_NULL))
		return 0;
	return rule_report(rc, wrap, "auto_wrap_policy: SIZE_BASED_WRAP "
	    "needs fsdp_config.min_num_params");
}

/* fsdp.pin_memory_off_requires_fsdp2 */
int
check_fsdp_pin_fsdp2(struct rule_ctx *rc)
{
	const struct doc_pair *p = fsdp_pair(rc, "cpu_offload_pin_memory");

	if (p == NULL || p->value->kind != DOC_BOOL || p->value->b ||
	    fsdp_version(rc) == 2)
		return 0;
	return rule_report(rc, p, "cpu_offload_pin_memory: false needs "
	    "fsdp_version: 2");
}

/* fsdp.pin_memory_off_requires_offload */
int
check_fsdp_pin_offload(struct rule_ctx *rc)
{
	const struct doc_pair *p = fsdp_pair(rc, "cpu_offload_pin_memory");
	const struct doc_pair *off = fsdp_pair(rc, "offload_params");

	if (p == NULL || p->value->kind != DOC_BOOL || p->value->b ||
	    (off != NULL && doc_truthy(off->value)))
		return 0;
	return rule_report(rc, p, "cpu_offload_pin_memory: false needs "
	    "offload_params: true");
}

/* fsdp.falcon_unsupported */
int
check_fsdp_falcon(struct rule_ctx *rc)
{
	if (!doc_text_has_ci(cfg_str(rc, "base_model"), "falcon") ||
	    !cfg_on(rc, "fsdp"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp"), "Axolotl does not run "
	    "Falcon models with the legacy fsdp list");
}

/* fsdp.gpt_oss_mxfp4_ram_loading */
int
check_fsdp_mxfp4_ram(struct rule_ctx *rc)
{
	const struct doc_pair *p = fsdp_pair(rc, "cpu_ram_efficient_loading");

	if (!cfg_is(rc, "model_quantization_config", "Mxfp4Config") ||
	    p == NULL || p->value->kind != DOC_BOOL || !p->value->b)
		return 0;
	return rule_report(rc, p, "cpu_ram_efficient_loading does not work "
	    "with model_quantization_config: Mxfp4Config");
}

/* fsdp.fp32_norms_requires_fsdp_config */
int
check_fsdp_fp32_norms_config(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fp32_norms") || cfg_set(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp32_norms"),
	    "fp32_norms needs fsdp_config (FSDP2)");
}

/* fsdp.fp32_norms_requires_fsdp2 */
int
check_fsdp_fp32_norms_v2(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fp32_norms") || !cfg_set(rc, "fsdp_config") ||
	    fsdp_version(rc) == 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp32_norms"),
	    "fp32_norms needs fsdp_version: 2");
}

/* fsdp.fsdp2_quantized_preference_rl */
int
check_fsdp_fsdp2_quant_rl(struct rule_ctx *rc)
{
	const char *rl = cfg_str(rc, "rl");

	if (cfg_int(rc, "fsdp_version", 0) != 2 || rl == NULL ||
	    !(strcmp(rl, "dpo") == 0 || strcmp(rl, "kto") == 0 ||
	    strcmp(rl, "orpo") == 0 || strcmp(rl, "ipo") == 0) ||
	    !(cfg_on(rc, "load_in_8bit") || cfg_on(rc, "load_in_4bit")))
		return 0;
	return rule_report(rc, cfg_pair(rc, "rl"), "rl: %s with a quantized "
	    "model does not work under FSDP2", rl);
}

/* fsdp.relora_unsupported */
int
check_fsdp_relora(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "relora") || !(cfg_set(rc, "fsdp") ||
	    cfg_set(rc, "fsdp_config") || cfg_set(rc, "deepspeed")))
		return 0;
	return rule_report(rc, cfg_pair(rc, "relora"), "relora does not work "
	    "with FSDP or DeepSpeed");
}

/* ---- quantization and LoRA kernels ---------------------------------- */

/* quant.model_quant_config_vs_bnb */
int
check_quant_config_vs_bnb(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "model_quantization_config") ||
	    !(cfg_on(rc, "load_in_8bit") || cfg_on(rc, "load_in_4bit")))
		return 0;
	return rule_report(rc, cfg_pair(rc, "model_quantization_config"),
	    "model_quantization_config and load_in_4bit/load_in_8bit "
	    "quantize twice; pick one");
}

/* quant.qat_conflicts */
int
check_quant_qat_conflicts(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "qat"))
		return 0;
	if (cfg_on(rc, "peft") || cfg_on(rc, "load_in_8bit") ||
	    cfg_on(rc, "load_in_4bit"))
		return rule_report(rc, cfg_pair(rc, "qat"), "qat does not work "
		    "with peft or load_in_4bit/load_in_8bit");
	return 0;
}

/* quant.qat_dtype_values */
int
check_quant_qat_dtype(struct rule_ctx *rc)
{
	static const char *const ok[] = { "int4", "int8", "float8_e4m3fn",
	    "fp8", "float8", "nvfp4", "mxfp4" };
	static const char *const owners[] = { "qat", "quantization" };
	static const char *const keys[] = { "weight_dtype",
	    "activation_dtype" };
	size_t o, k, i;

	for (o = 0; o < 2; o++)
		for (k = 0; k < 2; k++) {
			const struct doc_pair *p = cfg_sub(rc, owners[o], keys[k]);
			bool good = false;

			if (p == NULL || p->value->kind == DOC_NULL)
				continue;
			for (i = 0; i < sizeof(ok) / sizeof(ok[0]) &&
			    p->value->kind == DOC_STR; i++)
				if (strcmp(p->value->text, ok[i]) == 0)
					good = true;
			if (!good)
				return rule_report(rc, p, "%s.%s must be one "
				    "of int4, int8, float8_e4m3fn, fp8, float8, "
				    "nvfp4, mxfp4", owners[o], keys[k]);
		}
	return 0;
}

/* lora_kernels.trust_remote_code */
int
check_lora_kernels_remote(struct rule_ctx *rc)
{
	if (!kernels_on(rc) || !cfg_on(rc, "trust_remote_code"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "trust_remote_code"),
	    "LoRA kernels do not work with trust_remote_code models");
}

/* lora_kernels.fsdp1_multi_gpu */
int
check_lora_kernels_fsdp1(struct rule_ctx *rc)
{
	const struct doc_pair *v = cfg_pair(rc, "fsdp_version");
	long long ver = 0;

	if (!(kernels_on(rc) || cfg_on(rc, "lora_embedding_kernel")) ||
	    rc->ctx->gpus <= 1 || !cfg_set(rc, "fsdp_config"))
		return 0;
	if (v != NULL && node_version(v->value, &ver) && ver == 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"), "LoRA kernels "
	    "with FSDP1 on %ld GPUs are refused; set fsdp_version: 2 at the "
	    "top level", rc->ctx->gpus);
}

/* ---- precision ------------------------------------------------------ */

/* precision.bf16_full_rejected */
int
check_precision_bf16_full(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "bf16");

	if (v == NULL || strcmp(v, "auto") == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "bf16"), "bf16 takes true, false "
	    "or auto, got '%.40s'", v);
}

/* precision.fp8_all_gather_requires_fsdp2 */
int
check_precision_fp8_all_gather(struct rule_ctx *rc)
{
	const struct doc_pair *v = cfg_pair(rc, "fsdp_version");

	if (!cfg_on(rc, "fp8_enable_fsdp_float8_all_gather") ||
	    (v != NULL && v->value->kind == DOC_INT && v->value->i == 2))
		return 0;
	return rule_report(rc, cfg_pair(rc,
	    "fp8_enable_fsdp_float8_all_gather"), "fp8 all-gather needs "
	    "fsdp_version: 2 at the top level");
}

/* precision.cce_requires_half */
int
check_precision_cce_half(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "cut_cross_entropy") || cfg_on(rc, "bf16") ||
	    cfg_on(rc, "fp16"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "cut_cross_entropy"),
	    "cut_cross_entropy needs bf16 or fp16 written in the config");
}

/* ---- gradient checkpointing ----------------------------------------- */

static bool
reentrant(const struct rule_ctx *rc)
{
	return cfg_sub_on(rc, "gradient_checkpointing_kwargs", "use_reentrant");
}

/* gc.reentrant_with_partial_freeze */
int
check_gc_reentrant_freeze(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_sub(rc, "gradient_checkpointing_kwargs",
	    "use_reentrant");

	if (!cfg_on(rc, "unfrozen_parameters") || p == NULL ||
	    p->value->kind != DOC_BOOL || !p->value->b)
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing_kwargs"),
	    "use_reentrant: true does not work with unfrozen_parameters");
}

/* gc.selective_requires_gc */
int
check_gc_selective_gc(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "selective_checkpointing") ||
	    cfg_on(rc, "gradient_checkpointing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "selective_checkpointing"),
	    "selective_checkpointing needs gradient_checkpointing");
}

/* gc.selective_requires_non_reentrant */
int
check_gc_selective_reentrant(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "selective_checkpointing") || !reentrant(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "selective_checkpointing"),
	    "selective_checkpointing needs use_reentrant: false");
}

/* gc.selective_offload_mode */
int
check_gc_selective_offload(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "selective_checkpointing") ||
	    !cfg_on(rc, "activation_offloading") ||
	    cfg_is(rc, "activation_offloading", "hidden_states"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "activation_offloading"),
	    "with selective_checkpointing, activation_offloading must be "
	    "hidden_states");
}

/* gc.mpt_unsupported */
int
check_gc_mpt(struct rule_ctx *rc)
{
	if (!doc_text_has_ci(cfg_str(rc, "base_model"), "mpt") ||
	    !cfg_on(rc, "gradient_checkpointing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"),
	    "MPT models do not support gradient_checkpointing");
}

/* gc.nemotron_h_requires_packing */
int
check_gc_nemotron_h(struct rule_ctx *rc)
{
	if (!doc_text_has_ci(cfg_str(rc, "base_model"), "nemotron-h") ||
	    !cfg_on(rc, "gradient_checkpointing") ||
	    cfg_on(rc, "sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing"),
	    "Nemotron-H with gradient_checkpointing needs sample_packing");
}

/* gc.rl_qlora_multi_gpu_reentrant */
int
check_gc_rl_qlora_reentrant(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "rl") || !cfg_on(rc, "gradient_checkpointing") ||
	    !reentrant(rc) || !cfg_on(rc, "load_in_4bit") ||
	    !cfg_is(rc, "adapter", "qlora") || rc->ctx->gpus <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing_kwargs"),
	    "RL with QLoRA on %ld GPUs needs use_reentrant: false",
	    rc->ctx->gpus);
}

/* ---- optimizers and losses ------------------------------------------ */

/* optim.flash_optimizers_sharding */
int
check_optim_flash_sharding(struct rule_ctx *rc)
{
	const char *opt = cfg_str(rc, "optimizer");
	int v;

	if (opt == NULL || strncmp(opt, "flash_", 6) != 0)
		return 0;
	v = cfg_on(rc, "fsdp_config") ? fsdp_version(rc) : 0;
	if (!cfg_on(rc, "deepspeed") && (v == 0 || v == 2))
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "optimizer %s "
	    "needs DDP or FSDP2", opt);
}

/* optim.qgalore_adapter */
int
check_optim_qgalore_adapter(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "optimizer", "q_galore_adamw8bit") ||
	    !cfg_set(rc, "adapter"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"),
	    "q_galore_adamw8bit does not work with an adapter");
}

/* optim.qgalore_sharding */
int
check_optim_qgalore_sharding(struct rule_ctx *rc)
{
	const struct doc_pair *uop = fsdp_pair(rc, "use_orig_params");
	int v;

	if (!cfg_is(rc, "optimizer", "q_galore_adamw8bit"))
		return 0;
	v = cfg_on(rc, "fsdp_config") ? fsdp_version(rc) : 0;
	if (cfg_on(rc, "deepspeed") || (v != 0 && v != 2) || (v == 2 &&
	    !(uop != NULL && uop->value->kind == DOC_BOOL && uop->value->b)))
		return rule_report(rc, cfg_pair(rc, "optimizer"),
		    "q_galore_adamw8bit needs DDP, or FSDP2 with "
		    "use_orig_params: true");
	return 0;
}

/* ce.liger_ce_and_flce */
int
check_ce_liger_pair(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "liger_cross_entropy") ||
	    !cfg_on(rc, "liger_fused_linear_cross_entropy"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "liger_cross_entropy"),
	    "liger_cross_entropy and liger_fused_linear_cross_entropy are "
	    "two losses; keep one");
}

/* ce.single_optimization */
int
check_ce_single(struct rule_ctx *rc)
{
	static const char *const k[] = { "cut_cross_entropy",
	    "chunked_cross_entropy", "liger_cross_entropy",
	    "liger_fused_linear_cross_entropy" };
	const char *on[4];
	int n = 0, i;

	for (i = 0; i < 4; i++)
		if (cfg_on(rc, k[i]))
			on[n++] = k[i];
	/* Only the Liger pair: ce.liger_ce_and_flce says it. */
	if (n < 2 || (n == 2 && strncmp(on[0], "liger", 5) == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, on[1]), "%s and %s are both on; "
	    "Axolotl takes one cross-entropy optimization", on[0], on[1]);
}

/* ce.cce_with_chunked_ce */
int
check_ce_cce_chunked(struct rule_ctx *rc)
{
	const struct doc_pair *pl = cfg_pair(rc, "plugins");
	size_t i;
	bool listed = false;

	for (i = 0; pl != NULL && pl->value->kind == DOC_SEQ &&
	    i < pl->value->n; i++)
		if (pl->value->items[i]->kind == DOC_STR &&
		    strstr(pl->value->items[i]->text,
		    "CutCrossEntropyPlugin") != NULL)
			listed = true;
	if (!listed || !cfg_on(rc, "chunked_cross_entropy"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "chunked_cross_entropy"),
	    "chunked_cross_entropy does not work with the CutCrossEntropy "
	    "plugin listed");
}

/* ce.liger_glu_with_tiled_mlp */
int
check_ce_glu_tiled(struct rule_ctx *rc)
{
	if (!cfg_true(rc, "liger_glu_activation") || !cfg_true(rc, "tiled_mlp") ||
	    cfg_on(rc, "tiled_mlp_use_original_mlp"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "tiled_mlp"), "tiled_mlp with "
	    "liger_glu_activation needs tiled_mlp_use_original_mlp: true");
}

/* ce.liger_token_scaling_requires_flce */
int
check_ce_token_scaling(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "liger_use_token_scaling") ||
	    cfg_on(rc, "liger_fused_linear_cross_entropy"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "liger_use_token_scaling"),
	    "liger_use_token_scaling needs liger_fused_linear_cross_entropy");
}

/* ---- platform and saving -------------------------------------------- */

/* platform.memory_limits_exclusive */
int
check_platform_memory_limits(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "max_memory") || !cfg_set(rc, "gpu_memory_limit"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "gpu_memory_limit"),
	    "max_memory and gpu_memory_limit are both set; keep one");
}

/* save.safetensors_false */
int
check_save_safetensors(struct rule_ctx *rc)
{
	if (!cfg_false(rc, "save_safetensors"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "save_safetensors"),
	    "save_safetensors: false is refused; Axolotl saves safetensors");
}

/* save.strategy_steps_mismatch */
int
check_save_strategy_steps(struct rule_ctx *rc)
{
	const char *st = cfg_str(rc, "save_strategy");

	if (cfg_on(rc, "save_steps") && st != NULL && *st != '\0' &&
	    strcmp(st, "steps") != 0)
		return rule_report(rc, cfg_pair(rc, "save_strategy"),
		    "save_steps is set, so save_strategy must be steps, got "
		    "%.40s", st);
	if (cfg_on(rc, "saves_per_epoch") && cfg_on(rc, "save_steps"))
		return rule_report(rc, cfg_pair(rc, "saves_per_epoch"),
		    "saves_per_epoch and save_steps are both set; keep one");
	return 0;
}

/* save.best_requires_metric */
int
check_save_best_metric(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "save_strategy", "best") ||
	    cfg_on(rc, "metric_for_best_model"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "save_strategy"),
	    "save_strategy: best needs metric_for_best_model");
}

/* save.early_stopping_steps */
int
check_save_early_stopping(struct rule_ctx *rc)
{
	const struct doc_pair *sv = cfg_pair(rc, "save_steps");
	const struct doc_pair *ev = cfg_pair(rc, "eval_steps");
	long long s, e;

	if (!cfg_set(rc, "early_stopping_patience"))
		return 0;
	if (sv == NULL || ev == NULL || sv->value->kind == DOC_NULL ||
	    ev->value->kind == DOC_NULL)
		return rule_report(rc, cfg_pair(rc, "early_stopping_patience"),
		    "early_stopping_patience needs save_steps and eval_steps");
	s = cfg_int(rc, "save_steps", 0);
	e = cfg_int(rc, "eval_steps", 0);
	if (sv->value->kind == DOC_INT && ev->value->kind == DOC_INT &&
	    e > 0 && s % e != 0)
		return rule_report(rc, sv, "save_steps (%lld) must be a "
		    "multiple of eval_steps (%lld) for early stopping", s, e);
	return 0;
}

/* ---- GPU and torch capabilities (the context) ----------------------- */

static const struct gpu *
the_gpu(const struct rule_ctx *rc)
{
	return gpu_find(rc->ctx->gpu);
}

/* attn.flex_torch_version */
int
check_attn_flex_torch(struct rule_ctx *rc)
{
	const char *be = attn_backend(rc);

	if (be == NULL || strcmp(be, "flex_attention") != 0 ||
	    rc->ctx->torch >= 2060)
		return 0;
	return rule_report(rc, cfg_first(rc, "attn_implementation",
	    "flex_attention"), "flex attention needs torch 2.6 or newer");
}

/* attn.sage_compute_capability */
int
check_attn_sage_cc(struct rule_ctx *rc)
{
	const struct gpu *g = the_gpu(rc);
	const char *be = attn_backend(rc);

	if (be == NULL || strcmp(be, "sage") != 0 || g == NULL)
		return 0;
	if (g->cc == 80 || g->cc == 86 || g->cc == 89 || g->cc == 90 ||
	    g->cc == 120)
		return 0;
	return rule_report(rc, cfg_first(rc, "attn_implementation",
	    "sage_attention"), "sage attention does not run on %s (compute "
	    "capability %u.%u); it needs sm_80, 86, 89, 90 or 120", g->id,
	    g->cc / 10, g->cc % 10);
}

/* attn.fp8_preflight */
int
check_attn_fp8(struct rule_ctx *rc)
{
	const struct gpu *g = the_gpu(rc);

	if (!cfg_is(rc, "attn_implementation", "fp8"))
		return 0;
	if (g != NULL && g->cc > 0 && g->cc < 90)
		return rule_report(rc, cfg_pair(rc, "attn_implementation"),
		    "fp8 attention needs compute capability 9.0 or newer; %s "
		    "is %u.%u", g->id, g->cc / 10, g->cc % 10);
	if (rc->ctx->torch < 2110)
		return rule_report(rc, cfg_pair(rc, "attn_implementation"),
		    "fp8 attention needs torch 2.11 or newer");
	return 0;
}

/* precision.fp8_gpu_support */
int
check_precision_fp8_gpu(struct rule_ctx *rc)
{
	const struct gpu *g = the_gpu(rc);

	if (!cfg_on(rc, "fp8") || g == NULL || g->cc == 0 || g->cc >= 90)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp8"), "fp8 training needs "
	    "compute capability 9.0 or newer; %s is %u.%u", g->id,
	    g->cc / 10, g->cc % 10);
}

/* fsdp.fsdp2_torch_version */
int
check_fsdp_fsdp2_torch(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp_config") || cfg_int(rc, "fsdp_version", 0) != 2 ||
	    rc->ctx->torch >= 2070)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_version"), "FSDP2 needs "
	    "torch 2.7 or newer");
}

/* optim.adopt_torch_version */
int
check_optim_adopt_torch(struct rule_ctx *rc)
{
	const char *opt = cfg_str(rc, "optimizer");

	if (opt == NULL || strstr(opt, "adopt") == NULL ||
	    rc->ctx->torch >= 2051)
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "optimizer %s "
	    "needs torch 2.5.1 or newer", opt);
}

/* moe.quantize_experts_cuda_only */
int
check_moe_quant_cuda(struct rule_ctx *rc)
{
	const struct gpu *g = the_gpu(rc);

	if (!cfg_on(rc, "quantize_moe_experts") || g == NULL || g->cc > 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "quantize_moe_experts"),
	    "quantize_moe_experts runs on NVIDIA GPUs only, not %s", g->id);
}
