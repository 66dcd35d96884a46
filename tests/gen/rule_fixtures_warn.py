#!/usr/bin/env python3
"""One-off generator for the pass/fail fixtures of the warning and info
rules (now in core/rules/<topic>.c; kept so the fixtures can be regenerated and reviewed).

Each spec: optional header (context), then 'fail' and 'pass' bodies that are
appended to a small valid base config; a body key replaces the base key of
the same name, and 'drop' removes base keys.  A fail body marks the lines
where the rule must fire with '# expect: <id>'; ROOT marks the first key
(rules that report on the whole config).
"""
import os
import sys

BASE = [
    ("base_model", "base_model: HuggingFaceTB/SmolLM2-135M"),
    ("learning_rate", "learning_rate: 1.0e-4"),
    ("datasets", "datasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca"),
    ("micro_batch_size", "micro_batch_size: 1"),
    ("gradient_accumulation_steps", "gradient_accumulation_steps: 1"),
]

S = {}


def spec(fail, ok, hdr="", drop=(), root=False, pass_hdr=None):
    """One rule's fixtures: its fail and pass bodies and their headers."""
    return dict(fail=fail, ok=ok, hdr=hdr, drop=drop, root=root,
                pass_hdr=hdr if pass_hdr is None else pass_hdr)


def rule(rid, fail, ok, **kw):
    S[rid] = spec(fail, ok, **kw)


def keys_of(body):
    return {l.split(":")[0] for l in body.splitlines()
            if l and not l[0].isspace() and not l.startswith("#") and ":" in l}


def render(rid, body, hdr, drop, root, mark):
    out = [h for h in hdr.splitlines() if h]
    ks = keys_of(body)
    first = True
    for k, text in BASE:
        if k in ks or k in drop:
            continue
        if first and root and mark:
            lines = text.split("\n")
            lines[0] += "  # expect: " + rid
            text = "\n".join(lines)
        first = False
        out.append(text)
    out.append(body.strip("\n").replace("EXPECT", "# expect: " + rid))
    return "\n".join(out) + "\n"


X = "EXPECT"

# ---- batch
rule("batch.batch_size_discouraged",
     f"batch_size: 8  {X}", "gradient_accumulation_steps: 8",
     drop=("gradient_accumulation_steps",))
rule("batch.batch_size_floor_division",
     f"gradient_accumulation_steps: null\nmicro_batch_size: 4\nbatch_size: 2  {X}",
     "gradient_accumulation_steps: null\nmicro_batch_size: 4\nbatch_size: 8")
rule("batch.global_batch_world_scaling", "micro_batch_size: 2", "micro_batch_size: 2",
     hdr="# gpus: 8", pass_hdr="# gpus: 1", root=True)
rule("batch.ddp_false_multi_gpu", f"ddp: false  {X}", "ddp: true", hdr="# gpus: 4")
rule("batch.eval_mbs_mismatch", f"micro_batch_size: 2\neval_batch_size: 8  {X}",
     "micro_batch_size: 2\neval_batch_size: 2")
rule("batch.eval_batch_size_default", "micro_batch_size: 2",
     "micro_batch_size: 2\neval_batch_size: 2", root=True)
rule("batch.dataloader_defaults", "micro_batch_size: 2",
     "dataloader_num_workers: 2\ndataloader_pin_memory: true", root=True)
rule("batch.flattening_requires_varlen_attention",
     f"micro_batch_size: 4\nattn_implementation: sdpa\nbatch_flattening: true  {X}",
     "micro_batch_size: 4\nattn_implementation: flash_attention_2\nbatch_flattening: true")
rule("batch.flattening_mbs_one",
     f"attn_implementation: flash_attention_2\nbatch_flattening: true  {X}",
     "micro_batch_size: 4\nattn_implementation: flash_attention_2\nbatch_flattening: true")
rule("batch.flattening_auto_resolution",
     f"micro_batch_size: 4\nattn_implementation: flash_attention_2\nbatch_flattening: auto  {X}",
     "micro_batch_size: 4\nattn_implementation: flash_attention_2\nbatch_flattening: true")
GRPO = "rl: grpo\nattn_implementation: flash_attention_2\ncontext_parallel_size: 2\n"
rule("batch.grpo_sp_group_divisibility",
     GRPO + f"micro_batch_size: 2\ntrl:  {X}\n  num_generations: 16",
     GRPO + "micro_batch_size: 2\ntrl:\n  num_generations: 4", hdr="# gpus: 4")

# ---- packing
PK = "sample_packing: true\nattn_implementation: flash_attention_2\n"
rule("packing.pad_to_sequence_len_default",
     f"sample_packing: true  {X}\nattn_implementation: flash_attention_2",
     PK + "pad_to_sequence_len: true")
rule("packing.eval_sample_packing_default",
     f"sample_packing: true  {X}\nattn_implementation: flash_attention_2",
     PK + "eval_sample_packing: false")
rule("packing.remove_unused_columns_autoset",
     PK + f"eval_sample_packing: false  {X}",
     PK + "eval_sample_packing: false\nremove_unused_columns: false")
rule("packing.no_decontaminating_backend",
     f"sample_packing: true  {X}\nattn_implementation: some_custom_kernel",
     PK)
rule("packing.sdpa_bf16_not_hopper",
     f"sample_packing: true\nbf16: true\nattn_implementation: sdpa  {X}",
     "sample_packing: true\nbf16: true\nattn_implementation: sdpa",
     hdr="# gpu: a100-80gb", pass_hdr="# gpu: h100-sxm")
rule("packing.fp16_full_finetune_without_flash",
     f"bf16: false\nfp16: true\nsample_packing: true  {X}\nattn_implementation: sdpa",
     "bf16: false\nfp16: true\nsample_packing: true\nattn_implementation: flash_attention_2")
rule("packing.causal_lm_eval_conflict",
     PK + f"do_causal_lm_eval: true  {X}",
     PK + "eval_sample_packing: false\ndo_causal_lm_eval: true")
rule("packing.cudagraphs_dynamic_shapes",
     PK + f"torch_compile: true\ntorch_compile_options:  {X}\n  triton.cudagraphs: true",
     "torch_compile: true\ntorch_compile_options:\n  triton.cudagraphs: true")
rule("packing.sdpa_varlen_inert", f"sdpa_varlen: true  {X}",
     "sample_packing: true\nattn_implementation: sdpa\nsdpa_varlen: true",
     hdr="# torch: 2.11")
rule("packing.sage_without_padding", "attn_implementation: sage",
     "attn_implementation: sage\npad_to_sequence_len: true", root=True)
rule("packing.buffer_size_renamed", f"pretrain_multipack_buffer_size: 10000  {X}",
     "streaming_multipack_buffer_size: 10000")

# ---- attention / context parallel
rule("attn.legacy_flag_renamed", f"flash_attention: true  {X}",
     "attn_implementation: flash_attention_2")
rule("attn.gemma4_hybrid_requires_fa2",
     f"gemma4_hybrid_attn_impl: true\nattn_implementation: sdpa  {X}",
     "gemma4_hybrid_attn_impl: true\nattn_implementation: flash_attention_2")
rule("attn.sage_full_finetune", "attn_implementation: sage\npad_to_sequence_len: true",
     "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n"
     "attn_implementation: sage\npad_to_sequence_len: true", root=True)
CP = "attn_implementation: flash_attention_2\n"
rule("cp.sequence_parallel_degree_renamed", CP + f"sequence_parallel_degree: 2  {X}",
     CP + "context_parallel_size: 2", hdr="# gpus: 2")
rule("cp.ring_attn_func_default", CP + "context_parallel_size: 2",
     CP + "context_parallel_size: 2\nring_attn_func: batch_ring", hdr="# gpus: 2",
     root=True)
rule("cp.loss_reporting_note", CP + "context_parallel_size: 2", CP + "context_parallel_size: 1",
     hdr="# gpus: 2", root=True)
rule("cp.ssm_hybrid_unvalidated",
     "base_model: tiiuae/Falcon-H1-0.5B-Instruct\n" + CP + "context_parallel_size: 2",
     "base_model: tiiuae/Falcon-H1-0.5B-Instruct\n" + CP + "context_parallel_size: 1",
     hdr="# gpus: 2", root=True)
rule("cp.glm_dsa_exemption", CP + f"context_parallel_size: 2\nuse_glm_dsa_kernels: true  {X}",
     CP + "context_parallel_size: 1\nuse_glm_dsa_kernels: true", hdr="# gpus: 2")
rule("cp.heads_k_stride_divides_kv_heads",
     "base_model: meta-llama/Llama-3.1-8B\n" + CP + f"context_parallel_size: 2\nheads_k_stride: 3  {X}",
     "base_model: meta-llama/Llama-3.1-8B\n" + CP + "context_parallel_size: 2\nheads_k_stride: 4",
     hdr="# gpus: 2")
rule("cp.grpo_async",
     GRPO + f"micro_batch_size: 2\ntrl:  {X}\n  num_generations: 4\n  async_prefetch: true",
     GRPO + "micro_batch_size: 2\ntrl:\n  num_generations: 4\n  async_prefetch: false",
     hdr="# gpus: 4")

# ---- parallel / expert parallel
FS2 = "fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n"
rule("parallel.replicate_leftover_without_fsdp",
     "base_model: meta-llama/Llama-3.1-8B\n"
     f"tensor_parallel_size: 2\ndp_replicate_size: 2  {X}",
     "base_model: meta-llama/Llama-3.1-8B\n"
     "tensor_parallel_size: 2\ndp_replicate_size: 2\n" + FS2, hdr="# gpus: 8")
rule("parallel.fsdp1_ignores_nd_layout",
     f"tensor_parallel_size: 2  {X}\nfsdp_version: 1\nfsdp_config:\n  sharding_strategy: FULL_SHARD",
     "tensor_parallel_size: 2\n" + FS2, hdr="# gpus: 2")
rule("parallel.deepspeed_only_tp",
     f"dp_shard_size: 2  {X}\ndeepspeed: deepspeed_configs/zero2.json",
     "tensor_parallel_size: 2\ndeepspeed: deepspeed_configs/zero2.json", hdr="# gpus: 2")
rule("parallel.tp_tied_embeddings", f"tensor_parallel_size: 2  {X}\n" + FS2,
     "base_model: meta-llama/Llama-3.1-8B\ntensor_parallel_size: 2\n" + FS2, hdr="# gpus: 2")
rule("parallel.tp_deepspeed_autotp_patch",
     "base_model: meta-llama/Llama-3.1-8B\n"
     f"tensor_parallel_size: 2  {X}\ndeepspeed: deepspeed_configs/zero2.json",
     "base_model: meta-llama/Llama-3.1-8B\ndeepspeed: deepspeed_configs/zero2.json",
     hdr="# gpus: 2")
rule("parallel.tp_bnb_8bit_optimizer",
     "base_model: meta-llama/Llama-3.1-8B\ntensor_parallel_size: 2\n" + FS2 +
     f"optimizer: adamw_bnb_8bit  {X}",
     "base_model: meta-llama/Llama-3.1-8B\ntensor_parallel_size: 2\n" + FS2 +
     "optimizer: adamw_torch_8bit", hdr="# gpus: 2")
MOE = ("base_model: Qwen/Qwen3-30B-A3B\nplugins:\n"
       "  - axolotl.integrations.expert_parallel.ExpertParallelPlugin\n")
rule("ep.rdma_bytes_warning",
     MOE + f"expert_parallel_size: 2\nexpert_parallel_num_rdma_bytes: 1000000  {X}\n" + FS2,
     MOE + "expert_parallel_size: 2\n" + FS2, hdr="# gpus: 2")
rule("ep.partial_without_dp_or_cp",
     MOE + f"expert_parallel_size: 2  {X}\ntensor_parallel_size: 2\n" + FS2,
     MOE + "expert_parallel_size: 2\ndp_shard_size: 2\n" + FS2, hdr="# gpus: 4")
rule("ep.num_experts_divisible",
     "base_model: Qwen/Qwen1.5-MoE-A2.7B\nplugins:\n"
     "  - axolotl.integrations.expert_parallel.ExpertParallelPlugin\n"
     f"expert_parallel_size: 8  {X}\n" + FS2,
     MOE + "expert_parallel_size: 8\n" + FS2, hdr="# gpus: 8")
rule("ep.hardware", MOE + f"expert_parallel_size: 2  {X}\n" + FS2,
     MOE + "expert_parallel_size: 2\n" + FS2, hdr="# gpus: 2\n# gpu: l40s",
     pass_hdr="# gpus: 2\n# gpu: h100-sxm")

# ---- MoE
QL = ("adapter: qlora\nload_in_4bit: true\nlora_r: 8\nlora_alpha: 16\n"
      "lora_target_linear: true\n")
rule("moe.quantize_experts_fsdp2_ram_loading",
     "base_model: Qwen/Qwen3-30B-A3B\n" + QL + "quantize_moe_experts: true\n"
     f"fsdp_version: 2\nfsdp_config:\n  cpu_ram_efficient_loading: true  {X}",
     "base_model: Qwen/Qwen3-30B-A3B\n" + QL + "quantize_moe_experts: true\n"
     "fsdp_version: 2\nfsdp_config:\n  cpu_ram_efficient_loading: false", hdr="# gpus: 2")
rule("moe.experts_implementation_fallback",
     f"base_model: Qwen/Qwen3-30B-A3B\nexperts_implementation: scattermoe  {X}",
     "base_model: Qwen/Qwen3-30B-A3B\nexperts_implementation: grouped_mm")

# ---- FSDP
rule("fsdp.v1_deprecated", f"fsdp_version: 1\nfsdp_config:  {X}\n  reshard_after_forward: true",
     FS2, hdr="# gpus: 2")
rule("fsdp.version_default_pinned", f"fsdp_config:  {X}\n  reshard_after_forward: true",
     FS2, hdr="# gpus: 2")
rule("fsdp.version_in_fsdp_config",
     f"fsdp_config:\n  version: 2  {X}\n  reshard_after_forward: true", FS2, hdr="# gpus: 2")
rule("fsdp.version_only_nested",
     f"fsdp_config:  {X}\n  fsdp_version: 2\n  reshard_after_forward: true", FS2,
     hdr="# gpus: 2")
rule("fsdp.prefixed_keys_renamed",
     f"fsdp_version: 2\nfsdp_config:\n  fsdp_reshard_after_forward: true  {X}", FS2,
     hdr="# gpus: 2")
rule("fsdp.unknown_fsdp_config_key",
     f"fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n  sharding_strategy: FULL_SHARD  {X}",
     FS2, hdr="# gpus: 2")
rule("fsdp.legacy_list_deprecated",
     f"fsdp:  {X}\n  - full_shard\n  - auto_wrap\nfsdp_config:\n  fsdp_offload_params: false",
     "fsdp_version: 1\nfsdp_config:\n  offload_params: false", hdr="# gpus: 2")
rule("fsdp.legacy_list_without_fsdp_config", f"fsdp:  {X}\n  - full_shard\n  - auto_wrap",
     "fsdp:\n  - full_shard\n  - auto_wrap\nfsdp_config:\n  fsdp_offload_params: false",
     hdr="# gpus: 2")
rule("fsdp.legacy_list_type", f"fsdp: full_shard auto_wrap  {X}\nfsdp_config:\n  offload_params: false",
     "fsdp:\n  - full_shard\n  - auto_wrap\nfsdp_config:\n  offload_params: false",
     hdr="# gpus: 2")
rule("fsdp.empty_config", f"fsdp_config:  {X}\n  offload_params:", FS2, hdr="# gpus: 2")
rule("fsdp.fp32_norm_classes_ignored", f"fp32_norm_classes:  {X}\n  - LlamaRMSNorm",
     "fp32_norms: true\nfp32_norm_classes:\n  - LlamaRMSNorm")
rule("fsdp.final_state_dict_type_toplevel_ignored",
     FS2 + f"fsdp_final_state_dict_type: FULL_STATE_DICT  {X}",
     FS2 + "  final_state_dict_type: FULL_STATE_DICT", hdr="# gpus: 2")
rule("fsdp.sharded_final_save",
     FS2 + f"  state_dict_type: SHARDED_STATE_DICT  {X}",
     FS2 + "  state_dict_type: FULL_STATE_DICT", hdr="# gpus: 2")
rule("fsdp.offload_with_cp_torchao_optimizer",
     CP + "context_parallel_size: 2\nfsdp_version: 2\nfsdp_config:\n  offload_params: true\n"
     f"optimizer: adamw_torch_8bit  {X}",
     CP + "context_parallel_size: 2\nfsdp_version: 2\nfsdp_config:\n  offload_params: true\n"
     "optimizer: adamw_torch_fused", hdr="# gpus: 2")

# ---- quantization / LoRA kernels
rule("quant.qlora_zero3_non_reentrant",
     QL + "deepspeed: deepspeed_configs/zero3_bf16.json\ngradient_checkpointing: true\n"
     f"gradient_checkpointing_kwargs:  {X}\n  use_reentrant: false",
     QL + "deepspeed: deepspeed_configs/zero3_bf16.json\ngradient_checkpointing: true\n"
     "gradient_checkpointing_kwargs:\n  use_reentrant: true", hdr="# gpus: 2")
rule("quant.fsdp_qlora_quant_storage",
     "base_model: meta-llama/Llama-3.1-8B\n" + QL + "bf16: true\nbnb_config_kwargs:\n"
     f"  bnb_4bit_quant_storage: float16  {X}\n" + FS2,
     "base_model: meta-llama/Llama-3.1-8B\n" + QL + "bf16: true\nbnb_config_kwargs:\n"
     "  bnb_4bit_quant_storage: bfloat16\n" + FS2, hdr="# gpus: 2")
rule("quant.qlora_sharded_loading_inert", QL + f"qlora_sharded_model_loading: true  {X}",
     "base_model: meta-llama/Llama-3.1-8B\n" + QL + "qlora_sharded_model_loading: true\n"
     "fsdp_version: 2\nfsdp_config:\n  cpu_ram_efficient_loading: true", hdr="# gpus: 2")
rule("quant.fsdp_qlora_model_types",
     "base_model: Qwen/Qwen3-8B\n" + QL.replace("adapter: qlora", f"adapter: qlora  {X}") + FS2,
     "base_model: meta-llama/Llama-3.1-8B\n" + QL + FS2, hdr="# gpus: 2")
LO = "lora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n"
rule("lora_kernels.auto_enable", f"adapter: lora  {X}\n" + LO,
     "adapter: lora\n" + LO + "lora_mlp_kernel: false")
rule("lora_kernels.nvfp4_merge_aware_conflict",
     "adapter: lora\n" + LO + f"nvfp4_merge_aware: true  {X}\nlora_mlp_kernel: true",
     "adapter: lora\n" + LO + "nvfp4_merge_aware: true\nlora_mlp_kernel: false")
rule("lora_kernels.rl_not_supported",
     "adapter: lora\n" + LO + f"rl: dpo  {X}\nlora_qkv_kernel: true",
     "adapter: lora\n" + LO + "rl: dpo\nlora_qkv_kernel: false")

# ---- precision
rule("precision.bf16_auto_resolution", f"bf16: auto  {X}", "bf16: true")
rule("precision.bf16_and_fp16_both_true", f"bf16: true\nfp16: true  {X}",
     "bf16: false\nfp16: true")
rule("precision.bf16_unsupported_gpu", f"bf16: true  {X}", "bf16: false\nfp16: true",
     hdr="# gpu: t4")
rule("precision.tf32_auto", f"tf32: auto  {X}", "tf32: true")
rule("precision.fp8_without_compile", f"fp8: true  {X}", "fp8: true\ntorch_compile: true")
rule("precision.fp8_fsdp_activation_checkpointing",
     f"fp8: true\ntorch_compile: true\nfsdp_version: 2\nfsdp_config:\n  activation_checkpointing: true  {X}",
     "fp8: true\ntorch_compile: true\nfsdp_version: 2\nfsdp_config:\n  activation_checkpointing: false\n"
     "gradient_checkpointing: true", hdr="# gpus: 2")
rule("precision.fp8_ddp_compile", f"fp8: true  {X}\ntorch_compile: true",
     "fp8: true\ntorch_compile: true\n" + FS2, hdr="# gpus: 2")

# ---- checkpointing
rule("gc.offload_value_renamed", f"gradient_checkpointing: offload  {X}",
     "gradient_checkpointing: true\nactivation_offloading: true")
rule("gc.use_reentrant_default", f"gradient_checkpointing: true  {X}",
     "gradient_checkpointing: true\ngradient_checkpointing_kwargs:\n  use_reentrant: true")
rule("gc.hidden_states_offload",
     f"gradient_checkpointing: true\nactivation_offloading: hidden_states  {X}",
     "gradient_checkpointing: true\nactivation_offloading: true")
rule("gc.selective_matmul_with_adapter",
     "adapter: lora\n" + LO + f"selective_checkpointing:\n  save:  {X}\n    - attention\n    - mm",
     "adapter: lora\n" + LO + "selective_checkpointing:\n  save:\n    - attention")
rule("gc.selective_with_compile",
     f"torch_compile: true\nselective_checkpointing:  {X}\n  save:\n    - attention",
     "selective_checkpointing:\n  save:\n    - attention")
rule("gc.dpo_lora_ddp_hint", "adapter: lora\n" + LO + f"rl: dpo  {X}",
     "adapter: lora\n" + LO + "rl: dpo\ngradient_checkpointing: false", hdr="# gpus: 2")
rule("gc.gemma4_ddp_defaults",
     f"base_model: google/gemma-4-31B\ngradient_checkpointing: true  {X}",
     "base_model: google/gemma-4-31B\ngradient_checkpointing: false")
rule("gc.layer_offloading_cuda", f"layer_offloading: true  {X}",
     "adapter: lora\n" + LO + "layer_offloading: true")

# ---- compile
rule("compile.options_disallowed_key",
     f"torch_compile: true\ntorch_compile_options:\n  mode: max-autotune\n  options: {{}}  {X}",
     "torch_compile: true\ntorch_compile_options:\n  mode: max-autotune")
rule("compile.options_require_compile",
     f"torch_compile_options:  {X}\n  mode: max-autotune",
     "torch_compile: true\ntorch_compile_options:\n  mode: max-autotune")
rule("compile.auto_resolution", f"torch_compile: auto  {X}", "torch_compile: true")
rule("compile.deepcompile_requires_deepspeed", f"deepcompile: true  {X}",
     "deepcompile: true\ndeepspeed: deepspeed_configs/zero2.json", hdr="# gpus: 2")
rule("compile.deepcompile_ignored_with_compile_block",
     f"deepcompile: true  {X}\ndeepspeed:\n  zero_optimization:\n    stage: 2\n  compile:\n    deepcompile: true",
     "deepcompile: true\ndeepspeed:\n  zero_optimization:\n    stage: 2", hdr="# gpus: 2")
rule("compile.ebft_strided",
     f"rl: ebft\nebft:\n  mode: strided\ntorch_compile: true  {X}\ngradient_checkpointing: true",
     "rl: ebft\nebft:\n  mode: strided\ntorch_compile: false\ngradient_checkpointing: true")

# ---- DeepSpeed, optimizers, losses
rule("deepspeed.stage_env", f"deepspeed: deepspeed_configs/zero2.json  {X}",
     "ddp: true", hdr="# gpus: 2")
rule("optim.qgalore_fp32_and_targets", f"optimizer: q_galore_adamw8bit  {X}",
     "bf16: true\noptimizer: q_galore_adamw8bit\noptim_target_modules:\n  - attn\n  - mlp")
rule("optim.adamw_params_without_adamw", f"optimizer: lion_8bit\nadam_beta1: 0.9  {X}",
     "optimizer: adamw_torch_fused\nadam_beta1: 0.9")
rule("optim.ao_deprecated", f"optimizer: ao_adamw_8bit  {X}", "optimizer: adamw_torch_8bit")
CCE = "plugins:  EXPECT\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n"
rule("ce.cce_plugin_default_on", CCE + "liger_cross_entropy: true",
     CCE.replace("  EXPECT", "") + "bf16: true")
rule("ce.liger_swiglu_renamed",
     "plugins:\n  - axolotl.integrations.liger.LigerPlugin\n" + f"liger_swiglu: true  {X}",
     "plugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_glu_activation: true")

# ---- Ray, platform, saving
RAY = "ray_num_workers: 2\n"
rule("ray.capability_checks_deferred", f"use_ray: true  {X}\n" + RAY, "use_ray: false")
rule("ray.world_size_is_num_workers", f"use_ray: true  {X}\n" + RAY, "use_ray: false")
rule("ray.batch_derivation_on_worker", f"use_ray: true  {X}\n" + RAY, "use_ray: false")
rule("ray.bf16_auto_unresolved", f"use_ray: true  {X}\n" + RAY,
     "use_ray: true\n" + RAY + "bf16: false\nfp16: true", hdr="# gpu: v100-32gb")
rule("platform.rocm_xformers", "attn_implementation: xformers",
     "attn_implementation: sdpa", hdr="# gpu: mi300x", root=True)
rule("platform.rocm_deepspeed", f"deepspeed: deepspeed_configs/zero2.json  {X}",
     "deepspeed: deepspeed_configs/zero2.json", hdr="# gpus: 2\n# gpu: mi300x",
     pass_hdr="# gpus: 2\n# gpu: h100-sxm")
rule("save.saves_per_epoch_conversion", f"saves_per_epoch: 2  {X}", "save_steps: 100")


def write_all(specs):
    """Write each spec's fail and pass fixture into argv[1] (default
    tests/fixtures/rules)."""
    outdir = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/rules"
    for rid, s in specs.items():
        for kind, body, hdr, mark in (("fail", s["fail"], s["hdr"], True),
                                      ("pass", s["ok"], s["pass_hdr"], False)):
            if not mark:
                body = body.replace(X, "")
            text = render(rid, body, hdr, s["drop"], s["root"], mark)
            with open(os.path.join(outdir, f"{rid}.{kind}.yaml"), "w") as f:
                f.write(text)
    print(len(specs), "rules")


def main():
    write_all(S)


if __name__ == "__main__":
    main()
