#!/usr/bin/env python3
"""Write tests/fixtures/store/v5.db.gz and v5.json.gz: a database written by
the last preflight with schema version 5 (before the lean schema of issue
#16) and what that binary answered about it, for tests/store_migration.py.

The binary must be one built from commit 2cc2f49 (or any commit whose
newest migration is 0005), e.g.:

    git archive 2cc2f49 --prefix=pf-v5/ | tar -x -C /tmp
    make -C /tmp/pf-v5 build/preflight
    tests/gen/store_v5_fixture.py /tmp/pf-v5/build/preflight ../shared

Three teams' tokens (red, blue, and an admin), checks of 14 Axolotl
examples sent as YAML and as JSON with names, labels, contexts and an
Idempotency-Key, two histories, and diagnoses of failed runs (with a
measured peak) stored with their checks.  v5.json.gz lists every GET the
test replays, with the status and the exact body the version-5 binary
gave, and the tokens (test tokens of this fixture, nothing else).
"""
import gzip
import http.client
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from pflib import serve  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
OUT = os.path.join(HERE, "..", "fixtures", "store")
EX = os.path.join(SHARED, "corpus", "axolotl", "examples")
DIAG = os.path.join(HERE, "..", "fixtures", "diagnose")

CONFIGS = [
    ("red", "llama-3/qlora-fsdp-70b.yaml", "70b.yaml", "gpus=8&gpu=h100-sxm"),
    ("red", "llama-3/lora-1b.yml", "1b.yml", ""),
    ("red", "llama-3/qlora-fsdp-70b.yaml", "70b.yaml", "gpus=2&gpu=a100-80gb"),
    ("red", "llama-3/fft-8b-liger-fsdp.yaml", "fft.yaml", "gpus=8"),
    ("blue", "mistral/mistral-qlora-fsdp.yml", "mistral.yml", "gpus=4"),
    ("blue", "gemma3/gemma-3-1b-qlora.yml", "gemma.yml", ""),
    ("blue", "deepseek-v2/qlora-fsdp-2_5.yaml", "ds.yaml", "gpus=16&nodes=2"),
    ("blue", "llama-3/lora-1b.yml", "1b.yml", "gpus=1&gpu=rtx4090"),
]
JSON_CONFIGS = [
    ("red", "llama-3/instruct-lora-8b.yml", "8b.yml",
     {"gpus": 2, "gpu": "h100-sxm"}, {"owner": "ml", "run": "7"}),
    ("blue", "llama-3/lora-1b.yml", "1b.yml", {"gpus": 4},
     {"stage": "pre-submit"}),
    ("red", "qwen2/qlora-fsdp.yaml", "qwen.yaml", {"gpus": 8}, {}),
]


def call(port, method, path, tok, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = dict(headers or {})
    if tok:
        h["Authorization"] = "Bearer " + tok
    c.request(method, path, body, h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def token(db, team, admin=False):
    args = [BIN, "token", "create", "--team", team, "--db", db]
    if admin:
        args.append("--admin")
    return subprocess.run(args, check=True, capture_output=True,
                          text=True).stdout.strip()


def main():
    d = tempfile.mkdtemp(prefix="preflight-v5-")
    db = os.path.join(d, "v5.db")
    subprocess.run([BIN, "migrate", "--db", db], check=True,
                   capture_output=True)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 5, \
        "this needs a binary whose newest migration is 0005"
    con.close()
    toks = {"red": token(db, "red"), "blue": token(db, "blue"),
            "admin": token(db, "ops", admin=True)}
    log = open(os.path.join(d, "log"), "w+")
    proc, port = serve(BIN, db, log, ["--auth", "token",
                                      "--quota-checks-per-minute", "0"])
    ids = []
    try:
        for team, f, name, query in CONFIGS:
            body = open(os.path.join(EX, f), "rb").read()
            q = "name=" + name + ("&" + query if query else "")
            hdr = {"Content-Type": "application/yaml"}
            if f.endswith("lora-1b.yml") and team == "red":
                hdr["Idempotency-Key"] = "v5-fixture-key"
            st, b = call(port, "POST", "/v1/checks?" + q, toks[team], body,
                         hdr)
            assert st == 201, (st, b[:200])
            ids.append((team, json.loads(b)["id"]))
        for team, f, name, ctx, labels in JSON_CONFIGS:
            body = json.dumps({"config": open(os.path.join(EX, f)).read(),
                               "context": ctx, "name": name,
                               "labels": labels}).encode()
            st, b = call(port, "POST", "/v1/checks", toks[team], body,
                         {"Content-Type": "application/json"})
            assert st == 201, (st, b[:200])
            ids.append((team, json.loads(b)["id"]))
        cfg = open(os.path.join(EX, "llama-3", "instruct-lora-8b.yml")).read()
        for team, logf, gpu in (
                ("red", "oom-fragmentation-sd-scripts-2029.log", "rtx4090"),
                ("blue", "oom-cuda-lte-3.log", "a100-80gb")):
            body = json.dumps({"log": open(os.path.join(DIAG, logf),
                                           errors="replace").read(),
                               "config": cfg, "name": "diag.yml",
                               "context": {"gpus": 1, "gpu": gpu}}).encode()
            st, b = call(port, "POST", "/v1/diagnose", toks[team], body,
                         {"Content-Type": "application/json"})
            assert st == 200, (st, b[:300])
            ids.append((team, json.loads(b)["check_id"]))
        gets = []
        for team, cid in ids:
            gets.append((team, "/v1/checks/" + cid))
            gets.append(("admin", "/v1/checks/" + cid))
            gets.append(("blue" if team == "red" else "red",
                         "/v1/checks/" + cid))      # another team's: 404
        for who in ("red", "blue", "admin"):
            gets += [(who, "/v1/checks?limit=200"),
                     (who, "/v1/checks?limit=3"),
                     (who, "/v1/stats/rules"),
                     (who, "/v1/stats/rules?since=2020-01-01T00:00:00Z"),
                     (who, "/v1/checks?verdict=warn&limit=50"),
                     (who, "/v1/checks?rule=fsdp.v1_deprecated"),
                     (who, "/v1/checks?rule=batch.dataloader_defaults"),
                     (who, "/v1/configs/70b.yaml/checks"),
                     (who, "/v1/configs/1b.yml/checks"),
                     (who, "/v1/configs/diag.yml/checks"),
                     (who, "/v1/measurements"),
                     (who, "/v1/measurements?name=diag.yml")]
        gets += [("admin", "/v1/checks?team=red&limit=200"),
                 ("admin", "/v1/stats/rules?team=blue"),
                 ("red", "/v1/checks/%s/diff?against=%s" % (ids[2][1],
                                                            ids[0][1]))]
        # The second page of a list, through the cursor it gave.
        st, b = call(port, "GET", "/v1/checks?limit=3", toks["admin"])
        gets.append(("admin", "/v1/checks?limit=3&cursor=" +
                     json.loads(b)["next_cursor"]))
        answers = []
        for who, path in gets:
            st, b = call(port, "GET", path, toks[who])
            answers.append({"token": who, "path": path, "status": st,
                            "body": b.decode()})
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
    os.makedirs(OUT, exist_ok=True)
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("VACUUM")
    counts = {t: con.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
              for t in ("checks", "findings", "diagnoses", "tokens")}
    con.close()
    with open(db, "rb") as f, gzip.open(os.path.join(OUT, "v5.db.gz"),
                                       "wb", 9) as g:
        shutil.copyfileobj(f, g)
    with gzip.open(os.path.join(OUT, "v5.json.gz"), "wt", 9) as f:
        json.dump({"made_by": "tests/gen/store_v5_fixture.py with the "
                   "binary of commit 2cc2f49 (schema version 5)",
                   "tokens": toks, "rows": counts, "gets": answers}, f,
                  indent=1)
        f.write("\n")
    shutil.rmtree(d)
    print("%d GETs; rows %s" % (len(answers), counts))


if __name__ == "__main__":
    main()
