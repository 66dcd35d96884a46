/*
 * core/checks: the rule functions the table in core/rules.c points at.
 */
#ifndef CORE_CHECKS_H
#define CORE_CHECKS_H

struct rule_ctx;

int check_attn_legacy_with_impl(struct rule_ctx *rc);
int check_batch_gas_and_bs(struct rule_ctx *rc);
int check_batch_two_of_three(struct rule_ctx *rc);
int check_cp_packing_mbs(struct rule_ctx *rc);
int check_cp_requires_flash(struct rule_ctx *rc);
int check_fsdp_deepspeed_legacy(struct rule_ctx *rc);
int check_gc_offload_requires_gc(struct rule_ctx *rc);
int check_lora_kernels_8bit(struct rule_ctx *rc);
int check_optim_fsdp1_offload_8bit(struct rule_ctx *rc);
int check_optim_muon_sharding(struct rule_ctx *rc);
int check_packing_kto(struct rule_ctx *rc);
int check_packing_rl(struct rule_ctx *rc);
int check_quant_kbit_adapter(struct rule_ctx *rc);
int check_quant_qlora_4bit(struct rule_ctx *rc);

/* core/checks_more.c */
int check_attn_flash_optimum(struct rule_ctx *rc);
int check_attn_fused_mlp_lora(struct rule_ctx *rc);
int check_attn_invalid(struct rule_ctx *rc);
int check_attn_large_head(struct rule_ctx *rc);
int check_attn_scaling_softmax(struct rule_ctx *rc);
int check_batch_flattening_packing(struct rule_ctx *rc);
int check_batch_grpo_divisibility(struct rule_ctx *rc);
int check_batch_grpo_world(struct rule_ctx *rc);
int check_ce_cce_chunked(struct rule_ctx *rc);
int check_ce_glu_tiled(struct rule_ctx *rc);
int check_ce_liger_pair(struct rule_ctx *rc);
int check_ce_single(struct rule_ctx *rc);
int check_ce_token_scaling(struct rule_ctx *rc);
int check_cp_grpo_liger(struct rule_ctx *rc);
int check_cp_ring_attn_func(struct rule_ctx *rc);
int check_cp_world(struct rule_ctx *rc);
int check_ep_requires_plugin(struct rule_ctx *rc);
int check_ep_size_minimum(struct rule_ctx *rc);
int check_ep_token_capacity(struct rule_ctx *rc);
int check_fsdp_deepspeed_config(struct rule_ctx *rc);
int check_fsdp_enum_values(struct rule_ctx *rc);
int check_fsdp_falcon(struct rule_ctx *rc);
int check_fsdp_fp32_norms_config(struct rule_ctx *rc);
int check_fsdp_fp32_norms_v2(struct rule_ctx *rc);
int check_fsdp_fsdp2_quant_rl(struct rule_ctx *rc);
int check_fsdp_mxfp4_ram(struct rule_ctx *rc);
int check_fsdp_pin_fsdp2(struct rule_ctx *rc);
int check_fsdp_pin_offload(struct rule_ctx *rc);
int check_fsdp_relora(struct rule_ctx *rc);
int check_fsdp_size_wrap(struct rule_ctx *rc);
int check_fsdp_version_conflict(struct rule_ctx *rc);
int check_fsdp_version_values(struct rule_ctx *rc);
int check_gc_mpt(struct rule_ctx *rc);
int check_gc_nemotron_h(struct rule_ctx *rc);
int check_gc_reentrant_freeze(struct rule_ctx *rc);
int check_gc_rl_qlora_reentrant(struct rule_ctx *rc);
int check_gc_selective_gc(struct rule_ctx *rc);
int check_gc_selective_offload(struct rule_ctx *rc);
int check_gc_selective_reentrant(struct rule_ctx *rc);
int check_lora_kernels_fsdp1(struct rule_ctx *rc);
int check_lora_kernels_remote(struct rule_ctx *rc);
int check_moe_quant_adapter(struct rule_ctx *rc);
int check_moe_quant_kbit(struct rule_ctx *rc);
int check_moe_quant_target_linear(struct rule_ctx *rc);
int check_moe_scatter_sonic(struct rule_ctx *rc);
int check_moe_target_params_dropout(struct rule_ctx *rc);
int check_optim_flash_sharding(struct rule_ctx *rc);
int check_optim_qgalore_adapter(struct rule_ctx *rc);
int check_optim_qgalore_sharding(struct rule_ctx *rc);
int check_packing_eval_table(struct rule_ctx *rc);
int check_packing_streaming_multi(struct rule_ctx *rc);
int check_parallel_tp_liger_flce(struct rule_ctx *rc);
int check_parallel_tp_liger_rms(struct rule_ctx *rc);
int check_platform_memory_limits(struct rule_ctx *rc);
int check_precision_bf16_full(struct rule_ctx *rc);
int check_precision_cce_half(struct rule_ctx *rc);
int check_precision_fp8_all_gather(struct rule_ctx *rc);
int check_quant_config_vs_bnb(struct rule_ctx *rc);
int check_quant_qat_conflicts(struct rule_ctx *rc);
int check_quant_qat_dtype(struct rule_ctx *rc);
int check_save_best_metric(struct rule_ctx *rc);
int check_save_early_stopping(struct rule_ctx *rc);
int check_save_safetensors(struct rule_ctx *rc);
int check_save_strategy_steps(struct rule_ctx *rc);

/* core/checks_more.c: capabilities */
int check_attn_flex_torch(struct rule_ctx *rc);
int check_attn_fp8(struct rule_ctx *rc);
int check_attn_sage_cc(struct rule_ctx *rc);
int check_fsdp_fsdp2_torch(struct rule_ctx *rc);
int check_moe_quant_cuda(struct rule_ctx *rc);
int check_optim_adopt_torch(struct rule_ctx *rc);
int check_precision_fp8_gpu(struct rule_ctx *rc);

/* core/checks_plan.c */
int check_ds_bf16(struct rule_ctx *rc);
int check_ds_hardcoded(struct rule_ctx *rc);
int check_ds_optimizer_block(struct rule_ctx *rc);
int check_ds_single_gpu(struct rule_ctx *rc);
int check_ds_unreadable(struct rule_ctx *rc);
int check_ds_zero3_gather(struct rule_ctx *rc);
int check_ep_divide_world(struct rule_ctx *rc);
int check_ep_product(struct rule_ctx *rc);
int check_ep_with_tp(struct rule_ctx *rc);
int check_parallel_ddp_tp_cp(struct rule_ctx *rc);
int check_parallel_dp_shard_no_fsdp(struct rule_ctx *rc);
int check_parallel_nd_product(struct rule_ctx *rc);

#endif /* CORE_CHECKS_H */
