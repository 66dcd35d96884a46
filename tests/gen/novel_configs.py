#!/usr/bin/env python3
"""Generate tests/fixtures/novel/: hand-written Axolotl configs unlike the
corpus examples (RL with trl blocks, reward models, every datasets type
form, DeepSpeed as a path and inline, FSDP1/FSDP2 spellings, parallel sizes,
PEFT variants, quantization, multimodal, eval/save/scheduler combinations,
tokens, plugins and their args, YAML 1.1 scalar forms, and the raw values
Axolotl's before-validators read).  Each file starts with a comment saying
what it exercises.  Run from the repository root; the output is committed.

Check them against Axolotl's validator at 1 and 8 GPUs (H100, torch 2.11):
  make conformance CONFORMANCE_CONFIGS=tests/fixtures/novel
"""
import copy
import os

import yaml

OUT = "tests/fixtures/novel"
DEL = object()
N = [0]

def merge(base, over):
    d = copy.deepcopy(base)
    for k, v in over.items():
        if v is DEL:
            d.pop(k, None)
        else:
            d[k] = v
    return d

def w(name, comment, d, raw=None):
    N[0] += 1
    path = os.path.join(OUT, f"{N[0]:03d}-{name}.yaml")
    text = "".join(f"# {l}\n" for l in comment.split("\n"))
    text += raw if raw is not None else yaml.safe_dump(d, sort_keys=False, default_flow_style=False)
    open(path, "w").write(text)

SFT = {
    "base_model": "meta-llama/Llama-3.1-8B-Instruct",
    "datasets": [{"path": "mlabonne/FineTome-100k", "type": "chat_template", "split": "train[:20%]",
                  "field_messages": "conversations",
                  "message_property_mappings": {"role": "from", "content": "value"}}],
    "chat_template": "llama3",
    "dataset_prepared_path": "last_run_prepared",
    "val_set_size": 0.02,
    "output_dir": "./outputs/out",
    "sequence_len": 2048,
    "sample_packing": True,
    "micro_batch_size": 2,
    "gradient_accumulation_steps": 4,
    "num_epochs": 1,
    "optimizer": "adamw_torch_fused",
    "lr_scheduler": "cosine",
    "learning_rate": 2e-5,
    "bf16": "auto",
    "tf32": False,
    "gradient_checkpointing": True,
    "flash_attention": True,
    "logging_steps": 10,
    "warmup_ratio": 0.05,
    "evals_per_epoch": 2,
    "saves_per_epoch": 1,
    "weight_decay": 0.0,
    "special_tokens": {"pad_token": "<|end_of_text|>"},
}
LORA = merge(SFT, {"adapter": "lora", "lora_r": 16, "lora_alpha": 32, "lora_dropout": 0.05,
                   "lora_target_linear": True, "learning_rate": 2e-4})
QLORA = merge(LORA, {"adapter": "qlora", "load_in_4bit": True, "optimizer": "paged_adamw_8bit"})
S = lambda **k: merge(SFT, k)
L = lambda **k: merge(LORA, k)
Q = lambda **k: merge(QLORA, k)

# ---------------- RL ----------------
DPO = merge(LORA, {"base_model": "Qwen/Qwen2.5-7B-Instruct", "chat_template": "qwen_25",
    "rl": "dpo", "datasets": [{"path": "Intel/orca_dpo_pairs", "type": "chatml.intel", "split": "train"}],
    "sample_packing": False, "special_tokens": DEL, "val_set_size": 0.0, "evals_per_epoch": DEL,
    "learning_rate": 5e-6})
D = lambda **k: merge(DPO, k)
w("dpo-lora-basic", "DPO with LoRA and a chatml.intel dataset: the common preference recipe", DPO)
w("dpo-rl-beta-trl", "DPO with rl_beta and a trl: block setting beta too", D(rl_beta=0.1, trl={"beta": 0.1}))
w("dpo-beta-deprecated", "deprecated dpo_beta (copied to rl_beta)", D(dpo_beta=0.2))
w("dpo-loss-type-list", "dpo_loss_type as a list (mixture of losses) with weights", D(dpo_loss_type=["sigmoid", "bco_pair"], dpo_loss_weights=[0.8, 0.2]))
w("dpo-label-smoothing", "DPO with label smoothing and precompute_ref_log_probs", D(dpo_label_smoothing=0.1, precompute_ref_log_probs=True))
w("dpo-sample-packing", "DPO with sample_packing true (preference RL does not pack)", D(sample_packing=True))
w("dpo-chat-template-ds", "DPO with chat_template.default dataset type and field mappings",
  D(datasets=[{"path": "argilla/ultrafeedback-binarized", "type": "chat_template.default",
               "field_messages": "conversation", "field_chosen": "chosen", "field_rejected": "rejected",
               "message_property_mappings": {"role": "role", "content": "content"}}]))
w("dpo-user-defined-type", "DPO with a user-defined dict type (field_prompt / field_chosen)",
  D(datasets=[{"path": "my/prefs", "split": "train", "type": {"field_prompt": "prompt", "field_chosen": "chosen",
               "field_rejected": "rejected", "prompt_format": "{prompt}", "chosen_format": "{chosen}",
               "rejected_format": "{rejected}"}}]))
w("ipo-basic", "rl: ipo with label smoothing", D(rl="ipo", dpo_label_smoothing=0.0))
w("orpo-basic", "ORPO with orpo_alpha, full fine-tune", merge(DPO, {"rl": "orpo", "orpo_alpha": 0.1, "adapter": DEL,
  "lora_r": DEL, "lora_alpha": DEL, "lora_dropout": DEL, "lora_target_linear": DEL,
  "datasets": [{"path": "argilla/ultrafeedback-binarized-preferences-cleaned", "type": "chat_template.argilla"}]}))
w("orpo-remove-unused-false", "ORPO with remove_unused_columns false", D(rl="orpo", orpo_alpha=0.1, remove_unused_columns=False))
w("kto-basic", "KTO with desirable/undesirable weights and remove_unused_columns false",
  D(rl="kto", kto_desirable_weight=1.0, kto_undesirable_weight=1.0, remove_unused_columns=False,
    datasets=[{"path": "argilla/kto-mix-15k", "type": "llama3.argilla_chat", "split": "train"}]))
w("kto-remove-unused-default", "KTO without remove_unused_columns: false",
  D(rl="kto", datasets=[{"path": "argilla/kto-mix-15k", "type": "llama3.argilla_chat"}]))
w("kto-sample-packing", "KTO with sample packing on", D(rl="kto", remove_unused_columns=False, sample_packing=True))
w("simpo-basic", "SimPO with simpo_gamma and cpo_alpha", D(rl="simpo", simpo_gamma=0.5, cpo_alpha=1.0, rl_beta=2.0))
w("simpo-warmup-ratio", "SimPO with warmup_ratio", D(rl="simpo", simpo_gamma=0.5, warmup_ratio=0.1))
w("simpo-warmup-steps", "SimPO with warmup_steps instead", D(rl="simpo", simpo_gamma=0.5, warmup_ratio=DEL, warmup_steps=10))
GRPO = merge(LORA, {"base_model": "Qwen/Qwen2.5-1.5B-Instruct", "chat_template": "qwen_25", "rl": "grpo",
    "special_tokens": DEL, "sample_packing": False, "val_set_size": 0.0, "evals_per_epoch": DEL,
    "datasets": [{"path": "openai/gsm8k", "name": "main", "split": "train", "type": "rewards.gsm8k_transform"}],
    "trl": {"beta": 0.001, "max_completion_length": 256, "use_vllm": True, "vllm_server_host": "0.0.0.0",
            "vllm_server_port": 8000, "num_generations": 4, "reward_funcs": ["rewards.accuracy_reward", "rewards.format_reward"],
            "reward_weights": [1.0, 0.5]},
    "vllm": {"host": "0.0.0.0", "port": 8000, "tensor_parallel_size": 1, "gpu_memory_utilization": 0.85, "dtype": "auto"},
    "micro_batch_size": 4, "gradient_accumulation_steps": 2, "learning_rate": 1e-6, "max_steps": 500})
G = lambda trl=None, **k: merge(GRPO, dict(k, **({"trl": merge(GRPO["trl"], trl)} if trl else {})))
w("grpo-vllm-server", "GRPO with vLLM server mode, two reward funcs and weights", GRPO)
w("grpo-colocate", "GRPO with vllm_mode colocate and sleep mode", G(trl={"vllm_mode": "colocate", "vllm_enable_sleep_mode": True}))
w("grpo-no-vllm", "GRPO generating with transformers (use_vllm false)", G(trl={"use_vllm": False}, vllm=DEL))
w("grpo-weights-mismatch", "GRPO with 2 reward funcs and 3 weights", G(trl={"reward_weights": [1.0, 0.5, 0.2]}))
w("grpo-num-gen-indivisible", "GRPO: num_generations 3 with mbs 4 (generation batch not divisible)", G(trl={"num_generations": 3}))
w("grpo-importance-sampling", "GRPO with sequence-level importance sampling (GSPO style) and epsilon_high", G(trl={"importance_sampling_level": "sequence", "epsilon": 3e-4, "epsilon_high": 4e-4, "loss_type": "grpo"}))
w("grpo-bad-is-level", "GRPO with an invalid importance_sampling_level", G(trl={"importance_sampling_level": "batch"}))
w("grpo-bad-vllm-mode", "GRPO with vllm_mode external (not a literal)", G(trl={"vllm_mode": "external"}))
w("grpo-reward-funcs-str", "GRPO with reward_funcs as a single string, not a list", G(trl={"reward_funcs": "rewards.accuracy_reward"}))
w("grpo-context-parallel", "GRPO with context_parallel_size 2", G(context_parallel_size=2))
w("grpo-sample-packing", "GRPO with sample_packing true", G(sample_packing=True))
w("grpo-fsdp2", "GRPO full fine-tune under FSDP2", merge(G(), {"adapter": DEL, "lora_r": DEL, "lora_alpha": DEL, "lora_dropout": DEL,
  "lora_target_linear": DEL, "fsdp_version": 2, "fsdp_config": {"offload_params": False, "auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
  "transformer_layer_cls_to_wrap": "Qwen2DecoderLayer", "state_dict_type": "FULL_STATE_DICT", "reshard_after_forward": True}}))
w("grpo-async-prefetch", "GRPO with async_prefetch and replay buffer", G(trl={"async_prefetch": True, "replay_buffer_size": 64, "use_data_producer": True}))
w("grpo-vllm-lora-sync", "GRPO with vllm_lora_sync and importance sampling correction", G(trl={"vllm_lora_sync": True, "vllm_importance_sampling_correction": True, "vllm_importance_sampling_mode": "token_mask"}))
w("grpo-qlora", "GRPO with QLoRA 4-bit", merge(G(), {"adapter": "qlora", "load_in_4bit": True}))
w("grpo-temperature-zero", "GRPO with temperature 0", G(trl={"temperature": 0.0, "top_p": 1.0, "top_k": 0}))
RM = merge(SFT, {"base_model": "Qwen/Qwen2.5-0.5B", "reward_model": True, "num_labels": 1, "chat_template": "qwen_25",
    "datasets": [{"path": "argilla/distilabel-intel-orca-dpo-pairs", "type": "bradley_terry.chat_template", "split": "train"}],
    "sample_packing": False, "special_tokens": DEL, "val_set_size": 0.0, "evals_per_epoch": DEL})
w("reward-model", "Bradley-Terry reward model training", RM)
w("reward-model-packing", "reward model with sample_packing true", merge(RM, {"sample_packing": True}))
w("reward-model-lora", "reward model with LoRA and modules_to_save score", merge(RM, {"adapter": "lora", "lora_r": 8, "lora_alpha": 16, "lora_target_linear": True, "lora_modules_to_save": ["score"]}))
PRM = merge(SFT, {"base_model": "Qwen/Qwen2.5-Math-1.5B", "process_reward_model": True, "num_labels": 2,
    "datasets": [{"path": "trl-lib/math_shepherd", "type": "stepwise_supervised", "step_separator": "\n", "max_completion_length": None, "train_on_last_step_only": False}],
    "sample_packing": False, "chat_template": DEL, "special_tokens": DEL, "val_set_size": 0.0, "evals_per_epoch": DEL})
w("process-reward-model", "process reward model with a stepwise_supervised dataset", PRM)
w("prm-and-rm", "both reward_model and process_reward_model", merge(PRM, {"reward_model": True}))
w("rl-unknown", "rl: ppo (not an RLType)", D(rl="ppo"))
w("rl-true", "rl: true (bool where an enum is expected)", D(rl=True))
w("rl-dpo-upper", "rl: DPO in upper case", D(rl="DPO"))
w("dpo-trl-unknown-key", "DPO with an unknown key inside trl:", D(trl={"beta": 0.1, "not_a_trl_key": 3}))
w("dpo-max-prompt-len", "DPO with max_prompt_len larger than sequence_len", D(max_prompt_len=4096, sequence_len=1024))

# ---------------- datasets ----------------
w("ds-alpaca", "plain alpaca dataset type", S(datasets=[{"path": "tatsu-lab/alpaca", "type": "alpaca"}], chat_template=DEL))
w("ds-input-output", "input_output dataset type with train_on_inputs false",
  S(datasets=[{"path": "data/io.jsonl", "ds_type": "json", "type": "input_output"}], train_on_inputs=False, chat_template=DEL))
w("ds-completion-field", "completion type with a custom field",
  S(datasets=[{"path": "data/books", "type": "completion", "field": "text"}], chat_template=DEL))
w("ds-json-data-files", "local json with ds_type and data_files as a list",
  S(datasets=[{"path": "json", "ds_type": "json", "data_files": ["data/a.jsonl", "data/b.jsonl"], "type": "alpaca"}], chat_template=DEL))
w("ds-roles-mapping", "chat_template with roles mapping and roles_to_train / train_on_eos",
  S(datasets=[{"path": "my/sharegpt", "type": "chat_template", "field_messages": "conversations",
    "message_property_mappings": {"role": "from", "content": "value"},
    "roles": {"user": ["human", "user"], "assistant": ["gpt", "assistant"], "system": ["system"]},
    "roles_to_train": ["assistant"], "train_on_eos": "turn"}]))
w("ds-train-on-eos-bad", "train_on_eos with an invalid literal",
  S(datasets=[{"path": "my/sharegpt", "type": "chat_template", "train_on_eos": "every"}]))
w("ds-roles-str", "roles values as strings instead of lists",
  S(datasets=[{"path": "my/sharegpt", "type": "chat_template", "roles": {"user": "human", "assistant": "gpt"}}]))
w("ds-template-jinja", "dataset chat_template: jinja with chat_template_jinja set",
  S(datasets=[{"path": "my/chat", "type": "chat_template", "chat_template": "jinja",
    "chat_template_jinja": "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"}], chat_template=DEL))
w("ds-template-jinja-missing", "dataset chat_template: jinja without chat_template_jinja",
  S(datasets=[{"path": "my/chat", "type": "chat_template", "chat_template": "jinja"}], chat_template=DEL))
w("top-jinja-missing", "top-level chat_template: jinja without chat_template_jinja", S(chat_template="jinja"))
w("top-jinja-ok", "top-level chat_template jinja with a template string",
  S(chat_template="jinja", chat_template_jinja="{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}"))
w("top-jinja-without-jinja", "chat_template_jinja set while chat_template is llama3", S(chat_template_jinja="{{ messages }}"))
w("chat-template-unknown", "chat_template set to an unknown name", S(chat_template="llama5"))
w("chat-template-tokenizer-default", "chat_template tokenizer_default_fallback_chatml", S(chat_template="tokenizer_default_fallback_chatml"))
w("ds-shards", "dataset shards and shards_idx", S(datasets=[merge(SFT["datasets"][0], {"shards": 10, "shards_idx": 0})]))
w("ds-preprocess-shards", "preprocess_shards on a dataset", S(datasets=[merge(SFT["datasets"][0], {"preprocess_shards": 4})]))
w("ds-shards-str", "shards given as a string", S(datasets=[merge(SFT["datasets"][0], {"shards": "ten"})]))
w("ds-multiple-types", "three datasets of different types mixed",
  S(datasets=[SFT["datasets"][0], {"path": "tatsu-lab/alpaca", "type": "alpaca"},
              {"path": "Open-Orca/OpenOrca", "type": "alpaca_w_system.load_open_orca"}]))
w("ds-user-defined-sft", "user-defined SFT dict type with field_* and format",
  S(datasets=[{"path": "my/qa", "type": {"system_prompt": "", "field_instruction": "question", "field_output": "answer",
    "format": "[INST] {instruction} [/INST]", "no_input_format": "[INST] {instruction} [/INST]"}}], chat_template=DEL))
w("ds-user-defined-missing-field", "user-defined dict type with no format", S(datasets=[{"path": "my/qa", "type": {"field_instruction": "q"}}]))
w("ds-empty-list", "datasets: [] (empty)", S(datasets=[]))
w("ds-null", "datasets: null with no pretraining_dataset", S(datasets=None))
w("ds-missing", "no datasets key at all", S(datasets=DEL))
w("ds-not-list", "datasets as a single mapping, not a list", S(datasets=SFT["datasets"][0]))
w("ds-str-entry", "datasets entry as a bare string", S(datasets=["tatsu-lab/alpaca"]))
w("ds-no-path", "datasets entry without path", S(datasets=[{"type": "alpaca"}]))
w("test-datasets", "test_datasets with val_set_size 0",
  S(val_set_size=0.0, test_datasets=[{"path": "my/eval", "type": "chat_template", "split": "test"}]))
w("test-datasets-and-val", "test_datasets together with val_set_size > 0",
  S(test_datasets=[{"path": "my/eval", "type": "chat_template", "split": "test"}]))
PRE = merge(SFT, {"datasets": DEL, "pretraining_dataset": [{"path": "HuggingFaceFW/fineweb-edu", "name": "sample-10BT", "type": "pretrain", "text_column": "text"}],
    "max_steps": 1000, "val_set_size": 0.0, "chat_template": DEL, "evals_per_epoch": DEL, "saves_per_epoch": DEL, "save_steps": 200})
w("pretrain-streaming", "streaming pretraining_dataset with max_steps", PRE)
w("pretrain-no-max-steps", "pretraining_dataset without max_steps", merge(PRE, {"max_steps": DEL}))
w("pretrain-val-set", "pretraining_dataset with val_set_size", merge(PRE, {"val_set_size": 0.05}))
w("pretrain-group-by-length", "pretraining with group_by_length", merge(PRE, {"group_by_length": True}))
w("pretrain-dict-form", "pretraining_dataset as a single mapping", merge(PRE, {"pretraining_dataset": PRE["pretraining_dataset"][0]}))
w("pretrain-str-form", "pretraining_dataset as a string path", merge(PRE, {"pretraining_dataset": "HuggingFaceFW/fineweb-edu"}))
w("streaming-sft", "streaming: true on SFT datasets with max_steps", S(streaming=True, max_steps=2000, val_set_size=0.0, evals_per_epoch=DEL))
w("streaming-sft-no-max", "streaming SFT without max_steps", S(streaming=True, val_set_size=0.0, evals_per_epoch=DEL))
w("streaming-multi-ds", "streaming with two datasets and packing", S(streaming=True, max_steps=2000, val_set_size=0.0, evals_per_epoch=DEL,
  datasets=[SFT["datasets"][0], {"path": "tatsu-lab/alpaca", "type": "alpaca"}]))
w("streaming-val", "streaming with val_set_size", S(streaming=True, max_steps=100))
w("skip-prepare", "skip_prepare_dataset with sample packing", S(skip_prepare_dataset=True))

# ---------------- deepspeed ----------------
w("ds-zero2-path", "deepspeed zero2 preset path", L(deepspeed="deepspeed_configs/zero2.json"))
w("ds-zero3-bf16-path", "deepspeed zero3_bf16 preset path, full fine-tune", S(deepspeed="deepspeed_configs/zero3_bf16.json"))
w("ds-zero3-cpuoffload", "zero3 cpu offload params preset with QLoRA", Q(deepspeed="deepspeed_configs/zero3_bf16_cpuoffload_params.json"))
w("ds-missing-file", "deepspeed path that does not exist", S(deepspeed="configs/my_ds.json"))
w("ds-inline-dict", "deepspeed as an inline dict (zero 2)", S(deepspeed={"zero_optimization": {"stage": 2, "overlap_comm": True, "contiguous_gradients": True},
  "bf16": {"enabled": "auto"}, "gradient_accumulation_steps": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_clipping": "auto"}))
w("ds-inline-zero3", "deepspeed inline zero3 with offload", S(deepspeed={"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"},
  "offload_optimizer": {"device": "cpu"}, "stage3_gather_16bit_weights_on_model_save": True}, "bf16": {"enabled": True}}))
w("ds-with-fsdp", "deepspeed together with fsdp_config", S(deepspeed="deepspeed_configs/zero2.json", fsdp_version=2,
  fsdp_config={"auto_wrap_policy": "TRANSFORMER_BASED_WRAP", "transformer_layer_cls_to_wrap": "LlamaDecoderLayer"}))
w("ds-tp2", "deepspeed zero2 with tensor_parallel_size 2", S(deepspeed="deepspeed_configs/zero2.json", tensor_parallel_size=2))
w("ds-inline-tp2", "inline deepspeed dict with tensor_parallel_size 2", S(deepspeed={"zero_optimization": {"stage": 1}}, tensor_parallel_size=2))
w("ds-deepcompile", "deepcompile with deepspeed zero3", S(deepspeed="deepspeed_configs/zero3_bf16.json", deepcompile=True))
w("ds-deepcompile-no-ds", "deepcompile without deepspeed", S(deepcompile=True))
w("ds-number", "deepspeed: 3 (a number)", S(deepspeed=3))
w("ds-empty-str", "deepspeed: '' (empty string)", S(deepspeed=""))
w("ds-8bit-adam", "deepspeed zero3 with adamw_bnb_8bit", S(deepspeed="deepspeed_configs/zero3_bf16.json", optimizer="adamw_bnb_8bit"))

# ---------------- FSDP ----------------
FS1 = {"fsdp": ["full_shard", "auto_wrap"], "fsdp_config": {"fsdp_limit_all_gathers": True, "fsdp_sync_module_states": True,
       "fsdp_offload_params": False, "fsdp_use_orig_params": False, "fsdp_cpu_ram_efficient_loading": True,
       "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP", "fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer",
       "fsdp_state_dict_type": "FULL_STATE_DICT", "fsdp_sharding_strategy": "FULL_SHARD"}}
FS2 = {"fsdp_version": 2, "fsdp_config": {"offload_params": False, "cpu_ram_efficient_loading": True, "auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
       "transformer_layer_cls_to_wrap": "LlamaDecoderLayer", "state_dict_type": "FULL_STATE_DICT", "reshard_after_forward": True}}
w("fsdp1-list", "FSDP1 with the fsdp: list form and fsdp_-prefixed keys", S(**FS1))
w("fsdp1-no-list", "FSDP1 prefixed keys without fsdp: list or version", S(fsdp_config=FS1["fsdp_config"]))
w("fsdp2-basic", "FSDP2 with unprefixed keys", S(**FS2))
w("fsdp2-in-config", "FSDP2 with fsdp_version inside fsdp_config", S(fsdp_config=dict(FS2["fsdp_config"], fsdp_version=2)))
w("fsdp2-prefixed", "fsdp_version 2 with fsdp_-prefixed keys", S(fsdp_version=2, fsdp_config=FS1["fsdp_config"]))
w("fsdp2-qlora", "FSDP2 with QLoRA", Q(**FS2))
w("fsdp2-qlora-dpo", "FSDP2 QLoRA DPO (quantized preference RL)", merge(D(**FS2), {"adapter": "qlora", "load_in_4bit": True}))
w("fsdp2-8bit-optim", "FSDP2 with adamw_8bit", S(optimizer="adamw_8bit", **FS2))
w("fsdp1-offload-8bit", "FSDP1 offload with paged_adamw_8bit", S(optimizer="paged_adamw_8bit", fsdp=["full_shard", "auto_wrap", "offload"], fsdp_config=dict(FS1["fsdp_config"], fsdp_offload_params=True)))
w("fsdp2-offload-pin", "FSDP2 offload with cpu_offload_pin_memory false", S(fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], offload_params=True, cpu_offload_pin_memory=False)))
w("fsdp2-pin-no-offload", "FSDP2 cpu_offload_pin_memory false without offload", S(fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], cpu_offload_pin_memory=False)))
w("fsdp-version-3", "fsdp_version 3", S(fsdp_version=3, fsdp_config=FS2["fsdp_config"]))
w("fsdp-version-str", "fsdp_version as string '2'", S(fsdp_version="2", fsdp_config=FS2["fsdp_config"]))
w("fsdp-bad-policy", "FSDP2 auto_wrap_policy with an invalid value", S(fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], auto_wrap_policy="LAYER_WRAP")))
w("fsdp-bad-state-dict", "FSDP2 state_dict_type LOCAL_STATE_DICT", S(fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], state_dict_type="LOCAL_STATE_DICT")))
w("fsdp-sharded-sd", "FSDP2 SHARDED_STATE_DICT with fsdp_final_state_dict_type", S(fsdp_version=2, fsdp_final_state_dict_type="FULL_STATE_DICT", fsdp_config=dict(FS2["fsdp_config"], state_dict_type="SHARDED_STATE_DICT")))
w("fsdp-list-str", "fsdp: 'full_shard auto_wrap' as a string", S(fsdp="full_shard auto_wrap", fsdp_config=FS1["fsdp_config"]))
w("fsdp-empty-config", "fsdp_version 2 with fsdp_config: {}", S(fsdp_version=2, fsdp_config={}))
w("fsdp-gc-activation-ckpt", "FSDP2 with activation_checkpointing in fsdp_config and gradient_checkpointing", S(fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], activation_checkpointing=True)))
w("fsdp-falcon", "FSDP on a falcon model", S(base_model="tiiuae/falcon-7b", special_tokens=DEL, chat_template="chatml", fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], transformer_layer_cls_to_wrap="FalconDecoderLayer")))
w("fsdp-relora", "ReLoRA under FSDP", L(relora=True, jagged_restart_steps=100, **FS2))
w("fsdp-hsdp", "HSDP: dp_shard_size 4 x dp_replicate_size 2", S(dp_shard_size=4, dp_replicate_size=2, **FS2))
w("fsdp-tp-cp", "FSDP2 + tensor_parallel_size 2 + context_parallel_size 2", S(tensor_parallel_size=2, context_parallel_size=2, micro_batch_size=1, **FS2))
w("fsdp-spectrum-no-orig", "Spectrum plugin under FSDP1 without use_orig_params", S(plugins=["axolotl.integrations.spectrum.SpectrumPlugin"],
  spectrum_top_fraction=0.5, spectrum_model_name="meta-llama/Llama-3.1-8B", **FS1))

# ---------------- parallel ----------------
w("tp2", "tensor_parallel_size 2 alone", S(tensor_parallel_size=2))
w("tp3", "tensor_parallel_size 3", S(tensor_parallel_size=3))
w("tp-str", "tensor_parallel_size as '2' string", S(tensor_parallel_size="2"))
w("cp2-packing-mbs2", "context_parallel_size 2 with packing and micro_batch_size 2", S(context_parallel_size=2))
w("cp2-mbs1", "context_parallel_size 2 with mbs 1", S(context_parallel_size=2, micro_batch_size=1))
w("cp2-no-flash", "context_parallel_size 2 with sdp_attention", S(context_parallel_size=2, micro_batch_size=1, flash_attention=False, sdp_attention=True))
w("spd-renamed", "deprecated sequence_parallel_degree 4", S(sequence_parallel_degree=4, micro_batch_size=1))
w("spd-and-cp", "sequence_parallel_degree and context_parallel_size both set", S(sequence_parallel_degree=2, context_parallel_size=2, micro_batch_size=1))
w("cp-ring-attn", "context parallel with ring_attn_func batch_ring", S(context_parallel_size=2, micro_batch_size=1, ring_attn_func="batch_ring", heads_k_stride=1))
w("cp-ring-attn-bad", "ring_attn_func with an invalid name", S(context_parallel_size=2, micro_batch_size=1, ring_attn_func="zigzag"))
w("cp-zero", "context_parallel_size 0", S(context_parallel_size=0))
w("dp-shard-neg", "dp_shard_size -1", S(dp_shard_size=-1, **FS2))
w("ep-plugin", "expert parallel plugin on a MoE model", S(base_model="Qwen/Qwen3-30B-A3B", special_tokens=DEL, chat_template="qwen3",
  plugins=["axolotl.integrations.expert_parallel.ExpertParallelPlugin"], expert_parallel_size=4, **FS2))
w("ep-size-zero", "expert_parallel_size 0", S(base_model="Qwen/Qwen3-30B-A3B", special_tokens=DEL, chat_template="qwen3",
  plugins=["axolotl.integrations.expert_parallel.ExpertParallelPlugin"], expert_parallel_size=0))

# ---------------- PEFT ----------------
w("dora", "DoRA via peft_use_dora", L(peft_use_dora=True))
w("rslora", "rsLoRA via peft_use_rslora", L(peft_use_rslora=True, lora_r=64, lora_alpha=16))
w("dora-qlora", "DoRA with QLoRA", Q(peft_use_dora=True))
w("lora-target-modules", "explicit lora_target_modules list without target_linear", L(lora_target_linear=DEL, lora_target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
w("lora-target-modules-str", "lora_target_modules as a regex string", L(lora_target_linear=DEL, lora_target_modules="model.layers.*.self_attn.(q|v)_proj"))
w("lora-no-targets", "adapter lora with no target modules at all", L(lora_target_linear=DEL))
w("lora-modules-to-save", "lora_modules_to_save embed_tokens/lm_head with new tokens",
  L(lora_modules_to_save=["embed_tokens", "lm_head"], tokens=["<|tool|>", "<|/tool|>"]))
w("lora-new-tokens-no-save", "new tokens with LoRA but no lora_modules_to_save", L(tokens=["<|tool|>"]))
w("lora-layers-to-transform", "peft_layers_to_transform and peft_layers_pattern", L(peft_layers_to_transform=[0, 1, 2, 3], peft_layers_pattern=["layers"]))
w("lora-layers-to-transform-int", "peft_layers_to_transform as an int", L(peft_layers_to_transform=5))
w("lora-r-zero", "lora_r 0", L(lora_r=0))
w("lora-r-str", "lora_r '16' as a string", L(lora_r="16"))
w("lora-dropout-big", "lora_dropout 1.5", L(lora_dropout=1.5))
w("lora-alpha-float", "lora_alpha 16.5 float", L(lora_alpha=16.5))
w("loraplus", "LoRA+ with loraplus_lr_ratio and loraplus_lr_embedding", L(loraplus_lr_ratio=16, loraplus_lr_embedding=1e-6))
w("relora", "ReLoRA with jagged_restart_steps", L(relora=True, jagged_restart_steps=150, jagged_restart_warmup_steps=10, jagged_restart_anneal_steps=10, relora_prune_ratio=0.9))
w("relora-no-steps", "relora true without jagged_restart_steps", L(relora=True))
w("relora-full-ft", "relora with no adapter", S(relora=True, jagged_restart_steps=100))
w("lora-model-dir", "lora_model_dir continuing an adapter", L(lora_model_dir="./outputs/prev-lora"))
w("peft-init-loftq", "LoftQ init via peft.loftq_config", L(peft={"loftq_config": {"loftq_bits": 4}}))
w("peft-init-weights-str", "peft_init_lora_weights pissa", L(peft_init_lora_weights="pissa"))
w("lora-8bit", "LoRA with load_in_8bit", L(load_in_8bit=True, optimizer="adamw_bnb_8bit"))
w("qlora-no-4bit", "adapter qlora without load_in_4bit", L(adapter="qlora"))
w("qlora-8bit", "adapter qlora with load_in_8bit", L(adapter="qlora", load_in_8bit=True))
w("lora-4bit-no-qlora", "adapter lora with load_in_4bit", L(load_in_4bit=True))
w("qlora-bnb-kwargs", "QLoRA with bnb_config_kwargs", Q(bnb_config_kwargs={"llm_int8_has_fp16_weight": False, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True}))
w("both-4-and-8bit", "load_in_4bit and load_in_8bit together", Q(load_in_8bit=True))
w("unfrozen-params", "full FT with unfrozen_parameters regexes", S(unfrozen_parameters=["^lm_head.weight$", "^model.embed_tokens.weight$", "model.layers.2[0-9]+.mlp.*"]))
w("unfrozen-with-lora", "unfrozen_parameters together with LoRA", L(unfrozen_parameters=["^lm_head.weight$"]))
w("unfrozen-str", "unfrozen_parameters as a single string", S(unfrozen_parameters="^lm_head.weight$"))
w("merge-lora-flag", "merge_lora true in a train config", L(merge_lora=True))
w("lora-kernels", "LoRA kernels explicitly on with dropout 0", L(lora_dropout=0.0, lora_mlp_kernel=True, lora_qkv_kernel=True, lora_o_kernel=True))
w("lora-kernels-dropout", "LoRA kernels with lora_dropout 0.1", L(lora_dropout=0.1, lora_mlp_kernel=True, lora_qkv_kernel=True, lora_o_kernel=True))
w("lora-target-params", "lora_target_parameters for MoE experts", L(base_model="openai/gpt-oss-20b", chat_template=DEL, special_tokens=DEL,
  lora_target_parameters=["mlp.experts.gate_up_proj", "mlp.experts.down_proj"]))

# ---------------- quantization ----------------
w("gptq", "GPTQ model with LoRA", L(base_model="TheBloke/Llama-2-7B-GPTQ", gptq=True, special_tokens=DEL, chat_template="llama2"))
w("gptq-revision", "GPTQ with revision_of_model", L(base_model="TheBloke/Llama-2-7B-GPTQ", gptq=True, revision_of_model="gptq-4bit-32g-actorder_True"))
w("gptq-4bit", "gptq with load_in_4bit", L(base_model="TheBloke/Llama-2-7B-GPTQ", gptq=True, load_in_4bit=True, adapter="qlora"))
w("fp8", "fp8 training with torchao and FSDP2 all-gather", S(fp8=True, fp8_enable_fsdp_float8_all_gather=True, torch_compile=True, **FS2))
w("fp8-no-compile", "fp8 without torch_compile", S(fp8=True))
w("fp8-allgather-no-fsdp", "fp8 float8 all-gather without FSDP", S(fp8=True, fp8_enable_fsdp_float8_all_gather=True))
w("qat", "QAT int4 weight / int8 activations", S(qat={"weight_dtype": "int4", "activation_dtype": "int8", "group_size": 32, "fake_quant_after_n_steps": 100}))
w("qat-bad-dtype", "QAT with weight_dtype int3", S(qat={"weight_dtype": "int3"}))
w("qat-and-lora", "QAT with a LoRA adapter", L(qat={"weight_dtype": "int4", "group_size": 32}))
w("ptq", "post-training quantization block", S(quantization={"weight_dtype": "int8", "group_size": 128}))
w("model-quant-config", "model_quantization_config Mxfp4Config with 4-bit", Q(base_model="openai/gpt-oss-20b", model_quantization_config="Mxfp4Config"))
w("torchao-optim", "torchao 4-bit AdamW optimizer", S(optimizer="adamw_torch_4bit"))

# ---------------- multimodal ----------------
MM = merge(LORA, {"base_model": "Qwen/Qwen2.5-VL-7B-Instruct", "processor_type": "AutoProcessor", "chat_template": "qwen2_vl",
    "skip_prepare_dataset": True, "remove_unused_columns": False, "sample_packing": False, "special_tokens": DEL,
    "datasets": [{"path": "HuggingFaceH4/llava-instruct-mix-vsft", "type": "chat_template", "split": "train[:1%]"}],
    "lora_target_modules": "model.language_model.layers.[\\d]+.(mlp|cross_attn|self_attn).(up|down|gate|q|k|v|o)_proj", "lora_target_linear": DEL})
w("mm-qwen-vl", "Qwen2.5-VL LoRA with AutoProcessor", MM)
w("mm-image-size", "multimodal with image_size int and resize algorithm", merge(MM, {"image_size": 512, "image_resize_algorithm": "bilinear"}))
w("mm-image-size-tuple", "image_size as [w, h]", merge(MM, {"image_size": [448, 448]}))
w("mm-bad-resize", "image_resize_algorithm with an unknown value", merge(MM, {"image_size": 512, "image_resize_algorithm": "bicubicx"}))
w("mm-packing", "multimodal with sample_packing true", merge(MM, {"sample_packing": True}))
w("mm-no-skip-prepare", "multimodal without skip_prepare_dataset", merge(MM, {"skip_prepare_dataset": DEL}))
w("mm-remove-unused-true", "multimodal with remove_unused_columns true", merge(MM, {"remove_unused_columns": True}))

# ---------------- eval / save / scheduler ----------------
w("eval-steps-and-per-epoch", "eval_steps and evals_per_epoch both set", S(eval_steps=100))
w("save-steps-and-per-epoch", "save_steps and saves_per_epoch both set", S(save_steps=100))
w("eval-strategy-no-steps", "eval_strategy steps without eval_steps", S(eval_strategy="steps", evals_per_epoch=DEL))
w("eval-strategy-no", "eval_strategy no with evals_per_epoch", S(eval_strategy="no"))
w("eval-strategy-epoch", "eval_strategy epoch with eval_steps", S(eval_strategy="epoch", eval_steps=50, evals_per_epoch=DEL))
w("save-strategy-best", "save_strategy best with metric_for_best_model", S(save_strategy="best", metric_for_best_model="eval_loss", saves_per_epoch=DEL))
w("save-strategy-bad", "save_strategy sometimes", S(save_strategy="sometimes", saves_per_epoch=DEL))
w("load-best-no-eval", "load_best_model_at_end with val_set_size 0", S(load_best_model_at_end=True, val_set_size=0.0))
w("early-stopping", "early_stopping_patience with eval/save steps that don't divide", S(early_stopping_patience=3, eval_steps=30, save_steps=50, evals_per_epoch=DEL, saves_per_epoch=DEL))
w("eval-sample-packing-tiny-val", "eval_sample_packing with a tiny val set", S(eval_sample_packing=True, val_set_size=0.001))
w("eval-sample-packing-false", "sample packing with eval_sample_packing false", S(eval_sample_packing=False))
w("eval-batch-size", "eval_batch_size larger than micro batch", S(eval_batch_size=16))
w("eval-causal-lm", "do_causal_lm_eval with metrics", S(do_causal_lm_eval=True, eval_causal_lm_metrics=["sacrebleu", "comet"]))
w("eval-causal-lm-bad-metric", "eval_causal_lm_metrics with an unknown metric", S(do_causal_lm_eval=True, eval_causal_lm_metrics=["rouge"]))
w("warmup-both", "warmup_steps and warmup_ratio both set", S(warmup_steps=100))
w("warmup-ratio-big", "warmup_ratio 1.5", S(warmup_ratio=1.5))
w("warmup-neg", "warmup_steps -10", S(warmup_ratio=DEL, warmup_steps=-10))
w("sched-one-cycle", "one_cycle scheduler with lr_div_factor", S(lr_scheduler="one_cycle", lr_div_factor=25))
w("sched-rex", "rex scheduler", S(lr_scheduler="rex"))
w("sched-cosine-min", "cosine_min_lr_ratio with constant ratio", S(cosine_min_lr_ratio=0.1, cosine_constant_lr_ratio=0.2))
w("sched-cosine-min-not-cosine", "cosine_min_lr_ratio with linear scheduler", S(lr_scheduler="linear", cosine_min_lr_ratio=0.1))
w("sched-wsd-kwargs", "warmup_stable_decay with lr_scheduler_kwargs", S(lr_scheduler="warmup_stable_decay", lr_scheduler_kwargs={"num_decay_steps": 100}))
w("sched-bad", "lr_scheduler cosine_annealing (not a SchedulerType)", S(lr_scheduler="cosine_annealing"))
w("lr-str", "learning_rate as the string '2e-5'", S(learning_rate="2e-5"))
w("lr-str-garbage", "learning_rate as 'fast'", S(learning_rate="fast"))
w("lr-groups", "lr_groups for embeddings", S(lr_groups=[{"name": "emb", "modules": ["embed_tokens"], "lr": 1e-5}]))
w("embedding-lr", "embedding_lr_scale and embedding_lr together", S(embedding_lr_scale=0.5, embedding_lr=1e-6))
w("max-steps", "max_steps with num_epochs", S(max_steps=300))
w("num-epochs-float", "num_epochs 0.5", S(num_epochs=0.5))
w("num-epochs-zero", "num_epochs 0", S(num_epochs=0))
w("num-epochs-str", "num_epochs '3'", S(num_epochs="3"))
w("mbs-zero", "micro_batch_size 0", S(micro_batch_size=0))
w("mbs-null", "micro_batch_size null", S(micro_batch_size=None))
w("gas-and-batch-size", "batch_size together with gradient_accumulation_steps", S(batch_size=32))
w("gas-neg", "gradient_accumulation_steps -1", S(gradient_accumulation_steps=-1))
w("seq-len-huge", "sequence_len 1048576", S(sequence_len=1048576, micro_batch_size=1))
w("seq-len-str", "sequence_len '4096'", S(sequence_len="4096"))
w("max-grad-norm-zero", "max_grad_norm 0", S(max_grad_norm=0))
w("weight-decay-neg", "weight_decay -0.1", S(weight_decay=-0.1))
w("optimizer-unknown", "optimizer adafactorx", S(optimizer="adafactorx"))
w("optimizer-muon", "muon optimizer", S(optimizer="muon"))
w("optimizer-galore", "galore optimizer with optim_target_modules", S(optimizer="galore_adamw", optim_target_modules=["attn", "mlp"], optim_args={"rank": 128}))
w("optimizer-galore-no-targets", "galore optimizer without optim_target_modules", S(optimizer="galore_adamw"))
w("optim-args-str", "optim_args as a string", S(optim_args="betas=(0.9,0.95)"))
w("neftune", "neftune_noise_alpha 5", S(neftune_noise_alpha=5))
w("neftune-zero", "neftune_noise_alpha 0", S(neftune_noise_alpha=0))
w("noisy-embedding-deprecated", "deprecated noisy_embedding_alpha", S(noisy_embedding_alpha=5))

# ---------------- tokens ----------------
w("special-tokens-full", "special_tokens with bos/eos/pad/unk", S(special_tokens={"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}))
w("special-tokens-list", "special_tokens as a list", S(special_tokens=["<pad>"]))
w("special-tokens-unknown", "special_tokens with an unknown sub-key", S(special_tokens={"pad_token": "<pad>", "sep_token": "<sep>"}))
w("added-tokens-overrides", "added_tokens_overrides mapping ids to strings", S(added_tokens_overrides={128011: "<|think|>", 128012: "<|/think|>"}))
w("added-tokens-overrides-str-key", "added_tokens_overrides with string keys", S(added_tokens_overrides={"128011": "<|think|>"}))
w("tokens-str", "tokens as a single string", S(tokens="<|tool|>"))
w("eot-tokens", "eot_tokens with train_on_eot", S(eot_tokens=["<|eot_id|>"], datasets=[merge(SFT["datasets"][0], {"train_on_eot": "turn"})]))
w("tokenizer-mistral-common", "tokenizer_use_mistral_common on a Mistral model", S(base_model="mistralai/Mistral-Small-3.1-24B-Instruct-2503", tokenizer_use_mistral_common=True, chat_template=DEL, special_tokens=DEL))
w("tokenizer-type", "tokenizer_type and tokenizer_config", S(tokenizer_type="AutoTokenizer", tokenizer_config="meta-llama/Llama-3.1-8B-Instruct", tokenizer_use_fast=True))

# ---------------- plugins ----------------
LIG = ["axolotl.integrations.liger.LigerPlugin"]
CCE = ["axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin"]
w("liger", "Liger plugin with rope, rms_norm, glu, flce", S(plugins=LIG, liger_rope=True, liger_rms_norm=True, liger_glu_activation=True, liger_fused_linear_cross_entropy=True))
w("liger-and-cce", "Liger FLCE together with CCE", S(plugins=LIG + CCE, liger_fused_linear_cross_entropy=True, cut_cross_entropy=True))
w("liger-swiglu", "deprecated liger_swiglu", S(plugins=LIG, liger_swiglu=True))
w("liger-no-plugin", "liger_* keys without the plugin", S(liger_rope=True, liger_fused_linear_cross_entropy=True))
w("liger-tp-rmsnorm", "Liger rms_norm with tensor_parallel_size 2", S(plugins=LIG, liger_rms_norm=True, tensor_parallel_size=2))
w("liger-ce-and-flce", "liger_cross_entropy and liger_fused_linear_cross_entropy together", S(plugins=LIG, liger_cross_entropy=True, liger_fused_linear_cross_entropy=True))
w("cce-fp32", "CCE with fp32 training (bf16 false)", S(plugins=CCE, cut_cross_entropy=True, bf16=False, fp16=False))
w("cce-chunked", "CCE with chunked_cross_entropy", S(plugins=CCE, cut_cross_entropy=True, chunked_cross_entropy=True))
w("cce-no-plugin", "cut_cross_entropy without the plugin", S(cut_cross_entropy=True))
w("plugin-no-dot", "plugins entry without a dot", S(plugins=["LigerPlugin"]))
w("plugin-unknown-module", "plugins entry for a module that doesn't exist", S(plugins=["my_company.plugins.FancyPlugin"]))
w("plugin-str", "plugins as a string", S(plugins="axolotl.integrations.liger.LigerPlugin", liger_rope=True))
w("spectrum", "Spectrum plugin", S(plugins=["axolotl.integrations.spectrum.SpectrumPlugin"], spectrum_top_fraction=0.5, spectrum_model_name="meta-llama/Llama-3.1-8B"))
w("kernels-plugin", "kernels plugin with scattermoe on a MoE", S(base_model="Qwen/Qwen3-30B-A3B", chat_template="qwen3", special_tokens=DEL,
  plugins=["axolotl.integrations.kernels.KernelsPlugin"], use_scattermoe=True))
w("grokfast", "grokfast plugin", S(plugins=["axolotl.integrations.grokfast.GrokfastPlugin"], grokfast_alpha=0.98, grokfast_lamb=2.0))
w("lm-eval-plugin", "lm_eval plugin with tasks", S(plugins=["axolotl.integrations.lm_eval.LMEvalPlugin"], lm_eval_tasks=["gsm8k", "hellaswag"], lm_eval_batch_size=8))
w("swanlab-no-project", "swanlab plugin enabled without a project", S(plugins=["axolotl.integrations.swanlab.SwanLabPlugin"], use_swanlab=True))

# ---------------- misc / ray / attention / types ----------------
w("ray", "use_ray with ray_num_workers 4", S(use_ray=True, ray_num_workers=4, resources_per_worker={"GPU": 1}))
w("ray-fsdp", "ray with FSDP2", S(use_ray=True, ray_num_workers=8, **FS2))
w("ray-str-true", "use_ray 'true' as a string", S(use_ray="true", ray_num_workers=2))
w("sdpa-and-flash", "flash_attention and sdp_attention both true", S(sdp_attention=True))
w("attn-impl", "attn_implementation flash_attention_2 without flash_attention", S(flash_attention=DEL, attn_implementation="flash_attention_2"))
w("attn-impl-bad", "attn_implementation 'fast'", S(flash_attention=DEL, attn_implementation="fast"))
w("xformers-packing", "xformers_attention with sample packing", S(flash_attention=False, xformers_attention=True))
w("no-attn-packing", "sample packing with no flash/sdpa attention", S(flash_attention=False))
w("flex-attn", "flex_attention with torch_compile", S(flash_attention=False, flex_attention=True, torch_compile=True))
w("s2-attention", "s2_attention with flash", S(s2_attention=True))
w("fp16-and-bf16", "fp16 true together with bf16 true", S(bf16=True, fp16=True))
w("bf16-full", "bf16: full", S(bf16="full"))
w("bf16-str-true", "bf16 'true' as a string", S(bf16="true"))
w("tf32-auto", "tf32 auto", S(tf32="auto"))
w("float16-deprecated", "float16: true (deprecated dtype key)", S(bf16=DEL, float16=True))
w("gc-offload", "gradient_checkpointing: offload", S(gradient_checkpointing="offload"))
w("gc-offload-disk", "gradient_checkpointing: offload_disk", S(gradient_checkpointing="offload_disk"))
w("activation-offloading-no-gc", "activation_offloading without gradient_checkpointing", S(gradient_checkpointing=False, activation_offloading=True))
w("gc-kwargs-reentrant", "gradient_checkpointing_kwargs use_reentrant true", S(gradient_checkpointing_kwargs={"use_reentrant": True}))
w("gc-unfrozen-reentrant", "reentrant gradient checkpointing with unfrozen_parameters", S(gradient_checkpointing_kwargs={"use_reentrant": True}, unfrozen_parameters=["^lm_head.weight$"]))
w("torch-compile-str", "torch_compile 'auto'", S(torch_compile="auto"))
w("torch-compile-mode-bad", "torch_compile_mode 'turbo'", S(torch_compile=True, torch_compile_mode="turbo"))
w("unknown-keys", "several unknown keys (typos)", S(learnig_rate=1e-4, micro_batchsize=4, epochs=3))
w("removed-keys", "removed/renamed keys: max_packed_sequence_len and evaluation_strategy", S(max_packed_sequence_len=2048, evaluation_strategy="steps"))
w("gpu-memory-limit-and-max-memory", "gpu_memory_limit with max_memory", S(gpu_memory_limit="20GiB", max_memory={0: "20GiB"}))
w("device-map-auto-ddp", "device_map auto", S(device_map="auto"))
w("base-model-missing", "no base_model", S(base_model=DEL))
w("base-model-null", "base_model null", S(base_model=None))
w("base-model-int", "base_model as a number", S(base_model=7))
w("output-dir-missing", "no output_dir", S(output_dir=DEL))
w("trust-remote-str", "trust_remote_code 'yes'", S(trust_remote_code="yes"))
w("val-set-size-1", "val_set_size 1.0", S(val_set_size=1.0))
w("val-set-size-int", "val_set_size 500 (absolute count)", S(val_set_size=500))
w("val-set-size-neg", "val_set_size -0.1", S(val_set_size=-0.1))
w("sample-packing-str", "sample_packing 'yes'", S(sample_packing="yes"))
w("pad-to-seq-len-no-pack", "pad_to_sequence_len without packing", S(sample_packing=False, pad_to_sequence_len=True))
w("batch-flattening", "batch_flattening with flash attention, no packing", S(sample_packing=False, batch_flattening=True, micro_batch_size=4))
w("batch-flattening-packing", "batch_flattening with sample packing", S(batch_flattening=True))
w("mixed-everything-null", "many optional keys explicitly null", S(warmup_ratio=None, weight_decay=None, lr_scheduler=None, optimizer=None, logging_steps=None, gradient_checkpointing=None))
w("wandb", "wandb settings with log model", S(wandb_project="proj", wandb_entity="me", wandb_log_model="checkpoint", wandb_watch="gradients", wandb_name="run1"))
w("wandb-log-model-bad", "wandb_log_model 'yes'", S(wandb_project="proj", wandb_log_model="yes"))
w("hub-strategy", "push to hub with hub_strategy every_save", S(hub_model_id="me/model", hub_strategy="every_save"))
w("hub-strategy-bad", "hub_strategy 'sometimes'", S(hub_model_id="me/model", hub_strategy="sometimes"))
w("dataset-processes", "dataset_processes deprecated for dataset_num_proc", S(dataset_processes=8))
w("rope-scaling", "rope_scaling linear factor", S(rope_scaling={"type": "linear", "factor": 2.0}))
w("overrides-model-config", "overrides_of_model_config rope_theta", S(overrides_of_model_config={"rope_theta": 1000000.0, "max_position_embeddings": 32768}))
w("mem-mismatch", "gpu_memory_limit with max_memory mismatch", S(max_memory={"0": "70GiB"}))
w("lisa", "LISA layer switching", S(lisa_n_layers=4, lisa_step_interval=20, lisa_layers_attribute="model.layers"))
w("dynamic-ckpt", "dynamic_checkpoint config", S(dynamic_checkpoint={"enabled": True}))
w("selective-ckpt", "selective_checkpointing with non-reentrant gc", S(selective_checkpointing={}, gradient_checkpointing_kwargs={"use_reentrant": False}))
w("tiled-mlp", "tiled_mlp with num shards", S(tiled_mlp=True, tiled_mlp_num_shards=4))
w("yaml-dup-keys", "a duplicated key (last one wins)", None, raw=yaml.safe_dump(SFT, sort_keys=False) + "micro_batch_size: 8\n")

# ================= batch 2: types, edge values, combos =================
SFT2 = merge(SFT, {"base_model": "mistralai/Mistral-7B-v0.3", "chat_template": "chatml",
    "datasets": [{"path": "teknium/OpenHermes-2.5", "type": "chat_template", "field_messages": "conversations",
                  "message_property_mappings": {"role": "from", "content": "value"}}],
    "special_tokens": {"eos_token": "<|im_end|>"}, "tokens": ["<|im_start|>"], "sequence_len": 4096,
    "micro_batch_size": 1, "gradient_accumulation_steps": 8, "num_epochs": 2, "learning_rate": 1e-5})
T = lambda **k: merge(SFT2, k)
L2 = merge(SFT2, {"adapter": "lora", "lora_r": 32, "lora_alpha": 64, "lora_dropout": 0.0,
                  "lora_target_linear": True, "lora_modules_to_save": ["embed_tokens", "lm_head"], "learning_rate": 1e-4})
M = lambda **k: merge(L2, k)
w("t-mbs-float-frac", "micro_batch_size 1.5 (fractional float for an int)", T(micro_batch_size=1.5))
w("t-mbs-float-whole", "micro_batch_size 2.0 (whole float for an int)", T(micro_batch_size=2.0))
w("t-seq-len-float", "sequence_len 4096.0", T(sequence_len=4096.0))
w("t-gas-auto", "gradient_accumulation_steps 'auto'", T(gradient_accumulation_steps="auto"))
w("t-lr-zero", "learning_rate 0", T(learning_rate=0))
w("t-lr-neg", "learning_rate -1e-5", T(learning_rate=-1e-5))
w("t-lora-r-float", "lora_r 8.0", M(lora_r=8.0))
w("t-bf16-int1", "bf16: 1", T(bf16=1))
w("t-bf16-int2", "bf16: 2", T(bf16=2))
w("t-num-epochs-neg", "num_epochs -1", T(num_epochs=-1))
w("t-max-steps-zero", "max_steps 0", T(max_steps=0))
w("t-max-steps-neg", "max_steps -1", T(max_steps=-1))
w("t-val-set-str", "val_set_size '0.05'", T(val_set_size="0.05"))
w("t-seed-str", "seed '42'", T(seed="42"))
w("t-special-null", "special_tokens: null", T(special_tokens=None))
w("t-tokens-empty", "tokens: []", T(tokens=[]))
w("t-plugins-empty", "plugins: []", T(plugins=[]))
w("t-ds-split-int", "datasets split: 0", T(datasets=[merge(SFT2["datasets"][0], {"split": 0})]))
w("t-ds-data-files-int", "datasets data_files: 3", T(datasets=[merge(SFT2["datasets"][0], {"data_files": 3})]))
w("t-prepared-path-int", "dataset_prepared_path: 123", T(dataset_prepared_path=123))
w("t-packing-null", "sample_packing: null", T(sample_packing=None))
w("t-ds-empty-dict", "deepspeed: {} (empty mapping)", T(deepspeed={}))
w("t-fsdp-config-list", "fsdp_config as a list", T(fsdp_version=2, fsdp_config=["offload_params"]))
w("t-fsdp-empty-list", "fsdp: [] with fsdp_config", T(fsdp=[], fsdp_config=FS1["fsdp_config"]))
w("t-fsdp-full-shard-only", "fsdp: [full_shard] without auto_wrap", T(fsdp=["full_shard"], fsdp_config=FS1["fsdp_config"]))
w("t-fsdp-list-v2", "fsdp list form with fsdp_version 2", T(fsdp=["full_shard", "auto_wrap"], fsdp_version=2, fsdp_config=FS2["fsdp_config"]))
w("t-fsdp-bad-token", "fsdp list with an unknown option", T(fsdp=["full_shard", "auto_wrap", "turbo"], fsdp_config=FS1["fsdp_config"]))
w("t-fsdp-v1-explicit", "fsdp_version 1 explicit with prefixed keys", T(fsdp_version=1, fsdp_config=FS1["fsdp_config"]))
w("t-fsdp-reshard-str", "fsdp_config reshard_after_forward 'yes'", T(fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], reshard_after_forward="yes")))
w("t-fsdp-hybrid-v2", "FSDP2 with sharding_strategy HYBRID_SHARD", T(fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], sharding_strategy="HYBRID_SHARD")))
w("t-fsdp-wrap-list", "transformer_layer_cls_to_wrap as a list", T(fsdp_version=2, fsdp_config=dict(FS2["fsdp_config"], transformer_layer_cls_to_wrap=["MistralDecoderLayer"])))
w("t-fsdp-mixed-prefix", "fsdp_config mixing prefixed and unprefixed keys", T(fsdp_version=2, fsdp_config={"fsdp_offload_params": True, "offload_params": False, "auto_wrap_policy": "TRANSFORMER_BASED_WRAP", "fsdp_transformer_layer_cls_to_wrap": "MistralDecoderLayer"}))
w("t-fsdp2-8bit-load", "FSDP2 with load_in_8bit LoRA", M(load_in_8bit=True, **FS2))
w("t-fsdp2-lora-kernels", "FSDP2 with LoRA kernels", M(lora_mlp_kernel=True, lora_qkv_kernel=True, lora_o_kernel=True, **FS2))
w("t-fsdp2-compile", "FSDP2 with torch_compile", T(torch_compile=True, **FS2))
w("t-fsdp2-act-offload", "FSDP2 with activation_offloading", T(activation_offloading=True, **FS2))
w("t-fsdp2-tp-qlora", "FSDP2 + tensor parallel + QLoRA", merge(M(**FS2), {"adapter": "qlora", "load_in_4bit": True, "tensor_parallel_size": 2}))
w("t-tp-lora", "tensor_parallel_size 2 with LoRA and no FSDP", M(tensor_parallel_size=2))
w("t-tp-4bit", "tensor_parallel_size 2 with load_in_4bit", merge(M(tensor_parallel_size=2), {"adapter": "qlora", "load_in_4bit": True}))
w("t-dp-shard-no-fsdp", "dp_shard_size 8 without FSDP", T(dp_shard_size=8))
w("t-dp-replicate-alone", "dp_replicate_size 2 alone", T(dp_replicate_size=2))
w("t-ep-no-plugin", "expert_parallel_size without the plugin", T(expert_parallel_size=2))
w("t-zero3-4bit", "deepspeed zero3 with QLoRA", merge(M(deepspeed="deepspeed_configs/zero3_bf16.json"), {"adapter": "qlora", "load_in_4bit": True}))
w("t-zero3-8bit", "deepspeed zero3 with load_in_8bit", M(deepspeed="deepspeed_configs/zero3_bf16.json", load_in_8bit=True))
w("t-zero1", "deepspeed zero1 preset", T(deepspeed="deepspeed_configs/zero1.json"))
w("t-ds-inline-no-zero-tp", "inline deepspeed without zero_optimization, tensor_parallel_size 2", T(deepspeed={"bf16": {"enabled": True}}, tensor_parallel_size=2))
w("t-ds-inline-str-stage", "inline deepspeed with stage '3' as a string", T(deepspeed={"zero_optimization": {"stage": "3"}}))
w("t-ds-ddp-unused", "deepspeed with ddp_find_unused_parameters", T(deepspeed="deepspeed_configs/zero2.json", ddp_find_unused_parameters=True))
w("t-relora-qlora", "ReLoRA with QLoRA", merge(M(relora=True, jagged_restart_steps=100), {"adapter": "qlora", "load_in_4bit": True}))
w("t-lora-on-cpu", "lora_on_cpu with lora_model_dir", M(lora_on_cpu=True, lora_model_dir="./prev"))
w("t-dora-8bit", "DoRA with load_in_8bit", M(peft_use_dora=True, load_in_8bit=True))
w("t-dora-kernels", "DoRA with LoRA kernels", M(peft_use_dora=True, lora_mlp_kernel=True, lora_qkv_kernel=True, lora_o_kernel=True))
w("t-trainable-token-idx", "peft_trainable_token_indices", M(peft_trainable_token_indices=[32000, 32001], lora_modules_to_save=DEL))
w("t-layer-replication", "peft_layer_replication", M(peft_layer_replication=[[0, 16], [8, 24], [16, 32]]))
w("t-alpha-pattern", "lora_alpha_pattern and lora_rank_pattern", M(lora_alpha_pattern={"q_proj": 32}, lora_rank_pattern={"q_proj": 16}))
w("t-target-both", "lora_target_linear with lora_target_modules", M(lora_target_modules=["q_proj", "v_proj"]))
w("t-modules-save-no-adapter", "lora_modules_to_save without adapter", T(lora_modules_to_save=["lm_head"]))
w("t-adapter-case", "adapter 'LoRA' (case)", M(adapter="LoRA"))
w("t-adapter-ia3", "adapter ia3", M(adapter="ia3"))
w("t-adapter-empty", "adapter '' (empty string)", M(adapter=""))
w("t-4bit-no-adapter", "load_in_4bit without an adapter (full FT)", T(load_in_4bit=True))
w("t-gptq-8bit", "gptq with load_in_8bit", M(gptq=True, load_in_8bit=True))
w("t-eager-packing", "eager_attention with sample packing", T(flash_attention=False, eager_attention=True))
w("t-attn-impl-sdpa-flash", "attn_implementation sdpa with flash_attention true", T(attn_implementation="sdpa"))
w("t-attn-impl-flex-packing", "attn_implementation flex_attention with packing", T(flash_attention=DEL, attn_implementation="flex_attention"))
w("t-compile-backend", "torch_compile with backend inductor and mode max-autotune", T(torch_compile=True, torch_compile_backend="inductor", torch_compile_mode="max-autotune"))
w("t-const-warmup", "constant_with_warmup with warmup_steps", T(lr_scheduler="constant_with_warmup", warmup_ratio=DEL, warmup_steps=50))
w("t-quad-warmup", "lr_quadratic_warmup", T(lr_quadratic_warmup=True))
w("t-cosine-min-big", "cosine_min_lr_ratio 1.5", T(cosine_min_lr_ratio=1.5))
w("t-schedule-free", "schedule_free_adamw with cosine scheduler", T(optimizer="schedule_free_adamw", lr_scheduler="cosine"))
w("t-schedule-free-const", "schedule_free_adamw with constant scheduler", T(optimizer="schedule_free_adamw", lr_scheduler="constant"))
w("t-lomo-ds", "lomo optimizer with deepspeed", T(optimizer="lomo", deepspeed="deepspeed_configs/zero2.json"))
w("t-adalomo", "adalomo optimizer", T(optimizer="adalomo"))
w("t-ao-fp8", "ao_adamw_fp8 optimizer", T(optimizer="ao_adamw_fp8"))
w("t-dion", "dion optimizer with dion_lr", T(optimizer="dion", dion_lr=0.01, dion_momentum=0.95))
w("t-came-beta3", "adam_beta3 with came_pytorch", T(optimizer="came_pytorch", adam_beta3=0.9999, adam_epsilon2=1e-16))
w("t-beta3-adamw", "adam_beta3 with adamw", T(adam_beta3=0.9999))
w("t-qat-fp8", "QAT with fp8 together", T(qat={"weight_dtype": "int4", "group_size": 32}, fp8=True))
w("t-fp8-qlora", "fp8 with QLoRA", merge(M(fp8=True), {"adapter": "qlora", "load_in_4bit": True}))
w("t-use-kernels", "use_kernels true", T(use_kernels=True))
w("t-sdpa-varlen", "sdpa_varlen with sdp attention", T(flash_attention=False, sdp_attention=True, sdpa_varlen=True))
w("t-bin-size-zero", "sample_packing_bin_size 0", T(sample_packing_bin_size=0))
w("t-pretrain-and-datasets", "pretraining_dataset and datasets both set", T(pretraining_dataset=[{"path": "allenai/c4", "name": "en", "type": "pretrain"}], max_steps=100))
w("t-pretrain-packing-no-attn", "pretraining with pretrain_multipack_attn false", merge(PRE, {"pretrain_multipack_attn": False}))
w("t-sharegpt-removed", "removed sharegpt dataset type", T(datasets=[{"path": "my/sg", "type": "sharegpt", "conversation": "chatml"}]))
w("t-sharegpt-chat", "removed sharegpt:chat type", T(datasets=[{"path": "my/sg", "type": "sharegpt:chat"}]))
w("t-alpaca-chat-qa", "alpaca_chat.load_qa type", T(datasets=[{"path": "my/qa", "type": "alpaca_chat.load_qa"}]))
w("t-field-messages-alpaca", "field_messages on an alpaca dataset", T(datasets=[{"path": "my/qa", "type": "alpaca", "field_messages": "messages"}]))
w("t-msg-field-role-deprecated", "deprecated message_field_role/content", T(datasets=[{"path": "my/chat", "type": "chat_template", "field_messages": "conversations", "message_field_role": "from", "message_field_content": "value"}]))
w("t-msg-field-both", "message_field_role and message_property_mappings both", T(datasets=[merge(SFT2["datasets"][0], {"message_field_role": "speaker"})]))
w("t-chat-template-kwargs", "chat_template_kwargs enable_thinking", T(base_model="Qwen/Qwen3-8B", chat_template="qwen3", chat_template_kwargs={"enable_thinking": False}))
w("t-ds-name-int", "datasets name: 2024", T(datasets=[merge(SFT2["datasets"][0], {"name": 2024})]))
w("t-shuffle-str-no", "shuffle_merged_datasets 'no'", T(shuffle_merged_datasets="no"))
w("t-dedup-streaming", "dataset_exact_deduplication with streaming", T(dataset_exact_deduplication=True, streaming=True, max_steps=100, val_set_size=0.0, evals_per_epoch=DEL))
w("t-resume-both", "resume_from_checkpoint with auto_resume", T(resume_from_checkpoint="./outputs/out/checkpoint-100", auto_resume_from_checkpoints=True))
w("t-save-limit-zero", "save_total_limit 0", T(save_total_limit=0))
w("t-save-only-load-best", "save_only_model with load_best_model_at_end", T(save_only_model=True, load_best_model_at_end=True))
w("t-no-safetensors", "save_safetensors false", T(save_safetensors=False))
w("t-group-by-length-packing", "group_by_length with sample packing", T(group_by_length=True))
w("t-curriculum-packing", "curriculum_sampling with sample packing", T(curriculum_sampling=True))
w("t-gc-unsloth", "gradient_checkpointing 'unsloth'", T(gradient_checkpointing="unsloth"))
w("t-unsloth-removed", "removed unsloth_lora_mlp key", M(unsloth_lora_mlp=True))
w("t-wandb-offline", "use_wandb with wandb_mode offline", T(use_wandb=True, wandb_mode="offline", wandb_project="p"))
w("t-wandb-mode-bad", "wandb_mode 'local'", T(wandb_mode="local", wandb_project="p"))
w("t-comet-bad-mode", "comet_mode 'sometimes'", T(use_comet=True, comet_mode="sometimes"))
w("t-mlflow", "mlflow settings", T(use_mlflow=True, mlflow_tracking_uri="http://localhost:5000", mlflow_experiment_name="x", hf_mlflow_log_artifacts=True))
w("t-is-llama-derived", "deprecated is_llama_derived_model", T(is_llama_derived_model=True))
w("t-model-type-key", "model_type and tokenizer_type keys (old style)", T(model_type="MistralForCausalLM", tokenizer_type="LlamaTokenizer"))
w("t-cp-dpo", "context_parallel_size 2 with DPO", D(context_parallel_size=2, micro_batch_size=1))
w("t-dpo-liger", "dpo_use_liger_kernel with the Liger plugin", D(dpo_use_liger_kernel=True, plugins=LIG))
w("t-orpo-alpha-str", "orpo_alpha '0.1' string", D(rl="orpo", orpo_alpha="0.1"))
w("t-rl-beta-neg", "rl_beta -1", D(rl_beta=-1))
w("t-trl-beta-str", "trl beta '0.1' string", D(trl={"beta": "0.1"}))
w("t-vllm-port-str", "vllm port '8000' string", G(vllm=dict(GRPO["vllm"], port="8000")))
w("t-vllm-gpu-util-big", "vllm gpu_memory_utilization 1.5", G(vllm=dict(GRPO["vllm"], gpu_memory_utilization=1.5)))
w("t-grpo-one-gen", "GRPO num_generations 1", G(trl={"num_generations": 1}))
w("t-grpo-colocate-tp2", "GRPO colocate with vllm tensor_parallel_size 2", G(trl={"vllm_mode": "colocate"}, vllm=dict(GRPO["vllm"], tensor_parallel_size=2)))
w("t-grpo-no-trl", "rl: grpo without a trl block", merge(GRPO, {"trl": DEL}))
w("t-grpo-liger-loss-cp", "GRPO use_liger_loss with context parallel", G(trl={"use_liger_loss": True}, context_parallel_size=2))
w("t-rl-gdpo", "rl: gdpo", D(rl="gdpo"))
w("t-rl-ebft", "rl: ebft with an ebft block", D(rl="ebft", ebft={"mode": "strided"}))
w("t-rm-and-dpo", "reward_model with rl: dpo", D(reward_model=True))
w("t-prm-packing", "process reward model with sample packing", merge(PRM, {"sample_packing": True}))
w("t-num-labels-zero", "reward model num_labels 0", merge(RM, {"num_labels": 0}))
w("t-processor-no-mm", "processor_type on a text-only model", T(processor_type="AutoProcessor"))
w("t-image-size-str", "image_size '512' string", merge(MM, {"image_size": "512"}))
w("t-freeze-mm", "freeze_mm_modules on a VLM", merge(MM, {"freeze_mm_modules": True}))
w("t-gemma3-mm", "Gemma 3 multimodal with gemma3 template", merge(MM, {"base_model": "google/gemma-3-4b-it", "chat_template": "gemma3"}))
w("t-unfrozen-zero3", "unfrozen_parameters with deepspeed zero3", T(unfrozen_parameters=["^lm_head.weight$"], deepspeed="deepspeed_configs/zero3_bf16.json"))
w("t-unfrozen-empty", "unfrozen_parameters: []", T(unfrozen_parameters=[]))
w("t-max-memory-device-map", "max_memory with device_map auto", T(max_memory={"0": "40GiB", "cpu": "100GiB"}, device_map="auto"))
w("t-eval-table", "eval_table_size with eval_max_new_tokens", T(eval_table_size=5, eval_max_new_tokens=128))
w("t-bench-eval", "do_bench_eval with bench_dataset", T(do_bench_eval=True, bench_dataset="pharaouk/dharma-1/dharma_1_mini.json"))
w("t-early-stop-no-eval", "early_stopping_patience with val_set_size 0", T(early_stopping_patience=2, val_set_size=0.0))
w("t-metric-no-load-best", "metric_for_best_model without load_best", T(metric_for_best_model="eval_loss", greater_is_better=False))
w("t-evals-no-val", "evals_per_epoch with val_set_size 0", T(val_set_size=0.0))
w("t-eval-steps-ratio", "eval_strategy steps with eval_steps 0.1", T(eval_strategy="steps", eval_steps=0.1, evals_per_epoch=DEL))
w("t-save-no-steps", "save_strategy no with save_steps", T(save_strategy="no", save_steps=100, saves_per_epoch=DEL))
w("t-save-epoch-per-epoch", "save_strategy epoch with saves_per_epoch", T(save_strategy="epoch"))
w("t-empty-cache", "torch_empty_cache_steps and gc_steps", T(torch_empty_cache_steps=10, gc_steps=100))
w("t-dl-prefetch-no-workers", "dataloader_prefetch_factor with 0 workers", T(dataloader_num_workers=0, dataloader_prefetch_factor=2))
w("t-dl-pin-str", "dataloader_pin_memory 'yes'", T(dataloader_pin_memory="yes"))
w("t-evals-per-epoch-zero", "evals_per_epoch 0", T(evals_per_epoch=0))
w("t-logging-steps-zero", "logging_steps 0", T(logging_steps=0))
w("t-role-boundaries", "role_boundaries on a VLM", merge(MM, {"role_boundaries": [{"role": "assistant", "start": "<|im_start|>assistant", "end": "<|im_end|>"}]}))
w("t-kto-weight-str", "kto_desirable_weight '1.0' string", D(rl="kto", remove_unused_columns=False, kto_desirable_weight="1.0"))
w("t-ds-roles-to-train-str", "roles_to_train as a string", T(datasets=[merge(SFT2["datasets"][0], {"roles_to_train": "assistant"})]))
w("t-ds-type-int", "datasets type: 3", T(datasets=[{"path": "my/x", "type": 3}]))
w("t-ds-type-list", "datasets type as a list", T(datasets=[{"path": "my/x", "type": ["alpaca"]}]))
w("t-ds-extra-key", "dataset entry with an unknown key", T(datasets=[merge(SFT2["datasets"][0], {"weight": 0.5})]))
w("t-ds-path-list", "dataset path as a list", T(datasets=[{"path": ["a/b", "c/d"], "type": "alpaca"}]))
w("t-gc-true-str", "gradient_checkpointing 'true' string", T(gradient_checkpointing="true"))
w("t-tf32-str", "tf32 'yes'", T(tf32="yes"))
w("t-fp16-v100-style", "fp16 true with bf16 false", T(bf16=False, fp16=True))
w("t-no-precision", "no bf16/fp16 at all (fp32)", T(bf16=DEL))

# ================= batch 3: YAML-level forms real users write =================
HEAD = """base_model: NousResearch/Meta-Llama-3-8B
datasets:
  - path: mhenrichsen/alpaca_2k_test
    type: alpaca
output_dir: ./outputs/lora-out
sequence_len: 2048
micro_batch_size: 2
gradient_accumulation_steps: 4
num_epochs: 1
optimizer: adamw_bnb_8bit
lr_scheduler: cosine
"""
def r(name, comment, body, head=HEAD):
    w(name, comment, None, raw=head + body)
r("y-lr-no-dot", "learning_rate: 2e-5 (PyYAML reads it as a string)", "learning_rate: 2e-5\nbf16: auto\n")
r("y-yes-no", "YAML 1.1 yes/no/on/off booleans", "learning_rate: 0.0002\nbf16: yes\ntf32: no\ngradient_checkpointing: on\nsample_packing: off\n")
r("y-underscore-int", "save_steps: 1_000 (YAML 1.1 int with underscores)", "learning_rate: 0.0002\nsave_steps: 1_000\nmax_steps: 10_000\n")
r("y-hex-int", "sequence_len: 0x800 (hex)", "learning_rate: 0.0002\n", head=HEAD.replace("sequence_len: 2048", "sequence_len: 0x800"))
r("y-octal-int", "gradient_accumulation_steps: 010 (YAML 1.1 octal = 8)", "learning_rate: 0.0002\n", head=HEAD.replace("gradient_accumulation_steps: 4", "gradient_accumulation_steps: 010"))
r("y-sexagesimal", "eval_steps: 1:30 (YAML 1.1 base 60 = 90)", "learning_rate: 0.0002\nval_set_size: 0.05\neval_steps: 1:30\n")
r("y-tilde-null", "~ and Null for optional keys", "learning_rate: 0.0002\nwarmup_steps: ~\nweight_decay: Null\nlr_scheduler_kwargs: NULL\n")
r("y-inf-grad-norm", "max_grad_norm: .inf", "learning_rate: 0.0002\nmax_grad_norm: .inf\n")
r("y-nan-lr", "learning_rate: .nan", "learning_rate: .nan\n")
r("y-date-revision", "revision_of_model: 2024-01-01 (a YAML date)", "learning_rate: 0.0002\nrevision_of_model: 2024-01-01\n")
r("y-date-wandb-name", "wandb_name: 2024-05-01 (a YAML date)", "learning_rate: 0.0002\nwandb_project: p\nwandb_name: 2024-05-01\n")
r("y-int-run-id", "wandb_run_id: 20240101 (int where str is expected)", "learning_rate: 0.0002\nwandb_project: p\nwandb_run_id: 20240101\n")
r("y-int-hub-id", "hub_model_id: 123", "learning_rate: 0.0002\nhub_model_id: 123\n")
r("y-seed-float", "seed: 42.0", "learning_rate: 0.0002\nseed: 42.0\n")
r("y-tag-str", "!!str on a number key", "learning_rate: 0.0002\nmicro_batch_size: !!str 4\n")
r("y-tag-float", "!!float on learning_rate", "learning_rate: !!float 2e-5\n")
r("y-anchor-merge", "datasets entries built with an anchor and << merge keys", """learning_rate: 0.0002
val_set_size: 0
x-ds: &ds
  type: chat_template
  field_messages: messages
test_datasets:
  - <<: *ds
    path: my/eval
    split: test
""")
r("y-anchor-merge-datasets", "datasets via merge key override the type", """learning_rate: 0.0002
base_ds: &base
  path: tatsu-lab/alpaca
  type: alpaca
more:
  - <<: *base
    type: alpaca:chat
""")
r("y-alias-list", "an alias reused for lora_target_modules", """learning_rate: 0.0002
adapter: lora
lora_r: 8
lora_alpha: 16
mods: &m [q_proj, v_proj]
lora_target_modules: *m
""")
r("y-merge-top", "a top-level << merge providing keys", """<<: {learning_rate: 0.0002, bf16: auto}
""")
r("y-merge-override", "merge key overridden by explicit key", """defaults: &d
  learning_rate: 0.0002
  warmup_steps: 10
<<: *d
warmup_ratio: 0.1
""")
r("y-multi-doc", "two YAML documents in one file", "learning_rate: 0.0002\n---\nlearning_rate: 0.0001\n")
r("y-empty-doc", "only comments, no keys", "", head="# nothing here\n")
r("y-quoted-bool", "'True' quoted for flash_attention", "learning_rate: 0.0002\nflash_attention: 'True'\n")
r("y-bool-for-str", "output_dir: true", "learning_rate: 0.0002\n", head=HEAD.replace("output_dir: ./outputs/lora-out", "output_dir: true"))
r("y-list-for-str", "base_model as a list", "learning_rate: 0.0002\n", head=HEAD.replace("base_model: NousResearch/Meta-Llama-3-8B", "base_model: [NousResearch/Meta-Llama-3-8B]"))
r("y-float-epochs-str", "num_epochs: '1.5'", "learning_rate: 0.0002\n", head=HEAD.replace("num_epochs: 1", "num_epochs: '1.5'"))
r("y-neg-zero", "weight_decay: -0.0", "learning_rate: 0.0002\nweight_decay: -0.0\n")
r("y-big-int", "max_steps: 99999999999999999999", "learning_rate: 0.0002\nmax_steps: 99999999999999999999\n")
r("y-plus-int", "micro_batch_size: +2", "learning_rate: 0.0002\n", head=HEAD.replace("micro_batch_size: 2", "micro_batch_size: +2"))
r("y-float-comma", "learning_rate: 1,5 (a string)", "learning_rate: 1,5\n")
r("y-bool-as-int-key", "gradient_accumulation_steps: true", "learning_rate: 0.0002\n", head=HEAD.replace("gradient_accumulation_steps: 4", "gradient_accumulation_steps: true"))
r("y-int-key-mapping", "max_memory with int keys", "learning_rate: 0.0002\nmax_memory:\n  0: 20GiB\n  1: 20GiB\n")
r("y-trailing-spaces-enum", "lr_scheduler with a trailing space in quotes", "learning_rate: 0.0002\n", head=HEAD.replace("lr_scheduler: cosine", "lr_scheduler: 'cosine '"))
r("y-upper-optimizer", "optimizer in upper case", "learning_rate: 0.0002\n", head=HEAD.replace("optimizer: adamw_bnb_8bit", "optimizer: ADAMW_TORCH"))
r("y-block-scalar-jinja", "chat_template_jinja as a block scalar", """learning_rate: 0.0002
chat_template: jinja
chat_template_jinja: |
  {% for message in messages %}
  {{ '<|' + message['role'] + '|>' + message['content'] }}
  {% endfor %}
""")
r("y-flow-mapping-ds", "datasets in flow style", "learning_rate: 0.0002\n", head=HEAD.replace("""datasets:
  - path: mhenrichsen/alpaca_2k_test
    type: alpaca
""", "datasets: [{path: mhenrichsen/alpaca_2k_test, type: alpaca}]\n"))
r("y-deepspeed-rel-dotslash", "deepspeed: ./deepspeed_configs/zero2.json", "learning_rate: 0.0002\ndeepspeed: ./deepspeed_configs/zero2.json\n")
r("y-deepspeed-abs-missing", "deepspeed absolute path that doesn't exist + tp 2", "learning_rate: 0.0002\ndeepspeed: /opt/ds/zero3.json\ntensor_parallel_size: 2\n")
r("y-ds-zero3-tp2", "zero3 preset with tensor_parallel_size 2", "learning_rate: 0.0002\ndeepspeed: deepspeed_configs/zero3_bf16.json\ntensor_parallel_size: 2\n")
r("y-ds-deepcompile-zero1", "deepcompile with zero1 preset", "learning_rate: 0.0002\ndeepspeed: deepspeed_configs/zero1.json\ndeepcompile: true\n")
r("y-ds-inline-deepcompile", "deepcompile with inline deepspeed", "learning_rate: 0.0002\ndeepspeed:\n  zero_optimization:\n    stage: 3\ndeepcompile: true\n")

# ================= batch 4: plugins and their args =================
def P(name, comment, plugins, **k):
    w(name, comment, merge(SFT, dict(k, plugins=plugins)))
KD = ["axolotl.integrations.kd.KDPlugin"]
P("p-kd", "knowledge distillation plugin with kd_* keys", KD, kd_trainer=True, kd_ce_alpha=0.1, kd_alpha=0.9, kd_temperature=1.0,
  datasets=[{"path": "axolotl-ai-co/evolkit-logprobs", "type": "axolotl.integrations.kd.chat_template", "field_messages": "messages_combined", "logprobs_field": "llm_text_generation_vllm_logprobs", "temperature": 1.0}])
P("p-kd-temp-str", "KD with kd_temperature 'hot'", KD, kd_trainer=True, kd_temperature="hot")
P("p-kd-online", "KD with an online teacher server", KD, kd_trainer=True, kd_online_server="vllm", kd_online_server_base_url="http://localhost:8000", kd_online_topk=20)
P("p-kd-online-bad", "KD kd_online_server with an unknown backend", KD, kd_trainer=True, kd_online_server="tgi")
LLMC = ["axolotl.integrations.llm_compressor.LLMCompressorPlugin"]
P("p-llmc", "LLM Compressor plugin with a sparsity recipe", LLMC, llmcompressor={"recipe": {"finetuning_stage": {"finetuning_modifiers": {"ConstantPruningModifier": {"targets": ["re:.*q_proj.weight"], "start": 0}}}}, "save_compressed": True})
P("p-llmc-missing", "LLM Compressor plugin without the llmcompressor block", LLMC)
P("p-llmc-bad-type", "llmcompressor block as a string", LLMC, llmcompressor="recipe.yaml")
DIF = ["axolotl.integrations.diffusion.DiffusionPlugin"]
P("p-diffusion", "diffusion LM plugin with mask ratios", DIF, diffusion={"min_mask_ratio": 0.1, "max_mask_ratio": 0.9, "noise_schedule": "cosine", "num_diffusion_steps": 128, "mask_token_id": 128002})
P("p-diffusion-bad-ratio", "diffusion min_mask_ratio above max", DIF, diffusion={"min_mask_ratio": 0.8, "max_mask_ratio": 0.2})
P("p-diffusion-top-keys", "diffusion keys at top level (old form)", DIF, min_mask_ratio=0.1, max_mask_ratio=0.9, noise_schedule="linear")
P("p-diffusion-bad-schedule", "diffusion noise_schedule 'exp'", DIF, diffusion={"noise_schedule": "exp"})
HAT = ["axolotl.integrations.hatchery.HatcheryPlugin"]
P("p-hatchery", "hatchery plugin block", HAT, hatchery={"backend": "tinker", "lora_rank": 32, "loss_fn": "cross_entropy"})
P("p-hatchery-kto", "hatchery plugin with rl kto", HAT, rl="kto", hatchery={"backend": "tinker"})
MORA = ["axolotl.integrations.mora.MoraPlugin"]
P("p-mora", "MoRA plugin with mora_type rope", MORA, adapter="lora", lora_r=256, lora_target_linear=True, use_mora=True, mora={"mora_type": "rope"})
P("p-mora-bad", "MoRA with mora_type 3", MORA, adapter="lora", lora_r=256, lora_target_linear=True, use_mora=True, mora={"mora_type": 3})
P("p-mora-top", "mora_type at top level", MORA, adapter="lora", lora_r=256, lora_target_linear=True, use_mora=True, mora_type=6)
P("p-densemixer", "densemixer plugin on a MoE", ["axolotl.integrations.densemixer.DenseMixerPlugin"], base_model="Qwen/Qwen3-30B-A3B", chat_template="qwen3", special_tokens=DEL, dense_mixer=True)
NG = ["axolotl.integrations.nemo_gym.NemoGymPlugin"]
P("p-nemo-gym", "NeMo Gym plugin with GRPO", NG, rl="grpo", nemo_gym_enabled=True, nemo_gym_dir="/opt/gym", nemo_gym_config_paths=["configs/math.yaml"], trl={"use_vllm": True})
P("p-nemo-gym-no-cfg", "NeMo Gym enabled without config paths", NG, rl="grpo", nemo_gym_enabled=True)
SW = ["axolotl.integrations.swanlab.SwanLabPlugin"]
P("p-swanlab", "SwanLab with project and cloud mode", SW, use_swanlab=True, swanlab_project="p", swanlab_mode="cloud")
P("p-swanlab-bad-mode", "SwanLab with mode 'online'", SW, use_swanlab=True, swanlab_project="p", swanlab_mode="online")
P("p-swanlab-empty-project", "SwanLab with an empty project", SW, use_swanlab=True, swanlab_project="")
P("p-swanlab-disabled", "SwanLab plugin listed, use_swanlab false, no project", SW, use_swanlab=False)
P("p-lm-eval-str-tasks", "lm_eval_tasks as a string", ["axolotl.integrations.lm_eval.LMEvalPlugin"], lm_eval_tasks="gsm8k")
P("p-grokfast-str", "grokfast_alpha as a string", ["axolotl.integrations.grokfast.GrokfastPlugin"], grokfast_alpha="0.98")
P("p-spectrum-frac-big", "spectrum_top_fraction 1.5", ["axolotl.integrations.spectrum.SpectrumPlugin"], spectrum_top_fraction=1.5, spectrum_model_name="meta-llama/Llama-3.1-8B")
P("p-spectrum-no-name", "spectrum without spectrum_model_name", ["axolotl.integrations.spectrum.SpectrumPlugin"], spectrum_top_fraction=0.5)
K = ["axolotl.integrations.kernels.KernelsPlugin"]
MOE = dict(base_model="Qwen/Qwen3-30B-A3B", chat_template="qwen3", special_tokens=DEL)
P("p-kernels-sonic-scatter", "scattermoe and sonicmoe both on", K, use_scattermoe=True, use_sonicmoe=True, **MOE)
P("p-kernels-expert-backend", "kernels expert_backend 'triton'", K, use_scattermoe=True, expert_backend="triton", **MOE)
P("p-kernels-grouped", "moe_grouped_backend with scattermoe", K, use_scattermoe=True, moe_grouped_backend="cutlass", **MOE)
P("p-kernels-chunk-zero", "moe_dequant_chunk_size 0", K, use_scattermoe=True, moe_dequant_chunk_size=0, **MOE)
P("p-kernels-nonexpert", "nonexpert_quantization fp8", K, use_scattermoe=True, nonexpert_quantization="fp8", **MOE)
P("p-kernels-qlora", "scattermoe with QLoRA and moe_bnb_fast", K, use_scattermoe=True, moe_bnb_fast=True, adapter="qlora", load_in_4bit=True, lora_r=16, lora_alpha=32, lora_target_linear=True, **MOE)
P("p-kernels-none", "kernels plugin with no kernel flags", K, **MOE)
P("p-liger-all", "Liger with every flag and CE off", LIG, liger_rope=True, liger_rms_norm=True, liger_layer_norm=True, liger_glu_activation=True, liger_rms_norm_gated=True, liger_cross_entropy=True)
P("p-liger-token-scaling", "liger_use_token_scaling without FLCE", LIG, liger_use_token_scaling=True)
P("p-liger-token-scaling-ok", "liger_use_token_scaling with FLCE", LIG, liger_use_token_scaling=True, liger_fused_linear_cross_entropy=True)
P("p-liger-tiled", "liger_glu_activation with tiled_mlp", LIG, liger_glu_activation=True, tiled_mlp=True)
P("p-liger-chunked", "liger FLCE with chunked_cross_entropy", LIG, liger_fused_linear_cross_entropy=True, chunked_cross_entropy=True)
P("p-cce-fp16", "CCE with fp16", CCE, cut_cross_entropy=True, bf16=False, fp16=True)
P("p-cce-liger-ce", "CCE with liger_cross_entropy", CCE + LIG, cut_cross_entropy=True, liger_cross_entropy=True)
P("p-cce-bf16-auto-tp", "CCE with tensor parallel", CCE, cut_cross_entropy=True, tensor_parallel_size=2)
P("p-ep-tokens-zero", "expert_parallel_token_capacity 0", ["axolotl.integrations.expert_parallel.ExpertParallelPlugin"], expert_parallel_size=2, expert_parallel_token_capacity=0, **MOE)
P("p-ep-backend", "expert_parallel_backend deepep with rdma bytes", ["axolotl.integrations.expert_parallel.ExpertParallelPlugin"], expert_parallel_size=8, expert_parallel_backend="deepep", expert_parallel_num_rdma_bytes=1073741824, **MOE)
P("p-dup-plugin", "the same plugin listed twice", LIG + LIG, liger_rope=True)
P("p-module-only", "plugins entry is only a module path", ["axolotl.integrations.liger"], liger_rope=True)
P("p-wrong-class", "integration module with the wrong class name", ["axolotl.integrations.cut_cross_entropy.CCEPlugin"], cut_cross_entropy=True)
P("p-plugins-null", "plugins: null", None)
P("p-plugin-int", "plugins: [3]", [3])

# ================= batch 5: raw values the before-validators read =================
Q5 = lambda name, comment, **k: w(name, comment, merge(SFT, k))
Q5("q-push-ds-auth-str", "push_dataset_to_hub with hf_use_auth_token 'true' (a string)", push_dataset_to_hub="me/ds", hf_use_auth_token="true")
Q5("q-push-ds-auth-ok", "push_dataset_to_hub with hf_use_auth_token true", push_dataset_to_hub="me/ds", hf_use_auth_token=True)
Q5("q-push-ds-auth-int", "push_dataset_to_hub with hf_use_auth_token 1", push_dataset_to_hub="me/ds", hf_use_auth_token=1)
Q5("q-test-ds-val-str0", "test_datasets with val_set_size '0' (string)", val_set_size="0", test_datasets=[{"path": "my/eval", "type": "alpaca"}])
Q5("q-test-ds-val-zero", "test_datasets with val_set_size 0.0", val_set_size=0.0, test_datasets=[{"path": "my/eval", "type": "alpaca"}])
Q5("q-packing-strfalse-table", "sample_packing 'false' (string) with eval_table_size", sample_packing="false", eval_table_size=5)
Q5("q-eval-packing-strfalse-table", "eval_sample_packing 'false' string with eval_table_size", eval_sample_packing="false", eval_table_size=5)
Q5("q-eval-packing-zero-table", "eval_sample_packing 0 with eval_table_size", eval_sample_packing=0, eval_table_size=5)
Q5("q-eval-packing-false-table", "eval_sample_packing false with eval_table_size", eval_sample_packing=False, eval_table_size=5)
Q5("q-gas-str-bsz", "gradient_accumulation_steps '1' with batch_size", gradient_accumulation_steps="1", batch_size=16)
Q5("q-gas-zero-bsz", "gradient_accumulation_steps 0 with batch_size", gradient_accumulation_steps=0, batch_size=16)
Q5("q-warmup-str0", "warmup_steps '0' (string) with warmup_ratio", warmup_steps="0", warmup_ratio=0.1)
Q5("q-warmup-zero", "warmup_steps 0 with warmup_ratio", warmup_steps=0, warmup_ratio=0.1)
Q5("q-saves-str0", "saves_per_epoch '0' with save_steps", saves_per_epoch="0", save_steps=10)
Q5("q-save-strategy-best-steps", "save_strategy best with save_steps", save_strategy="best", save_steps=100, saves_per_epoch=DEL, metric_for_best_model="eval_loss")
Q5("q-hub-save-no", "hub_model_id with save_strategy no", hub_model_id="me/m", save_strategy="no", saves_per_epoch=DEL)
Q5("q-val-false-eval-steps", "val_set_size false with eval_steps", val_set_size=False, eval_steps=10, evals_per_epoch=DEL)
Q5("q-val-str0-eval-steps", "val_set_size '0' with eval_steps", val_set_size="0", eval_steps=10, evals_per_epoch=DEL)
Q5("q-val-zero-eval-no", "val_set_size 0 with eval_strategy no and eval_steps", val_set_size=0, eval_strategy="no", eval_steps=10, evals_per_epoch=DEL)
Q5("q-evals-epoch-strategy", "evals_per_epoch with eval_strategy epoch", eval_strategy="epoch")
Q5("q-bench-no-evals", "do_bench_eval without evals_per_epoch/eval_steps", do_bench_eval=True, evals_per_epoch=DEL)
Q5("q-neftune-both", "noisy_embedding_alpha and neftune_noise_alpha both", noisy_embedding_alpha=5, neftune_noise_alpha=5)
Q5("q-fp8-allgather-str-version", "fp8 all-gather with fsdp_version '2' (string)", fp8=True, torch_compile=True, fp8_enable_fsdp_float8_all_gather=True, fsdp_version="2", fsdp_config=FS2["fsdp_config"])
Q5("q-reentrant-str-false", "unfrozen_parameters with use_reentrant 'false' (string)", unfrozen_parameters=["^lm_head.weight$"], gradient_checkpointing_kwargs={"use_reentrant": "false"})
Q5("q-eval-strat-both", "evaluation_strategy and eval_strategy both", evaluation_strategy="steps", eval_strategy="epoch", evals_per_epoch=DEL)
Q5("q-causal-eval-packing-str", "do_causal_lm_eval with eval_sample_packing 'false' string", do_causal_lm_eval=True, eval_sample_packing="false")
Q5("q-causal-metrics-str", "eval_causal_lm_metrics as a string", do_causal_lm_eval=True, eval_sample_packing=False, eval_causal_lm_metrics="sacrebleu")
Q5("q-magistral", "Magistral model (mistral-common inferred) with chat_template", base_model="mistralai/Magistral-Small-2506", special_tokens=DEL)
Q5("q-magistral-no-template", "Magistral model without tokenizer edits", base_model="mistralai/Magistral-Small-2506", special_tokens=DEL, chat_template=DEL, datasets=[{"path": "my/chat", "type": "chat_template"}])
Q5("q-magistral-explicit-false", "Magistral with tokenizer_use_mistral_common false", base_model="mistralai/Magistral-Small-2506", tokenizer_use_mistral_common=False)
Q5("q-mistral-common-empty-tokens", "mistral-common with tokens: [] and special_tokens: {}", base_model="mistralai/Mistral-Small-3.1-24B-Instruct-2503", tokenizer_use_mistral_common=True, chat_template=DEL, special_tokens={}, tokens=[])
Q5("q-lr-groups-loraplus", "lr_groups with loraplus_lr_ratio", adapter="lora", lora_r=8, lora_alpha=16, lora_target_linear=True, loraplus_lr_ratio=16, lr_groups=[{"name": "e", "modules": ["embed_tokens"], "lr": 1e-5}])
Q5("q-frozen-layers-unfrozen", "adapter + peft_layers_to_transform + unfrozen_parameters", adapter="lora", lora_r=8, lora_alpha=16, lora_target_linear=True, peft_layers_to_transform=[0, 1], unfrozen_parameters=["^lm_head.weight$"])
Q5("q-layers-pattern-only", "peft_layers_pattern without peft_layers_to_transform", adapter="lora", lora_r=8, lora_alpha=16, lora_target_linear=True, peft_layers_pattern=["layers"])
Q5("q-kernels-8bit", "lora kernels with LoRA 8-bit", adapter="lora", lora_r=8, lora_alpha=16, lora_target_linear=True, load_in_8bit=True, lora_mlp_kernel=True)
Q5("q-kernels-remote-code", "lora kernels with trust_remote_code", adapter="lora", lora_r=8, lora_alpha=16, lora_target_linear=True, lora_qkv_kernel=True, trust_remote_code=True)
Q5("q-kernels-dora", "lora_o_kernel with DoRA", adapter="lora", lora_r=8, lora_alpha=16, lora_target_linear=True, lora_o_kernel=True, peft_use_dora=True)
Q5("q-packing-strno-dpo", "rl dpo with sample_packing 'no' (quoted string)", rl="dpo", sample_packing="no", datasets=DPO["datasets"])
Q5("q-kto-rmcols-str", "kto with remove_unused_columns 'false' (string)", rl="kto", sample_packing=False, remove_unused_columns="false", datasets=[{"path": "argilla/kto-mix-15k", "type": "llama3.argilla_chat"}])
Q5("q-kto-eval-packing", "kto with eval_sample_packing true", rl="kto", sample_packing=False, eval_sample_packing=True, remove_unused_columns=False, datasets=[{"path": "argilla/kto-mix-15k", "type": "llama3.argilla_chat"}])
Q5("q-dpo-weights-no-type", "dpo_loss_weights without dpo_loss_type", rl="dpo", sample_packing=False, dpo_loss_weights=[1.0], datasets=DPO["datasets"])
Q5("q-dpo-weights-len", "dpo_loss_type/weights length mismatch", rl="dpo", sample_packing=False, dpo_loss_type=["sigmoid", "ipo"], dpo_loss_weights=[1.0], datasets=DPO["datasets"])
Q5("q-dpo-type-str", "dpo_loss_type as a string with 1 weight", rl="dpo", sample_packing=False, dpo_loss_type="sigmoid", dpo_loss_weights=[1.0], datasets=DPO["datasets"])
Q5("q-dpo-type-ipo", "dpo_loss_type with rl ipo", rl="ipo", sample_packing=False, dpo_loss_type=["ipo"], datasets=DPO["datasets"])
Q5("q-dpo-type-sft", "dpo_loss_type with no rl", dpo_loss_type=["sigmoid"])
GB = dict(rl="grpo", sample_packing=False, datasets=GRPO["datasets"], chat_template="qwen_25", base_model="Qwen/Qwen2.5-1.5B-Instruct", special_tokens=DEL)
Q5("q-grpo-numgen-str", "GRPO num_generations '4' (string)", trl={"num_generations": "4"}, micro_batch_size=4, **GB)
Q5("q-grpo-numgen-true", "GRPO num_generations true", trl={"num_generations": True}, **GB)
Q5("q-grpo-gbs-explicit", "GRPO generation_batch_size 16 with num_generations 8", trl={"num_generations": 8, "generation_batch_size": 16}, micro_batch_size=1, gradient_accumulation_steps=1, **GB)
Q5("q-grpo-gbs-str", "GRPO generation_batch_size '12' string with num_generations 4", trl={"num_generations": 4, "generation_batch_size": "12"}, **GB)
Q5("q-grpo-gas-auto", "GRPO with gradient_accumulation_steps 'auto'", trl={"num_generations": 4}, gradient_accumulation_steps="auto", **GB)
Q5("q-grpo-world-size-key", "GRPO with a top-level world_size key 4", trl={"num_generations": 4}, micro_batch_size=2, gradient_accumulation_steps=2, world_size=4, **GB)
Q5("q-grpo-mbs-null", "GRPO with micro_batch_size null", trl={"num_generations": 4}, micro_batch_size=None, gradient_accumulation_steps=3, **GB)
Q5("q-grpo-numgen-float", "GRPO num_generations 4.0", trl={"num_generations": 4.0}, micro_batch_size=2, gradient_accumulation_steps=4, **GB)
Q5("q-grpo-big-gbs", "GRPO mbs 8 GA 8 num_generations 8 (ok at 8 GPUs)", trl={"num_generations": 8}, micro_batch_size=8, gradient_accumulation_steps=8, **GB)
Q5("q-gdpo-agg", "gdpo with multi_objective_aggregation", rl="gdpo", sample_packing=False, trl={"multi_objective_aggregation": "sum_then_normalize"}, datasets=GRPO["datasets"])
Q5("q-muon-empty-fsdp", "muon optimizer with fsdp_config: {}", optimizer="muon", fsdp_config={})
Q5("q-muon-ds", "muon optimizer with deepspeed", optimizer="muon", deepspeed="deepspeed_configs/zero2.json")
Q5("q-muon-fsdp2", "muon with FSDP2", optimizer="muon", **FS2)
Q5("q-qgalore", "q_galore_adamw8bit with settings", optimizer="q_galore_adamw8bit", optim_target_modules=["attn", "mlp"], qgalore_rank=256, qgalore_proj_bits=4)
Q5("q-qgalore-ds", "q_galore with deepspeed", optimizer="q_galore_adamw8bit", optim_target_modules=["attn"], deepspeed="deepspeed_configs/zero2.json")
Q5("q-flashoptim-fsdp", "flash optimizer with FSDP", optimizer="flash_adamw", **FS2)
Q5("q-fsdp-config-no-version", "fsdp_config with unprefixed keys and no version (v1)", fsdp_config=FS2["fsdp_config"])
Q5("q-fsdp2-str-dpo-4bit", "DPO QLoRA with fsdp_version '2' string", rl="dpo", sample_packing=False, datasets=DPO["datasets"], adapter="qlora", load_in_4bit=True, lora_r=8, lora_alpha=16, lora_target_linear=True, fsdp_version="2", fsdp_config=FS2["fsdp_config"])
Q5("q-fsdp-in-cfg-dpo-4bit", "DPO QLoRA with fsdp_version 2 only inside fsdp_config", rl="dpo", sample_packing=False, datasets=DPO["datasets"], adapter="qlora", load_in_4bit=True, lora_r=8, lora_alpha=16, lora_target_linear=True, fsdp_config=dict(FS2["fsdp_config"], fsdp_version=2))
Q5("q-fsdp-empty-list-ds", "fsdp: [] with deepspeed", fsdp=[], deepspeed="deepspeed_configs/zero2.json")
Q5("q-fsdp-str-ds", "fsdp 'full_shard' string with deepspeed", fsdp="full_shard", deepspeed="deepspeed_configs/zero2.json")
Q5("q-mq-config-8bit", "model_quantization_config with load_in_8bit", model_quantization_config="Mxfp4Config", load_in_8bit=True, base_model="openai/gpt-oss-20b")
Q5("q-mxfp4-fsdp-ram", "gpt-oss Mxfp4 with FSDP cpu_ram_efficient_loading", model_quantization_config="Mxfp4Config", base_model="openai/gpt-oss-20b", **FS2)
Q5("q-jinja-empty", "chat_template jinja with an empty chat_template_jinja", chat_template="jinja", chat_template_jinja="")
Q5("q-jinja-null-template", "chat_template_jinja set and chat_template null", chat_template=None, chat_template_jinja="{{ messages }}")
Q5("q-pretrain-max-str0", "pretraining with max_steps '0' (string)", datasets=DEL, pretraining_dataset=[{"path": "allenai/c4", "name": "en", "type": "pretrain"}], max_steps="0", val_set_size=0.0, evals_per_epoch=DEL)
Q5("q-streaming-strfalse-val", "streaming 'false' (string) with val_set_size", streaming="false", max_steps=100)
Q5("q-streaming-false", "streaming false with val_set_size", streaming=False)
Q5("q-streaming-two-ds-nopack", "streaming two datasets without packing", streaming=True, max_steps=100, val_set_size=0.0, evals_per_epoch=DEL, sample_packing=False, datasets=[SFT["datasets"][0], {"path": "tatsu-lab/alpaca", "type": "alpaca"}])
Q5("q-gptq-rev-empty", "gptq with revision_of_model ''", gptq=True, revision_of_model="", base_model="TheBloke/Llama-2-7B-GPTQ")
Q5("q-sharegpt-dict-type", "dataset type dict while another is sharegpt_jokes", datasets=[{"path": "a/b", "type": "sharegpt_jokes"}])
Q5("q-unsloth-false", "unsloth_lora_mlp: false (removed key, falsy)", unsloth_lora_mlp=False)
Q5("q-pretrain-and-null-ds", "datasets: null with pretraining_dataset", datasets=None, pretraining_dataset=[{"path": "allenai/c4", "type": "pretrain"}], max_steps=100, val_set_size=0.0, evals_per_epoch=DEL)
Q5("q-mbs-str-eval-bs", "eval_batch_size '2' vs micro_batch_size 2", eval_batch_size="2")
Q5("q-reward-pad-false", "reward_model with pad_to_sequence_len false", reward_model=True, sample_packing=False, pad_to_sequence_len=False, datasets=RM["datasets"])
Q5("q-rm-type-of-model", "reward_model with type_of_model set", reward_model=True, sample_packing=False, type_of_model="AutoModelForCausalLM", datasets=RM["datasets"])
Q5("q-bf16-str-true-zero3-bf16", "bf16 'true' (a string) with the zero3_bf16 DeepSpeed preset", bf16="true", deepspeed="deepspeed_configs/zero3_bf16.json", base_model="NousResearch/Meta-Llama-3-8B")
Q5("q-bf16-one-zero3-bf16", "bf16: 1 with the zero3_bf16 DeepSpeed preset", bf16=1, deepspeed="deepspeed_configs/zero3_bf16.json", base_model="NousResearch/Meta-Llama-3-8B")
Q5("q-bf16-str-false-zero3-bf16", "bf16 'false' (a string) with the zero3_bf16 DeepSpeed preset", bf16="false", deepspeed="deepspeed_configs/zero3_bf16.json", base_model="NousResearch/Meta-Llama-3-8B")
Q5("q-packing-str-false-catalog", "sample_packing 'false' (string) on a catalog model, full FT", sample_packing="false", base_model="NousResearch/Meta-Llama-3-8B", deepspeed="deepspeed_configs/zero3_bf16.json")
Q5("q-rm-catalog-8b", "reward model on a catalog 8B model under ZeRO-3", reward_model=True, sample_packing=False, base_model="NousResearch/Meta-Llama-3-8B", deepspeed="deepspeed_configs/zero3_bf16.json", datasets=RM["datasets"], chat_template="llama3")
print(f"{N[0]} configs in {OUT}")
