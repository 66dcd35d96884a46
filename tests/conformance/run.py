#!/usr/bin/env python3
"""`make conformance`: preflight against Axolotl's own validator (issue 14).

Generates N configs (tests/conformance/gen.py, seeded), checks each with
preflight and with the oracle (shared/tools/axolotl-oracle: Axolotl's real
pydantic validation, heavy libraries stubbed) in the same context, and prints
the agreement table:

  both reject / both accept      agreement
  preflight-only, documented     every error is a launch-time failure listed
                                 in docs/compat.md ("Launch-time failures",
                                 or "On the Ray workers" when the config
                                 sets use_ray)
  preflight-only, undocumented   a false error: fails the run
  oracle-only, not static        the oracle's error is listed in
                                 docs/compat.md ("Not visible to a static
                                 check"): it needs the training host
  oracle-only, miss              fails the run

A config whose preflight errors are all launch-time failures counts as
preflight accepting it when the oracle rejects (those errors are not the
oracle's reason), so a miss is not hidden behind, say, an out-of-memory
error.

Exit status 0 when every disagreement is documented, 1 otherwise, 2 when a
tool failed. The oracle runs many configs per Python process (start-up is the
expensive part), `--jobs` processes at a time; its answers are cached by the
config's text (with its context line) under the output folder, so a rerun
only asks about configs it has not seen.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

LAUNCH = "launch-time failures"
RAY = "on the ray workers"
NOT_STATIC = "not visible to a static check"
VALIDATORS = "axolotl's validators"


def vendored_validators(axolotl: str) -> list[str]:
    """Class.method of every @model_validator / @field_validator in
    Axolotl's schema and plugin args (the vendored tree)."""
    import glob

    src = os.path.join(axolotl, "src/axolotl")
    files = sorted(glob.glob(os.path.join(src, "utils/schemas/*.py"))) + \
        sorted(glob.glob(os.path.join(src, "integrations/*/args.py")))
    out = []
    for f in files:
        cls = None
        lines = open(f, encoding="utf-8").read().split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"class (\w+)", line)
            if m:
                cls = m.group(1)
            if re.search(r"@(model|field)_validator\(", line):
                for j in range(i + 1, min(i + 4, len(lines))):
                    m = re.search(r"def (\w+)", lines[j])
                    if m:
                        out.append(f"{cls}.{m.group(1)}")
                        break
    return out


def check_inventory(compat: str, axolotl: str, binary: str,
                    launch: dict[str, str]) -> list[str]:
    """docs/compat.md lists every validator of the vendored Axolotl, and
    every rule id it names exists (or is a listed unchecked entry)."""
    listed: dict[str, str] = {}
    section = ""
    for line in open(compat, encoding="utf-8"):
        if line.startswith("## "):
            section = line[3:].strip().lower()
            continue
        m = re.match(r"\|\s*`([A-Za-z_0-9]+\.[A-Za-z_0-9]+)`\s*\|(.*)\|\s*$",
                     line)
        if m and section.startswith(VALIDATORS):
            listed[m.group(1)] = m.group(2)
    p = subprocess.run([binary, "rules", "--format", "json"],
                       capture_output=True, text=True, check=True)
    ids = {r["id"] for r in json.loads(p.stdout)}
    docs = os.path.join(os.path.dirname(compat), "rules.md")
    if os.path.exists(docs):
        ids |= set(re.findall(r"^\| `([a-z_0-9]+\.[a-z_0-9]+)` \|",
                              open(docs, encoding="utf-8").read(), re.M))
    problems = [f"validator {v} is not listed in {compat}"
                for v in vendored_validators(axolotl) if v not in listed]
    problems += [f"{compat}: launch-time rule {r} does not exist"
                 for r in launch if r not in ids]
    for v, text in listed.items():
        for rid in re.findall(r"`([a-z_0-9]+\.[a-z_0-9*]+)`", text):
            pat = re.compile("^" + re.escape(rid).replace("\\*", ".*") + "$")
            if not any(pat.match(i) for i in ids):
                problems.append(f"{compat}: {v} names unknown rule {rid}")
    return problems


def read_compat(path: str) -> tuple[dict[str, str], list[tuple[re.Pattern, str]],
                                   dict[str, str]]:
    """The machine-read tables of docs/compat.md: launch-time rules
    (rule id -> why), the oracle errors no static check can see
    (regex -> why) and the rules that are launch-time with use_ray
    (rule id -> why)."""
    rules: dict[str, str] = {}
    pats: list[tuple[re.Pattern, str]] = []
    ray: dict[str, str] = {}
    section = ""
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            section = line[3:].strip().lower()
            continue
        m = re.match(r"\|\s*`([^`]+)`\s*\|\s*(.*?)\s*\|\s*$", line)
        if not m:
            continue
        if section.startswith(LAUNCH):
            rules[m.group(1)] = m.group(2)
        elif section.startswith(NOT_STATIC):
            pats.append((re.compile(m.group(1)), m.group(2)))
        elif section.startswith(RAY):
            ray[m.group(1)] = m.group(2)
    return rules, pats, ray


def uses_ray(path: str) -> bool:
    """Whether the config sets use_ray to what pydantic reads as true."""
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            d = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader",
                                             yaml.SafeLoader))
    except (OSError, yaml.YAMLError):
        return False
    v = d.get("use_ray") if isinstance(d, dict) else None
    if isinstance(v, str):
        return v.lower() in ("true", "yes", "on", "t", "y", "1")
    return v is True or (type(v) in (int, float) and v == 1)


def run_preflight(binary: str, recs: list[dict], jobs: int) -> dict[str, dict]:
    """file -> preflight report, one process per context."""
    groups: dict[tuple, list[dict]] = collections.defaultdict(list)
    for rec in recs:
        groups[rec["ctx"].key()].append(rec)
    out: dict[str, dict] = {}

    def one(items: list[dict]) -> list[tuple[str, dict]]:
        ctx = items[0]["ctx"]
        res = []
        for k in range(0, len(items), 400):
            part = items[k:k + 400]
            p = subprocess.run([binary, "check", *[r["path"] for r in part],
                                *ctx.preflight_args(), "--format", "json"],
                               capture_output=True, text=True, check=False)
            if p.returncode == 2 and len(part) > 1:
                for r in part:  # one file it cannot read: ask singly
                    res += one([r])
                continue
            if p.returncode == 2 and "error:" in p.stderr:
                # Not a config it checks (YAML error, not a mapping, two
                # documents): preflight refuses it, a reject.
                res.append((part[0]["path"], {"file": part[0]["path"],
                            "findings": [{"rule": "yaml.unreadable",
                                          "severity": "error"}]}))
                continue
            if p.returncode not in (0, 1):
                raise RuntimeError(f"preflight exited {p.returncode}: "
                                   f"{p.stderr.strip()[:500]}")
            reports = json.loads(p.stdout)
            if isinstance(reports, dict):
                reports = [reports]
            res += [(r["file"], r) for r in reports]
        return res

    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for res in ex.map(one, groups.values()):
            out.update(res)
    return out


def run_oracle(oracle: str, recs: list[dict], jobs: int, chunk: int,
               cache_path: str) -> dict[str, dict]:
    """file -> the oracle's verdict, from the cache or the oracle."""
    cache: dict[str, dict] = {}
    if os.path.exists(cache_path):
        for line in open(cache_path, encoding="utf-8"):
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            cache[d["sha"]] = d
    todo = [r for r in recs if r["sha"] not in cache]
    chunks = [todo[k:k + chunk] for k in range(0, len(todo), chunk)]
    done = [0]
    t0 = time.time()

    def one(items: list[dict]) -> list[dict]:
        p = subprocess.run([sys.executable, oracle, "--ctx-from-file",
                            *[r["path"] for r in items]],
                           capture_output=True, text=True, check=False)
        by_path = {}
        for line in p.stdout.splitlines():
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            by_path[d.get("file")] = d
        got = []
        for r in items:
            d = by_path.get(r["path"])
            if d is None:
                d = {"verdict": "oracle_failure", "errors": [],
                     "oracle_error": p.stderr.strip()[-500:]}
            got.append({"sha": r["sha"], "verdict": d["verdict"],
                        "errors": d.get("errors", [])[:3],
                        "error_type": d.get("error_type"),
                        "oracle_error": (d.get("oracle_error") or "")[:300]})
        done[0] += len(items)
        print(f"  oracle: {done[0]}/{len(todo)} configs "
              f"({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
        return got

    if todo:
        with ThreadPoolExecutor(max_workers=jobs) as ex, \
                open(cache_path, "a", encoding="utf-8") as fh:
            for got in ex.map(one, chunks):
                for d in got:
                    cache[d["sha"]] = d
                    if d["verdict"] != "oracle_failure":
                        fh.write(json.dumps(d) + "\n")
    return {r["path"]: cache[r["sha"]] for r in recs}


def fixed_configs(src: str, out: str, worlds: list[int], cc: str,
                  torch: str) -> list[dict]:
    """Every *.yml / *.yaml under src (a folder of fixed configs, e.g.
    tests/fixtures/novel), copied once per world size into out/ with the
    oracle's `# ctx:` line on top; one record per (config, context)."""
    import glob
    import hashlib

    files = sorted(glob.glob(os.path.join(src, "**/*.y*ml"), recursive=True))
    recs = []
    for f in files:
        rel = os.path.relpath(f, src)
        body = open(f, encoding="utf-8").read()
        for w in worlds:
            ctx = gen.Ctx(w, cc, torch)
            text = ctx.comment() + body
            name = rel.replace(os.sep, "__").rsplit(".", 1)[0]
            path = os.path.join(out, f"{name}.ws{w}.yaml")
            os.makedirs(out, exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            recs.append({"i": len(recs), "path": path, "base": rel,
                         "ctx": ctx,
                         "sha": hashlib.sha256(text.encode()).hexdigest()})
    return recs


def classify(rep: dict, orc: dict, launch: dict[str, str],
             pats: list, ray: dict[str, str],
             path: str) -> tuple[str, list[str], str]:
    """(class, preflight error rules, oracle first error)."""
    errs = sorted({f["rule"] for f in rep["findings"]
                   if f["severity"] == "error"})
    first = (orc.get("errors") or [""])[0]
    if orc["verdict"] == "oracle_failure":
        return "oracle failure", errs, orc.get("oracle_error", "")
    own = [e for e in errs if e not in launch]
    if any(e in ray for e in own) and uses_ray(path):
        own = [e for e in own if e not in ray]
    if orc["verdict"] == "accept":
        if not errs:
            return "both accept", errs, first
        if not own:
            return "preflight-only, documented launch-time", errs, first
        return "preflight-only, UNDOCUMENTED", errs, first
    if own:
        return "both reject", errs, first
    for pat, _ in pats:
        if pat.search(first):
            return "oracle-only, not statically visible", errs, first
    return "oracle-only, MISS", errs, first


ORDER = ["both reject", "both accept",
         "preflight-only, documented launch-time",
         "oracle-only, not statically visible",
         "preflight-only, UNDOCUMENTED", "oracle-only, MISS",
         "oracle failure"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preflight", default="build/preflight")
    ap.add_argument("--shared", default="../shared")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=200,
                    help="configs per oracle process")
    ap.add_argument("--out", default="build/conformance")
    ap.add_argument("--compat", default="docs/compat.md")
    ap.add_argument("--show", type=int, default=15,
                    help="disagreements listed per class")
    ap.add_argument("--configs", default="",
                    help="check the fixed configs under this folder "
                    "instead of generated ones")
    ap.add_argument("--worlds", default="1,8",
                    help="with --configs: world sizes to check each at")
    ap.add_argument("--cc", default="9.0",
                    help="with --configs: GPU compute capability")
    ap.add_argument("--torch", default="2.11.0",
                    help="with --configs: torch version")
    opts = ap.parse_args()

    repo = os.path.dirname(os.path.dirname(HERE))
    oracle_dir = os.path.join(opts.shared, "tools/axolotl-oracle")
    oracle = os.path.join(oracle_dir, "oracle.py")
    axolotl = os.path.join(oracle_dir, "vendor/axolotl")
    launch, pats, ray = read_compat(opts.compat)
    if not launch or not pats:
        print(f"conformance: no machine-readable tables in {opts.compat}",
              file=sys.stderr)
        return 2
    problems = check_inventory(opts.compat, axolotl, opts.preflight,
                               {**launch, **ray})
    for pr in problems:
        print(f"conformance: {pr}", file=sys.stderr)
    if problems:
        return 1
    t0 = time.time()
    if opts.configs:
        tag = "fixed-" + os.path.basename(os.path.normpath(opts.configs))
        cfg_dir = os.path.join(opts.out, tag)
        recs = fixed_configs(opts.configs, cfg_dir,
                             [int(w) for w in opts.worlds.split(",")],
                             opts.cc, opts.torch)
        print(f"conformance: {len(recs)} (config, context) pairs from "
              f"{opts.configs} in {cfg_dir}", file=sys.stderr)
    else:
        tag = f"seed{opts.seed}"
        g = gen.Generator(repo, opts.shared, axolotl, opts.seed)
        cfg_dir = os.path.join(opts.out, tag)
        recs = g.write(cfg_dir, opts.n)
        print(f"conformance: {len(recs)} configs (seed {opts.seed}) in "
              f"{cfg_dir}", file=sys.stderr)
    reports = run_preflight(opts.preflight, recs, opts.jobs)
    verdicts = run_oracle(oracle, recs, opts.jobs, opts.chunk,
                          os.path.join(opts.out, "oracle-cache.jsonl"))
    counts: collections.Counter = collections.Counter()
    detail: dict[str, list] = collections.defaultdict(list)
    with open(os.path.join(opts.out, f"{tag}.jsonl"), "w",
              encoding="utf-8") as fh:
        for rec in recs:
            rep = reports.get(rec["path"])
            if rep is None:
                print(f"conformance: no preflight report for {rec['path']}",
                      file=sys.stderr)
                return 2
            cls, errs, first = classify(rep, verdicts[rec["path"]], launch,
                                        pats, ray, rec["path"])
            counts[cls] += 1
            row = {"file": rec["path"], "base": rec["base"],
                   "ctx": list(rec["ctx"].key()), "class": cls,
                   "preflight_errors": errs, "oracle_error": first}
            detail[cls].append(row)
            fh.write(json.dumps(row) + "\n")
    n = len(recs)
    print(f"\n{'':40} {'configs':>8} {'share':>7}")
    for cls in ORDER:
        print(f"{cls:40} {counts[cls]:8d} {100.0 * counts[cls] / n:6.2f}%")
    print(f"{'total':40} {n:8d}   ({time.time() - t0:.0f} s)")
    bad = ["preflight-only, UNDOCUMENTED", "oracle-only, MISS"]
    for cls in bad + ["oracle failure"]:
        if not detail[cls]:
            continue
        print(f"\n{cls}:")
        for row in detail[cls][:opts.show]:
            print(f"  {row['file']} ({row['base']}; ws={row['ctx'][0]} "
                  f"cc={row['ctx'][1]} torch={row['ctx'][2]})")
            print(f"    preflight: {', '.join(row['preflight_errors']) or '-'}")
            print(f"    oracle:    {row['oracle_error'][:200]}")
    if counts["oracle failure"]:
        return 2
    return 1 if any(counts[c] for c in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
