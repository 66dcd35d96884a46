#!/usr/bin/env python3
"""The report JSON of real CLI runs validates against openapi.yaml's Report
schema (issue #2, acceptance 5), and the schema is not vacuous: reports with
a wrong verdict or a finding without a line are rejected.

Usage: tests/report_schema.py PREFLIGHT_BIN SHARED_DIR
Prints 'N passed, N failed' and exits non-zero on any failure.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
spec = yaml.safe_load(open(os.path.join(HERE, "..", "openapi.yaml")))
schema = {"$ref": "#/components/schemas/Report",
          "components": spec["components"]}
validator = jsonschema.Draft202012Validator(schema)

def run(args):
    p = subprocess.run([BIN, "check", "--format", "json"] + args,
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def errors(report):
    return [e.message for e in validator.iter_errors(report)]


examples = os.path.join(SHARED, "corpus", "axolotl", "examples")
sample = os.path.join(examples, "llama-3", "qlora-fsdp-70b.yaml")

# An accepted example: one object.
rc, out, err = run([sample, "--gpus", "8", "--gpu", "a100-80gb"])
report = json.loads(out)
check("accepted example exits 0", rc == 0, err)
check("accepted example validates", not errors(report), errors(report))
# Axolotl accepts this example; preflight warns about the FSDP1 keys it
# drops (fsdp_sharding_strategy, fsdp_limit_all_gathers) and has no error.
check("accepted example warns without errors",
      report["verdict"] == "warn" and
      not [x for x in report["findings"] if x["severity"] == "error"] and
      "fsdp.unknown_fsdp_config_key" in
      [x["rule"] for x in report["findings"]], report["findings"])
check("context carries the flags", report["context"] == {
    "gpus": 8, "nodes": 1, "gpus_per_node": 8, "gpu": "a100-80gb",
    "interconnect": "nvlink", "torch": "2.11"}, report["context"])
import hashlib

check("config_sha256 is the file's",
      report["config_sha256"] == hashlib.sha256(open(sample, "rb").read())
      .hexdigest())

# A config with findings: a duplicate key.
with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
    f.write("base_model: HuggingFaceTB/SmolLM2-135M\ndatasets:\n  - path: p\n    type: alpaca\n"
            "micro_batch_size: 1\ngradient_accumulation_steps: 1\n"
            "sequence_len: 2048\nsequence_len: 4096\n"
            "learning_rate: 0.0002\n")
    dup = f.name
rc, out, err = run([dup, "--gpus", "16", "--nodes", "2"])
report = json.loads(out)
check("warning config exits 0", rc == 0, err)
check("warning config validates", not errors(report), errors(report))
check("duplicate key reported", report["verdict"] == "warn" and
      [(x["rule"], x["line"], x["column"]) for x in report["findings"]
       if x["severity"] != "info"] ==
      [("schema.duplicate_key", 8, 1)], report["findings"])
check("multi-node context", report["context"]["gpus_per_node"] == 8 and
      report["context"]["interconnect"] == "infiniband")

# Several files: an array, each with its file.
rc, out, err = run([sample, dup])
reports = json.loads(out)
check("several files give an array", isinstance(reports, list) and
      len(reports) == 2 and [r["file"] for r in reports] == [sample, dup])
check("every array item validates",
      all(not errors(r) for r in reports))
os.unlink(dup)

# The schema rejects what it should.
bad = copy.deepcopy(report)
bad["verdict"] = "maybe"
check("schema rejects an unknown verdict", bool(errors(bad)))
bad = copy.deepcopy(report)
del bad["findings"][0]["line"]
check("schema rejects a finding without a line", bool(errors(bad)))
bad = copy.deepcopy(report)
bad["config_sha256"] = "xyz"
check("schema rejects a malformed digest", bool(errors(bad)))

sys.exit(summary())
