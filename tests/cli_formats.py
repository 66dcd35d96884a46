#!/usr/bin/env python3
"""The CI formats of `preflight check` (issue 17), parsed back by the tools
that read them:

- SARIF validates against ../shared/schemas/sarif-schema-2.1.0.json with
  relative artifactLocation.uri + uriBaseId %SRCROOT%, and every rule has
  shortDescription, fullDescription, helpUri and defaultConfiguration;
- --format github is GitHub workflow commands: every line parsed back
  (unescaped) gives the findings of the JSON report;
- --format github-checkrun carries each file's real memory estimate;
- JUnit XML parses (xml.etree, and xmllint when installed) with a failure
  per error;
- GitLab Code Quality has stable, distinct fingerprints and relative paths;
- the pre-commit hook (its entry in .pre-commit-hooks.yaml, its files
  pattern) skips a GitHub workflow, docker-compose and a Kubernetes
  manifest with exit 0 and still fails a broken Axolotl config;
- the API prints numbers as the CLI does (the corpus through POST
  /v1/checks?dry_run=true; a diff's memory_delta_gib);
- SARIF of the corpus listed 10 times streams: the RSS stays flat;
- api/data/ruledoc.tsv is what tests/gen/ruledoc.py makes of rules.md.

Usage: tests/cli_formats.py PREFLIGHT_BIN SHARED_DIR [RELEASE_BIN]
(RELEASE_BIN, when given, is the binary the RSS is measured on.)
"""
import http.client
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, serve, summary  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
SHARED = os.path.abspath(sys.argv[2])
RELEASE = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 and \
    os.path.exists(sys.argv[3]) else None
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLES = os.path.join(SHARED, "corpus", "axolotl", "examples")
SARIF_SCHEMA = json.load(open(os.path.join(SHARED, "schemas",
                                           "sarif-schema-2.1.0.json")))


def corpus():
    out = []
    for d, _, files in os.walk(EXAMPLES):
        for f in files:
            if f.endswith((".yaml", ".yml")):
                out.append(os.path.relpath(os.path.join(d, f), EXAMPLES))
    return sorted(out)


def pf(args, cwd=EXAMPLES, binary=BIN):
    p = subprocess.run([binary, "check"] + args, cwd=cwd,
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


FILES = [f for f in corpus() if not f.startswith("cloud/")]
CTX = ["--gpus", "8", "--gpu", "h100-sxm"]
rc, out, err = pf(FILES + CTX + ["--format", "json"])
REPORTS = json.loads(out)
check("corpus as JSON", len(REPORTS) == len(FILES), err[-300:])
ALL = [(r["file"], f) for r in REPORTS for f in r["findings"]]


def sarif_checks():
    rc, out, err = pf(FILES + CTX + ["--format", "sarif"])
    doc = json.loads(out)
    errs = list(jsonschema.Draft4Validator(SARIF_SCHEMA).iter_errors(doc))
    check("SARIF of the corpus validates against the 2.1.0 schema",
          not errs, [e.message for e in errs[:3]])
    run = doc["runs"][0]
    res = run["results"]
    check("SARIF: one result per finding", len(res) == len(ALL),
          (len(res), len(ALL)))
    locs = [r["locations"][0]["physicalLocation"]["artifactLocation"]
            for r in res]
    check("SARIF: relative URIs with uriBaseId %SRCROOT%", all(
        l["uriBaseId"] == "%SRCROOT%" and not l["uri"].startswith("/")
        and ":" not in l["uri"] for l in locs) and
        [l["uri"] for l in locs] == [f for f, _ in ALL], locs[:2])
    base = run.get("originalUriBaseIds", {}).get("%SRCROOT%", {})
    check("SARIF: %SRCROOT% is the working directory",
          base.get("uri") == "file://" + os.path.realpath(EXAMPLES) + "/",
          base)
    rules = run["tool"]["driver"]["rules"]
    check("SARIF: every rule has its metadata", rules and all(
        r["shortDescription"]["text"] and
        len(r["fullDescription"]["text"]) >= 40 and
        re.match(r"^https://[^ ]+/docs/rules\.md#[a-z0-9_]+$", r["helpUri"])
        and r["defaultConfiguration"]["level"] in ("error", "warning",
                                                   "note") and
        r["help"]["text"].startswith("Fix: ") for r in rules), rules[0])
    check("SARIF: ruleIndex points at the rule", all(
        rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in res))
    fps = [r["partialFingerprints"]["preflightFinding/v1"] for r in res]
    check("SARIF: distinct fingerprints", len(set(fps)) == len(fps))
    # A file given by absolute path under the working directory is still
    # relative; one outside it is an absolute file URI without a base.
    with tempfile.TemporaryDirectory() as d:
        outside = os.path.join(d, "x y.yaml")
        shutil.copy(os.path.join(EXAMPLES, FILES[0]), outside)
        rc, out, err = pf([os.path.join(EXAMPLES, FILES[0]), outside] +
                          CTX + ["--format", "sarif", "--ignore", "*",
                                 "--no-policy"])
        doc = json.loads(out)
        check("SARIF: no finding left with --ignore '*'",
              doc["runs"][0]["results"] == [], err)
        rc, out, err = pf(["./" + FILES[0], outside, "--gpus", "3",
                           "--format", "sarif"])
        doc = json.loads(out)
        uris = sorted({(r["locations"][0]["physicalLocation"]
                        ["artifactLocation"]["uri"],
                        r["locations"][0]["physicalLocation"]
                        ["artifactLocation"].get("uriBaseId"))
                       for r in doc["runs"][0]["results"]})
        want = sorted({(FILES[0], "%SRCROOT%"),
                       ("file://" + d.replace(" ", "%20") + "/x%20y.yaml",
                        None)})
        check("SARIF: ./ dropped, outside files absolute and encoded",
              uris == want and not list(jsonschema.Draft4Validator(
                  SARIF_SCHEMA).iter_errors(doc)), uris)


def unescape(s, prop):
    s = s.replace("%0A", "\n").replace("%0D", "\r")
    if prop:
        s = s.replace("%3A", ":").replace("%2C", ",")
    return s.replace("%25", "%")


CMD = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def parse_commands(text):
    cmds = []
    for line in text.splitlines():
        if not line.startswith("::"):
            continue
        m = CMD.match(line)
        if m is None:
            return None
        props = dict(p.split("=", 1) for p in m.group(2).split(","))
        props = {k: unescape(v, True) for k, v in props.items()}
        cmds.append((m.group(1), props, unescape(m.group(3), False)))
    return cmds


def github_checks():
    rc, out, err = pf(FILES + CTX + ["--format", "github", "--verbose"])
    cmds = parse_commands(out)
    level = {"error": "error", "warning": "warning", "info": "notice"}
    want = [(level[f["severity"]], {"file": file, "line": str(f["line"]),
                                    "col": str(f["column"]),
                                    "title": f["rule"]},
             f["message"] + ("\nfix: " + f["hint"] if f["hint"] else ""))
            for file, f in ALL]
    check("github: workflow commands parse back to the findings",
          cmds == want, (cmds or [None])[:1] + want[:1])
    rc2, out2, _ = pf(FILES + CTX + ["--format", "github"])
    cmds2 = parse_commands(out2)
    check("github: info hidden by default, warnings and errors kept",
          cmds2 == [c for c in want if c[0] != "notice"] and
          rc2 == rc == (1 if any(r["verdict"] == "fail" for r in REPORTS)
                        else 0))
    check("github: the memory line and summary stay plain log lines",
          all(("memory: " in l or ": pass (" in l or ": warn (" in l or
               ": fail (" in l or " to fit: " in l or "more headroom" in l)
              for l in out2.splitlines() if not l.startswith("::")))
    # Escaping: a file name with , : % and a message with % and :.
    with tempfile.TemporaryDirectory() as d:
        name = "we,ird:100%.yaml"
        open(os.path.join(d, name), "w").write(
            "base_model: HuggingFaceTB/SmolLM2-135M\n"
            "datasets:\n  - path: a/b\n    type: alpaca\n"
            "micro_batch_size: 1\ngradient_accumulation_steps: 1\n"
            "\"odd,key:50%\": 1\nlearning_rate: 0.0002\n")
        rc, out, err = pf([name, "--format", "github"], cwd=d)
        cmds = parse_commands(out)
        check("github: properties and data escaped", cmds and any(
            c[1]["file"] == name and "odd,key:50%" in c[2] and
            c[1]["line"] == "7" for c in cmds), out)
        open(os.path.join(d, "broken.yaml"), "w").write(
            "base_model: x\n  a: [\n")
        rc, out, err = pf(["broken.yaml", "--format", "github"], cwd=d)
        check("github: a config that cannot be checked is an annotation "
              "too, exit 2", rc == 2 and parse_commands(out) == [
                  ("error", {"file": "broken.yaml", "line": "2",
                             "col": "4", "title": "preflight"},
                   "mapping values are not allowed in this context")],
              out)


def checkrun_checks():
    sample = ["llama-3/fft-8b.yaml", "llama-3/qlora-fsdp-70b.yaml"]
    rc, out, err = pf(sample + ["--gpu", "rtx4090", "--format",
                                "github-checkrun"])
    doc = json.loads(out)
    rc, out, err = pf(sample + ["--gpu", "rtx4090", "--format", "json"])
    reps = json.loads(out)
    ok = "not available" not in doc["summary"]
    for r in reps:
        m = r["estimate"]["memory"]
        ok = ok and ("`%s`: **%s** on 1 x rtx4090; memory %.1f of %.1f GiB"
                     " per GPU" % (r["file"], r["verdict"],
                                   m["per_gpu_peak_gib"], m["capacity_gib"])
                     in doc["summary"])
    check("github-checkrun: each file's real estimate in the summary", ok,
          doc["summary"])
    check("github-checkrun: errors first, at most 50 annotations",
          0 < len(doc["annotations"]) <= 50 and
          doc["annotations"][0]["annotation_level"] == "failure" and
          doc["title"].startswith("preflight: fail ("))


def junit_checks():
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.yaml")
        open(bad, "w").write("base_model: x\n  a: [\n")
        rc, out, err = pf(FILES[:40] + [bad] + CTX + ["--format", "junit"])
        path = os.path.join(d, "junit.xml")
        open(path, "w").write(out)
        root = ET.fromstring(out.encode())
        suites = root.findall("testsuite")
        check("junit: a testsuite per file", root.tag == "testsuites" and
              len(suites) == 41, len(suites))
        errors = {r["file"]: sum(1 for f in r["findings"]
                                 if f["severity"] == "error")
                  for r in REPORTS[:40]}
        got = {s.get("name"): len(s.findall("testcase/failure"))
               for s in suites[:40]}
        check("junit: a failure per error finding", got == errors and all(
            int(s.get("failures")) == got[s.get("name")]
            for s in suites[:40]))
        check("junit: an unreadable config is an <error>",
              suites[40].get("errors") == "1" and
              suites[40].find("testcase/error") is not None and rc == 2)
        if shutil.which("xmllint"):
            p = subprocess.run(["xmllint", "--noout", path],
                               capture_output=True, text=True)
            check("junit: xmllint parses it", p.returncode == 0, p.stderr)
        rc, out, err = pf([FILES[0]] + CTX + ["--format", "junit",
                                              "--fail-on", "warning"])
        r = REPORTS[0]
        n = sum(1 for f in r["findings"] if f["severity"] in
                ("error", "warning"))
        root = ET.fromstring(out.encode())
        check("junit: --fail-on warning fails warnings too",
              len(root.findall("testsuite/testcase/failure")) == n)


def gitlab_checks():
    rc, out, err = pf(FILES + CTX + ["--format", "gitlab"])
    issues = json.loads(out)
    fps = [i["fingerprint"] for i in issues]
    check("gitlab: an issue per finding, relative paths, distinct "
          "fingerprints", len(issues) == len(ALL) and
          len(set(fps)) == len(fps) and all(
              re.match(r"^[0-9a-f]{64}$", f) for f in fps) and all(
              i["location"]["path"] == file and i["check_name"] == f["rule"]
              and i["location"]["lines"]["begin"] == f["line"]
              for i, (file, f) in zip(issues, ALL)))


def precommit_checks():
    hooks = yaml.safe_load(open(os.path.join(ROOT, ".pre-commit-hooks.yaml")))
    hook = hooks[0]
    pattern = re.compile(hook["files"])
    entry = hook["entry"].split()
    check("pre-commit: the hook runs preflight check --axolotl-only",
          entry[:2] == ["preflight", "check"] and "--axolotl-only" in entry)
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, ".github", "workflows"))
        os.makedirs(os.path.join(d, "deploy"))
        os.makedirs(os.path.join(d, "configs"))
        shutil.copy(os.path.join(ROOT, ".pre-commit-hooks.yaml"), d)
        open(os.path.join(d, ".github", "workflows", "ci.yml"), "w").write(
            "name: ci\non: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
            "    steps:\n      - run: make test\n")
        open(os.path.join(d, "docker-compose.yml"), "w").write(
            "services:\n  app:\n    image: preflight\n")
        open(os.path.join(d, "deploy", "job.yaml"), "w").write(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"
            "spec:\n  template:\n    spec:\n      containers:\n"
            "        - name: axolotl\n          args: [train, cfg.yaml]\n"
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
        shutil.copy(os.path.join(EXAMPLES, "llama-3", "qlora-fsdp-70b.yaml"),
                    os.path.join(d, "configs", "ok.yaml"))

        def staged():
            out = []
            for dd, _, files in os.walk(d):
                for f in files:
                    rel = os.path.relpath(os.path.join(dd, f), d)
                    if pattern.search(rel):
                        out.append(rel)
            return sorted(out)

        others = [f for f in staged() if not f.startswith("configs/")]
        p = subprocess.run([BIN] + entry[1:] + others, cwd=d,
                           capture_output=True, text=True)
        check("pre-commit: workflow, compose, manifest and the hook file "
              "itself are skipped, exit 0", len(others) == 4 and
              p.returncode == 0 and p.stdout == "" and
              "skipped 4 YAML files" in p.stderr, (others, p.stderr))
        open(os.path.join(d, "configs", "bad.yaml"), "w").write(
            "base_model: meta-llama/Llama-3.1-8B\ndatasets:\n  - path: a\n"
            "    type: alpaca\nmicro_batch_size: 1\n"
            "gradient_accumulation_steps: 1\ndp_shard_size: 3\n"
            "learning_rate: 0.0002\n")
        p = subprocess.run([BIN] + entry[1:] + ["--gpus", "8"] + staged(),
                           cwd=d, capture_output=True, text=True)
        check("pre-commit: a broken Axolotl config still fails",
              p.returncode == 1 and "configs/bad.yaml:7:1: error" in
              p.stdout, p.stdout[-400:])


NUM = re.compile(r'-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')


def numbers(text):
    """The number tokens of JSON text, in order, as written."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif c == "-" or c.isdigit():
            m = NUM.match(text, i)
            out.append(m.group(0))
            i = m.end()
        else:
            i += 1
    return out


def api_checks():
    d = tempfile.mkdtemp()
    log = open(os.path.join(d, "log"), "w+")
    proc, port = serve(BIN, os.path.join(d, "db"), log)
    try:
        def post(path, body):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("POST", path, body,
                      {"Content-Type": "application/yaml"})
            r = c.getresponse()
            return r.status, r.read().decode()

        def get(path):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read().decode()

        same, differ = 0, []
        for f in FILES:
            st, body = post("/v1/checks?dry_run=true&gpus=8&gpu=h100-sxm",
                            open(os.path.join(EXAMPLES, f), "rb").read())
            rc, out, err = pf([f] + CTX + ["--format", "json"])
            api, cli = numbers(body), numbers(out)
            if st == 200 and api == cli:
                same += 1
            else:
                differ.append((f, st, [(a, b) for a, b in zip(api, cli)
                                       if a != b][:3]))
        check("API and CLI write every number of the corpus alike",
              same == len(FILES), differ[:3])
        # A diff's memory_delta_gib (jansson) in the same format.
        a = open(os.path.join(EXAMPLES, "llama-3", "fft-8b.yaml")).read()
        st1, b1 = post("/v1/checks?name=x&gpus=1", a)
        st2, b2 = post("/v1/checks?name=x&gpus=1",
                       a + "gradient_checkpointing: true\n")
        j1, j2 = json.loads(b1), json.loads(b2)
        st, body = get("/v1/checks/%s/diff?against=%s" % (j2["id"],
                                                           j1["id"]))
        m = re.search(r'"memory_delta_gib":(-?[0-9.]+)', body)
        want = round(j2["estimate"]["memory"]["per_gpu_peak_gib"] -
                     j1["estimate"]["memory"]["per_gpu_peak_gib"], 2)
        check("diff memory_delta_gib: 2 decimals as the reports",
              st == 200 and m is not None and re.match(
                  r"^-?\d+\.\d\d?$", m.group(1)) and
              float(m.group(1)) == want and m.group(1) == repr(want), body)
        st, body = get("/v1/catalog/gpus")
        check("catalog numbers in the same format",
              st == 200 and '"memory_gib":80.0' in body and
              all(len(n.split(".")[1]) <= 2 for n in numbers(body)
                  if "." in n), body[:200])
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def hwm_kib(pid):
    """The process's peak resident set so far (VmHWM), KiB, or 0.  (The
    rusage of a child forked from this Python process counts the parent's
    pages from before the exec, so it cannot tell.)"""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def peak_rss_kib(args):
    """Run `check args` on the release binary (or BIN): its peak RSS as
    last seen while it wrote, and the bytes it wrote."""
    p = subprocess.Popen([RELEASE or BIN, "check"] + args, cwd=EXAMPLES,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    size = peak = 0
    while True:
        chunk = p.stdout.read(1 << 16)
        if not chunk:
            break
        size += len(chunk)
        peak = max(peak, hwm_kib(p.pid))
    p.wait()
    return peak, size


def streaming_checks():
    reps = 10 if RELEASE else 2
    one, size1 = peak_rss_kib(FILES + CTX + ["--format", "sarif"])
    many, size = peak_rss_kib(FILES * reps + CTX + ["--format", "sarif"])
    check("SARIF of %d files streams: peak RSS %d KiB vs %d KiB for %d"
          % (len(FILES) * reps, many, one, len(FILES)),
          size > size1 * (reps - 2) and many < one + 8 * 1024 and
          (RELEASE is None or many < 64 * 1024), (many, one))


def colour_checks():
    """Colour on a terminal, none with NO_COLOR set or through a pipe."""
    import pty

    def on_tty(env):
        master, slave = pty.openpty()
        p = subprocess.Popen([BIN, "check", "llama-3/fft-8b.yaml", "--gpu",
                              "rtx4090"], cwd=EXAMPLES, stdout=slave,
                             stderr=subprocess.DEVNULL, env=env)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        p.wait()
        os.close(master)
        return out.decode()

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    out = on_tty(env)
    check("text on a terminal is coloured (error in red)",
          "\033[1;31merror" in out, out[:200])
    out = on_tty(dict(env, NO_COLOR="1"))
    check("NO_COLOR turns colour off on a terminal",
          "\033" not in out and ": error: " in out, out[:200])


def ruledoc_current():
    p = subprocess.run([sys.executable, os.path.join(HERE, "gen",
                                                     "ruledoc.py"),
                        SHARED, "--check"], capture_output=True, text=True)
    check("api/data/ruledoc.tsv is current with rules.md",
          p.returncode == 0, p.stdout + p.stderr)


sarif_checks()
github_checks()
checkrun_checks()
junit_checks()
gitlab_checks()
precommit_checks()
api_checks()
streaming_checks()
colour_checks()
ruledoc_current()
sys.exit(summary())
