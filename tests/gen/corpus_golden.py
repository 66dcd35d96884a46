#!/usr/bin/env python3
"""Generate tests/fixtures/corpus/golden.json: what PyYAML's yaml.safe_load
builds from every example config in shared/corpus/axolotl/examples (run once;
the output is committed and tests/test_corpus.c compares the document tree
against it, node by node, in dict order).

Usage: tests/gen/corpus_golden.py SHARED_DIR > tests/fixtures/corpus/golden.json

Each node is a list: ["null"], ["bool", b], ["int", "decimal"],
["float", "repr"], ["str", s], ["timestamp"], ["list", [nodes]],
["dict", [[key node, value node], ...]].
"""
import datetime
import json
import math
import os
import sys

import yaml


def enc(v):
    if v is None:
        return ["null"]
    if isinstance(v, bool):
        return ["bool", v]
    if isinstance(v, int):
        return ["int", str(v)]
    if isinstance(v, float):
        if math.isnan(v):
            return ["float", "nan"]
        if math.isinf(v):
            return ["float", "inf" if v > 0 else "-inf"]
        return ["float", repr(v)]
    if isinstance(v, str):
        return ["str", v]
    if isinstance(v, (datetime.date, datetime.datetime)):
        return ["timestamp"]
    if isinstance(v, list):
        return ["list", [enc(x) for x in v]]
    if isinstance(v, dict):
        return ["dict", [[enc(k), enc(x)] for k, x in v.items()]]
    raise TypeError(type(v))


def main():
    shared = sys.argv[1]
    base = os.path.join(shared, "corpus", "axolotl")
    out = {}
    for root, _, files in os.walk(os.path.join(base, "examples")):
        for f in files:
            if not f.endswith((".yaml", ".yml")):
                continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, base)
            with open(p, "rb") as fh:
                out[rel] = enc(yaml.safe_load(fh))
    json.dump({"generator": "tests/gen/corpus_golden.py",
               "pyyaml": yaml.__version__,
               "files": dict(sorted(out.items()))},
              sys.stdout, indent=None, separators=(",", ":"),
              ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
