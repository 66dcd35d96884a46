#!/usr/bin/env python3
"""Teams, tokens, the CI webhook, CI output formats and TLS (issue #5).

Usage: tests/auth_ci.py PREFLIGHT_BIN SHARED_DIR
Prints 'N passed, N failed'; exits non-zero on any failure.
"""
import hashlib
import http.client
import json
import os
import shutil
import signal
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import time

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, ci_headers, serve, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
SARIF_SCHEMA = json.load(open(os.path.join(SHARED, "schemas",
                                           "sarif-schema-2.1.0.json")))
SECRET = "ci-secret-0123456789abcdef"
def many_findings(n):
    """n duplicate-key warnings, nothing else (inside a free-form dict).
    A 1B model: a full fine-tune of an 8B one on one H100 is near enough
    to its capacity for memory.low_headroom."""
    lines = ["base_model: meta-llama/Llama-3.2-1B", "datasets:",
             "  - path: tatsu-lab/alpaca", "    type: alpaca",
             "micro_batch_size: 1", "gradient_accumulation_steps: 1",
             # Written out so no info notes join the warnings.
             "eval_batch_size: 1", "dataloader_num_workers: 1",
             "bf16: true", "tf32: true", "lr_scheduler_kwargs:"]
    for i in range(n):
        lines += ["  k%d: 1" % i, "  k%d: 2" % i]
    lines.append("learning_rate: 0.0002")
    return "\n".join(lines) + "\n"


class Server:
    def __init__(self, d, *args, env=None, tls=None):
        self.log = open(os.path.join(d, "log-%d" % time.time_ns()), "w+")
        e = dict(os.environ)
        e.update(env or {})
        self.tls = tls
        self.proc, self.port = serve(BIN, os.path.join(d, "p.db"), self.log,
                                     args, env=e)

    def request(self, method, path, body=None, headers=None, token=None):
        if self.tls:
            c = http.client.HTTPSConnection("127.0.0.1", self.port,
                                            timeout=10, context=self.tls)
        else:
            c = http.client.HTTPConnection("127.0.0.1", self.port,
                                           timeout=10)
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        if isinstance(body, str):
            body = body.encode()
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            j = json.loads(data) if data else None
        except ValueError:
            j = None
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), j

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(15)
        self.log.close()
        return self.proc.returncode


def token(d, team, admin=False):
    args = [BIN, "token", "create", "--team", team, "--db",
            os.path.join(d, "p.db")] + (["--admin"] if admin else [])
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    return p.stdout.strip()


def ci_post(s, body, secret=SECRET, query="", sig=None, extra=None):
    raw = json.dumps(body).encode() if not isinstance(body, bytes) else body
    h = {"Content-Type": "application/json"}
    h.update(ci_headers(secret, raw, query.lstrip("?")))
    if sig is False:
        del h["X-Preflight-Signature"]
    elif sig:
        h["X-Preflight-Signature"] = sig
    h.update(extra or {})
    return s.request("POST", "/v1/ci/checks" + query, raw, h)


def main():
    d = tempfile.mkdtemp(prefix="preflight-auth-")
    try:
        # Tokens exist before the server starts (CLI), and after (shared db).
        red = token(d, "red")
        blue = token(d, "blue")
        admin = token(d, "ops", admin=True)
        revoked = token(d, "red")
        con = sqlite3.connect(os.path.join(d, "p.db"))
        rows = con.execute("SELECT id, token_sha256 FROM tokens").fetchall()
        stored = {r[1] for r in rows}
        check("tokens stored hashed, never in clear",
              all(t not in str(rows) for t in (red, blue, admin)) and
              hashlib.sha256(red.encode()).hexdigest() in stored, rows)
        check("tokens are pf_ + 43 URL-safe chars from 32 random bytes",
              all(len(t) == 46 and t.startswith("pf_") for t in
                  (red, blue, admin)))
        rid = [r[0] for r in rows if r[1] ==
               hashlib.sha256(revoked.encode()).hexdigest()][0]
        con.close()
        subprocess.run([BIN, "token", "revoke", str(rid), "--db",
                        os.path.join(d, "p.db")], check=True,
                       capture_output=True)

        s = Server(d, "--auth", "token", "--metrics-token",
                   "metrics-0123456789", env={"PREFLIGHT_CI_SECRET": SECRET})
        cfg = many_findings(3)
        st, h, j = s.request("GET", "/v1/checks")
        check("no token -> 401 + WWW-Authenticate", st == 401 and
              h.get("www-authenticate", "").startswith("Bearer") and
              j["status"] == 401, (st, h))
        st, h, j = s.request("GET", "/v1/checks", token="pf_nope")
        check("bad token -> 401", st == 401)
        st, h, j = s.request("GET", "/v1/checks", token=revoked)
        check("revoked token -> 401", st == 401)
        st, h, j = s.request("GET", "/healthz")
        check("healthz open", st == 200)
        st, h, j = s.request("GET", "/metrics")
        check("metrics needs its token", st == 401)
        st, h, j = s.request("GET", "/metrics", token="metrics-0123456789")
        check("metrics with its token", st == 200)

        yaml_h = {"Content-Type": "application/yaml"}
        st, h, rj = s.request("POST", "/v1/checks?name=shared.yaml", cfg,
                              yaml_h, token=red)
        check("red stores a check", st == 201 and rj["team"] == "red", rj)
        st, h, rj2 = s.request("POST", "/v1/checks?name=shared.yaml",
                               "base_model: x\n", yaml_h, token=red)
        st, h, bj = s.request("POST", "/v1/checks?name=shared.yaml", cfg,
                              yaml_h, token=blue)
        check("blue stores a check", st == 201 and bj["team"] == "blue")
        rid, bid = rj["id"], bj["id"]
        st, h, j = s.request("GET", "/v1/checks/" + rid, token=blue)
        check("blue cannot read red's check (404, not 403)", st == 404)
        st, h, j = s.request("GET", "/v1/checks", token=blue)
        check("blue lists only blue's", [i["id"] for i in j["items"]] ==
              [bid], j)
        st, h, j = s.request("GET", "/v1/checks/%s/diff?against=%s" %
                             (bid, rid), token=blue)
        check("blue cannot diff against red's", st == 404)
        st, h, j = s.request("GET", "/v1/configs/shared.yaml/checks",
                             token=blue)
        check("history shows only the caller's team",
              [i["id"] for i in j["items"]] == [bid], j)
        st, h, j = s.request("GET", "/v1/stats/rules", token=blue)
        check("stats count only the caller's team",
              [(i["rule"], i["findings"]) for i in j["items"]] ==
              [("schema.duplicate_key", 3)], j)
        st, h, j = s.request("GET", "/v1/checks/" + rid, token=admin)
        check("admin reads any team's check", st == 200)
        st, h, j = s.request("GET", "/v1/checks", token=admin)
        check("admin lists all teams", len(j["items"]) == 3, j)
        st, h, j = s.request("GET", "/v1/checks?team=red", token=admin)
        check("admin filters by team", {i["team"] for i in j["items"]} ==
              {"red"} and len(j["items"]) == 2, j)
        st, h, j = s.request("GET", "/v1/checks?team=red", token=blue)
        check("team filter ignored for non-admins",
              [i["id"] for i in j["items"]] == [bid], j)

        # The CI webhook.
        body = {"config": many_findings(60), "context": {"gpus": 1},
                "source": {"repo": "org/ml", "commit": "abc123",
                           "ref": "refs/pull/7/head",
                           "path": "configs/llama.yaml",
                           "pull_request": 7}}
        st, h, j = ci_post(s, body)
        check("CI with a valid signature -> stored (201)", st == 201 and
              j["team"] == "ci" and j["source"]["commit"] == "abc123" and
              j["name"] == "org/ml:configs/llama.yaml", (st, j))
        ci_id = j["id"] if st == 201 else ""
        st, h, j = s.request("GET", "/v1/configs/org%2Fml%3Aconfigs%2F"
                             "llama.yaml/checks", token=admin)
        check("CI history of repo:path", [i["id"] for i in j["items"]] ==
              [ci_id], j)
        raw = json.dumps(body).encode()
        signed = ci_headers(SECRET, raw)
        mac = signed["X-Preflight-Signature"][7:]
        st, h, j = s.request("POST", "/v1/ci/checks",
                             raw.replace(b"abc123", b"abc124"),
                             dict(signed, **{"Content-Type":
                                             "application/json"}))
        check("CI tampered body -> 401", st == 401, st)
        st, h, j = ci_post(s, body, secret="wrong-secret-0123456789")
        check("CI wrong secret -> 401", st == 401)
        st, h, j = ci_post(s, body, sig=False)
        check("CI missing signature -> 401", st == 401)
        st, h, j = ci_post(s, body, sig="sha1=" + mac[:40])
        check("CI other algorithm -> 401", st == 401)
        st, h, j = ci_post(s, {"config": "a: 1\n"})
        check("CI without source -> 422", st == 422, j)

        st, h, sarif = ci_post(s, body, query="?format=sarif")
        errs = list(jsonschema.Draft4Validator(SARIF_SCHEMA)
                    .iter_errors(sarif)) if st == 201 else ["status"]
        res = sarif["runs"][0]["results"] if st == 201 else []
        check("SARIF validates against the 2.1.0 schema", not errs and
              h.get("content-type") == "application/sarif+json",
              [e.message for e in errs[:3]] if errs else h)
        check("SARIF: one result per finding, 1-based lines",
              len(res) == 60 and all(
                  r["locations"][0]["physicalLocation"]["region"]
                  ["startLine"] >= 1 and r["ruleId"] and
                  r["locations"][0]["physicalLocation"]["artifactLocation"]
                  ["uri"] == "configs/llama.yaml" for r in res))
        st, h, sarif2 = ci_post(s, body, extra={
            "Accept": "application/sarif+json"})
        check("Accept: application/sarif+json", st == 201 and
              sarif2.get("version") == "2.1.0")
        st, h, gh = ci_post(s, body, query="?format=github")
        check("github: at most 50 annotations, rest counted",
              st == 201 and len(gh["annotations"]) == 50 and
              "10 more findings" in gh["summary"] and
              gh["annotations"][0]["annotation_level"] == "warning" and
              gh["annotations"][0]["start_line"] >= 1, gh.get("summary"))
        st, h, gl1 = ci_post(s, body, query="?format=gitlab")
        st2, h, gl2 = ci_post(s, body, query="?format=gitlab")
        fps = [i["fingerprint"] for i in gl1]
        check("gitlab fingerprints stable across runs, distinct",
              st == st2 == 201 and fps == [i["fingerprint"] for i in gl2]
              and len(set(fps)) == len(fps) == 60 and all(
                  i["location"]["lines"]["begin"] >= 1 for i in gl1))
        st, h, j = ci_post(s, body, query="?format=xml")
        check("unknown format -> 400", st == 400)

        # Brute force: failures per address and presented token prefix
        # are limited; a valid token from the same address still passes.
        codes = [s.request("GET", "/v1/checks", token="pf_wrongwrong")[0]
                 for i in range(25)]
        check("failed auth past the limit (20 a minute) -> 429",
              codes == [401] * 20 + [429] * 5, codes)
        st, h, j = s.request("GET", "/v1/checks", token=red)
        check("a valid token from the limited address still passes",
              st == 200, st)
        st, h, j = s.request("GET", "/v1/checks", token="pf_otherprefix")
        check("another token prefix from that address: its own budget",
              st == 401, st)
        check("server exits 0 on SIGTERM", s.stop() == 0)

        # CLI encoders, same output offline.
        cf = os.path.join(d, "many.yaml")
        open(cf, "w").write(many_findings(60))
        p = subprocess.run([BIN, "check", cf, "--format", "sarif"],
                           capture_output=True, text=True)
        doc = json.loads(p.stdout)
        check("CLI --format sarif validates", p.returncode == 0 and not list(
            jsonschema.Draft4Validator(SARIF_SCHEMA).iter_errors(doc)))
        p = subprocess.run([BIN, "check", cf, cf, "--format",
                            "github-checkrun"],
                           capture_output=True, text=True)
        doc = json.loads(p.stdout)
        check("CLI --format github caps at 50", len(doc["annotations"]) ==
              50 and "70 more findings" in doc["summary"], doc["summary"])
        runs = [subprocess.run([BIN, "check", cf, "--format", "gitlab"],
                               capture_output=True, text=True).stdout
                for _ in range(2)]
        check("CLI --format gitlab stable", runs[0] == runs[1] and
              len(json.loads(runs[0])) == 60)

        # TLS with a self-signed certificate made here.
        key, crt = os.path.join(d, "k.pem"), os.path.join(d, "c.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-keyout", key, "-out", crt, "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1"], check=True,
                       capture_output=True)
        ctx = ssl.create_default_context(cafile=crt)
        t = Server(d, "--tls-cert", crt, "--tls-key", key, tls=ctx)
        st, h, j = t.request("GET", "/healthz")
        check("HTTPS with the self-signed certificate", st == 200 and
              j == {"status": "ok"})
        st, h, j = t.request("POST", "/v1/checks?name=tls", "a: 1\n",
                             {"Content-Type": "application/yaml"})
        check("HTTPS POST stores", st == 201)
        t.stop()

        p = subprocess.run([BIN, "serve", "--listen", "0.0.0.0:0", "--db",
                            os.path.join(d, "x.db")], capture_output=True,
                           text=True, timeout=10)
        check("--auth none on 0.0.0.0 refuses to start", p.returncode != 0
              and "refusing to serve without authentication" in p.stderr,
              p.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
