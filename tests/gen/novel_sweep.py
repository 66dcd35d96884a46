#!/usr/bin/env python3
"""Write a type sweep of Axolotl's schema into OUT (not committed: ~3,000
files): for every field of core/data/axolotl-models.tsv - the top-level
keys and every nested model (trl, vllm, fsdp_config, datasets entries as
SFT/DPO/KTO/pretraining/stepwise/synthetic/user-defined types, qat,
quantization, special_tokens, role_boundaries, lr_groups, peft, the plugin
args) - one minimal config per value: a non-member for a Literal or enum,
a string number, a word, a fraction and a bool for an int, a word for a
bool, a number / list / bool for a str, a scalar for a list or dict, and
null.  Compare with Axolotl's validator:

  tests/gen/novel_sweep.py /tmp/sweep
  python3 tests/conformance/run.py --configs /tmp/sweep --worlds 1 \\
      --out build/conformance-sweep
"""
import copy
import os
import re
import sys

import yaml

OUT = sys.argv[1] if len(sys.argv) > 1 else "build/sweep"
os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    if f.endswith(".yaml"):
        os.remove(os.path.join(OUT, f))
rows=[l.rstrip('\n').split('\t') for l in open('core/data/axolotl-models.tsv') if l.startswith('field\t')]
BASE={"base_model":"HuggingFaceTB/SmolLM2-135M","learning_rate":1e-4,"micro_batch_size":1,"gradient_accumulation_steps":1,
      "datasets":[{"path":"a/b","type":"alpaca"}],"output_dir":"./o","sequence_len":1024}
FS2={"fsdp_version":2}
def place(model, field, val):
    d=copy.deepcopy(BASE); m=model.split('.')[-1]
    if m=="TRLConfig": d["rl"]="grpo"; d["trl"]={field:val}
    elif m=="VllmConfig": d["vllm"]={field:val}
    elif m=="FSDPConfig": d["fsdp_version"]=2; d["fsdp_config"]={field:val}
    elif m=="SFTDataset": d["datasets"][0][field]=val
    elif m=="DPODataset": d["rl"]="dpo"; d["datasets"]=[{"path":"a/b","type":"chatml.intel",field:val}]
    elif m=="KTODataset": d["rl"]="kto"; d["remove_unused_columns"]=False; d["datasets"]=[{"path":"a/b","type":"llama3.argilla_chat",field:val}]
    elif m=="PretrainingDataset": del d["datasets"]; d["max_steps"]=10; d["pretraining_dataset"]=[{"path":"a/b",field:val}]
    elif m=="StepwiseSupervisedDataset": d["process_reward_model"]=True; d["datasets"]=[{"path":"a/b","type":"stepwise_supervised",field:val}]
    elif m=="SyntheticDataset": d["datasets"]=[{"path":"synthetic","type":"_synthetic",field:val}]
    elif m=="UserDefinedPrompterType": d["datasets"]=[{"path":"a/b","type":{field:val}}]
    elif m=="UserDefinedDPOType": d["rl"]="dpo"; d["datasets"]=[{"path":"a/b","type":{field:val}}]
    elif m=="UserDefinedKTOType": d["rl"]="kto"; d["remove_unused_columns"]=False; d["datasets"]=[{"path":"a/b","type":{field:val}}]
    elif m=="QATConfig": d["qat"]={"weight_dtype":"int4"}; d["qat"][field]=val
    elif m=="PTQConfig": d["quantization"]={"weight_dtype":"int8"}; d["quantization"][field]=val
    elif m=="SpecialTokensConfig": d["special_tokens"]={field:val}
    elif m=="RoleBoundarySpec": d["role_boundaries"]=[{"role":"assistant","start":"<a>","end":"</a>",field:val}]
    elif m=="SelectiveCheckpointingConfig": d["gradient_checkpointing"]=True; d["gradient_checkpointing_kwargs"]={"use_reentrant":False}; d["selective_checkpointing"]={field:val}
    elif m=="DynamicCheckpointConfig": d["dynamic_checkpoint"]={field:val}
    elif m=="LrGroup": d["lr_groups"]=[{"name":"g","modules":["q_proj"],"lr":1e-5}]; d["lr_groups"][0][field]=val
    elif m=="PeftConfig": d["peft"]={field:val}
    elif m=="LoftQConfig": d["peft"]={"loftq_config":{field:val}}
    elif m=="EBFTConfig": return None
    elif m=="AxolotlInputConfig":
        if field in ("datasets","base_model"): return None
        d[field]=val
    else:
        plug={"KernelsArgs":"kernels.KernelsPlugin","HatcheryConfig":"hatchery.HatcheryPlugin","SwanLabConfig":"swanlab.SwanLabPlugin",
              "DiffusionConfig":"diffusion.DiffusionPlugin","NemoGymArgs":"nemo_gym.NemoGymPlugin","KDArgs":"kd.KDPlugin","LigerArgs":"liger.LigerPlugin",
              "ExpertParallelArgs":"expert_parallel.ExpertParallelPlugin","LMEvalArgs":"lm_eval.LMEvalPlugin","SpectrumArgs":"spectrum.SpectrumPlugin",
              "MoraConfig":"mora.MoraPlugin","CompressionArgs":"llm_compressor.LLMCompressorPlugin","GrokfastArgs":"grokfast.GrokfastPlugin"}.get(m)
        if not plug: return None
        d["plugins"]=["axolotl.integrations."+plug]
        if m=="HatcheryConfig": d["hatchery"]={field:val}
        elif m=="DiffusionConfig": d["diffusion"]={field:val}
        elif m=="MoraConfig": d["mora"]={field:val}
        elif m=="CompressionArgs": d["llmcompressor"]={"recipe":{},field:val} if field!="recipe" else {field:val}
        else: d[field]=val
    return d
def vals(tp):
    out=[]
    t=tp
    if "Literal[" in t: out+=["zzz_not_a_member"]
    if re.search(r"\bint\b|<class 'int'>",t): out+=["3","abc",2.5,True]
    if re.search(r"\bfloat\b|<class 'float'>",t): out+=["1e-3","abc",True]
    if re.search(r"\bbool\b|<class 'bool'>",t): out+=["yes","maybe",2]
    if re.search(r"\bstr\b",t): out+=[5,["x"],True]
    if re.search(r"list\[",t): out+=["single"]
    if re.search(r"dict\[",t): out+=["notadict",[1]]
    if "Enum" in t or "enums." in t or "<enum" in t: out+=["zzz_enum"]
    out+=[None]
    seen=[]; 
    for v in out:
        if v not in seen: seen.append(v)
    return seen
n=0
for r in rows:
    model, field, alias, tp = r[1], r[2], r[3], r[4]
    key = alias or field
    for i,v in enumerate(vals(tp)):
        d=place(model, key, v)
        if d is None: continue
        n+=1
        open(f"{OUT}/{model.split('.')[-1]}.{key}.{i}.yaml","w").write(f"# {model} {key} {tp} <- {v!r}\n"+yaml.safe_dump(d,sort_keys=False))
print(f"{n} configs in {OUT}")
