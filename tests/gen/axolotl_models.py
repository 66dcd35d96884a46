#!/usr/bin/env python3
"""Generate core/data/axolotl-models.tsv: the pydantic models of Axolotl's
config schema below the top level, and the field constraints the
annotations in axolotl-keys.tsv do not carry.

Imports Axolotl's own schema from the vendored tree of
../shared/tools/axolotl-oracle (under its stubs, with every plugin
registered, as Axolotl merges them), and writes one row per:

  model   NAME  EXTRA                      a pydantic model (extra = ignore,
                                           forbid or allow)
  field   MODEL FIELD ALIASES TYPE REQ CONSTRAINTS
                                           its fields: the names it takes
                                           (comma-separated), the annotation
                                           as Python prints it, 1 when it has
                                           no default, and ge/gt/le/lt/
                                           min_length/max_length
  enum    NAME  VALUE...                   an enum's member values
  plugin  MODULE ARGS_MODEL                the model a plugin adds to the
                                           top level

Run once per Axolotl commit; the output is committed and compiled in by
core/data/gen_tables.sh.  Usage: python3 tests/gen/axolotl_models.py
[SHARED] > core/data/axolotl-models.tsv
"""
import enum
import os
import sys
import typing

SHARED = sys.argv[1] if len(sys.argv) > 1 else "../shared"
sys.path.insert(0, os.path.join(SHARED, "tools/axolotl-oracle"))
sys.dont_write_bytecode = True

import oracle  # noqa: E402

PLUGINS = [
    "cut_cross_entropy.CutCrossEntropyPlugin", "densemixer.DenseMixerPlugin",
    "diffusion.DiffusionPlugin", "expert_parallel.ExpertParallelPlugin",
    "grokfast.GrokfastPlugin", "hatchery.HatcheryPlugin", "kd.KDPlugin",
    "kernels.KernelsPlugin", "liger.LigerPlugin",
    "llm_compressor.LLMCompressorPlugin", "lm_eval.LMEvalPlugin",
    "mora.MoraPlugin", "nemo_gym.NemoGymPlugin", "spectrum.SpectrumPlugin",
    "swanlab.SwanLabPlugin",
]


def type_text(ann) -> str:
    return repr(ann).replace("typing.", "")


def constraints(meta) -> str:
    out = []
    for m in meta:
        for attr in ("ge", "gt", "le", "lt", "min_length", "max_length"):
            v = getattr(m, attr, None)
            if v is not None:
                out.append(f"{attr}={v}")
    return ";".join(out)


def classes_in(ann, seen):
    """The pydantic models and enums an annotation mentions."""
    from pydantic import BaseModel

    if isinstance(ann, type):
        if issubclass(ann, BaseModel) or issubclass(ann, enum.Enum):
            yield ann
        return
    for a in typing.get_args(ann) or ():
        if a is not Ellipsis:
            yield from classes_in(a, seen)


def name_of(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def main() -> None:
    from pydantic import BaseModel

    oracle.boot(oracle.resolve_ctx({}, {}))
    from axolotl.integrations.base import PluginManager
    from axolotl.utils.schemas.config import AxolotlInputConfig

    pm = PluginManager.get_instance()
    rows = []
    todo = [AxolotlInputConfig]
    for p in PLUGINS:
        pm.register("axolotl.integrations." + p)
    for key, plugin in pm.plugins.items():
        args = plugin.get_input_args()
        if not args:
            continue
        mod, cls = args.rsplit(".", 1)
        model = getattr(__import__(mod, fromlist=[cls]), cls)
        module = key.split(".")[2]
        rows.append(("plugin", module, name_of(model)))
        todo.append(model)
    done = set()
    while todo:
        cls = todo.pop()
        if name_of(cls) in done:
            continue
        done.add(name_of(cls))
        if issubclass(cls, enum.Enum):
            # An enum of other values (torch dtypes) is converted by a
            # validator before pydantic sees it: not listed.
            if all(isinstance(m.value, (str, int)) for m in cls):
                vals = [str(m.value) for m in cls]
                # MoraConfig.normalize_mora_type maps 1 and 6 to these
                # members before pydantic checks them.
                if cls.__qualname__ == "MoraType":
                    vals += ["1", "6"]
                rows.append(("enum", cls.__qualname__, *vals))
            continue
        rows.append(("model", name_of(cls),
                     str(cls.model_config.get("extra") or "ignore")))
        for fname, fi in cls.model_fields.items():
            names = [fname]
            va = fi.validation_alias
            if va is not None and hasattr(va, "choices"):
                names = [str(c) for c in va.choices]
            elif va is not None:
                names = [str(va)]
            elif fi.alias:
                names = [fi.alias, fname]
            rows.append(("field", name_of(cls), fname, ",".join(names),
                         type_text(fi.annotation),
                         "1" if fi.is_required() else "0",
                         constraints(fi.metadata)))
            for sub in classes_in(fi.annotation, done):
                if name_of(sub) not in done:
                    todo.append(sub)
    print("# Axolotl's pydantic models (issue 14), generated by "
          "tests/gen/axolotl_models.py from the oracle's vendored tree at "
          f"axolotl commit {oracle.ensure_axolotl_tree()[1]}; do not edit.")
    print("# kind\tname\t...: model NAME EXTRA | field MODEL FIELD NAMES "
          "TYPE REQUIRED CONSTRAINTS | enum NAME VALUES... | plugin MODULE "
          "ARGS_MODEL")
    for r in sorted(rows, key=lambda r: (r[0], r[1], r[2] if len(r) > 2
                                         else "")):
        print("\t".join(r))


if __name__ == "__main__":
    main()
