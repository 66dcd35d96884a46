#!/usr/bin/env python3
"""Seeded generator of Axolotl configs for `make conformance` (issue 14).

Each config is one of Axolotl's example configs (shared/corpus) with a few
mutations, and a launch context: world size 1/2/8/16, GPU compute capability
7.5/8.0/8.9/9.0/10.0, torch version. The mutations are not written for any
one rule; they are drawn from what Axolotl's schema says:

* the key table (core/data/axolotl-keys.tsv and axolotl-plugin-keys.tsv): any
  key may be added, with a value of its type, a Literal/enum member, an edge
  value (0, 1, -1, empty, null) or a value some example config uses;
* the keys Axolotl's validators read (every `data.get("k")` / `self.k` in the
  vendored src/axolotl/utils/schemas/ and plugin args.py files) are picked
  more often, since that is where verdicts change;
* keys are removed, booleans toggled, values swapped with another example's;
* distributed settings are combined (FSDP1/FSDP2 spelled the ways Axolotl
  reads them, DeepSpeed presets and unknown paths, tensor/context/expert
  parallel sizes and the deprecated sequence_parallel_degree, plugins);
* a number or boolean is written as a string, which pydantic converts but
  a validator reading the raw value may not.

Same seed, same configs. The first line of each file is the oracle's
`# ctx:` comment.
"""

from __future__ import annotations

import glob
import hashlib
import os
import random
import re

import yaml

CC_GPU = {"7.5": "t4", "8.0": "a100-80gb", "8.9": "l40s", "9.0": "h100-sxm",
          "10.0": "b200"}
WORLD = [1, 1, 2, 8, 8, 16]
CCS = ["7.5", "8.0", "8.0", "8.9", "9.0", "9.0", "9.0", "10.0"]
TORCH = ["2.5.1", "2.6.0", "2.7.1", "2.9.0", "2.11.0", "2.11.0", "2.11.0"]

PLUGINS = [
    "axolotl.integrations.liger.LigerPlugin",
    "axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin",
    "axolotl.integrations.expert_parallel.ExpertParallelPlugin",
    "axolotl.integrations.kernels.KernelsPlugin",
    "axolotl.integrations.spectrum.SpectrumPlugin",
]


class Ctx:
    def __init__(self, world: int, cc: str, torch: str):
        self.world, self.cc, self.torch = world, cc, torch

    @property
    def gpu(self) -> str:
        return CC_GPU[self.cc]

    def key(self) -> tuple:
        return (self.world, self.cc, self.torch)

    def comment(self) -> str:
        return f"# ctx: ws={self.world} gpu_cc={self.cc} torch={self.torch}\n"

    def preflight_args(self) -> list[str]:
        a = ["--gpus", str(self.world), "--gpu", self.gpu, "--torch",
             self.torch]
        if self.world == 16:
            a += ["--nodes", "2"]
        return a


def _literals(tp: str) -> list:
    """Values of the Literal[...] parts of an annotation."""
    out = []
    for m in re.finditer(r"Literal\[([^\]]*)\]", tp):
        for v in re.findall(r"'([^']*)'|\"([^\"]*)\"|\b(True|False|None|-?\d+)\b",
                            m.group(1)):
            s, d, w = v
            if s or d:
                out.append(s or d)
            elif w == "True":
                out.append(True)
            elif w == "False":
                out.append(False)
            elif w == "None":
                out.append(None)
            else:
                out.append(int(w))
    return out


def _enums(src: str) -> dict[str, list[str]]:
    """Member values of the str enums in Axolotl's enums.py."""
    enums: dict[str, list[str]] = {}
    cur = None
    for line in open(os.path.join(src, "utils/schemas/enums.py"),
                     encoding="utf-8"):
        m = re.match(r"class (\w+)\(", line)
        if m:
            cur = m.group(1)
            enums[cur] = []
            continue
        m = re.match(r"\s+\w+\s*=\s*\"([^\"]*)\"", line)
        if cur and m:
            enums[cur].append(m.group(1))
    return {k: v for k, v in enums.items() if v}


class Schema:
    """What the generator knows of Axolotl's config schema."""

    def __init__(self, repo: str, axolotl: str):
        self.types: dict[str, str] = {}
        self.plugin_of: dict[str, str] = {}
        for line in open(os.path.join(repo, "core/data/axolotl-keys.tsv"),
                         encoding="utf-8"):
            f = line.rstrip("\n").split("\t")
            if line.startswith("#") or f[0] == "key" or len(f) < 2:
                continue
            self.types[f[0]] = f[1]
        for line in open(os.path.join(repo,
                         "core/data/axolotl-plugin-keys.tsv"),
                         encoding="utf-8"):
            f = line.rstrip("\n").split("\t")
            if line.startswith("#") or f[0] == "plugin_module" or len(f) < 4:
                continue
            self.types[f[2]] = f[3]
            self.plugin_of[f[2]] = f[1]
        src = os.path.join(axolotl, "src/axolotl")
        self.enums = _enums(src)
        read: set[str] = set()
        files = glob.glob(os.path.join(src, "utils/schemas/*.py")) + \
            glob.glob(os.path.join(src, "integrations/*/args.py"))
        for f in sorted(files):
            text = open(f, encoding="utf-8").read()
            for m in re.finditer(r'data\.get\(\s*"(\w+)"|data\["(\w+)"\]|'
                                 r'self\.(\w+)|getattr\(self, "(\w+)"', text):
                read.add(next(g for g in m.groups() if g))
        self.validator_keys = sorted(k for k in read if k in self.types)
        self.all_keys = sorted(self.types)
        self.ds_presets = sorted(
            "deepspeed_configs/" + os.path.basename(p) for p in
            glob.glob(os.path.join(axolotl, "deepspeed_configs/*.json")))

    def type_values(self, key: str) -> list:
        """Values of key's type, its Literal/enum members and edges."""
        tp = self.types.get(key, "")
        vals: list = [None]
        vals += _literals(tp)
        for name, members in self.enums.items():
            if name in tp:
                vals += members
        if "bool" in tp:
            vals += [True, False]
        if "int" in tp:
            vals += [0, 1, 2, 4, 8, -1, 3]
        if "float" in tp:
            vals += [0.0, 0.1, 0.5, 1.0, 2.0e-5, -0.5]
        if "str" in tp:
            vals += ["", "auto", "true", "x"]
        if "list" in tp:
            vals += [[], ["x"]]
        if "dict" in tp or "Config" in tp:
            vals += [{}]
        return vals


def _corpus(shared: str) -> list[tuple[str, dict]]:
    out = []
    for p in sorted(glob.glob(os.path.join(shared, "corpus/axolotl/**/*.y*ml"),
                              recursive=True)):
        try:
            with open(p, encoding="utf-8") as fh:
                d = yaml.safe_load(fh)
        except yaml.YAMLError:
            continue
        if isinstance(d, dict):
            out.append((os.path.relpath(p, shared), d))
    return out


class Generator:
    def __init__(self, repo: str, shared: str, axolotl: str, seed: int):
        self.schema = Schema(repo, axolotl)
        self.corpus = _corpus(shared)
        self.seed = seed
        pool: dict[str, list] = {}
        for _, d in self.corpus:
            for k, v in d.items():
                pool.setdefault(k, []).append(v)
        self.pool = pool
        self.fsdp_maps = [v for v in pool.get("fsdp_config", [])
                          if isinstance(v, dict)]
        self.trl_maps = [v for v in pool.get("trl", []) if isinstance(v, dict)]

    def value(self, r: random.Random, key: str):
        seen = self.pool.get(key, [])
        if seen and r.random() < 0.45:
            return r.choice(seen)
        return r.choice(self.schema.type_values(key))

    def pick_key(self, r: random.Random) -> str:
        if r.random() < 0.75:
            return r.choice(self.schema.validator_keys)
        return r.choice(self.schema.all_keys)

    # ---- mutations ------------------------------------------------------

    def m_set(self, r, d):
        k = self.pick_key(r)
        d[k] = self.value(r, k)
        if k in self.schema.plugin_of and r.random() < 0.5:
            self.add_plugin(d, self.schema.plugin_of[k])

    def m_drop(self, r, d):
        keys = [k for k in d if k in self.schema.validator_keys] or list(d)
        if keys:
            del d[r.choice(keys)]

    def m_toggle(self, r, d):
        keys = [k for k, v in d.items() if isinstance(v, bool)]
        if keys:
            k = r.choice(keys)
            d[k] = not d[k]
        else:
            self.m_set(r, d)

    def m_swap(self, r, d):
        keys = [k for k in d if k in self.pool]
        if keys:
            k = r.choice(keys)
            d[k] = r.choice(self.pool[k])

    def add_plugin(self, d, cls):
        pl = d.get("plugins")
        if not isinstance(pl, list):
            pl = []
        if cls not in pl:
            pl = pl + [cls]
        d["plugins"] = pl

    def m_plugin(self, r, d):
        pl = d.get("plugins") if isinstance(d.get("plugins"), list) else []
        if pl and r.random() < 0.4:
            pl = [p for p in pl if p != r.choice(pl)]
            if pl:
                d["plugins"] = pl
            else:
                d.pop("plugins", None)
            return
        self.add_plugin(d, r.choice(PLUGINS))
        # and some key of a plugin, listed or not
        keys = [k for k in self.schema.plugin_of]
        k = r.choice(keys)
        d[k] = self.value(r, k)

    def m_fsdp(self, r, d):
        d.pop("deepspeed", None) if r.random() < 0.7 else None
        fc = dict(r.choice(self.fsdp_maps)) if self.fsdp_maps else {}
        way = r.randrange(7)
        fc.pop("fsdp_version", None)
        fc.pop("version", None)
        d.pop("fsdp_version", None)
        if way == 0:
            d["fsdp_version"] = 2
        elif way == 1:
            fc["version"] = 2
        elif way == 2:
            fc["fsdp_version"] = 2
        elif way == 3:
            d["fsdp_version"] = r.choice([1, "2", 2])
            fc["fsdp_version"] = r.choice([1, 2])
        elif way == 4:
            d["fsdp"] = ["full_shard", "auto_wrap"]
        elif way == 5:
            # the deprecated fsdp_ prefix
            fc = {("fsdp_" + k if not k.startswith("fsdp_") else k): v
                  for k, v in fc.items()}
            d["fsdp_version"] = r.choice([1, 2])
        if r.random() < 0.3 and fc:
            k = r.choice(sorted(fc))
            fc[k] = r.choice([True, False, None, 0, "SIZE_BASED_WRAP",
                              "SHARDED_STATE_DICT", "bogus"])
        if r.random() < 0.2:
            fc[r.choice(["offload_params", "cpu_offload_pin_memory",
                         "cpu_ram_efficient_loading", "use_orig_params",
                         "activation_checkpointing"])] = r.choice([True, False])
        d["fsdp_config"] = fc

    def m_deepspeed(self, r, d):
        if r.random() < 0.8:
            d["deepspeed"] = r.choice(self.schema.ds_presets)
        else:
            d["deepspeed"] = r.choice(["configs/ds_custom.json",
                                       "deepspeed_configs/zero3_custom.json"])
        if r.random() < 0.6:
            d.pop("fsdp_config", None)
            d.pop("fsdp_version", None)
            d.pop("fsdp", None)

    def m_parallel(self, r, d):
        k = r.choice(["tensor_parallel_size", "context_parallel_size",
                      "sequence_parallel_degree", "dp_shard_size",
                      "dp_replicate_size", "expert_parallel_size"])
        d[k] = r.choice([1, 2, 2, 4, 8, 16, 3, 0])
        if k == "expert_parallel_size" and r.random() < 0.5:
            self.add_plugin(d, PLUGINS[2])
        if k in ("context_parallel_size", "sequence_parallel_degree") and \
                r.random() < 0.5:
            d["attn_implementation"] = r.choice(
                ["flash_attention_2", "flash_attention_2", "sdpa",
                 "flex_attention", "flash_attention_3"])

    def m_rl(self, r, d):
        rl = self.schema.enums.get("RLType", ["dpo", "grpo", "kto"])
        d["rl"] = r.choice(rl + [None])
        if d["rl"] == "grpo" and r.random() < 0.7:
            trl = dict(r.choice(self.trl_maps)) if self.trl_maps else {}
            trl["num_generations"] = r.choice([1, 2, 4, 8, 16, 3])
            if r.random() < 0.3:
                trl["generation_batch_size"] = r.choice([4, 8, 16, 32, 6])
            d["trl"] = trl

    def m_nested(self, r, d):
        """A key inside one of the mappings the validators read."""
        k = r.choice(["fsdp_config", "trl", "gradient_checkpointing_kwargs",
                      "torch_compile_options", "qat", "ebft"])
        m = d.get(k) if isinstance(d.get(k), dict) else {}
        m = dict(m)
        inner = {
            "fsdp_config": ["offload_params", "cpu_offload_pin_memory",
                            "auto_wrap_policy", "min_num_params",
                            "state_dict_type", "use_orig_params", "version",
                            "reshard_after_forward", "sharding_strategy"],
            "trl": ["use_liger_loss", "num_generations", "beta",
                    "use_vllm", "vllm_mode", "generation_batch_size"],
            "gradient_checkpointing_kwargs": ["use_reentrant"],
            "torch_compile_options": ["mode", "triton.cudagraphs",
                                      "max_autotune", "epilogue_fusion",
                                      "shape_padding", "fullgraph",
                                      "coordinate_descent_tuning"],
            "qat": ["weight_dtype", "activation_dtype", "group_size"],
            "ebft": ["mode", "stride", "context_length"],
        }[k]
        m[r.choice(inner)] = r.choice([True, False, None, 1, 2, 0, 8,
                                       "int4", "int8", "strided",
                                       "max-autotune", "SIZE_BASED_WRAP"])
        d[k] = m

    def m_quote(self, r, d):
        """A number or boolean written as a string ("2", "true"), as
        pydantic's lax mode takes it for a number or bool field."""
        keys = [k for k, v in d.items()
                if isinstance(v, (bool, int, float)) and v is not None]
        if not keys:
            return
        k = r.choice(keys)
        v = d[k]
        d[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)

    MUTATIONS = [(m_set, 40), (m_drop, 12), (m_toggle, 8), (m_swap, 8),
                 (m_plugin, 6), (m_fsdp, 8), (m_deepspeed, 5),
                 (m_parallel, 8), (m_rl, 4), (m_nested, 6), (m_quote, 3)]

    def one(self, i: int) -> tuple[str, Ctx, dict]:
        r = random.Random(f"{self.seed}:{i}")
        name, base = r.choice(self.corpus)
        d = yaml.safe_load(yaml.safe_dump(base))  # a deep copy
        fns = [f for f, _ in self.MUTATIONS]
        weights = [w for _, w in self.MUTATIONS]
        for _ in range(r.choice([1, 1, 2, 2, 3, 4])):
            r.choices(fns, weights)[0](self, r, d)
        ctx = Ctx(r.choice(WORLD), r.choice(CCS), r.choice(TORCH))
        return name, ctx, d

    def write(self, out: str, n: int) -> list[dict]:
        """Write n configs into out/; returns one record per config."""
        os.makedirs(out, exist_ok=True)
        recs = []
        for i in range(n):
            base, ctx, d = self.one(i)
            text = ctx.comment() + f"# from: {base}\n" + yaml.safe_dump(
                d, sort_keys=False, default_flow_style=False)
            path = os.path.join(out, f"c{i:05d}.yaml")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            recs.append({"i": i, "path": path, "base": base, "ctx": ctx,
                         "sha": hashlib.sha256(text.encode()).hexdigest()})
        return recs
