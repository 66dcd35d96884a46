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

#endif /* CORE_CHECKS_H */
