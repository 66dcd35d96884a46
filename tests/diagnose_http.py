#!/usr/bin/env python3
"""`preflight diagnose` end to end (issue #19): every fixture's JSON from the
CLI validates against openapi.yaml's Diagnosis schema (and the schema is
not vacuous), then a real `preflight serve --auth token` on a file
database: POST /v1/diagnose with a config stores a check, its diagnosis
and a measurement that GET /v1/measurements lists for that team only;
another team's check_id is a 404; after a restart the rows are still
there (the writer and reader connections of the real store).

Usage: tests/diagnose_http.py PREFLIGHT_BIN SHARED_DIR
Prints 'N passed, N failed'; exits non-zero on any failure.
"""
import copy
import glob
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, serve, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "fixtures", "diagnose")
spec = yaml.safe_load(open(os.path.join(HERE, "..", "openapi.yaml")))


def validator(name):
    return jsonschema.Draft202012Validator(
        {"$ref": "#/components/schemas/" + name,
         "components": spec["components"]})


diagnosis = validator("Diagnosis")
measurement = validator("Measurement")


def errors(v, doc):
    return [e.message for e in v.iter_errors(doc)]


def body_of(path):
    """A fixture's log without its '# key: value' header."""
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith("# ") and \
            lines[i][2:].split(":")[0] in ("source", "expect", "config",
                                            "context", "deepspeed-config",
                                            "last-error"):
        i += 1
    return "\n".join(lines[i:])


# ---- the CLI's JSON against the schema ---------------------------------
bad = []
n = 0
for path in sorted(glob.glob(os.path.join(FIX, "*.log"))):
    p = subprocess.run([BIN, "diagnose", path, "--format", "json"],
                       capture_output=True, text=True)
    doc = json.loads(p.stdout)
    n += 1
    if p.returncode not in (0, 1) or errors(diagnosis, doc):
        bad.append((path, p.returncode, errors(diagnosis, doc)[:3]))
check("every fixture's JSON validates against Diagnosis (%d)" % n,
      n >= 40 and not bad, bad)
doc = json.loads(subprocess.run(
    [BIN, "diagnose", os.path.join(FIX, "oom-optimizer-llamafactory-1221.log"),
     "--config", os.path.join(FIX, "oom-optimizer-llamafactory-1221.yaml"),
     "--gpus", "8", "--gpu", "v100-32gb", "--deepspeed-config",
     os.path.join(FIX, "oom-optimizer-llamafactory-1221.ds.json"),
     "--format", "json"], capture_output=True, text=True).stdout)
check("the OOM with its config validates", not errors(diagnosis, doc),
      errors(diagnosis, doc))
check("the OOM with its config answers with keys and a peak",
      doc["estimate"]["term"] == "optimizer" and
      doc["estimate"]["answer"].startswith("set ") and
      "predicted peak" in doc["estimate"]["answer"] and
      doc["diagnoses"][0]["fix"]["predicted_peak_gib"] <
      doc["estimate"]["capacity_gib"], doc["estimate"])
worse = copy.deepcopy(doc)
worse["diagnoses"][0]["class"] = "weather"
check("schema rejects an unknown class", bool(errors(diagnosis, worse)))
worse = copy.deepcopy(doc)
del worse["diagnoses"][0]["lines"][0]["line"]
check("schema rejects a quoted line without its number",
      bool(errors(diagnosis, worse)))
worse = copy.deepcopy(doc)
worse["oom"]["phase"] = "lunch"
check("schema rejects an unknown phase", bool(errors(diagnosis, worse)))


# ---- the daemon --------------------------------------------------------
def token(d, team, admin=False):
    args = [BIN, "token", "create", "--team", team, "--db",
            os.path.join(d, "p.db")] + (["--admin"] if admin else [])
    return subprocess.run(args, capture_output=True, text=True,
                          check=True).stdout.strip()


def request(port, method, path, body=None, tok=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = {"Content-Type": "application/json"}
    if tok:
        h["Authorization"] = "Bearer " + tok
    c.request(method, path, body=json.dumps(body) if body is not None
              else None, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, (json.loads(data) if data else None)


d = tempfile.mkdtemp(prefix="preflight-diag-")
subprocess.run([BIN, "migrate", "--db", os.path.join(d, "p.db")],
               check=True, capture_output=True)
red, blue = token(d, "red"), token(d, "blue")
admin = token(d, "ops", admin=True)
log = open(os.path.join(d, "log"), "w+")
proc, port = serve(BIN, os.path.join(d, "p.db"), log, ["--auth", "token"])
cfg = open(os.path.join(SHARED, "corpus", "axolotl", "examples", "llama-3",
                        "instruct-lora-8b.yml")).read()
oom = body_of(os.path.join(FIX, "oom-fragmentation-sd-scripts-2029.log"))
try:
    st, j = request(port, "POST", "/v1/diagnose", {"log": oom})
    check("without a token: 401", st == 401, st)
    st, j = request(port, "POST", "/v1/diagnose", {"log": oom}, red)
    check("the log alone: 200, not stored", st == 200 and "id" not in j and
          j["diagnoses"][0]["id"] == "oom.fragmentation", (st, j))
    check("the log alone validates", not errors(diagnosis, j),
          errors(diagnosis, j))
    st, j = request(port, "POST", "/v1/diagnose",
                    {"log": oom, "config": cfg, "name": "lora-8b.yml",
                     "context": {"gpus": 1, "gpu": "rtx4090"}}, red)
    check("with a config: stored with a check", st == 200 and
          len(j.get("id", "")) == 26 and len(j.get("check_id", "")) == 26 and
          j["team"] == "red", (st, j))
    check("with a config: validates", not errors(diagnosis, j),
          errors(diagnosis, j))
    check("with a config: the capacity is the log's",
          j["estimate"]["capacity_gib"] == 23.56, j["estimate"])
    check("fragmentation is the term", j["estimate"]["term"] ==
          "fragmentation", j["estimate"])
    check_id = j["check_id"]
    st, c = request(port, "GET", "/v1/checks/" + check_id, tok=red)
    check("the check is stored for red", st == 200 and
          c["name"] == "lora-8b.yml", st)
    st, hist = request(port, "GET", "/v1/configs/lora-8b.yml/checks",
                       tok=red)
    check("the config's history shows the failure", st == 200 and
          hist["items"][0]["failures"][0]["summary"] ==
          "failed: oom.fragmentation, needed at least 24.26 GiB of 23.56 "
          "GiB on rtx4090", hist)
    st, c = request(port, "GET", "/v1/checks/" + check_id, tok=blue)
    check("blue does not see red's check", st == 404, st)
    st, m = request(port, "GET", "/v1/measurements", tok=red)
    check("red's measurement", st == 200 and len(m["items"]) == 1 and
          m["items"][0]["measured_peak_gib"] == 24.26 and
          m["items"][0]["capacity_gib"] == 23.56 and
          m["items"][0]["gpu"] == "rtx4090", m)
    check("measurements validate",
          all(not errors(measurement, x) for x in m["items"]),
          [errors(measurement, x) for x in m["items"]])
    st, m = request(port, "GET", "/v1/measurements", tok=blue)
    check("blue sees no measurements", st == 200 and m["items"] == [], m)
    st, j = request(port, "POST", "/v1/diagnose",
                    {"log": oom, "check_id": check_id}, blue)
    check("blue diagnosing red's check: 404", st == 404, (st, j))
    st, j = request(port, "POST", "/v1/diagnose",
                    {"log": oom, "check_id": check_id}, red)
    check("red diagnosing its check: stored again", st == 200 and
          j["check_id"] == check_id, (st, j))
    st, m = request(port, "GET", "/v1/measurements?team=red", tok=admin)
    check("an admin filters by team", st == 200 and len(m["items"]) == 2,
          m)
finally:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
# The rows outlive the process.
log.seek(0)
log.truncate()
proc, port = serve(BIN, os.path.join(d, "p.db"), log, ["--auth", "token"])
try:
    st, m = request(port, "GET", "/v1/measurements", tok=red)
    check("measurements survive a restart", st == 200 and
          len(m["items"]) == 2, m)
finally:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
shutil.rmtree(d)
sys.exit(summary())
