#!/usr/bin/env python3
"""Pass/fail fixtures of the rules issue 14 added for Axolotl's validators
(and of the rules whose conditions it changed).  Same format and helpers as
rule_fixtures_warn.py: a body is appended to a small valid base config, a
fail body marks the lines where the rule fires with EXPECT, ROOT marks the
first key.  Each fail fixture is a config Axolotl's own validation refuses
for that reason and each pass fixture one it accepts (checked with
../shared/tools/axolotl-oracle when they were written).

Run from the repository root: python3 tests/gen/rule_fixtures_parity.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rule_fixtures_warn as base  # noqa: E402

X = base.X
S = {}


def rule(rid, fail, ok, **kw):
    S[rid] = base.spec(fail, ok, **kw)


def plugin(name, cls):
    return f"plugins:\n  - axolotl.integrations.{name}.{cls}\n"


KERNELS = plugin("kernels", "KernelsPlugin")
SWAN = plugin("swanlab", "SwanLabPlugin")

# ---- eval
rule("eval.bench_needs_schedule", f"val_set_size: 0.1\ndo_bench_eval: true  {X}",
     "val_set_size: 0.1\ndo_bench_eval: true\nevals_per_epoch: 2")
rule("eval.causal_lm_metrics",
     f"val_set_size: 0.1\neval_causal_lm_metrics:  {X}\n  - sacrebleu\n  - bleu",
     "val_set_size: 0.1\neval_causal_lm_metrics:\n  - sacrebleu\n  - chrf")
rule("eval.no_validation_split", f"val_set_size: 0  {X}\neval_steps: 50",
     "val_set_size: 0\neval_strategy: \"no\"")
rule("eval.per_epoch_strategy",
     f"val_set_size: 0.1\nevals_per_epoch: 4\neval_strategy: epoch  {X}",
     "val_set_size: 0.1\nevals_per_epoch: 4\neval_strategy: steps")
rule("eval.steps_and_per_epoch",
     f"val_set_size: 0.1\nevals_per_epoch: 4\neval_steps: 50  {X}",
     "val_set_size: 0.1\neval_steps: 50")
rule("eval.strategy_steps_mismatch",
     f"val_set_size: 0.1\neval_steps: 50\neval_strategy: epoch  {X}",
     "val_set_size: 0.1\neval_steps: 50\neval_strategy: steps")
rule("eval.val_set_with_test_datasets",
     "test_datasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca\n"
     f"val_set_size: 0.05  {X}",
     "test_datasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca\n"
     "val_set_size: 0")

# ---- datasets
PT = ("pretraining_dataset:\n  - path: allenai/c4\n    name: en\n"
      "    type: pretrain\n")
rule("dataset.pretraining_requires_max_steps",
     PT.replace("pretraining_dataset:", f"pretraining_dataset:  {X}"),
     PT + "max_steps: 100", drop=("datasets",))
rule("dataset.pretraining_with_val_set_size",
     PT + f"max_steps: 100\nval_set_size: 0.1  {X}", PT + "max_steps: 100",
     drop=("datasets",))
rule("dataset.pretraining_with_tokens_per_second",
     PT + f"max_steps: 100\ninclude_tokens_per_second: true  {X}",
     PT + "max_steps: 100\ninclude_tokens_per_second: false",
     drop=("datasets",))
rule("dataset.datasets_null", PT + f"max_steps: 100\ndatasets:  {X}",
     PT + "max_steps: 100", drop=("datasets",))
rule("dataset.streaming_requires_max_steps", f"streaming: true  {X}",
     "streaming: true\nmax_steps: 100")
rule("dataset.streaming_with_val_set_size",
     f"streaming: true\nmax_steps: 100\nval_set_size: 0.05  {X}",
     "streaming: true\nmax_steps: 100")
rule("dataset.dedup_with_streaming",
     f"streaming: true\nmax_steps: 100\ndataset_exact_deduplication: true  {X}",
     "dataset_exact_deduplication: true")
rule("dataset.dedup_with_skip_prepare",
     f"skip_prepare_dataset: true\ndataset_exact_deduplication: true  {X}",
     "skip_prepare_dataset: true")
rule("dataset.push_requires_auth_token",
     f"push_dataset_to_hub: me/prepared  {X}",
     "push_dataset_to_hub: me/prepared\nhf_use_auth_token: true")
rule("dataset.sharegpt_type_removed",
     f"datasets:\n  - path: some/chats\n    type: sharegpt:chat  {X}",
     "datasets:\n  - path: some/chats\n    type: chat_template")
rule("dataset.chat_template_jinja_required",
     "datasets:\n  - path: some/chats\n    type: chat_template\n"
     f"    chat_template: jinja  {X}",
     "datasets:\n  - path: some/chats\n    type: chat_template\n"
     "    chat_template: jinja\n    chat_template_jinja: \"{{ messages }}\"")
rule("dataset.message_field_conflict",
     "datasets:\n  - path: some/chats\n    type: chat_template\n"
     f"    message_field_role: from  {X}\n"
     "    message_property_mappings:\n      role: speaker",
     "datasets:\n  - path: some/chats\n    type: chat_template\n"
     "    message_field_role: from\n"
     "    message_property_mappings:\n      role: from")

# ---- training
rule("train.warmup_steps_and_ratio", f"warmup_steps: 10\nwarmup_ratio: 0.1  {X}",
     "warmup_ratio: 0.1")
rule("train.neftune_alpha_positive", f"neftune_noise_alpha: -1  {X}",
     "neftune_noise_alpha: 5")
rule("deprecated.noisy_embedding_alpha",
     f"noisy_embedding_alpha: 5  {X}\nneftune_noise_alpha: 5",
     "neftune_noise_alpha: 5")
rule("deprecated.trl_options_removed",
     f"rl: dpo\nrpo_alpha: 0.5  {X}\ndpo_norm_loss: false  {X}",
     "rl: dpo\nrpo_alpha: null")

# ---- RL
rule("rl.dpo_loss_options",
     f"rl: dpo\ndpo_loss_type:\n  - sigmoid\n  - ipo\ndpo_loss_weights:  {X}\n  - 1.0",
     "rl: dpo\ndpo_loss_type:\n  - sigmoid\n  - ipo\ndpo_loss_weights:\n"
     "  - 1.0\n  - 0.5")
rule("rl.gdpo_aggregation",
     f"rl: gdpo\ntrl:  {X}\n  multi_objective_aggregation: sum_then_normalize",
     "rl: gdpo\ntrl:\n  num_generations: 4")
rule("rl.simpo_warmup_ratio", f"rl: simpo\nwarmup_ratio: 0.1  {X}",
     "rl: simpo\nwarmup_steps: 10")
rule("rl.ebft_refused", f"rl: ebft  {X}", "rl: orpo")
rule("rl.beta_mismatch", f"rl: dpo\nbeta: 0.1  {X}\ntrl:\n  beta: 0.2",
     "rl: dpo\nbeta: 0.1\ntrl:\n  beta: 0.1")

# ---- LoRA and adapters
LORA = "adapter: lora\nlora_r: 8\nlora_alpha: 16\n"
rule("lora.adapter_unknown", f"adapter: dora  {X}", LORA)
rule("lora.lr_groups_with_loraplus",
     LORA + "lr_groups:\n  - name: head\n    modules: [lm_head]\n    lr: 1.0e-5\n"
     f"loraplus_lr_ratio: 16  {X}",
     LORA + "loraplus_lr_ratio: 16")
rule("lora.peft_layers_with_unfrozen",
     LORA + "peft_layers_to_transform: [0, 1]\n"
     f"unfrozen_parameters:  {X}\n  - lm_head.*",
     LORA + "peft_layers_to_transform: [0, 1]")
rule("lora.peft_layers_pattern_needs_layers",
     LORA + f"peft_layers_pattern: [layers]  {X}",
     LORA + "peft_layers_pattern: [layers]\npeft_layers_to_transform: [0, 1]")
rule("lora.onebitllms_adapter", LORA + f"use_onebitllms: true  {X}",
     "use_onebitllms: true")
rule("lora.target_modules_regex",
     LORA + f"lora_target_modules:  {X}\n  - q_proj\n  - \"*_proj\"",
     LORA + "lora_target_modules:\n  - q_proj\n  - \".*_proj\"")
rule("lora.relora_requirements",
     LORA + f"relora: true  {X}",
     LORA + "relora: true\njagged_restart_steps: 100")

# ---- model
rule("model.gptq_with_revision", f"gptq: true\nrevision_of_model: v2  {X}",
     "gptq: true")
rule("model.image_resize_algorithm", f"image_resize_algorithm: nearest  {X}",
     "image_resize_algorithm: Lanczos")
rule("model.path_not_string", f"base_model_config: null  {X}",
     "base_model_config: HuggingFaceTB/SmolLM2-135M")
rule("model.processor_kwargs_reserved",
     f"processor_kwargs:\n  revision: main  {X}",
     "processor_kwargs:\n  use_fast: true")
rule("schema.required", "", "", drop=("learning_rate",), root=True)
S["schema.required"]["ok"] = "learning_rate: 2.0e-5"

# ---- chat template
rule("chat.jinja_template_required", f"chat_template: jinja  {X}",
     "chat_template: jinja\nchat_template_jinja: \"{{ messages }}\"")
rule("chat.mistral_common_overrides",
     f"tokenizer_use_mistral_common: true\nchat_template: chatml  {X}",
     "tokenizer_use_mistral_common: true")

# ---- quantization
rule("quant.qat_torch_version",
     f"qat:  {X}\n  weight_dtype: int8\n  activation_dtype: int8",
     "qat:\n  weight_dtype: int8\n  activation_dtype: int8",
     hdr="# torch: 2.5.1", pass_hdr="# torch: 2.6")

# ---- kernels plugin
MOE = "base_model: Qwen/Qwen3-30B-A3B\n"
rule("kernels.expert_backend_values",
     KERNELS + MOE + f"expert_backend: triton  {X}",
     KERNELS + MOE + "expert_backend: ScatterMoE")
rule("kernels.nonexpert_quantization",
     KERNELS + MOE + f"nonexpert_quantization: int4  {X}",
     KERNELS + MOE + "nonexpert_quantization: fp8_blockwise")
rule("kernels.moe_grouped_backend",
     KERNELS + MOE + f"moe_grouped_backend: dequant  {X}",
     KERNELS + MOE + "moe_grouped_backend: cutlass")
rule("kernels.moe_dequant_chunk_size",
     KERNELS + MOE + f"moe_dequant_chunk_size: 0  {X}",
     KERNELS + MOE + "moe_dequant_chunk_size: 8")
rule("kernels.dsv4_fp8_nonexpert_mode",
     KERNELS + MOE + f"dsv4_fp8_nonexpert_mode: fp8  {X}",
     KERNELS + MOE + "dsv4_fp8_nonexpert_mode: BF16")
rule("kernels.dsv4_fp4_grouped_mode",
     KERNELS + MOE + f"dsv4_fp4_grouped_mode: fp8  {X}",
     KERNELS + MOE + "dsv4_fp4_grouped_mode: nvfp4")
rule("kernels.dsv4_attention_lora",
     KERNELS + MOE + LORA + f"use_dsv4_kernels: true\nlora_target_linear: true  {X}",
     KERNELS + MOE + LORA + "use_dsv4_kernels: true\nlora_target_parameters:\n"
     "  - mlp.experts.gate_up_proj\nlora_dropout: 0")
rule("kernels.nvfp4_merge_aware",
     KERNELS + MOE + LORA + f"nvfp4_merge_aware: true  {X}",
     KERNELS + MOE + LORA + "expert_backend: sonicmoe\nnvfp4_merge_aware: true")
rule("lora_kernels.nvfp4_merge_aware_conflict",
     KERNELS + MOE + LORA + "expert_backend: sonicmoe\n"
     f"nvfp4_merge_aware: true  {X}\nlora_qkv_kernel: true",
     KERNELS + MOE + LORA + "expert_backend: sonicmoe\n"
     "nvfp4_merge_aware: true\nlora_qkv_kernel: false",
     drop=("base_model",))
rule("moe.experts_implementation_fallback",
     KERNELS + MOE + f"experts_implementation: scattermoe  {X}",
     KERNELS + MOE + "use_scattermoe: true\nexperts_implementation: scattermoe",
     drop=("base_model",))
for rid in [k for k in S if k.startswith("kernels.")]:
    S[rid]["drop"] = ("base_model",)

# ---- other plugins
rule("plugin.swanlab_project_required", SWAN + f"use_swanlab: true  {X}",
     SWAN + "swanlab_project: my-runs")
rule("plugin.swanlab_mode",
     SWAN + f"swanlab_project: my-runs\nswanlab_mode: online  {X}",
     SWAN + "swanlab_project: my-runs\nswanlab_mode: offline")
rule("plugin.spectrum_fsdp_orig_params",
     plugin("spectrum", "SpectrumPlugin") + "spectrum_top_fraction: 0.5\n"
     "fsdp:\n  - full_shard\n  - auto_wrap\n"
     f"fsdp_config:  {X}\n  offload_params: false",
     plugin("spectrum", "SpectrumPlugin") + "spectrum_top_fraction: 0.5\n"
     "fsdp:\n  - full_shard\n  - auto_wrap\n"
     "fsdp_config:\n  use_orig_params: true",
     hdr="# gpus: 2")
rule("plugin.nemo_gym_config",
     plugin("nemo_gym", "NemoGymPlugin") + f"nemo_gym_enabled: true  {X}\n"
     "nemo_gym_datasets:\n  - path: data.jsonl\n    server_name: math",
     plugin("nemo_gym", "NemoGymPlugin") + "nemo_gym_enabled: false")
rule("plugin.diffusion_mask_ratios",
     plugin("diffusion", "DiffusionPlugin") +
     f"diffusion:  {X}\n  min_mask_ratio: 0.8\n  max_mask_ratio: 0.5",
     plugin("diffusion", "DiffusionPlugin") +
     "diffusion:\n  min_mask_ratio: 0.2")

# ---- warnings Axolotl logs
rule("dataset.pretraining_without_streaming",
     PT.replace("pretraining_dataset:", f"pretraining_dataset:  {X}") +
     "max_steps: 100", PT + "max_steps: 100\nstreaming: true",
     drop=("datasets",))
rule("dataset.pretraining_group_by_length",
     PT + f"streaming: true\nmax_steps: 100\ngroup_by_length: true  {X}",
     PT + "streaming: true\nmax_steps: 100", drop=("datasets",))
rule("save.hub_without_save",
     f"hub_model_id: me/model\nsave_strategy: \"no\"  {X}",
     "hub_model_id: me/model\nsave_strategy: epoch")
rule("train.reward_model_padding", f"reward_model: true  {X}",
     "reward_model: true\npad_to_sequence_len: true")
rule("model.trust_remote_code", f"trust_remote_code: true  {X}",
     "trust_remote_code: false")
rule("platform.torch_below_minimum", "", "", hdr="# torch: 2.5.1",
     pass_hdr="# torch: 2.6", root=True)
rule("platform.wandb_run_id_as_name", f"wandb_run_id: abc123  {X}",
     "wandb_run_id: abc123\nwandb_name: my-run")
rule("lora.untrained_token_not_trainable",
     LORA + "peft_trainable_token_indices: [128001, 128002]\n"
     f"fix_untrained_tokens: [128001, 128009]  {X}",
     LORA + "peft_trainable_token_indices: [128001, 128009]\n"
     "fix_untrained_tokens: [128001, 128009]")
rule("deprecated.dpo_beta", f"rl: dpo\ndpo_beta: 0.1  {X}",
     "rl: dpo\nrl_beta: 0.1")
rule("deprecated.eval_generation_options",
     f"val_set_size: 0.1\neval_max_new_tokens: 128  {X}",
     "val_set_size: 0.1\ngeneration_max_new_tokens: 128")
rule("train.learning_rate_number", f"learning_rate: fast  {X}",
     "learning_rate: \"2e-5\"", drop=("learning_rate",))
rule("deepspeed.mapping_opened_as_path",
     "tensor_parallel_size: 2\n"
     f"deepspeed:  {X}\n  zero_optimization:\n    stage: 2",
     "tensor_parallel_size: 2\ndeepspeed: deepspeed_configs/zero2.json",
     hdr="# gpus: 2")

rule("schema.plugin_not_loadable",
     "plugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
     f"  - axolotl.integrations.liger.LigerArgs  {X}\n  - custom_plugin  {X}\n"
     f"  - liger.LigerPlugin  {X}",
     "plugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
     "  - axolotl.integrations.liger.LigerPlugin\n"
     "  - my_company.plugins.Custom")

rule("schema.compared_as_number",
     f"tensor_parallel_size: \"1\"  {X}", "tensor_parallel_size: 1")

# ---- compile (the allowlist changed)
rule("compile.options_disallowed_key",
     f"torch_compile: true\ntorch_compile_options:\n  shape_padding: true\n"
     f"  max_autotune: true  {X}",
     "torch_compile: true\ntorch_compile_options:\n  shape_padding: true\n"
     "  triton.cudagraphs: false")


def main():
    base.write_all(S)


if __name__ == "__main__":
    main()
